"""Smooth dynamics of one tree for a step: the unconstrained velocity v* = v + dt M'^-1 (tau - h - D qd).

M' = M + armature + dt * passive damping (implicit damping, as MuJoCo's Euler), factorised in
tree-sparse storage (its factor also gives the rows their responses); h from RNEA with gravity, the
step's link forces and link damping. The RK4 alternative integrates the smooth dynamics with ABA at
four stages (usdart.core.kernels.step).
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import D_V, DP_ARMATURE, DP_DAMPING, DP_SCALING_CAP, GYROSCOPIC_EXACT, GYROSCOPIC_PHYSX
from .applied import applied_wrenches, external_wrenches
from .crba import composite_inertias, mass_matrix
from .kinematics import link_velocities, root_com, world_frames
from .rnea import rnea
from .spatial import rotated, unrotated
from .tree_factor import factor, solve


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def scale_joint_velocities(dof_par, d0, d1, qd):
    """PhysX's step-start clamp: when a DOF moves faster than its scaling cap (DP_SCALING_CAP), every joint
    velocity of the tree is scaled by the same factor, the smallest cap / |qd| (reference §2.2)."""
    ratio = 1.0
    for k in range(d0, d1):
        speed = abs(qd[k])
        if speed > dof_par[k, DP_SCALING_CAP]:
            ratio = min(ratio, dof_par[k, DP_SCALING_CAP] / speed)
    if ratio < 1.0:
        for k in range(d0, d1):
            qd[k] *= ratio


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def smooth_acceleration(
    link,
    dof,
    dof_par,
    link_vec,
    v_parent,
    v_h,
    l0,
    l1,
    d0,
    d1,
    v0,
    v1,
    floating,
    c,
    rot,
    pos,
    motion,
    body_mass,
    body_moment,
    body_inertia,
    qd,
    root_vel,
    vel_scale,
    gravity,
    joint_force,
    wrench,
    vel,
    acc,
    force,
    scratch,
    H,
    gen,
):
    """gen[v0:v1] = M'^-1 (joint forces - h - vel_scale D qd): h the RNEA bias with gravity, the link
    forces `wrench` and, at vel_scale 1, the velocity products and the passive damping D (at 0 neither).
    Needs the poses, inertias, link velocities `vel` and the factor of M' in H."""
    # h with qdd = 0: RNEA reads no accelerations when acc_scale is 0 (gen doubles as the dummy input)
    rnea(
        link,
        dof,
        link_vec,
        l0,
        l1,
        v0,
        floating,
        c,
        rot,
        pos,
        motion,
        body_mass,
        body_moment,
        body_inertia,
        qd,
        qd,
        root_vel,
        root_vel,
        vel_scale,
        0.0,
        gravity,
        wrench,
        vel,
        acc,
        force,
        scratch,
        gen,
    )
    for a in range(6 if floating else 0):
        gen[v0 + a] = -gen[v0 + a]
    for k in range(d0, d1):
        g = dof[k, D_V]
        gen[g] = joint_force[k] - gen[g] - vel_scale * dof_par[k, DP_DAMPING] * qd[k]
    solve(v_parent, v_h, v0, v1, H, gen, v0)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def unconstrained_velocity(
    link,
    dof,
    dof_par,
    link_rot,
    link_vec,
    link_par,
    v_parent,
    v_h,
    v_dof,
    l0,
    l1,
    d0,
    d1,
    v0,
    v1,
    floating,
    dt,
    gravity,
    damp_forces,
    rot,
    pos,
    qd,
    root_vel,
    joint_force,
    user_wrench,
    motion,
    body_mass,
    body_moment,
    body_inertia,
    comp_mass,
    comp_moment,
    comp_inertia,
    vel,
    acc,
    force,
    wrench,
    scratch,
    H,
    gen,
    gvel,
    gvel_start,
):
    """Factor M' into H, gvel = v*, gvel_start = v (generalized [root; DOFs] at v0:v1), after PhysX's joint
    velocity scaling (scale_joint_velocities, on the state's qd); damp_forces: applied.applied_wrenches.
    Needs the poses."""
    scale_joint_velocities(dof_par, d0, d1, qd)
    c = scratch[4]
    if floating:
        root_com(link_vec, rot, pos, l0, c)
    world_frames(
        link, link_rot, link_vec, link_par, dof_par, l0, l1, rot, pos, motion, body_mass, body_moment, body_inertia
    )
    link_velocities(link, l0, l1, floating, c, root_vel, qd, 1.0, motion, vel)
    applied_wrenches(link_rot, link_vec, link_par, l0, l1, dt, gravity, damp_forces, rot, pos, vel, user_wrench, wrench)
    composite_inertias(link, l0, l1, body_mass, body_moment, body_inertia, comp_mass, comp_moment, comp_inertia)
    mass_matrix(
        link,
        dof,
        v_parent,
        v_h,
        v_dof,
        l0,
        l1,
        v0,
        floating,
        c,
        motion,
        comp_mass,
        comp_moment,
        comp_inertia,
        scratch,
        H,
    )
    for k in range(d0, d1):
        H[v_h[dof[k, D_V]]] += dof_par[k, DP_ARMATURE] + dt * dof_par[k, DP_DAMPING]
    factor(v_parent, v_h, v0, v1, H)
    smooth_acceleration(
        link,
        dof,
        dof_par,
        link_vec,
        v_parent,
        v_h,
        l0,
        l1,
        d0,
        d1,
        v0,
        v1,
        floating,
        c,
        rot,
        pos,
        motion,
        body_mass,
        body_moment,
        body_inertia,
        qd,
        root_vel,
        1.0,
        gravity,
        joint_force,
        wrench,
        vel,
        acc,
        force,
        scratch,
        H,
        gen,
    )
    for a in range(6 if floating else 0):
        gvel_start[v0 + a] = root_vel[a]
    for k in range(d0, d1):
        gvel_start[dof[k, D_V]] = qd[k]
    for a in range(v0, v1):
        gvel[a] = gvel_start[a] + dt * gen[a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def external_velocity_change(
    link,
    dof,
    dof_par,
    link_vec,
    link_par,
    v_parent,
    v_h,
    l0,
    l1,
    d0,
    d1,
    v0,
    v1,
    floating,
    dt,
    gravity,
    rot,
    pos,
    qd,
    root_vel,
    joint_force,
    user_wrench,
    motion,
    body_mass,
    body_moment,
    body_inertia,
    vel,
    acc,
    force,
    ext_wrench,
    scratch,
    H,
    gen,
    out,
):
    """out[v0:v1] = dt M'^-1 (joint forces + J^T (gravity + user link forces)): the part of the step's
    unconstrained velocity change that PhysX's TGS applies in its substeps (external forces every
    iteration), without the velocity products and link damping. After unconstrained_velocity (poses,
    inertias, link velocities and the factor of M' in H)."""
    c = scratch[4]
    if floating:
        root_com(link_vec, rot, pos, l0, c)
    external_wrenches(link_par, l0, l1, gravity, user_wrench, ext_wrench)
    smooth_acceleration(
        link,
        dof,
        dof_par,
        link_vec,
        v_parent,
        v_h,
        l0,
        l1,
        d0,
        d1,
        v0,
        v1,
        floating,
        c,
        rot,
        pos,
        motion,
        body_mass,
        body_moment,
        body_inertia,
        qd,
        root_vel,
        0.0,
        gravity,
        joint_force,
        ext_wrench,
        vel,
        acc,
        force,
        scratch,
        H,
        gen,
    )
    for a in range(v0, v1):
        out[a] = dt * gen[a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rigid_body_gyroscopic(inertia, R, dt, mode, start, gvel, a0):
    """A free rigid body's gyroscopic turn as PhysX's rigid bodies take it (DyRigidBodyToSolverBody.cpp,
    eENABLE_GYROSCOPIC_FORCES). gvel[a0:a0+3] holds the body's unconstrained angular velocity (world) with
    the explicit change -I^-1 (omega0 x I omega0) dt the tree's dynamics gave it (omega0: start[a0:a0+3]).
    GYROSCOPIC_PHYSX replaces that change by PhysX's, taken from omega1, the velocity without it (after
    damping and forces): in the body's axes L = I omega1 moves by -omega1 x L dt and is scaled back to L's
    length (as the exact motion keeps it), omega = I^-1 L; GYROSCOPIC_NONE leaves it out (PhysX's flag off);
    GYROSCOPIC_EXACT keeps it. inertia: about the COM in the body's axes; R: the body's rotation."""
    if mode == GYROSCOPIC_EXACT:
        return
    b0, b1, b2 = unrotated(R, start[a0], start[a0 + 1], start[a0 + 2])
    u0, u1, u2 = unrotated(R, gvel[a0], gvel[a0 + 1], gvel[a0 + 2])
    g0, g1, g2 = gyroscopic_change(inertia, b0, b1, b2, dt)
    w0, w1, w2 = u0 - g0, u1 - g1, u2 - g2  # omega1, body axes
    if mode == GYROSCOPIC_PHYSX:
        l0, l1, l2 = rotated(inertia, w0, w1, w2)
        n0, n1, n2 = l0 - (w1 * l2 - w2 * l1) * dt, l1 - (w2 * l0 - w0 * l2) * dt, l2 - (w0 * l1 - w1 * l0) * dt
        new = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        ratio = math.sqrt(l0 * l0 + l1 * l1 + l2 * l2) / new if new > 0.0 else 0.0
        w0, w1, w2 = solve3(inertia, n0 * ratio, n1 * ratio, n2 * ratio)
    gvel[a0], gvel[a0 + 1], gvel[a0 + 2] = rotated(R, w0, w1, w2)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def solve3(M, x, y, z):
    """M^-1 (x, y, z) for an invertible 3x3 M (Cramer's rule)."""
    c00 = M[1, 1] * M[2, 2] - M[1, 2] * M[2, 1]
    c01 = M[1, 2] * M[2, 0] - M[1, 0] * M[2, 2]
    c02 = M[1, 0] * M[2, 1] - M[1, 1] * M[2, 0]
    det = M[0, 0] * c00 + M[0, 1] * c01 + M[0, 2] * c02
    r0 = (c00 * x + (M[0, 2] * M[2, 1] - M[0, 1] * M[2, 2]) * y + (M[0, 1] * M[1, 2] - M[0, 2] * M[1, 1]) * z) / det
    r1 = (c01 * x + (M[0, 0] * M[2, 2] - M[0, 2] * M[2, 0]) * y + (M[0, 2] * M[1, 0] - M[0, 0] * M[1, 2]) * z) / det
    r2 = (c02 * x + (M[0, 1] * M[2, 0] - M[0, 0] * M[2, 1]) * y + (M[0, 0] * M[1, 1] - M[0, 1] * M[1, 0]) * z) / det
    return r0, r1, r2


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def gyroscopic_change(inertia, w0, w1, w2, dt):
    """-I^-1 (omega x I omega) dt, body axes."""
    l0, l1, l2 = rotated(inertia, w0, w1, w2)
    c0, c1, c2 = w1 * l2 - w2 * l1, w2 * l0 - w0 * l2, w0 * l1 - w1 * l0
    r0, r1, r2 = solve3(inertia, c0, c1, c2)
    return -r0 * dt, -r1 * dt, -r2 * dt
