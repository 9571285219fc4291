"""Mass properties of collider shapes (unit density, float64, SI), as UsdPhysics derives body mass.

Closed forms for boxes, spheres, ellipsoids, capsules, cylinders and cones; meshes by the divergence
theorem over signed tetrahedra, or over their convex hull for the hull-like approximations PhysX cooks
(convexHull, convexDecomposition approximated by the hull, meshSimplification, sdf).
Scale: boxes and meshes take the collider's scale per axis; a sphere under non-uniform scale is an
ellipsoid; capsules, cylinders and cones scale their radius by the larger perpendicular scale and their
height by the axial one (what PhysX does with these shapes).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pxr import Usd, UsdGeom, UsdPhysics

from .frames import decompose, homogeneous, usd_to_column

_AXES = {"X": 0, "Y": 1, "Z": 2}


@dataclass(frozen=True)
class MassProperties:
    mass: float
    com: np.ndarray
    inertia: np.ndarray  # about the COM

    def scaled(self, factor: float) -> "MassProperties":
        return MassProperties(self.mass * factor, self.com.copy(), self.inertia * factor)

    def transformed(self, rotation, translation) -> "MassProperties":
        r = np.asarray(rotation, float)
        return MassProperties(self.mass, r @ self.com + np.asarray(translation, float), r @ self.inertia @ r.T)


def combine(parts) -> MassProperties:
    parts = list(parts)
    mass = sum(p.mass for p in parts)
    if mass <= 0:
        return MassProperties(0.0, np.zeros(3), np.zeros((3, 3)))
    com = sum(p.mass * p.com for p in parts) / mass
    inertia = np.zeros((3, 3))
    for p in parts:
        d = p.com - com
        inertia += p.inertia + p.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return MassProperties(mass, com, inertia)


def _axial(mass, i_axis, i_perp, axis, com_axial=0.0) -> MassProperties:
    k = _AXES[axis]
    diag = np.full(3, i_perp)
    diag[k] = i_axis
    com = np.zeros(3)
    com[k] = com_axial
    return MassProperties(mass, com, np.diag(diag))


def solid_box(half_extents) -> MassProperties:
    a, b, c = 2.0 * np.abs(np.asarray(half_extents, float))
    m = a * b * c
    return MassProperties(m, np.zeros(3), np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 12.0)


def solid_ellipsoid(radii) -> MassProperties:
    a, b, c = np.abs(np.asarray(radii, float))
    m = 4.0 / 3.0 * np.pi * a * b * c
    return MassProperties(m, np.zeros(3), np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 5.0)


def solid_sphere(radius) -> MassProperties:
    return solid_ellipsoid([radius] * 3)


def solid_cylinder(radius, height, axis="Z") -> MassProperties:
    m = np.pi * radius * radius * height
    return _axial(m, m * radius * radius / 2.0, m * (3 * radius * radius + height * height) / 12.0, axis)


def solid_capsule(radius, height, axis="Z") -> MassProperties:
    """Cylinder of length `height` with two hemispherical caps (UsdGeom Capsule)."""
    r, h = radius, height
    mc, ms = np.pi * r * r * h, 4.0 / 3.0 * np.pi * r ** 3
    i_axis = mc * r * r / 2.0 + ms * 2.0 * r * r / 5.0
    i_perp = mc * (3 * r * r + h * h) / 12.0 + ms * (2.0 * r * r / 5.0 + h * h / 4.0 + 3.0 * h * r / 8.0)
    return _axial(mc + ms, i_axis, i_perp, axis)


def solid_cone(radius, height, axis="Z") -> MassProperties:
    """UsdGeom Cone: base of `radius` at -height/2, apex at +height/2."""
    m = np.pi * radius * radius * height / 3.0
    return _axial(m, 0.3 * m * radius * radius, m * 3.0 / 80.0 * (4 * radius * radius + height * height), axis,
                  com_axial=-height / 4.0)


def closed_triangle_mesh(points, triangles) -> MassProperties:
    """Divergence theorem over signed tetrahedra from the origin; winding may be inward or outward."""
    p = np.asarray(points, float)
    t = np.asarray(triangles, np.int64).reshape(-1, 3)
    a, b, c = p[t[:, 0]], p[t[:, 1]], p[t[:, 2]]
    vol6 = np.einsum("ij,ij->i", a, np.cross(b, c))
    volume = vol6.sum() / 6.0
    if abs(volume) < 1e-300:
        raise ValueError("mesh encloses no volume")
    sign = np.sign(volume)
    com = (vol6[:, None] * (a + b + c)).sum(axis=0) / 24.0 / volume
    # second moments of each tetrahedron (origin, a, b, c) integrated exactly
    s = a + b + c
    moments = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            moments[i, j] = (vol6 * (a[:, i] * a[:, j] + b[:, i] * b[:, j] + c[:, i] * c[:, j]
                                     + s[:, i] * s[:, j])).sum() / 120.0
    moments *= sign
    volume *= sign
    inertia_origin = np.trace(moments) * np.eye(3) - moments
    d = com
    inertia = inertia_origin - volume * (d @ d * np.eye(3) - np.outer(d, d))
    return MassProperties(volume, com, inertia)


def triangulate(face_vertex_counts, face_vertex_indices) -> np.ndarray:
    counts = np.asarray(face_vertex_counts, np.int64)
    indices = np.asarray(face_vertex_indices, np.int64)
    tris = []
    start = 0
    for n in counts:
        face = indices[start:start + n]
        tris.extend((face[0], face[k], face[k + 1]) for k in range(1, n - 1))
        start += n
    return np.array(tris, np.int64).reshape(-1, 3)


def _is_closed(triangles: np.ndarray) -> bool:
    edges = np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    return bool(len(counts)) and bool(np.all(counts == 2))


def convex_hull(points) -> tuple[np.ndarray, np.ndarray]:
    """Quickhull with conflict lists; returns (hull points, outward triangles)."""
    p = np.unique(np.asarray(points, float), axis=0)
    if len(p) < 4:
        raise ValueError("convex hull needs at least four distinct points")
    eps = 1e-12 * max(np.abs(p).max(), 1e-300)
    i0 = int(np.argmin(p[:, 0]))
    i1 = int(np.argmax(np.linalg.norm(p - p[i0], axis=1)))
    i2 = int(np.argmax(np.linalg.norm(np.cross(p - p[i0], p[i1] - p[i0]), axis=1)))
    side = (p - p[i0]) @ np.cross(p[i1] - p[i0], p[i2] - p[i0])
    i3 = int(np.argmax(np.abs(side)))
    if abs(side[i3]) <= eps * np.linalg.norm(p[i1] - p[i0]) * np.abs(p).max():
        raise ValueError("points are coplanar: no volume")
    if side[i3] > 0:
        i1, i2 = i2, i1
    faces: dict[int, tuple] = {}  # id -> (a, b, c, unit normal, offset, outside point indices)
    edge_face: dict[tuple[int, int], int] = {}
    next_id = [0]

    def add_face(a, b, c, candidates):
        n = np.cross(p[b] - p[a], p[c] - p[a])
        n /= np.linalg.norm(n)
        d = p[candidates] @ n - n @ p[a]
        outside = candidates[d > eps]
        fid = next_id[0]
        next_id[0] += 1
        faces[fid] = (a, b, c, n, n @ p[a], outside)
        for e in ((a, b), (b, c), (c, a)):
            edge_face[e] = fid
        return fid, outside

    def assign(new_ids, pts):
        """Give each point to the first new face it lies outside of."""
        if not len(pts):
            return
        normals = np.array([faces[f][3] for f in new_ids])
        offsets = np.array([faces[f][4] for f in new_ids])
        dist = p[pts] @ normals.T - offsets
        owner = np.argmax(dist > eps, axis=1)
        outside = dist[np.arange(len(pts)), owner] > eps
        for k, f in enumerate(new_ids):
            a, b, c, n, off, _ = faces[f]
            faces[f] = (a, b, c, n, off, pts[outside & (owner == k)])

    everyone = np.arange(len(p))
    ids = [add_face(*tri, np.empty(0, np.int64))[0] for tri in
           ((i0, i1, i2), (i0, i3, i1), (i1, i3, i2), (i2, i3, i0))]
    assign(ids, everyone[~np.isin(everyone, [i0, i1, i2, i3])])
    stack = [f for f in ids if len(faces[f][5])]
    while stack:
        f = stack.pop()
        if f not in faces or not len(faces[f][5]):
            continue
        a, b, c, n, off, outside = faces[f]
        eye = int(outside[np.argmax(p[outside] @ n - off)])
        visible, todo = {f}, [f]
        while todo:  # flood the faces the eye point sees
            g = todo.pop()
            ga, gb, gc = faces[g][:3]
            for e in ((gb, ga), (gc, gb), (ga, gc)):
                h = edge_face.get(e)
                if h is not None and h not in visible and p[eye] @ faces[h][3] - faces[h][4] > eps:
                    visible.add(h)
                    todo.append(h)
        horizon, orphans = [], []
        for g in visible:
            ga, gb, gc = faces[g][:3]
            for e in ((ga, gb), (gb, gc), (gc, ga)):
                if edge_face.get((e[1], e[0])) not in visible:
                    horizon.append(e)
            orphans.append(faces[g][5])
        for g in visible:
            ga, gb, gc = faces[g][:3]
            for e in ((ga, gb), (gb, gc), (gc, ga)):
                if edge_face.get(e) == g:
                    del edge_face[e]
            del faces[g]
        pts = np.concatenate(orphans)
        pts = pts[pts != eye]
        new_ids = [add_face(e[0], e[1], eye, np.empty(0, np.int64))[0] for e in horizon]
        assign(new_ids, pts)
        stack.extend(g for g in new_ids if len(faces[g][5]))
    tris = np.array([v[:3] for v in faces.values()], np.int64)
    used = np.unique(tris)
    remap = -np.ones(len(p), np.int64)
    remap[used] = np.arange(len(used))
    return p[used], remap[tris]


def _mesh_properties(prim: Usd.Prim, points: np.ndarray, time) -> MassProperties:
    mesh = UsdGeom.Mesh(prim)
    approximation = "none"
    if prim.HasAPI(UsdPhysics.MeshCollisionAPI):
        approximation = str(UsdPhysics.MeshCollisionAPI(prim).GetApproximationAttr().Get(time) or "none")
    if approximation == "boundingCube":
        lo, hi = points.min(axis=0), points.max(axis=0)
        return solid_box((hi - lo) / 2).transformed(np.eye(3), (hi + lo) / 2)
    if approximation == "boundingSphere":
        centre = (points.min(axis=0) + points.max(axis=0)) / 2
        return solid_sphere(np.linalg.norm(points - centre, axis=1).max()).transformed(np.eye(3), centre)
    if approximation == "none":
        tris = triangulate(mesh.GetFaceVertexCountsAttr().Get(time) or [],
                           mesh.GetFaceVertexIndicesAttr().Get(time) or [])
        if len(tris) and _is_closed(tris):
            return closed_triangle_mesh(points, tris)
    return closed_triangle_mesh(*convex_hull(points))


def collider_mass_properties(prim: Usd.Prim, body_world_matrix, meters_per_unit: float,
                             time=Usd.TimeCode.Default()) -> MassProperties:
    """Unit-density mass properties of a collider, in the body frame (scale removed), in metres."""
    path = prim.GetPath()
    body_rot, body_pos, _ = decompose(body_world_matrix)
    rel = np.linalg.inv(homogeneous(body_rot, body_pos)) @ usd_to_column(UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(time))
    rot, trans, scale = decompose(rel.T)
    scale = np.abs(scale)

    def attr(name, default):
        value = prim.GetAttribute(name).Get(time)
        return default if value is None else value

    if prim.IsA(UsdGeom.Mesh):
        pts = np.asarray(UsdGeom.Mesh(prim).GetPointsAttr().Get(time) or [], float).reshape(-1, 3)
        if not len(pts):
            raise ValueError(f"{path}: mesh collider has no points")
        local = _mesh_properties(prim, pts * scale, time)
    elif prim.IsA(UsdGeom.Cube):
        local = solid_box(np.full(3, attr("size", 2.0) / 2.0) * scale)
    elif prim.IsA(UsdGeom.Sphere):
        local = solid_ellipsoid(np.full(3, attr("radius", 1.0)) * scale)
    elif prim.IsA(UsdGeom.Capsule) or prim.IsA(UsdGeom.Cylinder) or prim.IsA(UsdGeom.Cone):
        axis = str(attr("axis", "Z"))
        k = _AXES[axis]
        radius = attr("radius", None)
        if radius is None:  # Capsule_1 / Cylinder_1 spell it radiusTop / radiusBottom
            top, bottom = attr("radiusTop", 0.5), attr("radiusBottom", 0.5)
            if abs(top - bottom) > 1e-12 * max(abs(top), 1.0):
                raise ValueError(f"{path}: tapered {prim.GetTypeName()} is not supported for mass")
            radius = top
        radius *= max(scale[j] for j in range(3) if j != k)
        height = attr("height", 2.0 if not prim.IsA(UsdGeom.Capsule) else 1.0) * scale[k]
        make = solid_capsule if prim.IsA(UsdGeom.Capsule) else solid_cylinder if prim.IsA(UsdGeom.Cylinder) \
            else solid_cone
        local = make(radius, height, axis)
    else:
        raise ValueError(f"{path}: {prim.GetTypeName() or 'untyped prim'} colliders have no volume to take mass from")
    if not np.isfinite(local.mass) or not np.all(np.isfinite(local.inertia)):
        raise ValueError(f"{path}: collider geometry contains NaN or infinity")
    mpu = meters_per_unit
    si = MassProperties(local.mass * mpu ** 3, local.com * mpu, local.inertia * mpu ** 5)
    return si.transformed(rot, trans * mpu)
