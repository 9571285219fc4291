"""Sleeping (PhysX's rule, simplified): when every link of a tree keeps its mass-normalised kinetic energy
below the sleep threshold for WAKE_TIME, the tree stops with zero velocities until something wakes it."""

from __future__ import annotations

from numba import njit

from ..layout import COM, INERTIA_COM, LP_MASS
from .kinematics import link_velocities


@njit(cache=True, _nrt=False)
def pushed(l0, l1, link_wrench):
    """An applied link force or torque wakes a sleeping tree."""
    for i in range(l0, l1):
        for a in range(6):
            if link_wrench[i, a] != 0.0:
                return True
    return False


@njit(cache=True, _nrt=False)
def below_threshold(
    link, link_rot, link_vec, link_par, l0, l1, floating, threshold, c, rot, pos, motion, root_vel, qd, vel
):
    """True when every link's mass-normalised kinetic energy 0.5 (|v_com|^2 + w.I w / m) is below the
    threshold; velocities from motion columns and poses at the step start (a threshold test, no more)."""
    link_velocities(link, l0, l1, floating, c, root_vel, qd, 1.0, motion, vel)
    for i in range(l0, l1):
        mass = link_par[i, LP_MASS]
        if mass <= 0.0:
            continue
        R, p, cm, v, I = rot[i], pos[i], link_vec[i, COM], vel[i], link_rot[i, INERTIA_COM]
        x0 = p[0] + R[0, 0] * cm[0] + R[0, 1] * cm[1] + R[0, 2] * cm[2]
        x1 = p[1] + R[1, 0] * cm[0] + R[1, 1] * cm[1] + R[1, 2] * cm[2]
        x2 = p[2] + R[2, 0] * cm[0] + R[2, 1] * cm[1] + R[2, 2] * cm[2]
        vx = v[3] + v[1] * x2 - v[2] * x1
        vy = v[4] + v[2] * x0 - v[0] * x2
        vz = v[5] + v[0] * x1 - v[1] * x0
        energy = vx * vx + vy * vy + vz * vz
        for a in range(3):  # angular part in body axes: omega_b^T I omega_b
            wa = R[0, a] * v[0] + R[1, a] * v[1] + R[2, a] * v[2]
            for b in range(3):
                wb = R[0, b] * v[0] + R[1, b] * v[1] + R[2, b] * v[2]
                energy += wa * I[a, b] * wb / mass
        if 0.5 * energy >= threshold:
            return False
    return True
