"""From a stage to an animated stage: the run loop, the `Recorder`, atomic output, progress and summary.

`simulate` loads (or takes) a scene, steps it at the stage's rate (or `rate`), applies the stage's
time-sampled controls (usdart.controls) at every step, records a frame at every output frame time
(`fps`: the stage's timeCodesPerSecond when authored, else 60), and writes a layer of `over`s that
sublayers the input by relative path (or, with `flatten`, one self-contained stage). Frames whose time
falls between steps take the state of the nearest step.

Output time: frame i is time code `start + i` of a layer whose timeCodesPerSecond is the frame rate;
`start` is the input's startTimeCode converted to the output's time codes (0 when unauthored). USD scales
the input's own time samples to the output's rate when the two differ, so keyframes stay in place.

The output is written to a temporary file in the target folder and renamed over the target: an error or
Ctrl-C at any point leaves no partial file. No file the input composes (root layer, sublayers, references,
payloads) is ever written, and temporary files that killed runs left behind are removed by the next write
into their folder.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time as _time
from dataclasses import dataclass

import numpy as np
from pxr import Sdf, Usd

from ..errors import UsdartError
from ..scene import Scene, load
from ..usd.controls import StageControls, stage_clock
from ..usd.importer.joints import usd_to_internal
from ..usd.importer.stage_settings import stage_file
from ..usd.writeback import BodyFrames, DofSeries, new_layer, write
from .output_files import check_output, export_atomic

DEFAULT_FPS = 60.0
DEFAULT_DURATION = 2.0  # seconds, when neither the caller nor the stage's time range says
# a run whose length (or frame count) comes from the stage's metadata alone is refused beyond these: a
# stage saying endTimeCode = 1e12 is a mistake, not a request for a week of computing
MAX_STEPS = 10_000_000
MAX_FRAMES = 1_000_000


def stage_frame_rate(stage: Usd.Stage) -> float | None:
    """The stage's authored timeCodesPerSecond, None when unauthored.

    USD does not replace an authored 0 (or a negative or non-finite value) by its default of 24: it
    divides by it, and a stage sublayering such a layer (as our output does) hangs USD's time-sample
    queries. So such a value is refused, naming the file."""
    layer = stage.GetRootLayer()
    if not layer.HasTimeCodesPerSecond():
        return None
    value = float(layer.timeCodesPerSecond)
    if not (math.isfinite(value) and value > 0):
        raise UsdartError(
            f"{stage_file(stage)}: timeCodesPerSecond = {value:g} in the stage metadata; it must be a positive "
            "number (USD divides time codes by it)"
        )
    return value


class Recorder:
    """Records the state of a `Scene` as frames and writes them as USD time samples.

    For users who drive the loop themselves::

        rec = usdart.Recorder(scene)          # frames at the stage's timeCodesPerSecond, else 60 fps
        for _ in range(120):
            scene.step(2)
            rec.record()                      # a frame at scene.time
        rec.save("out.usda")                  # overs on the input, sublayered by relative path

    `articulations` limits the written articulations (paths accepted by `scene.articulation`); free
    bodies (and kinematic bodies that moved) are written unless `free_bodies=False`. `world` picks which of
    the scene's worlds is recorded.
    """

    def __init__(
        self,
        scene: Scene,
        fps: float | None = None,
        articulations=None,
        free_bodies: bool = True,
        world: int = 0,
        stage: Usd.Stage | None = None,
    ):
        self.scene = scene
        self.stage = stage or scene.stage  # what the frames are written against (a batch: that world's stage)
        stage_rate = stage_frame_rate(self.stage)  # checked even with `fps`: the output sublayers the input
        self.fps = float(fps) if fps is not None else stage_rate or DEFAULT_FPS
        if not (math.isfinite(self.fps) and self.fps > 0):
            raise UsdartError(f"frame rate must be a positive number of frames per second, got {fps}")
        if not 0 <= world < scene.worlds:
            raise UsdartError(f"world {world} does not exist (the scene has {scene.worlds})")
        self.world = int(world)
        start, tcps = stage_clock(self.stage)
        self.start_time_code = start / tcps * self.fps
        if articulations:
            chosen = [scene.articulation(p) for p in articulations]
            self.articulations = [a for a in scene.articulations if any(a is c for c in chosen)]
        else:
            self.articulations = list(scene.articulations)
        # free bodies move as one-link articulations inside the scene, kinematic ones as targets take them
        # (written where they moved)
        self._free = {**getattr(scene, "_free", {}), **getattr(scene, "_kinematic", {})} if free_bodies else {}
        self._time_codes: list[float] = []
        self._poses: list[list[tuple[np.ndarray, np.ndarray]]] = []  # per frame, per member: (pos, rot)
        self._joints: list[list[tuple[np.ndarray, np.ndarray]]] = []  # per frame, per articulation: (q, qd)

    @property
    def frames(self) -> int:
        return len(self._time_codes)

    @property
    def time_codes(self) -> list[float]:
        return list(self._time_codes)

    def record(self, time: float | None = None) -> float:
        """Record the scene's current state as the frame at `time` seconds (default `scene.time`);
        returns its time code. Frames must come in increasing time."""
        t = self.scene.time if time is None else float(time)
        code = round(self.start_time_code + t * self.fps, 6)
        if self._time_codes and code <= self._time_codes[-1]:
            raise UsdartError(
                f"frame at time code {code} is not after the last recorded one "
                f"({self._time_codes[-1]}); record frames in increasing time"
            )
        poses, joints = self._frame()
        self._poses.append(poses)
        self._joints.append(joints)
        self._time_codes.append(code)
        return code

    def _frame(self) -> tuple[list, list]:
        """Copies of the recorded world's state: per member (link positions, rotations), per articulation
        (q, qd)."""
        w = self.world
        members = [*self.articulations, *self._free.values()]
        poses = [(m.state.link_pos[w].copy(), m.state.link_rot[w].copy()) for m in members]
        return poses, [(a.state.q[w].copy(), a.state.qd[w].copy()) for a in self.articulations]

    def frame_bytes(self) -> int:
        """Memory one recorded frame holds until `save` (arrays, their Python objects, the list slots and
        the time code), measured on a frame of the current state, so a run can be refused before it starts.
        Writing them takes about three times as much again (Sdf's time samples and the arrays that build
        them, measured on the bundled arm: 2.1 kB a frame recorded, 8.7 kB at the peak of `save`), which
        this does not count."""
        poses, joints = self._frame()
        arrays = [a for pair in poses + joints for a in pair]
        objects = [poses, joints, *poses, *joints, *arrays, 0.5]
        return sum(map(sys.getsizeof, objects)) + 3 * 8

    def _bodies(self) -> list[BodyFrames]:
        out = []
        members = [*self.articulations, *self._free.values()]
        for m, member in enumerate(members):
            pos = np.array([frame[m][0] for frame in self._poses])
            rot = np.array([frame[m][1] for frame in self._poses])
            if member.model.kinematic and (pos == pos[0]).all() and (rot == rot[0]).all():
                continue  # a kinematic body that stayed where the stage puts it
            for i, (path, body) in enumerate(zip(member.desc.links, member.desc.bodies)):
                if body is not None:  # None: a static anchor link, not a prim of its own
                    out.append(BodyFrames(path, pos[:, i], rot[:, i]))
        return out

    def _dofs(self) -> list[DofSeries]:
        settings = self.scene.description.settings
        out = []
        for a, art in enumerate(self.articulations):
            q = np.array([frame[a][0] for frame in self._joints])
            qd = np.array([frame[a][1] for frame in self._joints])
            k = 0
            for joint in art.desc.joints:
                for dof in joint.dofs if joint is not None else []:
                    factor = usd_to_internal(joint, dof, settings)
                    out.append(DofSeries(joint.path, dof.usd_instance, q[:, k] / factor, qd[:, k] / factor))
                    k += 1
        return out

    def layer(self, sublayer: str | None = None) -> Sdf.Layer:
        """The recorded frames as an anonymous layer of overs (sublayering `sublayer` when given)."""
        if not self._time_codes:
            raise UsdartError("no frames recorded")
        layer = new_layer(self.stage, self.fps, self._time_codes[0], self._time_codes[-1], sublayer)
        write(layer, self.stage, self._time_codes, self._bodies(), self._dofs())
        return layer

    def save(self, path, flatten: bool = False) -> str:
        """Write the frames to `path` (format from its extension): overs that sublayer the input file by
        relative path, or with `flatten` one self-contained stage. Atomic; returns the absolute path."""
        target = check_output(path, self.stage)
        source = self.stage.GetRootLayer()
        if flatten:
            overs = self.layer(source.identifier)
            layer = Usd.Stage.Open(overs).Flatten()
            for key in ("startTimeCode", "endTimeCode", "timeCodesPerSecond", "framesPerSecond"):
                layer.pseudoRoot.SetInfo(key, overs.pseudoRoot.GetInfo(key))
        else:
            if source.anonymous or not source.realPath:
                raise UsdartError(
                    "the stage was made in memory and has no file to sublayer: save it first, "
                    "or write a flattened output"
                )
            if source.dirty:
                raise UsdartError(
                    f"{source.realPath}: the stage has unsaved changes, which a sublayered output "
                    "would not see: save it first, or write a flattened output"
                )
            layer = self.layer(_relative(source.realPath, os.path.dirname(target)))
        export_atomic(layer, target)
        return target


def _relative(path: str, folder: str) -> str:
    try:
        return os.path.relpath(path, folder).replace(os.sep, "/")
    except ValueError:  # another drive (Windows)
        return path.replace(os.sep, "/")


@dataclass
class SimulationResult:
    """What `simulate` did; `summary()` is the CLI's last line."""

    scene: Scene
    recorder: Recorder
    output: str | None
    steps: int
    rate: float
    frames: int
    fps: float
    simulated_seconds: float
    wall_seconds: float

    @property
    def real_time_factor(self) -> float:
        return self.simulated_seconds / self.wall_seconds if self.wall_seconds > 0 else math.inf

    def summary(self) -> str:
        where = f" -> {self.output}" if self.output else ""
        return (
            f"simulated {self.simulated_seconds:.4g} s ({self.steps} steps at {self.rate:.6g} Hz, {self.frames} "
            f"frames at {self.fps:.6g} fps) in {self.wall_seconds:.3g} s wall time, "
            f"{self.real_time_factor:.3g}x real time{where}{self._broken()}"
        )

    def _broken(self) -> str:
        """The joints that broke during the run (physics:breakForce / breakTorque), said, as PhysX reports them."""
        broken = self.scene.broken_joints()
        return f"; joints broken: {', '.join(broken)}" if broken else ""


def frame_count(steps: int, dt: float, fps: float) -> int:
    """Frames in a run of `steps` steps: one at 0 s and one every 1 / fps seconds up to the end."""
    return int(math.floor(steps * dt * fps + 1e-9)) + 1


def frame_step(frame: int, steps: int, dt: float, fps: float) -> int:
    """The step whose state frame `frame` shows: frame i is at i / fps seconds, taken at the nearest step."""
    return min(steps, int(math.floor(frame / fps / dt + 0.5)))


def step_count(scene: Scene, duration, steps) -> int:
    if duration is not None and steps is not None:
        raise UsdartError("give a duration or a number of steps, not both")
    if steps is not None:
        if int(steps) != steps or steps < 1:
            raise UsdartError(f"the number of steps must be a positive integer, got {steps}")
        return int(steps)
    if duration is None:
        start, tcps = stage_clock(scene.stage)
        layer = scene.stage.GetRootLayer()
        end = scene.stage.GetEndTimeCode()
        authored = layer.HasEndTimeCode() and end > start
        duration = (end - start) / tcps if authored else DEFAULT_DURATION
        if not math.isfinite(duration):
            raise UsdartError(
                f"{stage_file(scene.stage)}: the time range {start:g}..{end:g} is not a number of seconds; "
                "give --duration or --steps"
            )
    if not (math.isfinite(duration) and duration > 0):
        raise UsdartError(f"duration must be a positive number of seconds, got {duration}")
    return max(1, int(math.floor(duration / scene.time_step + 0.5)))


def check_run_size(scene: Scene, recorder: Recorder, total: int, length_given: bool, fps_given: bool) -> None:
    """Refuse before the first step a run that cannot end well: more than MAX_STEPS steps when the length
    came from the stage (its time range, else 2 s, at its rate; not `duration`/`steps`), more than
    MAX_FRAMES frames when neither the length nor `fps` was given, and always, recorded frames that would
    not fit in the memory available."""
    name, dt, fps = stage_file(scene.stage), scene.time_step, recorder.fps
    seconds, frames = total * dt, frame_count(total, dt, fps)
    if not length_given and total > MAX_STEPS:
        raise UsdartError(
            f"{name}: the stage's metadata asks for {total:,} steps ({seconds:.6g} s at {1 / dt:.6g} Hz), "
            f"more than {MAX_STEPS:,}; give --duration or --steps"
        )
    if not (length_given or fps_given) and frames > MAX_FRAMES:
        raise UsdartError(
            f"{name}: the stage's metadata asks for {frames:,} frames ({seconds:.6g} s at {fps:.6g} fps), "
            f"more than {MAX_FRAMES:,}; give --fps, --duration or --steps"
        )
    need, free = frames * recorder.frame_bytes(), available_memory()
    if free is not None and need > free:
        raise UsdartError(
            f"{name}: recording {frames:,} frames ({seconds:.6g} s at {fps:.6g} fps) needs about "
            f"{need / 1e9:.3g} GB of memory and {free / 1e9:.3g} GB is available; give a lower --fps "
            "(or a shorter --duration or fewer --steps)"
        )


def available_memory() -> int | None:
    """Bytes of memory this process can still take: Linux's MemAvailable (free plus reclaimable cache),
    else the free physical pages; None where neither is known."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    with contextlib.suppress(AttributeError, OSError, ValueError):
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return None


def simulate(
    stage_or_path,
    duration: float | None = None,
    output=None,
    *,
    steps: int | None = None,
    rate: float | None = None,
    fps: float | None = None,
    flatten: bool = False,
    articulations=None,
    progress: bool = False,
    integrator: str = "euler",
) -> SimulationResult:
    """Simulate a stage (file path, open `Usd.Stage`, or `Scene`) and write the motion as time samples.

    `duration` seconds or `steps` steps (default: the stage's startTimeCode..endTimeCode, else 2 s) at
    `rate` Hz (default: the stage's physxScene/newton timeStepsPerSecond, else 60); frames at `fps`
    (default: the stage's timeCodesPerSecond, else 60). `output`: file to write (None: nothing is
    written; the frames stay in `result.recorder`). `articulations`: write only these (the whole scene is
    still simulated); `progress`: a progress line on a terminal for runs longer than a second.
    Refused before anything runs: an `output` that is one of the input's files (`check_output`), a stage
    whose timeCodesPerSecond is not positive, and runs too long or too big (`check_run_size`).
    """
    began = _time.perf_counter()
    if output is not None:
        check_output(output, stage_or_path if not isinstance(stage_or_path, Scene) else stage_or_path.stage)
    scene = stage_or_path if isinstance(stage_or_path, Scene) else load(stage_or_path, integrator=integrator)
    require_something_to_simulate(scene)
    if rate is not None:
        if not (math.isfinite(rate) and rate > 0):
            raise UsdartError(f"rate must be a positive number of steps per second, got {rate}")
        scene.time_step = 1.0 / rate
    recorder = Recorder(scene, fps=fps, articulations=articulations)
    total = step_count(scene, duration, steps)
    given = duration is not None or steps is not None
    check_run_size(scene, recorder, total, length_given=given, fps_given=fps is not None)
    controls = StageControls(scene)
    bar = _Progress(total, enabled=progress)
    try:
        run_frames(scene, controls, [recorder], total, bar)
    finally:
        bar.close()
    written = recorder.save(output, flatten) if output is not None else None
    return SimulationResult(
        scene,
        recorder,
        written,
        total,
        1.0 / scene.time_step,
        recorder.frames,
        recorder.fps,
        total * scene.time_step,
        _time.perf_counter() - began,
    )


def require_something_to_simulate(scene: Scene) -> None:
    if not scene.articulations and not scene.free_bodies:
        raise UsdartError(f"{stage_file(scene.stage)}: nothing to simulate (no articulation and no dynamic rigid body)")


def run_frames(scene: Scene, controls: StageControls, recorders: list[Recorder], total: int, bar, on_step=None) -> None:
    """Step `total` steps, the recorders (of one frame rate) taking a frame at every frame time; `on_step`
    (optional) is called after every step (the steps are then taken one call at a time: the same motion)."""
    dt, fps, done = scene.time_step, recorders[0].fps, 0
    for frame in range(frame_count(total, dt, fps)):
        _advance(scene, controls, done, frame_step(frame, total, dt, fps), on_step)
        done = frame_step(frame, total, dt, fps)
        if not controls.empty:
            controls.apply(done * dt)  # targets, and prescribed joint states exactly at the frame
        for recorder in recorders:
            recorder.record(frame / fps)
        bar.update(done)
    _advance(scene, controls, done, total, on_step)
    bar.update(total)


def _advance(scene: Scene, controls: StageControls, done: int, until: int, on_step=None) -> None:
    """Step from step `done` to step `until`; with sampled controls one step at a time, each with the
    controls at its start time."""
    if until <= done:
        return
    if controls.empty and on_step is None:
        scene.step(until - done)
        return
    table = None if controls.empty else controls.table(scene.time_step * np.arange(done, until))
    for row in range(until - done):
        if table is not None:
            controls.apply_row(table, row)
        scene.step(1)
        if on_step is not None:
            on_step()


class _Progress:
    """A one-line progress bar on stderr, only on a terminal and only once a run has taken a second.

    The first steps of a process compile the solver (numba; minutes on a first run, cached afterwards):
    if the first step has not come back after a second, a line says so, and the estimate of the time left
    starts counting after it."""

    def __init__(self, total: int, enabled: bool, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.total, self.began, self.last, self.shown = max(total, 1), _time.perf_counter(), 0.0, False
        self.origin = None  # (time, steps) of the first update after a step: the rate is measured from there
        self._notice = threading.Timer(1.0, self._compiling) if self.enabled else None
        if self._notice is not None:
            self._notice.daemon = True
            self._notice.start()

    def _compiling(self) -> None:
        if self.origin is None:
            self.shown = True
            self.stream.write("\rpreparing the solver (numba compiles it on first use; later runs reuse the cache)...")
            self.stream.flush()

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = _time.perf_counter()
        if done > 0 and self.origin is None:
            self._notice.cancel()
            self.origin = (now, done)
        if now - self.began < 1.0 or now - self.last < 0.1 or self.origin is None:
            return
        self.last, self.shown = now, True
        frac = min(done / self.total, 1.0)
        rate = (done - self.origin[1]) / (now - self.origin[0]) if now > self.origin[0] else 0.0
        eta = f"{(self.total - done) / rate:.0f} s" if rate > 0 else "..."
        bar = "#" * int(30 * frac)
        self.stream.write(f"\r\033[Ksimulating [{bar:<30}] {100 * frac:5.1f}%  step {done}/{self.total}  eta {eta}")
        self.stream.flush()

    def close(self) -> None:
        if self._notice is not None:
            self._notice.cancel()
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
