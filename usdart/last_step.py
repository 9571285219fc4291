"""An articulation's last step replayed: its links' accelerations and incoming joint forces, in any worlds.

PhysX reports both from the step it just took (PxArticulationCache eLINK_ACCELERATION and
eLINK_INCOMING_JOINT_FORCE). A usdart step records what it started from and what it applied (State.*_start,
State.link_impulse); this module replays it by RNEA in a scratch scene of the articulation alone, every
chosen world in one kernel call: the state the step started from (where its dynamics were evaluated), its
accelerations (dv/dt), the link forces it applied (user forces, gravity switched off, damping, velocity
limits), the impulses its contact and joint rows put on the links, and gravity. A sleeping articulation
keeps its last awake step's record, as PhysX keeps its values. Before a world's first step (or after its
reset) the current state is held still.

Incoming joint forces are [force; torque] about the joint where the step applied them (its step-start
position), in the child joint frame at the link's current pose, as PhysX gives them: the link transforms
read after the step turn them into world axes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .core.engine import Engine
from .core.kernels import entry
from .core.state import Control, State, Workspace


class Scratch(NamedTuple):
    """A scene of one articulation alone (its solo model in as many worlds as replays at once)."""

    box: object
    state: State
    control: Control
    work: Workspace


def replay(engine: Engine, tree: int, worlds: np.ndarray, scratch: Scratch, child_frame_pos, child_frame_rot):
    """(accelerations, incoming joint forces) of tree `tree`'s last step in the engine's `worlds`, each
    (len(worlds), n_links, 6): the links' COM accelerations [linear; angular] (world axes) and their inbound
    joints' forces (module docstring); scratch world i replays engine world worlds[i]. child_frame_pos/rot:
    each link's joint frame in the link (the articulation model's)."""
    e, src, st, ctl = engine, engine.state, scratch.state, scratch.control
    l0, l1, d0, d1 = (int(x) for x in e.model.trees.tree[tree, :4])
    n = len(worlds)
    stepped = e.stepped[worlds]

    def pick(start, now, shape_rank):  # the step start where the world has stepped, else the state now
        return np.where(stepped.reshape((n,) + (1,) * shape_rank), start, now)

    st.q[:n] = pick(src.q_start[worlds, d0:d1], src.q[worlds, d0:d1], 1)
    st.qd[:n] = pick(src.qd_start[worlds, d0:d1], src.qd[worlds, d0:d1], 1)
    st.joint_quat[:n] = pick(src.joint_quat_start[worlds, l0:l1], src.joint_quat[worlds, l0:l1], 2)
    st.root_pos[:n, 0] = pick(src.root_pos_start[worlds, tree], src.root_pos[worlds, tree], 1)
    st.root_quat[:n, 0] = pick(src.root_quat_start[worlds, tree], src.root_quat[worlds, tree], 1)
    st.root_vel[:n, 0] = pick(src.root_vel_start[worlds, tree], src.root_vel[worlds, tree], 1)
    st.qdd[:n] = pick(src.qdd[worlds, d0:d1], 0.0, 1)
    st.root_acc[:n, 0] = pick(src.root_acc[worlds, tree], 0.0, 1)
    wrench = src.wrench_start[worlds, l0:l1]
    if e.last_dt > 0.0:
        wrench = wrench + src.link_impulse[worlds, l0:l1] / e.last_dt
    ctl.link_wrench[:n] = pick(wrench, 0.0, 2)

    acceleration = np.zeros((n, l1 - l0, 6))
    e.over_worlds(entry.tree_dynamics, scratch.box, n, 0, entry.TREE_LINK_ACCELERATIONS, np.zeros(3), acceleration)

    transmitted = scratch.work.force[:n]  # [torque about the world origin; force], world
    joint_start = st.link_pos[:n] + np.einsum("wlij,lj->wli", st.link_rot[:n], child_frame_pos)
    frame_now = np.einsum("wlij,ljk->wlik", src.link_rot[worlds, l0:l1], child_frame_rot)
    force = transmitted[..., 3:]
    torque = transmitted[..., :3] - np.cross(joint_start, force)
    incoming = np.concatenate(
        [np.einsum("wlji,wlj->wli", frame_now, force), np.einsum("wlji,wlj->wli", frame_now, torque)], axis=-1
    )
    incoming[:, 0] = 0.0  # the root has no inbound joint
    return acceleration, incoming
