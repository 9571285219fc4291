"""Constraint rows of single DOFs: for each kind one function that fills the row at the step start, one
that solves it (couplings between DOFs and joints outside the tree: usdart.core.kernels.couplings).

A row r of the model's row table (usdart.core.layout, R_*) has a kind, a source id, and for each side
(tree) a response vector M'^-1 W^T in `resp` (the velocity change of the tree per unit impulse, W the
direction the impulse acts along) and, except DOF rows, a Jacobian J in `jac` (rate = J v). Per-step
values live in `rv = work.row_value[w, r]` (RV_*). Solving applies impulses to the generalized velocity
`gvel` (projected Gauss-Seidel) and returns |velocity change| for the convergence test. Formulas:
PhysX's PGS and TGS (reference §3-§8, seeds 003 and 004). DOF rows (drive, friction, limits, velocity
limit) share the DOF's response column of M'^-1 (for a DOF PhysX's r is (M'^-1)_kk); all but force drives
size their impulses by 1 / (r + cfm), the larger constraint-force mixing of the DOF's two links (PhysX).
The solve functions are inlined into the sweep (a sweep visits every row up to 33 times a step; a call
per row cost a quarter of a Panda step).
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    DP_DRIVE_DAMPING,
    DP_DYNAMIC_FRICTION,
    DP_ENVELOPE_GRADIENT,
    DP_ENVELOPE_MAX_VELOCITY,
    DP_ENVELOPE_RESISTANCE,
    DP_LOWER,
    DP_MAX_FORCE,
    DP_MAX_VELOCITY,
    DP_STATIC_FRICTION,
    DP_STIFFNESS,
    DP_UPPER,
    DP_VISCOUS_FRICTION,
    DRIVE_FORCE,
    RV_C0,
    RV_C1,
    RV_C2,
    RV_C3,
    RV_CFM,
    RV_DISPLACEMENT_GAIN,
    RV_LAMBDA,
    RV_LAMBDA2,
    RV_RESPONSE,
    RV_TIME_GAIN,
    SOLVER_TGS,
)

LIMIT_ERP = 0.8  # PhysX's PGS bias coefficient for limits and hard mimic joints
TINY_RESPONSE = 1e-12


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def apply(gvel, v0, nv, resp, off, impulse):
    for a in range(nv):
        gvel[v0 + a] += resp[off + a] * impulse


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def rate(gvel, v0, nv, jac, off):
    acc = 0.0
    for a in range(nv):
        acc += jac[off + a] * gvel[v0 + a]
    return acc


# ---- drive ----------------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_drive(dof_par, k, mode, dt, h, solver, q, target_position, target_velocity, limits_are_forces, rv):
    """Implicit PD drive (reference §3.3), h the drive's time step (PGS: dt; TGS: the substep dt / N):
    lambda_new = C2 lambda + C0 qd + C1 + gain_x dq + gain_t t, clamped to +-C3 (or the envelope), with
    dq the DOF's displacement and t the time since the step start (TGS; both 0 in PGS). In TGS the target
    moves at the target velocity so that it is target_position at the step end."""
    r = rv[RV_RESPONSE]
    rv[RV_LAMBDA] = 0.0
    for c in (RV_C0, RV_C1, RV_C2, RV_C3, RV_DISPLACEMENT_GAIN, RV_TIME_GAIN):
        rv[c] = 0.0
    if r <= 0.0:
        return
    kp, kd = dof_par[k, DP_STIFFNESS], dof_par[k, DP_DRIVE_DAMPING]
    a = h * (h * kp + kd)
    if mode == DRIVE_FORCE:  # the raw response; an acceleration drive's gains scale by 1 / (r + cfm)
        x, kappa = 1.0 / (1.0 + a * r), 1.0
    else:
        x, kappa = 1.0 / (1.0 + a), 1.0 / (r + rv[RV_CFM])
    beta = kp * x * h * kappa
    rv[RV_C0] = -x * a * kappa
    rv[RV_C1] = x * h * kd * target_velocity * kappa + beta * (target_position - q - (dt - h) * target_velocity)
    tgs = solver == SOLVER_TGS
    rv[RV_C2] = 1.0 if tgs else 1.0 - x
    if tgs:
        rv[RV_DISPLACEMENT_GAIN] = -beta
        rv[RV_TIME_GAIN] = beta * target_velocity
    # bound on the step's drive impulse: maxForce * dt, or maxForce itself when it is an impulse
    rv[RV_C3] = dof_par[k, DP_MAX_FORCE] * (dt if limits_are_forces != 0.0 else 1.0)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def envelope_interval(J, r, delta, M, gamma):
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


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def envelope_clamp(dof_par, k, joint_force, r, dt, lam, lam_unc, qd):
    """Two-stage clamp of the drive impulse by the performance envelope (seed 004)."""
    j_ext = joint_force * dt
    J0, J = lam + j_ext, lam_unc + j_ext
    delta = r * J0 - qd
    j_max = dof_par[k, DP_MAX_FORCE] * dt
    lo1, hi1 = envelope_interval(
        J, r, delta, dof_par[k, DP_ENVELOPE_MAX_VELOCITY], dof_par[k, DP_ENVELOPE_GRADIENT] / dt
    )
    rho = dof_par[k, DP_ENVELOPE_RESISTANCE] * dt
    if rho > 0.0:
        lo2, hi2 = envelope_interval(J, r, delta, j_max / rho, 1.0 / rho)
    else:
        lo2, hi2 = -j_max, j_max
    lo, hi = max(lo1, lo2), min(hi1, hi2)
    if lo > hi:
        J = 0.0
    else:
        J = min(max(J, lo), hi)
    return J - j_ext


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_drive(dof_par, k, envelope, joint_force, dt, span, elapsed, displacement, rv, gvel, g, v0, nv, resp, off):
    """span > 0 (TGS substeps with external forces in each): maxForce or the envelope bounds this pass's own
    impulse by what acts over span seconds (reference §3.5; PhysX resets the drive impulse every substep
    then: a saturated drive pushes evenly through the step, measured to 3e-6 rad against ovphysx, where
    bounding the step's running total put it all in the first substeps, 2e-2 rad apart over 2 s), else the
    step's accumulated impulse over dt."""
    if rv[RV_C3] <= 0.0:
        return 0.0
    r = rv[RV_RESPONSE]
    lam = rv[RV_LAMBDA]
    qd = gvel[g]
    unc = rv[RV_C2] * lam + rv[RV_C0] * qd + rv[RV_C1] + rv[RV_DISPLACEMENT_GAIN] * displacement
    unc += rv[RV_TIME_GAIN] * elapsed
    if envelope and span > 0.0:
        new = lam + envelope_clamp(dof_par, k, joint_force, r, span, 0.0, unc - lam, qd)
    elif envelope:
        new = envelope_clamp(dof_par, k, joint_force, r, dt, lam, unc, qd)
    elif span > 0.0:  # this substep's own impulse, bounded by what the limit allows over it
        bound = rv[RV_C3] * span / dt
        new = lam + min(max(unc - lam, -bound), bound)
    else:
        new = min(max(unc, -rv[RV_C3]), rv[RV_C3])
    if new == lam:
        return 0.0
    rv[RV_LAMBDA] = new
    apply(gvel, v0, nv, resp, off, new - lam)
    return abs(new - lam) * r


# ---- joint friction -------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_friction(dof_par, k, dt, substep, rv, gvel, g, v0, nv, resp, off):
    """Stick within the static impulse, else Coulomb + viscous (seed 003), on the impulse accumulated over
    the step's iterations with bounds for dt; `substep` > 0 (a TGS position iteration): on that substep's
    own impulse, with bounds for the substep (measured on PhysX: its TGS spreads the friction impulse over
    the substeps, as the seed describes for externalForcesEveryTgsIterationEnabled only)."""
    r = rv[RV_RESPONSE]
    lam = rv[RV_LAMBDA]
    qd = gvel[g]
    soft = r + rv[RV_CFM]
    if substep > 0.0:
        start, span = 0.0, substep
    else:
        start, span = lam, dt
    trial = start - qd / soft
    if abs(trial) > dof_par[k, DP_STATIC_FRICTION] * span:
        bound = (dof_par[k, DP_DYNAMIC_FRICTION] + dof_par[k, DP_VISCOUS_FRICTION] * abs(qd)) * span
        trial = min(max(trial, -bound), bound)
    if trial == start:
        return 0.0
    rv[RV_LAMBDA] = lam + trial - start
    apply(gvel, v0, nv, resp, off, trial - start)
    return abs(trial - start) * r


# ---- limits ---------------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_limit(dof_par, k, q, rv):
    """Distances to the lower and upper limit at the step start."""
    rv[RV_LAMBDA], rv[RV_LAMBDA2] = 0.0, 0.0
    rv[RV_C0] = q - dof_par[k, DP_LOWER]
    rv[RV_C1] = dof_par[k, DP_UPPER] - q


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_limit(h, erp, velocity_iteration, displacement, rv, gvel, g, v0, nv, resp, off):
    """Hard limit with a Baumgarte bias (position iterations) and a speculative term (reference §4): h the
    row's time step (PGS: dt; TGS: the substep), erp the bias coefficient (PGS: LIMIT_ERP; TGS: 2 / sqrt N),
    displacement the DOF's motion since the step start (TGS; 0 in PGS). In velocity iterations a violated
    limit's target is no motion: they take back the velocity its push-out added (measured on PhysX: a joint
    started outside its limit is pushed in by 0.8 of what remains each step in PGS and keeps no velocity, and
    in TGS keeps none either when viscous joint friction acts)."""
    r = rv[RV_RESPONSE]
    soft = r + rv[RV_CFM]
    lo_err, hi_err = rv[RV_C0] + displacement, rv[RV_C1] - displacement
    v = gvel[g]
    lam_lo, lam_hi = rv[RV_LAMBDA], rv[RV_LAMBDA2]
    delta = 0.0
    if lo_err < 0.0 or lo_err + v * h < 0.0:
        if lo_err < 0.0:
            target = 0.0 if velocity_iteration else -erp * lo_err / h
        else:
            target = -lo_err / h
        new = max(lam_lo + (target - v) / soft, 0.0)
        delta = new - lam_lo
        rv[RV_LAMBDA] = new
    elif hi_err < 0.0 or hi_err - v * h < 0.0:
        if hi_err < 0.0:
            target = 0.0 if velocity_iteration else erp * hi_err / h
        else:
            target = hi_err / h
        new = min(lam_hi + (target - v) / soft, 0.0)
        delta = new - lam_hi
        rv[RV_LAMBDA2] = new
    elif v > 0.0 and lam_lo > 0.0:  # release what is no longer needed
        delta = max(-v / soft, -lam_lo)
        rv[RV_LAMBDA] = lam_lo + delta
    elif v < 0.0 and lam_hi < 0.0:
        delta = min(-v / soft, -lam_hi)
        rv[RV_LAMBDA2] = lam_hi + delta
    if delta == 0.0:
        return 0.0
    apply(gvel, v0, nv, resp, off, delta)
    return abs(delta) * r


# ---- joint velocity limit -------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve_velocity_limit(dof_par, k, rv, gvel, g, v0, nv, resp, off):
    vmax = dof_par[k, DP_MAX_VELOCITY]
    v = gvel[g]
    if abs(v) <= vmax:
        return 0.0
    delta = (min(max(v, -vmax), vmax) - v) / (rv[RV_RESPONSE] + rv[RV_CFM])
    rv[RV_LAMBDA] += delta
    apply(gvel, v0, nv, resp, off, delta)
    return abs(delta) * rv[RV_RESPONSE]
