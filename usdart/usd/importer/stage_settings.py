"""Opening a stage and reading its scene-wide settings: units, up axis, gravity, time step.

Time step precedence: an authored `physxScene:timeStepsPerSecond` wins over an authored
`newton:timeStepsPerSecond` (the PhysX attribute wins whenever both say the same thing); unauthored,
the applied schema's fallback is used (PhysxSceneAPI: 60 Hz, NewtonSceneAPI: 1000 Hz, PhysxSceneAPI
first); with neither schema, 60 Hz. `newton:gravityEnabled = false` turns gravity off.

Solver: an authored `physxScene:solverType` (PGS or TGS); unauthored, TGS with the "physx" semantics
(PhysX's schema fallback, which ovphysx uses also where PhysxSceneAPI is not applied) and PGS with the
"newton" semantics (semi-implicit Euler with one correction per step, as MuJoCo and the analytic
comparisons have it). `physxScene:enableExternalForcesEveryIteration` unauthored is true: PhysX's schema
says false, but ovphysx 0.7 behaves as with true (measured: authoring false changes its TGS motion,
authoring true does not).
"""

from __future__ import annotations

import os

import numpy as np
from pxr import Tf, Usd, UsdGeom, UsdPhysics

from ...core.description import SceneSettings
from ...errors import PhysicsImportError, StageError
from .usd_values import applied_schemas, authored, read, schema_default

STANDARD_GRAVITY = 9.81  # m/s^2, UsdPhysics' default magnitude
NEWTON_DEFAULT_STEPS_PER_SECOND = 1000  # newton-usd-schemas NewtonSceneAPI fallback
FALLBACK_STEPS_PER_SECOND = 60
UNIT_RANGE = (1e-6, 1e6)  # micrometres to thousands of kilometres per stage unit (and the same for mass)


def stage_file(source) -> str:
    """The file a stage (or a path to one) names, for messages; the identifier of an in-memory stage."""
    if isinstance(source, Usd.Stage):
        layer = source.GetRootLayer()
        return layer.realPath or layer.identifier
    return os.fspath(source)


def open_stage(source) -> Usd.Stage:
    """A Usd.Stage from a path or an already open stage; errors say what is wrong with the file."""
    if isinstance(source, Usd.Stage):
        return source
    path = os.fspath(source)
    if not os.path.exists(path):
        raise StageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise StageError(f"{path}: is a folder, not a USD file")
    try:
        stage = Usd.Stage.Open(path)
        _read_again(stage)
    except Tf.ErrorException as exc:
        detail = " ".join(str(exc).split())
        raise StageError(f"{path}: cannot be read as USD ({detail[:300]})") from None
    if stage is None:
        raise StageError(f"{path}: cannot be read as USD")
    return stage


def _read_again(stage: Usd.Stage) -> None:
    """USD keeps a layer that is still open (an earlier scene of the same file holds it) and hands it out
    again as it was read: a file edited since would load stale. Each file layer without unsaved edits is
    read again when its file changed (Sdf's Reload does nothing when it has not); one with unsaved edits is
    left as it is, so that nothing in memory is lost."""
    for layer in stage.GetUsedLayers():
        if not layer.anonymous and not layer.dirty:
            layer.Reload()


MIN_BOUNCE_THRESHOLD = 1e-6  # stage units/s: Kit's parser default and floor


def read_settings(
    stage: Usd.Stage, scene_prims: list[Usd.Prim], warnings: list[str], semantics: str = "physx"
) -> SceneSettings:
    mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
    kpu = float(UsdPhysics.GetStageKilogramsPerUnit(stage))
    for name, value in (("metersPerUnit", mpu), ("kilogramsPerUnit", kpu)):
        if not (UNIT_RANGE[0] <= value <= UNIT_RANGE[1]):  # also false for NaN
            low, high = UNIT_RANGE
            raise PhysicsImportError("/", f"stage metadata {name} = {value:g} must be a number in [{low:g}, {high:g}]")
    up = str(UsdGeom.GetStageUpAxis(stage))
    settings = SceneSettings(meters_per_unit=mpu, kilograms_per_unit=kpu, up_axis=up, semantics=semantics)
    settings.solver = schema_default("physxScene:solverType") if semantics == "physx" else "PGS"
    tcps = stage.GetTimeCodesPerSecond()
    settings.time_codes_per_second = float(tcps) if tcps and tcps > 0 else 60.0
    up_vector = np.array([0.0, 1.0, 0.0]) if up == "Y" else np.array([0.0, 0.0, 1.0])
    settings.gravity = -STANDARD_GRAVITY * up_vector
    settings.time_step = 1.0 / FALLBACK_STEPS_PER_SECOND
    if not scene_prims:
        return settings
    scene = sorted(scene_prims, key=lambda p: str(p.GetPath()))[0]
    if len(scene_prims) > 1:
        warnings.append(f"{scene.GetPath()}: the stage has {len(scene_prims)} physics scenes; using this one")
    settings.scene_path = str(scene.GetPath())
    settings.gravity = _gravity(scene, up_vector, mpu)
    settings.time_step = 1.0 / _steps_per_second(scene)
    settings.solver = str(authored(scene, "physxScene:solverType") or settings.solver)
    every_iteration = authored(scene, "physxScene:enableExternalForcesEveryIteration")
    settings.external_forces_every_iteration = True if every_iteration is None else bool(every_iteration)
    _contact_settings(scene, settings)
    return settings


def _contact_settings(scene: Usd.Prim, settings: SceneSettings) -> None:
    """PhysxSceneAPI's contact values in SI, unauthored as Kit's parser sets them (its bounce threshold 1e-6,
    authored values raised to it; the friction anchor distances 0.04 and 0.025 x tolerancesLength, i.e. 4 and
    2.5 cm whatever the stage's unit: a centimetre stage's box landing sliding is stopped by the impact's
    friction as in a metre stage)."""
    mpu = settings.meters_per_unit
    bounce = authored(scene, "physxScene:bounceThreshold")
    settings.bounce_threshold = max(float(bounce) if bounce is not None else 0.0, MIN_BOUNCE_THRESHOLD) * mpu
    for name, attr, fallback in (
        ("friction_offset_threshold", "physxScene:frictionOffsetThreshold", 0.04),
        ("friction_correlation_distance", "physxScene:frictionCorrelationDistance", 0.025),
    ):
        value = authored(scene, attr)
        setattr(settings, name, fallback if value is None else float(value) * mpu)
    settings.invert_collision_group_filter = bool(read(scene, "physxScene:invertCollisionGroupFilter", False))


def _gravity(scene: Usd.Prim, up_vector: np.ndarray, mpu: float) -> np.ndarray:
    """Gravity as PhysX applies it: the authored direction times the magnitude, not normalised ((0, 0, -2)
    doubles it) and an authored (0, 0, 0) is no gravity; unauthored, the direction is down the up axis."""
    direction = authored(scene, "physics:gravityDirection")
    direction = -up_vector if direction is None else np.asarray(direction, float)
    magnitude = read(scene, "physics:gravityMagnitude", -np.inf)
    # negative magnitude (the -inf fallback) means "Earth gravity" (PhysX turns an authored -inf into NaN)
    accel = STANDARD_GRAVITY if magnitude < 0 else magnitude * mpu
    if "NewtonSceneAPI" in applied_schemas(scene) and read(scene, "newton:gravityEnabled", True) is False:
        accel = 0.0
    return direction * accel + 0.0  # + 0.0 turns -0.0 into 0.0


def _steps_per_second(scene: Usd.Prim) -> float:
    schemas = applied_schemas(scene)
    candidates = [authored(scene, "physxScene:timeStepsPerSecond"), authored(scene, "newton:timeStepsPerSecond")]
    if "PhysxSceneAPI" in schemas:
        candidates.append(schema_default("physxScene:timeStepsPerSecond"))
    if "NewtonSceneAPI" in schemas:
        candidates.append(NEWTON_DEFAULT_STEPS_PER_SECOND)
    for value in candidates:
        if value is not None:
            return float(value)
    return float(FALLBACK_STEPS_PER_SECOND)
