"""Recursive Newton-Euler inverse dynamics in world axes.

Gravity enters as an upward acceleration of the base ("a_0 = -g"), exact for fixed and floating bases.
Results are generalized forces: [root force; root torque about its COM] first when the base floats
(the 6 + n layout), then one entry per DOF.
"""
from __future__ import annotations

from numba import njit

from .kinematics import link_velocities, root_generalized_force, root_spatial_acceleration, world_dynamics_frames
from .spatial import force_cross_add, inertia_times_motion, motion_cross_add


@njit(cache=True, _nrt=False)
def subtract_world_wrench(m, ws, w, i, wrench, dst):
    """dst -= a [force; torque] applied at link i's COM (world axes), as a spatial force at the origin."""
    R, p, c = ws.rot[w, i], ws.pos[w, i], m.com[i]
    x0 = p[0] + R[0, 0] * c[0] + R[0, 1] * c[1] + R[0, 2] * c[2]
    x1 = p[1] + R[1, 0] * c[0] + R[1, 1] * c[1] + R[1, 2] * c[2]
    x2 = p[2] + R[2, 0] * c[0] + R[2, 1] * c[1] + R[2, 2] * c[2]
    fx, fy, fz = wrench[0], wrench[1], wrench[2]
    dst[0] -= wrench[3] + x1 * fz - x2 * fy
    dst[1] -= wrench[4] + x2 * fx - x0 * fz
    dst[2] -= wrench[5] + x0 * fy - x1 * fx
    dst[3] -= fx
    dst[4] -= fy
    dst[5] -= fz


@njit(cache=True, _nrt=False)
def rnea(m, st, ws, w, qdd, root_acc, acc_scale, wrench, use_wrench, gravity, vel_scale, out):
    """out[w] = M(q) acc_scale [root_acc; qdd] + h(q, vel_scale * velocities) - J^T wrench, gravity included.

    Needs link_poses for world w. Leaves each link's transmitted spatial force in ws.force.
    qdd: (W, n_dofs); root_acc: (W, 6) floating root [COM acc; angular acc] (ignored when fixed);
    wrench: (W, n_links, 6) [force; torque] at link COMs, world (read when use_wrench).
    """
    n, nr = m.n_links, m.n_root
    world_dynamics_frames(m, ws, w)
    link_velocities(m, st, ws, w, vel_scale)
    a0 = ws.acc[w, 0]
    if nr == 6:
        nu, nudot = ws.vec6[w, 0], ws.vec6[w, 1]
        for a in range(6):
            nu[a] = vel_scale * st.root_vel[w, a]
            nudot[a] = acc_scale * root_acc[w, a]
        root_spatial_acceleration(m, ws, w, nu, nudot, a0)
    else:
        for a in range(6):
            a0[a] = 0.0
    for a in range(3):  # the base accelerates upwards instead of gravity pulling every link down
        a0[3 + a] -= gravity[a]

    vj, tmp = ws.vec6[w, 0], ws.vec6[w, 1]
    for i in range(n):
        vi, ai, fi = ws.vel[w, i], ws.acc[w, i], ws.force[w, i]
        if i > 0:
            ap = ws.acc[w, m.parent[i]]
            for a in range(6):
                ai[a] = ap[a]
                vj[a] = 0.0
            for k in range(m.dof_start[i], m.dof_start[i + 1]):
                qd, qa = vel_scale * st.qd[w, k], acc_scale * qdd[w, k]
                for a in range(6):
                    vj[a] += ws.motion[w, k, a] * qd
                    ai[a] += ws.motion[w, k, a] * qa
            motion_cross_add(vi, vj, ai)  # dS/dt qd = v x (S qd)
        inertia_times_motion(ws.body_mass[w, i], ws.body_moment[w, i], ws.body_inertia[w, i], ai, fi)
        if vel_scale != 0.0:
            inertia_times_motion(ws.body_mass[w, i], ws.body_moment[w, i], ws.body_inertia[w, i], vi, tmp)
            force_cross_add(vi, tmp, fi)
        if use_wrench:
            subtract_world_wrench(m, ws, w, i, wrench[w, i], fi)

    for i in range(n - 1, 0, -1):
        fi, fp = ws.force[w, i], ws.force[w, m.parent[i]]
        for k in range(m.dof_start[i], m.dof_start[i + 1]):
            acc = 0.0
            for a in range(6):
                acc += ws.motion[w, k, a] * fi[a]
            out[w, nr + k] = acc
        for a in range(6):
            fp[a] += fi[a]
    if nr == 6:
        root_generalized_force(m, ws, w, ws.force[w, 0], out[w], 0)
