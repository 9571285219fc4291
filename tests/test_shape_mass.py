"""Collider mass properties against closed forms written out here (not against the module itself)."""

import math

import numpy as np
import pytest
from pxr import Gf, Usd, UsdGeom, UsdPhysics

from usdart.usd.importer.shape_mass import (
    MassProperties,
    closed_triangle_mesh,
    collider_mass_properties,
    combine,
    convex_hull,
    solid_box,
    solid_capsule,
    solid_cone,
    solid_cylinder,
    solid_ellipsoid,
    solid_sphere,
    triangulate,
)

PI = math.pi
AXES = "XYZ"


# ---- closed forms ------------------------------------------------------------------------------------------
def box_inertia(m, a, b, c):
    """Full edge lengths a, b, c."""
    return np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 12


def axial_inertia(i_axis, i_perp, k):
    d = np.full(3, float(i_perp))
    d[k] = i_axis
    return np.diag(d)


def capsule_closed_form(r, h):
    """Cylinder plus two hemispheres; each hemisphere's COM is 3r/8 beyond the cylinder's end."""
    mc, mh = PI * r * r * h, 2 / 3 * PI * r**3
    i_axis = mc * r * r / 2 + 2 * (2 / 5 * mh * r * r)
    i_perp = mc * (r * r / 4 + h * h / 12) + 2 * (83 / 320 * mh * r * r + mh * (3 * r / 8 + h / 2) ** 2)
    return mc + 2 * mh, i_axis, i_perp


def cylinder_closed_form(r, h):
    m = PI * r * r * h
    return m, m * r * r / 2, m * (3 * r * r + h * h) / 12


def cone_closed_form(r, h):
    """COM h/4 above the base; returns (mass, COM offset from the centre, I_axis, I_perp about COM)."""
    m = PI * r * r * h / 3
    return m, -h / 2 + h / 4, 3 / 10 * m * r * r, 3 / 80 * m * (4 * r * r + h * h)


def frustum_closed_form(r_bottom, r_top, h):
    """Large cone minus the small cone cut off above (both share the apex); base of the frustum at -h/2."""
    apex_height = h * r_bottom / (r_bottom - r_top)
    cones = []
    for radius, height, base in ((r_bottom, apex_height, -h / 2), (r_top, apex_height - h, h / 2)):
        m, _, i_axis, i_perp = cone_closed_form(radius, height)
        cones.append((m, base + height / 4, i_axis, i_perp))
    (m1, z1, a1, p1), (m2, z2, a2, p2) = cones
    m = m1 - m2
    z = (m1 * z1 - m2 * z2) / m
    return m, z, a1 - a2, p1 + m1 * (z1 - z) ** 2 - p2 - m2 * (z2 - z) ** 2


def rot_z(deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def fibonacci_sphere(n, radius=1.0, centre=(0, 0, 0)):
    i = np.arange(n) + 0.5
    polar, azimuth = np.arccos(1 - 2 * i / n), PI * (1 + 5**0.5) * i
    unit = np.stack([np.cos(azimuth) * np.sin(polar), np.sin(azimuth) * np.sin(polar), np.cos(polar)], axis=1)
    return radius * unit + np.asarray(centre, float)


CUBE_POINTS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
# outward (counter-clockwise seen from outside) quads of CUBE_POINTS, index = 4x + 2y + z with 0/1 coordinates
CUBE_QUADS = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]


def assert_props(mp, mass, com, inertia, rtol=1e-12, atol=1e-13):
    assert mp.mass == pytest.approx(mass, rel=rtol)
    np.testing.assert_allclose(mp.com, com, rtol=rtol, atol=atol)
    np.testing.assert_allclose(mp.inertia, inertia, rtol=rtol, atol=atol * max(1.0, abs(mass)))


# ---- primitives --------------------------------------------------------------------------------------------
def test_box_sphere_ellipsoid():
    assert_props(solid_box([0.5, 1.0, 1.5]), 6.0, np.zeros(3), box_inertia(6.0, 1, 2, 3))
    m = 4 / 3 * PI * 0.3**3
    assert_props(solid_sphere(0.3), m, np.zeros(3), np.eye(3) * 0.4 * m * 0.09)
    a, b, c = 1.0, 2.0, 0.5
    m = 4 / 3 * PI * a * b * c
    inertia = np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 5
    assert_props(solid_ellipsoid([a, b, c]), m, np.zeros(3), inertia)


@pytest.mark.parametrize("axis", AXES)
def test_capsule_cylinder_cone(axis):
    r, h, k = 0.3, 1.1, AXES.index(axis)
    m, i_axis, i_perp = capsule_closed_form(r, h)
    assert_props(solid_capsule(r, h, axis), m, np.zeros(3), axial_inertia(i_axis, i_perp, k))
    m, i_axis, i_perp = cylinder_closed_form(r, h)
    assert_props(solid_cylinder(r, h, axis), m, np.zeros(3), axial_inertia(i_axis, i_perp, k))
    m, z, i_axis, i_perp = cone_closed_form(r, h)
    assert z == pytest.approx(-h / 4)
    assert_props(solid_cone(r, h, axis), m, np.eye(3)[k] * z, axial_inertia(i_axis, i_perp, k))


def test_degenerate_primitives_have_zero_mass():
    assert solid_capsule(0.0, 1.0).mass == 0
    assert solid_cylinder(1.0, 0.0).mass == 0
    m = 4 / 3 * PI
    assert_props(solid_capsule(1.0, 0.0), m, np.zeros(3), np.eye(3) * 0.4 * m)  # a capsule without spine: a ball


# ---- meshes ------------------------------------------------------------------------------------------------
def test_triangulate_fans_polygons():
    tris = triangulate([3, 4, 5, 2], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
    np.testing.assert_array_equal(tris, [[0, 1, 2], [3, 4, 5], [3, 5, 6], [7, 8, 9], [7, 9, 10], [7, 10, 11]])
    with pytest.raises(ValueError):
        triangulate([3, 3], [0, 1, 2])


def test_closed_mesh_either_winding():
    tris = triangulate([4] * 6, np.ravel(CUBE_QUADS))
    offset = np.array([10.0, -3.0, 2.0])
    expected = (8.0, offset, box_inertia(8.0, 2, 2, 2))
    assert_props(closed_triangle_mesh(CUBE_POINTS + offset, tris), *expected, atol=1e-12)
    assert_props(closed_triangle_mesh(CUBE_POINTS + offset, tris[:, ::-1]), *expected, atol=1e-12)
    with pytest.raises(ValueError, match="no volume"):
        closed_triangle_mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 1]])


def test_hull_of_points_in_cube_is_the_cube():
    rng = np.random.default_rng(7)
    points = rng.permutation(np.concatenate([rng.uniform(-0.999, 0.999, (20000, 3)), CUBE_POINTS]))
    hull_points, tris = convex_hull(points * [1, 2, 3])
    assert len(hull_points) == 8 and len(tris) == 12
    assert_props(closed_triangle_mesh(hull_points, tris), 48.0, np.zeros(3), box_inertia(48.0, 2, 4, 6), atol=1e-12)


def test_hull_is_outward_and_contains_every_point():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(3000, 3)) * [1.0, 5.0, 0.2] + [100.0, 0.0, 0.0]
    hull_points, tris = convex_hull(points)
    a, b, c = (hull_points[tris[:, i]] for i in range(3))
    normals = np.cross(b - a, c - a)
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    assert np.all((points @ normals.T - np.einsum("ij,ij->i", normals, a)) < 1e-9)  # nothing outside any face
    centroid = hull_points.mean(axis=0)
    assert np.all(np.einsum("ij,ij->i", normals, a - centroid) > 0)  # every face looks away from the inside


def test_hull_of_sphere_points_converges_to_the_ball():
    ball = 4 / 3 * PI * 2.0**3
    errors = []
    for n in (200, 800, 3200):
        mp = closed_triangle_mesh(*convex_hull(fibonacci_sphere(n, 2.0, (1, 2, 3))))
        assert mp.mass < ball  # an inscribed polytope
        np.testing.assert_allclose(mp.com, [1, 2, 3], atol=1e-3)
        errors.append(1 - mp.mass / ball)
    assert errors[2] < 2.5e-3 and errors[1] < errors[0] / 3 and errors[2] < errors[1] / 3


def test_hull_rejects_flat_points():
    with pytest.raises(ValueError, match="coplanar"):
        convex_hull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.2, 0]])


# ---- combining and moving ----------------------------------------------------------------------------------
def test_combine_two_offset_spheres():
    r1, r2, d1, d2 = 0.5, 1.0, np.array([-2.0, 0, 0]), np.array([0, 3.0, 0])
    m1, m2 = 4 / 3 * PI * r1**3, 4 / 3 * PI * r2**3
    total = combine([solid_sphere(r1).transformed(np.eye(3), d1), solid_sphere(r2).transformed(np.eye(3), d2)])
    com = (m1 * d1 + m2 * d2) / (m1 + m2)
    inertia = np.eye(3) * 0.4 * (m1 * r1**2 + m2 * r2**2)
    for m, d in ((m1, d1 - com), (m2, d2 - com)):
        x, y, z = d
        inertia += m * np.array(
            [[y * y + z * z, -x * y, -x * z], [-x * y, x * x + z * z, -y * z], [-x * z, -y * z, x * x + y * y]]
        )
    assert_props(total, m1 + m2, com, inertia)
    assert_props(combine([]), 0.0, np.zeros(3), np.zeros((3, 3)))


def test_transformed_and_scaled():
    box = solid_box([1.0, 0.5, 0.25])  # I = diag(ixx, iyy, izz)
    ixx, iyy, izz = np.diag(box.inertia)
    theta = math.radians(30)
    c, s = math.cos(theta), math.sin(theta)
    moved = box.transformed(rot_z(30), [1, 2, 3])
    expected = np.array(
        [
            [ixx * c * c + iyy * s * s, (ixx - iyy) * s * c, 0],
            [(ixx - iyy) * s * c, ixx * s * s + iyy * c * c, 0],
            [0, 0, izz],
        ]
    )
    assert_props(moved, box.mass, [1, 2, 3], expected)
    heavy = moved.scaled(1000.0)
    assert_props(heavy, 1000 * box.mass, [1, 2, 3], 1000 * expected)
    assert isinstance(heavy, MassProperties)


# ---- USD colliders -----------------------------------------------------------------------------------------
def new_stage(mpu=1.0):
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    UsdGeom.Xform.Define(stage, "/World")
    return stage


def xform_ops(xformable, translate=None, rotate_xyz=None, scale=None):
    if translate is not None:
        xformable.AddTranslateOp().Set(Gf.Vec3d(*translate))
    if rotate_xyz is not None:
        xformable.AddRotateXYZOp().Set(Gf.Vec3f(*rotate_xyz))
    if scale is not None:
        xformable.AddScaleOp().Set(Gf.Vec3f(*scale))


def make_body(stage, path="/World/body", **ops):
    body = UsdGeom.Xform.Define(stage, path)
    xform_ops(body, **ops)
    UsdPhysics.RigidBodyAPI.Apply(body.GetPrim())
    return body.GetPrim()


def make_collider(stage, schema, path="/World/body/shape", attrs=None, **ops):
    geom = schema.Define(stage, path)
    for name, value in (attrs or {}).items():
        geom.GetPrim().GetAttribute(name).Set(value)
    xform_ops(geom, **ops)
    UsdPhysics.CollisionAPI.Apply(geom.GetPrim())
    return geom.GetPrim()


def body_props(prim, body, mpu=1.0, time=Usd.TimeCode.Default()):
    world = UsdGeom.Xformable(body).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    collider_world = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(time)
    return collider_mass_properties(prim, collider_world, world, mpu, time)


def make_mesh(stage, approximation=None, quads=CUBE_QUADS, points=CUBE_POINTS, path="/World/body/mesh", **ops):
    prim = make_collider(
        stage,
        UsdGeom.Mesh,
        path,
        attrs={
            "points": [Gf.Vec3f(*p) for p in points],
            "faceVertexCounts": [4] * len(quads),
            "faceVertexIndices": [int(i) for i in np.ravel(quads)],
        },
        **ops,
    )
    if approximation is not None:
        UsdPhysics.MeshCollisionAPI.Apply(prim).CreateApproximationAttr(approximation)
    return prim


def test_cube_and_sphere_prims():
    st = new_stage()
    body = make_body(st, translate=(3, 4, 5), rotate_xyz=(10, 20, 30))
    cube = make_collider(st, UsdGeom.Cube, attrs={"size": 0.4})
    assert_props(body_props(cube, body), 0.064, np.zeros(3), box_inertia(0.064, 0.4, 0.4, 0.4), atol=1e-14)
    sphere = make_collider(st, UsdGeom.Sphere, "/World/body/ball", attrs={"radius": 0.3}, translate=(1, 0, 0))
    m = 4 / 3 * PI * 0.027
    assert_props(body_props(sphere, body), m, [1, 0, 0], np.eye(3) * 0.4 * m * 0.09, atol=1e-14)


@pytest.mark.parametrize("axis", AXES)
def test_capsule_cylinder_cone_prims_along_each_axis(axis):
    st = new_stage()
    body = make_body(st)
    r, h, k = 0.2, 0.7, AXES.index(axis)
    attrs = {"radius": r, "height": h, "axis": axis}
    m, i_axis, i_perp = capsule_closed_form(r, h)
    assert_props(
        body_props(make_collider(st, UsdGeom.Capsule, "/World/body/a", attrs), body),
        m,
        np.zeros(3),
        axial_inertia(i_axis, i_perp, k),
    )
    m, i_axis, i_perp = cylinder_closed_form(r, h)
    assert_props(
        body_props(make_collider(st, UsdGeom.Cylinder, "/World/body/b", attrs), body),
        m,
        np.zeros(3),
        axial_inertia(i_axis, i_perp, k),
    )
    m, z, i_axis, i_perp = cone_closed_form(r, h)
    assert_props(
        body_props(make_collider(st, UsdGeom.Cone, "/World/body/c", attrs), body),
        m,
        np.eye(3)[k] * (-h / 4),
        axial_inertia(i_axis, i_perp, k),
    )


@pytest.mark.parametrize(
    "approximation", [None, "none", "convexHull", "convexDecomposition", "meshSimplification", "boundingCube"]
)
def test_cube_mesh(approximation):
    st = new_stage()
    body = make_body(st)
    mesh = make_mesh(st, approximation, translate=(0, 0, 2), scale=(0.5, 1.0, 1.5))  # a 1 x 2 x 3 box at z = 2
    assert_props(body_props(mesh, body), 6.0, [0, 0, 2], box_inertia(6.0, 1, 2, 3), atol=1e-12)


def test_mesh_bounding_sphere():
    st = new_stage()
    body = make_body(st)
    mesh = make_mesh(st, "boundingSphere", translate=(1, 1, 1))
    r2 = 3.0  # centre to a corner of the 2-unit cube
    m = 4 / 3 * PI * r2**1.5
    assert_props(body_props(mesh, body), m, [1, 1, 1], np.eye(3) * 0.4 * m * r2)


def test_mesh_inward_winding_and_split_vertices():
    st = new_stage()
    body = make_body(st)
    inward = make_mesh(st, quads=[q[::-1] for q in CUBE_QUADS])
    assert_props(body_props(inward, body), 8.0, np.zeros(3), box_inertia(8.0, 2, 2, 2), atol=1e-12)
    # every face with its own four vertices (as UV seams split meshes): welded back into a closed surface
    split = make_mesh(
        st,
        points=CUBE_POINTS[np.ravel(CUBE_QUADS)],
        quads=np.arange(24).reshape(6, 4),
        path="/World/body/split",
        translate=(0, 5, 0),
    )
    assert_props(body_props(split, body), 8.0, [0, 5, 0], box_inertia(8.0, 2, 2, 2), atol=1e-12)


def test_open_mesh_falls_back_to_its_hull():
    st = new_stage()
    body = make_body(st)
    # a cube with its top missing, plus an inner point the hull ignores
    mesh = make_mesh(st, points=np.vstack([CUBE_POINTS, [[0, 0, 0]]]), quads=CUBE_QUADS[:5])
    assert_props(body_props(mesh, body), 8.0, np.zeros(3), box_inertia(8.0, 2, 2, 2), atol=1e-12)


def test_nested_collider_with_translate_and_rotate():
    st = new_stage()
    body = make_body(st, translate=(5, 5, 5), rotate_xyz=(30, 0, 0))
    UsdGeom.Xform.Define(st, "/World/body/link")  # intermediate prim without ops
    xform_ops(UsdGeom.Xformable(st.GetPrimAtPath("/World/body/link")), translate=(0, 1, 0))
    cube = make_collider(
        st,
        UsdGeom.Cube,
        "/World/body/link/box",
        attrs={"size": 1.0},
        translate=(1, 0, 0),
        rotate_xyz=(0, 0, 90),
        scale=(1, 2, 3),
    )
    # local x (1 m) now runs along body y, local y (2 m) along body x
    assert_props(body_props(cube, body), 6.0, [1, 1, 0], box_inertia(6.0, 2, 1, 3), atol=1e-12)
    capsule = make_collider(
        st, UsdGeom.Capsule, "/World/body/link/cap", attrs={"radius": 0.1, "height": 0.5}, rotate_xyz=(90, 0, 0)
    )  # Z axis turned onto -Y
    m, i_axis, i_perp = capsule_closed_form(0.1, 0.5)
    assert_props(body_props(capsule, body), m, [0, 1, 0], axial_inertia(i_axis, i_perp, 1), atol=1e-12)


def test_body_with_non_uniform_scale():
    st = new_stage()
    body = make_body(st, translate=(0, 0, 1), rotate_xyz=(0, 0, 45), scale=(2, 1, 1))
    sphere = make_collider(st, UsdGeom.Sphere, attrs={"radius": 0.5}, translate=(1, 0, 0))
    a, b, c = 1.0, 0.5, 0.5  # the body's scale turns the ball into an ellipsoid, 2 m along body x
    m = 4 / 3 * PI * a * b * c
    assert_props(body_props(sphere, body), m, [2, 0, 0], np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 5)
    # capsules, cylinders, cones: radius by the larger perpendicular scale, height by the axial one (PhysX)
    cyl = make_collider(
        st, UsdGeom.Cylinder, "/World/body/cyl", attrs={"radius": 0.1, "height": 0.4, "axis": "Y"}, scale=(1, 1, 3)
    )
    m, i_axis, i_perp = cylinder_closed_form(0.3, 0.4)
    assert_props(body_props(cyl, body), m, np.zeros(3), axial_inertia(i_axis, i_perp, 1))
    cone = make_collider(st, UsdGeom.Cone, "/World/body/cone", attrs={"radius": 0.1, "height": 0.4, "axis": "X"})
    m, z, i_axis, i_perp = cone_closed_form(0.1, 0.8)
    assert_props(body_props(cone, body), m, [z, 0, 0], axial_inertia(i_axis, i_perp, 0))


def test_collider_on_the_body_prim_itself():
    st = new_stage()
    cube = make_collider(st, UsdGeom.Cube, "/World/cube", attrs={"size": 1.0}, rotate_xyz=(0, 90, 0), scale=(1, 2, 3))
    UsdPhysics.RigidBodyAPI.Apply(cube)
    assert_props(body_props(cube, cube), 6.0, np.zeros(3), box_inertia(6.0, 1, 2, 3), atol=1e-12)


def test_centimetre_stage():
    st = new_stage(mpu=0.01)
    body = make_body(st, translate=(100, 0, 0))
    cube = make_collider(st, UsdGeom.Cube, attrs={"size": 10.0}, translate=(0, 50, 0))
    assert_props(body_props(cube, body, mpu=0.01), 1e-3, [0, 0.5, 0], box_inertia(1e-3, 0.1, 0.1, 0.1), atol=1e-16)
    capsule = make_collider(st, UsdGeom.Capsule, "/World/body/cap", attrs={"radius": 5.0, "height": 20.0, "axis": "X"})
    m, i_axis, i_perp = capsule_closed_form(0.05, 0.2)
    assert_props(body_props(capsule, body, mpu=0.01), m, np.zeros(3), axial_inertia(i_axis, i_perp, 0), atol=1e-16)
    mesh = make_mesh(st, "convexHull", translate=(0, 0, -20))
    assert_props(body_props(mesh, body, mpu=0.01), 8e-6, [0, 0, -0.2], box_inertia(8e-6, 0.02, 0.02, 0.02), atol=1e-16)


@pytest.mark.skipif(not hasattr(UsdGeom, "Cylinder_1"), reason="usd-core without Capsule_1 / Cylinder_1")
def test_two_radius_capsule_and_cylinder():
    st = new_stage()
    body = make_body(st)
    same = {"radiusBottom": 0.2, "radiusTop": 0.2, "height": 0.6, "axis": "Y"}
    m, i_axis, i_perp = capsule_closed_form(0.2, 0.6)
    assert_props(
        body_props(make_collider(st, UsdGeom.Capsule_1, "/World/body/a", same), body),
        m,
        np.zeros(3),
        axial_inertia(i_axis, i_perp, 1),
    )
    m, i_axis, i_perp = cylinder_closed_form(0.2, 0.6)
    assert_props(
        body_props(make_collider(st, UsdGeom.Cylinder_1, "/World/body/b", same), body),
        m,
        np.zeros(3),
        axial_inertia(i_axis, i_perp, 1),
    )
    frustum = make_collider(
        st, UsdGeom.Cylinder_1, "/World/body/c", {"radiusBottom": 0.3, "radiusTop": 0.1, "height": 0.5, "axis": "Z"}
    )
    m, z, i_axis, i_perp = frustum_closed_form(0.3, 0.1, 0.5)
    assert_props(body_props(frustum, body), m, [0, 0, z], axial_inertia(i_axis, i_perp, 2))


@pytest.mark.skipif(not hasattr(UsdGeom, "Capsule_1"), reason="usd-core without Capsule_1")
def test_tapered_capsule_is_the_hull_of_its_two_balls():
    st = new_stage()
    body = make_body(st)
    rb, rt, h = 0.3, 0.1, 0.5
    capsule = make_collider(st, UsdGeom.Capsule_1, attrs={"radiusBottom": rb, "radiusTop": rt, "height": h})
    mp = body_props(capsule, body)
    # caps of height r(1 +- sin a) and a frustum between the tangent circles, sin a = (rb - rt) / h
    s = (rb - rt) / h
    c = math.sqrt(1 - s * s)
    cap = lambda r, k: PI * k * k * (3 * r - k) / 3  # noqa: E731
    side = (h / 2 + rt * s) - (-h / 2 + rb * s)
    volume = cap(rb, rb * (1 + s)) + cap(rt, rt * (1 - s)) + PI * side / 3 * c * c * (rb * rb + rb * rt + rt * rt)
    assert mp.mass == pytest.approx(volume, rel=1e-12)
    sampled = np.vstack([fibonacci_sphere(1500, rb, (0, 0, -h / 2)), fibonacci_sphere(1500, rt, (0, 0, h / 2))])
    hull = closed_triangle_mesh(*convex_hull(sampled))
    assert hull.mass == pytest.approx(volume, rel=5e-3)
    np.testing.assert_allclose(hull.com, mp.com, atol=2e-3)
    np.testing.assert_allclose(hull.inertia, mp.inertia, rtol=2e-2, atol=1e-6)


def test_attributes_are_read_at_the_given_time():
    st = new_stage()
    body = make_body(st)
    sphere = make_collider(st, UsdGeom.Sphere)
    attr = sphere.GetAttribute("radius")
    attr.Set(1.0, 1.0)
    attr.Set(2.0, 2.0)
    assert body_props(sphere, body, time=Usd.TimeCode(2.0)).mass == pytest.approx(4 / 3 * PI * 8)
    assert body_props(sphere, body, time=Usd.TimeCode(1.0)).mass == pytest.approx(4 / 3 * PI)


@pytest.mark.parametrize("schema", [UsdGeom.Xform, UsdGeom.Plane, UsdGeom.Points])
def test_unsupported_types_name_the_prim(schema):
    st = new_stage()
    body = make_body(st)
    prim = make_collider(st, schema, "/World/body/odd")
    with pytest.raises(ValueError, match=f"/World/body/odd.*{prim.GetTypeName()}"):
        body_props(prim, body)


def test_nan_geometry_names_the_prim():
    st = new_stage()
    body = make_body(st)
    ball = make_collider(st, UsdGeom.Sphere, "/World/body/ball", attrs={"radius": float("nan")})
    with pytest.raises(ValueError, match="/World/body/ball"):
        body_props(ball, body)
    points = CUBE_POINTS.copy()
    points[3, 1] = np.nan
    mesh = make_mesh(st, "convexHull", points=points)
    with pytest.raises(ValueError, match="/World/body/mesh"):
        body_props(mesh, body)
    cube = make_collider(st, UsdGeom.Cube, "/World/body/moved", translate=(float("nan"), 0, 0))
    with pytest.raises(ValueError, match="/World/body/moved"):
        body_props(cube, body)
