"""Contact detection of one world at the step start: shape poses, broad phase, filtering and the manifolds
of every pair of shapes that can touch (PhysX generates contacts once per step, before the solver).

Broad phase: sort and sweep along world x (the order persists between steps, so insertion sort is near
linear), planes tested against every moving shape. A pair needs at least one side that moves, and passes
PhysX's filters in order: the same link never meets itself, links of one articulation only with self
collisions on and never parent with child, collision groups, then the model's excluded pairs
(FilteredPairsAPI, jointed bodies). Narrow phase: up to MANIFOLD_POINTS points per pair with one normal
(a mesh's: its triangles'), each point where PhysX puts it: a sphere's or capsule's against a plane, a
capsule, a hull or a mesh, and a capsule's against a box, on the sphere or capsule (A); the other pairs' on
B's surface (pairs with a cylinder or cone: on the reference face, A's or B's); the normal from B toward A,
a pair's sides ordered by shape type (sphere, capsule, box, cylinder, cone, convex hull, static triangle
mesh, plane: the lower type is A); points up to the pair's contact distance apart count (speculative
contacts). Box pairs are in
usdart.core.kernels.box_contacts, pairs with a cylinder, cone, hull or mesh (GJK, EPA and feature clipping)
in usdart.core.kernels.convex.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..layout import (
    CC_DROPPED,
    CC_POINTS,
    CG_NORMAL,
    CG_POINT,
    CG_SEPARATION,
    L_PARENT,
    L_TREE,
    S_GROUP,
    S_KINEMATIC,
    S_LINK,
    S_SELF_COLLIDE,
    S_TREE,
    S_TYPE,
    SHAPE_BOX,
    SHAPE_CAPSULE,
    SHAPE_CONE,
    SHAPE_CONVEX,
    SHAPE_CYLINDER,
    SHAPE_MESH,
    SHAPE_PLANE,
    SHAPE_SPHERE,
    SP_BOUND,
    SP_BOX_CENTRE,
    SP_BOX_HALF,
    SP_CONTACT_OFFSET,
    SP_SIZE0,
    SP_SIZE1,
    SP_SIZE2,
    SP_TRIANGLE_WIDTH,
    TS_CONTACTS,
)
from .box_contacts import box_box, capsule_box, sphere_box
from .convex import convex_pair, mesh_pair, round_plane


class NarrowRoom(NamedTuple):
    """One world's scratch for the narrow phase (workspace arrays of the same names, usdart.core.state)."""

    scratch: np.ndarray  # (32, 3) box and capsule clipping
    candidates: np.ndarray  # (room, CONTACT_GEOMETRY) a manifold's points before keep_four
    found: np.ndarray  # (8, CONTACT_GEOMETRY) a pair's points
    epa_point: np.ndarray  # (EPA_POINTS, 9) GJK's simplex and EPA's polytope: [a - b, a, b]
    epa_weight: np.ndarray  # (16,) GJK's weights, a witness point and a normal
    epa_face: np.ndarray  # (EPA_FACES, 4) int64 EPA's faces: vertex rows, state
    epa_plane: np.ndarray  # (EPA_FACES, 4) their unit normals and distances from the origin
    epa_edge: np.ndarray  # (3 EPA_FACES, 2) int64 the edges a round removes
    polygon: np.ndarray  # (4, room, 3) supporting features and clipping


TIE = 1e-9  # m: manifold points this close in depth count as equally deep (keep_four)
PARALLEL = 1e-6  # squared sine below which two capsule axes' closest points are taken from A's middle
CROSSING = 1e-6  # m^2: PhysX's capsule pair closer than this (1 mm) has no direction between its segments


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def write_point(out, k, px, py, pz, nx, ny, nz, sep):
    out[k, 0], out[k, 1], out[k, 2] = px, py, pz
    out[k, 3], out[k, 4], out[k, 5] = nx, ny, nz
    out[k, 6] = sep


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def sphere_sphere(ax, ay, az, ra, bx, by, bz, rb, margin, out, k, on_a):
    """Sphere A at a against sphere B at b: one point (at out row k) when closer than margin; returns the
    number written. Concentric spheres push apart along +z. The point is on B's surface (on_a 0.0: PhysX's
    sphere pair) or on A's (1.0: PhysX's sphere or capsule against a capsule); a speculative contact's lever
    arms differ by the gap."""
    dx, dy, dz = ax - bx, ay - by, az - bz
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    sep = dist - ra - rb
    if sep >= margin:
        return 0
    if dist > 1e-12:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:
        nx, ny, nz = 0.0, 0.0, 1.0
    lift = rb + on_a * sep
    write_point(out, k, bx + nx * lift, by + ny * lift, bz + nz * lift, nx, ny, nz, sep)
    return 1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def segment_param(px, py, pz, cx, cy, cz, ux, uy, uz, half):
    """Parameter in [-half, half] of the point of the segment c + s u closest to p."""
    s = (px - cx) * ux + (py - cy) * uy + (pz - cz) * uz
    return min(max(s, -half), half)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def sphere_capsule(pa, ra, rot_b, pb, rb, hb, margin, out):
    """Sphere A against capsule B: the sphere against B's nearest segment point."""
    ux, uy, uz = rot_b[0, 0], rot_b[1, 0], rot_b[2, 0]
    s = segment_param(pa[0], pa[1], pa[2], pb[0], pb[1], pb[2], ux, uy, uz, hb)
    return sphere_sphere(
        pa[0], pa[1], pa[2], ra, pb[0] + s * ux, pb[1] + s * uy, pb[2] + s * uz, rb, margin, out, np.int64(0), 1.0
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def capsule_capsule(rot_a, pa, ra, ha, rot_b, pb, rb, hb, margin, out):
    """Capsule A against capsule B as PhysX's PCM routine puts it (pcmContactCapsuleCapsule): for axes within
    about 1.1 deg of parallel (|cos| > 0.9998), each end of one segment projected onto the other where it
    lands on it (up to four points, a capsule lying on another); else, or when none lands, the closest points
    of the two segments, and for segments closer than 1 mm (crossing: no direction between them) a push
    along A's axis with the full overlap of the radii."""
    ux, uy, uz = rot_a[0, 0], rot_a[1, 0], rot_a[2, 0]
    vx, vy, vz = rot_b[0, 0], rot_b[1, 0], rot_b[2, 0]
    wx, wy, wz = pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]
    b = ux * vx + uy * vy + uz * vz
    d = ux * wx + uy * wy + uz * wz
    e = vx * wx + vy * wy + vz * wz
    denominator = 1.0 - b * b
    if denominator < PARALLEL:
        s = min(max(-d, -ha), ha)
    else:
        s = min(max((b * e - d) / denominator, -ha), ha)
    t = min(max(b * s + e, -hb), hb)
    s = min(max(b * t - d, -ha), ha)
    ax, ay, az = pa[0] + s * ux, pa[1] + s * uy, pa[2] + s * uz
    bx, by, bz = pb[0] + t * vx, pb[1] + t * vy, pb[2] + t * vz
    gx, gy, gz = ax - bx, ay - by, az - bz
    gap = gx * gx + gy * gy + gz * gz
    reach = ra + rb + margin
    if gap > reach * reach:
        return 0
    n = np.int64(0)
    if abs(b) > 0.9998:  # each end of B onto A, then each end of A onto B
        for i in range(4):
            end = (hb if i % 2 == 0 else -hb) if i < 2 else (ha if i % 2 == 0 else -ha)
            if i < 2:
                qx, qy, qz = pb[0] + end * vx, pb[1] + end * vy, pb[2] + end * vz
                along = (qx - pa[0]) * ux + (qy - pa[1]) * uy + (qz - pa[2]) * uz
                if abs(along) > ha:
                    continue
                px, py, pz = pa[0] + along * ux, pa[1] + along * uy, pa[2] + along * uz
            else:
                px, py, pz = pa[0] + end * ux, pa[1] + end * uy, pa[2] + end * uz
                along = (px - pb[0]) * vx + (py - pb[1]) * vy + (pz - pb[2]) * vz
                if abs(along) > hb:
                    continue
                qx, qy, qz = pb[0] + along * vx, pb[1] + along * vy, pb[2] + along * vz
            dx, dy, dz = px - qx, py - qy, pz - qz
            square = dx * dx + dy * dy + dz * dz
            if square <= CROSSING or square >= reach * reach:
                continue
            dist = math.sqrt(square)
            nx, ny, nz = dx / dist, dy / dist, dz / dist
            write_point(out, n, px - nx * ra, py - ny * ra, pz - nz * ra, nx, ny, nz, dist - ra - rb)
            n += 1
        if n > 0:
            return n
    if gap < CROSSING:  # PhysX: along A's segment from its +axis end to its -axis end (world +x if it has none)
        if 4.0 * ha * ha <= CROSSING:
            ux, uy, uz = -1.0, 0.0, 0.0
        write_point(out, np.int64(0), ax + ux * ra, ay + uy * ra, az + uz * ra, -ux, -uy, -uz, -ra - rb)
        return 1
    dist = math.sqrt(gap)
    nx, ny, nz = gx / dist, gy / dist, gz / dist
    write_point(out, np.int64(0), ax - nx * ra, ay - ny * ra, az - nz * ra, nx, ny, nz, dist - ra - rb)
    return 1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def plane_distance(rot_b, pb, x, y, z):
    return rot_b[0, 0] * (x - pb[0]) + rot_b[1, 0] * (y - pb[1]) + rot_b[2, 0] * (z - pb[2])


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def point_plane(x, y, z, radius, rot_b, pb, margin, out, k):
    """A sphere of `radius` at (x, y, z) against plane B (normal: B's local x): one point when within margin,
    on the sphere (PhysX's sphere and capsule against a plane), which for radius 0 (a box's or hull's corner)
    is the plane (PhysX's, projected there)."""
    nx, ny, nz = rot_b[0, 0], rot_b[1, 0], rot_b[2, 0]
    dist = plane_distance(rot_b, pb, x, y, z)
    if dist - radius >= margin:
        return 0
    drop = radius if radius > 0.0 else dist
    write_point(out, k, x - nx * drop, y - ny * drop, z - nz * drop, nx, ny, nz, dist - radius)
    return 1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def capsule_plane(rot_a, pa, ra, ha, rot_b, pb, margin, out):
    """Capsule A against plane B: each end sphere of the segment (up to two points), its local +x end first
    as in PhysX's pcmContactPlaneCapsule (the solver's order; the capsule frame is PhysX's, importer.colliders:
    the other way round, a capsule rolling down a slope drifted along its axis as far as PhysX's, the other
    way)."""
    n = np.int64(0)
    for sign in (1.0, -1.0):
        x, y, z = pa[0] + sign * ha * rot_a[0, 0], pa[1] + sign * ha * rot_a[1, 0], pa[2] + sign * ha * rot_a[2, 0]
        n += point_plane(x, y, z, ra, rot_b, pb, margin, out, n)
    return n


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def box_plane(rot_a, pa, half, rot_b, pb, margin, candidates, out):
    """Box A against plane B: its corners within margin, reduced to at most four (keep_four), in PhysX's
    order ((+x, +y, +z), (+x, +y, -z), (+x, -y, +z), ... in the box's frame: pcmContactPlaneBox). The
    order is the order the solver sweeps them in: a box landing while it slides drifts sideways by it
    (taken from the (-, -, -) corner up, the drift of one 60 Hz landing was 1.3e-3 m from PhysX's)."""
    n = np.int64(0)
    for i in range(8):
        sx = -half[0] if i & 4 else half[0]
        sy = -half[1] if i & 2 else half[1]
        sz = -half[2] if i & 1 else half[2]
        x = pa[0] + rot_a[0, 0] * sx + rot_a[0, 1] * sy + rot_a[0, 2] * sz
        y = pa[1] + rot_a[1, 0] * sx + rot_a[1, 1] * sy + rot_a[1, 2] * sz
        z = pa[2] + rot_a[2, 0] * sx + rot_a[2, 1] * sy + rot_a[2, 2] * sz
        n += point_plane(x, y, z, 0.0, rot_b, pb, margin, candidates, n)
    return keep_four(candidates, n, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def convex_plane(rot_a, pa, hull, rot_b, pb, margin, candidates, out):
    """Convex hull A (its vertices in its frame) against plane B: its vertices within margin (the deepest
    candidates.shape[0] when more), reduced to at most four (keep_four)."""
    n = np.int64(0)
    for i in range(hull.shape[0]):
        v = hull[i]
        x = pa[0] + rot_a[0, 0] * v[0] + rot_a[0, 1] * v[1] + rot_a[0, 2] * v[2]
        y = pa[1] + rot_a[1, 0] * v[0] + rot_a[1, 1] * v[1] + rot_a[1, 2] * v[2]
        z = pa[2] + rot_a[2, 0] * v[0] + rot_a[2, 1] * v[1] + rot_a[2, 2] * v[2]
        if n < candidates.shape[0]:
            n += point_plane(x, y, z, 0.0, rot_b, pb, margin, candidates, n)
            continue
        shallowest = 0  # full: a deeper vertex takes the shallowest one's place
        for k in range(1, n):
            if candidates[k, CG_SEPARATION] > candidates[shallowest, CG_SEPARATION]:
                shallowest = k
        if plane_distance(rot_b, pb, x, y, z) < candidates[shallowest, CG_SEPARATION]:
            point_plane(x, y, z, 0.0, rot_b, pb, margin, candidates, np.int64(shallowest))
    return keep_four(candidates, n, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _farthest(points, n, origin, deepest):
    """The point farthest from point `origin` among those no shallower than `deepest`."""
    best, far = origin, -1.0
    for k in range(n):
        if points[k, CG_SEPARATION] > deepest:
            continue
        d = 0.0
        for c in range(3):
            d += (points[k, c] - points[origin, c]) ** 2
        if d > far:
            best, far = k, d
    return best


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def keep_four(points, n, out):
    """At most four of n manifold points (rows as out's) into out: all when n <= 4, else the deepest, the one
    farthest from it, and on each side of the line through those two the one spanning the largest triangle
    with it (the area a resting patch keeps). Of equally deep points (within TIE) the deepest is the one
    farthest from the second, so that a flat patch keeps its corners whatever order its points come in.
    Returns the count."""
    if n <= 4:
        for k in range(n):
            for c in range(7):
                out[k, c] = points[k, c]
        return n
    first = np.int64(0)
    for k in range(n):
        if points[k, CG_SEPARATION] < points[first, CG_SEPARATION]:
            first = k
    second = _farthest(points, n, first, np.inf)
    first = _farthest(points, n, second, points[first, CG_SEPARATION] + TIE)
    third, fourth, low, high = -1, -1, 0.0, 0.0
    for k in range(n):  # signed area about the normal: one side positive, the other negative
        e0, e1 = points[second, 0] - points[first, 0], points[second, 1] - points[first, 1]
        e2 = points[second, 2] - points[first, 2]
        f0, f1, f2 = points[k, 0] - points[first, 0], points[k, 1] - points[first, 1], points[k, 2] - points[first, 2]
        area = (
            (e1 * f2 - e2 * f1) * points[k, 3] + (e2 * f0 - e0 * f2) * points[k, 4] + (e0 * f1 - e1 * f0) * points[k, 5]
        )
        if area > high:
            third, high = k, area
        if area < low:
            fourth, low = k, area
    m = 0
    for k in (first, second, third, fourth):
        if k >= 0:
            for c in range(7):
                out[m, c] = points[k, c]
            m += 1
    return m


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def manifold(
    type_a, type_b, par_a, par_b, rot_a, pa, hull_a, fa0, fa1, rot_b, pb, hull_b, fb0, fb1, face_start, face_vertex,
    margin, scratch, epa_point, epa_weight, epa_face, epa_plane, epa_edge, polygon, candidates, out,
):  # fmt: skip
    """Contact points of shapes A and B (type_a <= type_b; hulls with their vertices and faces fa0:fa1,
    fb0:fb1 of the face tables) within margin into out; returns their count. The epa_* arrays and
    polygon are the general convex pairs' room (kernels/convex.py)."""
    general = type_a >= SHAPE_CYLINDER or (type_b >= SHAPE_CYLINDER and type_b != SHAPE_PLANE)
    if not general:
        return simple_manifold(type_a, type_b, par_a, par_b, rot_a, pa, rot_b, pb, margin, scratch, candidates, out)
    if type_b == SHAPE_PLANE:
        if type_a == SHAPE_CONVEX:
            return convex_plane(rot_a, pa, hull_a, rot_b, pb, margin, candidates, out)
        return round_plane(type_a, par_a, rot_a, pa, hull_a, rot_b, pb, margin, out)
    if type_b == SHAPE_MESH:
        n = mesh_pair(type_a, par_a, rot_a, pa, hull_a, fa0, fa1, rot_b, pb, hull_b, fb0, fb1,
                      par_b[SP_TRIANGLE_WIDTH], face_start, face_vertex, margin, polygon, candidates)  # fmt: skip
    else:
        n = convex_pair(
            type_a, par_a, rot_a, pa, hull_a, fa0, fa1, type_b, par_b, rot_b, pb, hull_b, fb0, fb1, face_start,
            face_vertex, margin, epa_point, epa_weight, epa_face, epa_plane, epa_edge, polygon, candidates,
        )  # fmt: skip
    band = min(par_a[SP_CONTACT_OFFSET], par_b[SP_CONTACT_OFFSET])
    n = keep_four(candidates, near_deepest(candidates, n, band), out)
    if type_a <= SHAPE_CAPSULE and (type_b == SHAPE_CONVEX or type_b == SHAPE_MESH):
        onto_a(out, n)
    return n


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def onto_a(points, n):
    """Moves each of the n points from B's surface to A's (by its separation along the normal, which points
    toward A): PhysX puts a sphere's or capsule's points against a box, hull or mesh on the sphere or capsule."""
    for k in range(n):
        sep = points[k, CG_SEPARATION]
        for c in range(3):
            points[k, CG_POINT + c] += sep * points[k, CG_NORMAL + c]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def near_deepest(points, n, band):
    """Keeps (compacted, in order) the points within band of the deepest one's separation; returns their
    count. A face far larger than the contact offsets (a ground box's automatic offset is 0.02 of its size)
    brings points of the whole incident face within the margin; keep_four would then trade one of two
    equally deep points for a far one, and a body landing on an edge would spin off it."""
    if n <= 4:
        return n
    deepest = np.inf
    for k in range(n):
        deepest = min(deepest, points[k, CG_SEPARATION])
    m = 0
    for k in range(n):
        if points[k, CG_SEPARATION] <= deepest + band:
            for c in range(7):
                points[m, c] = points[k, c]
            m += 1
    return m


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def simple_manifold(type_a, type_b, par_a, par_b, rot_a, pa, rot_b, pb, margin, scratch, candidates, out):
    """Pairs of spheres, capsules, boxes and planes (type_a <= type_b): their dedicated routines."""
    ra, rb = par_a[SP_SIZE0], par_b[SP_SIZE0]
    if type_b == SHAPE_PLANE:
        if type_a == SHAPE_SPHERE:
            return point_plane(pa[0], pa[1], pa[2], ra, rot_b, pb, margin, out, np.int64(0))
        if type_a == SHAPE_CAPSULE:
            return capsule_plane(rot_a, pa, ra, par_a[SP_SIZE1], rot_b, pb, margin, out)
        return box_plane(rot_a, pa, par_a[SP_SIZE0 : SP_SIZE2 + 1], rot_b, pb, margin, candidates, out)
    if type_b == SHAPE_SPHERE:
        return sphere_sphere(pa[0], pa[1], pa[2], ra, pb[0], pb[1], pb[2], rb, margin, out, np.int64(0), 0.0)
    if type_b == SHAPE_CAPSULE:
        if type_a == SHAPE_SPHERE:
            return sphere_capsule(pa, ra, rot_b, pb, rb, par_b[SP_SIZE1], margin, out)
        return capsule_capsule(rot_a, pa, ra, par_a[SP_SIZE1], rot_b, pb, rb, par_b[SP_SIZE1], margin, out)
    half_b = par_b[SP_SIZE0 : SP_SIZE2 + 1]
    if type_a == SHAPE_SPHERE:
        return sphere_box(pa, ra, rot_b, pb, half_b, margin, out)
    if type_a == SHAPE_CAPSULE:
        n = capsule_box(rot_a, pa, ra, par_a[SP_SIZE1], rot_b, pb, half_b, margin, scratch, out)
        onto_a(out, n)
        return n
    return box_box(rot_a, pa, par_a[SP_SIZE0 : SP_SIZE2 + 1], rot_b, pb, half_b, margin, scratch, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def shape_poses(shape, shape_rot, shape_pos, link_rot, link_pos, rot, pos):
    """World pose of every shape: its link's pose times its pose in the link (static shapes: as stored)."""
    for s in range(shape.shape[0]):
        li = shape[s, S_LINK]
        if li < 0:
            for a in range(3):
                pos[s, a] = shape_pos[s, a]
                for b in range(3):
                    rot[s, a, b] = shape_rot[s, a, b]
            continue
        R, p = link_rot[li], link_pos[li]
        for a in range(3):
            pos[s, a] = p[a] + R[a, 0] * shape_pos[s, 0] + R[a, 1] * shape_pos[s, 1] + R[a, 2] * shape_pos[s, 2]
            for b in range(3):
                rot[s, a, b] = (
                    R[a, 0] * shape_rot[s, 0, b] + R[a, 1] * shape_rot[s, 1, b] + R[a, 2] * shape_rot[s, 2, b]
                )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def shape_bounds(shape, shape_par, rot, pos, bounds):
    """Axis-aligned bounds of every shape grown by its contact offset: [min xyz, max xyz] (planes: none)."""
    for s in range(shape.shape[0]):
        kind = shape[s, S_TYPE]
        par = shape_par[s]
        for a in range(3):
            if kind == SHAPE_BOX:
                extent = abs(rot[s, a, 0]) * par[SP_SIZE0] + abs(rot[s, a, 1]) * par[SP_SIZE1]
                extent += abs(rot[s, a, 2]) * par[SP_SIZE2]
            elif kind == SHAPE_CAPSULE:
                extent = par[SP_SIZE0] + abs(rot[s, a, 0]) * par[SP_SIZE1]
            elif kind == SHAPE_CYLINDER or kind == SHAPE_CONE:  # (a cone fits in its cylinder)
                across = math.sqrt(max(1.0 - rot[s, a, 0] * rot[s, a, 0], 0.0))
                extent = par[SP_SIZE0] * across + abs(rot[s, a, 0]) * par[SP_SIZE1]
            else:
                extent = par[SP_BOUND]
            extent += par[SP_CONTACT_OFFSET]
            bounds[s, a] = pos[s, a] - extent
            bounds[s, 3 + a] = pos[s, a] + extent
            if kind == SHAPE_CONVEX or kind == SHAPE_MESH:  # the vertex box turned, within the sphere's bounds
                # (the importer centres a hull's vertices on its frame; the box's centre is kept all the same)
                c, h = SP_BOX_CENTRE, SP_BOX_HALF
                mid = pos[s, a] + rot[s, a, 0] * par[c] + rot[s, a, 1] * par[c + 1] + rot[s, a, 2] * par[c + 2]
                reach = abs(rot[s, a, 0]) * par[h] + abs(rot[s, a, 1]) * par[h + 1] + abs(rot[s, a, 2]) * par[h + 2]
                reach += par[SP_CONTACT_OFFSET]
                bounds[s, a] = max(bounds[s, a], mid - reach)
                bounds[s, 3 + a] = min(bounds[s, 3 + a], mid + reach)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def sort_by_low_x(order, count, bounds):
    """Insertion sort of order[:count] by the bounds' low x (near linear: last step's order is kept)."""
    for i in range(1, count):
        s = order[i]
        x = bounds[s, 0]
        j = i - 1
        while j >= 0 and bounds[order[j], 0] > x:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = s


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def excluded_pair(excluded, key):
    lo, hi = 0, excluded.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if excluded[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < excluded.shape[0] and excluded[lo] == key


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def may_touch(shape, link, group_filter, excluded, tree_settings, asleep, a, b):
    """PhysX's filters for shapes a and b (see the module docstring); pairs with no awake moving side are
    left out too (a sleeping tree is woken through a pair with an awake one), and trees whose contacts are
    switched off (TS_CONTACTS) touch nothing. A pair needs a dynamic side: static shapes, a fixed base's
    root link and kinematic bodies never meet each other."""
    ta, tb = shape[a, S_TREE], shape[b, S_TREE]
    if (ta < 0 or shape[a, S_KINEMATIC] != 0) and (tb < 0 or shape[b, S_KINEMATIC] != 0):
        return False
    if (ta < 0 or asleep[ta]) and (tb < 0 or asleep[tb]):
        return False
    for t in (ta, tb):
        if t >= 0 and tree_settings[t, TS_CONTACTS] == 0.0:
            return False
    la, lb = shape[a, S_LINK], shape[b, S_LINK]
    if la >= 0 and lb >= 0:
        if la == lb:
            return False
        if link[la, L_TREE] == link[lb, L_TREE]:
            if shape[a, S_SELF_COLLIDE] == 0 or link[la, L_PARENT] == lb or link[lb, L_PARENT] == la:
                return False
    ga, gb = shape[a, S_GROUP], shape[b, S_GROUP]
    if ga >= 0 and gb >= 0 and group_filter[ga, gb] != 0:
        return False
    n = shape.shape[0]
    return not excluded_pair(excluded, min(a, b) * n + max(a, b))


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def count_pair(shape, interactions, a, b):
    """A pair the broad phase found and the filters kept is one interaction of each moving link it touches
    (PhysX's counted interactions, whose number raises a body's sleep threshold: usdart.core.kernels.sleep)."""
    for s in (a, b):
        if shape[s, S_LINK] >= 0 and shape[s, S_KINEMATIC] == 0:
            interactions[shape[s, S_LINK]] += 1.0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def add_pair(sh, rot, pos, a, b, contact, contact_pair, count, room):
    """Manifold of shapes a and b appended to the world's contacts (sides ordered by type, then index);
    points beyond the contact arrays' room are counted as dropped. sh: the model's Shapes; room: the
    narrow phase's scratch arrays (NarrowRoom)."""
    shape, shape_par, hull_start, hull_faces = sh.shape, sh.shape_par, sh.hull_start, sh.hull_faces
    if shape[a, S_TYPE] > shape[b, S_TYPE] or (shape[a, S_TYPE] == shape[b, S_TYPE] and a > b):
        a, b = b, a  # sides by type, then by shape: the same pair always gets the same normal
    margin = shape_par[a, SP_CONTACT_OFFSET] + shape_par[b, SP_CONTACT_OFFSET]
    found = room.found
    n = manifold(
        shape[a, S_TYPE], shape[b, S_TYPE], shape_par[a], shape_par[b], rot[a], pos[a],
        sh.hull_point[hull_start[a] : hull_start[a + 1]], hull_faces[a], hull_faces[a + 1], rot[b], pos[b],
        sh.hull_point[hull_start[b] : hull_start[b + 1]], hull_faces[b], hull_faces[b + 1], sh.face_start,
        sh.face_vertex, margin, room.scratch, room.epa_point, room.epa_weight, room.epa_face,
        room.epa_plane, room.epa_edge, room.polygon, room.candidates, found,
    )  # fmt: skip
    k = count[CC_POINTS]
    for i in range(n):
        if k >= contact.shape[0]:
            count[CC_DROPPED] += n - i
            break
        for c in range(CG_POINT, CG_SEPARATION + 1):
            contact[k, c] = found[i, c]
        contact_pair[k, 0], contact_pair[k, 1] = a, b
        k += 1
    count[CC_POINTS] = k


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def find_contacts(
    sh,
    link,
    tree_settings,
    asleep,
    link_rot,
    link_pos,
    rot,
    pos,
    bounds,
    order,
    contact,
    contact_pair,
    count,
    room,
    interactions,
):
    """Every contact point of one world at the current link poses into contact / contact_pair (count:
    CC_*), and each pair kept added to its links' interactions. sh: the model's Shapes; `order` holds the
    non-plane shapes, kept sorted between steps; planes are tested directly; room: the narrow phase's
    scratch (NarrowRoom)."""
    count[CC_POINTS] = 0
    count[CC_DROPPED] = 0
    shape, shape_par, group_filter, excluded = sh.shape, sh.shape_par, sh.group_filter, sh.excluded
    n = shape.shape[0]
    if n == 0:
        return
    shape_poses(shape, sh.shape_rot, sh.shape_pos, link_rot, link_pos, rot, pos)
    shape_bounds(shape, shape_par, rot, pos, bounds)
    m = np.int64(0)
    for s in range(n):
        if shape[s, S_TYPE] != SHAPE_PLANE:
            m += 1
    sort_by_low_x(order, m, bounds)
    for i in range(m):
        a = order[i]
        for j in range(i + 1, m):
            b = order[j]
            if bounds[b, 0] > bounds[a, 3]:
                break
            if (
                bounds[b, 1] > bounds[a, 4]
                or bounds[a, 1] > bounds[b, 4]
                or bounds[b, 2] > bounds[a, 5]
                or bounds[a, 2] > bounds[b, 5]
            ):
                continue
            if may_touch(shape, link, group_filter, excluded, tree_settings, asleep, a, b):
                count_pair(shape, interactions, a, b)
                add_pair(sh, rot, pos, a, b, contact, contact_pair, count, room)
    for p in range(n):
        if shape[p, S_TYPE] != SHAPE_PLANE:
            continue
        for s in range(n):
            if shape[s, S_TYPE] == SHAPE_PLANE or shape[s, S_TREE] < 0 or shape[s, S_KINEMATIC] != 0:
                continue
            # the lowest point of the shape's bounds along the normal is within reach of the plane
            reach = 0.0
            for a in range(3):
                reach += abs(rot[p, a, 0]) * 0.5 * (bounds[s, 3 + a] - bounds[s, a])
            mid0 = 0.5 * (bounds[s, 0] + bounds[s, 3])  # the bounds' centre (a vertex box need not sit on
            mid1 = 0.5 * (bounds[s, 1] + bounds[s, 4])  # the shape's origin)
            mid2 = 0.5 * (bounds[s, 2] + bounds[s, 5])
            if plane_distance(rot[p], pos[p], mid0, mid1, mid2) - reach > shape_par[p, SP_CONTACT_OFFSET]:
                continue
            if may_touch(shape, link, group_filter, excluded, tree_settings, asleep, s, p):
                count_pair(shape, interactions, s, p)
                add_pair(sh, rot, pos, s, p, contact, contact_pair, count, room)
