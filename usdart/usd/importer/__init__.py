"""USD stage -> SceneDescription (SI units, radians, articulation trees as PhysX builds them).

usd-core's UsdPhysics parser finds the scenes, bodies (with their colliders), joints and root APIs;
everything it leaves to consumers (units, mass, root choice, components, loops, PhysX attributes)
is done by the modules of this package.
"""

from __future__ import annotations

import os
import warnings as _py_warnings

import numpy as np
from pxr import Sdf, Tf, Usd, UsdPhysics

from ...core.description import SceneDescription
from ...core.frames import decompose
from ...errors import StageError
from ..schemas import register as _register_schemas
from .bodies import read_body
from .colliders import Colliders, jointed_pairs
from .coupling import ArticulationCouplings, articulation_settings
from .diagnostics import collected_usd_reports
from .joints import (
    BodyResolver,
    check_articulation_joint,
    joint_kind,
    read_joint,
    warn_open_constraints,
    warn_separated_frames,
)
from .stage_settings import open_stage, read_settings, stage_file
from .topology import Topology, check_free_body
from .transforms import WorldTransforms, check_ops
from .usd_values import read

_register_schemas()  # before this package opens any stage

__all__ = ["read_stage", "open_stage"]

_JOINT_TYPES = (
    "FixedJoint",
    "RevoluteJoint",
    "PrismaticJoint",
    "SphericalJoint",
    "DistanceJoint",
    "D6Joint",
    "CustomJoint",
)


def _parse(stage: Usd.Stage) -> dict:
    parse = getattr(UsdPhysics, "UsdPhysicsLoadStageFromPrimRange", None)
    with _py_warnings.catch_warnings():
        _py_warnings.simplefilter("ignore", DeprecationWarning)
        if parse is None:
            parse = UsdPhysics.LoadUsdPhysicsFromRange
        try:
            return parse(stage, [Sdf.Path.absoluteRootPath])
        except Tf.ErrorException:
            for prim in stage.Traverse():  # the parser evaluates transforms: name a broken xformOp's prim
                check_ops(prim)
            raise


def _entries(parsed: dict, type_name: str):
    key = getattr(UsdPhysics.ObjectType, type_name)
    paths, descs = parsed.get(key, ([], []))
    return list(zip((str(p) for p in paths), descs))


def read_stage(source, strict: bool = False, semantics: str = "physx") -> tuple[Usd.Stage, SceneDescription]:
    """Stage and its description. USD's composition warnings become usdart warnings (errors with `strict`,
    and always when they leave the stage without physics). `semantics`: "physx" reads the stage as PhysX
    does (PhysxRigidBodyAPI's fallbacks on every body and its mass fallback, importer.bodies; the Newton
    schema's values where ovphysx reads them, importer.joints); "newton" as UsdPhysics and the Newton
    schema define it."""
    with collected_usd_reports(source) as reports:
        try:
            stage, description = _read(source, semantics)
        except UnicodeDecodeError as exc:
            raise StageError(f"{os.fspath(source)}: contains text that is not UTF-8 ({exc.reason})") from None
    failed = reports.composition
    if failed and (strict or not (description.bodies or description.joints)):
        why = "with --strict every layer must load" if description.bodies else "it composes to no physics"
        raise StageError(f"{stage_file(stage)}: {failed[0]} ({why})")
    description.warnings[:0] = reports.warnings()
    return stage, description


def _read(source, semantics: str) -> tuple[Usd.Stage, SceneDescription]:
    stage = open_stage(source)
    warnings: list[str] = []
    parsed = _parse(stage)
    scene_prims = [stage.GetPrimAtPath(p) for p, _ in _entries(parsed, "Scene")]
    settings = read_settings(stage, scene_prims, warnings, semantics)
    transforms = WorldTransforms(warnings)

    bodies = {}
    body_scale = {}
    for path, desc in _entries(parsed, "RigidBody"):
        prim = stage.GetPrimAtPath(path)
        if read(prim, "physics:rigidBodyEnabled", True) is False:  # as the parser's desc.rigidBodyEnabled
            continue
        colliders = [stage.GetPrimAtPath(c) for c in desc.collisions]
        bodies[path] = read_body(prim, colliders, transforms, settings, warnings)
        body_scale[path] = np.abs(decompose(transforms.matrix(prim))[2])

    resolver = BodyResolver(stage, set(bodies), transforms)
    joints = {}
    for type_name in _JOINT_TYPES:
        for path, _ in _entries(parsed, type_name):
            prim = stage.GetPrimAtPath(path)
            if read(prim, "physics:jointEnabled", True) is False:
                continue
            joints[path] = read_joint(prim, joint_kind(prim), resolver, settings, warnings)

    api_paths = []
    for path, _ in _entries(parsed, "Articulation"):
        prim = stage.GetPrimAtPath(path)
        if read(prim, "physxArticulation:articulationEnabled", True) is False:
            warnings.append(
                f"{path}: articulation disabled (physxArticulation:articulationEnabled = false); its "
                "bodies are simulated as free bodies with joint constraints"
            )
            continue
        api_paths.append(path)

    topology = Topology(bodies, joints, warnings, authored_order(stage))
    articulations, tree_joints = topology.build(sorted(set(api_paths)))
    articulations.sort(key=lambda a: a.root_link)
    for art in articulations:
        for joint in art.joints:
            if joint is not None:
                check_articulation_joint(joint)
        articulation_settings(stage.GetPrimAtPath(art.api_prim), art, settings)
        couplings = ArticulationCouplings(stage, art, settings, warnings)
        art.mimic_joints = couplings.mimic_joints()
        art.fixed_tendons = couplings.fixed_tendons()
        art.spatial_tendons = couplings.spatial_tendons(body_scale)
        poses = {p: b.pose for p, b in bodies.items()}
        poses.update((link, poses[child]) for link, child in art.composed_links.items())
        warn_separated_frames(art.joints, poses, warnings)

    in_articulation = {link for art in articulations for link in art.links}
    free = sorted(p for p in topology.links_ok if p not in in_articulation)
    for path in free:
        check_free_body(bodies[path])
    consumed = tree_joints | {a.root_joint for a in articulations if a.root_joint} | topology.ignored_joints
    constraints = sorted(p for p in joints if p not in consumed)
    warn_open_constraints([joints[p] for p in constraints], {p: b.pose for p, b in bodies.items()}, warnings)
    shapes = Colliders(stage, parsed, bodies, transforms, settings, warnings)
    colliders = shapes.read()
    groups, filtered_groups = shapes.groups(colliders)
    description = SceneDescription(
        settings=settings,
        bodies=bodies,
        joints=joints,
        articulations=articulations,
        free_bodies=free,
        kinematic_bodies=sorted(p for p, b in bodies.items() if b.kinematic),
        constraints=constraints,
        warnings=warnings,
        colliders=colliders,
        collision_groups=groups,
        filtered_groups=filtered_groups,
        filtered_pairs=shapes.filtered_pairs(colliders, {a.api_prim: a.links for a in articulations}),
        jointed_pairs=jointed_pairs(stage, sorted(p for p in joints if p not in tree_joints)) | topology.composed_pairs,
    )
    return stage, description


def authored_order(stage: Usd.Stage):
    """Sorts prim paths in the stage's order (depth first, children as authored), for joints composed in the
    order they were written; the traversal runs once, when first needed."""
    index: dict[str, int] = {}

    def order(paths: list[str]) -> list[str]:
        if not index:
            prims = Usd.PrimRange.Stage(stage, Usd.TraverseInstanceProxies())
            index.update((str(prim.GetPath()), i) for i, prim in enumerate(prims))
        return sorted(paths, key=lambda p: (index.get(p, len(index)), p))

    return order
