"""MuJoCo twin of a usdart Articulation, built from the imported numbers, plus the maps between their states.

Why: MuJoCo is an independent simulator whose integrators match usdart's on smooth dynamics -- its RK4
is classical RK4 with explicit passive forces, and its Euler is semi-implicit with joint damping
implicit, M + dt D, as usdart's Euler -- so stepping the twin next to usdart checks whole trajectories,
and scripts/bench.py times mj_step on the same mechanism.

The twin has one MuJoCo body per moving joint (and per floating root) whose frame is that link's frame;
links welded to it by fixed joints are merged into it (mass, COM, full inertia tensor), as PinTwin merges
them, and on a fixed base the root and the links welded to it become the world. (MuJoCo's own
fusestatic would drop the rotational inertia of massless links, which URDF-derived files carry.) A
revolute / prismatic DOF becomes a hinge / slide joint at the child joint frame's origin along its
axis, with the DOF's armature and passive damping; a floating root becomes a free joint. Contacts,
joint limits (unless `limits=True`), friction loss, equalities and actuators are off: usdart's drives,
friction, limits, tendons and mimic joints are not mapped.

Coordinates: MuJoCo's qpos/qvel hold the joints in tree order (see `TwinMaps.qpos_adr`). A free joint
has qpos [x, y, z, qw, qx, qy, qz] of the link frame and qvel [v_origin (world), omega (body axes)];
usdart's root velocity is [v_com; omega], both in world axes (PhysX).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from usdart.core.frames import matrix_to_quat, quat_to_matrix
from usdart.core.layout import JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE

INTEGRATORS = {"euler": "Euler", "rk4": "RK4", "implicit": "implicit", "implicitfast": "implicitfast"}


def _num(values) -> str:
    return " ".join(repr(float(v)) for v in np.ravel(values))  # repr: shortest text that round-trips


def _skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


@dataclass
class TwinMaps:
    """usdart state <-> MuJoCo qpos/qvel. DOF k of usdart is qpos[qpos_adr[k]], qvel[qvel_adr[k]]."""

    qpos_adr: np.ndarray  # (n_dofs,)
    qvel_adr: np.ndarray  # (n_dofs,)
    floating: bool
    root_com: np.ndarray  # root link COM in its frame
    nq: int
    nv: int

    def velocity_map(self, root_quat) -> np.ndarray:
        """T (nv x nv) with qvel = T nu, nu = usdart's generalized velocity ([v_com; omega] world, qd)."""
        n_root = 6 if self.floating else 0
        T = np.zeros((self.nv, n_root + len(self.qvel_adr)))
        T[self.qvel_adr, n_root + np.arange(len(self.qvel_adr))] = 1.0
        if self.floating:  # v_origin = v_com - omega x R c; omega_body = R^T omega
            R = quat_to_matrix(root_quat)
            T[:3, :3] = np.eye(3)
            T[:3, 3:6] = _skew(R @ self.root_com)
            T[3:6, 3:6] = R.T
        return T

    def to_mujoco(self, state, world: int = 0):
        """(qpos, qvel) of world `world` of a usdart State."""
        qpos, qvel = np.zeros(self.nq), np.zeros(self.nv)
        qpos[self.qpos_adr] = state.q[world]
        qvel[self.qvel_adr] = state.qd[world]
        if self.floating:
            quat = np.asarray(state.root_quat[world], float)
            qpos[:3], qpos[3:7] = state.root_pos[world], quat / np.linalg.norm(quat)
            qvel[:6] = self.velocity_map(quat)[:6, :6] @ state.root_vel[world]
        return qpos, qvel

    def from_mujoco(self, qpos, qvel) -> dict:
        """usdart coordinates of a MuJoCo state: q, qd and (floating) root_pos, root_quat, root_vel."""
        out = dict(q=np.asarray(qpos)[self.qpos_adr].copy(), qd=np.asarray(qvel)[self.qvel_adr].copy())
        if self.floating:
            quat = np.asarray(qpos[3:7], float) / np.linalg.norm(qpos[3:7])
            out.update(
                root_pos=np.asarray(qpos[:3], float).copy(),
                root_quat=quat,
                root_vel=np.linalg.solve(self.velocity_map(quat)[:6, :6], qvel[:6]),
            )
        return out


def _merged_bodies(m, root_pos, root_quat):
    """MuJoCo bodies: the floating root and each link with a moving joint, links welded to one of them by
    fixed joints merged into it (for a fixed base, the root and links welded to it become the world).

    Returns owner (body link index per link, -1 = world), each body's pose (R, p) in its parent body at
    q = 0, and per body the merged mass, COM and inertia about the COM."""
    n = m.n_links
    owner = np.zeros(n, np.int64) if m.n_root else np.full(n, -1)
    R = [np.eye(3) if m.n_root else quat_to_matrix(root_quat)] + [None] * (n - 1)
    p = [np.zeros(3) if m.n_root else np.asarray(root_pos, float)] + [None] * (n - 1)
    placement = {}
    for i in range(1, n):  # parents come first; link i in its parent at q = 0: F_parent inverse(F_child)
        a = m.parent[i]
        Ri = m.parent_frame_rot[i] @ m.child_frame_rot[i].T
        pi = m.parent_frame_pos[i] - Ri @ m.child_frame_pos[i]
        if m.joint_type[i] == JOINT_FIXED:
            owner[i], R[i], p[i] = owner[a], R[a] @ Ri, R[a] @ pi + p[a]
        else:  # a new body, placed in the frame of its parent's owner
            owner[i], R[i], p[i] = i, np.eye(3), np.zeros(3)
            placement[i] = R[a] @ Ri, R[a] @ pi + p[a]
    inertia = {}
    for b in set(owner.tolist()) - {-1}:
        members = [i for i in range(n) if owner[i] == b]
        mass = sum(m.mass[i] for i in members)
        x = {i: R[i] @ m.com[i] + p[i] for i in members}  # link COMs in the body frame
        com = sum(m.mass[i] * x[i] for i in members) / mass if mass > 0 else np.zeros(3)
        I = sum(
            R[i] @ m.inertia_com[i] @ R[i].T
            + m.mass[i] * (np.dot(x[i] - com, x[i] - com) * np.eye(3) - np.outer(x[i] - com, x[i] - com))
            for i in members
        )
        inertia[b] = mass, com, I
    return owner, placement, inertia


def mujoco_mjcf(art, dt: float, integrator: str = "euler", limits: bool = False) -> str:
    """MJCF text of the twin of `art` (its Model, and for a fixed base the root pose of world 0)."""
    m, st = art.model, art.state
    owner, placement, inertia = _merged_bodies(m, st.root_pos[0], st.root_quat[0])

    def body(b: int, depth: int) -> list[str]:
        pad = "  " * depth
        if b == 0:
            pos, quat = st.root_pos[0], np.asarray(st.root_quat[0]) / np.linalg.norm(st.root_quat[0])
        else:
            pos, quat = placement[b][1], matrix_to_quat(placement[b][0])
        mass, com, I = inertia[b]
        lines = [
            f'{pad}<body name="link{b}" pos="{_num(pos)}" quat="{_num(quat)}">',
            f'{pad}  <inertial pos="{_num(com)}" mass="{_num(mass)}" '
            f'fullinertia="{_num([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])}"/>',
        ]
        if b == 0:
            lines.append(f'{pad}  <freejoint name="root"/>')
        else:
            if m.joint_type[b] not in (JOINT_REVOLUTE, JOINT_PRISMATIC):
                raise NotImplementedError(f"{art.desc.joints[b].path}: only revolute and prismatic joints are mapped")
            k = m.dof_start[b]
            kind = "hinge" if m.joint_type[b] == JOINT_REVOLUTE else "slide"
            limited = limits and np.isfinite(m.dof_lower[k]) and np.isfinite(m.dof_upper[k])
            rng = f' range="{_num([m.dof_lower[k], m.dof_upper[k]])}"' if limited else ""
            lines.append(
                f'{pad}  <joint name="dof{k}" type="{kind}" pos="{_num(m.child_frame_pos[b])}" '
                f'axis="{_num(m.child_frame_rot[b] @ m.dof_axis[k])}" armature="{_num(m.armature[k])}" '
                f'damping="{_num(m.passive_damping[k])}" limited="{str(limited).lower()}"{rng}/>'
            )
        return lines + children(b, depth + 1) + [f"{pad}</body>"]

    def children(b: int, depth: int) -> list[str]:
        return [
            line for i in range(1, m.n_links) if owner[i] == i and owner[m.parent[i]] == b for line in body(i, depth)
        ]

    flags = 'contact="disable" frictionloss="disable" equality="disable" actuation="disable"' + (
        "" if limits else ' limit="disable"'
    )
    return "\n".join(
        [
            '<mujoco model="usdart_twin">',
            '  <compiler angle="radian" inertiafromgeom="false" autolimits="false"/>',
            f'  <option timestep="{_num(dt)}" integrator="{INTEGRATORS[integrator]}" gravity="{_num(m.gravity)}">',
            f"    <flag {flags}/>",
            "  </option>",
            "  <worldbody>",
            *(body(0, 2) if m.n_root else children(-1, 2)),
            "  </worldbody>",
            "</mujoco>",
        ]
    )


def mujoco_twin(art, dt: float, integrator: str = "euler", limits: bool = False):
    """(MjModel, TwinMaps) of `art`, stepping by `dt` with "euler", "rk4", "implicit" or "implicitfast"."""
    model = mujoco.MjModel.from_xml_string(mujoco_mjcf(art, dt, integrator, limits))
    m = art.model
    qpos_adr, qvel_adr = np.zeros(m.n_dofs, np.int64), np.zeros(m.n_dofs, np.int64)
    for k in range(m.n_dofs):
        j = model.joint(f"dof{k}").id
        qpos_adr[k], qvel_adr[k] = model.jnt_qposadr[j], model.jnt_dofadr[j]
    maps = TwinMaps(qpos_adr, qvel_adr, m.n_root == 6, np.asarray(m.com[0], float).copy(), model.nq, model.nv)
    return model, maps


def full_mass_matrix(model, data) -> np.ndarray:
    """Dense M (with armature) of data's last mj_forward / mj_step, for MuJoCo 3.x and 4.x."""
    M = np.zeros((model.nv, model.nv))
    try:
        mujoco.mj_fullM(model, data, M)  # mujoco >= 4
    except TypeError:
        mujoco.mj_fullM(model, M, data.qM)
    return M
