"""Scene-wide and per-body settings that usdart reads: PhysxSceneAPI, PhysxRigidBodyAPI, initial body velocity."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pxr import Gf, Usd, UsdPhysics

from ...errors import AuthoringError
from ._schema import apply_schema, non_negative, prim_of, set_attr
from .units import StageUnits


def set_scene_settings(scene, *, time_steps_per_second: int | None = None) -> Usd.Prim:
    """PhysxSceneAPI on a PhysicsScene: the simulation rate (steps per second, time step = 1 / rate)."""
    prim = prim_of(scene)
    if not prim.IsA(UsdPhysics.Scene):
        raise AuthoringError(prim.GetPath(), "PhysxSceneAPI belongs on a PhysicsScene prim")
    if time_steps_per_second is not None and (
        int(time_steps_per_second) != time_steps_per_second or time_steps_per_second <= 0
    ):
        raise AuthoringError(
            prim.GetPath(), f"time steps per second must be a positive integer, got {time_steps_per_second}"
        )
    apply_schema(prim, "PhysxSceneAPI")
    if time_steps_per_second is not None:
        set_attr(prim, "PhysxSceneAPI", "physxScene:timeStepsPerSecond", int(time_steps_per_second))
    return prim


def set_rigid_body_settings(
    body,
    *,
    linear_damping: float | None = None,
    angular_damping: float | None = None,
    max_linear_velocity: float | None = None,
    max_angular_velocity: float | None = None,
    disable_gravity: bool | None = None,
    sleep_threshold: float | None = None,
    max_depenetration_velocity: float | None = None,
) -> Usd.Prim:
    """PhysxRigidBodyAPI: damping coefficients (1/s), velocity limits (m/s, rad/s), gravity switch, sleep
    threshold (m^2/s^2), the speed contacts push overlapping shapes apart at most (m/s, positive). Unset
    values keep the PhysX fallbacks, which apply once the API is there."""
    prim = prim_of(body)
    if not prim.HasAPI(UsdPhysics.RigidBodyAPI):
        raise AuthoringError(prim.GetPath(), "PhysxRigidBodyAPI belongs on a prim with PhysicsRigidBodyAPI")
    non_negative(
        prim,
        linear_damping=linear_damping,
        angular_damping=angular_damping,
        max_linear_velocity=max_linear_velocity,
        max_angular_velocity=max_angular_velocity,
        sleep_threshold=sleep_threshold,
    )
    if max_depenetration_velocity is not None and not max_depenetration_velocity > 0:
        raise AuthoringError(prim.GetPath(), "the depenetration velocity must be positive (PhysX rejects 0)")
    mpu = StageUnits.of(prim.GetStage()).meters_per_unit
    apply_schema(prim, "PhysxRigidBodyAPI")
    ns = "physxRigidBody:"
    for name, value in (
        ("linearDamping", linear_damping),
        ("angularDamping", angular_damping),
        ("maxLinearVelocity", None if max_linear_velocity is None else max_linear_velocity / mpu),
        ("maxAngularVelocity", None if max_angular_velocity is None else math.degrees(max_angular_velocity)),
        ("disableGravity", disable_gravity),
        ("sleepThreshold", None if sleep_threshold is None else sleep_threshold / mpu**2),
        ("maxDepenetrationVelocity", None if max_depenetration_velocity is None else max_depenetration_velocity / mpu),
    ):
        if value is not None:
            set_attr(prim, "PhysxRigidBodyAPI", ns + name, value)
    return prim


def set_rigid_body_velocity(
    body, linear: Sequence[float] = (0.0, 0.0, 0.0), angular: Sequence[float] = (0.0, 0.0, 0.0)
) -> UsdPhysics.RigidBodyAPI:
    """Initial velocity of a rigid body in world axes: linear in m/s, angular in rad/s (USD stores deg/s)."""
    prim = prim_of(body)
    if not prim.HasAPI(UsdPhysics.RigidBodyAPI):
        raise AuthoringError(prim.GetPath(), "has no PhysicsRigidBodyAPI")
    values = [float(v) for v in (*linear, *angular)]
    if len(values) != 6 or not all(math.isfinite(v) for v in values):
        raise AuthoringError(prim.GetPath(), f"velocities must be two finite 3-vectors, got {linear}, {angular}")
    mpu = StageUnits.of(prim.GetStage()).meters_per_unit
    api = UsdPhysics.RigidBodyAPI(prim)
    api.CreateVelocityAttr(Gf.Vec3f(*(v / mpu for v in values[:3])))
    api.CreateAngularVelocityAttr(Gf.Vec3f(*(math.degrees(v) for v in values[3:])))
    return api
