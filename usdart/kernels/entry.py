"""Entry points called from Python: boxed Model/State/Control/Workspace in, results in output arrays.

Each computes the link poses of its world first, then one algorithm. `*_one` runs world `w`;
`*_all` runs every world with prange (many copies of an articulation at once).
"""
from __future__ import annotations

from numba import njit, prange

from .aba import aba
from .centroidal import centroidal_momentum
from .crba import crba
from .jacobian import link_jacobians
from .kinematics import com_accelerations, com_velocities, link_poses
from .rnea import rnea
from .step import step_world


@njit(cache=True)
def poses_one(mb, sb, wb, w):
    link_poses(mb.value, sb.value, wb.value, w)


@njit(cache=True)
def inverse_dynamics_one(mb, sb, wb, w, qdd, root_acc, acc_scale, wrench, use_wrench, gravity, vel_scale, out):
    m, st, ws = mb.value, sb.value, wb.value
    link_poses(m, st, ws, w)
    rnea(m, st, ws, w, qdd, root_acc, acc_scale, wrench, use_wrench, gravity, vel_scale, out)


@njit(cache=True)
def mass_matrix_one(mb, sb, wb, w, with_armature, out):
    m, st, ws = mb.value, sb.value, wb.value
    link_poses(m, st, ws, w)
    crba(m, ws, w, with_armature, out)


@njit(cache=True)
def forward_dynamics_one(mb, sb, wb, w, tau, wrench, use_wrench, gravity, out):
    m, st, ws = mb.value, sb.value, wb.value
    link_poses(m, st, ws, w)
    aba(m, st, ws, w, tau, wrench, gravity, use_wrench, out)


@njit(cache=True)
def jacobians_one(mb, sb, wb, w, at_com, out):
    m, st, ws = mb.value, sb.value, wb.value
    link_poses(m, st, ws, w)
    link_jacobians(m, ws, w, at_com, out)


@njit(cache=True)
def centroidal_one(mb, sb, wb, w, qdd_zero, root_zero, wrench_zero, gravity_zero, rnea_out, A, bias):
    m, st, ws = mb.value, sb.value, wb.value
    link_poses(m, st, ws, w)
    centroidal_momentum(m, st, ws, w, qdd_zero, root_zero, wrench_zero, gravity_zero, rnea_out, A, bias)


@njit(cache=True)
def link_motion_one(mb, sb, cb, wb, w, rnea_out, velocity_out, acceleration_out):
    """Link COM velocities and classical accelerations at the state's last accelerations; leaves the
    transmitted joint forces (with gravity and the control's link wrenches) in the workspace."""
    m, st, ctl, ws = mb.value, sb.value, cb.value, wb.value
    link_poses(m, st, ws, w)
    rnea(m, st, ws, w, st.qdd, st.root_acc, 1.0, ctl.link_wrench, True, m.gravity, 1.0, rnea_out)
    com_velocities(m, ws, w, velocity_out)
    for i in range(m.n_links):  # RNEA leaves a - g in ws.acc
        for a in range(3):
            ws.acc[w, i, 3 + a] += m.gravity[a]
    com_accelerations(m, ws, w, acceleration_out)


# Batches: a serial wrapper opens the boxes once and hands the NamedTuples to a parallel loop (opening a
# box inside the loop would make every thread touch the same reference counts).
@njit(cache=True, parallel=True)
def _inverse_dynamics_par(m, st, ws, qdd, root_acc, wrench, use_wrench, gravity, out):
    for w in prange(st.q.shape[0]):
        link_poses(m, st, ws, w)
        rnea(m, st, ws, w, qdd, root_acc, 1.0, wrench, use_wrench, gravity, 1.0, out)


@njit(cache=True)
def inverse_dynamics_all(mb, sb, wb, qdd, root_acc, wrench, use_wrench, gravity, out):
    _inverse_dynamics_par(mb.value, sb.value, wb.value, qdd, root_acc, wrench, use_wrench, gravity, out)


@njit(cache=True, parallel=True)
def _mass_matrix_par(m, st, ws, with_armature, out):
    for w in prange(st.q.shape[0]):
        link_poses(m, st, ws, w)
        crba(m, ws, w, with_armature, out)


@njit(cache=True)
def mass_matrix_all(mb, sb, wb, with_armature, out):
    _mass_matrix_par(mb.value, sb.value, wb.value, with_armature, out)


@njit(cache=True, parallel=True)
def _forward_dynamics_par(m, st, ws, tau, wrench, use_wrench, gravity, out):
    for w in prange(st.q.shape[0]):
        link_poses(m, st, ws, w)
        aba(m, st, ws, w, tau, wrench, gravity, use_wrench, out)


@njit(cache=True)
def forward_dynamics_all(mb, sb, wb, tau, wrench, use_wrench, gravity, out):
    _forward_dynamics_par(mb.value, sb.value, wb.value, tau, wrench, use_wrench, gravity, out)


@njit(cache=True)
def step_one(b, w, dt, steps, rk4):
    """Advance world w; b boxes (model, state, RK4 stage scratch, control, workspace) as one argument,
    since each boxed argument costs about a microsecond of dispatch per Python call."""
    m, st, stage, ctl, ws = b.value
    for _ in range(steps):
        step_world(m, st, stage, ctl, ws, w, dt, rk4)


@njit(cache=True, parallel=True)
def _step_par(m, st, stage, ctl, ws, dt, steps, rk4):
    for w in prange(st.q.shape[0]):
        for _ in range(steps):
            step_world(m, st, stage, ctl, ws, w, dt, rk4)


@njit(cache=True)
def step_all(b, dt, steps, rk4):
    """Advance every world by `steps` steps of dt (worlds in parallel); b as for step_one."""
    m, st, stage, ctl, ws = b.value
    _step_par(m, st, stage, ctl, ws, dt, steps, rk4)
