"""Contacts of convex shapes in general: convex hulls, cylinders and cones (PhysX's exact convex-core shapes)
against each other and against spheres, capsules and boxes, cylinders and cones on planes, and every
moving shape on static triangle meshes (mesh_pair).

GJK finds the closest points of the two shapes' cores (a sphere's centre, a capsule's segment, the whole
shape otherwise; the radius is added afterwards), EPA the penetration depth and normal where the cores
overlap. The manifold comes from the two supporting features along that normal (a face, an edge or a point
of each side: hull faces as imported, box faces, cylinder and cone caps as polygons that start at the exact
support point): the other feature clipped against the side planes of the reference face (the one facing
the normal more squarely), every clipped point's separation measured along the normal (never below the
cores' separation: along that normal nothing overlaps deeper), those within the margin kept, and the
closest (deepest) points themselves always (a clipped face misses them where the contact is at its edge);
the caller keeps four (collide.keep_four). Every buffer is the caller's (no allocation).

A shape is passed as (kind, par, rot, pos, hull, f0, f1): its type and parameters (layout SP_*), world
pose, hull vertices in its frame (convex only) and its faces f0:f1 in the model's face tables
(face_start: each face's vertices in face_vertex, counter-clockwise about the outward normal, as indices
into the shape's hull).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..layout import (
    CG_SEPARATION,
    DISC_POINTS,
    SHAPE_BOX,
    SHAPE_CAPSULE,
    SHAPE_CONE,
    SHAPE_CYLINDER,
    SHAPE_SPHERE,
    SP_BOUND,
    SP_SIZE0,
    SP_SIZE1,
    SP_SIZE2,
)
from .spatial import rotated

GJK_ITERATIONS = 64
RELATIVE_TOLERANCE = 1e-9  # of the two shapes' size: GJK's and EPA's convergence, degenerate simplices
DISC_COS, DISC_SIN = math.cos(2.0 * math.pi / DISC_POINTS), math.sin(2.0 * math.pi / DISC_POINTS)
CAP_ALIGNMENT = 0.7  # |axis . d| above which a capsule's supporting feature is its end point, not its segment
# PhysX's contact faces of cylinders and cones against planes (GuConvexSupport contactFace): the cap when the
# axis is within ~8 deg of the direction (cos 8 deg), the side when within ~8 deg of across it (cos 82 deg)
FACE_ALIGNED, FACE_ACROSS = 0.99, 0.14


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def core_radius(kind, par):
    """The radius around the shape's core (sphere: its centre; capsule: its segment; others: none)."""
    if kind == SHAPE_SPHERE or kind == SHAPE_CAPSULE:
        return par[SP_SIZE0]
    return 0.0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _local(rot, dx, dy, dz):
    return (
        rot[0, 0] * dx + rot[1, 0] * dy + rot[2, 0] * dz,
        rot[0, 1] * dx + rot[1, 1] * dy + rot[2, 1] * dz,
        rot[0, 2] * dx + rot[1, 2] * dy + rot[2, 2] * dz,
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _world(rot, pos, x, y, z):
    wx, wy, wz = rotated(rot, x, y, z)
    return pos[0] + wx, pos[1] + wy, pos[2] + wz


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _put(out, k, rot, pos, x, y, z):
    """out[k, :3] = the world point of local (x, y, z)."""
    out[k, 0], out[k, 1], out[k, 2] = _world(rot, pos, x, y, z)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _radial(ly, lz, radius):
    """The rim point's (y, z) toward (ly, lz) on a circle of `radius` about the local x axis (along the axis:
    any rim point supports; the one at +y)."""
    rr = math.sqrt(ly * ly + lz * lz)
    if rr == 0.0:
        return radius, 0.0
    return radius * ly / rr, radius * lz / rr


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def support(kind, par, rot, pos, hull, dx, dy, dz):
    """The core's farthest point along the world direction d (world x, y, z). Cylinders and cones have their
    axis along local x (a cone's apex at +x)."""
    lx, ly, lz = _local(rot, dx, dy, dz)
    x = y = z = 0.0
    if kind == SHAPE_CAPSULE:
        x = par[SP_SIZE1] if lx >= 0.0 else -par[SP_SIZE1]
    elif kind == SHAPE_BOX:
        x = par[SP_SIZE0] if lx >= 0.0 else -par[SP_SIZE0]
        y = par[SP_SIZE1] if ly >= 0.0 else -par[SP_SIZE1]
        z = par[SP_SIZE2] if lz >= 0.0 else -par[SP_SIZE2]
    elif kind == SHAPE_CYLINDER:
        x = par[SP_SIZE1] if lx >= 0.0 else -par[SP_SIZE1]
        y, z = _radial(ly, lz, par[SP_SIZE0])
    elif kind == SHAPE_CONE:
        h = par[SP_SIZE1]
        y, z = _radial(ly, lz, par[SP_SIZE0])
        if h * lx >= -h * lx + y * ly + z * lz:
            x, y, z = h, 0.0, 0.0
        else:
            x = -h
    elif kind != SHAPE_SPHERE:
        vertex, best = 0, -np.inf
        for i in range(hull.shape[0]):
            d = hull[i, 0] * lx + hull[i, 1] * ly + hull[i, 2] * lz
            if d > best:
                best, vertex = d, i
        x, y, z = hull[vertex, 0], hull[vertex, 1], hull[vertex, 2]
    return _world(rot, pos, x, y, z)


# ---- GJK: simplex rows of `pts` are [w = a - b, a, b]; lam their barycentric weights ----------------------


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _triangle(pts, i, j, k):
    """Weights of rows i, j, k for the triangle's point closest to the origin (Ericson's regions)."""
    ax, ay, az = pts[i, 0], pts[i, 1], pts[i, 2]
    abx, aby, abz = pts[j, 0] - ax, pts[j, 1] - ay, pts[j, 2] - az
    acx, acy, acz = pts[k, 0] - ax, pts[k, 1] - ay, pts[k, 2] - az
    d1 = -(abx * ax + aby * ay + abz * az)
    d2 = -(acx * ax + acy * ay + acz * az)
    if d1 <= 0.0 and d2 <= 0.0:
        return 1.0, 0.0, 0.0
    bx, by, bz = pts[j, 0], pts[j, 1], pts[j, 2]
    d3 = -(abx * bx + aby * by + abz * bz)
    d4 = -(acx * bx + acy * by + acz * bz)
    if d3 >= 0.0 and d4 <= d3:
        return 0.0, 1.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return 1.0 - v, v, 0.0
    cx, cy, cz = pts[k, 0], pts[k, 1], pts[k, 2]
    d5 = -(abx * cx + aby * cy + abz * cz)
    d6 = -(acx * cx + acy * cy + acz * cz)
    if d6 >= 0.0 and d5 <= d6:
        return 0.0, 0.0, 1.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return 1.0 - w, 0.0, w
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 0.0, 1.0 - w, w
    total = va + vb + vc
    if total <= 0.0:  # degenerate (collinear) triangle: its best edge
        return 1.0, 0.0, 0.0
    v, w = vb / total, vc / total
    return 1.0 - v - w, v, w


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _weighted_norm2(pts, lam, count):
    s = 0.0
    for a in range(3):
        c = 0.0
        for i in range(count):
            c += lam[i] * pts[i, a]
        s += c * c
    return s


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _origin_beyond(pts, i, j, k, o):
    """True when the origin lies on the other side of face (i, j, k) from row o (or the face is flat)."""
    ux, uy, uz = pts[j, 0] - pts[i, 0], pts[j, 1] - pts[i, 1], pts[j, 2] - pts[i, 2]
    vx, vy, vz = pts[k, 0] - pts[i, 0], pts[k, 1] - pts[i, 1], pts[k, 2] - pts[i, 2]
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    side_o = nx * (pts[o, 0] - pts[i, 0]) + ny * (pts[o, 1] - pts[i, 1]) + nz * (pts[o, 2] - pts[i, 2])
    side_0 = -(nx * pts[i, 0] + ny * pts[i, 1] + nz * pts[i, 2])
    return side_o * side_0 <= 0.0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _reduce(pts, lam, count):
    """The simplex's sub-simplex nearest the origin: weights into lam, rows compacted; returns its size
    (4: the origin is inside the tetrahedron)."""
    if count == 1:
        lam[0] = 1.0
        return 1
    if count == 2:
        ex, ey, ez = pts[1, 0] - pts[0, 0], pts[1, 1] - pts[0, 1], pts[1, 2] - pts[0, 2]
        ee = ex * ex + ey * ey + ez * ez
        t = -(ex * pts[0, 0] + ey * pts[0, 1] + ez * pts[0, 2]) / ee if ee > 0.0 else 0.0
        lam[0], lam[1] = 1.0 - t, t
        if t <= 0.0:
            lam[0], lam[1] = 1.0, 0.0
        elif t >= 1.0:
            lam[0], lam[1] = 0.0, 1.0
    elif count == 3:
        lam[0], lam[1], lam[2] = _triangle(pts, np.int64(0), np.int64(1), np.int64(2))
    else:
        best = np.inf
        inside = True
        for f in range(4):  # face f leaves out row f
            i, j, k = (f + 1) % 4, (f + 2) % 4, (f + 3) % 4
            if not _origin_beyond(pts, i, j, k, f):
                continue
            inside = False
            li, lj, lk = _triangle(pts, i, j, k)
            d = 0.0
            for a in range(3):
                c = li * pts[i, a] + lj * pts[j, a] + lk * pts[k, a]
                d += c * c
            if d < best:
                best = d
                lam[f], lam[i], lam[j], lam[k] = 0.0, li, lj, lk
        if inside:
            for i in range(4):
                lam[i] = 0.25
            return 4
    n = 0
    for i in range(count):
        if lam[i] > 0.0:
            if n != i:
                for c in range(9):
                    pts[n, c] = pts[i, c]
                lam[n] = lam[i]
            n += 1
    return n


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def gjk(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, lam, tol):
    """Closest points of the two cores: returns (simplex size, squared distance). Size 4 or a squared
    distance below tol^2: the cores overlap (pts holds the simplex for EPA); else the weights lam over
    pts[:size] give the closest points (rows' a and b)."""
    vx, vy, vz = pos_a[0] - pos_b[0], pos_a[1] - pos_b[1], pos_a[2] - pos_b[2]
    if vx * vx + vy * vy + vz * vz == 0.0:
        vx = 1.0
    count = np.int64(0)
    vv = np.inf
    for _ in range(GJK_ITERATIONS):
        _add_support(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, count, -vx, -vy, -vz)
        if count > 0:
            vw = vx * pts[count, 0] + vy * pts[count, 1] + vz * pts[count, 2]
            if vv - vw <= RELATIVE_TOLERANCE * vv:  # no nearer point: converged
                break
            duplicate = False
            for i in range(count):
                if (
                    pts[i, 0] == pts[count, 0] and pts[i, 1] == pts[count, 1] and pts[i, 2] == pts[count, 2]
                ):  # fmt: skip
                    duplicate = True
            if duplicate:
                break
        count = _reduce(pts, lam, count + 1)
        new = _weighted_norm2(pts, lam, count)
        if count == 4 or new <= tol * tol:
            return count, new
        if new >= vv:  # no progress (rounding): keep the last simplex
            break
        vv = new
        vx = vy = vz = 0.0
        for i in range(count):
            vx += lam[i] * pts[i, 0]
            vy += lam[i] * pts[i, 1]
            vz += lam[i] * pts[i, 2]
    return count, _weighted_norm2(pts, lam, count)


# ---- EPA: the overlapping cores' penetration -----------------------------------------------------------


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _add_support(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, k, dx, dy, dz):
    """Row k of pts = [a - b, a, b]: A's support along d, B's along -d."""
    pts[k, 3], pts[k, 4], pts[k, 5] = support(ka, par_a, rot_a, pos_a, hull_a, dx, dy, dz)
    pts[k, 6], pts[k, 7], pts[k, 8] = support(kb, par_b, rot_b, pos_b, hull_b, -dx, -dy, -dz)
    for a in range(3):
        pts[k, a] = pts[k, 3 + a] - pts[k, 6 + a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _face(pts, face, plane, f, i, j, k):
    """Face f = (i, j, k), its unit normal and distance from the origin into plane (normal zero: flat)."""
    face[f, 0], face[f, 1], face[f, 2], face[f, 3] = i, j, k, 1
    ux, uy, uz = pts[j, 0] - pts[i, 0], pts[j, 1] - pts[i, 1], pts[j, 2] - pts[i, 2]
    vx, vy, vz = pts[k, 0] - pts[i, 0], pts[k, 1] - pts[i, 1], pts[k, 2] - pts[i, 2]
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    norm = math.sqrt(nx * nx + ny * ny + nz * nz)
    if norm == 0.0:
        plane[f, 0] = plane[f, 1] = plane[f, 2] = 0.0
        plane[f, 3] = np.inf
        return
    plane[f, 0], plane[f, 1], plane[f, 2] = nx / norm, ny / norm, nz / norm
    plane[f, 3] = (nx * pts[i, 0] + ny * pts[i, 1] + nz * pts[i, 2]) / norm


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _tetrahedron(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, count, tol):
    """Grow GJK's final simplex to a tetrahedron around the origin by supports in new directions; False
    when the Minkowski difference is flat."""
    axes = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    if count == 1:
        for d in range(6):
            s = 1.0 if d < 3 else -1.0
            e = axes[d % 3]
            _add_support(
                ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, np.int64(1), s * e[0],
                s * e[1], s * e[2],
            )  # fmt: skip
            dx, dy, dz = pts[1, 0] - pts[0, 0], pts[1, 1] - pts[0, 1], pts[1, 2] - pts[0, 2]
            if dx * dx + dy * dy + dz * dz > tol * tol:
                count = 2
                break
        if count == 1:
            return False
    if count == 2:
        ex, ey, ez = pts[1, 0] - pts[0, 0], pts[1, 1] - pts[0, 1], pts[1, 2] - pts[0, 2]
        a = 0 if abs(ex) <= abs(ey) and abs(ex) <= abs(ez) else (1 if abs(ey) <= abs(ez) else 2)
        px, py, pz = axes[a]
        ux, uy, uz = ey * pz - ez * py, ez * px - ex * pz, ex * py - ey * px  # perpendicular to the edge
        vx, vy, vz = ey * uz - ez * uy, ez * ux - ex * uz, ex * uy - ey * ux
        found = False
        for step in range(6):
            c, s = math.cos(step * math.pi / 3), math.sin(step * math.pi / 3)
            dx, dy, dz = c * ux + s * vx, c * uy + s * vy, c * uz + s * vz
            _add_support(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, np.int64(2), dx, dy, dz)
            fx, fy, fz = pts[2, 0] - pts[0, 0], pts[2, 1] - pts[0, 1], pts[2, 2] - pts[0, 2]
            cx, cy, cz = ey * fz - ez * fy, ez * fx - ex * fz, ex * fy - ey * fx
            if cx * cx + cy * cy + cz * cz > tol * tol * (ex * ex + ey * ey + ez * ez):
                found = True
                break
        if not found:
            return False
        count = 3
    if count == 3:
        ux, uy, uz = pts[1, 0] - pts[0, 0], pts[1, 1] - pts[0, 1], pts[1, 2] - pts[0, 2]
        vx, vy, vz = pts[2, 0] - pts[0, 0], pts[2, 1] - pts[0, 1], pts[2, 2] - pts[0, 2]
        nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        norm = math.sqrt(nx * nx + ny * ny + nz * nz)
        for s in (1.0, -1.0):
            _add_support(
                ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, np.int64(3), s * nx, s * ny,
                s * nz,
            )  # fmt: skip
            h = nx * (pts[3, 0] - pts[0, 0]) + ny * (pts[3, 1] - pts[0, 1]) + nz * (pts[3, 2] - pts[0, 2])
            if abs(h) > tol * norm:
                return True
        return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def epa(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, count, face, plane, edge, tol):
    """Penetration of overlapping cores, grown from GJK's simplex (pts[:count]; face, plane, edge: room for
    the polytope's faces, their planes and a round's removed edges): returns (depth, face), the Minkowski
    difference's face nearest the origin, its outward unit normal in plane[face, :3] (A moved by -depth
    along it separates the cores). Face -1: the difference is flat (no depth)."""
    if not _tetrahedron(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, count, tol):
        return 0.0, -1
    n_faces = np.int64(4)
    for f, (i, j, k, o) in enumerate(((0, 1, 2, 3), (0, 3, 1, 2), (0, 2, 3, 1), (1, 3, 2, 0))):
        _face(pts, face, plane, f, i, j, k)
        if plane[f, 0] * (pts[o, 0] - pts[i, 0]) + plane[f, 1] * (pts[o, 1] - pts[i, 1]) + plane[f, 2] * (
            pts[o, 2] - pts[i, 2]
        ) > 0.0:  # fmt: skip
            _face(pts, face, plane, f, i, k, j)
    n_points = np.int64(4)
    best = 0
    for _ in range(pts.shape[0]):
        best, depth = -1, np.inf
        for f in range(n_faces):
            if face[f, 3] == 1 and plane[f, 3] < depth:
                best, depth = f, plane[f, 3]
        if best < 0:
            return 0.0, -1
        if n_points == pts.shape[0]:
            break
        nx, ny, nz = plane[best, 0], plane[best, 1], plane[best, 2]
        _add_support(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, n_points, nx, ny, nz)
        if nx * pts[n_points, 0] + ny * pts[n_points, 1] + nz * pts[n_points, 2] - depth <= tol:
            break
        n_edges = 0
        for f in range(n_faces):  # faces the new point sees go; their edges are collected
            if face[f, 3] != 1:
                continue
            i = face[f, 0]
            seen = plane[f, 0] * (pts[n_points, 0] - pts[i, 0]) + plane[f, 1] * (pts[n_points, 1] - pts[i, 1])
            seen += plane[f, 2] * (pts[n_points, 2] - pts[i, 2])
            if seen > tol or plane[f, 3] == np.inf:
                face[f, 3] = 0
                for e in range(3):
                    if n_edges < edge.shape[0]:
                        edge[n_edges, 0], edge[n_edges, 1] = face[f, e], face[f, (e + 1) % 3]
                        n_edges += 1
        full = False
        for e in range(n_edges):  # horizon edges: their reverse was not removed
            twin = False
            for g in range(n_edges):
                if edge[g, 0] == edge[e, 1] and edge[g, 1] == edge[e, 0]:
                    twin = True
                    break
            if twin:
                continue
            slot = -1
            for f in range(n_faces):
                if face[f, 3] == 0:
                    slot = f
                    break
            if slot < 0:
                if n_faces == face.shape[0]:
                    full = True
                    break
                slot = n_faces
                n_faces += 1
            _face(pts, face, plane, slot, edge[e, 0], edge[e, 1], n_points)
            face[slot, 3] = 2  # new this round: not a slot for another new face
        for f in range(n_faces):
            if face[f, 3] == 2:
                face[f, 3] = 1
        n_points += 1
        if full:
            break
    return plane[best, 3], best


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _face_weights(pts, face, f, px, py, pz):
    """Barycentric weights of point p in triangle face f."""
    i, j, k = face[f, 0], face[f, 1], face[f, 2]
    ux, uy, uz = pts[j, 0] - pts[i, 0], pts[j, 1] - pts[i, 1], pts[j, 2] - pts[i, 2]
    vx, vy, vz = pts[k, 0] - pts[i, 0], pts[k, 1] - pts[i, 1], pts[k, 2] - pts[i, 2]
    wx, wy, wz = px - pts[i, 0], py - pts[i, 1], pz - pts[i, 2]
    d00 = ux * ux + uy * uy + uz * uz
    d01 = ux * vx + uy * vy + uz * vz
    d11 = vx * vx + vy * vy + vz * vz
    d20 = wx * ux + wy * uy + wz * uz
    d21 = wx * vx + wy * vy + wz * vz
    den = d00 * d11 - d01 * d01
    if den <= 0.0:
        return 1.0, 0.0, 0.0
    v = (d11 * d20 - d01 * d21) / den
    w = (d00 * d21 - d01 * d20) / den
    return 1.0 - v - w, v, w


# ---- supporting features and clipping --------------------------------------------------------------------


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _disc(rot, pos, x, radius, ly, lz, outward, poly):
    """DISC_POINTS rim points of the cap at local x, the first at the exact support toward (ly, lz),
    counter-clockwise about the cap's outward normal (sign `outward` along local x)."""
    y, z = _radial(ly, lz, radius)
    c, s = DISC_COS, outward * DISC_SIN  # each point the last turned by 2 pi / DISC_POINTS
    for i in range(DISC_POINTS):
        _put(poly, i, rot, pos, x, y, z)
        y, z = c * y - s * z, s * y + c * z
    return DISC_POINTS


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def feature(kind, par, rot, pos, hull, f0, f1, face_start, face_vertex, dx, dy, dz, poly):
    """The core's supporting feature along the world direction d into poly: returns its point count (1: a
    point, 2: an edge, 3+: a face, counter-clockwise about its outward normal)."""
    lx, ly, lz = _local(rot, dx, dy, dz)
    norm = math.sqrt(lx * lx + ly * ly + lz * lz)
    if kind == SHAPE_SPHERE:
        _put(poly, np.int64(0), rot, pos, 0.0, 0.0, 0.0)
        return 1
    if kind == SHAPE_CAPSULE:
        h = par[SP_SIZE1]
        if abs(lx) > CAP_ALIGNMENT * norm:
            _put(poly, np.int64(0), rot, pos, h if lx > 0.0 else -h, 0.0, 0.0)
            return 1
        _put(poly, np.int64(0), rot, pos, h, 0.0, 0.0)  # its +x end first, as PhysX's (colliders' capsule frame)
        _put(poly, np.int64(1), rot, pos, -h, 0.0, 0.0)
        return 2
    if kind == SHAPE_BOX:
        a = 0
        if abs(ly) > abs(lx) and abs(ly) >= abs(lz):
            a = 1
        elif abs(lz) > abs(lx) and abs(lz) > abs(ly):
            a = 2
        s = 1.0 if (lx, ly, lz)[a] >= 0.0 else -1.0
        b, c = (a + 1) % 3, (a + 2) % 3
        corners = ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0))
        for i in range(4):
            u, v = corners[i]  # counter-clockwise about the face's outward normal s e_a (e_b x e_c = e_a)
            ca, cb, cc = s * par[SP_SIZE0 + a], u * s * par[SP_SIZE0 + b], v * par[SP_SIZE0 + c]
            if a == 0:
                _put(poly, i, rot, pos, ca, cb, cc)
            elif a == 1:
                _put(poly, i, rot, pos, cc, ca, cb)
            else:
                _put(poly, i, rot, pos, cb, cc, ca)
        return 4
    if kind == SHAPE_CYLINDER:
        h, r = par[SP_SIZE1], par[SP_SIZE0]
        rr = math.sqrt(ly * ly + lz * lz)
        if abs(lx) >= rr:
            s = 1.0 if lx >= 0.0 else -1.0
            return _disc(rot, pos, s * h, r, ly, lz, s, poly)
        y, z = _radial(ly, lz, r)
        _put(poly, np.int64(0), rot, pos, -h, y, z)
        _put(poly, np.int64(1), rot, pos, h, y, z)
        return 2
    if kind == SHAPE_CONE:
        h, r = par[SP_SIZE1], par[SP_SIZE0]
        rr = math.sqrt(ly * ly + lz * lz)
        if -lx * math.sqrt(r * r + 4.0 * h * h) >= r * lx + 2.0 * h * rr:  # the base faces d more than the side
            return _disc(rot, pos, -h, r, ly, lz, -1.0, poly)
        y, z = _radial(ly, lz, r)
        _put(poly, np.int64(0), rot, pos, h, 0.0, 0.0)
        _put(poly, np.int64(1), rot, pos, -h, y, z)
        return 2
    # convex hull: among the faces around the support vertex, the one facing d most squarely
    top, best = 0, -np.inf
    for i in range(hull.shape[0]):
        d = hull[i, 0] * lx + hull[i, 1] * ly + hull[i, 2] * lz
        if d > best:
            best, top = d, i
    chosen, facing = f0, -np.inf
    for f in range(f0, f1):
        has = False
        for e in range(face_start[f], face_start[f + 1]):
            if face_vertex[e] == top:
                has = True
        if not has:
            continue
        nx, ny, nz = _newell(hull, face_start, face_vertex, f)
        d = (nx * lx + ny * ly + nz * lz) / max(math.sqrt(nx * nx + ny * ny + nz * nz), 1e-300)
        if d > facing:
            chosen, facing = f, d
    m = np.int64(0)
    for e in range(face_start[chosen], face_start[chosen + 1]):
        v = face_vertex[e]
        if m < poly.shape[0]:
            _put(poly, m, rot, pos, hull[v, 0], hull[v, 1], hull[v, 2])
            m += 1
    return m


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _newell(points, face_start, face_vertex, f):
    """Normal (not unit) of hull face f by Newell's formula: along the outward normal when the face is
    counter-clockwise about it."""
    nx = ny = nz = 0.0
    lo, hi = face_start[f], face_start[f + 1]
    for e in range(lo, hi):
        i, j = face_vertex[e], face_vertex[e + 1 if e + 1 < hi else lo]
        nx += (points[i, 1] - points[j, 1]) * (points[i, 2] + points[j, 2])
        ny += (points[i, 2] - points[j, 2]) * (points[i, 0] + points[j, 0])
        nz += (points[i, 0] - points[j, 0]) * (points[i, 1] + points[j, 1])
    return nx, ny, nz


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _polygon_normal(poly, m):
    """Unit normal of the polygon poly[:m] by Newell's formula (counter-clockwise about it)."""
    nx = ny = nz = 0.0
    for i in range(m):
        j = (i + 1) % m
        nx += (poly[i, 1] - poly[j, 1]) * (poly[i, 2] + poly[j, 2])
        ny += (poly[i, 2] - poly[j, 2]) * (poly[i, 0] + poly[j, 0])
        nz += (poly[i, 0] - poly[j, 0]) * (poly[i, 1] + poly[j, 1])
    norm = math.sqrt(nx * nx + ny * ny + nz * nz)
    if norm == 0.0:
        return 0.0, 0.0, 0.0
    return nx / norm, ny / norm, nz / norm


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _shift(poly, m, s, nx, ny, nz):
    for i in range(m):
        poly[i, 0] += s * nx
        poly[i, 1] += s * ny
        poly[i, 2] += s * nz


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _side(ref, i, k, rx, ry, rz, x, y, z):
    """Signed distance (scaled) of x inside the side plane of the reference polygon's edge i."""
    j = (i + 1) % k
    ex, ey, ez = ref[j, 0] - ref[i, 0], ref[j, 1] - ref[i, 1], ref[j, 2] - ref[i, 2]
    sx, sy, sz = ry * ez - rz * ey, rz * ex - rx * ez, rx * ey - ry * ex  # inward: normal x edge
    return sx * (x - ref[i, 0]) + sy * (y - ref[i, 1]) + sz * (z - ref[i, 2])


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _clip(ref, k, rx, ry, rz, inc, m, work, spare):
    """The incident feature inc[:m] (an edge or a polygon) clipped to the prism over the reference polygon
    ref[:k] (normal r); the result is left in `work` (returned count). `spare`: room of work's size."""
    if m == 2:
        t0, t1 = 0.0, 1.0
        for i in range(k):
            d0 = _side(ref, i, k, rx, ry, rz, inc[0, 0], inc[0, 1], inc[0, 2])
            d1 = _side(ref, i, k, rx, ry, rz, inc[1, 0], inc[1, 1], inc[1, 2])
            if d0 < 0.0 and d1 < 0.0:
                return 0
            if d0 < 0.0:
                t0 = max(t0, d0 / (d0 - d1))
            elif d1 < 0.0:
                t1 = min(t1, d0 / (d0 - d1))
        if t0 > t1:
            return 0
        for c in range(3):
            a, b = inc[0, c], inc[1, c]
            work[0, c] = a + (b - a) * t0
            work[1, c] = a + (b - a) * t1
        return 2
    for i in range(m):
        for c in range(3):
            work[i, c] = inc[i, c]
    cur, other = work, spare
    for i in range(k):
        j = (i + 1) % k
        ex, ey, ez = ref[j, 0] - ref[i, 0], ref[j, 1] - ref[i, 1], ref[j, 2] - ref[i, 2]
        sx, sy, sz = ry * ez - rz * ey, rz * ex - rx * ez, rx * ey - ry * ex  # as _side's
        offset = sx * ref[i, 0] + sy * ref[i, 1] + sz * ref[i, 2]
        n = 0
        dq = sx * cur[0, 0] + sy * cur[0, 1] + sz * cur[0, 2] - offset
        for p in range(m):
            q = (p + 1) % m
            dp = dq
            dq = sx * cur[q, 0] + sy * cur[q, 1] + sz * cur[q, 2] - offset
            if dp >= 0.0 and n < other.shape[0]:
                for c in range(3):
                    other[n, c] = cur[p, c]
                n += 1
            if (dp >= 0.0) != (dq >= 0.0) and n < other.shape[0]:
                t = dp / (dp - dq)
                for c in range(3):
                    other[n, c] = cur[p, c] + (cur[q, c] - cur[p, c]) * t
                n += 1
        cur, other = other, cur
        m = n
        if m == 0:
            return 0
    if cur is not work:  # an odd number of clips: the result is in spare
        for p in range(m):
            for c in range(3):
                work[p, c] = cur[p, c]
    return m


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _candidate(out, k, qx, qy, qz, nx, ny, nz, sep):
    out[k, 0], out[k, 1], out[k, 2] = qx, qy, qz
    out[k, 3], out[k, 4], out[k, 5] = nx, ny, nz
    out[k, CG_SEPARATION] = sep
    return k + 1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _closest_cores(
    ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, lam, face, plane, edge, tol, witness
):
    """(normal from B to A, separation of the cores) and the closest (or deepest) core point of B into
    witness[:3]; GJK where the cores are apart, EPA where they overlap."""
    count, d2 = gjk(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, lam, tol)
    if count < 4 and d2 > tol * tol:
        dist = math.sqrt(d2)
        for c in range(3):
            wa = wb = 0.0
            for i in range(count):
                wa += lam[i] * pts[i, 3 + c]
                wb += lam[i] * pts[i, 6 + c]
            witness[c] = wb
            witness[3 + c] = (wa - wb) / dist
        return witness[3], witness[4], witness[5], dist
    depth, f = epa(ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, count, face, plane, edge, tol)
    if f < 0:  # flat difference: touching, along the centres' line
        dx, dy, dz = pos_a[0] - pos_b[0], pos_a[1] - pos_b[1], pos_a[2] - pos_b[2]
        norm = math.sqrt(dx * dx + dy * dy + dz * dz)
        if norm == 0.0:
            dx, dy, dz, norm = 0.0, 0.0, 1.0, 1.0
        for c in range(3):
            witness[c] = pts[0, 6 + c]
        return dx / norm, dy / norm, dz / norm, 0.0
    nx, ny, nz = plane[f, 0], plane[f, 1], plane[f, 2]
    li, lj, lk = _face_weights(pts, face, f, depth * nx, depth * ny, depth * nz)
    i, j, k = face[f, 0], face[f, 1], face[f, 2]
    for c in range(3):
        witness[c] = li * pts[i, 6 + c] + lj * pts[j, 6 + c] + lk * pts[k, 6 + c]
    return -nx, -ny, -nz, -depth


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def convex_pair(
    ka, par_a, rot_a, pos_a, hull_a, fa0, fa1, kb, par_b, rot_b, pos_b, hull_b, fb0, fb1, face_start, face_vertex,
    margin, pts, lam, face, plane, edge, poly, candidates,
):  # fmt: skip
    """Contact candidates of shapes A and B (see the module docstring) into candidates: points on the
    reference face (A's or B's; the closest points: on B), the normal from B to A, separations; returns their
    count (only those within margin; the caller keeps four). poly: (4, room, 3) feature and clipping
    buffers; pts, lam, face, plane, edge: GJK and EPA room."""
    ra, rb = core_radius(ka, par_a), core_radius(kb, par_b)
    tol = RELATIVE_TOLERANCE * (par_a[SP_BOUND] + par_b[SP_BOUND])
    witness = lam[4:10]  # (lam: room for GJK's four weights, then B's witness point and the normal)
    nx, ny, nz, core = _closest_cores(
        ka, par_a, rot_a, pos_a, hull_a, kb, par_b, rot_b, pos_b, hull_b, pts, lam, face, plane, edge, tol, witness
    )  # fmt: skip
    sep = core - ra - rb
    if sep > margin:
        return 0
    qx, qy, qz = witness[0] + rb * nx, witness[1] + rb * ny, witness[2] + rb * nz
    fa, fb = poly[0], poly[1]
    ma = feature(ka, par_a, rot_a, pos_a, hull_a, fa0, fa1, face_start, face_vertex, -nx, -ny, -nz, fa)
    mb = feature(kb, par_b, rot_b, pos_b, hull_b, fb0, fb1, face_start, face_vertex, nx, ny, nz, fb)
    _shift(fa, ma, -ra, nx, ny, nz)
    _shift(fb, mb, rb, nx, ny, nz)
    found = np.int64(0)
    if ma >= 2 and mb >= 2 and (ma >= 3 or mb >= 3):
        ax, ay, az = _polygon_normal(fa, ma) if ma >= 3 else (0.0, 0.0, 0.0)
        bx, by, bz = _polygon_normal(fb, mb) if mb >= 3 else (0.0, 0.0, 0.0)
        along_a, along_b = ax * nx + ay * ny + az * nz, bx * nx + by * ny + bz * nz
        if mb >= 3 and along_b >= -along_a and along_b > 0.1:  # B's face is the reference
            m = _clip(fb, mb, bx, by, bz, fa, ma, poly[2], poly[3])
            for p in range(m):
                x, y, z = poly[2, p, 0], poly[2, p, 1], poly[2, p, 2]
                s = max(((x - fb[0, 0]) * bx + (y - fb[0, 1]) * by + (z - fb[0, 2]) * bz) / along_b, sep)
                if s <= margin and found < candidates.shape[0] - 1:
                    found = _candidate(candidates, found, x - s * nx, y - s * ny, z - s * nz, nx, ny, nz, s)
        elif ma >= 3 and along_a < -0.1:  # A's face is the reference
            m = _clip(fa, ma, ax, ay, az, fb, mb, poly[2], poly[3])
            for p in range(m):
                x, y, z = poly[2, p, 0], poly[2, p, 1], poly[2, p, 2]
                s = max(-((x - fa[0, 0]) * ax + (y - fa[0, 1]) * ay + (z - fa[0, 2]) * az) / along_a, sep)
                if s <= margin and found < candidates.shape[0] - 1:
                    found = _candidate(candidates, found, x + s * nx, y + s * ny, z + s * nz, nx, ny, nz, s)
    elif ma == 2 and mb == 2:
        ex, ey, ez = fb[1, 0] - fb[0, 0], fb[1, 1] - fb[0, 1], fb[1, 2] - fb[0, 2]
        gx, gy, gz = fa[1, 0] - fa[0, 0], fa[1, 1] - fa[0, 1], fa[1, 2] - fa[0, 2]
        ee, gg = ex * ex + ey * ey + ez * ez, gx * gx + gy * gy + gz * gz
        cx, cy, cz = ey * gz - ez * gy, ez * gx - ex * gz, ex * gy - ey * gx
        if ee > 0.0 and cx * cx + cy * cy + cz * cz <= 1e-6 * ee * gg:  # parallel edges: their overlap
            for p in range(2):
                t = ((fa[p, 0] - fb[0, 0]) * ex + (fa[p, 1] - fb[0, 1]) * ey + (fa[p, 2] - fb[0, 2]) * ez) / ee
                t = min(max(t, 0.0), 1.0)
                bx, by, bz = fb[0, 0] + t * ex, fb[0, 1] + t * ey, fb[0, 2] + t * ez
                u = ((bx - fa[0, 0]) * gx + (by - fa[0, 1]) * gy + (bz - fa[0, 2]) * gz) / gg if gg > 0.0 else 0.0
                u = min(max(u, 0.0), 1.0)
                ax, ay, az = fa[0, 0] + u * gx, fa[0, 1] + u * gy, fa[0, 2] + u * gz
                s = max((ax - bx) * nx + (ay - by) * ny + (az - bz) * nz, sep)
                if s <= margin:
                    found = _candidate(candidates, found, bx, by, bz, nx, ny, nz, s)
    return _candidate(candidates, found, qx, qy, qz, nx, ny, nz, sep)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _plane_point(out, k, wx, wy, wz, pos_p, nx, ny, nz):
    """Row k of out: the world point w against the plane (normal n through pos_p), put halfway between the
    shape and the plane as PhysX puts it, with its separation; returns k + 1."""
    s = (wx - pos_p[0]) * nx + (wy - pos_p[1]) * ny + (wz - pos_p[2]) * nz
    return _candidate(out, k, wx - 0.5 * s * nx, wy - 0.5 * s * ny, wz - 0.5 * s * nz, nx, ny, nz, s)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _plane_local_point(out, k, rot, pos, x, y, z, pos_p, nx, ny, nz):
    """_plane_point of the shape's local point (x, y, z)."""
    wx, wy, wz = _world(rot, pos, x, y, z)
    return _plane_point(out, k, wx, wy, wz, pos_p, nx, ny, nz)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def round_plane(kind, par, rot, pos, hull, rot_p, pos_p, margin, out):
    """A cylinder or cone against a plane (its normal the plane's local x), as PhysX's contactPlaneConvexCore:
    nothing unless the shape's support point toward the plane is within margin; then the points of its
    contacting face, each halfway between the shape and the plane (its separation kept), however far: with
    the axis within 8 deg of the plane's normal, four rim points of the cap a quarter turn apart, the first
    at the support (a cone: its base only); lying within 8 deg of the plane, the side's two ends, the +axis
    end (a cone's apex) first; else the support point alone. Returns the count written into out."""
    nx, ny, nz = rot_p[0, 0], rot_p[1, 0], rot_p[2, 0]
    lx, ly, lz = _local(rot, -nx, -ny, -nz)  # toward the plane, in the shape's frame (a unit vector)
    h, r = par[SP_SIZE1], par[SP_SIZE0]
    y, z = _radial(ly, lz, r)
    wx, wy, wz = support(kind, par, rot, pos, hull, -nx, -ny, -nz)
    if (wx - pos_p[0]) * nx + (wy - pos_p[1]) * ny + (wz - pos_p[2]) * nz >= margin:
        return 0
    cap, side = False, False
    if kind == SHAPE_CYLINDER:
        cap = abs(lx) > FACE_ALIGNED and r > 0.0
        side = not cap and abs(lx) < FACE_ACROSS and h > 0.0
    else:
        cap = (lx < -FACE_ALIGNED or (lx > FACE_ALIGNED and h <= 0.0)) and r > 0.0
        if not cap and h > 0.0:
            sin_a = r / math.sqrt(4.0 * h * h + r * r)
            side = abs(lx * math.sqrt(1.0 - sin_a * sin_a) - math.sqrt(max(1.0 - lx * lx, 0.0)) * sin_a) < FACE_ACROSS
    if cap:
        x = h if lx >= 0.0 else -h
        if abs(z) <= 1e-7 * r:  # PhysX leaves the first at +y when the support is on the y axis
            y, z = r, 0.0
        k = _plane_local_point(out, np.int64(0), rot, pos, x, y, z, pos_p, nx, ny, nz)
        k = _plane_local_point(out, k, rot, pos, x, -z, y, pos_p, nx, ny, nz)
        k = _plane_local_point(out, k, rot, pos, x, -y, -z, pos_p, nx, ny, nz)
        return _plane_local_point(out, k, rot, pos, x, z, -y, pos_p, nx, ny, nz)
    if side:
        if kind == SHAPE_CYLINDER:
            k = _plane_local_point(out, np.int64(0), rot, pos, h, y, z, pos_p, nx, ny, nz)
        else:
            k = _plane_local_point(out, np.int64(0), rot, pos, h, 0.0, 0.0, pos_p, nx, ny, nz)
        return _plane_local_point(out, k, rot, pos, -h, y, z, pos_p, nx, ny, nz)
    return _plane_point(out, np.int64(0), wx, wy, wz, pos_p, nx, ny, nz)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _keep_deeper(candidates, found, x, y, z, nx, ny, nz, sep):
    """Adds a candidate; when the room is full, it takes the shallowest one's place if it is deeper."""
    if found < candidates.shape[0]:
        return _candidate(candidates, found, x, y, z, nx, ny, nz, sep)
    shallowest = np.int64(0)
    for k in range(1, found):
        if candidates[k, CG_SEPARATION] > candidates[shallowest, CG_SEPARATION]:
            shallowest = k
    if sep < candidates[shallowest, CG_SEPARATION]:
        _candidate(candidates, shallowest, x, y, z, nx, ny, nz, sep)
    return found


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _lowest_x(vertices, face_start, face_vertex, t):
    e = face_start[t]
    return min(vertices[face_vertex[e], 0], vertices[face_vertex[e + 1], 0], vertices[face_vertex[e + 2], 0])


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def mesh_pair(
    ka, par_a, rot_a, pos_a, hull_a, fa0, fa1, rot_m, pos_m, vertices, t0, t1, width, face_start, face_vertex, margin,
    poly, candidates,
):  # fmt: skip
    """Shape A against a static triangle mesh (its triangles t0:t1 in the face tables, sorted by their lowest
    x, the widest `width` along x; vertices in its frame). The triangles of the x slab around A's bounding
    sphere (a binary search finds the first) that come near the sphere each meet A as a two-sided patch of
    their plane, the normal toward A's centre: A's supporting feature along that normal clipped to the
    triangle (a point feature: kept when it lies over the triangle), each point's separation its distance
    from the plane. Flat neighbours so give one consistent normal (no catching on the edges between coplanar
    triangles); a ridge meets A with its faces' normals. Points deeper than A's size (A behind the patch)
    are left out. Returns the candidates' count (the deepest kept when they outnumber the room)."""
    ra = core_radius(ka, par_a)
    reach = par_a[SP_BOUND] + margin
    cx, cy, cz = _local(rot_m, pos_a[0] - pos_m[0], pos_a[1] - pos_m[1], pos_a[2] - pos_m[2])
    inc, tri = poly[0], poly[1]
    found = np.int64(0)
    lo, hi = t0, t1  # the triangles are sorted by their lowest x: the first that can reach A's sphere
    while lo < hi:
        mid = (lo + hi) // 2
        if _lowest_x(vertices, face_start, face_vertex, mid) < cx - reach - width:
            lo = mid + 1
        else:
            hi = mid
    for t in range(lo, t1):
        if _lowest_x(vertices, face_start, face_vertex, t) > cx + reach:
            break
        e = face_start[t]
        i0, i1, i2 = face_vertex[e], face_vertex[e + 1], face_vertex[e + 2]
        far = False
        for a, c in ((0, cx), (1, cy), (2, cz)):
            lo = min(vertices[i0, a], vertices[i1, a], vertices[i2, a])
            hi = max(vertices[i0, a], vertices[i1, a], vertices[i2, a])
            if c + reach < lo or c - reach > hi:
                far = True
        if far:
            continue
        ux, uy, uz = (
            vertices[i1, 0] - vertices[i0, 0],
            vertices[i1, 1] - vertices[i0, 1],
            vertices[i1, 2] - vertices[i0, 2],
        )
        vx, vy, vz = (
            vertices[i2, 0] - vertices[i0, 0],
            vertices[i2, 1] - vertices[i0, 1],
            vertices[i2, 2] - vertices[i0, 2],
        )
        lx, ly, lz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        norm = math.sqrt(lx * lx + ly * ly + lz * lz)
        if norm == 0.0:
            continue
        side = (lx * (cx - vertices[i0, 0]) + ly * (cy - vertices[i0, 1]) + lz * (cz - vertices[i0, 2])) / norm
        if abs(side) > reach:
            continue
        s = 1.0 if side >= 0.0 else -1.0  # toward A's centre; the triangle counter-clockwise about it
        nx, ny, nz = rotated(rot_m, s * lx / norm, s * ly / norm, s * lz / norm)
        _put(tri, np.int64(0), rot_m, pos_m, vertices[i0, 0], vertices[i0, 1], vertices[i0, 2])
        j1, j2 = (i1, i2) if s > 0.0 else (i2, i1)
        _put(tri, np.int64(1), rot_m, pos_m, vertices[j1, 0], vertices[j1, 1], vertices[j1, 2])
        _put(tri, np.int64(2), rot_m, pos_m, vertices[j2, 0], vertices[j2, 1], vertices[j2, 2])
        m = feature(ka, par_a, rot_a, pos_a, hull_a, fa0, fa1, face_start, face_vertex, -nx, -ny, -nz, inc)
        _shift(inc, m, -ra, nx, ny, nz)
        if m == 1:
            over = True
            for k in range(3):
                if _side(tri, k, np.int64(3), nx, ny, nz, inc[0, 0], inc[0, 1], inc[0, 2]) < 0.0:
                    over = False
            if not over:
                continue
            for c in range(3):
                poly[2, 0, c] = inc[0, c]
        else:
            m = _clip(tri, np.int64(3), nx, ny, nz, inc, m, poly[2], poly[3])
        for p in range(m):
            x, y, z = poly[2, p, 0], poly[2, p, 1], poly[2, p, 2]
            sep = (x - tri[0, 0]) * nx + (y - tri[0, 1]) * ny + (z - tri[0, 2]) * nz
            if -reach <= sep <= margin:
                found = _keep_deeper(candidates, found, x - sep * nx, y - sep * ny, z - sep * nz, nx, ny, nz, sep)
    return found
