"""Per-DOF joint authoring: limits, initial state, drives with their performance envelope, and the PhysX
joint properties (armature, maximum velocity, friction). Values in SI and radians, in the joint's own
body0 -> body1 sense (as the importer reads USD before it turns joints to follow the tree).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pxr import Usd, UsdPhysics

from ...errors import AuthoringError
from ._schema import apply_schema, joint_dof, non_negative, set_attr
from .units import StageUnits

FORCE, ACCELERATION = "force", "acceleration"
ENVELOPE = "PhysxDrivePerformanceEnvelopeAPI"
PER_AXIS_INSTANCES = ("angular", "linear", "rotX", "rotY", "rotZ")  # what PhysX reads for per-axis APIs


def _per_axis(prim: Usd.Prim, instance: str, api: str) -> None:
    if instance not in PER_AXIS_INSTANCES:
        raise AuthoringError(
            prim.GetPath(), f"PhysX reads {api} only for the instances {', '.join(PER_AXIS_INSTANCES)}, not {instance}"
        )


def _units(prim: Usd.Prim, angular: bool):
    return StageUnits.of(prim.GetStage()).dof(angular)


def set_joint_limits(joint, lower: float, upper: float, axis: str | None = None) -> Usd.Prim:
    """Position limits in rad or m. Revolute/prismatic: physics:lower/upperLimit; generic joints:
    PhysicsLimitAPI:<axis> (lower > upper locks that axis, as UsdPhysics defines). Returns the joint prim."""
    prim, instance, angular = joint_dof(joint, axis)
    u = _units(prim, angular)
    if instance in ("angular", "linear"):
        if lower > upper:
            raise AuthoringError(prim.GetPath(), f"lower limit {lower} is greater than upper limit {upper}")
        schema = UsdPhysics.RevoluteJoint(prim) if angular else UsdPhysics.PrismaticJoint(prim)
        schema.CreateLowerLimitAttr(lower / u.position)
        schema.CreateUpperLimitAttr(upper / u.position)
        return prim
    if prim.IsA(UsdPhysics.SphericalJoint):
        raise AuthoringError(
            prim.GetPath(), "spherical joints are limited by physics:coneAngle0Limit and coneAngle1Limit, not per axis"
        )
    limit = UsdPhysics.LimitAPI.Apply(prim, instance)
    limit.CreateLowAttr(lower / u.position)
    limit.CreateHighAttr(upper / u.position)
    return prim


def set_joint_state(joint, position: float, velocity: float = 0.0, axis: str | None = None) -> Usd.Prim:
    """PhysicsJointStateAPI:<instance>: initial joint position (rad or m) and velocity (rad/s or m/s)."""
    prim, instance, angular = joint_dof(joint, axis)
    u = _units(prim, angular)
    apply_schema(prim, "PhysicsJointStateAPI", instance)
    set_attr(prim, "PhysicsJointStateAPI", "state:{instance}:physics:position", position / u.position, instance)
    set_attr(prim, "PhysicsJointStateAPI", "state:{instance}:physics:velocity", velocity / u.position, instance)
    return prim


@dataclass(frozen=True)
class DriveEnvelope:
    """PhysxDrivePerformanceEnvelopeAPI in SI: |F| <= maxForce - velocity_dependent_resistance |v| and
    |v| <= max_actuator_velocity - speed_effort_gradient |F|."""

    max_actuator_velocity: float = math.inf  # rad/s or m/s
    velocity_dependent_resistance: float = 0.0  # N m s/rad or N s/m
    speed_effort_gradient: float = 0.0  # rad/s per N m or m/s per N


def set_drive(
    joint,
    stiffness: float,
    damping: float,
    max_force: float = math.inf,
    target_position: float = 0.0,
    target_velocity: float = 0.0,
    type: str = FORCE,
    axis: str | None = None,
    envelope: DriveEnvelope | None = None,
) -> UsdPhysics.DriveAPI:
    """PhysicsDriveAPI:<instance> (+ PhysxDrivePerformanceEnvelopeAPI when `envelope` is given).

    Force drives: stiffness in N m/rad (N/m), damping in N m s/rad (N s/m); acceleration drives: 1/s^2 and
    1/s. max_force in N m (N); targets in rad (m) and rad/s (m/s).
    """
    prim, instance, angular = joint_dof(joint, axis)
    if type not in (FORCE, ACCELERATION):
        raise AuthoringError(prim.GetPath(), f"drive type must be '{FORCE}' or '{ACCELERATION}', got {type!r}")
    non_negative(prim, stiffness=stiffness, damping=damping, max_force=max_force)
    u = _units(prim, angular)
    gain = u.drive_gain(type == ACCELERATION)
    drive = UsdPhysics.DriveAPI.Apply(prim, instance)
    drive.CreateTypeAttr(type)
    drive.CreateStiffnessAttr(stiffness / gain)
    drive.CreateDampingAttr(damping / gain)
    drive.CreateMaxForceAttr(max_force / u.effort)
    drive.CreateTargetPositionAttr(target_position / u.position)
    drive.CreateTargetVelocityAttr(target_velocity / u.position)
    if envelope is not None:
        set_drive_envelope(prim, envelope, axis=axis)
    return drive


def set_drive_target(
    joint, position: float | None = None, velocity: float | None = None, axis: str | None = None
) -> UsdPhysics.DriveAPI:
    """Change the target of an existing drive (rad or m, rad/s or m/s)."""
    prim, instance, angular = joint_dof(joint, axis)
    if not prim.HasAPI(UsdPhysics.DriveAPI, instance):
        raise AuthoringError(prim.GetPath(), f"has no PhysicsDriveAPI:{instance}; author the drive first")
    u = _units(prim, angular)
    drive = UsdPhysics.DriveAPI(prim, instance)
    if position is not None:
        drive.CreateTargetPositionAttr(position / u.position)
    if velocity is not None:
        drive.CreateTargetVelocityAttr(velocity / u.position)
    return drive


def set_drive_envelope(joint, envelope: DriveEnvelope, axis: str | None = None) -> Usd.Prim:
    """PhysxDrivePerformanceEnvelopeAPI:<instance>; the drive's maxForce is the envelope's maximum effort."""
    prim, instance, angular = joint_dof(joint, axis)
    _per_axis(prim, instance, ENVELOPE)
    non_negative(
        prim,
        max_actuator_velocity=envelope.max_actuator_velocity,
        velocity_dependent_resistance=envelope.velocity_dependent_resistance,
        speed_effort_gradient=envelope.speed_effort_gradient,
    )
    u = _units(prim, angular)
    ns = "physxDrivePerformanceEnvelope:{instance}:"
    apply_schema(prim, ENVELOPE, instance)
    set_attr(prim, ENVELOPE, ns + "maxActuatorVelocity", envelope.max_actuator_velocity / u.position, instance)
    set_attr(
        prim,
        ENVELOPE,
        ns + "velocityDependentResistance",
        envelope.velocity_dependent_resistance * u.position / u.effort,
        instance,
    )
    set_attr(
        prim, ENVELOPE, ns + "speedEffortGradient", envelope.speed_effort_gradient * u.effort / u.position, instance
    )
    return prim


def set_joint_properties(
    joint,
    *,
    armature: float | None = None,
    max_velocity: float | None = None,
    static_friction: float | None = None,
    dynamic_friction: float | None = None,
    viscous_friction: float | None = None,
    axis: str | None = None,
) -> Usd.Prim:
    """Armature (kg m^2 or kg), maximum joint velocity (rad/s or m/s) and friction of one DOF, in
    PhysxJointAxisAPI:<instance>: static/dynamic friction efforts (N m or N), viscous friction (N m s/rad
    or N s/m). PhysX's current schemas have only that API for them (PhysxJointAPI's physxJoint:armature
    and maxJointVelocity, which older stages carry, are ignored by PhysX and by usdart's "physx" semantics).
    """
    prim, instance, angular = joint_dof(joint, axis)
    non_negative(
        prim,
        armature=armature,
        max_velocity=max_velocity,
        static_friction=static_friction,
        dynamic_friction=dynamic_friction,
        viscous_friction=viscous_friction,
    )
    if static_friction is not None and dynamic_friction is not None and dynamic_friction > static_friction:
        raise AuthoringError(
            prim.GetPath(),
            f"dynamic friction {dynamic_friction} exceeds static friction "
            f"{static_friction} (PhysX requires dynamic <= static)",
        )
    _per_axis(prim, instance, "PhysxJointAxisAPI")
    u = _units(prim, angular)
    values = {
        "armature": None if armature is None else armature / u.inertia,
        "maxJointVelocity": None if max_velocity is None else max_velocity / u.position,
        "staticFrictionEffort": None if static_friction is None else static_friction / u.effort,
        "dynamicFrictionEffort": None if dynamic_friction is None else dynamic_friction / u.effort,
        "viscousFrictionCoefficient": None if viscous_friction is None else viscous_friction * u.position / u.effort,
    }
    apply_schema(prim, "PhysxJointAxisAPI", instance)
    for name, value in values.items():
        if value is not None:
            set_attr(prim, "PhysxJointAxisAPI", f"physxJointAxis:{{instance}}:{name}", value, instance)
    return prim
