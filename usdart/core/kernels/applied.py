"""Link forces of a step: user forces, gravity switched off per link, link damping, velocity limits."""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    INERTIA_COM,
    LP_ANGULAR_DAMPING,
    LP_GRAVITY,
    LP_LINEAR_DAMPING,
    LP_MASS,
    LP_MAX_ANGULAR_VELOCITY,
    LP_MAX_LINEAR_VELOCITY,
)
from .kinematics import com_position


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def excess(x, y, z, limit):
    """PhysX's sigma: 1 - limit / |v| when |v| exceeds the limit, else 0."""
    speed2 = x * x + y * y + z * z
    if speed2 <= limit * limit:
        return 0.0
    return 1.0 - limit / math.sqrt(speed2)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def external_wrenches(link_par, l0, l1, gravity, user, wrench):
    """wrench[i] = user link force [force; torque] at the COM + cancelled gravity where it is disabled."""
    for i in range(l0, l1):
        mass = link_par[i, LP_MASS]
        for a in range(6):
            wrench[i, a] = user[i, a]
        off = 1.0 - link_par[i, LP_GRAVITY]
        if off != 0.0:
            for a in range(3):
                wrench[i, a] -= off * mass * gravity[a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def applied_wrenches(link_rot, link_vec, link_par, l0, l1, dt, gravity, damp_forces, rot, pos, vel, user, wrench):
    """wrench[i] = user link force [force; torque] at the COM + cancelled gravity where it is disabled +
    link damping + PhysX's soft velocity limit: beyond maxLinear/AngularVelocity, the force that would
    bring the isolated link back to that speed in one step (-m sigma v / dt, sigma = 1 - v_max / |v|).
    vel: spatial link velocities at the step start. Damping as PhysX's: a rate c (at most 1 / dt) scales
    the velocity the link would reach, v + (gravity + force / m) dt, by 1 - c dt (damp_forces 1), or the
    step-start velocity alone (0: TGS applying the external forces in its substeps, where PhysX leaves them
    out of the damping)."""
    external_wrenches(link_par, l0, l1, gravity, user, wrench)
    for i in range(l0, l1):
        mass = link_par[i, LP_MASS]
        lin_damp = min(link_par[i, LP_LINEAR_DAMPING], 1.0 / dt)
        ang_damp = min(link_par[i, LP_ANGULAR_DAMPING], 1.0 / dt)
        max_lin, max_ang = link_par[i, LP_MAX_LINEAR_VELOCITY], link_par[i, LP_MAX_ANGULAR_VELOCITY]
        if lin_damp == 0.0 and ang_damp == 0.0 and max_lin == math.inf and max_ang == math.inf:
            continue
        R, v = rot[i], vel[i]
        x0, x1, x2 = com_position(link_vec, rot, pos, i)
        vx = v[3] + v[1] * x2 - v[2] * x1
        vy = v[4] + v[2] * x0 - v[0] * x2
        vz = v[5] + v[0] * x1 - v[1] * x0
        lin = lin_damp + excess(vx, vy, vz, max_lin) / dt
        ang = ang_damp + excess(v[0], v[1], v[2], max_ang) / dt
        shrink_lin, shrink_ang = damp_forces * lin_damp * dt, damp_forces * ang_damp * dt
        if shrink_lin != 0.0:  # the external forces' share: the link's gravity (unless disabled) and user force
            for a in range(3):
                wrench[i, a] -= shrink_lin * (wrench[i, a] + mass * gravity[a])
        if shrink_ang != 0.0:
            for a in range(3, 6):
                wrench[i, a] -= shrink_ang * wrench[i, a]
        if lin != 0.0:
            wrench[i, 0] -= lin * mass * vx
            wrench[i, 1] -= lin * mass * vy
            wrench[i, 2] -= lin * mass * vz
        if ang != 0.0:  # -I_world omega * rate
            I = link_rot[i, INERTIA_COM]
            for a in range(3):
                acc = 0.0
                for b in range(3):
                    iw = 0.0
                    for e in range(3):
                        iw += R[a, e] * (I[e, 0] * R[b, 0] + I[e, 1] * R[b, 1] + I[e, 2] * R[b, 2])
                    acc += iw * v[b]
                wrench[i, 3 + a] -= ang * acc
