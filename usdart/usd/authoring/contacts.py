"""Contacts: physics materials, their binding to colliders, and a collider's contact and rest offsets."""

from __future__ import annotations

from pxr import Sdf, Usd, UsdPhysics, UsdShade

from ...core.description import COMBINE_MODES
from ...errors import AuthoringError
from ._schema import apply_schema, non_negative, prim_of
from .units import StageUnits


def add_physics_material(
    stage: Usd.Stage,
    path: str,
    static_friction: float = 0.5,
    dynamic_friction: float = 0.5,
    restitution: float = 0.0,
    *,
    friction_combine: str | None = None,
    restitution_combine: str | None = None,
) -> Usd.Prim:
    """A UsdShade Material with PhysicsMaterialAPI (and PhysxMaterialAPI's combine modes, one of average,
    min, multiply, max: the pair takes the larger of its two in that order). All three values are written:
    an unauthored friction reads as 0 in PhysX."""
    prim = UsdShade.Material.Define(stage, Sdf.Path(path)).GetPrim()
    non_negative(prim, static_friction=static_friction, dynamic_friction=dynamic_friction, restitution=restitution)
    api = UsdPhysics.MaterialAPI.Apply(prim)
    api.CreateStaticFrictionAttr(float(static_friction))
    api.CreateDynamicFrictionAttr(float(dynamic_friction))
    api.CreateRestitutionAttr(float(restitution))
    for name, mode in (("frictionCombineMode", friction_combine), ("restitutionCombineMode", restitution_combine)):
        if mode is None:
            continue
        if mode not in COMBINE_MODES:
            raise AuthoringError(prim.GetPath(), f"combine mode must be one of {COMBINE_MODES}, got {mode!r}")
        apply_schema(prim, "PhysxMaterialAPI")
        _create(prim, f"physxMaterial:{name}", Sdf.ValueTypeNames.Token, mode, uniform=True)
    return prim


def bind_physics_material(prim, material) -> Usd.Prim:
    """Bind a physics material to a collider (or to a body or the physics scene: colliders under it and,
    on the scene, every collider without one) with the "physics" purpose, as PhysX looks it up."""
    target, mat = prim_of(prim), prim_of(material)
    if not mat.HasAPI(UsdPhysics.MaterialAPI):
        raise AuthoringError(mat.GetPath(), "is not a physics material (no PhysicsMaterialAPI)")
    UsdShade.MaterialBindingAPI.Apply(target).Bind(
        UsdShade.Material(mat), UsdShade.Tokens.weakerThanDescendants, "physics"
    )
    return target


def set_collision_offsets(
    collider, *, contact_offset: float | None = None, rest_offset: float | None = None
) -> Usd.Prim:
    """PhysxCollisionAPI on a collider, in metres: contacts begin `contact_offset` apart (unset: PhysX's
    automatic offset) and rest `rest_offset` apart (may be negative: resting overlap)."""
    prim = prim_of(collider)
    if not prim.HasAPI(UsdPhysics.CollisionAPI):
        raise AuthoringError(prim.GetPath(), "PhysxCollisionAPI belongs on a collider (PhysicsCollisionAPI)")
    non_negative(prim, contact_offset=contact_offset)
    if contact_offset is not None and rest_offset is not None and rest_offset >= contact_offset:
        raise AuthoringError(prim.GetPath(), "the rest offset must be below the contact offset")
    mpu = StageUnits.of(prim.GetStage()).meters_per_unit
    apply_schema(prim, "PhysxCollisionAPI")
    for name, value in (("contactOffset", contact_offset), ("restOffset", rest_offset)):
        if value is not None:
            _create(prim, f"physxCollision:{name}", Sdf.ValueTypeNames.Float, float(value) / mpu)
    return prim


def _create(prim: Usd.Prim, name: str, type_name, value, uniform: bool = False) -> None:
    """An attribute of a PhysX contact API by its schema type (these APIs are not in usdart's schema table)."""
    variability = Sdf.VariabilityUniform if uniform else Sdf.VariabilityVarying
    prim.CreateAttribute(name, type_name, False, variability).Set(value)
