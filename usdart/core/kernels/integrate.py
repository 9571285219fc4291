"""Position update of one tree: joint positions, spherical and root quaternions, from a velocity."""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    COM,
    D_V,
    D_WRAPS,
    DP_AXIS,
    DP_LOWER,
    DP_UPPER,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_SPHERICAL,
    L_DOF0,
    L_DOF1,
    L_JOINT,
)

TWO_PI, FOUR_PI = 2.0 * math.pi, 4.0 * math.pi


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def quat_exp(rx, ry, rz):
    """The unit quaternion of rotation vector r."""
    angle = math.sqrt(rx * rx + ry * ry + rz * rz)
    if angle < 1e-12:
        ew, s = 1.0, 0.5
    else:
        ew, s = math.cos(0.5 * angle), math.sin(0.5 * angle) / angle
    return ew, s * rx, s * ry, s * rz


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def set_product(q, aw, ax, ay, az, bw, bx, by, bz):
    """q <- a * b, renormalised."""
    nw = aw * bw - ax * bx - ay * by - az * bz
    nx = aw * bx + ax * bw + ay * bz - az * by
    ny = aw * by - ax * bz + ay * bw + az * bx
    nz = aw * bz + ax * by - ay * bx + az * bw
    norm = math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
    q[0], q[1], q[2], q[3] = nw / norm, nx / norm, ny / norm, nz / norm


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rotate_by_quat(qw, qx, qy, qz, c):
    """R(q) c for a quaternion q of any norm."""
    s = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz)
    r0 = (1 - s * (qy * qy + qz * qz)) * c[0] + s * (qx * qy - qw * qz) * c[1] + s * (qx * qz + qw * qy) * c[2]
    r1 = s * (qx * qy + qw * qz) * c[0] + (1 - s * (qx * qx + qz * qz)) * c[1] + s * (qy * qz - qw * qx) * c[2]
    r2 = s * (qx * qz - qw * qy) * c[0] + s * (qy * qz + qw * qx) * c[1] + (1 - s * (qx * qx + qy * qy)) * c[2]
    return r0, r1, r2


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def integrate_positions(
    link, dof, dof_par, link_vec, l0, l1, v0, floating, dt, vel, q, joint_quat, root_pos, root_quat
):
    """Move a tree by dt with generalized velocity vel[v0:v1] (root [v_com; omega], then DOFs). Reads only
    the state it moves (no link poses), so TGS can call it once per substep. As PhysX: an unlimited revolute
    DOF beyond +-2 pi jumps by 4 pi (the same pose; drives and limits see that value, so a drive to 150 deg
    that overshoots past 180 deg comes back), prismatic positions are clamped to their limits. (PhysX jumps
    once and then clamps to +-4 pi, which pins a joint that turns more than a revolution in one step;
    usdart jumps as often as it takes.)"""
    if floating:  # the COM moves with v_com, the frame turns about it
        c = link_vec[l0, COM]
        r0, r1, r2 = rotate_by_quat(root_quat[0], root_quat[1], root_quat[2], root_quat[3], c)
        com0, com1, com2 = root_pos[0] + r0, root_pos[1] + r1, root_pos[2] + r2
        ew, ex, ey, ez = quat_exp(vel[v0 + 3] * dt, vel[v0 + 4] * dt, vel[v0 + 5] * dt)  # world-axes turn: exp(r) q
        set_product(root_quat, ew, ex, ey, ez, root_quat[0], root_quat[1], root_quat[2], root_quat[3])
        r0, r1, r2 = rotate_by_quat(root_quat[0], root_quat[1], root_quat[2], root_quat[3], c)
        root_pos[0] = com0 + vel[v0 + 0] * dt - r0
        root_pos[1] = com1 + vel[v0 + 1] * dt - r1
        root_pos[2] = com2 + vel[v0 + 2] * dt - r2
    for i in range(l0 + 1, l1):
        lo, hi = link[i, L_DOF0], link[i, L_DOF1]
        jt = link[i, L_JOINT]
        if jt == JOINT_SPHERICAL:
            rx = ry = rz = 0.0
            for k in range(lo, hi):
                step = vel[dof[k, D_V]] * dt
                rx += dof_par[k, DP_AXIS] * step
                ry += dof_par[k, DP_AXIS + 1] * step
                rz += dof_par[k, DP_AXIS + 2] * step
            quat = joint_quat[i]
            ew, ex, ey, ez = quat_exp(rx, ry, rz)  # child-frame turn: q exp(r)
            set_product(quat, quat[0], quat[1], quat[2], quat[3], ew, ex, ey, ez)
            sign = 1.0 if quat[0] >= 0.0 else -1.0  # positions: rotation-vector components (w >= 0)
            vx, vy, vz = sign * quat[1], sign * quat[2], sign * quat[3]
            sn = math.sqrt(vx * vx + vy * vy + vz * vz)
            f = 2.0 if sn < 1e-12 else 2.0 * math.atan2(sn, sign * quat[0]) / sn
            for k in range(lo, hi):
                q[k] = f * (dof_par[k, DP_AXIS] * vx + dof_par[k, DP_AXIS + 1] * vy + dof_par[k, DP_AXIS + 2] * vz)
        elif jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
            k = lo
            x = q[k] + vel[dof[k, D_V]] * dt
            if jt == JOINT_PRISMATIC:
                x = min(max(x, dof_par[k, DP_LOWER]), dof_par[k, DP_UPPER])
            elif dof[k, D_WRAPS] != 0 and abs(x) > TWO_PI:  # as PhysX: by 4 pi into [-2 pi, 2 pi]
                x -= FOUR_PI * math.floor(x / FOUR_PI + 0.5)
            q[k] = x
