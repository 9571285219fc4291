"""Kinematic bodies: a one-link floating tree that the step carries to a target pose (PhysX's
setKinematicTarget) and that no row can push.

Over a step of dt the body moves with the constant velocity that takes it from its pose to the target:
v_com = (target COM - COM) / dt and omega = log(q_target q^-1) / dt (world axes), which the position update
(integrate.integrate_positions: the COM moves with v_com, the frame turns by exp(omega dt)) follows exactly,
in one step or in TGS substeps, and ends on the target itself (`reach_target`). Contact and joint rows see
that velocity as the body's side of their J v (PGS: v_com only, as PhysX's PGS, whose solver keeps a
kinematic body's angular velocity at zero: step.begin_kinematic); its factor in the mass matrix is made
infinite (`infinite_mass`), so every response on its side is zero and no impulse changes its velocity. Once
at the target the velocity is zero: a target holds until changed.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import COM
from .integrate import rotate_by_quat


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def target_velocity(link_vec, l0, v0, dt, root_pos, root_quat, target, gvel):
    """gvel[v0:v0+6] = [v_com; omega] that carries link l0 (pose root_pos, root_quat wxyz) to target [x, y, z,
    qw, qx, qy, qz] in dt (the COM placed as integrate.integrate_positions places it)."""
    qw, qx, qy, qz = root_quat[0], root_quat[1], root_quat[2], root_quat[3]
    tw, tx, ty, tz = target[3], target[4], target[5], target[6]
    # the world-axes turn d = q_target * conj(q), taken the short way round
    dw = tw * qw + tx * qx + ty * qy + tz * qz
    dx = -tw * qx + tx * qw - ty * qz + tz * qy
    dy = -tw * qy + tx * qz + ty * qw - tz * qx
    dz = -tw * qz - tx * qy + ty * qx + tz * qw
    if dw < 0.0:
        dw, dx, dy, dz = -dw, -dx, -dy, -dz
    s = math.sqrt(dx * dx + dy * dy + dz * dz)
    scale = 2.0 * math.atan2(s, dw) / (s * dt) if s > 1e-300 else 2.0 / dt
    c = link_vec[l0, COM]
    n0, n1, n2 = rotate_by_quat(qw, qx, qy, qz, c)
    t0, t1, t2 = rotate_by_quat(tw, tx, ty, tz, c)
    gvel[v0] = ((target[0] + t0) - (root_pos[0] + n0)) / dt  # (0 exactly at the target)
    gvel[v0 + 1] = ((target[1] + t1) - (root_pos[1] + n1)) / dt
    gvel[v0 + 2] = ((target[2] + t2) - (root_pos[2] + n2)) / dt
    gvel[v0 + 3], gvel[v0 + 4], gvel[v0 + 5] = scale * dx, scale * dy, scale * dz


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def infinite_mass(v_parent, v_h, v0, v1, H):
    """Overwrite a tree's factor in H with that of an infinite mass: D infinite, L zero, so tree_factor.solve
    returns zero (no response, no velocity change) for any right-hand side."""
    for g in range(v0, v1):
        H[v_h[g]] = math.inf
        p = v_h[g] + 1
        j = v_parent[g]
        while j != -1:
            H[p] = 0.0
            p += 1
            j = v_parent[j]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def at_target(target, root_pos, root_quat, root_vel):
    """True when the body is at its target (then at rest: its velocity is zeroed, as PhysX reports a kinematic
    body given no new target)."""
    for a in range(3):
        if target[a] != root_pos[a]:
            return False
    for a in range(4):
        if target[3 + a] != root_quat[a]:
            return False
    for a in range(6):
        root_vel[a] = 0.0
    return True


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def reach_target(target, root_pos, root_quat):
    """The pose after the step is the target itself, bit for bit (the integrated one differs by rounding), so
    the next step finds the body at rest there (targets are stored unit: usdart.scene)."""
    for a in range(3):
        root_pos[a] = target[a]
    for a in range(4):
        root_quat[a] = target[3 + a]
