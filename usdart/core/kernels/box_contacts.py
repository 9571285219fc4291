"""Narrowphase contacts of boxes: box-box, capsule-box and sphere-box (numba, float64, no allocation).

A shape's `rot` is its world rotation (columns: the shape's local axes in world), `pos` its world centre,
`half` a box's half extents; a capsule is the segment pos +- half_height * rot[:, 0] swept by its radius.
Each function writes rows [px, py, pz, nx, ny, nz, sep] into `out` (>= 4 x 7) and returns how many. The
normal is one unit vector for the whole patch, pointing from shape B toward shape A; sep is the signed
distance between the surfaces along it (negative: penetration). The point lies on B's surface, A's surface
point being point + normal * sep. Only points with sep < margin are written, so contacts appear while the
shapes are still up to `margin` apart (speculative contacts).

The normal comes from a separating-axis test: the 15 axes of two boxes; for a capsule touching or cutting
the box, the box's 3 face normals and the 3 box-axis x segment axes (a capsule apart from the box takes the
direction between the closest points). Face axes win near-ties: an edge axis is taken only when clearly
better (`_clearly_better`), or the axis would flip between near-equal candidates from step to step, and a
face patch carries several points where an edge carries one.

`scratch` (box_box, capsule_box) is a float64 (>= 16, 3) array: box_box clips polygons in rows 0-15,
capsule_box keeps its segment in rows 0-1.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .spatial import rotated

PARALLEL = 1e-4  # sine of the angle under which two directions count as parallel: their cross product is no axis
REL_TOL = 0.05  # an edge axis beats the best face axis (and B's face A's) only by this fraction of its separation
ABS_TOL = 1e-5  # ... plus this fraction of the shapes' size
TOUCH = 1e-10  # closest points nearer than this fraction of the shapes' size give no usable normal: SAT instead
CAPSULE_PARALLEL = 0.1  # |sin| of the tilt between a capsule and a box face under which it lies on the face (2 points)
POLY_MAX = 8  # a quad clipped by 4 planes keeps at most 8 vertices; the clip buffers hold that many


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _sgn(x):
    return 1.0 if x >= 0.0 else -1.0


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _clearly_better(s, best, size):
    """Whether separation s beats `best` by more than the tolerance that keeps the axis choice stable."""
    return s > best + REL_TOL * abs(best) + ABS_TOL * size


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _col_dot(rot, k, x, y, z):
    return rot[0, k] * x + rot[1, k] * y + rot[2, k] * z


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _radius(rot, half, x, y, z):
    """Half the length of a box's projection on the unit axis (x, y, z)."""
    return (
        half[0] * abs(_col_dot(rot, 0, x, y, z))
        + half[1] * abs(_col_dot(rot, 1, x, y, z))
        + half[2] * abs(_col_dot(rot, 2, x, y, z))
    )


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _write(out, row, rot, pos, lx, ly, lz, nx, ny, nz, sep):
    """out[row] = [pos + rot @ (lx, ly, lz), n, sep]: the point is given in the frame (rot, pos)."""
    out[row, 0] = pos[0] + rot[0, 0] * lx + rot[0, 1] * ly + rot[0, 2] * lz
    out[row, 1] = pos[1] + rot[1, 0] * lx + rot[1, 1] * ly + rot[1, 2] * lz
    out[row, 2] = pos[2] + rot[2, 0] * lx + rot[2, 1] * ly + rot[2, 2] * lz
    out[row, 3] = nx
    out[row, 4] = ny
    out[row, 5] = nz
    out[row, 6] = sep


# ---------------------------------------------------------------------------------------------- sphere-box


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def sphere_box(pos_a, radius_a, rot_b, pos_b, half_b, margin, out):
    """Sphere A on box B: one point, the box point closest to the centre (a centre inside the box leaves
    through the face it is nearest to)."""
    dx = pos_a[0] - pos_b[0]
    dy = pos_a[1] - pos_b[1]
    dz = pos_a[2] - pos_b[2]
    c0 = _col_dot(rot_b, 0, dx, dy, dz)
    c1 = _col_dot(rot_b, 1, dx, dy, dz)
    c2 = _col_dot(rot_b, 2, dx, dy, dz)
    q0 = min(max(c0, -half_b[0]), half_b[0])
    q1 = min(max(c1, -half_b[1]), half_b[1])
    q2 = min(max(c2, -half_b[2]), half_b[2])
    e0 = c0 - q0
    e1 = c1 - q1
    e2 = c2 - q2
    d2 = e0 * e0 + e1 * e1 + e2 * e2
    if d2 > 0.0:
        dist = math.sqrt(d2)
        sep = dist - radius_a
        n0 = e0 / dist
        n1 = e1 / dist
        n2 = e2 / dist
    else:
        # inside (or on) the box: out through the nearest face
        k = np.int64(0)
        depth = half_b[0] - abs(c0)
        if half_b[1] - abs(c1) < depth:
            k = 1
            depth = half_b[1] - abs(c1)
        if half_b[2] - abs(c2) < depth:
            k = 2
            depth = half_b[2] - abs(c2)
        sep = -depth - radius_a
        n0 = n1 = n2 = 0.0
        if k == 0:
            n0 = _sgn(c0)
            q0 = n0 * half_b[0]
        elif k == 1:
            n1 = _sgn(c1)
            q1 = n1 * half_b[1]
        else:
            n2 = _sgn(c2)
            q2 = n2 * half_b[2]
    if sep >= margin:
        return 0
    nx, ny, nz = rotated(rot_b, n0, n1, n2)
    _write(out, 0, rot_b, pos_b, q0, q1, q2, nx, ny, nz, sep)
    return 1


# ------------------------------------------------------------------------------------------------- box-box


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _best_face_axis(rot, half, rot_o, half_o, dx, dy, dz):
    """(separation, axis) of the face normal of box (rot, half) along which it and the other box are
    farthest apart; d is the vector between the centres."""
    best_s = -math.inf
    best_k = np.int64(0)
    for k in range(3):
        lx = rot[0, k]
        ly = rot[1, k]
        lz = rot[2, k]
        s = abs(dx * lx + dy * ly + dz * lz) - half[k] - _radius(rot_o, half_o, lx, ly, lz)
        if s > best_s:
            best_s = s
            best_k = k
    return best_s, best_k


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _best_edge_axis(rot_a, half_a, rot_b, half_b, dx, dy, dz):
    """(separation, A's edge axis, B's edge axis, unit normal from B to A) of the best edge cross product."""
    best_s = -math.inf
    bi = np.int64(0)
    bj = np.int64(0)
    nx = ny = nz = 0.0
    for i in range(3):
        for j in range(3):
            lx = rot_a[1, i] * rot_b[2, j] - rot_a[2, i] * rot_b[1, j]
            ly = rot_a[2, i] * rot_b[0, j] - rot_a[0, i] * rot_b[2, j]
            lz = rot_a[0, i] * rot_b[1, j] - rot_a[1, i] * rot_b[0, j]
            ln = math.sqrt(lx * lx + ly * ly + lz * lz)
            if ln < PARALLEL:
                continue
            lx /= ln
            ly /= ln
            lz /= ln
            dl = dx * lx + dy * ly + dz * lz
            s = abs(dl) - _radius(rot_a, half_a, lx, ly, lz) - _radius(rot_b, half_b, lx, ly, lz)
            if s > best_s:
                best_s = s
                bi = i
                bj = j
                g = _sgn(dl)
                nx = g * lx
                ny = g * ly
                nz = g * lz
    return best_s, bi, bj, nx, ny, nz


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _clip(buf, src, cnt, dst, m, sgn, h):
    """Sutherland-Hodgman: the part of polygon buf[src:src + cnt] where sgn * x[m] <= h, into buf[dst:].
    Vertices on the plane are kept once; new vertices are put exactly on it. A convex polygon gains at most
    one vertex; the POLY_MAX guards keep the buffer safe should rounding bend it."""
    n_out = np.int64(0)
    for i in range(cnt):
        j = i + 1 if i + 1 < cnt else 0
        ds = sgn * buf[src + i, m] - h
        de = sgn * buf[src + j, m] - h
        if ds <= 0.0 and n_out < POLY_MAX:
            for c in range(3):
                buf[dst + n_out, c] = buf[src + i, c]
            n_out += 1
        if ((ds < 0.0 < de) or (de < 0.0 < ds)) and n_out < POLY_MAX:
            t = ds / (ds - de)
            for c in range(3):
                buf[dst + n_out, c] = buf[src + i, c] + t * (buf[src + j, c] - buf[src + i, c])
            buf[dst + n_out, m] = sgn * h
            n_out += 1
    return n_out


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def _cross2(buf, m1, m2, a, b, c):
    """(b - a) x (c - a) of rows of buf in the plane of coordinates (m1, m2)."""
    return (buf[b, m1] - buf[a, m1]) * (buf[c, m2] - buf[a, m2]) - (buf[b, m2] - buf[a, m2]) * (buf[c, m1] - buf[a, m1])


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _reduce(buf, cnt, k, sigma, dst):
    """Copy 4 (or 3) of the cnt > 4 points buf[:cnt] to buf[dst:], as PhysX reduces a manifold: the deepest,
    the one farthest from it, the one spanning the largest triangle with those two, then the one adding the
    most area outside that triangle (usually across the line of the first two). Depth runs along -sigma * e_k,
    areas are taken in the plane of the other two coordinates."""
    m1 = (k + 1) % 3
    m2 = (k + 2) % 3
    i0 = np.int64(0)
    for i in range(1, cnt):
        if sigma * buf[i, k] < sigma * buf[i0, k]:
            i0 = i
    i1 = -1
    best = -1.0
    for i in range(cnt):
        e1 = buf[i, m1] - buf[i0, m1]
        e2 = buf[i, m2] - buf[i0, m2]
        if i != i0 and e1 * e1 + e2 * e2 > best:
            best = e1 * e1 + e2 * e2
            i1 = i
    i2 = -1
    best = -1.0
    a2 = 0.0
    for i in range(cnt):
        a = _cross2(buf, m1, m2, i0, i1, i)
        if i != i0 and i != i1 and abs(a) > best:
            best = abs(a)
            i2 = i
            a2 = a
    # the triangle counter-clockwise: a point outside an edge has a negative cross product with it
    ta, tb, tc = (i0, i1, i2) if a2 >= 0.0 else (i0, i2, i1)
    i3 = -1
    best = 0.0
    for i in range(cnt):
        if i == i0 or i == i1 or i == i2:
            continue
        gain = max(-_cross2(buf, m1, m2, ta, tb, i), -_cross2(buf, m1, m2, tb, tc, i), -_cross2(buf, m1, m2, tc, ta, i))
        if gain > best:
            best = gain
            i3 = i
    n = np.int64(0)
    for i in (i0, i1, i2, i3):
        if i >= 0:
            for c in range(3):
                buf[dst + n, c] = buf[i, c]
            n += 1
    return n


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _face_contacts(rot_r, pos_r, half_r, k, sigma, rot_i, pos_i, half_i, ref_is_b, margin, scratch, out):
    """Face patch: the incident box's face most anti-parallel to the reference face (reference box's axis k,
    outward normal sigma * rot_r[:, k], facing the incident box) clipped by the reference face's side planes.
    Works in the reference box's frame, where the depth of a point is its coordinate k."""
    nrx = sigma * rot_r[0, k]
    nry = sigma * rot_r[1, k]
    nrz = sigma * rot_r[2, k]
    j = np.int64(0)
    best = -1.0
    for c in range(3):
        dc = abs(_col_dot(rot_i, c, nrx, nry, nrz))
        if dc > best:
            best = dc
            j = c
    sj = -_sgn(_col_dot(rot_i, j, nrx, nry, nrz))
    j1 = (j + 1) % 3
    j2 = (j + 2) % 3
    cx = pos_i[0] + sj * half_i[j] * rot_i[0, j] - pos_r[0]
    cy = pos_i[1] + sj * half_i[j] * rot_i[1, j] - pos_r[1]
    cz = pos_i[2] + sj * half_i[j] * rot_i[2, j] - pos_r[2]
    for m in range(3):  # the incident face's corners in the reference frame, in order around it
        cm = _col_dot(rot_r, m, cx, cy, cz)
        um = half_i[j1] * _col_dot(rot_r, m, rot_i[0, j1], rot_i[1, j1], rot_i[2, j1])
        vm = half_i[j2] * _col_dot(rot_r, m, rot_i[0, j2], rot_i[1, j2], rot_i[2, j2])
        scratch[0, m] = cm + um + vm
        scratch[1, m] = cm - um + vm
        scratch[2, m] = cm - um - vm
        scratch[3, m] = cm + um - vm
    m1 = (k + 1) % 3
    m2 = (k + 2) % 3
    cnt = _clip(scratch, np.int64(0), np.int64(4), np.int64(POLY_MAX), m1, 1.0, half_r[m1])
    cnt = _clip(scratch, np.int64(POLY_MAX), cnt, np.int64(0), m1, -1.0, half_r[m1])
    cnt = _clip(scratch, np.int64(0), cnt, np.int64(POLY_MAX), m2, 1.0, half_r[m2])
    cnt = _clip(scratch, np.int64(POLY_MAX), cnt, np.int64(0), m2, -1.0, half_r[m2])
    kept = np.int64(0)
    for i in range(cnt):
        if sigma * scratch[i, k] - half_r[k] < margin:
            for c in range(3):
                scratch[kept, c] = scratch[i, c]
            kept += 1
    src = np.int64(0)
    if kept > 4:
        kept = _reduce(scratch, kept, k, sigma, np.int64(POLY_MAX))
        src = np.int64(POLY_MAX)
    g = 1.0 if ref_is_b else -1.0
    for i in range(kept):
        sep = sigma * scratch[src + i, k] - half_r[k]
        if ref_is_b:  # the point is on A's face: onto B's
            scratch[src + i, k] = sigma * half_r[k]
        l0 = scratch[src + i, 0]
        l1 = scratch[src + i, 1]
        l2 = scratch[src + i, 2]
        _write(out, i, rot_r, pos_r, l0, l1, l2, g * nrx, g * nry, g * nrz, sep)
    return kept


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _edge_contact(rot_a, pos_a, half_a, i, rot_b, pos_b, half_b, j, nx, ny, nz, sep, out):
    """One point: where B's edge along its axis j, the one farthest toward A, comes closest to A's edge along
    its axis i, the one farthest toward B."""
    pax, pay, paz = pos_a[0], pos_a[1], pos_a[2]
    pbx, pby, pbz = pos_b[0], pos_b[1], pos_b[2]
    for m in range(3):
        if m != i:
            g = -_sgn(_col_dot(rot_a, m, nx, ny, nz)) * half_a[m]
            pax += g * rot_a[0, m]
            pay += g * rot_a[1, m]
            paz += g * rot_a[2, m]
        if m != j:
            g = _sgn(_col_dot(rot_b, m, nx, ny, nz)) * half_b[m]
            pbx += g * rot_b[0, m]
            pby += g * rot_b[1, m]
            pbz += g * rot_b[2, m]
    wx = pax - pbx
    wy = pay - pby
    wz = paz - pbz
    b = _col_dot(rot_a, i, rot_b[0, j], rot_b[1, j], rot_b[2, j])
    da = _col_dot(rot_a, i, wx, wy, wz)
    db = _col_dot(rot_b, j, wx, wy, wz)
    t = min(max((b * db - da) / (1.0 - b * b), -half_a[i]), half_a[i])  # 1 - b^2 >= PARALLEL^2
    u = min(max(db + b * t, -half_b[j]), half_b[j])
    out[0, 0] = pbx + u * rot_b[0, j]
    out[0, 1] = pby + u * rot_b[1, j]
    out[0, 2] = pbz + u * rot_b[2, j]
    out[0, 3] = nx
    out[0, 4] = ny
    out[0, 5] = nz
    out[0, 6] = sep
    return 1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def box_box(rot_a, pos_a, half_a, rot_b, pos_b, half_b, margin, scratch, out):
    """Boxes A and B: SAT over the 15 axes, then a clipped face patch (up to 4 points) or one edge point.

    A face patch that keeps no point (the incident face clipped away, or all of it beyond the margin) falls
    back to the best edge axis, so boxes approaching edge first still get a contact."""
    dx = pos_a[0] - pos_b[0]
    dy = pos_a[1] - pos_b[1]
    dz = pos_a[2] - pos_b[2]
    size = max(half_a[0], half_a[1], half_a[2], half_b[0], half_b[1], half_b[2])
    sa, ka = _best_face_axis(rot_a, half_a, rot_b, half_b, dx, dy, dz)
    sb, kb = _best_face_axis(rot_b, half_b, rot_a, half_a, dx, dy, dz)
    se, ei, ej, nx, ny, nz = _best_edge_axis(rot_a, half_a, rot_b, half_b, dx, dy, dz)
    if max(sa, sb, se) >= margin:
        return 0
    face_s = max(sa, sb)
    if not _clearly_better(se, face_s, size):
        if _clearly_better(sb, sa, size):
            sigma = _sgn(_col_dot(rot_b, kb, dx, dy, dz))
            cnt = _face_contacts(
                rot_b, pos_b, half_b, kb, sigma, rot_a, pos_a, half_a, np.bool_(True), margin, scratch, out
            )
        else:
            sigma = -_sgn(_col_dot(rot_a, ka, dx, dy, dz))
            cnt = _face_contacts(
                rot_a, pos_a, half_a, ka, sigma, rot_b, pos_b, half_b, np.bool_(False), margin, scratch, out
            )
        if cnt > 0:
            return cnt
    return _edge_contact(rot_a, pos_a, half_a, ei, rot_b, pos_b, half_b, ej, nx, ny, nz, se, out)


# --------------------------------------------------------------------------------------------- capsule-box


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _slope(seg, h, t):
    """Half the derivative in t of the squared distance from seg[0] + t * seg[1] to the box of half extents h."""
    g = 0.0
    for i in range(3):
        x = seg[0, i] + t * seg[1, i]
        if x > h[i]:
            g += seg[1, i] * (x - h[i])
        elif x < -h[i]:
            g += seg[1, i] * (x + h[i])
    return g


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _closest_param(seg, h):
    """t in [0, 1] of the segment point seg[0] + t * seg[1] closest to the box of half extents h.

    The squared distance is convex and piecewise quadratic in t, its pieces split where a coordinate crosses a
    face plane: find the piece where its slope turns positive, then that piece's minimum (exact)."""
    if _slope(seg, h, 0.0) > 0.0:
        return 0.0
    if _slope(seg, h, 1.0) <= 0.0:
        return 1.0
    lo = 0.0
    for i in range(3):
        if seg[1, i] != 0.0:
            for g in (1.0, -1.0):
                tc = (g * h[i] - seg[0, i]) / seg[1, i]
                if lo < tc < 1.0 and _slope(seg, h, tc) <= 0.0:
                    lo = tc
    hi = 1.0
    for i in range(3):
        if seg[1, i] != 0.0:
            for g in (1.0, -1.0):
                tc = (g * h[i] - seg[0, i]) / seg[1, i]
                if lo < tc < hi:
                    hi = tc
    mid = 0.5 * (lo + hi)
    num = 0.0
    den = 0.0
    for i in range(3):
        x = seg[0, i] + mid * seg[1, i]
        if x > h[i] or x < -h[i]:
            num += seg[1, i] * (seg[0, i] - _sgn(x) * h[i])
            den += seg[1, i] * seg[1, i]
    if den == 0.0:  # flat piece: only from rounding, the slope is positive at hi
        return lo
    return min(max(-num / den, lo), hi)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _exit_depth(seg, seglen, r, t, k, sigma):
    """How far the capsule reaches below its segment point at t along -sigma * e_k (the capsule's surface
    point under it), through the cylinder or, past the segment's end, through that end's cap."""
    if seglen == 0.0:
        return r
    c = sigma * seg[1, k] / seglen
    one_minus = 1.0 - c * c
    if one_minus > 0.0:
        s_cyl = r / math.sqrt(one_minus)
        lam = t * seglen - s_cyl * c
        if 0.0 <= lam <= seglen:
            return s_cyl
    w = t - (0.0 if c > 0.0 else 1.0)  # the point minus the end, in units of the segment
    b = sigma * w * seg[1, k]
    return b + math.sqrt(max(b * b - w * w * seglen * seglen + r * r, 0.0))


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _capsule_face(seg, seglen, r, h, k, sigma, rot_b, pos_b, margin, eps, out):
    """Capsule on the box face sigma * e_k: the part of the segment over the face (side planes widened by
    eps); both its ends when the capsule lies (nearly) parallel to the face, else the deeper end.

    The callers' closest (or touching) segment point is over the face, within eps: the part is not empty."""
    ta = 0.0
    tb = 1.0
    for m in ((k + 1) % 3, (k + 2) % 3):
        if seg[1, m] != 0.0:
            hm = h[m] + eps
            t1 = (-hm - seg[0, m]) / seg[1, m]
            t2 = (hm - seg[0, m]) / seg[1, m]
            ta = max(ta, min(t1, t2))
            tb = min(tb, max(t1, t2))
    two = abs(seg[1, k]) < CAPSULE_PARALLEL * seglen and (tb - ta) * seglen > eps
    if not two and sigma * seg[1, k] * (tb - ta) < 0.0:  # the far end of the part is the deeper one
        ta = tb
    nx = sigma * rot_b[0, k]
    ny = sigma * rot_b[1, k]
    nz = sigma * rot_b[2, k]
    n = np.int64(0)
    for q in range(2 if two else 1):
        t = ta if q == 0 else tb
        sep = sigma * (seg[0, k] + t * seg[1, k]) - h[k] - _exit_depth(seg, seglen, r, t, k, sigma)
        if sep < margin:
            p0 = min(max(seg[0, 0] + t * seg[1, 0], -h[0]), h[0])
            p1 = min(max(seg[0, 1] + t * seg[1, 1], -h[1]), h[1])
            p2 = min(max(seg[0, 2] + t * seg[1, 2], -h[2]), h[2])
            if k == 0:
                p0 = sigma * h[0]
            elif k == 1:
                p1 = sigma * h[1]
            else:
                p2 = sigma * h[2]
            _write(out, n, rot_b, pos_b, p0, p1, p2, nx, ny, nz, sep)
            n += 1
    return n


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _capsule_edge(seg, h, k, n0, n1, n2, sep, rot_b, pos_b, out):
    """One point: where the box edge along e_k farthest along n comes closest to the segment."""
    # a point of that edge's line: coordinate k 0 (n_k is 0), the others at the corner farthest along n
    c0 = 0.0 if k == 0 else _sgn(n0) * h[0]
    c1 = 0.0 if k == 1 else _sgn(n1) * h[1]
    c2 = 0.0 if k == 2 else _sgn(n2) * h[2]
    w0 = seg[0, 0] - c0
    w1 = seg[0, 1] - c1
    w2 = seg[0, 2] - c2
    dd = seg[1, 0] * seg[1, 0] + seg[1, 1] * seg[1, 1] + seg[1, 2] * seg[1, 2]
    dw = seg[1, 0] * w0 + seg[1, 1] * w1 + seg[1, 2] * w2
    wk = w0 if k == 0 else (w1 if k == 1 else w2)
    dk = seg[1, k]
    t = min(max((dk * wk - dw) / (dd - dk * dk), 0.0), 1.0)  # dd - dk^2 >= (PARALLEL * |d|)^2
    u = min(max(wk + t * dk, -h[k]), h[k])
    if k == 0:
        c0 = u
    elif k == 1:
        c1 = u
    else:
        c2 = u
    nx, ny, nz = rotated(rot_b, n0, n1, n2)
    _write(out, 0, rot_b, pos_b, c0, c1, c2, nx, ny, nz, sep)
    return 1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _capsule_sat(seg, seglen, r, h, size, margin, eps, rot_b, pos_b, out):
    """Segment touching or cutting the box: the axis of least penetration among the box's face normals and
    the box-axis x segment directions."""
    fs = -math.inf
    fk = np.int64(0)
    fsig = 1.0
    for k in range(3):
        lo = min(seg[0, k], seg[0, k] + seg[1, k])
        hi = max(seg[0, k], seg[0, k] + seg[1, k])
        s_plus = lo - r - h[k]
        s_minus = -hi - r - h[k]
        s = max(s_plus, s_minus)
        if s > fs:
            fs = s
            fk = k
            fsig = 1.0 if s_plus >= s_minus else -1.0
    es = -math.inf
    ek = np.int64(0)
    e0 = e1 = e2 = 0.0
    for k in range(3):
        # e_k x d
        l0 = 0.0 if k == 0 else (seg[1, 2] if k == 1 else -seg[1, 1])
        l1 = 0.0 if k == 1 else (seg[1, 0] if k == 2 else -seg[1, 2])
        l2 = 0.0 if k == 2 else (seg[1, 1] if k == 0 else -seg[1, 0])
        ln = math.sqrt(l0 * l0 + l1 * l1 + l2 * l2)
        if ln <= PARALLEL * seglen:
            continue
        l0 /= ln
        l1 /= ln
        l2 /= ln
        a = seg[0, 0] * l0 + seg[0, 1] * l1 + seg[0, 2] * l2  # the same for every segment point
        rb = h[0] * abs(l0) + h[1] * abs(l1) + h[2] * abs(l2)
        g = _sgn(a)
        s = abs(a) - r - rb
        if s > es:
            es = s
            ek = k
            e0 = g * l0
            e1 = g * l1
            e2 = g * l2
    if max(fs, es) >= margin:
        return 0
    if _clearly_better(es, fs, size):
        return _capsule_edge(seg, h, ek, e0, e1, e2, es, rot_b, pos_b, out)
    return _capsule_face(seg, seglen, r, h, fk, fsig, rot_b, pos_b, margin, eps, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def capsule_box(rot_a, pos_a, radius_a, half_height_a, rot_b, pos_b, half_b, margin, scratch, out):
    """Capsule A on box B, in B's frame. Apart: the closest points (two points when the capsule lies along the
    face it is over); touching or cutting the box: SAT. The segment runs from the capsule's local +x end,
    whose point comes first, as PhysX orders them (a capsule rolling down a box slope drifted along its axis
    the other way from PhysX's taken from the other end)."""
    ex = -half_height_a * rot_a[0, 0]
    ey = -half_height_a * rot_a[1, 0]
    ez = -half_height_a * rot_a[2, 0]
    for m in range(3):  # the segment: scratch[0] + t * scratch[1], t in [0, 1]
        scratch[0, m] = _col_dot(rot_b, m, pos_a[0] - ex - pos_b[0], pos_a[1] - ey - pos_b[1], pos_a[2] - ez - pos_b[2])
        scratch[1, m] = 2.0 * _col_dot(rot_b, m, ex, ey, ez)
    seglen = math.sqrt(scratch[1, 0] ** 2 + scratch[1, 1] ** 2 + scratch[1, 2] ** 2)
    size = max(half_b[0], half_b[1], half_b[2]) + half_height_a + radius_a
    eps = TOUCH * size
    t = _closest_param(scratch, half_b)
    d2 = 0.0
    outside = np.int64(0)
    k = np.int64(0)
    for m in range(3):
        x = scratch[0, m] + t * scratch[1, m]
        e = x - min(max(x, -half_b[m]), half_b[m])
        if e != 0.0:
            outside += 1
            k = m
        d2 += e * e
    dist = math.sqrt(d2)
    if dist <= eps:
        return _capsule_sat(scratch, seglen, radius_a, half_b, size, margin, eps, rot_b, pos_b, out)
    if dist - radius_a >= margin:
        return 0
    if outside == 1:
        sigma = _sgn(scratch[0, k] + t * scratch[1, k])
        return _capsule_face(scratch, seglen, radius_a, half_b, k, sigma, rot_b, pos_b, margin, eps, out)
    # over an edge or a corner: along the closest points
    q0 = min(max(scratch[0, 0] + t * scratch[1, 0], -half_b[0]), half_b[0])
    q1 = min(max(scratch[0, 1] + t * scratch[1, 1], -half_b[1]), half_b[1])
    q2 = min(max(scratch[0, 2] + t * scratch[1, 2], -half_b[2]), half_b[2])
    n0 = (scratch[0, 0] + t * scratch[1, 0] - q0) / dist
    n1 = (scratch[0, 1] + t * scratch[1, 1] - q1) / dist
    n2 = (scratch[0, 2] + t * scratch[1, 2] - q2) / dist
    nx, ny, nz = rotated(rot_b, n0, n1, n2)
    _write(out, 0, rot_b, pos_b, q0, q1, q2, nx, ny, nz, dist - radius_a)
    return 1
