"""Couplings between DOFs: mimic joints (PhysxMimicJointAPI) and fixed and spatial tendons.

Values in SI, in each joint's own body0 -> body1 sense. Mimic: q + gearing q_ref + offset = 0 with q in
rad or m, so gearing is in follower units per reference unit. Tendon gearings are tendon length per
joint position (m/rad or m/m), force coefficients a lever arm (m) for rotational axes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pxr import Usd, UsdGeom, UsdPhysics

from ...core.description import ANGULAR_AXES
from ...core.frames import decompose
from ...errors import AuthoringError
from ._schema import apply_schema, joint_dof, non_negative, prim_of, set_attr, set_rel, single_axis_token
from .units import StageUnits

MIMIC = "PhysxMimicJointAPI"
AXIS = "PhysxTendonAxisAPI"
ATTACHMENT = "PhysxTendonAttachmentAPI"
LEAF = "PhysxTendonAttachmentLeafAPI"


def _mimic_axis(prim: Usd.Prim, instance: str, role: str) -> str:
    """The rotX/rotY/rotZ token PhysX uses: a single-DOF joint's physics:axis, else the DOF's own axis."""
    if instance in ("angular", "linear"):
        return single_axis_token(prim)
    if instance not in ANGULAR_AXES:
        raise AuthoringError(
            prim.GetPath(),
            f"{role} axis must be rotX, rotY or rotZ (PhysX mimic joints couple "
            f"rotational axes of generic joints), got {instance}",
        )
    return instance


def set_mimic_joint(
    joint,
    reference_joint,
    gearing: float,
    offset: float = 0.0,
    *,
    axis: str | None = None,
    reference_axis: str | None = None,
    natural_frequency: float = 0.0,
    damping_ratio: float = 0.0,
) -> Usd.Prim:
    """PhysxMimicJointAPI:<rotX|rotY|rotZ> on the follower `joint`: q + gearing q_ref + offset = 0 (SI).

    `axis` / `reference_axis` pick the DOF of a multi-DOF joint (rotX, rotY, rotZ); single-DOF joints use
    the token of their physics:axis, as Isaac Sim does. natural_frequency (1/s) and damping_ratio > 0 make
    the coupling compliant (PhysX mimic compliance); 0 keeps it hard. Returns the follower prim.
    """
    follower, f_inst, f_angular = joint_dof(joint, axis)
    ref, r_inst, r_angular = joint_dof(reference_joint, reference_axis)
    if follower.GetPath() == ref.GetPath():
        raise AuthoringError(follower.GetPath(), "a joint cannot mimic itself")
    token = _mimic_axis(follower, f_inst, "follower")
    ref_token = _mimic_axis(ref, r_inst, "reference")
    for name, value in (
        ("gearing", gearing),
        ("offset", offset),
        ("natural_frequency", natural_frequency),
        ("damping_ratio", damping_ratio),
    ):
        if not math.isfinite(value):
            raise AuthoringError(follower.GetPath(), f"mimic {name} must be finite, got {value}")
    units = StageUnits.of(follower.GetStage())
    f_unit, r_unit = units.dof(f_angular).position, units.dof(r_angular).position
    ns = "physxMimicJoint:{instance}:"
    apply_schema(follower, MIMIC, token)
    set_rel(follower, f"physxMimicJoint:{token}:referenceJoint", ref)
    set_attr(follower, MIMIC, ns + "referenceJointAxis", ref_token, token)
    set_attr(follower, MIMIC, ns + "gearing", gearing * r_unit / f_unit, token)
    set_attr(follower, MIMIC, ns + "offset", offset / f_unit, token)
    set_attr(follower, MIMIC, ns + "naturalFrequency", natural_frequency, token)
    set_attr(follower, MIMIC, ns + "dampingRatio", damping_ratio, token)
    return follower


@dataclass(frozen=True)
class TendonJoint:
    """One axis of a fixed tendon: a single-DOF joint, its gearing (m/rad or m/m) and force coefficient."""

    joint: object  # Usd.Prim or UsdPhysics joint schema
    gearing: float = 1.0
    force_coefficient: float = 1.0


def _tendon_axis(axis: TendonJoint, name: str, units: StageUnits) -> Usd.Prim:
    prim, _, angular = joint_dof(axis.joint)  # single-DOF joints only, as PhysX fixed tendons
    mpu = units.meters_per_unit
    gearing = axis.gearing * units.dof(angular).position / mpu  # m/rad -> length units per degree
    coefficient = axis.force_coefficient / (mpu if angular else 1.0)  # lever arm in length units
    set_attr(prim, AXIS, "physxTendon:{instance}:gearing", [gearing], name)
    set_attr(prim, AXIS, "physxTendon:{instance}:forceCoefficient", [coefficient], name)
    return prim


def add_fixed_tendon(
    name: str,
    root: TendonJoint,
    axes: Sequence[TendonJoint] = (),
    *,
    stiffness: float = 0.0,
    damping: float = 0.0,
    limit_stiffness: float = 0.0,
    offset: float = 0.0,
    rest_length: float = 0.0,
    lower_limit: float = -math.inf,
    upper_limit: float = math.inf,
    enabled: bool = True,
) -> Usd.Prim:
    """A fixed tendon: PhysxTendonAxisRootAPI:<name> on `root` (the common ancestor joint), carrying the
    tendon's spring (N/m, N s/m), offset, rest length and length limits (m); PhysxTendonAxisAPI:<name> on
    the other joints. Returns the root joint prim."""
    root_prim = prim_of(root.joint)
    if not name or ":" in name:
        raise AuthoringError(root_prim.GetPath(), f"tendon name must be a non-empty token without ':', got {name!r}")
    non_negative(root_prim, stiffness=stiffness, damping=damping, limit_stiffness=limit_stiffness)
    if lower_limit > upper_limit:
        raise AuthoringError(root_prim.GetPath(), f"tendon lower limit {lower_limit} exceeds upper limit {upper_limit}")
    units = StageUnits.of(root_prim.GetStage())
    mpu, kpu = units.meters_per_unit, units.kilograms_per_unit
    apply_schema(root_prim, "PhysxTendonAxisRootAPI", name)
    _tendon_axis(root, name, units)
    ns = "physxTendon:{instance}:"
    for attr, value in (
        ("stiffness", stiffness / kpu),
        ("damping", damping / kpu),
        ("limitStiffness", limit_stiffness / kpu),
        ("offset", offset / mpu),
        ("restLength", rest_length / mpu),
        ("lowerLimit", lower_limit / mpu),
        ("upperLimit", upper_limit / mpu),
        ("tendonEnabled", enabled),
    ):
        set_attr(root_prim, "PhysxTendonAxisRootAPI", ns + attr, value, name)
    for axis in axes:
        prim = prim_of(axis.joint)
        if prim.GetPath() == root_prim.GetPath():
            raise AuthoringError(prim.GetPath(), f"is already the root of tendon '{name}'")
        apply_schema(prim, AXIS, name)
        _tendon_axis(axis, name, units)
    return root_prim


def _link_local(link: Usd.Prim, position: Sequence[float], units: StageUnits) -> list[float]:
    """A point in the link frame in metres (scale removed, as the importer reads it) -> stage units."""
    world = UsdGeom.XformCache(Usd.TimeCode.Default()).GetLocalToWorldTransform(link)
    scale = np.abs(decompose(world)[2])
    return list(np.asarray(position, float) / (scale * units.meters_per_unit))


def _attachment(link, name: str, local_position, kind: str) -> tuple[Usd.Prim, StageUnits]:
    prim = prim_of(link)
    if not prim.HasAPI(UsdPhysics.RigidBodyAPI):
        raise AuthoringError(prim.GetPath(), "spatial tendon attachments go on articulation links (rigid bodies)")
    if not name or ":" in name:
        raise AuthoringError(prim.GetPath(), f"attachment name must be a non-empty token without ':', got {name!r}")
    units = StageUnits.of(prim.GetStage())
    apply_schema(prim, f"PhysxTendonAttachment{kind}API", name)
    set_attr(prim, ATTACHMENT, "physxTendon:{instance}:localPos", _link_local(prim, local_position, units), name)
    return prim, units


def _parent(prim: Usd.Prim, name: str, parent_link, parent_name: str, gearing: float) -> None:
    parent = prim_of(parent_link)
    set_rel(prim, f"physxTendon:{name}:parentLink", parent)
    set_attr(prim, ATTACHMENT, "physxTendon:{instance}:parentAttachment", parent_name, name)
    set_attr(prim, ATTACHMENT, "physxTendon:{instance}:gearing", gearing, name)


def add_spatial_tendon_root(
    link,
    name: str,
    local_position: Sequence[float] = (0.0, 0.0, 0.0),
    *,
    stiffness: float = 0.0,
    damping: float = 0.0,
    limit_stiffness: float = 0.0,
    offset: float = 0.0,
    enabled: bool = True,
) -> Usd.Prim:
    """PhysxTendonAttachmentRootAPI:<name>: the root of a spatial tendon on `link`, at `local_position` (m, link
    frame), with the spring (N/m, N s/m) and offset (m) shared by its sub-tendons. Returns the link prim."""
    prim, units = _attachment(link, name, local_position, "Root")
    non_negative(prim, stiffness=stiffness, damping=damping, limit_stiffness=limit_stiffness)
    kpu, mpu = units.kilograms_per_unit, units.meters_per_unit
    for attr, value in (
        ("stiffness", stiffness / kpu),
        ("damping", damping / kpu),
        ("limitStiffness", limit_stiffness / kpu),
        ("offset", offset / mpu),
        ("tendonEnabled", enabled),
    ):
        set_attr(prim, "PhysxTendonAttachmentRootAPI", "physxTendon:{instance}:" + attr, value, name)
    return prim


def add_spatial_tendon_attachment(
    link,
    name: str,
    parent_link,
    parent_name: str,
    local_position: Sequence[float] = (0.0, 0.0, 0.0),
    gearing: float = 1.0,
) -> Usd.Prim:
    """PhysxTendonAttachmentAPI:<name>: an intermediate attachment whose parent is `parent_name` on `parent_link`."""
    prim, _ = _attachment(link, name, local_position, "")
    _parent(prim, name, parent_link, parent_name, gearing)
    return prim


def add_spatial_tendon_leaf(
    link,
    name: str,
    parent_link,
    parent_name: str,
    local_position: Sequence[float] = (0.0, 0.0, 0.0),
    gearing: float = 1.0,
    *,
    rest_length: float | None = None,
    lower_limit: float = -math.inf,
    upper_limit: float = math.inf,
) -> Usd.Prim:
    """PhysxTendonAttachmentLeafAPI:<name>: ends a sub-tendon; rest_length None = computed at start (m)."""
    prim, units = _attachment(link, name, local_position, "Leaf")
    _parent(prim, name, parent_link, parent_name, gearing)
    if lower_limit > upper_limit:
        raise AuthoringError(prim.GetPath(), f"sub-tendon lower limit {lower_limit} exceeds upper limit {upper_limit}")
    mpu = units.meters_per_unit
    if rest_length is not None:
        non_negative(prim, rest_length=rest_length)
        set_attr(prim, LEAF, "physxTendon:{instance}:restLength", rest_length / mpu, name)
    set_attr(prim, LEAF, "physxTendon:{instance}:lowerLimit", lower_limit / mpu, name)
    set_attr(prim, LEAF, "physxTendon:{instance}:upperLimit", upper_limit / mpu, name)
    return prim
