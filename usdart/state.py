"""`State`, `Control` and `Workspace`: the per-world arrays the kernels read and write.

Every array has a leading world axis so one Model drives many copies of an articulation (parameter sweeps,
learning) and the kernels run them with `prange`. NamedTuples, so a numba kernel takes each as one
argument.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .importer.description import ArticulationDesc
from .model import JOINT_SPHERICAL, WAKE_TIME, Model


class State(NamedTuple):
    q: np.ndarray  # (W, n_dofs) joint positions; spherical joints: rotation-vector components (derived)
    qd: np.ndarray  # (W, n_dofs)
    qdd: np.ndarray  # (W, n_dofs) accelerations of the last step (read only)
    joint_quat: np.ndarray  # (W, n_links, 4) wxyz rotation of spherical joints (the truth for them)
    root_pos: np.ndarray  # (W, 3) root link frame origin, world
    root_quat: np.ndarray  # (W, 4) wxyz
    root_vel: np.ndarray  # (W, 6) [v_com; omega], world axes (PhysX root velocity)
    root_acc: np.ndarray  # (W, 6) of the last step (read only)
    wake_time: np.ndarray  # (W,) seconds left before a world at rest falls asleep
    asleep: np.ndarray  # (W,) bool: asleep worlds are not stepped until something wakes them


class Control(NamedTuple):
    joint_force: np.ndarray  # (W, n_dofs) persistent joint forces
    target_position: np.ndarray  # (W, n_dofs)
    target_velocity: np.ndarray  # (W, n_dofs)
    link_wrench: np.ndarray  # (W, n_links, 6) [force; torque] at each link COM, world, for the next step


class Workspace(NamedTuple):
    """Scratch and derived quantities; rewritten by every kernel call, never allocated inside one.

    Dynamics quantities are in world axes at the world origin (see usdart.kernels.spatial).
    """

    rel_rot: np.ndarray  # (W, n, 3, 3) child link rotation in its parent's frame
    rel_pos: np.ndarray  # (W, n, 3) child link origin in its parent's frame
    rot: np.ndarray  # (W, n, 3, 3) link rotation, world
    pos: np.ndarray  # (W, n, 3) link origin, world
    motion: np.ndarray  # (W, n_dofs, 6) motion columns S in world axes at the world origin
    body_mass: np.ndarray  # (W, n) link rigid inertia in world axes at the origin: mass,
    body_moment: np.ndarray  # (W, n, 3) first moment,
    body_inertia: np.ndarray  # (W, n, 3, 3) rotational inertia about the world origin
    comp_mass: np.ndarray  # (W, n) composite (link + subtree) inertia, same form
    comp_moment: np.ndarray  # (W, n, 3)
    comp_inertia: np.ndarray  # (W, n, 3, 3)
    vel: np.ndarray  # (W, n, 6) link spatial velocity
    acc: np.ndarray  # (W, n, 6) link spatial acceleration (ABA: velocity-product terms, then a - g)
    force: np.ndarray  # (W, n, 6) spatial force transmitted by each link's inbound joint
    art_inertia: np.ndarray  # (W, n, 6, 6) articulated-body inertia
    art_bias: np.ndarray  # (W, n, 6) articulated-body bias force
    dof_u: np.ndarray  # (W, n_dofs, 6) U = IA S
    dof_inv: np.ndarray  # (W, n, 3, 3) (S^T IA S + armature)^-1 per joint
    dof_bias: np.ndarray  # (W, n_dofs) tau - S^T pA
    mat6: np.ndarray  # (W, 6, 6) scratch for the floating root solve
    vec6: np.ndarray  # (W, 3, 6) scratch 6-vectors
    # ---- stepping (usdart.kernels.step) ----
    mass: np.ndarray  # (W, nv, nv) M + armature + dt * damping, then its Cholesky factor
    minv: np.ndarray  # (W, nv, nv) its inverse: the response of every generalized impulse
    gen: np.ndarray  # (W, nv) generalized forces
    gvel: np.ndarray  # (W, nv) generalized velocity being solved
    gvel_start: np.ndarray  # (W, nv) at the start of the step
    gvel_pos: np.ndarray  # (W, nv) after the position iterations (drives the position update)
    wrench: np.ndarray  # (W, n, 6) applied [force; torque] at link COMs, world
    dof_lambda: np.ndarray  # (W, 4, n_dofs) accumulated impulses: drive, friction, lower limit, upper limit
    drive_coef: np.ndarray  # (W, 4, n_dofs) implicit drive: velocity gain, constant, impulse gain, max impulse
    limit_err: np.ndarray  # (W, 2, n_dofs) distance to the lower and upper limit at the step start
    row_j: np.ndarray  # (W, rows, nv) coupling rows (tendons, mimic joints, loop joints): velocity Jacobian
    row_w: np.ndarray  # (W, rows, nv) velocity change per unit impulse
    row_r: np.ndarray  # (W, rows) response J M^-1 J^T
    row_err: np.ndarray  # (W, rows) position error at the step start
    row_lambda: np.ndarray  # (W, rows, 2) accumulated impulses (spring, limit)
    row_coef: np.ndarray  # (W, rows, 4) per-row coefficients
    point_jac: np.ndarray  # (W, 12, nv) scratch: point Jacobians of both sides of a loop joint
    tau: np.ndarray  # (W, n_dofs) scratch joint forces
    rk: np.ndarray  # (W, 10, nv) RK4: stage velocities, stage accelerations, mean velocity, new velocity


def zeros_state(model: Model, worlds: int) -> State:
    n, nd = model.n_links, model.n_dofs
    quat = np.zeros((worlds, n, 4))
    quat[..., 0] = 1.0
    root_quat = np.zeros((worlds, 4))
    root_quat[:, 0] = 1.0
    return State(np.zeros((worlds, nd)), np.zeros((worlds, nd)), np.zeros((worlds, nd)), quat,
                 np.zeros((worlds, 3)), root_quat, np.zeros((worlds, 6)), np.zeros((worlds, 6)),
                 np.full(worlds, WAKE_TIME), np.zeros(worlds, bool))


def initial_state(desc: ArticulationDesc, model: Model, worlds: int = 1) -> State:
    """Authored start: root body pose and velocity, JointStateAPI positions and velocities."""
    state = zeros_state(model, worlds)
    root = desc.bodies[0]
    if root is not None:
        state.root_pos[:] = root.pose.position
        state.root_quat[:] = np.asarray(root.pose.orientation, float) / np.linalg.norm(root.pose.orientation)
        if not desc.fixed_base:
            state.root_vel[:, :3] = root.linear_velocity
            state.root_vel[:, 3:] = root.angular_velocity
    dofs = desc.dofs
    state.q[:] = [d.position for d in dofs]
    state.qd[:] = [d.velocity for d in dofs]
    for w in range(worlds):
        sync_spherical_quaternions(model, state, w)
    return state


def zeros_control(model: Model, worlds: int) -> Control:
    nd = model.n_dofs
    return Control(np.zeros((worlds, nd)), np.zeros((worlds, nd)), np.zeros((worlds, nd)),
                   np.zeros((worlds, model.n_links, 6)))


def coupling_rows(model: Model) -> int:
    """Rows of the coupling constraints: one per spatial sub-tendon, fixed tendon and mimic joint, six per
    loop joint."""
    return len(model.spatial_params) + len(model.tendon_params) + len(model.mimic_follower) + 6 * len(model.loop_links)


def workspace(model: Model, worlds: int) -> Workspace:
    n, nd = model.n_links, model.n_dofs
    nv, rows = model.n_root + nd, coupling_rows(model)
    return Workspace(
        rel_rot=np.zeros((worlds, n, 3, 3)), rel_pos=np.zeros((worlds, n, 3)),
        rot=np.zeros((worlds, n, 3, 3)), pos=np.zeros((worlds, n, 3)), motion=np.zeros((worlds, nd, 6)),
        body_mass=np.zeros((worlds, n)), body_moment=np.zeros((worlds, n, 3)),
        body_inertia=np.zeros((worlds, n, 3, 3)), comp_mass=np.zeros((worlds, n)),
        comp_moment=np.zeros((worlds, n, 3)), comp_inertia=np.zeros((worlds, n, 3, 3)),
        vel=np.zeros((worlds, n, 6)), acc=np.zeros((worlds, n, 6)), force=np.zeros((worlds, n, 6)),
        art_inertia=np.zeros((worlds, n, 6, 6)), art_bias=np.zeros((worlds, n, 6)),
        dof_u=np.zeros((worlds, nd, 6)), dof_inv=np.zeros((worlds, n, 3, 3)), dof_bias=np.zeros((worlds, nd)),
        mat6=np.zeros((worlds, 6, 6)), vec6=np.zeros((worlds, 3, 6)),
        mass=np.zeros((worlds, nv, nv)), minv=np.zeros((worlds, nv, nv)), gen=np.zeros((worlds, nv)),
        gvel=np.zeros((worlds, nv)), gvel_start=np.zeros((worlds, nv)), gvel_pos=np.zeros((worlds, nv)),
        wrench=np.zeros((worlds, n, 6)), dof_lambda=np.zeros((worlds, 4, nd)), drive_coef=np.zeros((worlds, 4, nd)),
        limit_err=np.zeros((worlds, 2, nd)), row_j=np.zeros((worlds, rows, nv)), row_w=np.zeros((worlds, rows, nv)),
        row_r=np.zeros((worlds, rows)), row_err=np.zeros((worlds, rows)), row_lambda=np.zeros((worlds, rows, 2)),
        row_coef=np.zeros((worlds, rows, 4)), point_jac=np.zeros((worlds, 12, nv)),
        tau=np.zeros((worlds, nd)), rk=np.zeros((worlds, 10, nv)),
    )


def rotation_vector_to_quat(rv) -> np.ndarray:
    angle = float(np.linalg.norm(rv))
    if angle < 1e-12:
        return np.array([1.0, 0.5 * rv[0], 0.5 * rv[1], 0.5 * rv[2]]) / np.sqrt(1 + 0.25 * angle * angle)
    axis = np.asarray(rv, float) / angle
    return np.concatenate([[np.cos(0.5 * angle)], np.sin(0.5 * angle) * axis])


def quat_to_rotation_vector(q) -> np.ndarray:
    """Log map with the w >= 0 sign fix, so angles lie in [0, pi]."""
    w, v = float(q[0]), np.asarray(q[1:], float)
    if w < 0:
        w, v = -w, -v
    s = float(np.linalg.norm(v))
    if s < 1e-12:
        return 2.0 * v / max(w, 1e-300)
    return 2.0 * np.arctan2(s, w) * v / s


def sync_spherical_quaternions(model: Model, state: State, w: int) -> None:
    """Set each spherical joint's quaternion from its DOF positions: J = exp(sum_k q_k e_k)."""
    for i in np.flatnonzero(model.joint_type == JOINT_SPHERICAL):
        lo, hi = model.dof_start[i], model.dof_start[i + 1]
        state.joint_quat[w, i] = rotation_vector_to_quat(model.dof_axis[lo:hi].T @ state.q[w, lo:hi])


def sync_spherical_positions(model: Model, state: State, w: int) -> None:
    """Set spherical DOF positions from the quaternions (components of the rotation vector on the axes)."""
    for i in np.flatnonzero(model.joint_type == JOINT_SPHERICAL):
        lo, hi = model.dof_start[i], model.dof_start[i + 1]
        state.q[w, lo:hi] = model.dof_axis[lo:hi] @ quat_to_rotation_vector(state.joint_quat[w, i])
