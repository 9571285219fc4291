"""General convex contacts (usdart.core.kernels.convex: GJK, EPA and feature clipping) against independent
answers: a box given as a convex hull must touch exactly as the dedicated box routines say (deepest
separation and normal, random poses, apart and overlapping), and cylinders and cones as their closed forms
(lowest point over a plane, distance to a point).
"""

import math

import numpy as np
import pytest
from test_box_contacts import rot

from usdart.core import layout as L
from usdart.core.kernels.box_contacts import box_box, capsule_box, sphere_box
from usdart.core.kernels.collide import manifold
from usdart.usd.importer.colliders import hull_faces
from usdart.usd.importer.shape_mass import convex_hull

ROOM = 64
RNG = np.random.default_rng(7)


def hull_of(points):
    """(vertices, face_start, face_vertex) of a point set's hull, as the importer makes them."""
    vertices, triangles = convex_hull(np.asarray(points, float))
    faces = hull_faces(vertices, triangles)
    start = np.concatenate([[0], np.cumsum([len(f) for f in faces])]).astype(np.int64)
    return vertices, start, np.concatenate(faces).astype(np.int64)


def box_points(half):
    return np.array([[sx * half[0], sy * half[1], sz * half[2]] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


def par(kind, size=(0.0, 0.0, 0.0), bound=1.0):
    p = np.zeros(L.SHAPE_PAR_COLUMNS)
    p[L.SP_SIZE0 : L.SP_SIZE2 + 1] = size
    p[L.SP_BOUND] = bound
    p[L.SP_CONTACT_OFFSET] = 1.0  # wide: every candidate point is kept
    return p


def contacts(kind_a, par_a, rot_a, pos_a, kind_b, par_b, rot_b, pos_b, margin, hull_a=None, hull_b=None):
    """collide.manifold of A (type <= B's) and B: rows of point on B, normal B -> A, separation."""
    no_hull = (np.zeros((0, 3)), np.zeros(1, np.int64), np.zeros(0, np.int64))
    ha, hb = hull_a or no_hull, hull_b or no_hull
    # one face table for both sides: B's faces after A's, its vertex indices local to its own hull
    fa, fb = len(ha[1]) - 1, len(hb[1]) - 1
    face_start = np.concatenate([ha[1], ha[1][-1] + hb[1][1:]]).astype(np.int64)
    face_vertex = np.concatenate([ha[2], hb[2]]).astype(np.int64)
    out = np.zeros((8, 7))
    n = manifold(
        kind_a, kind_b, par_a, par_b, np.ascontiguousarray(rot_a), np.asarray(pos_a, float), ha[0], 0, fa,
        np.ascontiguousarray(rot_b), np.asarray(pos_b, float), hb[0], fa, fa + fb, face_start, face_vertex, margin,
        np.zeros((32, 3)), np.zeros((L.EPA_POINTS, 9)), np.zeros(16), np.zeros((L.EPA_FACES, 4), np.int64),
        np.zeros((L.EPA_FACES, 4)), np.zeros((3 * L.EPA_FACES, 2), np.int64), np.zeros((4, ROOM, 3)),
        np.zeros((ROOM, 7)), out,
    )  # fmt: skip
    return out[:n]


def random_rotation():
    return rot(RNG.normal(size=3), RNG.uniform(0, np.pi))


def support_gap(n, support_a, support_b):
    """h_A(-n) + h_B(n): minus the gap between the planes that bound A and B across n. For the separation GJK
    or EPA reports along their normal n this equals -separation exactly (a certificate: a point of the
    Minkowski difference at that distance and a plane bounding it there)."""
    return support_a(-n) + support_b(n)


def box_support(R, p, half):
    return lambda u: float(u @ p + np.abs(R.T @ u) @ half)


def test_a_box_as_a_hull_touches_a_box_as_the_box_routine_says():
    """200 random poses of a 0.3 x 0.2 x 0.1 box (as a hull, side B) near a 0.2 x 0.4 x 0.3 box: the deepest
    point's separation is certified exact by the support gap along its normal (1e-12 m), apart and
    overlapping; overlapping, never deeper than box_box's deepest point (whose clipped points' depths along
    the face normal can exceed the overlap)."""
    half_a, half_b = np.array([0.1, 0.2, 0.15]), np.array([0.15, 0.1, 0.05])
    hull = hull_of(box_points(half_b))
    overlapping = apart = 0
    for _ in range(200):
        ra, rb = random_rotation(), random_rotation()
        pb = RNG.uniform(-0.35, 0.35, 3)
        expected = np.zeros((4, 7))
        n = box_box(ra, np.zeros(3), half_a, rb, pb, half_b, 0.2, np.zeros((32, 3)), expected)
        ours = contacts(L.SHAPE_BOX, par(L.SHAPE_BOX, half_a), ra, np.zeros(3), L.SHAPE_CONVEX,
                        par(L.SHAPE_CONVEX, half_b), rb, pb, 0.2, hull_b=hull)  # fmt: skip
        if len(ours) == 0:
            continue
        k = int(np.argmin(ours[:, 6]))
        gap = support_gap(ours[k, 3:6], box_support(ra, np.zeros(3), half_a), box_support(rb, pb, half_b))
        assert gap == pytest.approx(-ours[k, 6], abs=1e-12)
        if ours[k, 6] < 0.0:
            overlapping += 1
            assert ours[k, 6] >= expected[:n, 6].min() - 1e-9
        else:
            apart += 1
    assert overlapping > 30 and apart > 30


@pytest.mark.parametrize("kind", ["sphere", "capsule"])
def test_spheres_and_capsules_touch_a_box_hull_at_the_certified_separation(kind):
    """A sphere (radius 0.05) or capsule (0.05, half height 0.1) at 200 random poses around a box hull: the
    deepest separation certified exact by the support gap (1e-12 m), equal to sphere_box's (exact for a
    sphere) and never deeper than capsule_box's (its separating axes can miss the shallowest direction:
    it reports up to 5e-3 m more overlap on some poses, certified here to be more than the true depth)."""
    half = np.array([0.15, 0.1, 0.05])
    hull = hull_of(box_points(half))
    checked = 0
    for _ in range(200):
        ra, rb = random_rotation(), random_rotation()
        pa = RNG.uniform(-0.25, 0.25, 3)
        expected = np.zeros((4, 7))
        if kind == "sphere":
            n = sphere_box(pa, 0.05, rb, np.zeros(3), half, 0.1, expected)
            a_kind, a_par = L.SHAPE_SPHERE, par(L.SHAPE_SPHERE, (0.05, 0, 0), 0.05)
            support_a = lambda u: float(u @ pa + 0.05)  # noqa: E731
        else:
            n = capsule_box(ra, pa, 0.05, 0.1, rb, np.zeros(3), half, 0.1, np.zeros((32, 3)), expected)
            a_kind, a_par = L.SHAPE_CAPSULE, par(L.SHAPE_CAPSULE, (0.05, 0.1, 0), 0.15)
            support_a = lambda u: float(u @ pa + 0.1 * abs(u @ ra[:, 0]) + 0.05)  # noqa: E731
        ours = contacts(a_kind, a_par, ra, pa, L.SHAPE_CONVEX, par(L.SHAPE_CONVEX, half, 0.2), rb, np.zeros(3), 0.1,
                        hull_b=hull)  # fmt: skip
        if n == 0:
            assert len(ours) == 0
            continue
        checked += 1
        k = int(np.argmin(ours[:, 6]))
        gap = support_gap(ours[k, 3:6], support_a, box_support(rb, np.zeros(3), half))
        assert gap == pytest.approx(-ours[k, 6], abs=1e-12)
        if kind == "sphere":
            assert ours[k, 6] == pytest.approx(expected[:n, 6].min(), abs=1e-9)
        else:
            assert ours[k, 6] >= expected[:n, 6].min() - 1e-9
    assert checked > 60


@pytest.mark.parametrize("kind", [L.SHAPE_CYLINDER, L.SHAPE_CONE])
@pytest.mark.parametrize("tilt", [0.0, 0.3, 1.2, math.pi / 2, 2.5])
def test_a_cylinder_or_cone_over_a_plane_touches_at_its_lowest_point(kind, tilt):
    """Radius 0.1, half height 0.2, its axis tilted from the plane's normal: the deepest point's separation is
    the closed form (cylinder: height - h |cos| - r |sin|; cone: the lower of apex and base rim); a
    cylinder or cone standing on its cap touches with its rim (four points), one lying on its side with
    two."""
    r, h, height = 0.1, 0.2, 0.15
    axis_rot = rot([0.0, 1.0, 0.0], -math.pi / 2 + tilt)  # local x (the axis) tilted `tilt` from +z
    axis = axis_rot[:, 0]
    plane_rot = rot([0.0, 1.0, 0.0], -math.pi / 2)  # plane normal (its local x) = +z
    found = contacts(kind, par(kind, (r, h, 0), math.hypot(r, h)), axis_rot, [0.2, -0.1, height], L.SHAPE_PLANE,
                     par(L.SHAPE_PLANE), plane_rot, np.zeros(3), 1.0)  # fmt: skip
    c, s = abs(axis[2]), math.sqrt(max(1 - axis[2] ** 2, 0))
    if kind == L.SHAPE_CYLINDER:
        lowest = height - h * c - r * s
    else:
        apex = height + h * axis[2]
        rim = height - h * axis[2] - r * s
        lowest = min(apex, rim)
    assert found[:, 6].min() == pytest.approx(lowest, abs=1e-12)
    assert np.allclose(found[:, 3:6], [0, 0, 1])
    if tilt == 0.0:
        assert len(found) == 4 and np.allclose(found[:, 6], lowest)
    if kind == L.SHAPE_CYLINDER and tilt == math.pi / 2:
        assert len(found) == 2 and np.allclose(found[:, 6], lowest)


@pytest.mark.parametrize("kind", [L.SHAPE_CYLINDER, L.SHAPE_CONE])
def test_a_sphere_touches_a_cylinder_or_cone_at_its_closed_form_distance(kind):
    """A 0.02 m sphere at 300 random points around a cylinder or cone (radius 0.1, half height 0.2, axis x):
    the separation is the exact distance from its centre to the solid minus its radius where the centre is
    outside (sampled surface distance), GJK's answer within 1e-8 m."""
    r, h = 0.1, 0.2
    shape_rot = random_rotation()
    checked = 0
    for _ in range(300):
        local = RNG.uniform([-0.35, -0.2, -0.2], [0.35, 0.2, 0.2])
        x, rho = local[0], math.hypot(local[1], local[2])
        if kind == L.SHAPE_CYLINDER:
            dx, dr = max(abs(x) - h, 0.0), max(rho - r, 0.0)
            inside = abs(x) <= h and rho <= r
            distance = math.hypot(dx, dr)
        else:  # distance to the triangle (apex (h, 0), base (-h, 0) .. (-h, r)) in the (x, rho) half plane
            inside = -h <= x <= h and rho <= r * (h - x) / (2 * h)
            segments = [((h, 0.0), (-h, r)), ((-h, 0.0), (-h, r))]
            distance = min(_segment_distance((x, rho), a, b) for a, b in segments)
        if inside:
            continue
        found = contacts(L.SHAPE_SPHERE, par(L.SHAPE_SPHERE, (0.02, 0, 0), 0.02), np.eye(3), shape_rot @ local, kind,
                         par(kind, (r, h, 0), math.hypot(r, h)), shape_rot, np.zeros(3), 0.5)  # fmt: skip
        assert len(found) == 1
        assert found[0, 6] == pytest.approx(distance - 0.02, abs=1e-8)
        checked += 1
    assert checked > 100


def _segment_distance(p, a, b):
    p, a, b = (np.asarray(v, float) for v in (p, a, b))
    t = np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
    return float(np.linalg.norm(p - a - t * (b - a)))


def test_two_hulls_resting_face_on_face_touch_at_four_points():
    """An octagonal prism hull resting flat on another (overlap 1 mm): four points, each 1 mm deep, the
    normal straight up; lifted 3 mm: the same points 3 mm apart (speculative)."""
    angles = np.arange(8) * np.pi / 4 + np.pi / 8
    prism = [(0.1 * math.cos(a), 0.1 * math.sin(a), z) for z in (-0.1, 0.1) for a in angles]
    hull = hull_of(prism)
    for gap in (-0.001, 0.003):
        size = par(L.SHAPE_CONVEX, (0.1, 0.1, 0.1))
        found = contacts(L.SHAPE_CONVEX, size, rot([0, 0, 1], 0.2), [0.03, 0.0, 0.2 + gap], L.SHAPE_CONVEX, size,
                         np.eye(3), np.zeros(3), 0.01, hull_a=hull, hull_b=hull)  # fmt: skip
        assert len(found) == 4
        assert np.allclose(found[:, 6], gap, atol=1e-12)
        assert np.allclose(found[:, 3:6], [0, 0, 1], atol=1e-12)
        assert np.allclose(found[:, 2], 0.1, atol=1e-12)  # on the lower prism's top face


def grid(size=2.0, cells=4):
    """A flat triangle grid at z = 0 (mesh shape data: vertices, face_start, face_vertex)."""
    ticks = np.linspace(-size / 2, size / 2, cells + 1)
    vertices = np.array([(x, y, 0.0) for y in ticks for x in ticks])
    row, triangles = cells + 1, []
    for j in range(cells):
        for i in range(cells):
            a, b, c, d = j * row + i, j * row + i + 1, (j + 1) * row + i + 1, (j + 1) * row + i
            triangles += [(a, b, c), (a, c, d)]
    triangles = np.array(triangles)
    triangles = triangles[np.argsort(vertices[triangles, 0].min(axis=1), kind="stable")]  # as the importer sorts
    return vertices, np.arange(0, 3 * len(triangles) + 1, 3, dtype=np.int64), triangles.ravel()


def mesh_par(size=2.0, cells=4):
    p = par(L.SHAPE_MESH, (size / 2, size / 2, 0), size)
    p[L.SP_TRIANGLE_WIDTH] = size / cells
    return p


def test_a_box_over_a_triangle_mesh_touches_at_its_four_corners_wherever_it_is():
    """A 0.2 m box, turned about z, 4 mm over (or 1 mm into) a flat mesh of 32 triangles at 100 random places
    (over the edges between triangles too): four points, its bottom corners, each at the gap along +z; past
    the mesh's border it finds nothing."""
    mesh = grid()
    half = np.array([0.1, 0.1, 0.1])
    plane_rot = np.eye(3)
    for _ in range(100):
        gap = RNG.choice([0.004, -0.001])
        spin = rot([0, 0, 1], RNG.uniform(0, np.pi))
        centre = np.array([*RNG.uniform(-0.85, 0.85, 2), 0.1 + gap])
        found = contacts(L.SHAPE_BOX, par(L.SHAPE_BOX, half, 0.18), spin, centre, L.SHAPE_MESH,
                         mesh_par(), plane_rot, np.zeros(3), 0.01, hull_b=mesh)  # fmt: skip
        assert len(found) == 4
        assert np.allclose(found[:, 6], gap, atol=1e-12) and np.allclose(found[:, 3:6], [0, 0, 1])
        corners = centre[:2] + (spin[:2, :2] @ (np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]]) * 0.1).T).T
        for point in found[:, :2]:
            assert np.min(np.linalg.norm(corners - point, axis=1)) < 1e-12
    outside = contacts(L.SHAPE_BOX, par(L.SHAPE_BOX, half, 0.18), np.eye(3), [1.5, 0.0, 0.1], L.SHAPE_MESH,
                       mesh_par(), plane_rot, np.zeros(3), 0.01, hull_b=mesh)  # fmt: skip
    assert len(outside) == 0


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_a_sphere_meets_a_triangle_mesh_from_either_side(side):
    """A 0.05 m ball 2 cm from the mesh (above or below it: triangle meshes collide on both sides): one
    contact 2 cm apart, the normal toward the ball, on the ball under its centre (where PhysX's sphere-mesh
    contact puts it: the centre less the radius along the normal)."""
    found = contacts(L.SHAPE_SPHERE, par(L.SHAPE_SPHERE, (0.05, 0, 0), 0.05), np.eye(3), [0.31, -0.2, side * 0.07],
                     L.SHAPE_MESH, mesh_par(), np.eye(3), np.zeros(3), 0.05,
                     hull_b=grid())  # fmt: skip
    assert len(found) >= 1
    assert np.allclose(found[:, 6], 0.02) and np.allclose(found[:, 3:6], [0, 0, side])
    assert np.allclose(found[:, :3], [0.31, -0.2, side * 0.02])


def test_the_x_slab_of_a_bumpy_mesh_finds_what_visiting_every_triangle_finds():
    """A 12 x 12 grid with random heights (288 triangles, sorted by their lowest x as imported): boxes and
    capsules at 100 random poses touch it at the same points whether mesh_pair searches the x slab (the
    widest triangle's width) or visits every triangle (a width beyond the mesh)."""
    vertices, start, corners = grid(2.0, 12)
    vertices = vertices.copy()
    vertices[:, 2] = RNG.uniform(-0.05, 0.05, len(vertices))
    order = np.argsort(vertices[corners.reshape(-1, 3), 0].min(axis=1), kind="stable")
    corners = corners.reshape(-1, 3)[order].ravel()
    mesh = (vertices, start, corners)
    slab, every = mesh_par(2.0, 12), mesh_par(2.0, 12)
    every[L.SP_TRIANGLE_WIDTH] = 1e9
    touched = 0
    for k in range(100):
        spin = random_rotation()
        centre = np.array([*RNG.uniform(-0.9, 0.9, 2), RNG.uniform(0.0, 0.15)])
        kind, size = (L.SHAPE_BOX, (0.1, 0.06, 0.04)) if k % 2 else (L.SHAPE_CAPSULE, (0.04, 0.08, 0.0))
        a = par(kind, size, float(np.linalg.norm(size)) + 0.04)
        found = [contacts(kind, a, spin, centre, L.SHAPE_MESH, p, np.eye(3), np.zeros(3), 0.02, hull_b=mesh)
                 for p in (slab, every)]  # fmt: skip
        assert np.array_equal(found[0], found[1])
        touched += len(found[0]) > 0
    assert touched > 30
