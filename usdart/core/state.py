"""`State`, `Control` and `Workspace` of a scene model: what changes, per world.

Every array has a leading world axis, so one Model drives many copies of a scene (parameter sweeps,
learning) and the step runs them in parallel. NamedTuples: a kernel takes each as one argument, and
an articulation's part of them is a set of numpy views (`tree_view`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import layout as L
from .articulation_model import ArticulationModel
from .description import ArticulationDesc
from .model import Model, closed_trees


class State(NamedTuple):
    q: np.ndarray  # (W, n_dofs) joint positions; spherical joints: rotation-vector components (derived)
    qd: np.ndarray  # (W, n_dofs)
    qdd: np.ndarray  # (W, n_dofs) accelerations of the last step (read only)
    joint_quat: np.ndarray  # (W, n_links, 4) wxyz rotation of spherical joints (the truth for them)
    root_pos: np.ndarray  # (W, n_trees, 3) root link frame origin, world
    root_quat: np.ndarray  # (W, n_trees, 4) wxyz
    root_vel: np.ndarray  # (W, n_trees, 6) [v_com; omega], world axes (PhysX root velocity)
    root_acc: np.ndarray  # (W, n_trees, 6) of the last step (read only)
    asleep: np.ndarray  # (W, n_trees) bool: asleep trees are not stepped until something wakes them
    link_pos: np.ndarray  # (W, n_links, 3) link frame origins, world (follow q after every step)
    link_rot: np.ndarray  # (W, n_links, 3, 3)
    link_wake: np.ndarray  # (W, n_links) each link's wake counter (s; usdart.core.kernels.sleep)
    sleep_filter: np.ndarray  # (W, n_links, 6) each link's sleep filter: summed [v_com; omega in its axes]
    # the last step of each tree (read only; a sleeping tree keeps its last awake step's, as PhysX keeps its
    # incoming joint forces): the state its dynamics were evaluated at, the link forces it applied and the
    # impulses its constraint rows put on the links (the incoming joint forces and link accelerations of
    # Articulation.copy_internal_state_to_cache)
    q_start: np.ndarray  # (W, n_dofs)
    qd_start: np.ndarray  # (W, n_dofs)
    joint_quat_start: np.ndarray  # (W, n_links, 4)
    root_pos_start: np.ndarray  # (W, n_trees, 3)
    root_quat_start: np.ndarray  # (W, n_trees, 4)
    root_vel_start: np.ndarray  # (W, n_trees, 6)
    wrench_start: np.ndarray  # (W, n_links, 6) [force; torque] at the COMs: user forces, gravity switched off,
    # link damping and velocity limits (applied.applied_wrenches)
    link_impulse: np.ndarray  # (W, n_links, 6) contact and joint rows' [impulse; angular impulse about the COM],
    # world, at the step-start poses (step.record_link_impulses)
    joint_broken: np.ndarray  # (W, n_joints) bool: joints outside the trees (model.couplings) that broke


class Control(NamedTuple):
    joint_force: np.ndarray  # (W, n_dofs) persistent joint forces
    target_position: np.ndarray  # (W, n_dofs)
    target_velocity: np.ndarray  # (W, n_dofs)
    link_wrench: np.ndarray  # (W, n_links, 6) [force; torque] at each link COM, world, for the next step
    kinematic_target: np.ndarray  # (W, n_trees, 7) [x, y, z, qw, qx, qy, qz] a kinematic body's pose to reach
    tree_settings: np.ndarray  # (n_trees, TREE_SETTING_COLUMNS): TS_* (sleep threshold, maxForce as force,
    # divergence speed, momentum kept, solver)


class Workspace(NamedTuple):
    """Scratch, rewritten by every kernel call and never allocated inside one. Dynamics quantities are in
    world axes at the world origin (usdart.core.kernels.spatial)."""

    motion: np.ndarray  # (W, n_dofs, 6) motion columns S
    body_mass: np.ndarray  # (W, n_links) link inertia in world axes about the origin: mass,
    body_moment: np.ndarray  # (W, n_links, 3) first moment,
    body_inertia: np.ndarray  # (W, n_links, 3, 3) rotational inertia
    comp_mass: np.ndarray  # (W, n_links) composite (link + subtree) inertia, same form
    comp_moment: np.ndarray  # (W, n_links, 3)
    comp_inertia: np.ndarray  # (W, n_links, 3, 3)
    vel: np.ndarray  # (W, n_links, 6) link spatial velocity
    acc: np.ndarray  # (W, n_links, 6) link spatial acceleration
    force: np.ndarray  # (W, n_links, 6) spatial force transmitted by each link's inbound joint
    wrench: np.ndarray  # (W, n_links, 6) link forces of the step [force; torque] at COMs
    H: np.ndarray  # (W, n_h) mass matrix M + armature + dt damping in tree-sparse storage, then its factor
    gen: np.ndarray  # (W, n_v) generalized forces, then accelerations
    gvel: np.ndarray  # (W, n_v) generalized velocity being solved
    gvel_start: np.ndarray  # (W, n_v) at the step start
    gvel_pos: np.ndarray  # (W, n_v) the velocity the positions move with: PGS after the position iterations,
    # TGS the step average (during the substeps: the displacement since the step start)
    substep_change: np.ndarray  # (W, n_v) TGS: the unconstrained velocity change each substep adds
    external_wrench: np.ndarray  # (W, n_links, 6) TGS: the step's link forces it applies in substeps
    link_drift: np.ndarray  # (W, n_links, 6) dt times each link's velocity-product acceleration (link_drifts)
    link_cfm: np.ndarray  # (W, n_links) each link's constraint-force mixing at the step (solver.link_cfm)
    interactions: np.ndarray  # (W, n_links) PhysX's counted interactions of each link (sleep.count_joints)
    cfm_step: np.ndarray  # (W, n_trees) int64: the step each tree's link cfms were computed in
    row_value: np.ndarray  # (W, n_rows, ROW_VALUE_COLUMNS): RV_*
    resp: np.ndarray  # (W, n_response) row responses
    jac: np.ndarray  # (W, n_jacobian) row Jacobians
    point_jac: np.ndarray  # (W, 12, max tree velocities) point Jacobians of a row's two sides
    frames: np.ndarray  # (W, 2, 4, 4) a joint's two frames in world
    vec: np.ndarray  # (W, 12, 6) small vectors
    posed: np.ndarray  # (W, n_dofs + 4 n_links + 7 n_trees): the positions the link poses are of
    diverged: np.ndarray  # (W, DIVERGED_COLUMNS) int64: DV_* (the divergence guard's report; not scratch)
    momentum: np.ndarray  # (W, n_trees, 9) the momentum a closed floating tree must end its step with, its COM
    # contacts (usdart.core.kernels.collide / contacts / groups); n_contacts: room for contact points
    shape_rot: np.ndarray  # (W, n_shapes, 3, 3) world poses of the shapes at the step start
    shape_pos: np.ndarray  # (W, n_shapes, 3)
    shape_bounds: np.ndarray  # (W, n_shapes, 6) their bounds grown by the contact offsets
    shape_order: np.ndarray  # (W, n_shapes) int64: non-plane shapes sorted by low x (kept between steps)
    contact: np.ndarray  # (W, n_contacts, CONTACT_GEOMETRY): CG_*
    contact_pair: np.ndarray  # (W, n_contacts, 2) int64: shapes A, B
    contact_count: np.ndarray  # (W, CONTACT_COUNT_COLUMNS) int64: CC_*
    contact_order: np.ndarray  # (W, n_contacts) int64: contact points by solver group
    contact_sort: np.ndarray  # (W, 2 n_contacts + n_shapes + 1) int64: sorting scratch (groups.solver_groups)
    contact_scratch: np.ndarray  # (W, 32, 3) narrow-phase scratch
    contact_candidates: np.ndarray  # (W, polygon room, CONTACT_GEOMETRY) a manifold's candidate points
    contact_found: np.ndarray  # (W, 8, CONTACT_GEOMETRY) a pair's points
    # general convex pairs (kernels/convex.py; one row each where the scene has no cylinder, cone or hull)
    epa_point: np.ndarray  # (W, EPA_POINTS, 9) GJK's simplex and EPA's polytope
    epa_weight: np.ndarray  # (W, 16)
    epa_face: np.ndarray  # (W, EPA_FACES, 4) int64
    epa_plane: np.ndarray  # (W, EPA_FACES, 4)
    epa_edge: np.ndarray  # (W, 3 EPA_FACES, 2) int64
    contact_polygon: np.ndarray  # (W, 4, polygon room, 3) supporting features and clipping
    group_parent: np.ndarray  # (W, n_islands) int64: each island's solver-group root
    group_next: np.ndarray  # (W, n_islands) int64: the next island of its group (-1: last)
    group_start: np.ndarray  # (W, n_islands + 1) int64: a root's contact points in contact_order
    group_rows: np.ndarray  # (W, 2) int64: the contact rows of the group being solved
    contact_row: np.ndarray  # (W, n_contact_rows, CONTACT_ROW_COLUMNS) int64: CR_*
    contact_value: np.ndarray  # (W, n_contact_rows, CONTACT_VALUE_COLUMNS): CV_*
    contact_storage: np.ndarray  # (W, n_storage) contact rows' Jacobians and responses
    patch_key: np.ndarray  # (W, 2 n_contacts, 2) int64: friction patches kept between steps (PK_*; not scratch)
    patch: np.ndarray  # (W, 2 n_contacts, PATCH_COLUMNS): their anchors (FP_*)
    contact_touched: np.ndarray  # (W, n_trees) int64: the last step a tree touched another body or the ground
    # articulated-body algorithm (RK4 stages, forward dynamics); zero worlds when a scene never needs them
    art_inertia: np.ndarray  # (W', n_links, 6, 6)
    art_bias: np.ndarray  # (W', n_links, 6)
    dof_u: np.ndarray  # (W', n_dofs, 6) U = IA S
    dof_inv: np.ndarray  # (W', n_links, 3, 3) (S^T IA S + armature)^-1 per joint
    dof_bias: np.ndarray  # (W', n_dofs) tau - S^T pA
    mat6: np.ndarray  # (W', 6, 6)
    tau: np.ndarray  # (W', n_dofs)
    # RK4 stages: velocities (0-3), accelerations (4-7), mean velocity (8), new velocity (9); stage state
    rk: np.ndarray  # (W', 10, n_v)
    stage_q: np.ndarray  # (W', n_dofs)
    stage_qd: np.ndarray  # (W', n_dofs)
    stage_joint_quat: np.ndarray  # (W', n_links, 4)
    stage_root_pos: np.ndarray  # (W', n_trees, 3)
    stage_root_quat: np.ndarray  # (W', n_trees, 4)
    stage_root_vel: np.ndarray  # (W', n_trees, 6)
    stage_pos: np.ndarray  # (W', n_links, 3)
    stage_rot: np.ndarray  # (W', n_links, 3, 3)


def sizes(model: Model) -> tuple[int, int, int, int, int]:
    """(links, DOFs, trees, generalized velocities, rows)."""
    return (
        len(model.links.link),
        len(model.dofs.dof),
        len(model.trees.tree),
        len(model.trees.v_parent),
        len(model.couplings.row),
    )


def zeros_state(model: Model, worlds: int) -> State:
    n, nd, nt, _, _ = sizes(model)
    joint_quat = np.zeros((worlds, n, 4))
    joint_quat[..., 0] = 1.0
    root_quat = np.zeros((worlds, nt, 4))
    root_quat[..., 0] = 1.0
    rot = np.zeros((worlds, n, 3, 3))
    rot[:] = np.eye(3)
    return State(
        np.zeros((worlds, nd)),
        np.zeros((worlds, nd)),
        np.zeros((worlds, nd)),
        joint_quat,
        np.zeros((worlds, nt, 3)),
        root_quat,
        np.zeros((worlds, nt, 6)),
        np.zeros((worlds, nt, 6)),
        np.zeros((worlds, nt), bool),
        np.zeros((worlds, n, 3)),
        rot,
        np.full((worlds, n), L.WAKE_TIME),
        np.zeros((worlds, n, 6)),
        np.zeros((worlds, nd)),
        np.zeros((worlds, nd)),
        joint_quat.copy(),
        np.zeros((worlds, nt, 3)),
        root_quat.copy(),
        np.zeros((worlds, nt, 6)),
        np.zeros((worlds, n, 6)),
        np.zeros((worlds, n, 6)),
        np.zeros((worlds, len(model.couplings.joint_link)), bool),
    )


def zeros_control(model: Model, worlds: int) -> Control:
    n, nd, nt, _, _ = sizes(model)
    settings = np.zeros((nt, L.TREE_SETTING_COLUMNS))
    settings[:, L.TS_DRIVE_LIMITS_ARE_FORCES] = 1.0
    settings[:, L.TS_DIVERGENCE_SPEED] = L.DIVERGENCE_SPEED
    settings[:, L.TS_CONSERVE_MOMENTUM] = closed_trees(model)
    settings[:, L.TS_SOLVER] = L.SOLVER_TGS  # PhysX's defaults (usdart.usd.importer.stage_settings)
    settings[:, L.TS_SUBSTEP_FORCES] = 1.0
    settings[:, L.TS_CONTACTS] = 1.0
    target = np.zeros((worlds, nt, 7))
    target[:, :, 3] = 1.0
    return Control(
        np.zeros((worlds, nd)),
        np.zeros((worlds, nd)),
        np.zeros((worlds, nd)),
        np.zeros((worlds, n, 6)),
        target,
        settings,
    )


def workspace(model: Model, worlds: int, articulated: bool = False, contacts_per_shape: int | None = None) -> Workspace:
    """Scratch for `worlds` worlds; `articulated` adds the ABA and RK4 arrays (else they have no worlds);
    room for contacts_per_shape contact points per shape (contact_workspace)."""
    n, nd, nt, nv, rows = sizes(model)
    wa = worlds if articulated else 0
    z = np.zeros
    return Workspace(
        motion=z((worlds, nd, 6)),
        body_mass=z((worlds, n)),
        body_moment=z((worlds, n, 3)),
        body_inertia=z((worlds, n, 3, 3)),
        comp_mass=z((worlds, n)),
        comp_moment=z((worlds, n, 3)),
        comp_inertia=z((worlds, n, 3, 3)),
        vel=z((worlds, n, 6)),
        acc=z((worlds, n, 6)),
        force=z((worlds, n, 6)),
        wrench=z((worlds, n, 6)),
        H=z((worlds, int(model.trees.v_h[-1]))),
        gen=z((worlds, nv)),
        gvel=z((worlds, nv)),
        gvel_start=z((worlds, nv)),
        gvel_pos=z((worlds, nv)),
        substep_change=z((worlds, nv)),
        external_wrench=z((worlds, n, 6)),
        link_drift=z((worlds, n, 6)),
        link_cfm=z((worlds, n)),
        interactions=z((worlds, n)),
        cfm_step=z((worlds, nt), np.int64),
        row_value=z((worlds, rows, L.ROW_VALUE_COLUMNS)),
        resp=z((worlds, model.n_response)),
        jac=z((worlds, model.n_jacobian)),
        point_jac=z((worlds, 12, max(model.max_tree_velocities, 1))),
        frames=z((worlds, 2, 4, 4)),
        vec=z((worlds, 12, 6)),
        posed=np.full((worlds, nd + 4 * n + 7 * nt), np.nan),
        diverged=np.zeros((worlds, L.DIVERGED_COLUMNS), np.int64),
        momentum=z((worlds, nt, 9)),
        **contact_workspace(model, worlds, contacts_per_shape or CONTACTS_PER_SHAPE),
        art_inertia=z((wa, n, 6, 6)),
        art_bias=z((wa, n, 6)),
        dof_u=z((wa, nd, 6)),
        dof_inv=z((wa, n, 3, 3)),
        dof_bias=z((wa, nd)),
        mat6=z((wa, 6, 6)),
        tau=z((wa, nd)),
        rk=z((wa, 10, nv)),
        stage_q=z((wa, nd)),
        stage_qd=z((wa, nd)),
        stage_joint_quat=z((wa, n, 4)),
        stage_root_pos=z((wa, nt, 3)),
        stage_root_quat=z((wa, nt, 4)),
        stage_root_vel=z((wa, nt, 6)),
        stage_pos=z((wa, n, 3)),
        stage_rot=z((wa, n, 3, 3)),
    )


CONTACTS_PER_SHAPE = 8  # room for contact points at first: a resting box has four, one in a pile more (the
# engine doubles the room when a step found more: usdart.core.engine.Engine.step)
ROWS_PER_CONTACT = 3  # a normal row per point, two friction rows per anchor (at most two per pair)


def contact_workspace(model: Model, worlds: int, per_shape: int) -> dict:
    """Contact scratch sized by the model's shapes (none without shapes): room for per_shape points per shape.
    Points beyond the room are dropped and counted (work.contact_count[:, CC_DROPPED])."""
    shapes = model.shapes.shape
    n = len(shapes)
    contacts = per_shape * n + 32 if n else 0
    rows = ROWS_PER_CONTACT * contacts
    storage = rows * (2 * max(model.max_tree_velocities, 1) + 12)
    islands = len(model.trees.island)
    kinds = shapes[:, L.S_TYPE]
    general = bool(np.any((kinds >= L.SHAPE_CYLINDER) & (kinds != L.SHAPE_PLANE)))
    # a manifold's candidates (a clipped polygon holds both features' points; hull vertices on a plane and
    # points from a mesh's triangles keep the deepest that fit) and the polygon buffers: sized by the
    # largest hull face
    sizes = np.diff(model.shapes.face_start)
    hulls = np.flatnonzero(kinds == L.SHAPE_CONVEX)
    largest = max(
        (int(sizes[model.shapes.hull_faces[s] : model.shapes.hull_faces[s + 1]].max()) for s in hulls), default=0
    )
    room = max(32, 2 * max(largest, L.DISC_POINTS) + 4) if general else 8
    order = np.zeros((worlds, n), np.int64)
    order[:, : int(np.sum(shapes[:, L.S_TYPE] != L.SHAPE_PLANE))] = np.flatnonzero(shapes[:, L.S_TYPE] != L.SHAPE_PLANE)
    z = np.zeros
    return dict(
        shape_rot=z((worlds, n, 3, 3)),
        shape_pos=z((worlds, n, 3)),
        shape_bounds=z((worlds, n, 6)),
        shape_order=order,
        contact=z((worlds, contacts, L.CONTACT_GEOMETRY)),
        contact_pair=z((worlds, contacts, 2), np.int64),
        contact_count=z((worlds, L.CONTACT_COUNT_COLUMNS), np.int64),
        contact_order=z((worlds, contacts), np.int64),
        contact_sort=z((worlds, 2 * contacts + n + 1), np.int64),
        contact_scratch=z((worlds, 32, 3)),
        contact_candidates=z((worlds, room, L.CONTACT_GEOMETRY)),
        contact_found=z((worlds, 8, L.CONTACT_GEOMETRY)),
        epa_point=z((worlds, L.EPA_POINTS if general else 1, 9)),
        epa_weight=z((worlds, 16)),
        epa_face=z((worlds, L.EPA_FACES if general else 1, 4), np.int64),
        epa_plane=z((worlds, L.EPA_FACES if general else 1, 4)),
        epa_edge=z((worlds, 3 * L.EPA_FACES if general else 1, 2), np.int64),
        contact_polygon=z((worlds, 4, room, 3)),
        group_parent=np.tile(np.arange(islands, dtype=np.int64), (worlds, 1)),  # every island alone
        group_next=np.full((worlds, islands), -1, np.int64),
        group_start=z((worlds, islands + 1), np.int64),
        group_rows=z((worlds, 2), np.int64),
        contact_row=z((worlds, rows, L.CONTACT_ROW_COLUMNS), np.int64),
        contact_value=z((worlds, rows, L.CONTACT_VALUE_COLUMNS)),
        contact_storage=z((worlds, storage)),
        patch_key=z((worlds, 2 * contacts, 2), np.int64),
        contact_touched=z((worlds, len(model.trees.tree)), np.int64),
        patch=z((worlds, 2 * contacts, L.PATCH_COLUMNS)),
    )


def set_initial_state(
    model: Model, state: State, control: Control, t: int, desc: ArticulationDesc, tree_model: ArticulationModel
) -> None:
    """Tree t starts as authored: root body pose and velocity (a kinematic body: at rest, its target its
    pose), JointStateAPI positions and velocities, drive targets; settings from the articulation (sleep
    threshold)."""
    l0, _, d0, d1 = model.trees.tree[t, :4]
    root = desc.bodies[0]
    if root is not None:
        state.root_pos[:, t] = root.pose.position
        state.root_quat[:, t] = np.asarray(root.pose.orientation, float) / np.linalg.norm(root.pose.orientation)
        control.kinematic_target[:, t, :3] = state.root_pos[:, t]
        control.kinematic_target[:, t, 3:] = state.root_quat[:, t]
        if not desc.fixed_base and not root.kinematic:
            state.root_vel[:, t, :3] = root.linear_velocity
            state.root_vel[:, t, 3:] = root.angular_velocity
    dofs = desc.dofs
    state.q[:, d0:d1] = [d.position for d in dofs]
    state.qd[:, d0:d1] = [d.velocity for d in dofs]
    control.target_position[:, d0:d1] = [d.drive.target_position if d.drive else 0.0 for d in dofs]
    control.target_velocity[:, d0:d1] = [d.drive.target_velocity if d.drive else 0.0 for d in dofs]
    control.tree_settings[t, L.TS_SLEEP_THRESHOLD] = tree_model.sleep_threshold
    view = tree_view(model, state, t)
    sync_spherical_quaternions(tree_model, view, 0)
    view.joint_quat[1:] = view.joint_quat[0]  # every world starts alike


class TreeState(NamedTuple):
    """One tree's part of a State, as numpy views (writes go to the scene's state)."""

    q: np.ndarray  # (W, n_dofs of the tree)
    qd: np.ndarray
    qdd: np.ndarray
    joint_quat: np.ndarray  # (W, n_links of the tree, 4)
    root_pos: np.ndarray  # (W, 3)
    root_quat: np.ndarray  # (W, 4)
    root_vel: np.ndarray  # (W, 6)
    root_acc: np.ndarray  # (W, 6)
    asleep: np.ndarray  # (W,)
    link_pos: np.ndarray  # (W, n_links of the tree, 3)
    link_rot: np.ndarray  # (W, n_links of the tree, 3, 3)
    link_wake: np.ndarray  # (W, n_links of the tree)


def tree_view(model: Model, state: State, t: int) -> TreeState:
    l0, l1, d0, d1 = (int(x) for x in model.trees.tree[t, :4])
    return TreeState(
        state.q[:, d0:d1],
        state.qd[:, d0:d1],
        state.qdd[:, d0:d1],
        state.joint_quat[:, l0:l1],
        state.root_pos[:, t],
        state.root_quat[:, t],
        state.root_vel[:, t],
        state.root_acc[:, t],
        state.asleep[:, t],
        state.link_pos[:, l0:l1],
        state.link_rot[:, l0:l1],
        state.link_wake[:, l0:l1],
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


def sync_spherical_quaternions(model: ArticulationModel, state, w: int) -> None:
    """Set each spherical joint's quaternion from its DOF positions: J = exp(sum_k q_k e_k). `state`: a
    tree's view (local link and DOF indices)."""
    for i in np.flatnonzero(model.joint_type == L.JOINT_SPHERICAL):
        lo, hi = model.dof_start[i], model.dof_start[i + 1]
        state.joint_quat[w, i] = rotation_vector_to_quat(model.dof_axis[lo:hi].T @ state.q[w, lo:hi])


def sync_spherical_positions(model: ArticulationModel, state, w: int) -> None:
    """Set spherical DOF positions from the quaternions (components of the rotation vector on the axes)."""
    for i in np.flatnonzero(model.joint_type == L.JOINT_SPHERICAL):
        lo, hi = model.dof_start[i], model.dof_start[i + 1]
        state.q[w, lo:hi] = model.dof_axis[lo:hi] @ quat_to_rotation_vector(state.joint_quat[w, i])
