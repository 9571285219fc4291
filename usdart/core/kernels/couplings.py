"""Constraint rows that couple velocities: spatial and fixed tendons, mimic joints, and joints outside the
tree (loop-closing joints, joints between articulations and free bodies). For each kind one function fills
the row at the step start (Jacobian J, response M'^-1 W^T, error), one solves it; see usdart.core.kernels.rows
for the row storage.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    D_V,
    DRIVE_SWING,
    JD_ACCELERATION,
    JD_DAMPING,
    JD_MAX_FORCE,
    JD_STIFFNESS,
    JD_TARGET_POSITION,
    JD_TARGET_VELOCITY,
    JP_DISTANCE_TOLERANCE,
    JP_MAX_DISTANCE,
    JP_MIN_DISTANCE,
    JP_SPRING,
    JP_SPRING_DAMPING,
    JP_SPRING_STIFFNESS,
    LIMIT_CONE,
    LIMIT_DISTANCE,
    LIMIT_SWING,
    MP_DAMPING_RATIO,
    MP_FREQUENCY,
    MP_GEARING,
    MP_OFFSET,
    R_JACOBIAN,
    R_RESPONSE0,
    R_RESPONSE1,
    RV_ANCHOR_AXIS,
    RV_ANCHOR_CURVE,
    RV_C0,
    RV_C1,
    RV_C2,
    RV_C3,
    RV_DRIFT,
    RV_ERROR,
    RV_KEEP_BIAS,
    RV_LAMBDA,
    RV_LAMBDA2,
    RV_MAX_BIAS,
    RV_RESPONSE,
    RV_TURN_AXIS,
    TP_DAMPING,
    TP_LIMIT_STIFFNESS,
    TP_LOWER,
    TP_OFFSET,
    TP_REST,
    TP_STIFFNESS,
    TP_UPPER,
)
from .jacobian import point_jacobian
from .rows import TINY_RESPONSE, apply, rate
from .spatial import rotated
from .tree_factor import solve


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def clear(buffer, off, n):
    for a in range(n):
        buffer[off + a] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def finish_response(v_parent, v_h, v0, v1, H, jac, joff, resp, off, rv):
    """resp (holding W) <- M'^-1 W; rv's response r = J M'^-1 W^T; impulses start at zero."""
    solve(v_parent, v_h, v0, v1, H, resp, off)
    rv[RV_RESPONSE] = 0.0
    for a in range(v1 - v0):
        rv[RV_RESPONSE] += jac[joff + a] * resp[off + a]
    rv[RV_LAMBDA], rv[RV_LAMBDA2] = 0.0, 0.0


# ---- fixed tendons --------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_fixed_tendon(dof, tendon_start, tendon_dof, tendon_axis, t, v0, nv, q, jac, joff, resp, off):
    """Length L = offset + sum g_i q_i (returned without the offset); J = g, W = force coefficients."""
    clear(jac, joff, nv)
    clear(resp, off, nv)
    length = 0.0
    for e in range(tendon_start[t], tendon_start[t + 1]):
        k = tendon_dof[e]
        length += tendon_axis[e, 0] * q[k]
        jac[joff + dof[k, D_V] - v0] += tendon_axis[e, 0]
        resp[off + dof[k, D_V] - v0] += tendon_axis[e, 1]
    return length


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def tendon_coefficients(params, length, h, rv):
    """Implicit spring of a tendon row (reference §7), h its time step (PGS: dt; TGS: the substep): length,
    velocity gain, spring and limit gains."""
    stiffness, damping, limit_stiffness = params[TP_STIFFNESS], params[TP_DAMPING], params[TP_LIMIT_STIFFNESS]
    r = rv[RV_RESPONSE]
    a = h * (h * stiffness + damping)
    a2 = h * (h * limit_stiffness + damping)
    rv[RV_ERROR] = length + params[TP_OFFSET]
    ok = r > 0.0
    rv[RV_C0] = -(1.0 / (1.0 + a * r)) * a if ok else 0.0  # velocity multiplier
    rv[RV_C1] = -stiffness * (1.0 / (1.0 + a * r)) * h if ok else 0.0  # per unit length error
    rv[RV_C2] = 1.0 / (1.0 + a * r) if ok else 0.0
    rv[RV_C3] = 1.0 / (1.0 + a2 * r) if ok else 0.0


# ---- spatial tendons ------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_spatial_tendon(
    link,
    dof,
    dof_par,
    spatial_start,
    spatial_link,
    spatial_point,
    spatial_gearing,
    s,
    l0,
    v0,
    nv,
    floating,
    c,
    rot,
    pos,
    pj,
    points,
    jac,
    joff,
):
    """u = sum g_j |x_parent - x_j| along the sub-tendon's root -> leaf chain (returned without the
    offset); J = du/dnu. Unlike PhysX, which pushes only on the root and leaf links, the row acts along
    every segment: the tendon's force is the gradient of its length, so intermediate attachments carry
    it too. pj: (12, >= nv) scratch; points: (>= 2, 6) scratch."""
    clear(jac, joff, nv)
    length = 0.0
    for p in range(spatial_start[s] + 1, spatial_start[s + 1]):
        for side in range(2):
            e = p - 1 + side
            i = spatial_link[e]
            x, R = points[side], rot[i]
            for a in range(3):
                x[a] = (
                    pos[i, a]
                    + R[a, 0] * spatial_point[e, 0]
                    + R[a, 1] * spatial_point[e, 1]
                    + R[a, 2] * spatial_point[e, 2]
                )
            point_jacobian(link, dof, dof_par, l0, v0, nv, floating, c, rot, pos, i, x[0], x[1], x[2], pj, 6 * side)
        d0, d1, d2 = points[0, 0] - points[1, 0], points[0, 1] - points[1, 1], points[0, 2] - points[1, 2]
        segment = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        g = spatial_gearing[p]
        length += g * segment
        if segment > 0.0:
            n0, n1, n2 = d0 / segment, d1 / segment, d2 / segment
            for col in range(nv):
                jac[joff + col] += g * (
                    n0 * (pj[0, col] - pj[6, col]) + n1 * (pj[1, col] - pj[7, col]) + n2 * (pj[2, col] - pj[8, col])
                )
    return length


# ---- mimic joints ---------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_mimic(dof, mimic, mimic_par, i, v0, nv, q, jac, joff, resp, off):
    """q_f + G q_l + offset = 0: J = W = e_f + G e_l; returns the error."""
    clear(jac, joff, nv)
    f, l, G = mimic[i, 0], mimic[i, 1], mimic_par[i, MP_GEARING]
    jac[joff + dof[f, D_V] - v0] += 1.0
    jac[joff + dof[l, D_V] - v0] += G
    for a in range(nv):
        resp[off + a] = jac[joff + a]
    return q[f] + G * q[l] + mimic_par[i, MP_OFFSET]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_tendon(params, h, tgs, moved, rv, gvel, v0, nv, jac, joff, resp, off):
    """Spring toward the rest length plus a limit spring outside [lower, upper] (reference §7); h the row's
    time step, moved the length change since the step start (TGS, where each substep adds an increment to
    the accumulated impulses; 0 in PGS, where each iteration relaxes them by 1 - x)."""
    r = rv[RV_RESPONSE]
    if r <= TINY_RESPONSE:
        return 0.0
    length = rv[RV_ERROR] + moved
    rest, lower, upper = params[TP_REST], params[TP_LOWER], params[TP_UPPER]
    keep, keep_limit = (1.0, 1.0) if tgs else (1.0 - rv[RV_C2], 1.0 - rv[RV_C3])
    lam, lam_limit = rv[RV_LAMBDA], rv[RV_LAMBDA2]
    new = keep * lam + rv[RV_C0] * rate(gvel, v0, nv, jac, joff) + rv[RV_C1] * (length - rest)
    limit_error = length - lower if length < lower else (length - upper if length > upper else 0.0)
    new_limit = keep_limit * lam_limit - params[TP_LIMIT_STIFFNESS] * rv[RV_C3] * h * limit_error
    delta = (new - lam) + (new_limit - lam_limit)
    rv[RV_LAMBDA], rv[RV_LAMBDA2] = new, new_limit
    apply(gvel, v0, nv, resp, off, delta)
    return abs(delta) * r


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_mimic(mimic_par, i, h, hard_erp, velocity_iteration, moved, rv, gvel, v0, nv, jac, joff, resp, off):
    """q_f + G q_l + offset = 0: hard (bias hard_erp: PhysX's 0.8 in PGS, 2 / sqrt N in TGS) or compliant
    (natural frequency, damping ratio); h the row's time step, moved the error's change since the step
    start (TGS; 0 in PGS). Velocity iterations hold the rate at zero."""
    r = rv[RV_RESPONSE]
    if r <= TINY_RESPONSE:
        return 0.0
    erp, cfm = hard_erp, 0.0
    frequency, ratio = mimic_par[i, MP_FREQUENCY], mimic_par[i, MP_DAMPING_RATIO]
    if velocity_iteration:
        erp = 0.0
    elif frequency > 0.0 and ratio > 0.0:
        kp = frequency * frequency / r
        kd = 2.0 * frequency * ratio / r
        cfm = 1.0 / (h * (h * kp + kd))
        erp = h * kp / (h * kp + kd)
    impulse = -(erp * (rv[RV_ERROR] + moved) / h + rate(gvel, v0, nv, jac, joff)) / (r + cfm)
    rv[RV_LAMBDA] += impulse
    apply(gvel, v0, nv, resp, off, impulse)
    return abs(impulse) * r


# ---- joints outside the tree (loop joints, joints between trees): one bilateral row per locked axis -------
@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_joint_axis(velocity_iteration, h, erp, moved, rv, gvel, v0a, nva, v0b, nvb, jac, joff, resp, offa, offb):
    """Velocity (and, in position iterations, erp times the position error over h, within RV_MAX_BIAS) of one
    axis to zero; moved: the error's linearised change since the step start (TGS, with RV_ANCHOR_CURVE the rest of the
    anchors' motion; 0 in PGS); side b may be absent (nvb = 0)."""
    r = rv[RV_RESPONSE]
    if r <= TINY_RESPONSE:
        return 0.0
    bias = 0.0 if velocity_iteration else erp * (rv[RV_ERROR] + moved + rv[RV_ANCHOR_CURVE]) / h
    bias = min(max(bias, -rv[RV_MAX_BIAS]), rv[RV_MAX_BIAS])
    current = rate(gvel, v0a, nva, jac, joff) + rate(gvel, v0b, nvb, jac, joff + nva) + rv[RV_DRIFT]
    impulse = -(bias + current) / r
    rv[RV_LAMBDA] += impulse
    apply(gvel, v0a, nva, resp, offa, impulse)
    apply(gvel, v0b, nvb, resp, offb, impulse)
    return abs(impulse) * r


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def orthogonalize_joint(row, row_value, first, last, nv, nvb, jac, resp):
    """Make a joint's locked-axis rows first..last (filled) independent, as PhysX does for a joint's equality
    rows: Gram-Schmidt in the inner product <a, b> = J_a M'^-1 J_b^T, each row minus its components along
    the earlier ones, with its Jacobian, responses (nv entries of side a, nvb of side b) and position error
    combined alike. The rows still lock the same motions, but an impulse on one no longer disturbs the
    others, so Gauss-Seidel holds a welded or hinged body in one sweep instead of letting it sag."""
    for k in range(first, last + 1):
        orthogonalize_row(row, row_value, k, first, k - 1, nv, nvb, jac, resp)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def orthogonalize_row(row, row_value, k, first, last, nv, nvb, jac, resp):
    """Row k minus its components along rows first..last (already independent; orthogonalize_joint), its
    Jacobian, responses, error and link-force axes alike, and its response recomputed. PhysX makes a joint's
    limit rows so against its equality rows (preprocessRows), so a limit's impulse leaves the locked axes be."""
    rk, jk, ak, bk = row_value[k], row[k, R_JACOBIAN], row[k, R_RESPONSE0], row[k, R_RESPONSE1]
    for j in range(first, last + 1):
        rj, jj, aj, bj = row_value[j], row[j, R_JACOBIAN], row[j, R_RESPONSE0], row[j, R_RESPONSE1]
        if rj[RV_RESPONSE] <= TINY_RESPONSE:
            continue
        dot = 0.0
        for a in range(nv):
            dot += jac[jk + a] * resp[aj + a]
        for b in range(nvb):
            dot += jac[jk + nv + b] * resp[bj + b]
        c = dot / rj[RV_RESPONSE]
        for a in range(nv + nvb):
            jac[jk + a] -= c * jac[jj + a]
        for a in range(nv):
            resp[ak + a] -= c * resp[aj + a]
        for b in range(nvb):
            resp[bk + b] -= c * resp[bj + b]
        rk[RV_ERROR] -= c * rj[RV_ERROR]
        rk[RV_DRIFT] -= c * rj[RV_DRIFT]
        for a in range(3):
            rk[RV_ANCHOR_AXIS + a] -= c * rj[RV_ANCHOR_AXIS + a]
            rk[RV_TURN_AXIS + a] -= c * rj[RV_TURN_AXIS + a]
    response = 0.0
    for a in range(nv):
        response += jac[jk + a] * resp[ak + a]
    for b in range(nvb):
        response += jac[jk + nv + b] * resp[bk + b]
    rk[RV_RESPONSE] = response


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def joint_frame_world(F, link, rot, pos, out):
    """out[:3, :] = world pose of a joint frame F (4x4, in its link's frame; the world frame when link < 0)."""
    for a in range(3):
        for b in range(4):
            if link < 0:
                out[a, b] = F[a, b]
            else:
                acc = pos[link, a] if b == 3 else 0.0
                for e in range(3):
                    acc += rot[link, a, e] * F[e, b]
                out[a, b] = acc


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def relative_quaternion(A, B, out):
    """out[:4] = [w, x, y, z], the unit quaternion of A^T B (rotation blocks of two frames; B's turn seen in
    A's axes), w >= 0."""

    def rel(a, b):
        return A[0, a] * B[0, b] + A[1, a] * B[1, b] + A[2, a] * B[2, b]

    m00, m11, m22 = rel(0, 0), rel(1, 1), rel(2, 2)
    trace = m00 + m11 + m22
    if trace > 0.0:  # the largest of 4 w^2, 4 x^2, 4 y^2, 4 z^2 sets the division (Shepperd's method)
        s = 2.0 * math.sqrt(1.0 + trace)
        w, x, y, z = 0.25 * s, (rel(2, 1) - rel(1, 2)) / s, (rel(0, 2) - rel(2, 0)) / s, (rel(1, 0) - rel(0, 1)) / s
    elif m00 >= m11 and m00 >= m22:
        s = 2.0 * math.sqrt(max(1.0 + m00 - m11 - m22, 1e-300))
        w, x, y, z = (rel(2, 1) - rel(1, 2)) / s, 0.25 * s, (rel(0, 1) + rel(1, 0)) / s, (rel(0, 2) + rel(2, 0)) / s
    elif m11 >= m22:
        s = 2.0 * math.sqrt(max(1.0 - m00 + m11 - m22, 1e-300))
        w, x, y, z = (rel(0, 2) - rel(2, 0)) / s, (rel(0, 1) + rel(1, 0)) / s, 0.25 * s, (rel(1, 2) + rel(2, 1)) / s
    else:
        s = 2.0 * math.sqrt(max(1.0 - m00 - m11 + m22, 1e-300))
        w, x, y, z = (rel(1, 0) - rel(0, 1)) / s, (rel(0, 2) + rel(2, 0)) / s, (rel(1, 2) + rel(2, 1)) / s, 0.25 * s
    sign = -1.0 if w < 0.0 else 1.0
    norm = sign / math.sqrt(w * w + x * x + y * y + z * z)
    out[0], out[1], out[2], out[3] = w * norm, x * norm, y * norm, z * norm


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def joint_jacobian(angular, n0, n1, n2, pj, sides, nv0, nv1, jac, joff, rv):
    """A joint row along world direction n (angular: the sides' relative turn about it; else their frame
    origins' relative motion along it), from the point Jacobians pj (rows 0-5: A's side, 6-11: B's side),
    in blocks by `sides` (fill_joint_axis); the row's linear and angular axes for its link forces."""
    base = 3 if angular else 0
    for col in range(nv0):
        ja = n0 * pj[base, col] + n1 * pj[base + 1, col] + n2 * pj[base + 2, col]
        jb = n0 * pj[6 + base, col] + n1 * pj[7 + base, col] + n2 * pj[8 + base, col]
        jac[joff + col] = jb - ja if sides == 0 else (jb if sides == 3 else -ja)
    for col in range(nv1 if sides == 1 else 0):
        jac[joff + nv0 + col] = n0 * pj[6 + base, col] + n1 * pj[7 + base, col] + n2 * pj[8 + base, col]
    linear = 0.0 if angular else 1.0
    rv[RV_ANCHOR_AXIS], rv[RV_ANCHOR_AXIS + 1], rv[RV_ANCHOR_AXIS + 2] = linear * n0, linear * n1, linear * n2
    turn = 1.0 - linear
    rv[RV_TURN_AXIS], rv[RV_TURN_AXIS + 1], rv[RV_TURN_AXIS + 2] = turn * n0, turn * n1, turn * n2
    rv[RV_ANCHOR_CURVE] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def ellipse_point(y, z, ry, rz):
    """PhysX's PxEllipseClamp: the point of the ellipse (y / ry)^2 + (z / rz)^2 = 1 nearest (y, z), by the
    Lagrange multiplier's Newton iteration (a point inside returns where the first guess leaves it, as
    PhysX's does)."""
    qy, qz = abs(y), abs(z)
    if ry >= rz and qz < 1e-6:
        return (ry if y > 0.0 else -ry), 0.0
    if ry < rz and qy < 1e-6:
        return 0.0, (rz if z > 0.0 else -rz)
    ey, ez = ry * ry, rz * rz
    t = max(ry * qy - ey, rz * qz - ez)
    dy = dz = 0.0
    for _ in range(20):
        dy, dz = 1.0 / (t + ey), 1.0 / (t + ez)
        fy, fz = ry * qy * dy, rz * qz * dz
        f = fy * fy + fz * fz - 1.0
        if f < 1e-4:
            break
        t += f / (2.0 * (fy * fy * dy + fz * fz * dz))
    return ey * y * dy, ez * z * dz


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def swing_of(rel):
    """(w, y, z) of the swing of a relative rotation rel (A^T B, taken with w >= 0): rel times the inverse of
    its twist about x (PhysX's PxSeparateSwingTwist; the swing's x part is 0)."""
    w, x, y, z = rel[0], rel[1], rel[2], rel[3]
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    tw, tx = 1.0, 0.0
    if x != 0.0:
        norm = math.sqrt(w * w + x * x)
        tw, tx = w / norm, x / norm
    return w * tw + x * tx, tw * y - z * tx, tw * z + y * tx


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def cone_limit(rel, y_max, z_max):
    """A spherical joint's swing cone as PhysX's D6 limits it (Cm::ConeLimitHelperTanLess::getLimit): the
    swing of the relative rotation rel (A^T B, w >= 0; its twist about x split off, PxSeparateSwingTwist), its
    swing angles clamped to the cone's ellipse of half-angles y_max, z_max; returns the row's axis in A's
    frame (a turn about it moves B's x axis out of the cone) and the error (the sine of the angle left to
    the cone, > 0 inside)."""
    sw, sy, sz = swing_of(rel)
    twist_axis_x = 1.0 - 2.0 * (sy * sy + sz * sz)  # B's x axis in A's frame
    twist_axis_y, twist_axis_z = 2.0 * sw * sz, -2.0 * sw * sy
    py, pz = ellipse_point(4.0 * math.atan2(sy, 1.0 + sw), 4.0 * math.atan2(sz, 1.0 + sw), y_max, z_max)
    ny, nz = py / (y_max * y_max), pz / (z_max * z_max)
    ry, rz = math.tan(0.25 * py), math.tan(0.25 * pz)  # the cone's edge as a tan-quarter rotation vector
    r2 = ry * ry + rz * rz
    a, b = 1.0 - r2, 1.0 / (1.0 + r2)
    v1 = 2.0 * a * b * b
    line_x, line_y, line_z = v1 * a - 1.0, v1 * 2.0 * rz, -v1 * 2.0 * ry  # the cone's edge line
    rd = ry * ny + rz * nz
    dv1 = -4.0 * rd * (3.0 - r2) * b * b * b
    n_x = v1 * (-2.0 * rd) + dv1 * a  # the edge's derivative along the ellipse's normal
    n_y = v1 * (2.0 * nz) + dv1 * 2.0 * rz
    n_z = v1 * (-2.0 * ny) - dv1 * 2.0 * ry
    length = math.sqrt(n_x * n_x + n_y * n_y + n_z * n_z)
    ax = (line_y * n_z - line_z * n_y) / length
    ay = (line_z * n_x - line_x * n_z) / length
    az = (line_x * n_y - line_y * n_x) / length
    cx, cy, cz = line_y * az - line_z * ay, line_z * ax - line_x * az, line_x * ay - line_y * ax
    return ax, ay, az, cx * twist_axis_x + cy * twist_axis_y + cz * twist_axis_z


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_joint_limit(code, frames, rel, pj, sides, nv0, nv1, jac, joff, limits, rv):
    """One side of a limited free axis (code: the axis, [x, y, z, rotX, rotY, rotZ] of the joint frame, + 6
    for the upper side; LIMIT_SWING + that for a D6's swing; LIMIT_CONE a spherical joint's cone), as PhysX's
    D6 joint limits it: a linear axis by B's origin along A's axis, a rotation by the angle of the turn from
    A to B about it (PhysX's twist, 2 atan2(v_a, w) with w >= 0) about B's axis, a swing by the angle of
    the turn's swing part (PhysX's pyramid), the cone by `cone_limit`. The error is the distance to the
    limit (>= 0 while within it), J its rate."""
    A, B = frames[0], frames[1]
    if code == LIMIT_CONE:  # PhysX's row: its axis on body0's side, the error's rate (omega_A - omega_B) . n
        ax, ay, az, error = cone_limit(rel, limits[4, 1], limits[5, 1])
        n0, n1, n2 = rotated(A, ax, ay, az)
        joint_jacobian(True, -n0, -n1, -n2, pj, sides, nv0, nv1, jac, joff, rv)
        rv[RV_ERROR] = error
        rv[RV_KEEP_BIAS] = 1.0 if error > 0.0 else 0.0
        return
    swing = code >= LIMIT_SWING
    axis, upper = (code - LIMIT_SWING if swing else code) % 6, (code - LIMIT_SWING if swing else code) >= 6
    a = axis % 3
    if swing:  # a D6's swing about y or z (PhysX's pyramid): its angle 4 atan2(s_a, 1 + s_w), about A s e_a
        sw, sy, sz = swing_of(rel)
        value = 4.0 * math.atan2(sy if a == 1 else sz, 1.0 + sw)
        if a == 1:
            ex, ey, ez = -2.0 * sw * sz, 1.0 - 2.0 * sz * sz, 2.0 * sy * sz
        else:
            ex, ey, ez = 2.0 * sw * sy, 2.0 * sy * sz, 1.0 - 2.0 * sy * sy
        n0, n1, n2 = rotated(A, ex, ey, ez)
    elif axis >= 3:
        w, v = rel[0], rel[1 + a]
        if w < 0.0:
            w, v = -w, -v
        value = 2.0 * math.atan2(v, w)
        n0, n1, n2 = B[0, a], B[1, a], B[2, a]
    else:
        n0, n1, n2 = A[0, a], A[1, a], A[2, a]
        value = n0 * (B[0, 3] - A[0, 3]) + n1 * (B[1, 3] - A[1, 3]) + n2 * (B[2, 3] - A[2, 3])
    sign = -1.0 if upper else 1.0
    joint_jacobian(axis >= 3, sign * n0, sign * n1, sign * n2, pj, sides, nv0, nv1, jac, joff, rv)
    rv[RV_ERROR] = limits[axis, 1] - value if upper else value - limits[axis, 0]
    rv[RV_KEEP_BIAS] = 1.0 if rv[RV_ERROR] > 0.0 else 0.0


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_joint_limit(velocity_iteration, h, erp, moved, rv, gvel, v0a, nva, v0b, nvb, jac, joff, resp, offa, offb):
    """A limit side as PhysX's hard D6 limit row: the accumulated impulse stays >= 0 (it only pushes away
    from the limit), the bias lets the axis approach by at most the distance left (erp times the error over
    h; the speed it pushes back with is capped by RV_MAX_BIAS), and a limit not reached at the step start
    keeps that bias in the velocity iterations (PhysX's eKEEPBIAS), one reached drops it. moved (and
    RV_ANCHOR_CURVE): as solve_joint_axis's."""
    r = rv[RV_RESPONSE]
    if r <= TINY_RESPONSE:
        return 0.0
    error = rv[RV_ERROR] + moved + rv[RV_ANCHOR_CURVE]
    keep = rv[RV_KEEP_BIAS] != 0.0
    bias = 0.0 if velocity_iteration and not keep else max(erp * error / h, -rv[RV_MAX_BIAS])
    current = rate(gvel, v0a, nva, jac, joff) + rate(gvel, v0b, nvb, jac, joff + nva) + rv[RV_DRIFT]
    total = max(rv[RV_LAMBDA] - (bias + current) / r, 0.0)
    impulse = total - rv[RV_LAMBDA]
    rv[RV_LAMBDA] = total
    apply(gvel, v0a, nva, resp, offa, impulse)
    apply(gvel, v0b, nvb, resp, offb, impulse)
    return abs(impulse) * r


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_joint_drive(code, frames, rel, pj, sides, nv0, nv1, jac, joff, drives, rv):
    """A driven free axis (code: [x, y, z, rotX, rotY, rotZ] of the joint frame, or DRIVE_SWING + rotY / rotZ;
    drives: the joint's JD_* rows) as PhysX's D6 joint drives it, along A's axis: a linear axis by B's origin
    along it less the target position; a rotation by delta = rel conj(target) (`drive_target_rotation`, its
    sign taken nearer; that order measured on ovphysx, whose motion does not follow PhysX's source's conj(target)
    rel once a target is off more than one axis): about its own axis (a revolute's, a D6's twist) by 2 delta_a
    (PhysX's -2 delta.x), a D6's swing about y or z by the z or -y component of delta's x axis, negated
    (PhysX's swing1 / swing2 rows); J the rate of that error."""
    A, B = frames[0], frames[1]
    axis = code % 6
    a = axis % 3
    n0, n1, n2 = A[0, a], A[1, a], A[2, a]
    if axis < 3:
        error = n0 * (B[0, 3] - A[0, 3]) + n1 * (B[1, 3] - A[1, 3]) + n2 * (B[2, 3] - A[2, 3])
        error -= drives[axis, JD_TARGET_POSITION]
    else:
        tw, tx, ty, tz = drive_target_rotation(
            drives[3, JD_TARGET_POSITION], drives[4, JD_TARGET_POSITION], drives[5, JD_TARGET_POSITION]
        )
        w, x, y, z = rel[0], rel[1], rel[2], rel[3]
        if tw * w + tx * x + ty * y + tz * z < 0.0:
            tw, tx, ty, tz = -tw, -tx, -ty, -tz
        dw = w * tw + x * tx + y * ty + z * tz  # delta = rel conj(target)
        dx = x * tw - w * tx - y * tz + z * ty
        dy = y * tw - w * ty + x * tz - z * tx
        dz = z * tw - w * tz - x * ty + y * tx
        if code >= DRIVE_SWING:
            error = 2.0 * (dw * dy - dx * dz) if a == 1 else 2.0 * (dx * dy + dw * dz)
        else:
            error = 2.0 * (dx if a == 0 else (dy if a == 1 else dz))
    joint_jacobian(axis >= 3, n0, n1, n2, pj, sides, nv0, nv1, jac, joff, rv)
    rv[RV_ERROR] = error


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def drive_target_rotation(rx, ry, rz):
    """[w, x, y, z] of a joint drive's target rotation from its rotX, rotY, rotZ targets (rad): the turn about
    z times that about y times that about x, as PhysX reads them from USD (measured on ovphysx)."""
    cx, sx = math.cos(0.5 * rx), math.sin(0.5 * rx)
    cy, sy = math.cos(0.5 * ry), math.sin(0.5 * ry)
    cz, sz = math.cos(0.5 * rz), math.sin(0.5 * rz)
    w, x, y, z = cz * cy, -sz * sy, cz * sy, sz * cy  # qz qy
    return w * cx - x * sx, w * sx + x * cx, y * cx + z * sx, z * cx - y * sx


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_joint_drive(
    drive, tgs, velocity_iteration, dt, h, moved, rv, gvel, v0a, nva, v0b, nvb, jac, joff, resp, offa, offb
):
    """A drive row: `implicit_spring` with the drive's gains and target velocity, its step's impulse within
    maxForce dt."""
    cap = drive[JD_MAX_FORCE] * dt
    return implicit_spring(
        drive[JD_STIFFNESS], drive[JD_DAMPING], drive[JD_TARGET_VELOCITY], drive[JD_ACCELERATION] != 0.0, -cap, cap,
        tgs, velocity_iteration, h, moved, rv, gvel, v0a, nva, v0b, nvb, jac, joff, resp, offa, offb,
    )  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def implicit_spring(
    k, c, target_velocity, acceleration, low, high, tgs, velocity_iteration, h, moved, rv, gvel, v0a, nva, v0b,
    nvb, jac, joff, resp, offa, offb,
):  # fmt: skip
    """A spring row as PhysX solves one (DyCpuGpu1dConstraint.h compute1dConstraintSolverConstants*): with
    a = h (h k + c) over the rows' time step h, the impulse that makes the spring's force at the end of it,
    b - a J v with b = h (c v_target - k error); scaled by x = 1 / (1 + a r) (an acceleration spring: by
    x = 1 / (1 + a), over r). PGS keeps a (1 - x) share of the impulse so far each pass (the sweeps converge
    to the implicit step), TGS adds a substep's impulse on the error moved so far and is off in the velocity
    iterations; the step's accumulated impulse stays within [low, high]."""
    if tgs and velocity_iteration:
        return 0.0
    r = rv[RV_RESPONSE]
    if r <= TINY_RESPONSE:
        return 0.0
    a = h * (h * k + c)
    error = rv[RV_ERROR] + moved + rv[RV_ANCHOR_CURVE]
    current = rate(gvel, v0a, nva, jac, joff) + rate(gvel, v0b, nvb, jac, joff + nva) + rv[RV_DRIFT]
    push = h * (c * target_velocity - k * error) - a * current
    if acceleration:
        x = 1.0 / (1.0 + a)
        push /= r
    else:
        x = 1.0 / (1.0 + a * r)
    before = rv[RV_LAMBDA]
    total = before + x * push if tgs else (1.0 - x) * before + x * push
    total = min(max(total, low), high)
    impulse = total - before
    rv[RV_LAMBDA] = total
    apply(gvel, v0a, nva, resp, offa, impulse)
    apply(gvel, v0b, nvb, resp, offb, impulse)
    return abs(impulse) * r


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_joint_distance(code, frames, pj, sides, nv0, nv1, jac, joff, par, rv):
    """A distance joint's row (code: LIMIT_DISTANCE + 6 side) as PhysX's distance joint makes it: along the
    line from A's origin to B's (-x where they meet), error the distance d less the minimum, plus PhysX's
    tolerance (side 0, >= 0 while allowed), the maximum plus the tolerance less d (side 1), or d's distance
    from the tolerance band about the one length (side 2, signed as d - length); J the rate of that error.
    A one-sided row keeps its bias in the velocity iterations while d is within its bound (eKEEPBIAS)."""
    A, B = frames[0], frames[1]
    d0, d1, d2 = B[0, 3] - A[0, 3], B[1, 3] - A[1, 3], B[2, 3] - A[2, 3]
    d = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    n0, n1, n2 = (d0 / d, d1 / d, d2 / d) if d >= 1.192092896e-07 else (-1.0, 0.0, 0.0)
    side, tolerance = (code - LIMIT_DISTANCE) // 6, par[JP_DISTANCE_TOLERANCE]
    low, high = par[JP_MIN_DISTANCE], par[JP_MAX_DISTANCE]
    sign = -1.0 if side == 1 else 1.0
    joint_jacobian(False, sign * n0, sign * n1, sign * n2, pj, sides, nv0, nv1, jac, joff, rv)
    if side == 0:
        rv[RV_ERROR] = d - low + tolerance
        rv[RV_KEEP_BIAS] = 1.0 if d >= low else 0.0
    elif side == 1:
        rv[RV_ERROR] = high + tolerance - d
        rv[RV_KEEP_BIAS] = 1.0 if d <= high else 0.0
    else:
        error = d - high
        rv[RV_ERROR] = error - tolerance if error > tolerance else (error + tolerance if error < -tolerance else 0.0)
        rv[RV_KEEP_BIAS] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_joint_distance(
    par, code, tgs, velocity_iteration, h, erp, moved, rv, gvel, v0a, nva, v0b, nvb, jac, joff, resp, offa, offb
):
    """A distance joint's row: with its spring, `implicit_spring` (target velocity 0, a one-sided row's
    impulse >= 0); without, a one-sided row as a hard limit side, the one-length row as a locked axis."""
    equality = code == LIMIT_DISTANCE + 12
    if par[JP_SPRING] != 0.0:
        return implicit_spring(
            par[JP_SPRING_STIFFNESS], par[JP_SPRING_DAMPING], 0.0, False, -math.inf if equality else 0.0, math.inf,
            tgs, velocity_iteration, h, moved, rv, gvel, v0a, nva, v0b, nvb, jac, joff, resp, offa, offb,
        )  # fmt: skip
    if equality:
        return solve_joint_axis(
            velocity_iteration, h, erp, moved, rv, gvel, v0a, nva, v0b, nvb, jac, joff, resp, offa, offb
        )
    return solve_joint_limit(
        velocity_iteration, h, erp, moved, rv, gvel, v0a, nva, v0b, nvb, jac, joff, resp, offa, offb
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_joint_axis(axis, frames, rel, pj, sides, nv0, nv1, jac, joff, rv):
    """One locked axis of a joint whose frames (world; A on body0's side, B on body1's), relative quaternion
    `rel` ([w, x, y, z] of A^T B) and point Jacobians (pj rows 0-5: A's side at A's origin, 6-11: B's side at
    B's origin) are known. A linear row (axes 0-2) holds B's origin to A's along A's axis; an angular row
    (3-5) holds the imaginary part v of the relative quaternion at 0 as PhysX locks a joint's rotation
    (ConstraintHelper::prepareLockedAxes): error v_a, J its rate 0.5 A (w e_a + v x e_a) . (omega_B -
    omega_A). At small errors that is half the turn about A's axis; a large error is corrected by 2 tan(angle /
    2) in a step, as in PhysX. Blocks of J by `sides`: 0: A and B on one tree (J_B - J_A); 1: two trees (-J_A,
    then +J_B at joff + nv0); 2: only A moves (-J_A); 3: only B moves (+J_B)."""
    A, B = frames[0], frames[1]
    a = axis % 3
    n0, n1, n2 = A[0, a], A[1, a], A[2, a]
    if axis >= 3:  # the row's direction: A (w e_a + v x e_a) / 2
        w, x, y, z = rel[0], rel[1], rel[2], rel[3]
        l0, l1, l2 = (w, z, -y) if a == 0 else ((-z, w, x) if a == 1 else (y, -x, w))
        n0 = 0.5 * (A[0, 0] * l0 + A[0, 1] * l1 + A[0, 2] * l2)
        n1 = 0.5 * (A[1, 0] * l0 + A[1, 1] * l1 + A[1, 2] * l2)
        n2 = 0.5 * (A[2, 0] * l0 + A[2, 1] * l1 + A[2, 2] * l2)
    joint_jacobian(axis >= 3, n0, n1, n2, pj, sides, nv0, nv1, jac, joff, rv)
    if axis < 3:
        rv[RV_ERROR] = n0 * (B[0, 3] - A[0, 3]) + n1 * (B[1, 3] - A[1, 3]) + n2 * (B[2, 3] - A[2, 3])
    else:
        rv[RV_ERROR] = rel[1 + a]
