"""Mass properties of collider shapes (unit density, float64, SI), from which UsdPhysics derives body mass.

UsdPhysics computes a body's mass from its colliders as volume x density; this module supplies the
geometry (volume, centre of mass, inertia about the COM at density 1) and leaves density precedence
and MassAPI to the caller.

- Boxes and ellipsoids use closed forms. Capsules, cylinders, cones, frusta and tapered capsules are
  solids of revolution whose squared radius is piecewise quadratic along the axis, so a 3-point
  Gauss-Legendre rule per piece integrates them exactly; one routine serves them all.
- Meshes use the divergence theorem over signed tetrahedra (winding may be outward or inward). The
  hull-based approximations PhysX cooks (convexHull, meshSimplification, sdf) use the convex hull of
  the points; convexDecomposition sums its convex pieces (usdart.usd.importer.decomposition).
- Scale follows PhysX: boxes, spheres and meshes take the collider's full linear transform relative
  to the body frame exactly (a sphere under non-uniform scale becomes an ellipsoid); capsules,
  cylinders and cones scale their radius by the larger of the two perpendicular scales and their
  height by the axial scale, because PhysX has no non-uniformly scaled version of those shapes.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from pxr import Usd, UsdGeom

from ...core.frames import decompose, homogeneous, usd_to_column
from .decomposition import convex_pieces, decomposition_limits

_AXES = {"X": 0, "Y": 1, "Z": 2}
_GAUSS_X = np.array([-math.sqrt(0.6), 0.0, math.sqrt(0.6)])  # 3-point Gauss-Legendre: exact to degree 5
_GAUSS_W = np.array([5.0, 8.0, 5.0]) / 9.0


@dataclass(frozen=True)
class MassProperties:
    """Mass, centre of mass and inertia about the COM, all expressed in one frame."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "com", np.array(self.com, dtype=float).reshape(3))
        object.__setattr__(self, "inertia", np.array(self.inertia, dtype=float).reshape(3, 3))

    def scaled(self, factor) -> MassProperties:
        """Same shape at `factor` times the density: mass and inertia scale, the COM does not."""
        return MassProperties(self.mass * factor, self.com, self.inertia * factor)

    def transformed(self, rotation, translation) -> MassProperties:
        """Re-express in a parent frame where x_parent = R @ x + t."""
        r = np.asarray(rotation, dtype=float)
        return MassProperties(self.mass, r @ self.com + np.asarray(translation, dtype=float), r @ self.inertia @ r.T)


def _zero() -> MassProperties:
    return MassProperties(0.0, np.zeros(3), np.zeros((3, 3)))


def combine(parts: Iterable[MassProperties]) -> MassProperties:
    """Several solids as one: masses add, the COM is the mass-weighted mean, inertias move to it (parallel axis)."""
    parts = list(parts)
    mass = sum(p.mass for p in parts)
    if mass == 0:
        return _zero()
    com = sum(p.mass * p.com for p in parts) / mass
    inertia = np.zeros((3, 3))
    for p in parts:
        d = p.com - com
        inertia += p.inertia + p.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return MassProperties(mass, com, inertia)


def _affine(mp: MassProperties, linear, offset) -> MassProperties:
    """Image of a solid under x -> L x + o, exact for any L (non-uniform scale, shear, mirror).

    Volume scales by |det L| and the second-moment matrix C = trace(I)/2 - I becomes |det L| L C L^T.
    """
    lin = np.asarray(linear, dtype=float)
    det = abs(np.linalg.det(lin))
    second = 0.5 * np.trace(mp.inertia) * np.eye(3) - mp.inertia
    second = det * lin @ second @ lin.T
    return MassProperties(
        mp.mass * det, lin @ mp.com + np.asarray(offset, dtype=float), np.trace(second) * np.eye(3) - second
    )


# ---- primitives --------------------------------------------------------------------------------------------
def solid_box(half_extents) -> MassProperties:
    """Unit-density box centred at the origin."""
    a, b, c = np.abs(np.asarray(half_extents, dtype=float))
    m = 8.0 * a * b * c
    return MassProperties(m, np.zeros(3), np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 3.0)


def solid_ellipsoid(radii) -> MassProperties:
    a, b, c = np.abs(np.asarray(radii, dtype=float))
    m = 4.0 / 3.0 * math.pi * a * b * c
    return MassProperties(m, np.zeros(3), np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 5.0)


def solid_sphere(radius) -> MassProperties:
    return solid_ellipsoid([radius] * 3)


def _revolved(pieces, axis: str) -> MassProperties:
    """Solid of revolution about `axis`; pieces are (z0, z1, rho2) with rho2(z) the squared radius.

    A slab of radius rho and thickness dz has mass pi rho^2 dz, axial inertia pi rho^4 / 2 dz and
    perpendicular inertia pi rho^4 / 4 dz + z^2 dm. With rho^2 quadratic in z (spherical caps) or rho
    linear (frusta) every integrand has degree <= 4, which the 3-point Gauss rule integrates exactly.
    """
    m = mz = mzz = m4 = 0.0
    for z0, z1, rho2 in pieces:
        half = 0.5 * (z1 - z0)
        z = 0.5 * (z0 + z1) + half * _GAUSS_X
        w = math.pi * half * _GAUSS_W
        a = rho2(z)
        m += w @ a
        mz += w @ (a * z)
        mzz += w @ (a * z * z)
        m4 += w @ (a * a)
    if m == 0:
        return _zero()
    c = mz / m
    k = _AXES[axis]
    diag = np.full(3, m4 / 4.0 + mzz - m * c * c)
    diag[k] = m4 / 2.0
    com = np.zeros(3)
    com[k] = c
    return MassProperties(m, com, np.diag(diag))


def _frustum(r_bottom: float, r_top: float, height: float, axis: str) -> MassProperties:
    """Truncated cone over the axis extent [-h/2, h/2], radius r_bottom at -h/2 (UsdGeom Cylinder_1)."""
    if height == 0:
        return _zero()

    def rho2(z):
        return (r_bottom + (r_top - r_bottom) * (z / height + 0.5)) ** 2

    return _revolved([(-height / 2, height / 2, rho2)], axis)


def _ball_piece(z0, z1, centre, r):
    return z0, z1, lambda z: r * r - (z - centre) ** 2


def _tapered_capsule(r_bottom: float, r_top: float, height: float, axis: str) -> MassProperties:
    """Convex hull of two balls centred at -h/2 and +h/2 (UsdGeom Capsule_1: sides tangent to the caps).

    The side is a frustum touching each ball where the surface normal has axial component
    sin(a) = (r_bottom - r_top) / h; equal radii give hemispheres and a cylinder.
    """
    zb, zt = -height / 2, height / 2
    if height <= abs(r_bottom - r_top):  # one ball contains the other
        zc, r = (zb, r_bottom) if r_bottom >= r_top else (zt, r_top)
        return _revolved([_ball_piece(zc - r, zc + r, zc, r)], axis)
    s = (r_bottom - r_top) / height
    c = math.sqrt(1.0 - s * s)
    tb, tt = zb + r_bottom * s, zt + r_top * s

    def side(z):
        return (c * (r_bottom + (r_top - r_bottom) * (z - tb) / (tt - tb))) ** 2

    return _revolved(
        [_ball_piece(zb - r_bottom, tb, zb, r_bottom), (tb, tt, side), _ball_piece(tt, zt + r_top, zt, r_top)], axis
    )


def solid_capsule(radius, height, axis="Z") -> MassProperties:
    """UsdGeom Capsule: a cylinder of length `height` (the spine) with hemispherical caps."""
    return _tapered_capsule(radius, radius, height, axis)


def solid_cylinder(radius, height, axis="Z") -> MassProperties:
    return _frustum(radius, radius, height, axis)


def solid_cone(radius, height, axis="Z") -> MassProperties:
    """UsdGeom Cone: extent [-h/2, h/2] along the axis, base at -h/2, apex at +h/2, so the COM is at -h/4."""
    return _frustum(radius, 0.0, height, axis)


# ---- meshes ------------------------------------------------------------------------------------------------
def triangulate(face_vertex_counts, face_vertex_indices) -> np.ndarray:
    """Fan triangulation of USD polygons -> (n, 3) vertex indices; faces with fewer than 3 vertices add none."""
    counts = np.asarray(face_vertex_counts, dtype=np.int64).reshape(-1)
    indices = np.asarray(face_vertex_indices, dtype=np.int64).reshape(-1)
    if np.any(counts < 0) or counts.sum() != len(indices):
        raise ValueError(f"faceVertexCounts sum to {counts.sum()} but there are {len(indices)} faceVertexIndices")
    fans = np.maximum(counts - 2, 0)
    first = np.repeat(np.cumsum(counts) - counts, fans)
    k = np.arange(fans.sum()) - np.repeat(np.cumsum(fans) - fans, fans) + 1  # 1 .. count-2 within each face
    return np.stack([indices[first], indices[first + k], indices[first + k + 1]], axis=1)


def mesh_triangles(face_vertex_counts, face_vertex_indices, point_count: int) -> np.ndarray:
    """triangulate, refusing (ValueError) faces that index past the mesh's `point_count` points."""
    triangles = triangulate(face_vertex_counts, face_vertex_indices)
    if len(triangles) and (triangles.min() < 0 or triangles.max() >= point_count):
        raise ValueError(f"faceVertexIndices out of range for {point_count} points")
    return triangles


def closed_triangle_mesh(points, triangles) -> MassProperties:
    """Divergence theorem: sum of signed tetrahedra (origin, a, b, c); the sign of the total fixes the winding.

    A tetrahedron with one vertex at the origin has volume det[a b c] / 6, centroid (a + b + c) / 4 and
    second moment V / 20 (a a^T + b b^T + c c^T + s s^T), s = a + b + c. Points are centred first so
    that far-from-origin meshes keep their precision.
    """
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if len(t) == 0:
        raise ValueError("mesh has no triangles")
    if t.min() < 0 or t.max() >= len(p):
        raise ValueError(f"triangle vertex index out of range for {len(p)} points")
    centre = 0.5 * (p.min(axis=0) + p.max(axis=0))
    a, b, c = p[t[:, 0]] - centre, p[t[:, 1]] - centre, p[t[:, 2]] - centre
    vol = np.einsum("ij,ij->i", a, np.cross(b, c)) / 6.0
    s = a + b + c
    volume = vol.sum()
    if not abs(volume) > 1e-12 * np.ptp(p, axis=0).max() ** 3:
        raise ValueError("mesh encloses no volume")
    first = vol @ s / 4.0
    second = sum(np.einsum("n,ni,nj->ij", vol, x, x) for x in (a, b, c, s)) / 20.0
    if volume < 0:  # inward winding: every integral changed sign
        volume, first, second = -volume, -first, -second
    com = first / volume
    second -= volume * np.outer(com, com)
    return MassProperties(volume, com + centre, np.trace(second) * np.eye(3) - second)


def _weld(points: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge vertices at identical positions (meshes are split at UV seams) and drop collapsed triangles."""
    unique, inverse = np.unique(points, axis=0, return_inverse=True)
    t = inverse.reshape(-1)[triangles]
    keep = (t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) & (t[:, 2] != t[:, 0])
    return unique, t[keep]


def _is_closed(triangles: np.ndarray) -> bool:
    """Closed and consistently oriented: every directed edge occurs once, and so does its reverse."""
    if len(triangles) == 0:
        return False
    n = int(triangles.max()) + 1
    u = triangles.reshape(-1)
    v = np.roll(triangles, -1, axis=1).reshape(-1)
    edges, reverse = np.sort(u * n + v), np.sort(v * n + u)
    return bool(np.all(edges[1:] != edges[:-1]) and np.array_equal(edges, reverse))


def convex_hull(points) -> tuple[np.ndarray, np.ndarray]:
    """3D convex hull by quickhull -> (hull vertices, outward triangles indexing them).

    Each step takes the point farthest outside one face, removes the faces it sees, cones the horizon
    to it and hands the removed faces' outside points to the new faces. Points inside the hull are
    dropped as soon as they are, so large meshes cost little. Small hand-overs run in plain Python,
    large ones in numpy: either way the per-step cost stays near the Python minimum. Points within a
    relative 1e-12 of a face's plane count as on it.
    """
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    if len(p) < 4:
        raise ValueError(f"a convex hull needs at least 4 points, got {len(p)}")
    if not np.all(np.isfinite(p)):
        raise ValueError("points contain NaN or infinity")
    q = p - 0.5 * (p.min(axis=0) + p.max(axis=0))
    eps = 1e-12 * max(np.abs(q).max(), np.finfo(float).tiny)

    # initial tetrahedron: the farthest pair of axis extremes, then farthest from their line, from that plane
    ext = np.concatenate([q.argmin(axis=0), q.argmax(axis=0)])
    pair = np.linalg.norm(q[ext][:, None] - q[ext][None], axis=2)
    i0, i1 = (int(ext[i]) for i in np.unravel_index(pair.argmax(), pair.shape))
    line = q[i1] - q[i0]
    off_line = np.linalg.norm(np.cross(q - q[i0], line), axis=1)
    i2 = int(off_line.argmax())
    normal = np.cross(line, q[i2] - q[i0])
    height = (q - q[i0]) @ normal
    i3 = int(np.abs(height).argmax())
    if off_line[i2] <= eps * np.linalg.norm(line) or abs(height[i3]) <= eps * np.linalg.norm(normal):
        raise ValueError("points are collinear or coplanar: their hull has no volume")
    if height[i3] > 0:  # make (i0, i1, i2) face away from i3
        i1, i2 = i2, i1

    coords = q.tolist()
    faces: list[tuple[int, int, int]] = []
    planes: list[tuple[float, float, float, float]] = []  # unit outward normal and offset
    alive: list[bool] = []
    edge_face: dict[tuple[int, int], int] = {}  # directed edge -> the face it bounds counter-clockwise
    outside: dict[int, list[int]] = {}  # face -> points outside it, farthest first
    pending: list[int] = []

    def add_faces(tris, candidates: list[int]) -> None:
        """Append faces, then give each candidate point to the face it is farthest outside, if any."""
        base = len(faces)
        for j, (a, b, c) in enumerate(tris):
            (ax, ay, az), (bx, by, bz), (cx, cy, cz) = coords[a], coords[b], coords[c]
            ux, uy, uz, vx, vy, vz = bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az
            nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
            norm = math.sqrt(nx * nx + ny * ny + nz * nz) or 1.0
            nx, ny, nz = nx / norm, ny / norm, nz / norm
            faces.append((a, b, c))
            planes.append((nx, ny, nz, nx * ax + ny * ay + nz * az))
            alive.append(True)
            edge_face[a, b] = edge_face[b, c] = edge_face[c, a] = base + j
        new = planes[base:]
        groups: dict[int, list] = {}
        if len(candidates) * len(new) < 512:
            for i in candidates:
                x, y, z = coords[i]
                best, far = -1, eps
                for j, (nx, ny, nz, d) in enumerate(new):
                    dist = nx * x + ny * y + nz * z - d
                    if dist > far:
                        best, far = j, dist
                if best >= 0:
                    groups.setdefault(best, []).append((far, i))
            for j, group in groups.items():
                group.sort(reverse=True)
                outside[base + j] = [i for _, i in group]
                pending.append(base + j)
            return
        idx = np.asarray(candidates, dtype=np.int64)
        plane = np.asarray(new)
        dist = q[idx] @ plane[:, :3].T - plane[:, 3]
        best = dist.argmax(axis=1)
        far = dist[np.arange(len(idx)), best]
        keep = far > eps
        idx, best, far = idx[keep], best[keep], far[keep]
        order = np.lexsort((-far, best))  # grouped by face, farthest first
        idx, best = idx[order], best[order]
        starts = np.flatnonzero(np.diff(best, prepend=-1))
        for j, pts in zip(best[starts].tolist(), np.split(idx, starts[1:])):
            outside[base + j] = pts.tolist()
            pending.append(base + j)

    add_faces([(i0, i1, i2), (i0, i3, i1), (i1, i3, i2), (i2, i3, i0)], list(range(len(q))))
    while pending:
        f = pending.pop()
        if not alive[f]:
            continue
        candidates = outside.pop(f)
        eye = candidates[0]
        ex, ey, ez = coords[eye]
        visible, stack, hidden, horizon = {f}, [f], set(), []
        while stack:  # flood the faces the eye sees; edges towards faces it does not see form the horizon
            a, b, c = faces[stack.pop()]
            for u, v in ((a, b), (b, c), (c, a)):
                g = edge_face[v, u]
                if g in visible:
                    continue
                if g not in hidden:
                    nx, ny, nz, d = planes[g]
                    if nx * ex + ny * ey + nz * ez - d > eps:
                        visible.add(g)
                        stack.append(g)
                        continue
                    hidden.add(g)
                horizon.append((u, v, eye))
        if len({h[0] for h in horizon}) != len(horizon):
            raise ValueError("convex hull failed on a numerically degenerate point set")
        del candidates[0]
        for g in visible:
            alive[g] = False
            a, b, c = faces[g]
            for e in ((a, b), (b, c), (c, a)):
                if edge_face.get(e) == g:
                    del edge_face[e]
            candidates.extend(outside.pop(g, ()))
        add_faces(horizon, candidates)

    tris = np.array([t for t, live in zip(faces, alive) if live], dtype=np.int64)
    used, tris = np.unique(tris, return_inverse=True)
    return p[used], tris.reshape(-1, 3)


def _bounding_box(points: np.ndarray) -> MassProperties:
    lo, hi = points.min(axis=0), points.max(axis=0)
    return solid_box(0.5 * (hi - lo)).transformed(np.eye(3), 0.5 * (hi + lo))


def _bounding_sphere(points: np.ndarray) -> MassProperties:
    """Not the minimal sphere: centred on the bounding box, reaching the farthest point."""
    centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
    return solid_sphere(np.linalg.norm(points - centre, axis=1).max()).transformed(np.eye(3), centre)


def _hull(points: np.ndarray) -> MassProperties:
    return closed_triangle_mesh(*convex_hull(points))


_HULL_APPROXIMATIONS = ("convexHull", "convexDecomposition", "meshSimplification", "sdf")


# ---- USD prims ---------------------------------------------------------------------------------------------
def _value(prim: Usd.Prim, name: str, time):
    value = prim.GetAttribute(name).Get(time)
    if value is None:
        raise ValueError(f"'{name}' has no value")
    return value


def _length(prim: Usd.Prim, name: str, time) -> float:
    value = float(_value(prim, name, time))
    if not math.isfinite(value):
        raise ValueError(f"'{name}' is NaN or infinite")
    if value < 0:
        raise ValueError(f"'{name}' is negative ({value:g})")
    return value


def _mesh(prim: Usd.Prim, time) -> MassProperties:
    """A mesh collider in its own frame and units, shaped by its physics:approximation."""
    points = np.asarray(_value(prim, "points", time), dtype=float).reshape(-1, 3)
    if len(points) == 0:
        raise ValueError("mesh has no points")
    if not np.all(np.isfinite(points)):
        raise ValueError("mesh points contain NaN or infinity")
    attr = prim.GetAttribute("physics:approximation")
    approximation = str((attr.Get(time) if attr else None) or "none")
    if approximation == "boundingCube":
        return _bounding_box(points)
    if approximation == "boundingSphere":
        return _bounding_sphere(points)
    if approximation == "convexDecomposition":
        return _decomposed(prim, points, time)
    if approximation in _HULL_APPROXIMATIONS:
        return _hull(points)
    if approximation != "none":
        raise ValueError(f"unknown physics:approximation '{approximation}'")
    triangles = mesh_triangles(
        _value(prim, "faceVertexCounts", time), _value(prim, "faceVertexIndices", time), len(points)
    )
    unique, welded = _weld(points, triangles)
    if _is_closed(welded):
        return closed_triangle_mesh(unique, welded)
    return _hull(points)  # an open surface has no inside: take the solid PhysX would cook for a dynamic body


def _decomposed(prim: Usd.Prim, points: np.ndarray, time) -> MassProperties:
    """The solid of the convex pieces PhysX cooks for convexDecomposition (usdart.usd.importer.decomposition:
    the pieces the colliders get), as PhysX sums its pieces' mass; a mesh without faces is its hull."""
    whole = _hull(points)  # raises for points without a volume, as the colliders warn
    triangles = mesh_triangles(
        _value(prim, "faceVertexCounts", time), _value(prim, "faceVertexIndices", time), len(points)
    )
    if len(triangles) == 0:
        return whole
    solids = []
    for piece in convex_pieces(points, triangles, *decomposition_limits(prim)):
        with contextlib.suppress(ValueError):  # a flat piece has no volume (the colliders leave it out too)
            solids.append(_hull(piece))
    return combine(solids) if solids else whole


def _exact_local(prim: Usd.Prim, time) -> MassProperties | None:
    """Shapes whose image under any linear map is computed exactly, in the prim's own frame and units."""
    if prim.IsA(UsdGeom.Cube):
        return solid_box(np.full(3, 0.5 * _length(prim, "size", time)))
    if prim.IsA(UsdGeom.Sphere):
        return solid_sphere(_length(prim, "radius", time))
    if prim.IsA(UsdGeom.Mesh):
        return _mesh(prim, time)
    return None


def _axial_local(prim: Usd.Prim, time):
    """(radius at -axis, radius at +axis, height, axis, builder) of an axially symmetric shape, else None."""
    kinds = [
        (UsdGeom.Capsule, "radius", "radius", _tapered_capsule),
        (UsdGeom.Cylinder, "radius", "radius", _frustum),
        (UsdGeom.Cone, "radius", None, _frustum),
    ]
    for name, build in (("Capsule_1", _tapered_capsule), ("Cylinder_1", _frustum)):  # newer usd-core only
        if hasattr(UsdGeom, name):
            kinds.append((getattr(UsdGeom, name), "radiusBottom", "radiusTop", build))
    for schema, bottom, top, build in kinds:
        if prim.IsA(schema):
            axis = str(_value(prim, "axis", time))
            if axis not in _AXES:
                raise ValueError(f"axis '{axis}' is not X, Y or Z")
            r_top = _length(prim, top, time) if top else 0.0
            return _length(prim, bottom, time), r_top, _length(prim, "height", time), axis, build
    return None


def collider_mass_properties(
    prim: Usd.Prim, collider_world_matrix, body_world_matrix, meters_per_unit: float, time=Usd.TimeCode.Default()
) -> MassProperties:
    """Unit-density mass properties of a collider prim in the body frame (body pose without scale), in metres.
    The two world matrices are USD's (row-vector) local-to-world transforms of the collider and the body.

    Raises ValueError naming the prim for prim types without a volume and for NaN geometry.
    """
    path, type_name = prim.GetPath(), prim.GetTypeName() or "untyped prim"
    try:
        body_rot, body_pos, _ = decompose(body_world_matrix)
        collider_world = usd_to_column(collider_world_matrix)
        if not (
            np.all(np.isfinite(collider_world)) and np.all(np.isfinite(body_rot)) and np.all(np.isfinite(body_pos))
        ):
            raise ValueError("transform contains NaN or infinity")
        rel = np.linalg.inv(homogeneous(body_rot, body_pos)) @ collider_world  # collider -> body frame
        mpu = float(meters_per_unit)
        local = _exact_local(prim, time)
        if local is not None:
            return _affine(local, rel[:3, :3] * mpu, rel[:3, 3] * mpu)
        axial = _axial_local(prim, time)
        if axial is None:
            raise ValueError(
                f"{type_name} prims have no volume to derive a collider's mass from "
                "(supported: Cube, Sphere, Capsule, Capsule_1, Cylinder, Cylinder_1, Cone, Mesh)"
            )
        r_bottom, r_top, height, axis, build = axial
        rot, _, scale = decompose(rel.T)  # decompose takes the row-vector layout
        scale = np.abs(scale)
        k = _AXES[axis]
        radial = max(scale[j] for j in range(3) if j != k) * mpu
        local = build(r_bottom * radial, r_top * radial, height * scale[k] * mpu, axis)
        return local.transformed(rot, rel[:3, 3] * mpu)
    except ValueError as exc:
        raise ValueError(f"{path} ({type_name}): {exc}") from None
