"""Forward kinematics of one tree: link poses, world motion columns and inertias, link velocities.

Arrays are one world's slices (for example `state.q[w]`); link and DOF indices are global, a tree
being the link range [l0, l1) with its root at l0. World spatial vectors are taken at the world
origin, so velocities and inertias add up the tree without changes of frame (as Pinocchio does). A
floating root's generalized velocity is nu = [v_com; omega] (PhysX's root velocity); as a spatial
velocity it is [omega; v_com - omega x c], c the root COM in world.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    CHILD_FRAME_POS,
    CHILD_FRAME_ROT,
    COM,
    DP_MOTION,
    FIRST_MOMENT,
    INERTIA_ORIGIN,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_SPHERICAL,
    L_DOF0,
    L_DOF1,
    L_JOINT,
    L_PARENT,
    LP_MASS,
    PARENT_FRAME_POS,
    PARENT_FRAME_ROT,
    PRISMATIC_AXIS,
    REST_ROT,
    REVOLUTE_CROSS,
    REVOLUTE_OUTER,
)
from .spatial import quat_to_rot, rigid_inertia_to_parent_add


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def joint_transform(link, link_rot, link_vec, i, q, joint_quat, E):
    """E = rotation of link i in its parent's frame; returns the position of its origin there."""
    jt, k = link[i, L_JOINT], link[i, L_DOF0]
    if jt == JOINT_REVOLUTE:
        c, s = math.cos(q[k]), math.sin(q[k])
        O, R0, X = link_rot[i, REVOLUTE_OUTER], link_rot[i, REST_ROT], link_rot[i, REVOLUTE_CROSS]
        for a in range(3):
            for b in range(3):
                E[a, b] = O[a, b] + c * (R0[a, b] - O[a, b]) + s * X[a, b]
    elif jt == JOINT_SPHERICAL:  # E = F_p.R J F_c.R^T
        qj = joint_quat[i]
        quat_to_rot(qj[0], qj[1], qj[2], qj[3], E)
        C = link_rot[i, CHILD_FRAME_ROT]
        for a in range(3):
            t0, t1, t2 = E[a, 0], E[a, 1], E[a, 2]
            for b in range(3):
                E[a, b] = t0 * C[b, 0] + t1 * C[b, 1] + t2 * C[b, 2]
        P = link_rot[i, PARENT_FRAME_ROT]
        for b in range(3):
            t0, t1, t2 = E[0, b], E[1, b], E[2, b]
            for a in range(3):
                E[a, b] = P[a, 0] * t0 + P[a, 1] * t1 + P[a, 2] * t2
    else:
        R0 = link_rot[i, REST_ROT]
        for a in range(3):
            for b in range(3):
                E[a, b] = R0[a, b]
    slide = q[k] if jt == JOINT_PRISMATIC else 0.0
    cp, pp, ax = link_vec[i, CHILD_FRAME_POS], link_vec[i, PARENT_FRAME_POS], link_vec[i, PRISMATIC_AXIS]
    return (
        pp[0] + slide * ax[0] - (E[0, 0] * cp[0] + E[0, 1] * cp[1] + E[0, 2] * cp[2]),
        pp[1] + slide * ax[1] - (E[1, 0] * cp[0] + E[1, 1] * cp[1] + E[1, 2] * cp[2]),
        pp[2] + slide * ax[2] - (E[2, 0] * cp[0] + E[2, 1] * cp[1] + E[2, 2] * cp[2]),
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def tree_poses(link, link_rot, link_vec, l0, l1, q, joint_quat, root_pos, root_quat, rot, pos):
    """World rotation and origin of links l0..l1-1 from joint positions (spherical joints: quaternions)
    and the root pose (3,), (4,)."""
    quat_to_rot(root_quat[0], root_quat[1], root_quat[2], root_quat[3], rot[l0])
    for a in range(3):
        pos[l0, a] = root_pos[a]
    for i in range(l0 + 1, l1):
        p = link[i, L_PARENT]
        E = rot[i]  # first the joint's relative rotation E (child in parent), then rot[p] @ E in place
        r0, r1, r2 = joint_transform(link, link_rot, link_vec, i, q, joint_quat, E)
        Rp = rot[p]
        for a in range(3):
            pos[i, a] = pos[p, a] + Rp[a, 0] * r0 + Rp[a, 1] * r1 + Rp[a, 2] * r2
        compose_rotation(Rp, E)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def compose_rotation(A, B):
    """B = A B in place (3x3 blocks)."""
    for b in range(3):
        t0, t1, t2 = B[0, b], B[1, b], B[2, b]
        for a in range(3):
            B[a, b] = A[a, 0] * t0 + A[a, 1] * t1 + A[a, 2] * t2


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def link_pose(link, link_rot, link_vec, l0, i, q, joint_quat, root_pos, root_quat, T, E):
    """T[:3, :3], T[:3, 3] = world rotation and origin of link i alone from the state (its chain walked up to
    the root l0), for poses between full passes (TGS substeps); E is 3x3 scratch."""
    for a in range(3):
        for b in range(4):
            T[a, b] = 1.0 if a == b else 0.0
    j = i
    while j > l0:  # T = (joint j's transform) T
        r0, r1, r2 = joint_transform(link, link_rot, link_vec, j, q, joint_quat, E)
        t0, t1, t2 = T[0, 3], T[1, 3], T[2, 3]
        T[0, 3] = E[0, 0] * t0 + E[0, 1] * t1 + E[0, 2] * t2 + r0
        T[1, 3] = E[1, 0] * t0 + E[1, 1] * t1 + E[1, 2] * t2 + r1
        T[2, 3] = E[2, 0] * t0 + E[2, 1] * t1 + E[2, 2] * t2 + r2
        compose_rotation(E, T)
        j = link[j, L_PARENT]
    quat_to_rot(root_quat[0], root_quat[1], root_quat[2], root_quat[3], E)
    t0, t1, t2 = T[0, 3], T[1, 3], T[2, 3]
    for a in range(3):
        T[a, 3] = root_pos[a] + E[a, 0] * t0 + E[a, 1] * t1 + E[a, 2] * t2
    compose_rotation(E, T)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def world_frames(
    link, link_rot, link_vec, link_par, dof_par, l0, l1, rot, pos, motion, body_mass, body_moment, body_inertia
):
    """Motion columns S (world axes, at the origin) and link inertias in world axes about the origin."""
    for i in range(l0, l1):
        R, p = rot[i], pos[i]
        body_mass[i] = 0.0
        for a in range(3):
            body_moment[i, a] = 0.0
            for b in range(3):
                body_inertia[i, a, b] = 0.0
        rigid_inertia_to_parent_add(
            R,
            p,
            link_par[i, LP_MASS],
            link_vec[i, FIRST_MOMENT],
            link_rot[i, INERTIA_ORIGIN],
            body_mass,
            body_moment,
            body_inertia,
            i,
        )
        for k in range(link[i, L_DOF0], link[i, L_DOF1]):
            S = motion[k]
            s = dof_par[k]
            for a in range(3):
                S[a] = R[a, 0] * s[DP_MOTION] + R[a, 1] * s[DP_MOTION + 1] + R[a, 2] * s[DP_MOTION + 2]
                S[3 + a] = R[a, 0] * s[DP_MOTION + 3] + R[a, 1] * s[DP_MOTION + 4] + R[a, 2] * s[DP_MOTION + 5]
            S[3] += p[1] * S[2] - p[2] * S[1]  # v at the world origin = v at p + p x omega
            S[4] += p[2] * S[0] - p[0] * S[2]
            S[5] += p[0] * S[1] - p[1] * S[0]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def com_position(link_vec, rot, pos, i):
    """World position (x, y, z) of link i's COM."""
    R, p, c = rot[i], pos[i], link_vec[i, COM]
    return (
        p[0] + R[0, 0] * c[0] + R[0, 1] * c[1] + R[0, 2] * c[2],
        p[1] + R[1, 0] * c[0] + R[1, 1] * c[1] + R[1, 2] * c[2],
        p[2] + R[2, 0] * c[0] + R[2, 1] * c[1] + R[2, 2] * c[2],
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def root_com(link_vec, rot, pos, l0, out):
    """World position of a tree's root COM (its link l0)."""
    out[0], out[1], out[2] = com_position(link_vec, rot, pos, l0)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def posed_frames(
    link,
    link_rot,
    link_vec,
    link_par,
    dof_par,
    l0,
    l1,
    floating,
    q,
    joint_quat,
    root_pos,
    root_quat,
    rot,
    pos,
    c,
    motion,
    body_mass,
    body_moment,
    body_inertia,
):
    """A tree's link poses from its positions, then its root COM (floating) into c and its motion columns
    and world inertias: what the dynamics algorithms start from."""
    tree_poses(link, link_rot, link_vec, l0, l1, q, joint_quat, root_pos, root_quat, rot, pos)
    if floating:
        root_com(link_vec, rot, pos, l0, c)
    world_frames(
        link, link_rot, link_vec, link_par, dof_par, l0, l1, rot, pos, motion, body_mass, body_moment, body_inertia
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def root_spatial(c, nu, out):
    """out = [omega; v_com - omega x c] for a root generalized vector nu = [v_com; omega], c its COM."""
    out[0], out[1], out[2] = nu[3], nu[4], nu[5]
    out[3] = nu[0] - (nu[4] * c[2] - nu[5] * c[1])
    out[4] = nu[1] - (nu[5] * c[0] - nu[3] * c[2])
    out[5] = nu[2] - (nu[3] * c[1] - nu[4] * c[0])


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def root_generalized_force(c, f):
    """[f; n - c x f] of a spatial force [n; f] at the origin: force and torque about the root COM c."""
    return (
        f[3],
        f[4],
        f[5],
        f[0] - (c[1] * f[5] - c[2] * f[4]),
        f[1] - (c[2] * f[3] - c[0] * f[5]),
        f[2] - (c[0] * f[4] - c[1] * f[3]),
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def root_spatial_acceleration(c, nu, nudot, out):
    """Spatial acceleration of the root for nudot = [COM acceleration; angular acceleration]:
    d/dt [omega; v_com - omega x c] = [omega_dot; v_com_dot - omega_dot x c - omega x v_com]."""
    root_spatial(c, nudot, out)
    out[3] -= nu[4] * nu[2] - nu[5] * nu[1]
    out[4] -= nu[5] * nu[0] - nu[3] * nu[2]
    out[5] -= nu[3] * nu[1] - nu[4] * nu[0]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def root_generalized_acceleration(c, nu, a, out, offset):
    """Inverse of root_spatial_acceleration: v_com_dot = a_lin + omega_dot x c + omega x v_com."""
    out[offset + 0] = a[3] + (a[1] * c[2] - a[2] * c[1]) + (nu[4] * nu[2] - nu[5] * nu[1])
    out[offset + 1] = a[4] + (a[2] * c[0] - a[0] * c[2]) + (nu[5] * nu[0] - nu[3] * nu[2])
    out[offset + 2] = a[5] + (a[0] * c[1] - a[1] * c[0]) + (nu[3] * nu[1] - nu[4] * nu[0])
    out[offset + 3], out[offset + 4], out[offset + 5] = a[0], a[1], a[2]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def link_velocities(link, l0, l1, floating, c, root_vel, qd, scale, motion, vel):
    """World spatial velocity of links l0..l1-1 (`scale` 0 evaluates everything at rest); c: root COM."""
    v0 = vel[l0]
    if floating and scale != 0.0:
        root_spatial(c, root_vel, v0)
        for a in range(6):
            v0[a] *= scale
    else:
        for a in range(6):
            v0[a] = 0.0
    for i in range(l0 + 1, l1):
        vi, vp = vel[i], vel[link[i, L_PARENT]]
        for a in range(6):
            vi[a] = vp[a]
        if scale != 0.0:
            for k in range(link[i, L_DOF0], link[i, L_DOF1]):
                s = scale * qd[k]
                for a in range(6):
                    vi[a] += motion[k, a] * s


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def link_drifts(link, link_vec, l0, l1, rot, pos, vel, dt, out):
    """out[i] = dt times the velocity-product part of link i's acceleration (its COM's classical linear
    acceleration and its angular acceleration at zero joint accelerations: centripetal and Coriolis terms),
    world, [linear; angular]; the root's 0. PhysX's articulation adds this to every link's velocity before its
    solve (FeatherstoneArticulation::computeLinkInternalAcceleration), so rows on links (joints to other
    bodies, loop joints, contacts) see a turning link's anchor already curving in. From the spatial link
    velocities vel; with r the parent COM to the link COM and mu the joint's own motion (angular; linear at the
    link COM): c = c_parent moved to the COM + [w x (w x r) + 2 w x mu_lin + mu x mu_lin; w x mu], w the
    parent's angular velocity."""
    for a in range(6):
        out[l0, a] = 0.0
    for i in range(l0 + 1, l1):
        p = link[i, L_PARENT]
        vi, vp, cp, ci = vel[i], vel[p], out[p], out[i]
        x0, x1, x2 = com_position(link_vec, rot, pos, i)
        y0, y1, y2 = com_position(link_vec, rot, pos, p)
        r0, r1, r2 = x0 - y0, x1 - y1, x2 - y2
        w0, w1, w2 = vp[0], vp[1], vp[2]
        u0, u1, u2 = vi[0] - w0, vi[1] - w1, vi[2] - w2  # the joint's angular motion
        m0 = vi[3] - vp[3] + u1 * x2 - u2 * x1  # and linear at the link COM
        m1 = vi[4] - vp[4] + u2 * x0 - u0 * x2
        m2 = vi[5] - vp[5] + u0 * x1 - u1 * x0
        a0, a1, a2 = w1 * r2 - w2 * r1, w2 * r0 - w0 * r2, w0 * r1 - w1 * r0  # w x r
        b0 = w1 * a2 - w2 * a1 + 2.0 * (w1 * m2 - w2 * m1) + u1 * m2 - u2 * m1  # the velocity products
        b1 = w2 * a0 - w0 * a2 + 2.0 * (w2 * m0 - w0 * m2) + u2 * m0 - u0 * m2
        b2 = w0 * a1 - w1 * a0 + 2.0 * (w0 * m1 - w1 * m0) + u0 * m1 - u1 * m0
        ci[0] = cp[0] + cp[4] * r2 - cp[5] * r1 + dt * b0
        ci[1] = cp[1] + cp[5] * r0 - cp[3] * r2 + dt * b1
        ci[2] = cp[2] + cp[3] * r1 - cp[4] * r0 + dt * b2
        ci[3] = cp[3] + dt * (w1 * u2 - w2 * u1)
        ci[4] = cp[4] + dt * (w2 * u0 - w0 * u2)
        ci[5] = cp[5] + dt * (w0 * u1 - w1 * u0)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def drift_at(link_vec, rot, pos, link_drift, i, x, y, z):
    """The linear drift (link_drifts) of the world point (x, y, z) moving with link i: its COM's plus the
    drift's turn about the COM (the rows on links see this, joints and contacts alike)."""
    c = link_drift[i]
    c0, c1, c2 = com_position(link_vec, rot, pos, i)
    r0, r1, r2 = x - c0, y - c1, z - c2
    return c[0] + c[4] * r2 - c[5] * r1, c[1] + c[5] * r0 - c[3] * r2, c[2] + c[3] * r1 - c[4] * r0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def com_velocities(link_vec, l0, l1, rot, pos, vel, out):
    """out[i] = [v_com; omega] of links l0..l1-1, world axes (PhysX link velocity), from spatial vel."""
    for i in range(l0, l1):
        v = vel[i]
        for a in range(3):
            out[i, 3 + a] = v[a]
        x0, x1, x2 = com_position(link_vec, rot, pos, i)
        out[i, 0] = v[3] + v[1] * x2 - v[2] * x1
        out[i, 1] = v[4] + v[2] * x0 - v[0] * x2
        out[i, 2] = v[5] + v[0] * x1 - v[1] * x0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def com_accelerations(link_vec, l0, l1, rot, pos, vel, acc, out):
    """out[i] = classical [COM acceleration; angular acceleration] (world) from spatial acc and vel.

    The classical acceleration of a body point x is a_lin + alpha x x + omega x v(x).
    """
    for i in range(l0, l1):
        v, a_ = vel[i], acc[i]
        x0, x1, x2 = com_position(link_vec, rot, pos, i)
        vx = v[3] + v[1] * x2 - v[2] * x1
        vy = v[4] + v[2] * x0 - v[0] * x2
        vz = v[5] + v[0] * x1 - v[1] * x0
        out[i, 0] = a_[3] + a_[1] * x2 - a_[2] * x1 + v[1] * vz - v[2] * vy
        out[i, 1] = a_[4] + a_[2] * x0 - a_[0] * x2 + v[2] * vx - v[0] * vz
        out[i, 2] = a_[5] + a_[0] * x1 - a_[1] * x0 + v[0] * vy - v[1] * vx
        for a in range(3):
            out[i, 3 + a] = a_[a]
