"""`ArticulationModel`: one articulation description flattened into numpy arrays.

Arrays are in low-level (BFS) link order and low-level DOF order, indices local to the articulation.
The scene model (usdart.core.model) concatenates these into the flat tables the kernels read; users
and tests read an articulation's numbers here. Immutable after build.

Kinematics. The pose of link i in its parent's frame is
    X_parent_child(q) = F_parent[i] * J_i(q) * inverse(F_child[i])
where F_parent / F_child are the joint frames in the parent / child link frames (link frame = body prim
frame, scale removed) and J_i(q) moves the child joint frame relative to the parent one: a rotation
about the axis (revolute), a quaternion (spherical, 2-3 rotational DOFs), or a translation (prismatic).

Velocities. A joint's DOF velocities are the components of the child's motion relative to the parent
along the joint axes, expressed in the child joint frame (PhysX's constant motion subspace), so the
spatial motion columns `motion` are constant in the child link frame. A floating root moves with the
generalized velocity [v_com (world), omega (world)]: PhysX's root velocity, whose layout (linear first,
then angular) the generalized arrays (6 + n) keep.

Inertia. Each link's inertia is kept about the link frame origin as (mass, first moment m*c, rotational
inertia about the origin): ten numbers that move between frames without 6x6 products.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .description import ANGULAR_AXES, ArticulationDesc, Pose
from .frames import pose_matrix, quat_to_matrix
from .layout import (
    DRIVE_ACCELERATION,
    DRIVE_FORCE,
    DRIVE_NONE,
    GYROSCOPIC_EXACT,
    GYROSCOPIC_NONE,
    GYROSCOPIC_PHYSX,
    JD_ACCELERATION,
    JD_COLUMNS,
    JD_DAMPING,
    JD_MAX_FORCE,
    JD_STIFFNESS,
    JD_TARGET_POSITION,
    JD_TARGET_VELOCITY,
    JOINT_FIXED,
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_SPHERICAL,
)

_UNIT = {"X": 0, "Y": 1, "Z": 2}


class ArticulationModel(NamedTuple):
    """Constant arrays of one articulation."""

    n_links: int
    n_dofs: int
    n_root: int  # generalized root DOFs: 6 for a floating base, 0 for a fixed one
    parent: np.ndarray  # (n_links,) int64, -1 for the root
    joint_type: np.ndarray  # (n_links,) int64, JOINT_*; the root is FIXED or FREE
    dof_start: np.ndarray  # (n_links + 1,) int64: DOFs of link i are dof_start[i]:dof_start[i+1]
    dof_link: np.ndarray  # (n_dofs,) int64: link moved by each DOF
    dof_axis: np.ndarray  # (n_dofs, 3) unit axis in the joint frame
    dof_angular: np.ndarray  # (n_dofs,) bool
    motion: np.ndarray  # (n_dofs, 6) motion columns [omega; v] in child link coordinates, at its origin
    parent_frame_rot: np.ndarray  # (n_links, 3, 3) joint frame in the parent link frame
    parent_frame_pos: np.ndarray  # (n_links, 3)
    child_frame_rot: np.ndarray  # (n_links, 3, 3) joint frame in the child link frame
    child_frame_pos: np.ndarray  # (n_links, 3)
    rest_rot: np.ndarray  # (n_links, 3, 3) F_parent.R @ F_child.R^T: child rotation in parent at q = 0
    revolute_outer: np.ndarray  # (n_links, 3, 3) (F_p.R a)(F_c.R a)^T: the part of rest_rot along the axis
    revolute_cross: (
        np.ndarray
    )  # (n_links, 3, 3) F_p.R [a]x F_c.R^T: so R(q) = outer + cos q (rest - outer) + sin q cross
    prismatic_axis: np.ndarray  # (n_links, 3) F_p.R a: slide direction in the parent link frame
    mass: np.ndarray  # (n_links,)
    com: np.ndarray  # (n_links, 3) in the link frame
    inertia_com: np.ndarray  # (n_links, 3, 3) about the COM, link axes
    first_moment: np.ndarray  # (n_links, 3) mass * com
    inertia_origin: np.ndarray  # (n_links, 3, 3) about the link frame origin, link axes
    armature: np.ndarray  # (n_dofs,)
    gravity: np.ndarray  # (3,) world frame, m/s^2
    # ---- what the stepping solver needs ----
    dof_lower: np.ndarray  # (n_dofs,) -inf when unlimited
    dof_upper: np.ndarray
    dof_wraps: np.ndarray  # (n_dofs,) bool: unlimited revolute DOFs wrap into [-2 pi, 2 pi] (PhysX's rule)
    max_joint_velocity: np.ndarray  # (n_dofs,)
    scaling_cap: np.ndarray  # (n_dofs,) DofDesc.scaling_cap
    passive_damping: np.ndarray  # (n_dofs,) effort per unit velocity, implicit
    drive_mode: np.ndarray  # (n_dofs,) int64: DRIVE_NONE, DRIVE_FORCE, DRIVE_ACCELERATION
    drive_stiffness: np.ndarray  # (n_dofs,)
    drive_damping: np.ndarray
    drive_max_force: np.ndarray  # effort; the envelope's max effort when the envelope is on
    envelope_on: np.ndarray  # (n_dofs,) bool
    envelope_max_velocity: np.ndarray
    envelope_resistance: np.ndarray  # velocity-dependent resistance (effort per unit velocity)
    envelope_gradient: np.ndarray  # speed-effort gradient (velocity per unit effort)
    friction_static: np.ndarray  # (n_dofs,) efforts
    friction_dynamic: np.ndarray
    friction_viscous: np.ndarray
    link_linear_damping: np.ndarray  # (n_links,) 1/s
    link_angular_damping: np.ndarray
    link_max_linear_velocity: np.ndarray  # (n_links,) m/s at the COM, inf when unlimited (PhysxRigidBodyAPI)
    link_max_angular_velocity: np.ndarray  # (n_links,) rad/s
    link_gravity: np.ndarray  # (n_links,) 1.0, or 0.0 where gravity is disabled
    link_cfm_scale: np.ndarray  # (n_links,) BodyDesc.cfm_scale (0 for free bodies)
    link_gyroscopic: np.ndarray  # (n_links,) GYROSCOPIC_* of BodyDesc.gyroscopic (acts on free bodies only)
    mimic_follower: np.ndarray  # (n_mimic,) DOF index: q_follower + gearing q_leader + offset = 0
    mimic_leader: np.ndarray
    mimic_gearing: np.ndarray
    mimic_offset: np.ndarray
    mimic_frequency: np.ndarray  # natural frequency (1/s); <= 0: hard
    mimic_damping_ratio: np.ndarray
    tendon_start: np.ndarray  # (n_tendons + 1,) fixed tendons: axes tendon_start[t]:tendon_start[t+1]
    tendon_dof: np.ndarray  # (n_axes,) DOF index
    tendon_gearing: np.ndarray  # length per unit joint position
    tendon_force_coefficient: np.ndarray  # share of the tendon force applied to the axis
    tendon_params: np.ndarray  # (n_tendons, 7) stiffness, damping, limit stiffness, offset, rest, lower, upper
    spatial_start: np.ndarray  # (n_sub + 1,) spatial sub-tendons (root -> leaf): points spatial_start[s]:[s+1]
    spatial_link: np.ndarray  # (n_points,) link carrying each attachment point
    spatial_point: np.ndarray  # (n_points, 3) in the link frame
    spatial_gearing: np.ndarray  # (n_points,) gearing of the segment ending at the point
    spatial_params: np.ndarray  # (n_sub, 7) like tendon_params; offset already times the root gearing
    loop_links: np.ndarray  # (n_loops, 2) link indices, -1 for the world
    loop_frames: np.ndarray  # (n_loops, 2, 4, 4) joint frame on each side (link frame, or world)
    loop_locked: np.ndarray  # (n_loops, 6) bool: constrained [x, y, z, rotX, rotY, rotZ] of the joint frame
    loop_break: np.ndarray  # (n_loops, 2): break force (N) and torque (N m); inf: unbreakable
    sleep_threshold: float  # authored mass-normalised kinetic energy (m^2/s^2) below which an island may sleep
    position_iterations: int
    velocity_iterations: int
    kinematic: bool = False  # a kinematic body (usdart.core.kernels.kinematic): links cannot be kinematic
    free_body: bool = False  # a dynamic rigid body outside any articulation (PhysX's rigid dynamic)


def _frame(pose: Pose | None):
    if pose is None:
        return np.zeros(3), np.eye(3)
    return np.asarray(pose.position, float), quat_to_matrix(pose.orientation)


def _skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def build_articulation_model(desc: ArticulationDesc, gravity, loop_joints: dict | None = None) -> ArticulationModel:
    """Flatten an imported articulation (links in BFS order, joints oriented parent -> child).

    loop_joints: JointDesc of this articulation's loop-closing joints by path (both bodies must be links
    of this articulation or the world; others are left to the scene).
    """
    n = len(desc.links)
    dofs = desc.dofs
    nd = len(dofs)
    joint_type = np.zeros(n, np.int64)
    joint_type[0] = JOINT_FIXED if desc.fixed_base else JOINT_FREE
    dof_start = np.zeros(n + 1, np.int64)
    pf_pos, pf_rot = np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1))
    cf_pos, cf_rot = np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1))
    for i, joint in enumerate(desc.joints):
        count = len(joint.dofs) if joint is not None else 0
        dof_start[i + 1] = dof_start[i] + count
        if joint is None:
            continue
        pf_pos[i], pf_rot[i] = _frame(joint.frame0)
        cf_pos[i], cf_rot[i] = _frame(joint.frame1)
        if count == 0:
            joint_type[i] = JOINT_FIXED
        elif joint.dofs[0].axis in ANGULAR_AXES:
            joint_type[i] = JOINT_REVOLUTE if count == 1 else JOINT_SPHERICAL
        else:
            joint_type[i] = JOINT_PRISMATIC

    axis = np.zeros((nd, 3))
    for k, d in enumerate(dofs):
        axis[k, _UNIT[d.axis[-1]]] = 1.0
    dof_link = np.repeat(np.arange(n), np.diff(dof_start))
    angular = np.array([d.angular for d in dofs], bool)
    motion = np.zeros((nd, 6))
    for k in range(nd):
        i = dof_link[k]
        u = cf_rot[i] @ axis[k]
        if angular[k]:
            motion[k, :3] = u
            motion[k, 3:] = np.cross(cf_pos[i], u)
        else:
            motion[k, 3:] = u

    rest = pf_rot @ np.transpose(cf_rot, (0, 2, 1))
    outer, cross, slide = np.zeros((n, 3, 3)), np.zeros((n, 3, 3)), np.zeros((n, 3))
    for i in range(1, n):
        if joint_type[i] in (JOINT_REVOLUTE, JOINT_PRISMATIC):
            a = axis[dof_start[i]]
            outer[i] = np.outer(pf_rot[i] @ a, cf_rot[i] @ a)
            cross[i] = pf_rot[i] @ _skew(a) @ cf_rot[i].T
            slide[i] = pf_rot[i] @ a

    mass = np.array([b.mass if b else 0.0 for b in desc.bodies], float)
    com = np.array([b.com if b else np.zeros(3) for b in desc.bodies], float).reshape(n, 3)
    inertia = np.array([b.inertia if b else np.zeros((3, 3)) for b in desc.bodies], float).reshape(n, 3, 3)
    first = mass[:, None] * com
    com_sq = np.sum(com * com, axis=1)
    origin = inertia + mass[:, None, None] * (com_sq[:, None, None] * np.eye(3) - com[:, :, None] * com[:, None, :])
    return ArticulationModel(
        n_links=n,
        n_dofs=nd,
        n_root=0 if desc.fixed_base else 6,
        parent=np.array(desc.link_parents, np.int64),
        joint_type=joint_type,
        dof_start=dof_start,
        dof_link=dof_link.astype(np.int64),
        dof_axis=axis,
        dof_angular=angular,
        motion=motion,
        parent_frame_rot=pf_rot,
        parent_frame_pos=pf_pos,
        child_frame_rot=cf_rot,
        child_frame_pos=cf_pos,
        rest_rot=rest,
        revolute_outer=outer,
        revolute_cross=cross,
        prismatic_axis=slide,
        mass=mass,
        com=com,
        inertia_com=inertia,
        first_moment=first,
        inertia_origin=origin,
        armature=np.array([d.armature for d in dofs], float),
        gravity=np.asarray(gravity, float).copy(),
        **_solver_fields(desc, joint_type, dof_start, loop_joints or {}),
    )


_GYROSCOPIC = {"physx": GYROSCOPIC_PHYSX, "none": GYROSCOPIC_NONE, "exact": GYROSCOPIC_EXACT}


def loop_joint_descs(desc: ArticulationDesc, joints: dict) -> list:
    """The JointDescs of the loop joints an articulation holds by its own rows, in their order: those among
    `joints` (by path) with both bodies its links or the world, distance joints left to the scene."""
    links = set(desc.links)
    return [
        j
        for j in (joints.get(p) for p in desc.loop_joints)
        if j is not None and j.kind != "distance" and all(b is None or b in links for b in j.bodies())
    ]


def _solver_fields(desc: ArticulationDesc, joint_type, dof_start, loop_joints: dict) -> dict:
    dofs = desc.dofs
    index = {d.name: k for k, d in enumerate(dofs)}
    link_of = np.repeat(np.arange(len(desc.links)), np.diff(dof_start))
    drives = [d.drive for d in dofs]
    envelope = [
        dr is not None
        and (
            np.isfinite(dr.max_actuator_velocity)
            or dr.velocity_dependent_resistance > 0
            or dr.speed_effort_gradient > 0
        )
        for dr in drives
    ]
    bodies = desc.bodies
    mimics = desc.mimic_joints
    tendon_axes = [(t, a) for t in desc.fixed_tendons if t.enabled for a in t.axes if a.dof in index]
    tendons = [t for t in desc.fixed_tendons if t.enabled]
    counts = [sum(1 for a in t.axes if a.dof in index) for t in tendons]
    link_index = {p: i for i, p in enumerate(desc.links)}
    loops = loop_joint_descs(desc, loop_joints)

    def side(body):
        return -1 if body is None else link_index[body]

    return dict(
        dof_lower=np.array([d.lower for d in dofs], float),
        dof_upper=np.array([d.upper for d in dofs], float),
        dof_wraps=np.array(
            [d.angular and not d.limited and joint_type[link_of[k]] == JOINT_REVOLUTE for k, d in enumerate(dofs)], bool
        ),
        max_joint_velocity=np.array([d.max_velocity for d in dofs], float),
        scaling_cap=np.array([d.scaling_cap for d in dofs], float),
        passive_damping=np.array([d.passive_damping for d in dofs], float),
        drive_mode=np.array(
            [DRIVE_NONE if dr is None else DRIVE_ACCELERATION if dr.acceleration else DRIVE_FORCE for dr in drives],
            np.int64,
        ),
        drive_stiffness=np.array([dr.stiffness if dr else 0.0 for dr in drives], float),
        drive_damping=np.array([dr.damping if dr else 0.0 for dr in drives], float),
        drive_max_force=np.array([dr.max_force if dr else 0.0 for dr in drives], float),
        envelope_on=np.array(envelope, bool),
        envelope_max_velocity=np.array([dr.max_actuator_velocity if dr else np.inf for dr in drives], float),
        envelope_resistance=np.array([dr.velocity_dependent_resistance if dr else 0.0 for dr in drives], float),
        envelope_gradient=np.array([dr.speed_effort_gradient if dr else 0.0 for dr in drives], float),
        friction_static=np.array([d.static_friction for d in dofs], float),
        friction_dynamic=np.array([d.dynamic_friction for d in dofs], float),
        friction_viscous=np.array([d.viscous_friction for d in dofs], float),
        link_linear_damping=np.array([b.linear_damping if b else 0.0 for b in bodies], float),
        link_angular_damping=np.array([b.angular_damping if b else 0.0 for b in bodies], float),
        link_max_linear_velocity=np.array([b.max_linear_velocity if b else np.inf for b in bodies], float),
        link_max_angular_velocity=np.array([b.max_angular_velocity if b else np.inf for b in bodies], float),
        link_gravity=np.array([0.0 if (b is None or b.disable_gravity) else 1.0 for b in bodies], float),
        link_cfm_scale=np.array([b.cfm_scale if b else 0.0 for b in bodies], float),
        link_gyroscopic=np.array([_GYROSCOPIC[b.gyroscopic if b else "exact"] for b in bodies], float),
        mimic_follower=np.array([index[m.dof] for m in mimics], np.int64),
        mimic_leader=np.array([index[m.reference_dof] for m in mimics], np.int64),
        mimic_gearing=np.array([m.gearing for m in mimics], float),
        mimic_offset=np.array([m.offset for m in mimics], float),
        mimic_frequency=np.array([m.natural_frequency for m in mimics], float),
        mimic_damping_ratio=np.array([m.damping_ratio for m in mimics], float),
        tendon_start=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        tendon_dof=np.array([index[a.dof] for _, a in tendon_axes], np.int64),
        tendon_gearing=np.array([a.gearing for _, a in tendon_axes], float),
        tendon_force_coefficient=np.array([a.force_coefficient for _, a in tendon_axes], float),
        tendon_params=np.array(
            [
                [t.stiffness, t.damping, t.limit_stiffness, t.offset, t.rest_length, t.lower_limit, t.upper_limit]
                for t in tendons
            ],
            float,
        ).reshape(len(tendons), 7),
        **_spatial_tendons(desc, link_index),
        loop_links=np.array([[side(j.body0), side(j.body1)] for j in loops], np.int64).reshape(len(loops), 2),
        loop_frames=np.array([[pose_matrix(j.frame0), pose_matrix(j.frame1)] for j in loops], float).reshape(
            len(loops), 2, 4, 4
        ),
        loop_locked=np.array([locked_axes(j) for j in loops], bool).reshape(len(loops), 6),
        loop_break=np.array([[j.break_force, j.break_torque] for j in loops], float).reshape(len(loops), 2),
        sleep_threshold=float(desc.sleep_threshold),
        position_iterations=int(desc.solver_position_iterations),
        velocity_iterations=int(desc.solver_velocity_iterations),
        kinematic=any(b is not None and b.kinematic for b in desc.bodies),
        free_body=desc.free_body and not any(b is not None and b.kinematic for b in desc.bodies),
    )


def _spatial_tendons(desc: ArticulationDesc, link_index: dict) -> dict:
    """One chain of attachment points per leaf (root first); rest length NaN = measured at the start."""
    start, links, points, gearings, params = [0], [], [], [], []
    for tendon in desc.spatial_tendons:
        if not tendon.enabled:
            continue
        for att in tendon.attachments:
            if not att.leaf:
                continue
            chain = [att]
            while chain[-1].parent >= 0:
                chain.append(tendon.attachments[chain[-1].parent])
            chain.reverse()
            for a in chain:
                links.append(link_index[a.link])
                points.append(a.local_position)
                gearings.append(a.gearing)
            start.append(len(links))
            rest = att.rest_length if np.isfinite(att.rest_length) and att.rest_length >= 0 else np.nan
            params.append(
                [
                    tendon.stiffness,
                    tendon.damping,
                    tendon.limit_stiffness,
                    tendon.offset * chain[0].gearing,
                    rest,
                    att.lower_limit,
                    att.upper_limit,
                ]
            )
    return dict(
        spatial_start=np.array(start, np.int64),
        spatial_link=np.array(links, np.int64),
        spatial_point=np.array(points, float).reshape(len(links), 3),
        spatial_gearing=np.array(gearings, float),
        spatial_params=np.array(params, float).reshape(-1, 7),
    )


CONSTRAINT_AXES = ("transX", "transY", "transZ", "rotX", "rotY", "rotZ")  # a constraint joint's axes, in order


def locked_axes(joint) -> list[bool]:
    """Constrained axes of a loop-closing joint, [x, y, z, rotX, rotY, rotZ] of its joint frame."""
    free = {d.axis for d in joint.dofs}
    return [axis not in free for axis in CONSTRAINT_AXES]


def axis_limits(joint) -> np.ndarray:
    """(6, 2) [lower, upper] of the limited free axes a joint outside the trees holds by rows ([x, y, z, rotX,
    rotY, rotZ] of its joint frame; +-inf: none), as PhysX's D6 joint limits them: each free linear axis
    along body0's joint axis, a revolute's angle about its axis and a D6's twist about x (PhysX's twist
    limit), a D6's swings about y and z (PhysX's pyramid), and a spherical joint's cone (rotY, rotZ: its
    half-angles; `cone_limited`; PhysX applies none unless both are given)."""
    out = np.full((6, 2), np.inf)
    out[:, 0] = -np.inf
    for d in joint.dofs:
        if d.limited and (joint.kind != "spherical" or cone_limited(joint)):
            out[CONSTRAINT_AXES.index(d.axis)] = d.lower, d.upper
    return out


def cone_limited(joint) -> bool:
    """A spherical joint whose swing is limited by a cone: both half-angles given (PhysX enables the cone
    only then)."""
    swings = [d for d in joint.dofs if d.axis in ("rotY", "rotZ")]
    return joint.kind == "spherical" and len(swings) == 2 and all(np.isfinite(d.upper) for d in swings)


def axis_drives(joint) -> np.ndarray:
    """(6, JD_COLUMNS) drives of the free axes a joint outside the trees drives by rows ([x, y, z, rotX, rotY,
    rotZ] of its joint frame; stiffness and damping 0: none), as PhysX's D6 joint drives them: a linear axis
    along body0's joint axis, a rotation about a revolute's axis, a D6's rotX (PhysX's twist drive) and its
    rotY / rotZ (PhysX's swing1 / swing2 drives). A spherical joint has none: PhysX reads no drive on one
    outside an articulation."""
    out = np.zeros((6, JD_COLUMNS))
    for d in joint.dofs:
        drive = d.drive
        if drive is None or joint.kind == "spherical":
            continue
        row = out[CONSTRAINT_AXES.index(d.axis)]
        row[JD_STIFFNESS], row[JD_DAMPING], row[JD_MAX_FORCE] = drive.stiffness, drive.damping, drive.max_force
        row[JD_TARGET_POSITION], row[JD_TARGET_VELOCITY] = drive.target_position, drive.target_velocity
        row[JD_ACCELERATION] = float(drive.acceleration)
    return out


_STRUCTURES: dict[tuple, tuple] = {}


def structure_key(model: ArticulationModel) -> tuple:
    """What two articulations must share for a cache of one to fit the other. Equal keys are one object
    (interned), so a cache check is mostly an identity test."""
    key = (
        model.n_links,
        model.n_dofs,
        model.n_root,
        tuple(model.parent),
        tuple(model.joint_type),
        tuple(model.dof_start),
        tuple(map(tuple, model.dof_axis)),
    )
    return _STRUCTURES.setdefault(key, key)
