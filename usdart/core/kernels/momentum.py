"""Momentum of a floating articulation kept by what acts on it from outside, not by the step's errors.

Joint forces (drives, limits, friction, mimic joints, tendons, loop joints inside the tree) are internal:
they cannot move the centre of mass nor change the angular momentum about it. A reduced-coordinate step
keeps them internal only to first order: the velocity update works at the step-start pose, the position
update then keeps the generalized velocities while the mechanism changes shape, and the explicit bias
forces lag by a step. With stiff drives or violated limits (a joint turning a radian in one step) that
error is large: a free two-link body in zero gravity driven to a target left at 0.34 m/s. PhysX, whose
articulation velocities are spatial link velocities, keeps such a body's centre-of-mass velocity.

So for a floating tree joined to nothing outside itself the step aims (`aim_momentum`, at the step start)
at the momentum the outside gives it: linear p + dt * sum(m_i g + f_i), angular about the centre of mass
L_c + dt * sum((x_i - c) x (m_i g + f_i) + tau_i), with f_i, tau_i the step's link forces (user forces,
gravity switched off, link damping, PhysX's velocity limits). After the step `keep_momentum` moves the
root velocity by the one rigid motion of the whole tree that restores it (joint velocities kept):
d_omega = I_c^-1 dL, d_v_root = dp / M + d_omega x (c_root - c), and translates the whole tree so that its
centre of mass moved by dt p / M (semi-implicit Euler of the COM; the position update, which keeps the
generalized velocities while the mechanism changes shape, moves it otherwise). Exact for any integrator;
nothing changes while the step already conserves momentum to rounding.
"""

from __future__ import annotations

from numba import njit

from ..layout import LP_GRAVITY, LP_MASS
from .kinematics import com_position, link_velocities, root_com, world_frames


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def centroidal_momentum(l0, l1, body_mass, body_moment, body_inertia, vel, out, com):
    """out = [linear momentum; angular momentum about the COM] of links l0..l1-1, com = their COM; returns
    the total mass. body_*: link inertias about the world origin (world_frames), vel: spatial velocities."""
    mass = 0.0
    for a in range(6):
        out[a] = 0.0
    for a in range(3):
        com[a] = 0.0
    for i in range(l0, l1):
        m, h, I, v = body_mass[i], body_moment[i], body_inertia[i], vel[i]
        w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
        mass += m
        # p_i = m v_O + w x h,  L_O,i = I_O w + h x v_O  (h = m x_com, the first moment)
        out[0] += m * u0 + w1 * h[2] - w2 * h[1]
        out[1] += m * u1 + w2 * h[0] - w0 * h[2]
        out[2] += m * u2 + w0 * h[1] - w1 * h[0]
        for a in range(3):
            out[3 + a] += I[a, 0] * w0 + I[a, 1] * w1 + I[a, 2] * w2
            com[a] += h[a]
        out[3] += h[1] * u2 - h[2] * u1
        out[4] += h[2] * u0 - h[0] * u2
        out[5] += h[0] * u1 - h[1] * u0
    for a in range(3):
        com[a] /= mass
    out[3] -= com[1] * out[2] - com[2] * out[1]  # L_c = L_O - c x p
    out[4] -= com[2] * out[0] - com[0] * out[2]
    out[5] -= com[0] * out[1] - com[1] * out[0]
    return mass


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def aim_momentum(
    link_vec,
    link_par,
    l0,
    l1,
    dt,
    share,
    gravity,
    rot,
    pos,
    body_mass,
    body_moment,
    body_inertia,
    vel,
    wrench,
    user,
    target,
):
    """target[0:6] = the momentum at the step end that the outside gives (see the module), from the
    step-start inertias, velocities and link forces [force; torque] at the COMs (wrench: all of them,
    user: the user's); target[6:9] = where the COM ends the step: c + dt (p + dp - (1 - share) dp_ext) / M,
    with dp_ext the change by gravity and the user's forces and share the part of it the positions move
    with (1; TGS applying them in each of N substeps: (N + 1) / 2N)."""
    com = target[6:9]
    mass = centroidal_momentum(l0, l1, body_mass, body_moment, body_inertia, vel, target, com)
    e0 = e1 = e2 = 0.0  # dp_ext / dt
    for i in range(l0, l1):
        m, f = link_par[i, LP_MASS], wrench[i]
        f0, f1, f2 = m * gravity[0] + f[0], m * gravity[1] + f[1], m * gravity[2] + f[2]
        x0, x1, x2 = com_position(link_vec, rot, pos, i)
        x0, x1, x2 = x0 - com[0], x1 - com[1], x2 - com[2]
        target[0] += dt * f0
        target[1] += dt * f1
        target[2] += dt * f2
        target[3] += dt * (x1 * f2 - x2 * f1 + f[3])
        target[4] += dt * (x2 * f0 - x0 * f2 + f[4])
        target[5] += dt * (x0 * f1 - x1 * f0 + f[5])
        felt = m * link_par[i, LP_GRAVITY]
        e0 += felt * gravity[0] + user[i, 0]
        e1 += felt * gravity[1] + user[i, 1]
        e2 += felt * gravity[2] + user[i, 2]
    lag = dt * (1.0 - share)
    com[0] += dt * (target[0] - lag * e0) / mass
    com[1] += dt * (target[1] - lag * e1) / mass
    com[2] += dt * (target[2] - lag * e2) / mass


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def keep_momentum(
    link,
    link_rot,
    link_vec,
    link_par,
    dof_par,
    l0,
    l1,
    floating,
    dt,
    rot,
    pos,
    qd,
    root_pos,
    root_vel,
    root_acc,
    motion,
    body_mass,
    body_moment,
    body_inertia,
    vel,
    target,
    now,
    com,
    c_root,
):
    """Move the root velocity (and the step's root acceleration) so that the tree's momentum at its new pose
    is `target`, and the whole tree (root position and link poses) so that its COM is where that momentum
    carried it from the step start (target[6:9], aim_momentum). now (6), com and c_root (3) are scratch;
    poses must be those of the step end. `floating` is always true here: the runtime flag
    link_velocities is compiled for."""
    world_frames(
        link, link_rot, link_vec, link_par, dof_par, l0, l1, rot, pos, motion, body_mass, body_moment, body_inertia
    )
    root_com(link_vec, rot, pos, l0, c_root)
    link_velocities(link, l0, l1, floating, c_root, root_vel, qd, 1.0, motion, vel)
    mass = centroidal_momentum(l0, l1, body_mass, body_moment, body_inertia, vel, now, com)
    c0, c1, c2 = com[0], com[1], com[2]
    # rotational inertia about the COM: I_O - M (|c|^2 E - c c^T)
    i00 = i11 = i22 = i01 = i02 = i12 = 0.0
    for i in range(l0, l1):
        I = body_inertia[i]
        i00 += I[0, 0]
        i11 += I[1, 1]
        i22 += I[2, 2]
        i01 += I[0, 1]
        i02 += I[0, 2]
        i12 += I[1, 2]
    i00 -= mass * (c1 * c1 + c2 * c2)
    i11 -= mass * (c0 * c0 + c2 * c2)
    i22 -= mass * (c0 * c0 + c1 * c1)
    i01 += mass * c0 * c1
    i02 += mass * c0 * c2
    i12 += mass * c1 * c2
    dl0, dl1, dl2 = target[3] - now[3], target[4] - now[4], target[5] - now[5]
    # d_omega = I_c^-1 dL (adjugate over determinant; I_c is positive definite for a floating tree)
    a00, a11, a22 = i11 * i22 - i12 * i12, i00 * i22 - i02 * i02, i00 * i11 - i01 * i01
    a01, a02, a12 = i02 * i12 - i01 * i22, i01 * i12 - i02 * i11, i01 * i02 - i00 * i12
    det = i00 * a00 + i01 * a01 + i02 * a02
    w0 = (a00 * dl0 + a01 * dl1 + a02 * dl2) / det
    w1 = (a01 * dl0 + a11 * dl1 + a12 * dl2) / det
    w2 = (a02 * dl0 + a12 * dl1 + a22 * dl2) / det
    e0, e1, e2 = c_root[0] - c0, c_root[1] - c1, c_root[2] - c2
    dv0 = (target[0] - now[0]) / mass + w1 * e2 - w2 * e1
    dv1 = (target[1] - now[1]) / mass + w2 * e0 - w0 * e2
    dv2 = (target[2] - now[2]) / mass + w0 * e1 - w1 * e0
    root_vel[0] += dv0
    root_vel[1] += dv1
    root_vel[2] += dv2
    root_vel[3] += w0
    root_vel[4] += w1
    root_vel[5] += w2
    root_acc[0] += dv0 / dt
    root_acc[1] += dv1 / dt
    root_acc[2] += dv2 / dt
    root_acc[3] += w0 / dt
    root_acc[4] += w1 / dt
    root_acc[5] += w2 / dt
    for a in range(3):  # the position update moved the COM elsewhere: put it there
        shift = target[6 + a] - com[a]
        root_pos[a] += shift
        for i in range(l0, l1):
            pos[i, a] += shift
