"""Constraint rows of the step, solved by projected Gauss-Seidel on generalized velocities.

Each row has the exact response r = J M'^-1 J^T of the whole articulation (for a DOF, PhysX's r is
(M'^-1)_kk) and moves ws.gvel by M'^-1 J^T times its impulse. Per DOF: the implicit drive (maxForce or
the performance envelope), friction, limits, the velocity limit; coupling rows: spatial and fixed
tendons, mimic joints, loop-closing joints. Formulas: PhysX's PGS (reference §3-§8, seeds 003 and 004).
"""
from __future__ import annotations

import math

from numba import njit

from ..model import DRIVE_FORCE, DRIVE_NONE
from .jacobian import point_jacobian

LIMIT_ERP = 0.8  # PhysX's PGS bias coefficient for limits and hard mimic joints
TINY_RESPONSE = 1e-12


# ---- per-DOF rows -----------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def setup_dof_rows(m, st, ctl, ws, w, dt):
    nr = m.n_root
    for k in range(m.n_dofs):
        r = ws.minv[w, nr + k, nr + k]
        for a in range(4):
            ws.dof_lambda[w, a, k] = 0.0
            ws.drive_coef[w, a, k] = 0.0
        ws.limit_err[w, 0, k] = st.q[w, k] - m.dof_lower[k]
        ws.limit_err[w, 1, k] = m.dof_upper[k] - st.q[w, k]
        mode = m.drive_mode[k]
        if mode == DRIVE_NONE or m.drive_max_force[k] <= 0.0 or r <= 0.0:
            continue
        kp, kd = m.drive_stiffness[k], m.drive_damping[k]
        a = dt * (dt * kp + kd)
        if mode == DRIVE_FORCE:
            x, kappa = 1.0 / (1.0 + a * r), 1.0
        else:
            x, kappa = 1.0 / (1.0 + a), 1.0 / r
        beta = kp * x * dt * kappa
        error = ctl.target_position[w, k] - st.q[w, k]
        ws.drive_coef[w, 0, k] = -x * a * kappa
        ws.drive_coef[w, 1, k] = x * dt * kd * ctl.target_velocity[w, k] * kappa + beta * error
        ws.drive_coef[w, 2, k] = 1.0 - x
        # bound on the step's drive impulse: maxForce * dt, or maxForce itself when it is an impulse
        ws.drive_coef[w, 3, k] = m.drive_max_force[k] * (dt if m.drive_limits_are_forces[0] else 1.0)


@njit(cache=True, _nrt=False)
def _apply_dof(ws, w, nv, g, impulse):
    for a in range(nv):
        ws.gvel[w, a] += ws.minv[w, a, g] * impulse


@njit(cache=True, _nrt=False)
def _envelope_interval(J, r, delta, M, gamma):
    """Feasible [lo, hi] of the total drive impulse J for |v| <= M - gamma |J| (reference §3.5)."""
    eps = 1e-12
    inf = math.inf
    if J > 0.0:
        d1, d2 = r - gamma, r + gamma
        if abs(d2) < eps:
            return -inf, inf
        b2 = (delta + M) / d2
        if abs(d1) < eps:
            return max(0.0, inf if delta - M > 0.0 else -inf), b2
        b1 = (delta - M) / d1
        if d1 >= 0.0:
            return max(0.0, b1), min(b2, J)
        return 0.0, min(b1, b2, J)
    d1, d2 = r + gamma, r - gamma
    if abs(d1) < eps:
        return -inf, inf
    b1 = (delta - M) / d1
    if abs(d2) < eps:
        return b1, min(0.0, inf if delta + M > 0.0 else -inf)
    b2 = (delta + M) / d2
    if d2 >= 0.0:
        return max(b1, J), min(0.0, b2)
    return max(b1, b2, J), 0.0


@njit(cache=True, _nrt=False)
def _envelope_clamp(m, ctl, w, k, r, dt, lam, lam_unc, qd):
    """Two-stage clamp of the drive impulse by the performance envelope (seed 004)."""
    j_ext = ctl.joint_force[w, k] * dt
    J0, J = lam + j_ext, lam_unc + j_ext
    delta = r * J0 - qd
    j_max = m.drive_max_force[k] * dt
    lo1, hi1 = _envelope_interval(J, r, delta, m.envelope_max_velocity[k], m.envelope_gradient[k] / dt)
    rho = m.envelope_resistance[k] * dt
    if rho > 0.0:
        lo2, hi2 = _envelope_interval(J, r, delta, j_max / rho, 1.0 / rho)
    else:
        lo2, hi2 = -j_max, j_max
    lo, hi = max(lo1, lo2), min(hi1, hi2)
    if lo > hi:
        J = 0.0
    else:
        J = min(max(J, lo), hi)
    return J - j_ext


@njit(cache=True, _nrt=False)
def solve_dof_rows(m, ctl, ws, w, dt, velocity_iteration):
    """Drive, friction, limits and velocity limit of every DOF; returns the largest velocity change."""
    nr = m.n_root
    nv = nr + m.n_dofs
    largest = 0.0
    for k in range(m.n_dofs):
        g = nr + k
        r = ws.minv[w, g, g]
        if r <= TINY_RESPONSE:
            continue
        # implicit drive
        if ws.drive_coef[w, 3, k] > 0.0:
            lam = ws.dof_lambda[w, 0, k]
            qd = ws.gvel[w, g]
            unc = ws.drive_coef[w, 2, k] * lam + ws.drive_coef[w, 0, k] * qd + ws.drive_coef[w, 1, k]
            if m.envelope_on[k]:
                new = _envelope_clamp(m, ctl, w, k, r, dt, lam, unc, qd)
            else:
                bound = ws.drive_coef[w, 3, k]
                new = min(max(unc, -bound), bound)
            if new != lam:
                ws.dof_lambda[w, 0, k] = new
                _apply_dof(ws, w, nv, g, new - lam)
                largest = max(largest, abs(new - lam) * r)
        # friction: stick within the static impulse, else Coulomb + viscous (seed 003)
        if m.friction_static[k] != 0.0 or m.friction_viscous[k] != 0.0:
            lam = ws.dof_lambda[w, 1, k]
            qd = ws.gvel[w, g]
            trial = lam - qd / r
            if abs(trial) > m.friction_static[k] * dt:
                bound = (m.friction_dynamic[k] + m.friction_viscous[k] * abs(qd)) * dt
                trial = min(max(trial, -bound), bound)
            if trial != lam:
                ws.dof_lambda[w, 1, k] = trial
                _apply_dof(ws, w, nv, g, trial - lam)
                largest = max(largest, abs(trial - lam) * r)
        # limits: hard, with Baumgarte bias and a speculative term
        lo_err, hi_err = ws.limit_err[w, 0, k], ws.limit_err[w, 1, k]
        if math.isfinite(lo_err) or math.isfinite(hi_err):
            v = ws.gvel[w, g]
            lam_lo, lam_hi = ws.dof_lambda[w, 2, k], ws.dof_lambda[w, 3, k]
            delta = 0.0
            if lo_err < 0.0 or lo_err + v * dt < 0.0:
                if lo_err < 0.0:
                    target = v if velocity_iteration else -LIMIT_ERP * lo_err / dt
                else:
                    target = -lo_err / dt
                new = max(lam_lo + (target - v) / r, 0.0)
                delta = new - lam_lo
                ws.dof_lambda[w, 2, k] = new
            elif hi_err < 0.0 or hi_err - v * dt < 0.0:
                if hi_err < 0.0:
                    target = v if velocity_iteration else LIMIT_ERP * hi_err / dt
                else:
                    target = hi_err / dt
                new = min(lam_hi + (target - v) / r, 0.0)
                delta = new - lam_hi
                ws.dof_lambda[w, 3, k] = new
            elif v > 0.0 and lam_lo > 0.0:  # release what is no longer needed
                delta = max(-v / r, -lam_lo)
                ws.dof_lambda[w, 2, k] = lam_lo + delta
            elif v < 0.0 and lam_hi < 0.0:
                delta = min(-v / r, -lam_hi)
                ws.dof_lambda[w, 3, k] = lam_hi + delta
            if delta != 0.0:
                _apply_dof(ws, w, nv, g, delta)
                largest = max(largest, abs(delta) * r)
        # joint velocity limit
        vmax = m.max_joint_velocity[k]
        v = ws.gvel[w, g]
        if abs(v) > vmax:
            delta = (min(max(v, -vmax), vmax) - v) / r
            _apply_dof(ws, w, nv, g, delta)
            largest = max(largest, abs(delta) * r)
    return largest


# ---- coupling rows: fixed tendons, mimic joints, loop joints ----------------------------------------------
@njit(cache=True, _nrt=False)
def _finish_row(ws, w, row, nv):
    """row_w = M'^-1 (row's applied direction, already in row_w) and its response along row_j.

    Uses ws.gen as scratch (free once the unconstrained velocity is known)."""
    r = 0.0
    for a in range(nv):
        acc = 0.0
        for b in range(nv):
            acc += ws.minv[w, a, b] * ws.row_w[w, row, b]
        ws.gen[w, a] = acc
    for a in range(nv):
        ws.row_w[w, row, a] = ws.gen[w, a]
        r += ws.row_j[w, row, a] * ws.gen[w, a]
    ws.row_r[w, row] = r
    ws.row_lambda[w, row, 0] = 0.0
    ws.row_lambda[w, row, 1] = 0.0


@njit(cache=True, _nrt=False)
def _tendon_coefficients(ws, w, row, length, params, dt):
    """Implicit spring of a tendon row (reference §7): length, velocity gain, spring and limit gains."""
    stiffness, damping, limit_stiffness = params[0], params[1], params[2]
    r = ws.row_r[w, row]
    a = dt * (dt * stiffness + damping)
    a2 = dt * (dt * limit_stiffness + damping)
    ws.row_err[w, row] = length
    ws.row_coef[w, row, 0] = -(1.0 / (1.0 + a * r)) * a if r > 0.0 else 0.0  # velocity multiplier
    ws.row_coef[w, row, 1] = -stiffness * (1.0 / (1.0 + a * r)) * dt if r > 0.0 else 0.0  # per unit length error
    ws.row_coef[w, row, 2] = 1.0 / (1.0 + a * r) if r > 0.0 else 0.0
    ws.row_coef[w, row, 3] = 1.0 / (1.0 + a2 * r) if r > 0.0 else 0.0


@njit(cache=True, _nrt=False)
def _segment_row(m, ws, w, row, parent, child, nv):
    """Add g d|x_parent - x_child|/d nu to row_j (g: the child point's gearing); returns the distance.

    Unlike PhysX, which pushes only on the root and leaf links, the row acts along every segment: the
    tendon's force is the gradient of its length, so intermediate attachments carry it too."""
    jac = ws.point_jac[w]
    xa, xb = ws.vec6[w, 1], ws.vec6[w, 2]
    for side in range(2):
        p = parent if side == 0 else child
        link = m.spatial_link[p]
        x = xa if side == 0 else xb
        for a in range(3):
            x[a] = ws.pos[w, link, a] + ws.rot[w, link, a, 0] * m.spatial_point[p, 0] \
                + ws.rot[w, link, a, 1] * m.spatial_point[p, 1] + ws.rot[w, link, a, 2] * m.spatial_point[p, 2]
        point_jacobian(m, ws, w, link, x[0], x[1], x[2], jac, 6 * side)
    d0, d1, d2 = xa[0] - xb[0], xa[1] - xb[1], xa[2] - xb[2]
    length = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    if length > 0.0:
        g = m.spatial_gearing[child]
        n0, n1, n2 = d0 / length, d1 / length, d2 / length
        for c in range(nv):
            ws.row_j[w, row, c] += g * (n0 * (jac[0, c] - jac[6, c]) + n1 * (jac[1, c] - jac[7, c])
                                        + n2 * (jac[2, c] - jac[8, c]))
    return length


@njit(cache=True, _nrt=False)
def setup_coupling_rows(m, st, ws, w, dt):
    nr = m.n_root
    nv = nr + m.n_dofs
    row = 0
    for a in range(ws.row_j.shape[1]):
        for b in range(nv):
            ws.row_j[w, a, b] = 0.0
            ws.row_w[w, a, b] = 0.0
        ws.row_r[w, a] = 0.0
    # spatial sub-tendons: u = offset + sum g_j |x_parent - x_j| along the root -> leaf chain
    for s in range(m.spatial_params.shape[0]):
        length = m.spatial_params[s, 3]
        for p in range(m.spatial_start[s] + 1, m.spatial_start[s + 1]):
            length += m.spatial_gearing[p] * _segment_row(m, ws, w, row, p - 1, p, nv)
        for a in range(nv):
            ws.row_w[w, row, a] = ws.row_j[w, row, a]
        _finish_row(ws, w, row, nv)
        _tendon_coefficients(ws, w, row, length, m.spatial_params[s], dt)
        row += 1
    # fixed tendons: length L = sum g_i q_i + offset, force shared by the force coefficients
    for t in range(m.tendon_params.shape[0]):
        length = m.tendon_params[t, 3]
        for e in range(m.tendon_start[t], m.tendon_start[t + 1]):
            k = m.tendon_dof[e]
            length += m.tendon_gearing[e] * st.q[w, k]
            ws.row_j[w, row, nr + k] += m.tendon_gearing[e]
            ws.row_w[w, row, nr + k] += m.tendon_force_coefficient[e]
        _finish_row(ws, w, row, nv)
        _tendon_coefficients(ws, w, row, length, m.tendon_params[t], dt)
        row += 1
    # mimic joints: q_f + G q_l + offset = 0
    for i in range(m.mimic_follower.shape[0]):
        f, l, G = nr + m.mimic_follower[i], nr + m.mimic_leader[i], m.mimic_gearing[i]
        ws.row_j[w, row, f] += 1.0
        ws.row_j[w, row, l] += G
        ws.row_w[w, row, f] += 1.0
        ws.row_w[w, row, l] += G
        _finish_row(ws, w, row, nv)
        ws.row_err[w, row] = st.q[w, f - nr] + G * st.q[w, l - nr] + m.mimic_offset[i]
        row += 1
    # loop joints: each constrained axis of the joint frame is one bilateral row
    for i in range(m.loop_links.shape[0]):
        _loop_rows(m, ws, w, i, row, nv)
        row += 6


@njit(cache=True, _nrt=False)
def frame_world(m, ws, w, link, F, out):
    """out (4x4 scratch rows 0-2 used) = world pose of a joint frame F given in link's frame (or world)."""
    for a in range(3):
        for b in range(4):
            if link < 0:
                out[a, b] = F[a, b]
            else:
                acc = ws.pos[w, link, a] if b == 3 else 0.0
                for c in range(3):
                    acc += ws.rot[w, link, a, c] * F[c, b]
                out[a, b] = acc


@njit(cache=True, _nrt=False)
def relative_rotation_vector(A, B, out):
    """out[:3] = rotation vector of A^T B (rotation blocks of two frames), in A's axes."""
    def rel(a, b):
        return A[0, a] * B[0, b] + A[1, a] * B[1, b] + A[2, a] * B[2, b]

    cos_angle = min(max(0.5 * (rel(0, 0) + rel(1, 1) + rel(2, 2) - 1.0), -1.0), 1.0)
    angle = math.acos(cos_angle)
    scale = 0.5 if angle < 1e-8 else 0.5 * angle / math.sin(angle)
    out[0] = scale * (rel(2, 1) - rel(1, 2))
    out[1] = scale * (rel(0, 2) - rel(2, 0))
    out[2] = scale * (rel(1, 0) - rel(0, 1))


@njit(cache=True, _nrt=False)
def _loop_rows(m, ws, w, i, row, nv):
    A, B = ws.mat6[w, 0:3, 0:4], ws.mat6[w, 3:6, 0:4]
    frame_world(m, ws, w, m.loop_links[i, 0], m.loop_frames[i, 0], A)
    frame_world(m, ws, w, m.loop_links[i, 1], m.loop_frames[i, 1], B)
    jac = ws.point_jac[w]
    for side in range(2):
        link = m.loop_links[i, side]
        F = A if side == 0 else B
        if link < 0:
            for a in range(6):
                for c in range(nv):
                    jac[6 * side + a, c] = 0.0
        else:
            point_jacobian(m, ws, w, link, F[0, 3], F[1, 3], F[2, 3], jac, 6 * side)
    # rotation error: rotation vector of A^T B, in A's axes
    rel = ws.vec6[w, 0]
    relative_rotation_vector(A, B, rel)
    for axis in range(6):
        r_ = row + axis
        if not m.loop_locked[i, axis]:
            ws.row_r[w, r_] = 0.0
            continue
        a = axis % 3
        n0, n1, n2 = A[0, a], A[1, a], A[2, a]
        base = 0 if axis < 3 else 3
        for c in range(nv):
            value = n0 * (jac[6 + base, c] - jac[base, c]) + n1 * (jac[7 + base, c] - jac[base + 1, c]) \
                + n2 * (jac[8 + base, c] - jac[base + 2, c])
            ws.row_j[w, r_, c] = value
            ws.row_w[w, r_, c] = value
        _finish_row(ws, w, r_, nv)
        if axis < 3:
            ws.row_err[w, r_] = n0 * (B[0, 3] - A[0, 3]) + n1 * (B[1, 3] - A[1, 3]) + n2 * (B[2, 3] - A[2, 3])
        else:
            ws.row_err[w, r_] = rel[a]


@njit(cache=True, _nrt=False)
def _row_apply(ws, w, row, nv, impulse):
    for a in range(nv):
        ws.gvel[w, a] += ws.row_w[w, row, a] * impulse


@njit(cache=True, _nrt=False)
def _row_velocity(ws, w, row, nv):
    acc = 0.0
    for a in range(nv):
        acc += ws.row_j[w, row, a] * ws.gvel[w, a]
    return acc


@njit(cache=True, _nrt=False)
def _solve_tendon_row(ws, w, row, nv, params, dt):
    """Spring toward the rest length plus a limit spring outside [lower, upper] (reference §7)."""
    r = ws.row_r[w, row]
    if r <= TINY_RESPONSE:
        return 0.0
    length = ws.row_err[w, row]
    rest, lower, upper = params[4], params[5], params[6]
    x, x2 = ws.row_coef[w, row, 2], ws.row_coef[w, row, 3]
    lam, lam_limit = ws.row_lambda[w, row, 0], ws.row_lambda[w, row, 1]
    rate = _row_velocity(ws, w, row, nv)
    new = (1.0 - x) * lam + ws.row_coef[w, row, 0] * rate + ws.row_coef[w, row, 1] * (length - rest)
    limit_error = length - lower if length < lower else (length - upper if length > upper else 0.0)
    new_limit = (1.0 - x2) * lam_limit - params[2] * x2 * dt * limit_error
    delta = (new - lam) + (new_limit - lam_limit)
    ws.row_lambda[w, row, 0], ws.row_lambda[w, row, 1] = new, new_limit
    _row_apply(ws, w, row, nv, delta)
    return abs(delta) * r


@njit(cache=True, _nrt=False)
def solve_coupling_rows(m, ws, w, dt, velocity_iteration):
    nv = m.n_root + m.n_dofs
    largest = 0.0
    row = 0
    for s in range(m.spatial_params.shape[0]):
        largest = max(largest, _solve_tendon_row(ws, w, row, nv, m.spatial_params[s], dt))
        row += 1
    for t in range(m.tendon_params.shape[0]):
        largest = max(largest, _solve_tendon_row(ws, w, row, nv, m.tendon_params[t], dt))
        row += 1
    for i in range(m.mimic_follower.shape[0]):
        r = ws.row_r[w, row]
        if r > TINY_RESPONSE:
            erp, cfm = LIMIT_ERP, 0.0
            if velocity_iteration:
                erp = 0.0
            elif m.mimic_frequency[i] > 0.0 and m.mimic_damping_ratio[i] > 0.0:
                kp = m.mimic_frequency[i] ** 2 / r
                kd = 2.0 * m.mimic_frequency[i] * m.mimic_damping_ratio[i] / r
                cfm = 1.0 / (dt * (dt * kp + kd))
                erp = dt * kp / (dt * kp + kd)
            impulse = -(erp * ws.row_err[w, row] / dt + _row_velocity(ws, w, row, nv)) / (r + cfm)
            _row_apply(ws, w, row, nv, impulse)
            largest = max(largest, abs(impulse) * r)
        row += 1
    for i in range(m.loop_links.shape[0]):
        for axis in range(6):
            r = ws.row_r[w, row]
            if r > TINY_RESPONSE:
                bias = 0.0 if velocity_iteration else ws.row_err[w, row] / dt
                impulse = -(bias + _row_velocity(ws, w, row, nv)) / r
                ws.row_lambda[w, row, 0] += impulse
                _row_apply(ws, w, row, nv, impulse)
                largest = max(largest, abs(impulse) * r)
            row += 1
    return largest
