"""Plain description of a physics stage, in SI units and radians.

This is the contract between the importer (which reads USD) and everything downstream (model building,
solver, inspection). Nothing here refers to pxr objects: paths are strings, numbers are floats and
numpy arrays. Poses are (position, quaternion wxyz); a pose "in body frame" is relative to the body
prim's frame with its scale removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

ANGULAR_AXES = ("rotX", "rotY", "rotZ")
LINEAR_AXES = ("transX", "transY", "transZ")
AXIS_ORDER = ANGULAR_AXES + LINEAR_AXES  # PhysX PxArticulationAxis order: twist, swing1, swing2, X, Y, Z


@dataclass
class Pose:
    """Rigid transform: x_parent = R(orientation) @ x_child + position."""

    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))


@dataclass
class SceneSettings:
    meters_per_unit: float = 1.0
    kilograms_per_unit: float = 1.0
    up_axis: str = "Z"
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    time_step: float = 1.0 / 60.0
    scene_path: str | None = None
    time_codes_per_second: float = 60.0
    # "physx": the stage as PhysX reads it (usdart.usd.importer); "newton": as UsdPhysics and the Newton schema
    semantics: str = "physx"
    solver: str = "TGS"  # "TGS" or "PGS" (physxScene:solverType; usdart.usd.importer.stage_settings)
    # TGS: external forces act in every substep (physxScene:enableExternalForcesEveryIteration)
    external_forces_every_iteration: bool = True
    # contacts (PhysxSceneAPI; usdart.usd.importer.colliders): no bounce at or below this approach speed (m/s)
    bounce_threshold: float = 1e-6
    friction_offset_threshold: float = 0.04  # m: contacts farther apart than this carry no friction anchor
    friction_correlation_distance: float = 0.025  # m
    invert_collision_group_filter: bool = False


@dataclass
class BodyDesc:
    """A rigid body (articulation link or free body)."""

    path: str
    pose: Pose
    linear_velocity: np.ndarray  # world frame, m/s, of the centre of mass (as PhysX reads it)
    angular_velocity: np.ndarray  # world frame, rad/s
    mass: float
    com: np.ndarray  # centre of mass in body frame (m)
    inertia: np.ndarray  # 3x3 about the COM, body-frame axes (kg m^2)
    kinematic: bool = False
    disable_gravity: bool = False
    linear_damping: float = 0.0
    angular_damping: float = 0.0
    max_linear_velocity: float = np.inf
    max_angular_velocity: float = np.inf  # rad/s
    sleep_threshold: float = 5e-5  # m^2/s^2, mass-normalised kinetic energy
    cfm_scale: float = 0.0  # physxRigidBody:cfmScale / metersPerUnit (m): articulation links only
    gyroscopic: str = "exact"  # a free body's turn: "physx", "none" (enableGyroscopicForces off), "exact"
    # a free body's solver iterations (PhysxRigidBodyAPI's; an articulation's are PhysxArticulationAPI's)
    solver_position_iterations: int = 16
    solver_velocity_iterations: int = 1
    max_depenetration_velocity: float = 3.0  # m/s: contacts push overlapping shapes apart no faster
    max_contact_impulse: float = np.inf  # N s, per contact point
    # the velocity of its contact surfaces (a conveyor belt; PhysxSurfaceVelocityAPI): linear (m/s) plus
    # angular (rad/s) about the body's origin, in the body's axes (surface_local) or the world's
    surface_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    surface_angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    surface_local: bool = False


@dataclass
class DriveDesc:
    """Implicit PD drive of one DOF (PhysX semantics), gains per radian for angular DOFs."""

    acceleration: bool = False  # drive type "acceleration" (gains are mass independent)
    stiffness: float = 0.0
    damping: float = 0.0
    max_force: float = np.inf
    target_position: float = 0.0
    target_velocity: float = 0.0
    # PhysxDrivePerformanceEnvelopeAPI; the envelope's max effort is max_force
    max_actuator_velocity: float = np.inf
    velocity_dependent_resistance: float = 0.0
    speed_effort_gradient: float = 0.0


@dataclass
class DofDesc:
    """One degree of freedom of a joint, along or about an axis of the joint frame."""

    name: str
    axis: str  # one of AXIS_ORDER, in the joint frame
    lower: float = -np.inf
    upper: float = np.inf
    drive: DriveDesc | None = None
    position: float = 0.0  # initial joint position (JointStateAPI)
    velocity: float = 0.0
    armature: float = 0.0
    max_velocity: float = np.inf
    scaling_cap: float = np.inf  # the speed PhysX's step-start velocity scaling reads for this DOF
    static_friction: float = 0.0  # effort
    dynamic_friction: float = 0.0  # effort
    viscous_friction: float = 0.0  # effort per unit velocity
    passive_damping: float = 0.0  # newton:damping, effort per unit velocity
    usd_instance: str = ""  # API instance name in USD (angular, linear, rotX, ...)

    @property
    def angular(self) -> bool:
        return self.axis in ANGULAR_AXES

    @property
    def limited(self) -> bool:
        return bool(np.isfinite(self.lower) or np.isfinite(self.upper))

    def negated(self) -> DofDesc:
        """The same DOF seen from the other body: positions, velocities and targets change sign."""
        drive = None
        if self.drive is not None:
            drive = replace(
                self.drive, target_position=-self.drive.target_position, target_velocity=-self.drive.target_velocity
            )
        return replace(
            self, lower=-self.upper, upper=-self.lower, drive=drive, position=-self.position, velocity=-self.velocity
        )


@dataclass
class JointDesc:
    """A joint between body0 and body1 (None = world), frames in each body's frame."""

    path: str
    kind: str  # fixed, revolute, prismatic, spherical, d6, distance
    body0: str | None
    body1: str | None
    frame0: Pose
    frame1: Pose
    dofs: list[DofDesc] = field(default_factory=list)
    excluded: bool = False
    reversed: bool = False  # True when body0/body1 were swapped to follow the tree (parent -> child)
    min_distance: float = -np.inf  # distance joints only (m)
    max_distance: float = np.inf
    spring: tuple[float, float] | None = None  # a distance joint's spring: stiffness (N/m), damping (N s/m)
    break_force: float = np.inf  # N: the joint breaks past it (never inside an articulation's tree)
    break_torque: float = np.inf  # N m

    def bodies(self):
        return self.body0, self.body1

    def swapped(self) -> JointDesc:
        """Same joint with body0 and body1 exchanged; DOF values negated so behaviour is identical."""
        return replace(
            self,
            body0=self.body1,
            body1=self.body0,
            frame0=self.frame1,
            frame1=self.frame0,
            dofs=[d.negated() for d in self.dofs],
            reversed=not self.reversed,
        )


@dataclass
class MimicDesc:
    """q_joint + gearing * q_reference + offset = 0 on the two DOFs (internal sign convention)."""

    joint: str
    dof: str  # DOF name of the follower
    reference_joint: str
    reference_dof: str
    gearing: float
    offset: float
    natural_frequency: float = 0.0  # <= 0: hard constraint
    damping_ratio: float = 0.0
    source: str = "PhysxMimicJointAPI"


@dataclass
class TendonAxisDesc:
    joint: str
    dof: str
    gearing: float  # tendon length per unit joint position (m/rad or m/m)
    force_coefficient: float


@dataclass
class FixedTendonDesc:
    name: str
    root_joint: str
    axes: list[TendonAxisDesc]
    stiffness: float = 0.0
    damping: float = 0.0
    limit_stiffness: float = 0.0
    offset: float = 0.0
    rest_length: float = 0.0
    lower_limit: float = -np.inf
    upper_limit: float = np.inf
    enabled: bool = True


@dataclass
class TendonAttachmentDesc:
    link: str
    name: str
    local_position: np.ndarray  # in the link's body frame (m)
    parent: int  # index into the tendon's attachments, -1 for the root
    gearing: float = 1.0
    leaf: bool = False
    rest_length: float = -np.inf  # leaves only; < 0 means "computed at start"
    lower_limit: float = -np.inf
    upper_limit: float = np.inf


@dataclass
class SpatialTendonDesc:
    name: str
    attachments: list[TendonAttachmentDesc]
    stiffness: float = 0.0
    damping: float = 0.0
    limit_stiffness: float = 0.0
    offset: float = 0.0
    enabled: bool = True


@dataclass
class ArticulationDesc:
    """A reduced-coordinate articulation: links in BFS order, each with its inbound joint."""

    api_prim: str
    root_link: str
    fixed_base: bool
    links: list[str]
    link_parents: list[int]
    bodies: list[BodyDesc | None]  # None for a static anchor link and the massless links of composed joints
    joints: list[JointDesc | None]  # inbound joint per link, oriented parent (body0) -> child (body1)
    root_joint: str | None = None  # the world joint that fixes the base (None: floating)
    # massless links between two bodies joined by several joints (named after the joint before them) -> the
    # child body, whose frame they share at rest (usd.importer.topology)
    composed_links: dict[str, str] = field(default_factory=dict)
    loop_joints: list[str] = field(default_factory=list)
    mimic_joints: list[MimicDesc] = field(default_factory=list)
    fixed_tendons: list[FixedTendonDesc] = field(default_factory=list)
    spatial_tendons: list[SpatialTendonDesc] = field(default_factory=list)
    solver_position_iterations: int = 32
    solver_velocity_iterations: int = 1
    sleep_threshold: float = 5e-5
    stabilization_threshold: float = 1e-5
    self_collisions: bool = True
    free_body: bool = False  # a body outside any articulation, stepped as a one-link tree (usdart.scene)

    @property
    def dofs(self) -> list[DofDesc]:
        """DOFs in low-level order: links in BFS order, axes in PhysX axis order inside a joint."""
        return [d for j in self.joints if j is not None for d in j.dofs]


COMBINE_MODES = ("average", "min", "multiply", "max")  # PhysX's order: the pair takes the larger of its two


@dataclass
class MaterialDesc:
    """Contact material (UsdPhysics MaterialAPI + PhysxMaterialAPI); the default is PhysX's scene default."""

    static_friction: float = 0.5
    dynamic_friction: float = 0.5
    restitution: float = 0.0
    friction_combine: str = "average"
    restitution_combine: str = "average"


@dataclass
class ColliderDesc:
    """A collision shape in its body's frame (`body` None: static, in world). Its local X axis is a capsule's,
    cylinder's or cone's axis or a plane's normal (PhysX's convention); sizes in metres with the world scale
    baked in."""

    path: str
    body: str | None
    shape: str  # "sphere", "box", "capsule", "cylinder", "cone", "convex", "mesh" (static triangles) or "plane"
    pose: Pose
    size: np.ndarray  # box: half extents; sphere: (radius, 0, 0); capsule, cylinder, cone: (radius, half height, 0)
    material: MaterialDesc
    contact_offset: float  # m: contacts begin this far apart (pairs add their shapes' offsets)
    rest_offset: float  # m: the gap the solver holds at rest (pairs add theirs)
    group: int = -1  # index into SceneDescription.collision_groups, -1: in no group
    hull: np.ndarray | None = None  # convex, mesh: the vertices (n, 3) in the shape's frame, m
    faces: list[np.ndarray] = field(default_factory=list)  # convex: its faces, vertex indices counter-clockwise
    # about the outward normal; mesh: its triangles as authored


@dataclass
class SceneDescription:
    settings: SceneSettings
    bodies: dict[str, BodyDesc]
    joints: dict[str, JointDesc]
    articulations: list[ArticulationDesc]
    free_bodies: list[str]
    constraints: list[str]  # joints solved as constraints (loop joints, joints between articulations/free bodies)
    warnings: list[str]
    colliders: list[ColliderDesc] = field(default_factory=list)
    # contact filtering: group pairs that never collide (indices into collision_groups), collider path pairs
    collision_groups: list[str] = field(default_factory=list)
    filtered_groups: set[tuple[int, int]] = field(default_factory=set)
    filtered_pairs: set[tuple[str, str]] = field(default_factory=set)
    # bodies joined by a joint outside the articulation trees whose physics:collisionEnabled is false, and
    # links joined by composed joints (parent and child to PhysX, which never lets those touch)
    jointed_pairs: set[tuple[str, str]] = field(default_factory=set)
    # bodies with physics:kinematicEnabled (never links): moved to targets, pushed by nothing
    kinematic_bodies: list[str] = field(default_factory=list)
