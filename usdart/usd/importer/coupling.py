"""Couplings between DOFs of one articulation: mimic joints and fixed/spatial tendons.

All coefficients are converted to SI and to the articulation's internal sign convention: a joint that
was swapped to follow the tree has its positions negated, so a mimic gearing between a swapped and an
unswapped DOF changes sign, and so do tendon gearings and force coefficients of swapped joints.

Mimic joints come from PhysxMimicJointAPI:<rotX|rotY|rotZ> (q + gearing q_ref + offset = 0; offset in
degrees for an angular follower; gearing in follower units per reference unit) or, with the "newton"
semantics and no PhysX mimic applied, from NewtonMimicAPI (q = coef0 + coef1 q_ref, so gearing = -coef1,
offset = -coef0); PhysX ignores NewtonMimicAPI (the corpus Panda's fingers move independently in ovphysx).
"""

from __future__ import annotations

import math

import numpy as np
from pxr import Usd

from ...core.description import (
    ArticulationDesc,
    DofDesc,
    FixedTendonDesc,
    JointDesc,
    MimicDesc,
    SceneSettings,
    SpatialTendonDesc,
    TendonAttachmentDesc,
    TendonAxisDesc,
)
from ...errors import PhysicsImportError
from .usd_values import SDK_SLEEP_THRESHOLD, api_instances, applied_schemas, first_target, read, read_physx

DEG = math.pi / 180.0


def _unit(dof: DofDesc, settings: SceneSettings) -> float:
    return DEG if dof.angular else settings.meters_per_unit


def _dof_by_axis(joint: JointDesc, axis: str | None) -> DofDesc | None:
    if len(joint.dofs) == 1:
        return joint.dofs[0]
    return next((d for d in joint.dofs if d.axis == axis), None)


class ArticulationCouplings:
    """Reads the mimic joints and tendons of one articulation."""

    def __init__(self, stage: Usd.Stage, art: ArticulationDesc, settings: SceneSettings, warnings: list[str]):
        self.stage = stage
        self.art = art
        self.settings = settings
        self.warnings = warnings
        self.tree = {j.path: j for j in art.joints if j is not None}

    def sign(self, joint: JointDesc) -> float:
        return -1.0 if joint.reversed else 1.0

    # ---- mimic joints --------------------------------------------------------------------------------------
    def mimic_joints(self) -> list[MimicDesc]:
        out = []
        for path, joint in self.tree.items():
            prim = self.stage.GetPrimAtPath(path)
            schemas = applied_schemas(prim)
            physx = api_instances(schemas, "PhysxMimicJointAPI")
            for inst in physx:
                mimic = self._physx_mimic(prim, joint, inst)
                if mimic is not None and self._unlimited_revolute(mimic) is None:
                    out.append(mimic)
            # PhysX reads NewtonMimicAPI where no PhysxMimicJointAPI is applied (ovphysx with the Newton schema)
            if not physx and "NewtonMimicAPI" in schemas and read(prim, "newton:mimicEnabled", True):
                mimic = self._newton_mimic(prim, joint)
                if mimic is not None:
                    out.append(mimic)
        return out

    def _unlimited_revolute(self, mimic: MimicDesc) -> str | None:
        """As PhysX: a mimic joint whose follower or reference is a revolute joint without finite limits is
        dropped, with a warning naming it (measured on ovphysx: "needs a finite limit set to be used by the
        mimic joint feature", the joints then move independently). The "newton" reading keeps it."""
        if self.settings.semantics != "physx":
            return None
        for path, name in ((mimic.joint, mimic.dof), (mimic.reference_joint, mimic.reference_dof)):
            joint = self.tree[path]
            dof = next(d for d in joint.dofs if d.name == name)
            if joint.kind == "revolute" and not (math.isfinite(dof.lower) and math.isfinite(dof.upper)):
                self.warnings.append(
                    f"{mimic.joint}: PhysxMimicJointAPI ignored, as PhysX ignores it: the revolute joint {path} "
                    "has no finite limits (PhysX requires them for a mimic joint)"
                )
                return path
        return None

    def _reference(self, prim, rel: str) -> JointDesc | None:
        """The mimic's reference joint; None (with a warning) where it closes a loop of this articulation:
        PhysX then drops the mimic joint (measured on ovphysx: "failed to find internal joint object for
        reference joint", the follower moves freely)."""
        target = first_target(prim, rel, self.warnings)
        if target is None:
            raise PhysicsImportError(prim.GetPath(), f"mimic joint has no {rel} target")
        if target in self.art.loop_joints:
            self.warnings.append(
                f"{prim.GetPath()}: mimic joint ignored, as PhysX ignores it: its reference joint {target} closes "
                "a loop, so it is no DOF of the articulation"
            )
            return None
        if target not in self.tree:
            raise PhysicsImportError(
                prim.GetPath(),
                f"mimic reference joint {target} is not a joint of the same articulation ({self.art.root_link})",
            )
        return self.tree[target]

    def _physx_mimic(self, prim, joint: JointDesc, inst: str) -> MimicDesc | None:
        follower = _dof_by_axis(joint, inst)
        if follower is None:
            raise PhysicsImportError(prim.GetPath(), f"PhysxMimicJointAPI:{inst} names no free axis of this joint")
        ns = "physxMimicJoint:{instance}:"
        ref_joint = self._reference(prim, f"physxMimicJoint:{inst}:referenceJoint")
        if ref_joint is None:
            return None
        ref = _dof_by_axis(ref_joint, str(read_physx(prim, ns + "referenceJointAxis", inst)))
        if ref is None:
            raise PhysicsImportError(prim.GetPath(), f"referenceJointAxis names no free axis of {ref_joint.path}")
        gearing = (
            float(read_physx(prim, ns + "gearing", inst)) * _unit(follower, self.settings) / _unit(ref, self.settings)
        )
        offset = float(read_physx(prim, ns + "offset", inst)) * _unit(follower, self.settings)
        mimic = self._internal(joint, follower, ref_joint, ref, gearing, offset, "PhysxMimicJointAPI")
        mimic.natural_frequency = float(read_physx(prim, ns + "naturalFrequency", inst))
        mimic.damping_ratio = float(read_physx(prim, ns + "dampingRatio", inst))
        return mimic

    def _newton_mimic(self, prim, joint: JointDesc) -> MimicDesc | None:
        if len(joint.dofs) != 1:
            raise PhysicsImportError(prim.GetPath(), "NewtonMimicAPI is only supported on single-DOF joints")
        ref_joint = self._reference(prim, "newton:mimicJoint")
        if ref_joint is None:
            return None
        if len(ref_joint.dofs) != 1:
            raise PhysicsImportError(prim.GetPath(), f"NewtonMimicAPI reference {ref_joint.path} must have one DOF")
        follower, ref = joint.dofs[0], ref_joint.dofs[0]
        coef0 = float(read(prim, "newton:mimicCoef0", 0.0)) * _unit(follower, self.settings)
        coef1 = float(read(prim, "newton:mimicCoef1", 1.0)) * _unit(follower, self.settings) / _unit(ref, self.settings)
        return self._internal(joint, follower, ref_joint, ref, -coef1, -coef0, "NewtonMimicAPI")

    def _internal(self, joint, follower, ref_joint, ref, gearing, offset, source) -> MimicDesc:
        """USD-sense q_f + G q_r + c = 0 -> internal q'_f + (G s_f s_r) q'_r + s_f c = 0."""
        if ref.name == follower.name:
            raise PhysicsImportError(joint.path, f"{source}: the mimic joint's reference is its own DOF {ref.name}")
        s_f, s_r = self.sign(joint), self.sign(ref_joint)
        return MimicDesc(
            joint=joint.path,
            dof=follower.name,
            reference_joint=ref_joint.path,
            reference_dof=ref.name,
            gearing=gearing * s_f * s_r,
            offset=offset * s_f,
            source=source,
        )

    # ---- fixed tendons -------------------------------------------------------------------------------------
    def fixed_tendons(self) -> list[FixedTendonDesc]:
        roots, axes = {}, {}
        for path in self.tree:
            schemas = applied_schemas(self.stage.GetPrimAtPath(path))
            for name in api_instances(schemas, "PhysxTendonAxisRootAPI"):
                if name in roots:
                    raise PhysicsImportError(path, f"fixed tendon '{name}' has a second root joint ({roots[name]})")
                roots[name] = path
                axes.setdefault(name, []).append(path)
            for name in api_instances(schemas, "PhysxTendonAxisAPI"):
                if path not in axes.setdefault(name, []):
                    axes[name].append(path)
        out = []
        mpu, kpu = self.settings.meters_per_unit, self.settings.kilograms_per_unit
        for name in sorted(axes):
            if name not in roots:
                raise PhysicsImportError(axes[name][0], f"fixed tendon '{name}' has no PhysxTendonAxisRootAPI joint")
            root = self.stage.GetPrimAtPath(roots[name])
            ns = f"physxTendon:{name}:"
            tendon = FixedTendonDesc(
                name=name,
                root_joint=roots[name],
                axes=[self._tendon_axis(p, name) for p in axes[name]],
                stiffness=read(root, ns + "stiffness", 0.0) * kpu,
                damping=read(root, ns + "damping", 0.0) * kpu,
                limit_stiffness=read(root, ns + "limitStiffness", 0.0) * kpu,
                offset=read(root, ns + "offset", 0.0) * mpu,
                rest_length=read(root, ns + "restLength", 0.0) * mpu,
                lower_limit=read(root, ns + "lowerLimit", -math.inf) * mpu,
                upper_limit=read(root, ns + "upperLimit", math.inf) * mpu,
                enabled=bool(read(root, ns + "tendonEnabled", True)),
            )
            out.append(tendon)
        return out

    def _tendon_axis(self, path: str, name: str) -> TendonAxisDesc:
        joint = self.tree[path]
        prim = self.stage.GetPrimAtPath(path)
        if len(joint.dofs) != 1:
            raise PhysicsImportError(path, f"fixed tendon '{name}': only single-DOF joints can be tendon axes")
        dof = joint.dofs[0]
        mpu = self.settings.meters_per_unit
        gearing = _first_entry(prim, f"physxTendon:{name}:gearing")
        coefficient = _first_entry(prim, f"physxTendon:{name}:forceCoefficient")
        # rotational axes: length per degree -> per radian; coefficient is a lever arm (distance)
        g = gearing * mpu / (DEG if dof.angular else mpu)
        c = coefficient * (mpu if dof.angular else 1.0)
        s = self.sign(joint)
        return TendonAxisDesc(joint=path, dof=dof.name, gearing=g * s, force_coefficient=c * s)

    # ---- spatial tendons -----------------------------------------------------------------------------------
    def spatial_tendons(self, body_scale: dict[str, np.ndarray]) -> list[SpatialTendonDesc]:
        attachments = {}  # (link, name) -> (prim, kind)
        for link, body in zip(self.art.links, self.art.bodies):
            prim = self.stage.GetPrimAtPath(link)
            if not prim or body is None:  # a static anchor (named after its world joint) carries no attachment
                continue
            schemas = applied_schemas(prim)
            for kind in ("Root", "Leaf", ""):  # a Root or Leaf API implies the plain attachment API
                for name in api_instances(schemas, f"PhysxTendonAttachment{kind}API"):
                    attachments.setdefault((link, name), (prim, kind or "Attachment"))
        children = {}
        for (link, name), (prim, kind) in attachments.items():
            if kind == "Root":
                continue
            parent_link = first_target(prim, f"physxTendon:{name}:parentLink", self.warnings)
            parent_name = read(prim, f"physxTendon:{name}:parentAttachment", None)
            if (parent_link, parent_name) not in attachments:
                raise PhysicsImportError(
                    link,
                    f"tendon attachment '{name}' has no parent attachment "
                    f"'{parent_name}' on {parent_link} in this articulation",
                )
            children.setdefault((parent_link, parent_name), []).append((link, name))
        out = []
        mpu, kpu = self.settings.meters_per_unit, self.settings.kilograms_per_unit
        for key in sorted(k for k, v in attachments.items() if v[1] == "Root"):
            prim = attachments[key][0]
            ns = f"physxTendon:{key[1]}:"
            tendon = SpatialTendonDesc(
                name=key[1],
                attachments=[],
                stiffness=read(prim, ns + "stiffness", 0.0) * kpu,
                damping=read(prim, ns + "damping", 0.0) * kpu,
                limit_stiffness=read(prim, ns + "limitStiffness", 0.0) * kpu,
                offset=read(prim, ns + "offset", 0.0) * mpu,
                enabled=bool(read(prim, ns + "tendonEnabled", True)),
            )
            stack = [(key, -1)]
            while stack:
                (link, name), parent = stack.pop(0)
                prim, kind = attachments[(link, name)]
                ns = f"physxTendon:{name}:"
                local = np.asarray(read(prim, ns + "localPos", np.zeros(3)), float) * body_scale[link] * mpu
                att = TendonAttachmentDesc(
                    link=link,
                    name=name,
                    local_position=local,
                    parent=parent,
                    gearing=float(read(prim, ns + "gearing", 1.0)),
                    leaf=kind == "Leaf",
                )
                if att.leaf:
                    rest = read(prim, ns + "restLength", -math.inf)
                    att.rest_length = rest * mpu if rest >= 0 else -math.inf
                    att.lower_limit = read(prim, ns + "lowerLimit", -math.inf) * mpu
                    att.upper_limit = read(prim, ns + "upperLimit", math.inf) * mpu
                tendon.attachments.append(att)
                index = len(tendon.attachments) - 1
                stack.extend((child, index) for child in sorted(children.get((link, name), [])))
            out.append(tendon)
        reached = {(a.link, a.name) for tendon in out for a in tendon.attachments}
        for link, name in sorted(set(attachments) - reached):
            raise PhysicsImportError(
                link, f"tendon attachment '{name}' is not connected to any PhysxTendonAttachmentRootAPI attachment"
            )
        return out


def _first_entry(prim: Usd.Prim, name: str) -> float:
    """A fixed tendon axis's value for its joint's DOF: the first entry of an array attribute (default 1)."""
    values = np.atleast_1d(read(prim, name, np.array([1.0])))
    if values.size == 0:
        raise PhysicsImportError(prim.GetPath(), f"attribute '{name}' is an empty array; it needs one value per DOF")
    return float(values[0])


def articulation_settings(prim: Usd.Prim, art: ArticulationDesc, settings: SceneSettings) -> None:
    """PhysxArticulationAPI on the root-API prim (schema fallbacks where unauthored; without the API, the
    "physx" semantics sleeps at PhysX's SDK default threshold, as ovphysx does)."""
    mpu2 = settings.meters_per_unit**2
    art.solver_position_iterations = int(read_physx(prim, "physxArticulation:solverPositionIterationCount"))
    art.solver_velocity_iterations = int(read_physx(prim, "physxArticulation:solverVelocityIterationCount"))
    art.sleep_threshold = float(read_physx(prim, "physxArticulation:sleepThreshold")) * mpu2
    if settings.semantics == "physx" and "PhysxArticulationAPI" not in applied_schemas(prim):
        art.sleep_threshold = SDK_SLEEP_THRESHOLD
    art.stabilization_threshold = float(read_physx(prim, "physxArticulation:stabilizationThreshold")) * mpu2
    art.self_collisions = bool(read_physx(prim, "physxArticulation:enabledSelfCollisions"))
    if "PhysxArticulationAPI" not in applied_schemas(prim):  # PhysX falls back to the Newton switch
        art.self_collisions = bool(read(prim, "newton:selfCollisionEnabled", art.self_collisions))
