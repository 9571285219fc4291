"""Where articulations come from: the root API, excluded (loop-closing) joints, PhysxArticulationAPI.

The root API may go on a rigid body (floating base unless a joint ties the body's component to the
world), on a joint attached to the world (fixed base; the joint may keep DOFs), or on an ancestor
Xform/Scope of the bodies (one articulation per connected component): the PhysX rules usdart imports.
"""

from __future__ import annotations

from pxr import Usd, UsdPhysics

from ...errors import AuthoringError
from ._schema import apply_schema, non_negative, prim_of, set_attr
from .units import StageUnits


def _owning_body(prim: Usd.Prim) -> Usd.Prim | None:
    p = prim
    while p and not p.IsPseudoRoot():
        if p.HasAPI(UsdPhysics.RigidBodyAPI):
            return p
        p = p.GetParent()
    return None


def _world_sides(joint: Usd.Prim) -> int:
    """How many of body0/body1 are the world (empty, or a prim with no rigid body at or above it)."""
    count = 0
    for rel_name in ("physics:body0", "physics:body1"):
        rel = joint.GetRelationship(rel_name)
        targets = rel.GetTargets() if rel else []
        target = joint.GetStage().GetPrimAtPath(targets[0]) if targets else None
        if not targets or (target and _owning_body(target) is None):
            count += 1
    return count


def set_articulation_root(prim) -> UsdPhysics.ArticulationRootAPI:
    """Apply PhysicsArticulationRootAPI to a rigid body, a joint attached to the world, or an ancestor of bodies."""
    prim = prim_of(prim)
    path = prim.GetPath()
    if prim.IsA(UsdPhysics.Joint):
        if _world_sides(prim) != 1:
            raise AuthoringError(
                path,
                "the root API goes on a joint only when it attaches a body to the world "
                "(one of physics:body0/body1 empty or static)",
            )
        if UsdPhysics.Joint(prim).GetExcludeFromArticulationAttr().Get():
            raise AuthoringError(path, "an excluded joint (physics:excludeFromArticulation) cannot be a root")
    elif not prim.HasAPI(UsdPhysics.RigidBodyAPI):
        if _owning_body(prim) is not None:
            raise AuthoringError(
                path,
                f"is inside the rigid body {_owning_body(prim).GetPath()}; put the root API "
                "on the body, a world joint or an ancestor of the bodies",
            )
        if not any(p.HasAPI(UsdPhysics.RigidBodyAPI) for p in Usd.PrimRange(prim)):
            raise AuthoringError(path, "has no rigid bodies below it; author the bodies first")
    for other in [*Usd.PrimRange(prim)][1:] + _ancestors(prim):
        if other.HasAPI(UsdPhysics.ArticulationRootAPI):
            raise AuthoringError(
                path, f"{other.GetPath()} already has PhysicsArticulationRootAPI (nested articulation roots)"
            )
    return UsdPhysics.ArticulationRootAPI.Apply(prim)


def _ancestors(prim: Usd.Prim) -> list[Usd.Prim]:
    out, p = [], prim.GetParent()
    while p and not p.IsPseudoRoot():
        out.append(p)
        p = p.GetParent()
    return out


def exclude_from_articulation(joint, excluded: bool = True) -> UsdPhysics.Joint:
    """physics:excludeFromArticulation: the joint closes a loop as a constraint instead of being a tree joint."""
    prim = prim_of(joint)
    if not prim.IsA(UsdPhysics.Joint):
        raise AuthoringError(prim.GetPath(), "is not a physics joint")
    if excluded and prim.HasAPI(UsdPhysics.ArticulationRootAPI):
        raise AuthoringError(prim.GetPath(), "carries the articulation root API; it cannot be excluded")
    api = UsdPhysics.Joint(prim)
    api.CreateExcludeFromArticulationAttr(bool(excluded))
    return api


def set_articulation_settings(
    root,
    *,
    solver_position_iterations: int | None = None,
    solver_velocity_iterations: int | None = None,
    sleep_threshold: float | None = None,
    stabilization_threshold: float | None = None,
    self_collisions: bool | None = None,
    enabled: bool | None = None,
) -> Usd.Prim:
    """PhysxArticulationAPI on the prim with the root API; thresholds are mass-normalised energies (m^2/s^2)."""
    prim = prim_of(root)
    if not prim.HasAPI(UsdPhysics.ArticulationRootAPI):
        raise AuthoringError(
            prim.GetPath(),
            "PhysxArticulationAPI belongs on the prim with "
            "PhysicsArticulationRootAPI (call set_articulation_root first)",
        )
    if solver_position_iterations is not None and not 1 <= solver_position_iterations <= 255:
        raise AuthoringError(
            prim.GetPath(), f"solver position iterations must be in [1, 255], got {solver_position_iterations}"
        )
    if solver_velocity_iterations is not None and not 0 <= solver_velocity_iterations <= 255:
        raise AuthoringError(
            prim.GetPath(), f"solver velocity iterations must be in [0, 255], got {solver_velocity_iterations}"
        )
    non_negative(prim, sleep_threshold=sleep_threshold, stabilization_threshold=stabilization_threshold)
    mpu2 = StageUnits.of(prim.GetStage()).meters_per_unit ** 2
    apply_schema(prim, "PhysxArticulationAPI")
    ns = "physxArticulation:"
    for name, value in (
        ("solverPositionIterationCount", solver_position_iterations),
        ("solverVelocityIterationCount", solver_velocity_iterations),
        ("sleepThreshold", None if sleep_threshold is None else sleep_threshold / mpu2),
        ("stabilizationThreshold", None if stabilization_threshold is None else stabilization_threshold / mpu2),
        ("enabledSelfCollisions", self_collisions),
        ("articulationEnabled", enabled),
    ):
        if value is not None:
            set_attr(prim, "PhysxArticulationAPI", ns + name, value)
    return prim
