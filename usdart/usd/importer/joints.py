"""Joints: type, frames in each body's frame, DOFs with limits, drives, state and joint properties.

Values keep USD's body0 -> body1 sense here; the topology step swaps joints whose body1 is the parent.
All numbers are converted to SI and radians; angular gains authored per degree become per radian.

Joint types map to PhysX articulation joints:
- revolute -> one rotational DOF about its axis, prismatic -> one linear DOF;
- spherical -> three rotational DOFs; the joint frames are turned so the USD axis is the twist axis
  (rotX): axis Y by +90 deg about Z, axis Z by -90 deg about Y. The twist is free, coneAngle0Limit
  bounds swing about rotY and coneAngle1Limit about rotZ (a pyramid, as PhysX articulations do);
- a generic PhysicsJoint (D6): one DOF per axis that is not locked (LimitAPI low > high locks an axis,
  no LimitAPI leaves it free): up to three rotational DOFs or exactly one linear DOF;
- distance joints are constraints only (never tree joints).

Per-DOF properties (armature, maximum velocity, friction): the "physx" semantics (the default) reads them as
ovphysx does with the Newton schema registered: NewtonJointAPI's values seed every axis, PhysxJointAxisAPI
values replace a seed where they say something (`_physx_axis_properties`); PhysxJointAPI is ignored, as PhysX
25.11 ignores it. The "newton" semantics: PhysxJointAxisAPI:<axis> (when applied) > PhysxJointAPI >
NewtonJointAPI, an authored value always beating a fallback, newton:damping as a passive joint damping.
"""

from __future__ import annotations

import math

import numpy as np
from pxr import Usd, UsdPhysics

from ...core.description import (
    ANGULAR_AXES,
    AXIS_ORDER,
    LINEAR_AXES,
    DofDesc,
    DriveDesc,
    JointDesc,
    Pose,
    SceneSettings,
)
from ...core.frames import (
    decompose,
    homogeneous,
    matrix_to_quat,
    pose_matrix,
    quat_multiply,
    quat_to_matrix,
    usd_to_column,
)
from ...errors import PhysicsImportError
from .transforms import WorldTransforms
from .usd_values import api_instances, applied_schemas, authored, first_target, read, read_physx, schema_default

DEG = math.pi / 180.0
PHYSX_DEFAULT_JOINT_VELOCITY = 100.0  # the SDK's maxJointVelocity of an axis nobody set, stage units / s
# frame turn that maps the joint X axis onto the USD spherical axis
_SPHERICAL_TURN = {
    "X": np.array([1.0, 0.0, 0.0, 0.0]),
    "Y": np.array([math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4)]),
    "Z": np.array([math.cos(math.pi / 4), 0.0, -math.sin(math.pi / 4), 0.0]),
}


def joint_kind(prim: Usd.Prim) -> str | None:
    if prim.IsA(UsdPhysics.FixedJoint):
        return "fixed"
    if prim.IsA(UsdPhysics.RevoluteJoint):
        return "revolute"
    if prim.IsA(UsdPhysics.PrismaticJoint):
        return "prismatic"
    if prim.IsA(UsdPhysics.SphericalJoint):
        return "spherical"
    if prim.IsA(UsdPhysics.DistanceJoint):
        return "distance"
    if prim.IsA(UsdPhysics.Joint):
        return "d6"
    return None


class BodyResolver:
    """Maps a relationship target to the rigid body that owns it (None = the world)."""

    def __init__(self, stage: Usd.Stage, body_paths: set[str], transforms: WorldTransforms):
        self.stage = stage
        self.body_paths = body_paths
        self.transforms = transforms

    def owner(self, prim: Usd.Prim) -> str | None:
        p = prim
        while p and not p.IsPseudoRoot():
            if str(p.GetPath()) in self.body_paths:
                return str(p.GetPath())
            p = p.GetParent()
        return None

    def world(self, prim: Usd.Prim) -> np.ndarray:
        return usd_to_column(self.transforms.matrix(prim))


def read_joint(
    prim: Usd.Prim, kind: str, resolver: BodyResolver, settings: SceneSettings, warnings: list[str]
) -> JointDesc:
    path = str(prim.GetPath())
    body0, frame0 = _side(prim, 0, resolver, settings, warnings)
    body1, frame1 = _side(prim, 1, resolver, settings, warnings)
    joint = JointDesc(
        path=path,
        kind=kind,
        body0=body0,
        body1=body1,
        frame0=frame0,
        frame1=frame1,
        excluded=bool(read(prim, "physics:excludeFromArticulation", False)),
    )
    schemas = applied_schemas(prim)
    if kind == "revolute" or kind == "prismatic":
        axis = str(read(prim, "physics:axis", "X"))
        angular = kind == "revolute"
        scale = DEG if angular else settings.meters_per_unit
        lower = read(prim, "physics:lowerLimit", -math.inf) * scale
        upper = read(prim, "physics:upperLimit", math.inf) * scale
        if lower > upper:
            raise PhysicsImportError(path, f"lower limit {lower:g} is greater than upper limit {upper:g}")
        dof_axis = ("rot" if angular else "trans") + axis
        instance = "angular" if angular else "linear"
        joint.dofs = [DofDesc(name=path, axis=dof_axis, lower=lower, upper=upper, usd_instance=instance)]
    elif kind == "spherical":
        axis = str(read(prim, "physics:axis", "X"))
        turn = _SPHERICAL_TURN[axis]
        joint.frame0.orientation = quat_multiply(joint.frame0.orientation, turn)
        joint.frame1.orientation = quat_multiply(joint.frame1.orientation, turn)
        joint.dofs = [DofDesc(name=f"{path}:rotX", axis="rotX", usd_instance="rotX")]
        for axis_name, attr in (("rotY", "physics:coneAngle0Limit"), ("rotZ", "physics:coneAngle1Limit")):
            cone = read(prim, attr, -1.0)
            limit = cone * DEG if cone >= 0 else math.inf
            joint.dofs.append(
                DofDesc(name=f"{path}:{axis_name}", axis=axis_name, lower=-limit, upper=limit, usd_instance=axis_name)
            )
    elif kind == "d6":
        joint.dofs = _d6_dofs(prim, schemas, settings, warnings)
    elif kind == "distance":
        _read_distance(prim, schemas, joint, settings)
    mpu, kpu = settings.meters_per_unit, settings.kilograms_per_unit
    joint.break_force = read(prim, "physics:breakForce", math.inf) * kpu * mpu
    joint.break_torque = read(prim, "physics:breakTorque", math.inf) * kpu * mpu * mpu
    for dof in joint.dofs:
        _read_dof_properties(prim, schemas, dof, kind, settings, warnings)
    _check_spherical_state(joint)
    _warn_unused_drives(prim, schemas, joint, warnings)
    _warn_joint_api_ignored(prim, schemas, settings, warnings)
    return joint


def _read_distance(prim: Usd.Prim, schemas, joint: JointDesc, settings: SceneSettings) -> None:
    """A distance joint's bounds (a negative one: none, as PhysX) and, with PhysxPhysicsDistanceJointAPI's
    springEnabled, its spring (stiffness N/m, damping N s/m)."""
    mpu, kpu = settings.meters_per_unit, settings.kilograms_per_unit
    low, high = read(prim, "physics:minDistance", -1.0), read(prim, "physics:maxDistance", -1.0)
    joint.min_distance = low * mpu if low >= 0 else -math.inf
    joint.max_distance = high * mpu if high >= 0 else math.inf
    if "PhysxPhysicsDistanceJointAPI" in schemas and read_physx(prim, "physxPhysicsDistanceJoint:springEnabled"):
        stiffness = read_physx(prim, "physxPhysicsDistanceJoint:springStiffness") * kpu
        joint.spring = (stiffness, read_physx(prim, "physxPhysicsDistanceJoint:springDamping") * kpu)


def _warn_joint_api_ignored(prim, schemas, settings: SceneSettings, warnings) -> None:
    """PhysX's current schemas (physx-usd-schemas 25.11, run by ovphysx 0.7) no longer have PhysxJointAPI:
    PhysX ignores physxJoint:* (measured: an armature or maxJointVelocity authored there changes nothing),
    so the "physx" semantics does too, and says so; "newton" still reads them (older Isaac Sim stages)."""
    if settings.semantics != "physx" or "PhysxJointAPI" not in schemas:
        return
    names = sorted(a.GetName() for a in prim.GetAuthoredAttributes() if a.GetName().startswith("physxJoint:"))
    if names:
        warnings.append(
            f"{prim.GetPath()}: {', '.join(names)} ignored, as PhysX ignores them (PhysxJointAPI is gone from "
            "its schemas since 25.11): author PhysxJointAxisAPI:<axis> (physxJointAxis:<axis>:armature, "
            ":maxJointVelocity) instead, or load with semantics='newton' to read them"
        )


FLT_MAX = float(np.finfo(np.float32).max)


def _physx_axis_properties(prim, schemas, inst: str):
    """(armature, max joint velocity, (static, dynamic) friction effort, viscous friction) of one axis in stage
    units (degrees for angular axes), as ovphysx reads them: the Newton joint values (newton:armature, ...,
    read by name, NewtonJointAPI applied or not: measured) seed every axis and a
    PhysxJointAxisAPI:<axis> value replaces its seed only where it says something (armature or viscous
    friction > 0, a velocity below FLT_MAX, either friction effort > 0: then both efforts); an explicit PhysX
    zero or infinity cannot clear a Newton seed (ovphysx's population contract for PhysxJointAxisAPI)."""

    def newton(name):  # read by name: ovphysx reads them with or without NewtonJointAPI applied
        return read(prim, name, schema_default(name))

    def physx(name):
        if f"PhysxJointAxisAPI:{inst}" not in schemas:
            return schema_default(name)
        return read_physx(prim, name, inst)

    armature = physx("physxJointAxis:{instance}:armature")
    armature = armature if armature > 0.0 else newton("newton:armature")
    max_vel = physx("physxJointAxis:{instance}:maxJointVelocity")
    max_vel = max_vel if max_vel < FLT_MAX else newton("newton:velocityLimit")
    efforts = (
        physx("physxJointAxis:{instance}:staticFrictionEffort"),
        physx("physxJointAxis:{instance}:dynamicFrictionEffort"),
    )
    friction = efforts if max(efforts) > 0.0 else (newton("newton:friction"),) * 2
    viscous = physx("physxJointAxis:{instance}:viscousFrictionCoefficient")
    viscous = viscous if viscous > 0.0 else newton("newton:damping")
    return armature, (max_vel if max_vel < FLT_MAX else math.inf), friction, viscous


def _newton_axis_properties(prim, schemas, dof: DofDesc, inertia: float, effort: float, unit: float) -> None:
    """One axis's armature, maximum velocity and friction as UsdPhysics and the Newton schema mean them:
    PhysxJointAxisAPI:<axis> (when applied) > PhysxJointAPI > NewtonJointAPI, an authored value beating a
    fallback; newton:damping as a passive joint damping. Stage units in, SI out (factors given)."""
    inst = dof.usd_instance
    axis_api = f"PhysxJointAxisAPI:{inst}" in schemas
    physx = "physxJointAxis:{instance}:" if axis_api else ("physxJoint:" if "PhysxJointAPI" in schemas else None)

    def pick(physx_name, newton_name):
        """Authored PhysX > authored Newton > applied PhysX schema's fallback > None."""
        if physx and (value := authored(prim, (physx + physx_name).format(instance=inst))) is not None:
            return value
        if (value := authored(prim, newton_name)) is not None:
            return value
        return read_physx(prim, physx + physx_name, inst) if physx else None

    if (armature := pick("armature", "newton:armature")) is not None:
        dof.armature = armature * inertia
    if (max_vel := pick("maxJointVelocity", "newton:velocityLimit")) is not None:
        dof.max_velocity = max_vel * unit
    if axis_api:
        dof.static_friction = read_physx(prim, "physxJointAxis:{instance}:staticFrictionEffort", inst) * effort
        dof.dynamic_friction = read_physx(prim, "physxJointAxis:{instance}:dynamicFrictionEffort", inst) * effort
        dof.viscous_friction = (
            read_physx(prim, "physxJointAxis:{instance}:viscousFrictionCoefficient", inst) * effort / unit
        )
    elif (friction := authored(prim, "newton:friction")) is not None:
        dof.static_friction = dof.dynamic_friction = friction * effort
    if (damping := authored(prim, "newton:damping")) is not None:
        dof.passive_damping = damping * effort / unit


def check_articulation_joint(joint: JointDesc) -> None:
    """A joint of an articulation's tree moves along up to three rotational axes or exactly one linear axis
    (PhysX's articulation joints); any D6 may join bodies outside articulations (its locked axes are rows)."""
    n_rot = sum(d.axis in ANGULAR_AXES for d in joint.dofs)
    n_lin = sum(d.axis in LINEAR_AXES for d in joint.dofs)
    if n_lin > 1 or (n_lin == 1 and n_rot > 0):
        free = ", ".join(d.axis for d in joint.dofs)
        raise PhysicsImportError(
            joint.path,
            f"D6 joint with free axes [{free}] in an articulation: articulation joints support up to "
            "three rotational axes or exactly one linear axis (lock the others with PhysicsLimitAPI low > high, "
            "or exclude the joint from the articulation)",
        )


def _check_spherical_state(joint: JointDesc) -> None:
    """A joint with several rotational DOFs is a spherical articulation joint, whose coordinates PhysX keeps
    in [-180, 180] degrees: a JointStateAPI position outside is not a pose it can start from."""
    angular = [d for d in joint.dofs if d.angular]
    if len(angular) < 2:
        return
    for dof in angular:
        if abs(dof.position) > math.pi + 1e-9:
            raise PhysicsImportError(
                joint.path,
                f"JointStateAPI:{dof.usd_instance} position {math.degrees(dof.position):g} deg is outside "
                "[-180, 180] deg, the range of a spherical joint's coordinates",
            )


def _side(prim, index: int, resolver: BodyResolver, settings: SceneSettings, warnings):
    """(owning body or None, joint frame in that body's frame, or in the world for None)."""
    target = first_target(prim, f"physics:body{index}", warnings)
    position = np.asarray(read(prim, f"physics:localPos{index}", np.zeros(3)), float)
    orientation = read(prim, f"physics:localRot{index}", np.array([1.0, 0.0, 0.0, 0.0]))
    local = homogeneous(quat_to_matrix(orientation), position)
    if target is None:
        body, frame_world = None, local
    else:
        target_prim = resolver.stage.GetPrimAtPath(target)
        if not target_prim:
            raise PhysicsImportError(prim.GetPath(), f"physics:body{index} targets {target}, which does not exist")
        body = resolver.owner(target_prim)
        frame_world = resolver.world(target_prim) @ local
    if body is None:
        frame = frame_world
    else:
        rot, t, _ = decompose(resolver.transforms.matrix(resolver.stage.GetPrimAtPath(body)))
        frame = np.linalg.inv(homogeneous(rot, t)) @ frame_world
    rot, t, _ = decompose(frame.T)
    return body, Pose(position=t * settings.meters_per_unit, orientation=matrix_to_quat(rot))


def _d6_dofs(prim, schemas, settings: SceneSettings, warnings) -> list[DofDesc]:
    path = str(prim.GetPath())
    limited = set(api_instances(schemas, "PhysicsLimitAPI"))
    if "distance" in limited:
        warnings.append(f"{path}: PhysicsLimitAPI:distance is not supported on articulation joints; ignored")
    dofs = []
    for axis in AXIS_ORDER:
        lower, upper = -math.inf, math.inf
        if axis in limited:
            lower = read(prim, f"limit:{axis}:physics:low", -math.inf)
            upper = read(prim, f"limit:{axis}:physics:high", math.inf)
            if lower > upper:
                continue  # locked axis
        scale = DEG if axis in ANGULAR_AXES else settings.meters_per_unit
        dofs.append(DofDesc(name=path, axis=axis, lower=lower * scale, upper=upper * scale, usd_instance=axis))
    if len(dofs) > 1:
        for d in dofs:
            d.name = f"{path}:{d.axis}"
    return dofs


def _read_dof_properties(prim, schemas, dof: DofDesc, kind: str, settings: SceneSettings, warnings) -> None:
    mpu, kpu = settings.meters_per_unit, settings.kilograms_per_unit
    inst = dof.usd_instance
    angular = dof.angular
    unit = DEG if angular else mpu  # position unit -> SI
    effort = kpu * mpu * mpu if angular else kpu * mpu  # torque or force -> SI
    inertia = kpu * mpu * mpu if angular else kpu  # armature -> SI

    if f"PhysicsDriveAPI:{inst}" in schemas:
        dof.drive = _read_drive(prim, inst, angular, unit, effort, settings, schemas)
    if f"PhysicsJointStateAPI:{inst}" in schemas:
        dof.position = read_physx(prim, "state:{instance}:physics:position", inst) * unit
        dof.velocity = read_physx(prim, "state:{instance}:physics:velocity", inst) * unit

    if settings.semantics == "physx":
        armature, max_vel, friction, viscous = _physx_axis_properties(prim, schemas, inst)
        dof.armature, dof.max_velocity = armature * inertia, max_vel * unit
        dof.static_friction, dof.dynamic_friction = friction[0] * effort, friction[1] * effort
        dof.viscous_friction = viscous * effort / unit
        # PhysX scales all joint velocities down at the step start when one exceeds a bound it reads from
        # the joint's maxJointVelocity by the DOF's index in the joint, not its axis (reference §2.2, §11):
        # a prismatic DOF (index 0) reads rotX's slot, PhysX's default 100 stage units/s (measured: a slider
        # started at 150 m/s runs at 100, also with 120 authored; 0.5 authored is honoured by its own row)
        dof.scaling_cap = PHYSX_DEFAULT_JOINT_VELOCITY * unit if not angular else dof.max_velocity
    else:
        _newton_axis_properties(prim, schemas, dof, inertia, effort, unit)
    if dof.dynamic_friction > dof.static_friction:
        warnings.append(f"{prim.GetPath()}: dynamic friction effort exceeds static friction effort on {inst}")


def _read_drive(prim, inst, angular, unit, effort, settings: SceneSettings, schemas) -> DriveDesc:
    ns = f"drive:{inst}:physics:"
    acceleration = str(read(prim, ns + "type", "force")) == "acceleration"
    # gains: per degree -> per radian; force drives also carry mass/length units
    gain_units = 1.0 if acceleration else (effort / (1.0 if angular else settings.meters_per_unit))
    angle = (1.0 / DEG) if angular else 1.0
    drive = DriveDesc(
        acceleration=acceleration,
        stiffness=read(prim, ns + "stiffness", 0.0) * gain_units * angle,
        damping=read(prim, ns + "damping", 0.0) * gain_units * angle,
        max_force=read(prim, ns + "maxForce", math.inf) * effort,
        target_position=read(prim, ns + "targetPosition", 0.0) * unit,
        target_velocity=read(prim, ns + "targetVelocity", 0.0) * unit,
    )
    if f"PhysxDrivePerformanceEnvelopeAPI:{inst}" in schemas:
        env = "physxDrivePerformanceEnvelope:{instance}:"
        drive.max_actuator_velocity = read_physx(prim, env + "maxActuatorVelocity", inst) * unit
        drive.velocity_dependent_resistance = (
            read_physx(prim, env + "velocityDependentResistance", inst) * effort / unit
        )
        drive.speed_effort_gradient = read_physx(prim, env + "speedEffortGradient", inst) * unit / effort
    return drive


def _warn_unused_drives(prim, schemas, joint: JointDesc, warnings) -> None:
    used = {d.usd_instance for d in joint.dofs}
    for api in ("PhysicsDriveAPI", "PhysicsJointStateAPI", "PhysxJointAxisAPI", "PhysxDrivePerformanceEnvelopeAPI"):
        for inst in api_instances(schemas, api):
            if inst not in used:
                warnings.append(
                    f"{prim.GetPath()}: {api}:{inst} does not match any degree of freedom of this "
                    f"{joint.kind} joint; ignored"
                )


FRAME_TOLERANCE = 1e-3  # m


def warn_separated_frames(joints: list[JointDesc | None], poses: dict[str, Pose], warnings: list[str]) -> None:
    """Tree joints whose authored frames do not meet: PhysX (and usdart) place the child by the joint."""
    for joint in joints:
        if joint is None or joint.body0 is None or any(not d.angular for d in joint.dofs):
            continue
        gap = _frame_gap(joint, poses)
        if gap > FRAME_TOLERANCE:
            warnings.append(
                f"{joint.path}: the joint's two frames are {gap:.4g} m apart in the authored poses; "
                f"{joint.body1} is placed by the joint instead"
            )


def warn_open_constraints(joints: list[JointDesc], poses: dict[str, Pose], warnings: list[str]) -> None:
    """Loop joints and joints between trees whose frames do not meet where the bodies are authored: the solver
    pulls them together from the first step, which a gap larger than the mechanism can close makes violent."""
    for joint in joints:
        if joint.kind == "distance" or any(not d.angular for d in joint.dofs):
            continue
        gap = _frame_gap(joint, poses)
        if gap > FRAME_TOLERANCE:
            warnings.append(
                f"{joint.path}: the joint's two frames are {gap:.4g} m apart in the authored poses; the solver "
                "pulls them together from the first step"
            )


def _frame_gap(joint: JointDesc, poses: dict[str, Pose]) -> float:
    """Distance between the joint's two frame origins, the world standing in for a missing body."""
    ends = []
    for body, frame in ((joint.body0, joint.frame0), (joint.body1, joint.frame1)):
        world = pose_matrix(poses[body]) if body is not None else np.eye(4)
        ends.append((world @ pose_matrix(frame))[:3, 3])
    return float(np.linalg.norm(ends[0] - ends[1]))


def usd_to_internal(joint: JointDesc, dof: DofDesc, settings: SceneSettings) -> float:
    """Factor from a USD joint value of `dof` (JointStateAPI position/velocity, drive target: degrees or
    stage lengths, in USD's body0 -> body1 sense) to the internal one (radians or metres, in the tree's
    parent -> child sense): the conversion the importer applies, including the negation of turned joints.
    Divide by it to go back (writing simulated states to USD)."""
    unit = DEG if dof.angular else settings.meters_per_unit
    return -unit if joint.reversed else unit
