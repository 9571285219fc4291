"""Controls from the stage: time-sampled drive targets and joint states, applied at every step.

An animator keyframes a robot by time-sampling `drive:<axis>:physics:targetPosition` / `targetVelocity`
(PhysicsDriveAPI) or `state:<axis>:physics:position` / `velocity` (PhysicsJointStateAPI) in the input.
The importer reads each attribute's default (or earliest sample) as the start value; here every sampled
attribute becomes a track, linearly interpolated between samples and held before the first and after
the last (as USD holds them), converted exactly like the importer converts defaults
(`usd_to_internal`: degrees or stage lengths -> SI, negated for turned joints), and only where the
importer would read it (the API schema is applied to that axis).

- Drive targets are the drives' set-points at each step.
- Joint states are prescribed motion: the sampled DOF is set to the track's value (and velocity) before
  each step and before each recorded frame, so the output follows the keyframes exactly while the rest of
  the articulation responds. A position track without a velocity track prescribes the velocity of its
  linear interpolation (the slope of the current segment). Re-simulating an output written by usdart
  therefore replays its recorded joint states.
- Drive targets of joints outside the articulations (Scene.set_drive_target) follow their tracks alike.
- A kinematic body whose transform is time-sampled (its own xformOps or an ancestor's) follows it: each
  step's kinematic target is its world pose, as USD evaluates it, at the step's end (as Isaac Sim drives an
  animated kinematic body), so what it carries or is jointed to moves with it.

Time: simulation time 0 is the input's startTimeCode (0 when unauthored); time codes become seconds with
the input's timeCodesPerSecond as USD composes it (24 when unauthored).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from pxr import Usd, UsdGeom

from ..cache import CacheFlag
from ..core.frames import decompose, matrix_to_quat
from ..errors import PhysicsImportError
from .importer.joints import usd_to_internal
from .importer.transforms import placement_defect
from .importer.usd_values import applied_schemas

# kind -> (API schema that must be applied, attribute name)
TRACK_ATTRIBUTES = {
    "target_position": ("PhysicsDriveAPI", "drive:{instance}:physics:targetPosition"),
    "target_velocity": ("PhysicsDriveAPI", "drive:{instance}:physics:targetVelocity"),
    "position": ("PhysicsJointStateAPI", "state:{instance}:physics:position"),
    "velocity": ("PhysicsJointStateAPI", "state:{instance}:physics:velocity"),
}


def stage_clock(stage: Usd.Stage) -> tuple[float, float]:
    """(time code of simulation time 0, time codes per second) of a stage."""
    layer = stage.GetRootLayer()
    start = float(stage.GetStartTimeCode()) if layer.HasStartTimeCode() else 0.0
    tcps = float(stage.GetTimeCodesPerSecond())
    return start, (tcps if tcps > 0 else 24.0)


@dataclass
class Track:
    """One time-sampled value of one DOF, in internal units, against simulation seconds."""

    dof: int  # low-level DOF index in its articulation
    times: np.ndarray
    values: np.ndarray
    slope: bool = False  # True: the derivative of `values` (a velocity prescribed by a position track)

    def at(self, t: np.ndarray) -> np.ndarray:
        if not self.slope:
            return np.interp(t, self.times, self.values)
        rates = np.zeros(len(self.times) + 1)  # held before the first and after the last sample
        if len(self.times) > 1:
            rates[1:-1] = np.diff(self.values) / np.diff(self.times)
        return rates[np.searchsorted(self.times, t, side="right")]


class ControlTable(NamedTuple):
    """Every track at a list of times: per articulation, kind -> (times, n) values; the animated kinematic
    bodies' targets (times, bodies, 7) [x, y, z, qw, qx, qy, qz] (SI), each at that time plus a step; the
    drive targets of joints outside the articulations (times, tracks)."""

    articulations: list[dict[str, np.ndarray]]
    kinematic: np.ndarray
    joints: np.ndarray


def time_varying(prim: Usd.Prim) -> bool:
    """Whether the prim's world transform may change with time (its own xformOps or an ancestor's)."""
    while prim and not prim.IsPseudoRoot():
        xformable = UsdGeom.Xformable(prim)
        if xformable and xformable.TransformMightBeTimeVarying():
            return True
        prim = prim.GetParent()
    return False


@dataclass
class _ArticulationTracks:
    art: object
    tracks: dict[str, list[Track]] = field(default_factory=dict)
    index: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> DOF index of each track
    cache: object = None


class StageControls:
    """The time-sampled controls of a scene's stage (`empty` when nothing is sampled)."""

    def __init__(self, scene):
        stage, settings = scene.stage, scene.description.settings
        self.start_time_code, self.time_codes_per_second = stage_clock(stage)
        self._scene = scene
        self._kinematic = [p for p in scene.kinematic_bodies if time_varying(stage.GetPrimAtPath(p))]
        self._arts: list[_ArticulationTracks] = []
        for art in scene.articulations:
            found = _ArticulationTracks(art)
            k = 0
            for joint in art.desc.joints:
                if joint is None:
                    continue
                prim = stage.GetPrimAtPath(joint.path)
                schemas = applied_schemas(prim) if prim else []
                for dof in joint.dofs:
                    factor = usd_to_internal(joint, dof, settings)
                    for kind, (api, name) in TRACK_ATTRIBUTES.items():
                        if f"{api}:{dof.usd_instance}" in schemas:
                            track = self._track(prim, name.format(instance=dof.usd_instance), k, factor)
                            if track is not None:
                                found.tracks.setdefault(kind, []).append(track)
                    k += 1
            self._derive_velocities(found)
            found.index = {
                kind: np.array([t.dof for t in tracks], dtype=np.int64) for kind, tracks in found.tracks.items()
            }
            if found.tracks:
                self._arts.append(found)
        # drive targets of joints outside the articulations: (DOF name, kind, track in the joint's USD sense)
        self._joint_tracks: list[tuple[str, str, Track]] = []
        for path in scene.driven_joints:
            joint, prim = scene.joint(path), stage.GetPrimAtPath(path)
            schemas = applied_schemas(prim)
            for dof in joint.dofs:
                sense = -1.0 if joint.reversed else 1.0
                factor = sense * usd_to_internal(joint, dof, settings)
                for kind in ("target_position", "target_velocity"):
                    api, name = TRACK_ATTRIBUTES[kind]
                    if f"{api}:{dof.usd_instance}" in schemas:
                        track = self._track(prim, name.format(instance=dof.usd_instance), 0, factor)
                        if track is not None:
                            self._joint_tracks.append((dof.name, kind, track))
        self._joint_targets = np.full(len(self._joint_tracks), np.nan)  # what was set last (set on change)

    def _track(self, prim, name: str, dof: int, factor: float) -> Track | None:
        attr = prim.GetAttribute(name)
        if not attr or attr.GetNumTimeSamples() == 0:
            return None
        codes = attr.GetTimeSamples()
        samples = [attr.Get(c) for c in codes]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in samples):
            raise PhysicsImportError(prim.GetPath(), f"time samples of '{name}' are not all numbers")
        values = np.array(samples, dtype=float)
        if not np.all(np.isfinite(values)):
            raise PhysicsImportError(prim.GetPath(), f"time samples of '{name}' are not all finite numbers")
        seconds = (np.array(codes, dtype=float) - self.start_time_code) / self.time_codes_per_second
        return Track(dof, seconds, values * factor)

    @staticmethod
    def _derive_velocities(found: _ArticulationTracks) -> None:
        sampled = {t.dof for t in found.tracks.get("velocity", [])}
        for t in found.tracks.get("position", []):
            if t.dof not in sampled:
                found.tracks.setdefault("velocity", []).append(Track(t.dof, t.times, t.values, slope=True))

    @property
    def empty(self) -> bool:
        return not self._arts and not self._kinematic and not self._joint_tracks

    @property
    def sampled_dofs(self) -> dict[str, list[str]]:
        """DOF names with a track, by kind (target_position, target_velocity, position, velocity)."""
        out: dict[str, list[str]] = {}
        for found in self._arts:
            names = found.art.dof_names
            for kind, tracks in found.tracks.items():
                out.setdefault(kind, []).extend(names[t.dof] for t in tracks if not t.slope)
        for name, kind, _ in self._joint_tracks:
            out.setdefault(kind, []).append(name)
        return out

    def table(self, times) -> ControlTable:
        """Every track at each of `times` (seconds, each a step's start)."""
        times = np.atleast_1d(np.asarray(times, dtype=float))
        return ControlTable(
            [
                {kind: np.stack([t.at(times) for t in tracks], axis=1) for kind, tracks in found.tracks.items()}
                for found in self._arts
            ],
            self._kinematic_targets(times + self._scene.time_step),
            np.array([track.at(times) for _, _, track in self._joint_tracks]).reshape(-1, len(times)).T,
        )

    def _kinematic_targets(self, times: np.ndarray) -> np.ndarray:
        """(times, bodies, 7): the animated kinematic bodies' world poses (SI) at `times` seconds."""
        out = np.zeros((len(times), len(self._kinematic), 7))
        if not self._kinematic:
            return out
        stage, mpu = self._scene.stage, self._scene.description.settings.meters_per_unit
        prims = [stage.GetPrimAtPath(p) for p in self._kinematic]
        for k, t in enumerate(times):
            cache = UsdGeom.XformCache(Usd.TimeCode(self.start_time_code + t * self.time_codes_per_second))
            for b, prim in enumerate(prims):
                matrix = np.array(cache.GetLocalToWorldTransform(prim))
                defect = placement_defect(matrix)
                if defect is not None:
                    raise PhysicsImportError(prim.GetPath(), f"its animated world transform at {t:g} s {defect}")
                rot, position, _ = decompose(matrix)
                out[k, b, :3] = position * mpu
                out[k, b, 3:] = matrix_to_quat(rot)
        return out

    def apply(self, time: float) -> None:
        """Targets and prescribed joint states at `time` seconds, in every world."""
        self.apply_row(self.table([time]), 0)

    def apply_row(self, table: ControlTable, row: int, states: bool = True) -> None:
        """Row `row` of a `table`; `states=False` sets the drive targets only (and kinematic targets)."""
        for path, target in zip(self._kinematic, table.kinematic[row]):
            self._scene.set_kinematic_target(path, target[:3], target[3:])
        for k, ((name, kind, _), value) in enumerate(zip(self._joint_tracks, table.joints[row])):
            if value != self._joint_targets[k]:  # (setting wakes the joint's bodies)
                self._scene.set_drive_target(name, **{kind.removeprefix("target_"): value})
                self._joint_targets[k] = value
        for found, values in zip(self._arts, table.articulations):
            art = found.art
            for kind, target in (
                ("target_position", art.control.target_position),
                ("target_velocity", art.control.target_velocity),
            ):
                if kind in values:
                    idx, new = found.index[kind], values[kind][row]
                    if not np.array_equal(target[:, idx], np.broadcast_to(new, target[:, idx].shape)):
                        target[:, idx] = new
                        art.wake()
            if states and ("position" in values or "velocity" in values):
                self._prescribe(found, values, row)

    @staticmethod
    def _prescribe(found: _ArticulationTracks, values, row: int) -> None:
        art = found.art
        if found.cache is None:
            found.cache = art.create_cache()
        cache, flags = found.cache, CacheFlag.POSITION | CacheFlag.VELOCITY
        for world in range(art.worlds):
            art.copy_internal_state_to_cache(cache, flags, world)
            if "position" in values:
                cache.joint_position[found.index["position"]] = values["position"][row]
            if "velocity" in values:
                cache.joint_velocity[found.index["velocity"]] = values["velocity"][row]
            art.apply_cache(cache, flags, world)
