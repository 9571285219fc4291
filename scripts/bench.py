"""Timings of usdart next to Pinocchio in the same run, reported as ratios (the machines are noisy).

    python scripts/bench.py [--worlds 4096] [--repeat 20]

Dynamics (Panda, fixed base, 9 DOFs): RNEA, CRBA and ABA per state
- single state called from Python (usdart: one entry-point call on a 1-world State; Pinocchio: one call),
- single state inside compiled code (the algorithm alone: a jitted loop over repeated calls),
- a batch of N random states (usdart: numba prange over the worlds on every core; Pinocchio has no
  batched call, so a Python loop over its per-state functions).
Ratios are usdart time / Pinocchio time: below 1 means usdart is faster.

Stepping (Panda, limits on, no contacts, dt 1 ms, semi-implicit Euler): usdart's step next to mj_step on
the MuJoCo twin of the same imported model (tests/mujoco_twin.py, joint limits on), per step inside a
compiled loop (usdart scene.step(n), MuJoCo mj_step(nstep=n)) and per Python call; and 4096 Pandas from
random states on every core: usdart env-steps per second next to MuJoCo's threaded rollout
(mujoco.rollout, one MjData per thread). Every ratio is usdart time / MuJoCo time per (env-)step, so
the throughput ratio asked for (usdart env-steps per second / MuJoCo's) is its inverse; goal: 1 or below.

Write-back (a 20-link chain with drives): 1000 output frames at 60 fps are 16.7 s of motion, 16667 steps
at 1 kHz; the time to record the frames and write them as USD time samples (usdart.Recorder, Sdf, .usda
and .usdc) next to the time to simulate them. The goal is a ratio below 1: writing must not dominate.
The last row compares one frame's write (.usda) with one step, the cost ratio when a frame is written
after every step (fps = rate).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import numba
import pinocchio as pin
from numba import njit

import usdart
from usdart.kernels.aba import aba
from usdart.kernels.box import box
from usdart.kernels.entry import (forward_dynamics_all, forward_dynamics_one, inverse_dynamics_all,
                                  inverse_dynamics_one, mass_matrix_all, mass_matrix_one)
from usdart.kernels.crba import crba
from usdart.kernels.kinematics import link_poses
from usdart.kernels.rnea import rnea
from usdart.core.state import initial_state, sync_spherical_quaternions, workspace

ROOT = Path(__file__).resolve().parent.parent
PANDA = ROOT / "tests/data/panda/panda.usda"
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


@njit(cache=True)
def _loop_rnea(m, st, ws, qdd, root_acc, wrench, gravity, out, n):
    for _ in range(n):
        link_poses(m, st, ws, 0)
        rnea(m, st, ws, 0, qdd, root_acc, 1.0, wrench, False, gravity, 1.0, out)


@njit(cache=True)
def _loop_crba(m, st, ws, out, n):
    for _ in range(n):
        link_poses(m, st, ws, 0)
        crba(m, ws, 0, True, out)


@njit(cache=True)
def _loop_aba(m, st, ws, tau, wrench, gravity, out, n):
    for _ in range(n):
        link_poses(m, st, ws, 0)
        aba(m, st, ws, 0, tau, wrench, gravity, False, out)


def random_states(art, worlds: int, rng):
    m = art.model
    st = initial_state(art.desc, m, worlds)
    lower = np.array([max(d.lower, -np.pi) for d in art.desc.dofs])
    upper = np.array([min(d.upper, np.pi) for d in art.desc.dofs])
    st.q[:] = rng.uniform(lower, upper, size=(worlds, m.n_dofs))
    st.qd[:] = rng.normal(size=(worlds, m.n_dofs))
    for w in range(worlds):
        sync_spherical_quaternions(m, st, w)
    return st


def bench_dynamics(worlds: int, repeat: int) -> list[tuple[str, float, float]]:
    scene = usdart.load(PANDA)
    art = scene.articulations[0]
    m = art.model
    rng = np.random.default_rng(0)
    nv, n = m.n_root + m.n_dofs, m.n_links
    rows = []

    # Pinocchio twin built from the same imported numbers (the test suite's reference builder)
    from pin_reference import PinTwin
    twin = PinTwin(m)
    pm, pd = twin.model, twin.data

    for label, count in (("single", 1), ("batch", worlds)):
        st = random_states(art, count, rng)
        ws = workspace(m, count)
        qdd = rng.normal(size=(count, m.n_dofs))
        tau = rng.normal(size=(count, m.n_dofs))
        root_acc, wrench = np.zeros((count, 6)), np.zeros((count, n, 6))
        out, H = np.zeros((count, nv)), np.zeros((count, nv, nv))
        qs = [twin.q(st.q[w], st.joint_quat[w], st.root_pos[w], st.root_quat[w]) for w in range(count)]
        vs = [twin.to_pin(st.qd[w]) for w in range(count)]
        a_pin = [twin.to_pin(qdd[w]) for w in range(count)]
        tau_pin = [twin.to_pin(tau[w]) for w in range(count)]

        boxes = box(m), box(st), box(ws)
        if count == 1:  # one call of the serial entry points
            ours = {
                "rnea": lambda: inverse_dynamics_one(*boxes, 0, qdd, root_acc, 1.0, wrench, False, m.gravity, 1.0, out),
                "crba": lambda: mass_matrix_one(*boxes, 0, True, H),
                "aba": lambda: forward_dynamics_one(*boxes, 0, tau, wrench, False, m.gravity, out),
            }
        else:
            ours = {
                "rnea": lambda: inverse_dynamics_all(*boxes, qdd, root_acc, wrench, False, m.gravity, out),
                "crba": lambda: mass_matrix_all(*boxes, True, H),
                "aba": lambda: forward_dynamics_all(*boxes, tau, wrench, False, m.gravity, out),
            }
        theirs = {
            "rnea": lambda: [pin.rnea(pm, pd, qs[w], vs[w], a_pin[w]) for w in range(count)],
            "crba": lambda: [pin.crba(pm, pd, qs[w]) for w in range(count)],
            "aba": lambda: [pin.aba(pm, pd, qs[w], vs[w], tau_pin[w]) for w in range(count)],
        }
        for algo in ("rnea", "crba", "aba"):
            t_ours = best_of(ours[algo], repeat) / count
            t_pin = best_of(theirs[algo], max(3, repeat // 4 if count > 1 else repeat)) / count
            rows.append((f"{algo} {label} ({'python call' if count == 1 else f'{count} states'})", t_ours, t_pin))
        if count == 1:  # the algorithms alone, without Python's call overhead
            calls = 20000
            inner = {
                "rnea": lambda: _loop_rnea(m, st, ws, qdd, root_acc, wrench, m.gravity, out, calls),
                "crba": lambda: _loop_crba(m, st, ws, H, calls),
                "aba": lambda: _loop_aba(m, st, ws, tau, wrench, m.gravity, out, calls),
            }
            for algo in ("rnea", "crba", "aba"):
                t_ours = best_of(inner[algo], 3) / calls
                t_pin = [r for r in rows if r[0].startswith(f"{algo} single")][0][2]
                rows.append((f"{algo} single (compiled loop vs pin call)", t_ours, t_pin))
    return rows


def bench_step(worlds: int, steps: int = 2000) -> list[tuple[str, float, float]]:
    """(label, usdart seconds per step, MuJoCo seconds per step) for one Panda and for `worlds` Pandas."""
    import mujoco
    from mujoco import rollout

    from mujoco_twin import mujoco_twin

    dt, rows = 1e-3, []
    scene = usdart.load(PANDA)
    scene.time_step = dt
    art = scene.articulations[0]
    model, maps = mujoco_twin(art, dt, "euler", limits=True)
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = maps.to_mujoco(art.state)
    scene.step(10)
    mujoco.mj_step(model, data, nstep=10)
    t_ours = best_of(lambda: scene.step(steps), 3) / steps
    t_mj = best_of(lambda: mujoco.mj_step(model, data, nstep=steps), 3) / steps
    rows.append(("step, compiled loop", t_ours, t_mj))
    t_ours = best_of(lambda: [scene.step(1) for _ in range(200)], 5) / 200
    t_mj = best_of(lambda: [mujoco.mj_step(model, data) for _ in range(200)], 5) / 200
    rows.append(("step, one Python call each", t_ours, t_mj))

    batch = usdart.load(PANDA, worlds=worlds)
    batch.time_step = dt
    many = batch.articulations[0]
    start = random_states(many, worlds, np.random.default_rng(1))
    for name in ("q", "qd"):
        getattr(many.state, name)[:] = getattr(start, name)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    states = np.zeros((worlds, mujoco.mj_stateSize(model, spec)))
    for w in range(worlds):
        data.qpos[:], data.qvel[:] = maps.to_mujoco(start, w)
        mujoco.mj_getState(model, data, states[w], spec)
    threads = [mujoco.MjData(model) for _ in range(os.cpu_count() or 1)]
    chunk = max(10, steps // 40)
    batch.step(2)
    t_ours = best_of(lambda: batch.step(chunk), 3) / (chunk * worlds)
    rollout.rollout(model, threads, states, nstep=2)
    t_mj = best_of(lambda: rollout.rollout(model, threads, states, nstep=chunk), 3) / (chunk * worlds)
    rows.append((f"{worlds} Pandas, per env-step ({len(threads)} threads)", t_ours, t_mj))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"numba threads: {numba.get_num_threads()}, pinocchio {pin.__version__}, usdart {usdart.__version__}")
    print(f"{'Panda dynamics, per state':48s} {'usdart us':>10s} {'pin us':>10s} {'ratio':>7s}")
    for name, ours, theirs in bench_dynamics(args.worlds, args.repeat):
        print(f"{name:48s} {ours * 1e6:10.3f} {theirs * 1e6:10.3f} {ours / theirs:7.2f}")
    print(f"{'Panda step, dt 1 ms, limits on':48s} {'usdart us':>10s} {'mujoco us':>10s} {'ratio':>7s}")
    for name, ours, theirs in bench_step(args.worlds):
        print(f"{name:48s} {ours * 1e6:10.3f} {theirs * 1e6:10.3f} {ours / theirs:7.2f}")
    wb = bench_writeback()
    print(f"{'20-link chain: 1000 frames at 60 fps':48s} {'write ms':>10s} {'sim ms':>10s} {'ratio':>7s}")
    for ext in ("usda", "usdc"):
        label = f"record + write .{ext} vs {wb['steps']} steps at 1 kHz"
        print(f"{label:48s} {wb[ext] * 1e3:10.1f} {wb['simulate'] * 1e3:10.1f} {wb[ext] / wb['simulate']:7.2f}")
    per_step = wb["simulate"] / wb["steps"]
    print(f"{'per frame vs per step (us): a frame every step':48s} {wb['usda'] * 1e3:10.1f} {per_step * 1e6:10.1f} "
          f"{wb['usda'] / 1000 / per_step:7.2f}")


if __name__ == "__main__":
    main()
