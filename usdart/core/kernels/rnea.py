"""Recursive Newton-Euler inverse dynamics of one tree, in world axes.

Gravity enters as an upward acceleration of the base ("a_0 = -g"), exact for fixed and floating bases.
Results are generalized forces: [root force; root torque about its COM] first when the base floats
(the 6 + n layout), then one entry per DOF, written at out[v0:v1].
"""

from __future__ import annotations

from numba import njit

from ..layout import D_V, L_DOF0, L_DOF1, L_PARENT
from .kinematics import com_position, root_generalized_force, root_spatial_acceleration
from .spatial import force_cross_add, inertia_times_motion, motion_cross_add


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def subtract_world_wrench(link_vec, rot, pos, i, wrench, dst):
    """dst -= a [force; torque] applied at link i's COM (world axes), as a spatial force at the origin."""
    x0, x1, x2 = com_position(link_vec, rot, pos, i)
    fx, fy, fz = wrench[0], wrench[1], wrench[2]
    dst[0] -= wrench[3] + x1 * fz - x2 * fy
    dst[1] -= wrench[4] + x2 * fx - x0 * fz
    dst[2] -= wrench[5] + x0 * fy - x1 * fx
    dst[3] -= fx
    dst[4] -= fy
    dst[5] -= fz


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rnea(
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
    qdd,
    root_vel,
    root_acc,
    vel_scale,
    acc_scale,
    gravity,
    wrench,
    vel,
    acc,
    force,
    scratch,
    out,
):
    """out[v0:v1] = M(q) acc_scale [root_acc; qdd] + h(q, vel_scale qd) - J^T wrench, gravity included.

    Needs world_frames and link velocities `vel` at vel_scale. root_vel / root_acc: (6,) [COM; angular]
    (ignored when fixed); wrench: (n_links, 6) [force; torque] at link COMs (zeros for none).
    Leaves accelerations a - g in `acc` and each link's transmitted spatial force in `force`.
    """
    a0 = acc[l0]
    nu, nudot, vj, tmp = scratch[0], scratch[1], scratch[2], scratch[3]
    if floating:
        for a in range(6):
            nu[a] = vel_scale * root_vel[a]
            nudot[a] = acc_scale * root_acc[a]
        root_spatial_acceleration(c, nu, nudot, a0)
    else:
        for a in range(6):
            a0[a] = 0.0
    for a in range(3):  # the base accelerates upwards instead of gravity pulling every link down
        a0[3 + a] -= gravity[a]
    for i in range(l0, l1):
        vi, ai, fi = vel[i], acc[i], force[i]
        if i > l0:
            ap = acc[link[i, L_PARENT]]
            for a in range(6):
                ai[a] = ap[a]
                vj[a] = 0.0
            for k in range(link[i, L_DOF0], link[i, L_DOF1]):
                v, qa = vel_scale * qd[k], acc_scale * qdd[k]
                for a in range(6):
                    vj[a] += motion[k, a] * v
                    ai[a] += motion[k, a] * qa
            motion_cross_add(vi, vj, ai)  # dS/dt qd = v x (S qd)
        inertia_times_motion(body_mass[i], body_moment[i], body_inertia[i], ai, fi)
        if vel_scale != 0.0:
            inertia_times_motion(body_mass[i], body_moment[i], body_inertia[i], vi, tmp)
            force_cross_add(vi, tmp, fi)
        subtract_world_wrench(link_vec, rot, pos, i, wrench[i], fi)
    for i in range(l1 - 1, l0, -1):
        fi, fp = force[i], force[link[i, L_PARENT]]
        for k in range(link[i, L_DOF0], link[i, L_DOF1]):
            acc_ = 0.0
            for a in range(6):
                acc_ += motion[k, a] * fi[a]
            out[dof[k, D_V]] = acc_
        for a in range(6):
            fp[a] += fi[a]
    if floating:
        out[v0], out[v0 + 1], out[v0 + 2], out[v0 + 3], out[v0 + 4], out[v0 + 5] = root_generalized_force(c, force[l0])
