"""Timings of usdart next to MuJoCo and Pinocchio in the same run, reported as ratios (the machines are noisy).

    python scripts/bench.py [--worlds 4096] [--ants 1024] [--quick]

Every ratio is usdart's time over the other's for the same work: below 1 means usdart is faster.

Start-up (each in a fresh process with an empty numba cache, `NUMBA_CACHE_DIR` pointing at a new folder):
- the first `usdart simulate` of the bundled arm sample (2 s of motion, write-back included), all
  compilation included; then a first 64-world step of the same stage with that cache (the parallel step
  compiles), and from an empty cache;
- unless --quick: the README's quick start in a fresh venv (`pip install .`, which compiles the kernels
  into the package, then the first simulate), and the cold test suite (`pytest -q -n auto`, one worker
  per core).

Stepping (Panda, limits on, no contacts, dt 1 ms, semi-implicit Euler): usdart's step next to mj_step on
the MuJoCo twin of the same imported model (tests/mujoco_twin.py, joint limits on), per step inside a
compiled loop (usdart scene.step(n), MuJoCo mj_step(nstep=n)) and per Python call; and N Pandas from
random states on every core: usdart's time per env-step next to MuJoCo's threaded rollout
(mujoco.rollout, one MjData per thread); the env-steps-per-second ratio is the inverse.

Against PhysX (ovphysx, CPU; the Panda as PhysX reads it, self-collisions off, dt 1/240 s, 32 position
iterations): usdart's compiled loop and one Python call per step next to one ovphysx `step_sync` per step,
with PhysX's TGS (its default) and PGS solvers.

Contacts (the first 2 s after the drop, every simulator from the same start): the converted ant on a plane,
500 boxes dropped into a static bin, hulls and cylinders dropped into it, the gripper sample, next to
ovphysx's step and, for the ant and the bin, MuJoCo's step of its own model of them (its ant from the MJCF
the corpus converted, which has no self-collisions; the bin built alike): the same scene asked of each, not
the same contact model. Batched: N ants as usdart worlds on every core, as MuJoCo's threaded rollout, and as
one ovphysx scene holding N ants 3 m apart; time per env-step.

Dynamics (Panda, fixed base, 9 DOFs): RNEA, CRBA and ABA per Python call (usdart's kernel entry on the
articulation cache's scratch scene; Pinocchio's call), inside a compiled loop, and for a batch of N
states (usdart: prange over the worlds; Pinocchio: a Python loop over its calls).

Scale: one step of a 2000-link star (one root, 1999 revolute children), and of a 200-link one (the time
should grow linearly with the links).

Sweeps (the arm sample with joint1 driven to -60 degrees, 2 s per run): runs per second of a 256-run
`usdart sweep` (a 16 x 16 stiffness x damping grid of joint1) with 1 and 2 local workers, cluster start-up
included, next to the same runs as separate `usdart simulate` processes (8 of them timed; the rate per run).

Write-back (a 20-link chain with drives): 1000 output frames at 60 fps are 16.7 s of motion, 16667 steps
at 1 kHz; the time to record the frames and write them as USD time samples next to the time to simulate.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import pinocchio as pin

import usdart
from usdart.core.kernels import entry
from usdart.core.state import sync_spherical_quaternions

ROOT = Path(__file__).resolve().parent.parent
PANDA = ROOT / "tests/data/panda/panda.usda"
ARM = ROOT / "sample_stages/arm_with_gripper.usda"
sys.path.insert(0, str(ROOT / "tests"))  # the Pinocchio and MuJoCo twins the tests build from a usdart model


def best_of(fn, repeat: int) -> float:
    """Smallest wall time of one call over `repeat` calls (after a warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def timed_process(args: list[str], cache: str, cwd: Path) -> float:
    """Wall seconds of a fresh process (numba cache folder `cache`)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    t0 = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return time.perf_counter() - t0


def bench_startup(run_tests: bool) -> list[tuple[str, float]]:
    rows = []
    worlds64 = [sys.executable, "-c", f"import usdart; s = usdart.load({str(ARM)!r}, worlds=64); s.step(1)"]
    with tempfile.TemporaryDirectory() as folder:
        cache = os.path.join(folder, "numba")
        usdart_cli = [sys.executable, "-c", "import sys; from usdart.app.cli import main; sys.exit(main())"]
        rows.append(
            (
                "first usdart simulate of the arm sample, empty cache",
                timed_process(
                    [*usdart_cli, "simulate", str(ARM), "-o", os.path.join(folder, "out.usda"), "--quiet"], cache, ROOT
                ),
            )
        )
        rows.append(("then a first 64-world step (cache of that run)", timed_process(worlds64, cache, ROOT)))
        rows.append(("a first 64-world step, empty cache", timed_process(worlds64, os.path.join(folder, "n2"), ROOT)))
        if run_tests:
            rows += bench_install(Path(folder))
            rows.append(
                (
                    "cold pytest -n auto",
                    timed_process(
                        [sys.executable, "-m", "pytest", "-q", "-n", "auto"], os.path.join(folder, "n3"), ROOT
                    ),
                )
            )
    return rows


def bench_install(folder: Path) -> list[tuple[str, float]]:
    """The README's quick start in a fresh venv: `pip install .` (from a copy of the sources: the build
    compiles the kernels into the package, setup.py), then the first `usdart simulate` of the arm sample."""
    import shutil

    source = folder / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".ci", "build", "__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    python = str(folder / "venv" / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    t0 = time.perf_counter()
    subprocess.run([python, "-m", "pip", "install", "-q", str(source)], check=True, env=env, capture_output=True)
    install = time.perf_counter() - t0
    t0 = time.perf_counter()
    command = [python, "-m", "usdart.app.cli", "simulate", str(ARM), "-o", str(folder / "quick.usda"), "-q"]
    subprocess.run(command, check=True, env=env, cwd=folder, capture_output=True)
    return [
        ("pip install . in a fresh venv (kernels compiled)", install),
        ("then the first usdart simulate", time.perf_counter() - t0),
    ]


def random_states(art, worlds: int, rng):
    """Joint positions within the limits and random velocities, in every world of `art`."""
    st = art.state
    lower = np.array([max(d.lower, -np.pi) for d in art.desc.dofs])
    upper = np.array([min(d.upper, np.pi) for d in art.desc.dofs])
    st.q[:] = rng.uniform(lower, upper, size=(worlds, art.dof_count))
    st.qd[:] = rng.normal(size=(worlds, art.dof_count))
    for w in range(worlds):
        sync_spherical_quaternions(art.model, st, w)


def bench_step(worlds: int, steps: int = 2000) -> list[tuple[str, float, float]]:
    """(label, usdart seconds per step, MuJoCo seconds per step) for one Panda and for `worlds` Pandas. The
    Panda is loaded without PhysX's body fallbacks (link damping), so both simulators step the same model."""
    import mujoco
    from mujoco import rollout
    from mujoco_twin import mujoco_twin

    dt, rows = 1e-3, []
    scene = usdart.load(PANDA, semantics="newton")
    scene.time_step = dt
    scene.contacts_enabled = False  # the MuJoCo twin has no colliders: the arm's self-collisions off in both
    art = scene.articulations[0]
    model, maps = mujoco_twin(art, dt, "euler", limits=True)
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = maps.to_mujoco(art.state)
    q0, qd0, qpos0, qvel0 = art.state.q.copy(), art.state.qd.copy(), data.qpos.copy(), data.qvel.copy()

    def per_step(run) -> float:
        """Seconds per step of `run` (steps steps), each timed run starting from the same state in both
        simulators, so both step through the same motion (limits engage as the arm falls)."""

        def once():
            run()
            art.state.q[:], art.state.qd[:] = q0, qd0
            data.qpos[:], data.qvel[:] = qpos0, qvel0

        return best_of(once, 3) / steps

    rows.append(
        (
            "Panda step, compiled loop vs mj_step(nstep)",
            per_step(lambda: scene.step(steps)),
            per_step(lambda: mujoco.mj_step(model, data, nstep=steps)),
        )
    )
    rows.append(
        (
            "Panda step, one Python call each vs mj_step",
            per_step(lambda: [scene.step() for _ in range(steps)]),
            per_step(lambda: [mujoco.mj_step(model, data) for _ in range(steps)]),
        )
    )

    batch = usdart.load(PANDA, worlds=worlds, semantics="newton")
    batch.time_step = dt
    batch.contacts_enabled = False
    many = batch.articulations[0]
    random_states(many, worlds, np.random.default_rng(1))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    states = np.zeros((worlds, mujoco.mj_stateSize(model, spec)))
    for w in range(worlds):
        data.qpos[:], data.qvel[:] = maps.to_mujoco(many.state, w)
        mujoco.mj_getState(model, data, states[w], spec)
    threads = [mujoco.MjData(model) for _ in range(os.cpu_count() or 1)]
    chunk = max(10, steps // 40)
    batch.step(2)
    t_ours = best_of(lambda: batch.step(chunk), 3) / (chunk * worlds)
    rollout.rollout(model, threads, states, nstep=2)
    t_mj = best_of(lambda: rollout.rollout(model, threads, states, nstep=chunk), 3) / (chunk * worlds)
    rows.append((f"{worlds} Pandas, per env-step ({len(threads)} threads)", t_ours, t_mj))
    return rows


def bench_physx(steps: int = 480) -> list[tuple[str, float, float]]:
    """(label, usdart seconds per step, ovphysx seconds per step) for the Panda with TGS and with PGS; empty
    when ovphysx is not installed."""
    try:
        from physx_runner import force_solver, physx_seconds_per_step
    except ImportError:
        return []
    from pxr import Sdf, Usd, UsdPhysics

    rows, dt = [], 1.0 / 240
    with tempfile.TemporaryDirectory() as tmp:
        for solver in ("TGS", "PGS"):
            path = force_solver(PANDA, solver, Path(tmp) / f"panda_{solver}.usda")
            stage = Usd.Stage.Open(str(path))
            for prim in stage.Traverse():
                if prim.HasAPI(UsdPhysics.ArticulationRootAPI):  # as before contacts: the arm alone
                    prim.AddAppliedSchema("PhysxArticulationAPI")
                    prim.CreateAttribute("physxArticulation:enabledSelfCollisions", Sdf.ValueTypeNames.Bool).Set(False)
            stage.Save()
            theirs = physx_seconds_per_step(path, dt, steps)
            scene = usdart.load(str(path))
            scene.time_step = dt
            scene.step(2)  # compiled

            def loop(call_each: bool):
                scene.reset()
                began = time.perf_counter()
                if call_each:
                    for _ in range(steps):
                        scene.step()
                else:
                    scene.step(steps)
                return time.perf_counter() - began

            compiled = min(loop(False) for _ in range(3)) / steps
            per_call = min(loop(True) for _ in range(3)) / steps
            rows.append((f"Panda {solver}, compiled loop vs ovphysx step", compiled, theirs))
            rows.append((f"Panda {solver}, one Python call each vs ovphysx step", per_call, theirs))
    return rows


BIN_WALLS = (  # name, centre, size (m): a static 2 m bin, walls 1 m high
    ("wall_x0", (-1.05, 0, 0.5), (0.1, 2.2, 1.0)),
    ("wall_x1", (1.05, 0, 0.5), (0.1, 2.2, 1.0)),
    ("wall_y0", (0, -1.05, 0.5), (2.2, 0.1, 1.0)),
    ("wall_y1", (0, 1.05, 0.5), (2.2, 0.1, 1.0)),
)


def bin_stage():
    """A plane and the static bin (BIN_WALLS), nothing in it."""
    from contact_stages import collider, contact_stage, ground
    from pxr import Gf, UsdGeom

    stage = contact_stage()
    ground(stage, "plane")
    for name, pos, size in BIN_WALLS:
        UsdGeom.Xformable(collider(stage, f"/World/{name}", "box", 1.0, pos=pos)).AddScaleOp().Set(Gf.Vec3f(*size))
    return stage


def drop_positions(count: int) -> list[tuple[float, float, float]]:
    """Where the bodies dropped into the bin start: layers of 8 x 8, 0.22 m apart, 0.25 m between layers."""
    return [(-0.77 + 0.22 * ((k % 64) // 8), -0.77 + 0.22 * (k % 8), 0.3 + 0.25 * (k // 64)) for k in range(count)]


def mujoco_bin(boxes: int, dt: float):
    """The box bin in MuJoCo: the same plane, walls and 1 kg 0.2 m boxes at drop_positions, friction 0.5 (the
    PhysX default material's), semi-implicit Euler at dt."""
    import mujoco

    spec = mujoco.MjSpec()
    spec.option.timestep = dt
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    friction = [0.5, 0.005, 0.0001]
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], friction=friction)
    for _, pos, size in BIN_WALLS:
        spec.worldbody.add_geom(
            type=mujoco.mjtGeom.mjGEOM_BOX, pos=pos, size=[0.5 * x for x in size], friction=friction
        )
    for pos in drop_positions(boxes):
        body = spec.worldbody.add_body(pos=pos)
        body.add_freejoint()
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1, 0.1, 0.1], mass=1.0, friction=friction)
    return spec.compile()


def contact_stages(tmp: Path) -> dict[str, tuple[Path, object]]:
    """label -> (stage, its MuJoCo twin or None): the converted ant dropped on a plane (self-collisions on,
    PhysX's default, and off, as MuJoCo's model has them); 500 boxes dropped in
    layers into the static bin; 128 convex hulls (octagonal prisms) and 128 cylinders dropped into it; the
    gripper sample lifting its box."""
    from contact_stages import ant_on_plane, collider, dynamic_body, mujoco_ant, prism_mesh, round_collider, save

    bin_ = bin_stage()
    for k, pos in enumerate(drop_positions(500)):
        dynamic_body(bin_, f"/World/box{k}", pos=pos)
        collider(bin_, f"/World/box{k}/geom", "box", 0.2)
    rounds = bin_stage()
    for k, pos in enumerate(drop_positions(256)):
        dynamic_body(rounds, f"/World/body{k}", pos=pos)
        if k % 2:
            prism_mesh(rounds, f"/World/body{k}/geom")
        else:
            round_collider(rounds, f"/World/body{k}/geom", "cylinder")
    return {
        "ant on a plane (TGS 60 Hz)": (ant_on_plane(tmp / "ant.usda"), mujoco_ant(1 / 60)),
        "the ant, self-collisions off as in MuJoCo's": (
            ant_on_plane(tmp / "ant_alone.usda", self_collisions=False),
            mujoco_ant(1 / 60),
        ),
        "500 boxes into a bin (TGS 60 Hz)": (Path(save(bin_, tmp / "bin.usda")), mujoco_bin(500, 1 / 60)),
        "128 hulls + 128 cylinders into a bin (TGS 60 Hz)": (Path(save(rounds, tmp / "rounds.usda")), None),
        "gripper sample lifting its box (TGS 120 Hz)": (ROOT / "sample_stages/gripper_lift.usda", None),
    }


def mujoco_seconds_per_step(model, steps: int) -> float:
    """MuJoCo's time per step over its first `steps` steps from the model's initial state (best of 3)."""
    import mujoco

    data = mujoco.MjData(model)

    def run():
        mujoco.mj_resetData(model, data)
        mujoco.mj_step(model, data, nstep=steps)

    return best_of(run, 3) / steps


def bench_contacts(steps: int = 120) -> list[tuple[str, float, float, float]]:
    """(label, usdart, ovphysx, MuJoCo seconds per step; nan where a simulator has no twin) over the first 2 s
    of contact scenes (the bodies land and settle: the busiest part); empty when ovphysx is not installed.
    MuJoCo steps its own models of the ant and the bin (soft contacts, its Newton solver): the same work
    asked, not the same contact model."""
    try:
        from physx_runner import physx_seconds_per_step
    except ImportError:
        return []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, (path, twin) in contact_stages(Path(tmp)).items():
            dt = 1.0 / (120 if "120 Hz" in label else 60)
            theirs = physx_seconds_per_step(path, dt, steps, repeat=1)
            scene = usdart.load(str(path))
            scene.time_step = dt
            scene.step(1)  # compiled, contact room grown
            scene.reset()
            began = time.perf_counter()
            scene.step(steps)
            ours = (time.perf_counter() - began) / steps
            rows.append((label, ours, theirs, mujoco_seconds_per_step(twin, steps) if twin else float("nan")))
    return rows


def bench_ants(worlds: int, steps: int = 120) -> list[tuple[str, float, float, float]]:
    """(label, usdart, ovphysx, MuJoCo seconds per env-step) for `worlds` ants dropped on a plane, the first
    2 s at 60 Hz: usdart's worlds stepped together (numba threads), MuJoCo's threaded rollout of its ant
    (one MjData per thread), and one ovphysx scene holding that many ants 3 m apart (nan without ovphysx)."""
    import mujoco
    from contact_stages import ant_on_plane, mujoco_ant
    from mujoco import rollout

    dt = 1.0 / 60
    with tempfile.TemporaryDirectory() as tmp:
        batch = usdart.load(str(ant_on_plane(Path(tmp) / "ant.usda")), worlds=worlds)
        batch.time_step = dt
        batch.step(1)  # compiled
        batch.reset()
        began = time.perf_counter()
        batch.step(steps)
        ours = (time.perf_counter() - began) / (steps * worlds)
        try:
            from physx_runner import physx_seconds_per_step

            many = ant_on_plane(Path(tmp) / "ants.usda", worlds)
            theirs = physx_seconds_per_step(many, dt, steps, repeat=1) / worlds
        except ImportError:
            theirs = float("nan")
    model = mujoco_ant(dt)
    data = mujoco.MjData(model)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    start = np.zeros(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, start, spec)
    states = np.tile(start, (worlds, 1))
    threads = [mujoco.MjData(model) for _ in range(os.cpu_count() or 1)]  # as bench_step's rollout
    rollout.rollout(model, threads, states, nstep=2)
    mj = best_of(lambda: rollout.rollout(model, threads, states, nstep=steps), 1) / (steps * worlds)
    return [(f"{worlds} ants dropped on a plane, per env-step ({len(threads)} threads)", ours, theirs, mj)]


def bench_dynamics(worlds: int, repeat: int) -> list[tuple[str, float, float]]:
    """RNEA, CRBA, ABA of the Panda: usdart entry points on a cache's scratch scene next to Pinocchio."""
    from pin_reference import PinTwin

    art = usdart.load(PANDA, semantics="newton").articulations[0]
    m = art.model
    rng = np.random.default_rng(0)
    nv, n = m.n_root + m.n_dofs, m.n_links
    twin = PinTwin(m)
    pm, pd = twin.model, twin.data
    rows = []

    cache = art.create_cache()
    cache.joint_position[:] = rng.uniform(-1, 1, m.n_dofs)
    cache.joint_velocity[:] = rng.normal(size=m.n_dofs)
    b = art._load(cache)
    qdd, tau, root_acc, wrench = rng.normal(size=m.n_dofs), rng.normal(size=m.n_dofs), np.zeros(6), np.zeros((n, 6))
    out, H = np.zeros(nv), np.zeros((nv, nv))
    q = twin.q(cache._tree_state.q[0], cache._tree_state.joint_quat[0], np.zeros(3), np.array([1.0, 0, 0, 0]))
    v, a_pin, tau_pin = twin.to_pin(cache.joint_velocity), twin.to_pin(qdd), twin.to_pin(tau)
    ours = {
        "rnea": lambda: entry.inverse_dynamics(b, 0, 0, qdd, root_acc, 1.0, wrench, m.gravity, 1.0, out),
        "crba": lambda: entry.mass_matrix(b, 0, 0, True, H),
        "aba": lambda: entry.forward_dynamics(b, 0, 0, tau, wrench, m.gravity, out),
    }
    theirs = {
        "rnea": lambda: pin.rnea(pm, pd, q, v, a_pin),
        "crba": lambda: pin.crba(pm, pd, q),
        "aba": lambda: pin.aba(pm, pd, q, v, tau_pin),
    }
    single = {}
    for algo in ("rnea", "crba", "aba"):
        t_ours = best_of(lambda: [ours[algo]() for _ in range(100)], repeat) / 100
        single[algo] = best_of(lambda: [theirs[algo]() for _ in range(100)], repeat) / 100
        rows.append((f"{algo.upper()} one Python call vs Pinocchio's", t_ours, single[algo]))

    # the same through the public API (the cache's state loaded and checked, results copied out)
    cache.joint_acceleration[:], cache.joint_force[:] = qdd, tau
    public = {
        "rnea": ("compute_joint_force", lambda: art.compute_joint_force(cache)),
        "crba": ("compute_generalized_mass_matrix", lambda: art.compute_generalized_mass_matrix(cache)),
        "aba": ("compute_joint_acceleration", lambda: art.compute_joint_acceleration(cache)),
    }
    for algo, (name, call) in public.items():
        t_ours = best_of(lambda: [call() for _ in range(100)], repeat) / 100
        rows.append((f"Articulation.{name}, one call, vs Pinocchio's {algo}", t_ours, single[algo]))

    # batches: every world of a scene of N Pandas at its own random state
    batch = usdart.load(PANDA, worlds=worlds, semantics="newton")
    many = batch.articulations[0]
    random_states(many, worlds, rng)
    eng = batch._engine
    eng.set_integrator(True)  # allocates the articulated-body scratch ABA needs
    bb = eng._box
    qdd_all, tau_all = rng.normal(size=(worlds, m.n_dofs)), rng.normal(size=(worlds, m.n_dofs))
    eng.state.qdd[:], eng.control.joint_force[:] = qdd_all, tau_all  # the inputs tree_dynamics reads
    vector_out, H_all = np.zeros((worlds, 1, nv)), np.zeros((worlds, nv, nv))
    qs = [
        twin.q(many.state.q[w], many.state.joint_quat[w], np.zeros(3), np.array([1.0, 0, 0, 0])) for w in range(worlds)
    ]
    vs = [twin.to_pin(many.state.qd[w]) for w in range(worlds)]

    def batched(kind: int, out: np.ndarray):
        return lambda: eng.over_worlds(entry.tree_dynamics, bb, worlds, 0, kind, m.gravity, out)

    batch_ours = {
        "rnea": batched(entry.TREE_INVERSE_DYNAMICS, vector_out),
        "crba": batched(entry.TREE_MASS_MATRIX_ARMATURE, H_all),
        "aba": batched(entry.TREE_FORWARD_DYNAMICS, vector_out),
    }
    batch_theirs = {
        "rnea": lambda: [pin.rnea(pm, pd, qs[w], vs[w], twin.to_pin(qdd_all[w])) for w in range(worlds)],
        "crba": lambda: [pin.crba(pm, pd, qs[w]) for w in range(worlds)],
        "aba": lambda: [pin.aba(pm, pd, qs[w], vs[w], twin.to_pin(tau_all[w])) for w in range(worlds)],
    }
    for algo in ("rnea", "crba", "aba"):
        t_ours = best_of(batch_ours[algo], max(3, repeat // 4)) / worlds
        t_pin = best_of(batch_theirs[algo], 3) / worlds
        rows.append((f"{algo.upper()} batch of {worlds} states, per state", t_ours, t_pin))
    return rows


def star_stage(path: Path, links: int) -> Path:
    """One root fixed to the world and links - 1 revolute children around it (a star: depth 1)."""
    from pxr import Gf, Usd, UsdGeom, UsdPhysics

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdPhysics.Scene.Define(stage, "/World/physicsScene")
    hub = UsdGeom.Xform.Define(stage, "/World/star/hub")
    UsdPhysics.RigidBodyAPI.Apply(hub.GetPrim())
    UsdPhysics.MassAPI.Apply(hub.GetPrim()).CreateMassAttr(10.0)
    anchor = UsdPhysics.FixedJoint.Define(stage, "/World/star/anchor")
    anchor.CreateBody1Rel().SetTargets([hub.GetPath()])
    UsdPhysics.ArticulationRootAPI.Apply(anchor.GetPrim())
    for i in range(links - 1):
        angle = 2 * np.pi * i / (links - 1)
        p = Gf.Vec3f(float(np.cos(angle)), float(np.sin(angle)), 0.0)
        leaf = UsdGeom.Xform.Define(stage, f"/World/star/leaf{i:04d}")
        leaf.AddTranslateOp().Set(Gf.Vec3d(p))
        UsdPhysics.RigidBodyAPI.Apply(leaf.GetPrim())
        mass = UsdPhysics.MassAPI.Apply(leaf.GetPrim())
        mass.CreateMassAttr(0.1)
        mass.CreateDiagonalInertiaAttr(Gf.Vec3f(1e-3, 1e-3, 1e-3))
        hinge = UsdPhysics.RevoluteJoint.Define(stage, f"/World/star/hinge{i:04d}")
        hinge.CreateAxisAttr("X")
        hinge.CreateBody0Rel().SetTargets([hub.GetPath()])
        hinge.CreateBody1Rel().SetTargets([leaf.GetPath()])
        hinge.CreateLocalPos0Attr(p)
    stage.Save()
    return path


def bench_star() -> list[tuple[str, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for links in (200, 2000):
            scene = usdart.load(star_stage(Path(folder) / f"star{links}.usda", links))
            scene.time_step = 1e-3
            scene.step(2)
            rows.append((f"{links}-link star, one step", best_of(lambda: scene.step(10), 3) / 10))
    return rows


def chain_stage(path: Path, links: int = 20) -> Path:
    """A fixed-base chain of `links` unit-mass links joined by driven hinges (alternating Y and Z axes)."""
    from pxr import Gf, Usd, UsdGeom, UsdPhysics

    from usdart import authoring

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.Scene.Define(stage, "/World/physicsScene")
    previous = None
    for i in range(links):
        link = UsdGeom.Xform.Define(stage, f"/World/chain/link{i:02d}")
        link.AddTranslateOp().Set(Gf.Vec3d(0.1 * i, 0.0, 0.0))
        UsdPhysics.RigidBodyAPI.Apply(link.GetPrim())
        mass = UsdPhysics.MassAPI.Apply(link.GetPrim())
        mass.CreateMassAttr(1.0)
        mass.CreateCenterOfMassAttr(Gf.Vec3f(0.05, 0.0, 0.0))
        mass.CreateDiagonalInertiaAttr(Gf.Vec3f(1e-3, 2e-3, 2e-3))
        if previous is None:
            joint = UsdPhysics.FixedJoint.Define(stage, "/World/chain/anchor")
            joint.CreateBody1Rel().SetTargets([link.GetPath()])
            authoring.set_articulation_root(joint)
        else:
            joint = UsdPhysics.RevoluteJoint.Define(stage, f"/World/chain/joint{i:02d}")
            joint.CreateAxisAttr("Y" if i % 2 else "Z")
            joint.CreateBody0Rel().SetTargets([previous.GetPath()])
            joint.CreateBody1Rel().SetTargets([link.GetPath()])
            joint.CreateLocalPos0Attr(Gf.Vec3f(0.1, 0.0, 0.0))
            authoring.set_drive(joint, stiffness=50.0, damping=2.0, target_position=0.3 * (-1) ** i)
        previous = link
    stage.Save()
    return path


def bench_writeback(frames: int = 1000, rate: float = 1000.0, fps: float = 60.0) -> dict:
    """Seconds to simulate `frames` output frames of a 20-link chain (at `fps`, stepping at `rate`) and
    seconds to record and write them as a .usda (and as a .usdc)."""
    steps = round(frames / fps * rate)
    with tempfile.TemporaryDirectory() as folder:
        path = chain_stage(Path(folder) / "chain.usda")
        scene = usdart.load(path)
        scene.time_step = 1.0 / rate
        scene.step(10)  # compile
        t0 = time.perf_counter()
        scene.step(steps)
        out = {"steps": steps, "simulate": time.perf_counter() - t0}
        for ext in ("usda", "usdc"):
            recorder = usdart.Recorder(scene, fps=fps)
            recorder.record(0.0)
            recorder.save(Path(folder) / f"warm.{ext}")  # first-use costs of the writer
            recorder = usdart.Recorder(scene, fps=fps)
            t0 = time.perf_counter()
            for k in range(frames):
                recorder.record(k / fps)
            recorder.save(Path(folder) / f"chain_out.{ext}")
            out[ext] = time.perf_counter() - t0
    return out


def bench_sweep(processes: int = 8) -> list[tuple[str, float]]:
    """Runs per second: a 256-run sweep with 1 and 2 workers, and separate `usdart simulate` processes."""
    from pxr import Sdf, Usd

    joint = "/World/robot/joints/joint1"
    stiffness = np.geomspace(20, 2000, 16)
    damping = np.geomspace(0.5, 50, 16)
    sets = [
        f"{joint}.drive:angular:physics:stiffness=" + ",".join(f"{v:.6g}" for v in stiffness),
        f"{joint}.drive:angular:physics:damping=" + ",".join(f"{v:.6g}" for v in damping),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        stage = Usd.Stage.Open(str(ARM))
        stage.GetPrimAtPath(joint).GetAttribute("drive:angular:physics:targetPosition").Set(-60.0)
        turning = os.path.join(folder, "turning.usda")
        stage.GetRootLayer().Export(turning)
        stage.GetRootLayer().Reload()  # the sample's layer as on disk again
        for workers in (1, 2):
            t0 = time.perf_counter()
            table = usdart.sweep(turning, os.path.join(folder, f"sweep{workers}"), set=sets, workers=workers)
            seconds = time.perf_counter() - t0
            assert list(table["status"]) == ["ok"] * 256
            rows.append((f"256-run sweep, {workers} worker{'s' if workers > 1 else ''}", 256 / seconds))
        usdart_cli = [sys.executable, "-c", "import sys; from usdart.app.cli import main; sys.exit(main())"]
        cache = os.environ.get("NUMBA_CACHE_DIR", os.path.join(folder, "numba"))
        total = 0.0
        for k in range(processes):
            layer = Sdf.Layer.OpenAsAnonymous(turning)
            edited = Usd.Stage.Open(layer)
            edited.GetPrimAtPath(joint).GetAttribute("drive:angular:physics:stiffness").Set(float(stiffness[k]))
            path = os.path.join(folder, f"run{k}.usda")
            layer.Export(path)
            command = [*usdart_cli, "simulate", path, "-o", os.path.join(folder, f"out{k}.usda"), "--quiet"]
            if k == 0:
                timed_process(command, cache, ROOT)  # fills the numba cache: not counted
            total += timed_process(command, cache, ROOT)
        rows.append((f"separate usdart simulate processes ({processes} timed)", processes / total))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", type=int, default=4096)
    parser.add_argument("--ants", type=int, default=1024, help="ants dropped on a plane in the batched contact row")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="skip the cold test-suite run")
    args = parser.parse_args()
    import mujoco

    print(
        f"numba threads: {numba.get_num_threads()}, mujoco {mujoco.__version__}, pinocchio {pin.__version__}, "
        f"usdart {usdart.__version__}"
    )
    print(f"{'start-up, fresh process':52s} {'seconds':>10s}")
    for name, seconds in bench_startup(not args.quick):
        print(f"{name:52s} {seconds:10.1f}")
    print(f"{'Panda step, dt 1 ms, limits on':52s} {'usdart us':>10s} {'mujoco us':>10s} {'ratio':>7s}")
    for name, ours, theirs in bench_step(args.worlds):
        print(f"{name:52s} {ours * 1e6:10.3f} {theirs * 1e6:10.3f} {ours / theirs:7.2f}")
    print(f"{'Panda vs PhysX, dt 1/240 s, 32 iterations':52s} {'usdart us':>10s} {'physx us':>10s} {'ratio':>7s}")
    for name, ours, theirs in bench_physx():
        print(f"{name:52s} {ours * 1e6:10.3f} {theirs * 1e6:10.3f} {ours / theirs:7.2f}")
    print(
        f"{'contacts, first 2 s':52s} {'usdart us':>10s} {'physx us':>10s} {'mujoco us':>10s} "
        f"{'/physx':>7s} {'/mujoco':>7s}"
    )
    for name, ours, physx, mj in bench_contacts() + bench_ants(args.ants):
        print(
            f"{name:52s} {ours * 1e6:10.3f} {physx * 1e6:10.3f} {mj * 1e6:10.3f} {ours / physx:7.2f} {ours / mj:7.2f}"
        )
    print(f"{'Panda dynamics':52s} {'usdart us':>10s} {'pin us':>10s} {'ratio':>7s}")
    for name, ours, theirs in bench_dynamics(args.worlds, args.repeat):
        print(f"{name:52s} {ours * 1e6:10.3f} {theirs * 1e6:10.3f} {ours / theirs:7.2f}")
    print(f"{'scale':52s} {'ms':>10s}")
    for name, seconds in bench_star():
        print(f"{name:52s} {seconds * 1e3:10.3f}")
    print(f"{'sweep throughput, arm sample, 2 s runs':52s} {'runs/s':>10s}")
    for name, rate in bench_sweep():
        print(f"{name:52s} {rate:10.2f}")
    wb = bench_writeback()
    print(f"{'20-link chain: 1000 frames at 60 fps':52s} {'write ms':>10s} {'sim ms':>10s} {'ratio':>7s}")
    for ext in ("usda", "usdc"):
        label = f"record + write .{ext} vs {wb['steps']} steps at 1 kHz"
        print(f"{label:52s} {wb[ext] * 1e3:10.1f} {wb['simulate'] * 1e3:10.1f} {wb[ext] / wb['simulate']:7.2f}")
    per_step = wb["simulate"] / wb["steps"]
    print(
        f"{'per frame vs per step (us): a frame every step':52s} {wb['usda'] * 1e3:10.1f} {per_step * 1e6:10.1f} "
        f"{wb['usda'] / 1000 / per_step:7.2f}"
    )


if __name__ == "__main__":
    main()
