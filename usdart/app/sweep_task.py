"""One task of a sweep, as a worker runs it: open the stage once per run with that run's values and variant
selections (in the session layer: the file is never written), load each as a one-world scene, batch the
runs that share a structure into the worlds of one scene (usdart.scene.batch), simulate them exactly as
`usdart simulate` would, and return one result row per run.

A run that cannot load (a value the importer refuses, an attribute that does not exist) gets a row with
status "error: ..." and the others go on; a batch that diverges reports the diverged worlds the same way.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
from pxr import Sdf, Usd

from ..errors import SimulationDiverged, UsdartError
from ..scene import Scene, _batch_difference, batch, load
from ..usd.controls import StageControls
from .output_files import export_atomic
from .run_metrics import RunMetrics, mechanical_energy
from .simulation import Recorder, require_something_to_simulate, run_frames, step_count
from .sweep_plan import Run

_SCALARS = {
    "float": float,
    "double": float,
    "half": float,
    "int": int,
    "uint": int,
    "int64": int,
    "uint64": int,
    "uchar": int,
    "bool": bool,
}


class _NoProgress:
    def update(self, done: int) -> None:
        pass


def run_task(stage_path: str, runs: list[Run], duration: float | None, stages_dir: str | None = None) -> list[dict]:
    """Result rows of `runs` (see the module); `stages_dir`: also write each run's motion there as
    `<run_id>.usda` (the layer `usdart simulate` writes, plus the run's values and variant selections)."""
    rows, loaded = {}, []
    for run in runs:
        try:
            scene = load(open_run_stage(stage_path, run))
            require_something_to_simulate(scene)
            loaded.append((run, scene))
        except UsdartError as error:
            rows[run.run_id] = result_row(run, f"error: {error}")
    for group in _structure_groups(loaded):
        rows.update(_simulate_group(stage_path, group, duration, stages_dir))
    return [rows[run.run_id] for run in runs]


def open_run_stage(stage_path: str, run: Run) -> Usd.Stage:
    """The input stage with the run's variant selections and attribute values in its session layer."""
    stage = Usd.Stage.Open(stage_path)
    if stage is None:
        raise UsdartError(f"{stage_path}: cannot open the stage")
    stage.SetEditTarget(stage.GetSessionLayer())
    for key, selection in run.variants.items():
        prim_path, _, set_name = key.rpartition(":")
        prim = stage.GetPrimAtPath(prim_path)
        if not prim or not prim.GetVariantSets().HasVariantSet(set_name):
            raise UsdartError(f"{prim_path}: no variant set {set_name!r} (--variant {key})")
        variant_set = prim.GetVariantSet(set_name)
        if selection not in variant_set.GetVariantNames():
            names = ", ".join(variant_set.GetVariantNames())
            raise UsdartError(f"{prim_path}: variant set {set_name!r} has no {selection!r} (it has {names})")
        variant_set.SetVariantSelection(selection)
    for key, value in run.values.items():
        _set_value(stage, key, value)
    return stage


def _set_value(stage: Usd.Stage, key: str, value: float) -> None:
    path = Sdf.Path(key)
    prim = stage.GetPrimAtPath(path.GetPrimPath())
    if not prim:
        raise UsdartError(f"{path.GetPrimPath()}: no such prim (swept attribute {key})")
    attribute = prim.GetAttribute(path.name)
    if not attribute:
        raise UsdartError(f"{key}: the prim has no attribute {path.name!r} (authored or from its schemas)")
    if attribute.GetNumTimeSamples():
        raise UsdartError(f"{key}: the attribute has time samples, which a swept value would not override")
    type_name = str(attribute.GetTypeName())
    kind = _SCALARS.get(type_name)
    if kind is None:
        raise UsdartError(f"{key}: a {type_name} attribute; only scalar numbers and bools can be swept")
    if kind is not float and value != int(value):
        raise UsdartError(f"{key}: a {type_name} attribute takes whole numbers, got {value}")
    attribute.Set(kind(value))


def _structure_groups(loaded: list[tuple[Run, Scene]]) -> list[list[tuple[Run, Scene]]]:
    """The runs in groups of one structure each (a batch per group), in run order."""
    groups: list[list[tuple[Run, Scene]]] = []
    for run, scene in loaded:
        for group in groups:
            if _batch_difference(group[0][1], scene) is None:
                group.append((run, scene))
                break
        else:
            groups.append([(run, scene)])
    return groups


def _simulate_group(stage_path, group, duration, stages_dir) -> dict:
    """Rows of a group of runs of one structure, simulated as the worlds of one scene. When a world
    diverges, the batch stops: each run is then simulated alone, so only the diverging ones fail."""
    began = time.perf_counter()
    scene = batch([scene for _, scene in group])
    total = step_count(scene, duration, None)
    recorders = [Recorder(scene, world=w, stage=run_scene.stage) for w, (_, run_scene) in enumerate(group)]
    metrics = RunMetrics(scene)
    try:
        run_frames(scene, StageControls(scene), recorders, total, _NoProgress(), metrics.after_step)
    except SimulationDiverged as error:
        if len(group) == 1:
            return {group[0][0].run_id: result_row(group[0][0], f"error: {error}")}
        rows = {}
        for member in group:
            rows.update(_simulate_group(stage_path, [member], duration, stages_dir))
        return rows
    seconds = (time.perf_counter() - began) / len(group)
    settling, energy, error = metrics.settling_time(), mechanical_energy(scene), metrics.target_error()
    names = [name for art in scene.articulations for name in art.dof_names]
    q = np.concatenate([art.state.q for art in scene.articulations] or [np.zeros((scene.worlds, 0))], axis=1)
    qd = np.concatenate([art.state.qd for art in scene.articulations] or [np.zeros((scene.worlds, 0))], axis=1)
    rows = {}
    for w, (run, _) in enumerate(group):
        row = result_row(run, "ok")
        row.update(
            target_error=float(error[w]) if len(metrics.driven) else math.nan,
            settling_time=float(settling[w]),
            peak_joint_force=float(metrics.peak_force[w]),
            energy=float(energy[w]),
            duration=total * scene.time_step,
            seconds=seconds,
        )
        for k, name in enumerate(names):
            row[f"q:{name}"] = float(q[w, k])
            row[f"qd:{name}"] = float(qd[w, k])
        if stages_dir is not None:
            _save_stage(stage_path, run, recorders[w], os.path.join(stages_dir, f"{run.run_id}.usda"))
        rows[run.run_id] = row
    return rows


def result_row(run: Run, status: str) -> dict:
    """A run's row before its results: id, status, sample, seed, its values and variant selections."""
    return {
        "run_id": run.run_id,
        "status": status,
        "sample": run.sample,
        "seed": run.seed,
        **run.values,
        **run.variants,
    }


def _save_stage(stage_path: str, run: Run, recorder: Recorder, target: str) -> None:
    """The run's motion as `usdart simulate` writes it (overs sublayering the input), with the run's values
    and variant selections, so the file opens as that run."""
    relative = os.path.relpath(os.path.abspath(stage_path), os.path.dirname(os.path.abspath(target)))
    layer = recorder.layer(relative.replace(os.sep, "/"))
    stage = recorder.stage
    for key, selection in run.variants.items():
        prim_path, _, set_name = key.rpartition(":")
        Sdf.CreatePrimInLayer(layer, prim_path).variantSelections[set_name] = selection
    for key in run.values:
        path = Sdf.Path(key)
        spec = Sdf.CreatePrimInLayer(layer, path.GetPrimPath())
        attribute = stage.GetPrimAtPath(path.GetPrimPath()).GetAttribute(path.name)
        attr_spec = spec.attributes.get(path.name) or Sdf.AttributeSpec(spec, path.name, attribute.GetTypeName())
        attr_spec.default = attribute.Get()
    export_atomic(layer, target)
