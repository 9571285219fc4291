"""Run a USD stage in real PhysX (NVIDIA's Kit-less `ovphysx` wheel, CPU) for step-for-step comparisons.

`run_physx(stage_path, dt, steps, solver="PGS")` loads the stage, steps it `steps` times by `dt` and returns
per-step joint positions, joint velocities and link poses of one articulation, converted to usdart's
conventions (checked against usdart in tests/test_physx.py):

- Units: the tensor bindings give joint positions in radians / stage units and velocities in rad/s / stage
  units per second (measured: a slider at 1 m/s on a centimetre stage reads 100); their newer session-read
  API would give degrees for rotational axes (not used here). No conversion: compare metre stages.
- Sign: PhysX reports a DOF in the USD joint's body0 -> body1 sense; usdart's internal joint state follows
  the tree (parent -> child). A joint authored with body1 as the parent link (or body1 = world) is negated.
  Measured on a pendulum with its hinge authored child -> parent: PhysX -0.00247727 rad after one 1/60 s
  step, usdart +0.00247727 rad.
- Order: PhysX numbers links and DOFs breadth-first from the root, children in the path order of their
  joints, as usdart does; the binding names them by prim leaf name only, so names are mapped back to prim
  paths here (and the tests check them against `art.dof_names` and `art.links`).
- Poses: PhysX gives [x, y, z, qx, qy, qz, qw] of each link's actor frame (the body prim's frame); they are
  returned as usdart's `link_transforms()` rows [x, y, z, qw, qx, qy, qz].
- Revolute joints without limits: PhysX keeps their angles in [-2 pi, 2 pi] by jumps of 4 pi, as usdart does;
  the tests still compare angles modulo 2 pi where a float32 angle could land on the other side of a jump.
- Time: ovphysx steps by the `dt` passed to `step`, whatever `physxScene:timeStepsPerSecond` says.
  No warm-up: creating a tensor binding before the first step makes ovphysx "auto-warm-up", a step of
  about 1e-9 s before t = 0 (measured: the pendulum then starts at 8.9e-9 rad/s), as `warmup()` does. The
  runner steps once before it creates its bindings, and then no warm-up runs.
- The bindings are float32: expect ~1e-7 relative rounding on top of any real difference.

Process state: schema registration and CPU mode are process-global in ovphysx, and are done once here.
Several stages run one after another, or with two `PhysX` instances alive at once, in one process (usd-core's
`pxr` loaded too) give bit-identical results to fresh processes (measured on a pendulum and
arm_with_gripper.usda), so no subprocess is used.

This module imports ovphysx lazily: it imports without it; tests call `pytest.importorskip("ovphysx")`.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from pxr import Sdf, Usd, UsdPhysics

SOLVERS = ("PGS", "TGS")
_EXTRA_KINDS = {  # run_physx's optional reads
    "projected": "ARTICULATION_DOF_PROJECTED_JOINT_FORCE",
    "incoming": "ARTICULATION_LINK_INCOMING_JOINT_FORCE",
    "acceleration": "ARTICULATION_LINK_ACCELERATION",
}
_ready = False


def rotation_angle(a, b):
    """Angle (rad) between the rotations of [.., qw, qx, qy, qz] rows: 2 asin |vector part of conj(a) b|,
    exact near zero even for PhysX's float32 quaternions (1 - |a.b| is not)."""
    wa, va, wb, vb = a[..., 3:4], a[..., 4:], b[..., 3:4], b[..., 4:]
    vector = wa * vb - wb * va - np.cross(va, vb)
    norms = np.linalg.norm(a[..., 3:], axis=-1) * np.linalg.norm(b[..., 3:], axis=-1)
    return 2 * np.arcsin(np.minimum(np.linalg.norm(vector, axis=-1) / norms, 1.0))


def force_solver(stage_path, solver: str, out_path) -> Path:
    """Write a flattened copy of the stage with `physxScene:solverType = solver` on every PhysicsScene.

    Flattened so that relative asset paths and the stage metadata (metersPerUnit, upAxis, ...) survive the
    move to another folder."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, not {solver!r}")
    stage = Usd.Stage.Open(str(stage_path))
    scenes = [p.GetPath() for p in stage.Traverse() if p.IsA(UsdPhysics.Scene)]
    if not scenes:
        raise ValueError(f"{stage_path}: no PhysicsScene to author physxScene:solverType on")
    layer = stage.Flatten()
    for path in scenes:
        spec = layer.GetPrimAtPath(path)
        apis = spec.GetInfo("apiSchemas") if spec.HasInfo("apiSchemas") else Sdf.TokenListOp()
        if "PhysxSceneAPI" not in apis.GetAddedOrExplicitItems():
            apis.prependedItems = [*apis.prependedItems, "PhysxSceneAPI"]
            spec.SetInfo("apiSchemas", apis)
        attr = spec.attributes.get("physxScene:solverType") or Sdf.AttributeSpec(
            spec, "physxScene:solverType", Sdf.ValueTypeNames.Token, Sdf.VariabilityUniform
        )
        attr.default = solver
    layer.Export(str(out_path))
    return Path(out_path)


def _setup():
    """Process-global ovphysx setup: CPU only, PhysX schemas registered before the first population."""
    global _ready
    import ovphysx  # (ImportError here is the caller's cue to skip)
    import ovstage
    from ovphysx import PhysX
    from ovphysx.samples.python_samples.schema_support import physx_schema_paths

    if not _ready:
        PhysX.set_cpu_mode(True)
        # the Newton schema too (ovphysx reads NewtonJointAPI & co.; usdart imports newton_usd_schemas)
        ovstage.population.register_usd_schemas(
            [*(str(p) for p in physx_schema_paths()), str(ovphysx.newton_schema_root())]
        )
        _ready = True


def _prims(stage_path, articulation):
    """The open stage (kept alive: prims die with it), the articulation root path, and leaf name -> prims of
    the stage's joints and rigid bodies."""
    stage = Usd.Stage.Open(str(stage_path))
    prims = list(stage.Traverse())
    roots = [str(p.GetPath()) for p in prims if p.HasAPI(UsdPhysics.ArticulationRootAPI)]
    if articulation is None:
        if len(roots) != 1:
            raise ValueError(f"{stage_path}: {len(roots)} articulation roots {roots}; pass articulation=")
        articulation = roots[0]
    by_name: dict[str, list] = {}
    for p in prims:
        if p.IsA(UsdPhysics.Joint) or p.HasAPI(UsdPhysics.RigidBodyAPI):
            by_name.setdefault(p.GetName(), []).append(p)
    return stage, articulation, by_name


def _unique(by_name, name):
    found = by_name.get(name, [])
    if len(found) != 1:
        raise ValueError(f"PhysX names {name!r}, which matches {len(found)} prims; give prims unique names")
    return found[0]


def _dof_signs(joints, links):
    """+1 where the joint's body0 is the parent link (or the world), -1 where body1 is (PhysX -> usdart)."""
    index = {str(path): i for i, path in enumerate(links)}

    def link_of(rel):  # the link a body relationship names (or an ancestor of its target); None = world
        for target in rel.GetTargets():
            for path in target.GetPrefixes()[::-1]:
                if str(path) in index:
                    return index[str(path)]
        return None

    signs = []
    for prim in joints:
        j = UsdPhysics.Joint(prim)
        b0, b1 = link_of(j.GetBody0Rel()), link_of(j.GetBody1Rel())
        # links are breadth-first, so the parent has the smaller index; the world is everyone's parent
        body1_is_parent = b0 is not None and (b1 is None or b1 < b0)
        signs.append(-1.0 if body1_is_parent else 1.0)
    return np.array(signs)


@contextlib.contextmanager
def _attached(stage_path, dt: float, solver: str | None):
    """ovphysx (CPU) with the stage attached (`solver` authored on a flattened temporary copy unless None)
    and stepped once before any tensor binding exists (see "No warm-up" above); yields (physx, the stage
    path it runs). Callers destroy their bindings inside the block."""
    _setup()
    import ovstage
    from ovphysx import PhysX

    with tempfile.TemporaryDirectory(prefix="physx_runner_") as tmp:
        if solver is not None:
            stage_path = force_solver(stage_path, solver, Path(tmp) / "stage.usda")
        physx, stage = PhysX(), ovstage.Stage("physx_runner")
        try:
            ovstage.population.open_usd(stage, str(stage_path), ordinal=1, domains=ovstage.PopulationDomain.ALL)
            stage.advance_write_floor(ordinal=1).wait()
            physx.wait_task(physx.attach_ovstage(stage, read_ordinal=1))
            physx.step_sync(dt)
            yield physx, Path(stage_path)
        finally:
            if physx.is_stage_attached(stage):
                physx.wait_task(physx.detach_ovstage())
            stage.destroy()
            physx.destroy()


def _bindings(physx, pattern: str, kinds) -> list:
    """Tensor bindings of `pattern` (deprecated in ovphysx 0.6, kept through 0.7)."""
    from ovphysx.types import TensorType

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [
            physx.create_tensor_binding(pattern=pattern, tensor_type=TensorType[kind], raise_if_empty=True)
            for kind in kinds
        ]


def physx_seconds_per_step(stage_path, dt: float, steps: int, solver: str | None = None, repeat: int = 3) -> float:
    """Best of `repeat` timings of `steps` ovphysx steps (one `step_sync` call each) of the stage, per step."""
    best = float("inf")
    with _attached(stage_path, dt, solver) as (physx, _):
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(steps):
                physx.step_sync(dt)
            best = min(best, time.perf_counter() - start)
    return best / steps


def run_physx_bodies(
    stage_path, dt: float, steps: int, bodies: list[str], solver: str | None = None, targets: dict | None = None
) -> dict:
    """Step `stage_path` in ovphysx like run_physx; the poses of rigid bodies outside articulations (prim
    paths `bodies`) after every step: {"time": (S,), "pose": (S, B, 7) as [x, y, z, qw, qx, qy, qz]}.

    targets: kinematic body path -> (S, 7) world poses [x, y, z, qw, qx, qy, qz]: row k (k >= 1) is written
    as the body's kinematic target (ovphysx's session write of kinematicTargetPosition / Orientation) before
    the step that ends at row k. Row 0 is not written: the runner's first step runs before any binding or
    session (see `_attached`), and the body holds still in it."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, not {steps}")
    P = np.zeros((steps, len(bodies), 7))
    with _attached(stage_path, dt, solver) as (physx, _):
        bindings = [b for path in bodies for b in _bindings(physx, path, ["RIGID_BODY_POSE"])]
        try:
            buffers = [np.zeros(b.shape, np.float32) for b in bindings]
            for k in range(steps):
                if k:
                    for path, poses in (targets or {}).items():
                        _write_kinematic_target(physx, path, poses[k])
                    physx.step_sync(dt)
                for j, (b, buf) in enumerate(zip(bindings, buffers)):
                    b.read(buf)
                    P[k, j, :3], P[k, j, 3], P[k, j, 4:] = buf[0, :3], buf[0, 6], buf[0, 3:6]
        finally:
            for b in bindings:
                b.destroy()
    return {"time": dt * np.arange(1, steps + 1), "pose": P}


def run_usdart_bodies(
    stage_path, dt: float, steps: int, bodies: list[str], solver: str | None = None, targets: dict | None = None
) -> np.ndarray:
    """usdart stepped as run_physx_bodies steps PhysX (solver set on the scene unless None; the first step
    without a target, then row k of each kinematic body's targets before step k): the bodies' poses after
    every step, (S, B, 7) as [x, y, z, qw, qx, qy, qz]."""
    import usdart

    scene = usdart.load(str(stage_path))
    if solver is not None:
        scene.solver = solver
    scene.time_step = dt
    out = np.zeros((steps, len(bodies), 7))
    for k in range(steps):
        if k:
            for name, poses in (targets or {}).items():
                scene.set_kinematic_target(name, poses[k, :3], poses[k, 3:])
        scene.step()
        out[k] = [scene.body_transform(b) for b in bodies]
    return out


def _write_kinematic_target(physx, path: str, pose) -> None:
    """One kinematic body's target for the next step, [x, y, z, qw, qx, qy, qz] (ovphysx wants xyzw)."""
    from ovphysx.types import SimObjectType

    values = [pose[:3], [*pose[4:7], pose[3]]]  # one group per attribute, in this order
    names = ["kinematicTargetPosition", "kinematicTargetOrientation"]
    with physx.write_sync(SimObjectType.RIGID_BODY, names, pattern=path) as session:
        groups = list(session.groups)
        if [(g.prim_count, g.tensors[0].numpy().size) for g in groups] != [(1, 3), (1, 4)]:
            raise ValueError(f"{path}: expected one kinematic rigid body in PhysX")
        for group, value in zip(groups, values):
            group.tensors[0].numpy()[:] = np.asarray(value, np.float32)
            session.commit(group).wait()
        del groups, group  # (ovphysx refuses to close while a group's arrays are alive)


def run_physx(
    stage_path,
    dt: float,
    steps: int,
    solver: str | None = "PGS",
    articulation: str | None = None,
    forces=False,
    incoming=False,
    accelerations=False,
) -> dict:
    """Step `stage_path` in ovphysx (CPU) `steps` times by `dt`; one articulation's state after every step.

    solver: "PGS" or "TGS" authors `physxScene:solverType` on a flattened temporary copy; None keeps the
    stage's own (PhysX's schema default is TGS). articulation: the prim carrying ArticulationRootAPI, if the
    stage has several.

    Returns a dict of numpy float64 arrays (row k = the state after k + 1 steps, at time (k + 1) dt) and
    names, in usdart's conventions (see the module docstring):
      time (S,), joint_position (S, D), joint_velocity (S, D), link_pose (S, L, 7) as [x, y, z, qw, qx, qy, qz],
      dof_names (joint prim path per DOF), links (link prim paths),
      dof_signs (D,) (the factor applied to PhysX's values), solver (as run);
      forces=True adds joint_projected_force (S, D): PhysX's projected joint force per DOF, N m or N, in the
      DOF's sense (ovphysx recomputes it at each read as inverse dynamics of the step just taken);
      incoming=True adds link_incoming_joint_force (S, L, 6): PhysX's [force; torque] on each link from its
      inbound joint, in the child joint frame at the step end, as ovphysx gives it (root row 0; the sense of
      PhysX's tree, parent to child: compare joints authored parent -> child);
      accelerations=True adds link_acceleration (S, L, 6): each link's [linear; angular] acceleration over
      the step, world axes, at its centre of mass.
    """
    if steps < 1:
        raise ValueError(f"steps must be at least 1, not {steps}")
    with _attached(stage_path, dt, solver) as (physx, path):
        usd, root, by_name = _prims(path, articulation)  # `usd` keeps the prims in by_name alive
        kinds = ("ARTICULATION_DOF_POSITION", "ARTICULATION_DOF_VELOCITY", "ARTICULATION_LINK_POSE")
        wanted = {"projected": forces, "incoming": incoming, "acceleration": accelerations}
        extra = [k for k, on in wanted.items() if on]
        kinds += tuple(_EXTRA_KINDS[k] for k in extra)
        bindings = _bindings(physx, root, kinds)
        try:
            q_b, qd_b, pose_b = bindings[:3]
            if q_b.count != 1:
                raise ValueError(f"{root}: matches {q_b.count} articulations in PhysX, expected 1")
            links = [str(_unique(by_name, n).GetPath()) for n in q_b.body_names]
            joints = [_unique(by_name, n) for n in q_b.dof_names]
            signs = _dof_signs(joints, links)
            q, qd, pose, *buffers = (np.zeros(b.shape, np.float32) for b in bindings)
            Q, QD, P = np.zeros((steps, len(signs))), np.zeros((steps, len(signs))), np.zeros((steps, len(links), 7))
            read = {k: np.zeros((steps, len(signs)) if k == "projected" else (steps, len(links), 6)) for k in extra}
            for k in range(steps):
                if k:
                    physx.step_sync(dt)
                q_b.read(q)
                qd_b.read(qd)
                pose_b.read(pose)
                Q[k], QD[k] = signs * q[0], signs * qd[0]
                for name, binding, buffer in zip(extra, bindings[3:], buffers):
                    binding.read(buffer)
                    read[name][k] = signs * buffer[0] if name == "projected" else buffer[0]
                P[k, :, :3], P[k, :, 3], P[k, :, 4:] = pose[0, :, :3], pose[0, :, 6], pose[0, :, 3:6]
        finally:
            for b in bindings:
                b.destroy()
    return {
        "time": dt * np.arange(1, steps + 1),
        "joint_position": Q,
        "joint_velocity": QD,
        "link_pose": P,
        "dof_names": [str(j.GetPath()) for j in joints],
        "links": links,
        "dof_signs": signs,
        "solver": solver,
        **({"joint_projected_force": read["projected"]} if forces else {}),
        **({"link_incoming_joint_force": read["incoming"]} if incoming else {}),
        **({"link_acceleration": read["acceleration"]} if accelerations else {}),
    }
