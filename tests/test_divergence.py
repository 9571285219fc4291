"""The divergence guard: a stage that blows up raises SimulationDiverged naming the articulation, the time
and what went wrong; the scene then refuses to hand out its state until it is reset or given a finite
one; stable runs are unchanged by the guard (bit for bit); `usdart simulate` exits 2 without an output."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pytest
from builders import body, joint, new_stage, root_api, set_attr
from click.testing import CliRunner
from pxr import Gf, UsdPhysics

import usdart
from usdart import CacheFlag
from usdart import authoring as A
from usdart.errors import SimulationDiverged, UsdartError

# bodies without PhysxRigidBodyAPI as UsdPhysics alone has them
# (the recorded reference runs and the MuJoCo twin have no PhysX body damping)
load = functools.partial(usdart.load, semantics="newton")

ROOT = Path(__file__).parent.parent
ARM = ROOT / "sample_stages/arm_with_gripper.usda"


# ---- stages ---------------------------------------------------------------------------------------------
def light_chain(links=10, inertia=1e-6, rate=60, gravity=9.81, damping=None):
    """A fixed-base chain of `links` 10 g links (0.1 m apart, hinges alternating about Y and Z, no drives)
    held out horizontally and let go under gravity, stepped at `rate` Hz. `damping`: passive joint
    damping (newton:damping) on every hinge."""
    st = new_stage()
    scene = UsdPhysics.Scene.Get(st, "/World/scene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, 0, -1))
    scene.CreateGravityMagnitudeAttr(gravity)
    A.set_scene_settings(scene.GetPrim(), time_steps_per_second=rate)
    for i in range(links):
        body(st, f"/World/chain/l{i}", pos=(0.1 * i, 0, 0), mass=0.01, inertia=(inertia,) * 3)
    joint(st, "/World/chain/fix", None, "/World/chain/l0", kind="fixed")
    root_api(st, "/World/chain")
    for i in range(1, links):
        j = joint(
            st,
            f"/World/chain/j{i}",
            f"/World/chain/l{i - 1}",
            f"/World/chain/l{i}",
            axis="Y" if i % 2 else "Z",
            lp0=(0.05, 0, 0),
            lp1=(-0.05, 0, 0),
        )
        if damping is not None:
            set_attr(j, "newton:damping", damping)
    return st


def square_loop(gap=5.0):
    """Four bodies in a square joined by four hinges, no joint excluded (an undeclared loop); the last
    joint's frames are `gap` m apart in the authored poses."""
    st = new_stage()
    for i, p in enumerate([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]):
        body(st, f"/World/loop/b{i}", pos=p)
    joint(st, "/World/loop/fix", None, "/World/loop/b0", kind="fixed")
    joint(st, "/World/loop/j1", "/World/loop/b0", "/World/loop/b1", lp0=(0.5, 0, 0), lp1=(-0.5, 0, 0))
    joint(st, "/World/loop/j2", "/World/loop/b1", "/World/loop/b2", lp0=(0, 0.5, 0), lp1=(0, -0.5, 0))
    joint(st, "/World/loop/j3", "/World/loop/b2", "/World/loop/b3", lp0=(-0.5, 0, 0), lp1=(0.5, 0, 0))
    joint(st, "/World/loop/j4", "/World/loop/b3", "/World/loop/b0", lp0=(0, gap - 0.5, 0), lp1=(0, 0.5, 0))
    root_api(st, "/World/loop")
    return st


def pendulum():
    """A 2 kg bob (inertia 0.5 kg m^2) 1 m from a hinge about Z, gravity 10 m/s^2 along -Y, let go at 1 rad."""
    st = new_stage()
    scene = UsdPhysics.Scene.Get(st, "/World/scene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, -1, 0))
    scene.CreateGravityMagnitudeAttr(10.0)
    body(st, "/World/pendulum/base", mass=1.0)
    body(st, "/World/pendulum/bob", pos=(1.0, 0, 0), mass=2.0, inertia=(0.5, 0.5, 0.5))
    joint(st, "/World/pendulum/fix", None, "/World/pendulum/base", kind="fixed")
    root_api(st, "/World/pendulum")
    hinge = joint(st, "/World/pendulum/hinge", "/World/pendulum/base", "/World/pendulum/bob", axis="Z", lp1=(-1, 0, 0))
    A.set_joint_state(hinge, position=1.0)
    return st


def diverge(scene, steps=600) -> SimulationDiverged:
    with pytest.raises(SimulationDiverged) as info:
        scene.step(steps)
    return info.value


# ---- what a divergence reports -----------------------------------------------------------------------
def test_light_chain_at_60hz_diverges_and_says_where_when_and_what():
    scene = load(light_chain())
    err = diverge(scene)
    msg = str(err)
    assert "\n" not in msg
    assert msg.startswith("/World/chain: articulation (root link /World/chain/l0) diverged at t = ")
    assert err.prim_path == "/World/chain" and err.world == 0
    assert 0.1 < err.time < 10.0 and err.time == pytest.approx(round(err.time * 60) / 60)
    assert f"t = {err.time:.6g} s:" in msg
    assert "joint velocity of /World/chain/j" in msg and "rad/s, beyond the bound of 1e+08 rad/s" in msg
    assert "physxScene:timeStepsPerSecond than 60" in msg and "solver iterations" in msg and "masses" in msg
    assert scene.diverged and scene.time == pytest.approx(10.0)  # the clock counts the steps asked for


def test_the_chain_blows_up_without_the_guard_and_in_mujoco_too(tmp_path, monkeypatch):
    """Not an artefact of the bound: with no speed bound the run goes on into inf/NaN (which the guard's
    finiteness check still stops), and MuJoCo's Euler on the same model blows up at the same step."""
    monkeypatch.chdir(tmp_path)  # MuJoCo logs its warning to MUJOCO_LOG.TXT in the working folder
    reference = load(light_chain())
    step = round(diverge(reference).time * 60)
    unbounded = load(light_chain())
    unbounded.divergence_speed = math.inf
    err = diverge(unbounded)
    assert round(err.time * 60) > step
    assert " is nan" in str(err) or " is inf" in str(err) or " is -inf" in str(err)

    mujoco = pytest.importorskip("mujoco")
    from mujoco_twin import mujoco_twin

    art = load(light_chain()).articulations[0]
    model, maps = mujoco_twin(art, 1 / 60, "euler")
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = maps.to_mujoco(art.state)
    blown = None
    for n in range(1, 601):
        mujoco.mj_step(model, data)  # MuJoCo resets the state when qacc is bad (beyond 1e10 or NaN)
        if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:
            blown = n
            break
    assert blown is not None and abs(blown - step) <= 3


def test_huge_gravity_diverges_in_the_first_step_in_every_world():
    scene = load(light_chain(gravity=1e11), worlds=3)
    err = diverge(scene, 5)
    assert err.time == pytest.approx(1 / 60) and err.world == 0
    assert "diverged at t = 0.0166667 s in world 0 of 3 (worlds 1, 2 too): joint velocity of" in str(err)


def test_explicit_damping_under_rk4_diverges_and_implicit_euler_does_not():
    """Passive joint damping is implicit in the Euler step (M + dt D) and explicit in RK4 (as MuJoCo's):
    100 N m s/rad on 1e-6 kg m^2 links is far beyond RK4's stability at 60 Hz."""
    euler = load(light_chain(damping=100.0))
    euler.step(600)
    assert np.all(np.isfinite(euler.articulations[0].state.qd))
    rk4 = load(light_chain(damping=100.0), integrator="rk4")
    err = diverge(rk4)
    assert err.time == pytest.approx(1 / 60) and str(err).startswith("/World/chain: articulation")


def test_an_undeclared_loop_with_frames_far_apart_stays_finite():
    """PGS corrects the loop's 5 m gap fully every step, moving the positions; its velocity iterations take
    the velocity back (as PhysX's always run), so the loop jumps between poses at rest instead of running
    away (it diverged while converged position passes skipped the velocity iterations)."""
    scene = load(square_loop(gap=5.0))
    scene.step(600)
    loop = scene.articulations[0]
    assert np.all(np.isfinite(loop.state.q)) and np.abs(loop.state.qd).max() < 1e-6
    closed = load(square_loop(gap=0.0))
    closed.step(600)  # the same loop with its frames together is fine
    assert np.all(np.isfinite(closed.articulations[0].state.q))


def test_a_free_body_thrown_beyond_the_bound_is_named():
    st = new_stage()
    ball = body(st, "/World/ball", pos=(0, 0, 1))
    A.set_rigid_body_velocity(ball, linear=(2e8, 0, 0))
    scene = load(st)
    err = diverge(scene, 3)
    assert str(err).startswith(
        "/World/ball: rigid body diverged at t = 0.0166667 s: root linear x velocity is 2e+08 m/s, "
        "beyond the bound of 1e+08 m/s; "
    )
    with pytest.raises(SimulationDiverged):
        scene.body_transform("/World/ball")
    scene.divergence_speed = 1e9  # a bound the user chose
    scene.reset()
    scene.step(3)
    assert scene.body_transform("/World/ball")[0] == pytest.approx(3 * 2e8 / 60)


# ---- after a divergence --------------------------------------------------------------------------------
def test_state_reads_raise_the_same_error_until_reset():
    scene = load(light_chain())
    art = scene.articulations[0]
    cache = art.create_cache()
    first = str(diverge(scene))
    reads = [
        lambda: art.state,
        lambda: art.link_transforms(),
        lambda: art.create_cache(),
        lambda: art.copy_internal_state_to_cache(cache, CacheFlag.POSITION),
        lambda: art.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY),
        lambda: art.asleep(),
        lambda: scene.step(),
        lambda: art.step(1 / 60),
        lambda: usdart.Recorder(scene).record(),
    ]
    for read in reads:
        with pytest.raises(SimulationDiverged) as info:
            read()
        assert str(info.value) == first
    art.copy_internal_state_to_cache(cache, CacheFlag.FORCE | CacheFlag.JOINT_TARGET_POSITIONS)  # controls

    scene.reset()
    fresh = load(light_chain()).articulations[0]
    assert not scene.diverged and scene.time == 0.0
    for name in ("q", "qd", "qdd", "root_pos", "root_quat", "root_vel", "link_pos", "link_rot"):
        assert np.array_equal(getattr(art.state, name), getattr(fresh.state, name)), name
    assert str(diverge(scene)) == first  # the same run again, bit for bit


def test_a_finite_state_applied_through_the_cache_recovers():
    scene = load(light_chain())
    art = scene.articulations[0]
    cache = art.create_cache()  # the authored start state
    start_q = cache.joint_position.copy()
    diverge(scene)
    cache.joint_velocity[:] = np.nan
    with pytest.raises(UsdartError):  # NaN never goes in
        art.apply_cache(cache, CacheFlag.VELOCITY)
    cache.joint_velocity[:] = 0.0
    art.apply_cache(cache, CacheFlag.POSITION)  # the velocities of the blown-up step are still there
    assert scene.diverged
    art.apply_cache(cache, CacheFlag.VELOCITY)
    assert not scene.diverged
    assert np.array_equal(art.state.q[0], start_q) and np.all(np.isfinite(art.state.qdd))
    assert np.all(np.isfinite(art.link_transforms()))
    scene.step(10)
    assert np.all(np.isfinite(art.state.q))


def test_only_the_diverged_world_stops_and_a_world_reset_recovers_it():
    scene = load(ARM, worlds=2)
    art = scene.articulations[0]
    cache = art.create_cache()
    cache.joint_velocity[1] = 1e9  # joint2 thrown beyond the bound in world 1
    art.apply_cache(cache, CacheFlag.VELOCITY, world=1)
    err = diverge(scene, 20)
    assert err.world == 1 and 0 < err.time < 20 * scene.time_step
    assert " in world 1 of 2: joint velocity of /World/robot/joints/" in str(err)
    scene.reset(world=1)
    alone = load(ARM)
    alone.step(20)
    assert np.array_equal(art.state.q[0], alone.articulations[0].state.q[0])  # world 0 ran all 20 steps
    assert np.array_equal(art.state.q[1], load(ARM).articulations[0].state.q[0])  # world 1 as authored
    scene.step(20)


# ---- stable runs: the guard changes nothing ---------------------------------------------------------------
# recorded with usdart before the guard existed (same machine, numba 0.68): the guard only reads the state;
# recorded again when unlimited revolute angles began to wrap as PhysX's (by 4 pi beyond 2 pi, not by 2 pi
# beyond pi: this pendulum swings from 1 rad to -4.14 rad), which moved the last digits (3e-11 relative)
PENDULUM_10000 = {"euler": (0.0907125885237898, 3.5329271782104907), "rk4": (0.10684005193639484, 3.4288956398862935)}


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_a_long_stable_pendulum_run_is_bit_identical_with_and_without_the_guard(integrator):
    guarded = load(pendulum(), integrator=integrator)
    unguarded = load(pendulum(), integrator=integrator)
    unguarded.divergence_speed = math.inf
    assert guarded.divergence_speed == 1e8
    energies = []
    for _ in range(100):
        guarded.step(100)
        unguarded.step(100)
        q, qd = guarded.articulations[0].state.q[0, 0], guarded.articulations[0].state.qd[0, 0]
        energies.append(0.5 * 2.5 * qd * qd + 2.0 * 10.0 * math.sin(q))  # pivot inertia 0.5 + 2 * 1^2
    a, b = guarded.articulations[0].state, unguarded.articulations[0].state
    assert np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd) and np.array_equal(a.link_pos, b.link_pos)
    assert (a.q[0, 0], a.qd[0, 0]) == pytest.approx(PENDULUM_10000[integrator], rel=1e-12, abs=1e-12)
    # bounded energy error over 10000 steps (semi-implicit Euler oscillates by ~3 % of the 40 J swing)
    assert np.ptp(energies) < (2.0 if integrator == "euler" else 1e-3)


ARM_Q_40 = [  # the arm's joint positions after 40 steps in its three worlds, recorded before the guard too
    # (and before contacts: the run switches its self-collisions off)
    [-7.01582734703755e-06, -0.43721570723855235, -1.3661153773150914e-05, -2.4487048043046804, 1.6816078577566277e-05]
    + [1.565022008245984, 0.785401546435571, 0.019660752669306454, -0.020340494618128417],
    [1.0724985963366687e-05, 0.03141177618606804, 1.1025220896427849e-05, -2.4111710993059505, 1.8792250438565505e-06]
    + [1.5698306526094712, 0.7854160379667484, 0.01941851449261542, -0.020595977741445722],
    [7.099881590546356e-06, -0.007633754479721101, 6.838179777214022e-06, -2.424194320226924, 1.420542964412397e-05]
    + [1.5693536733934519, 0.7854147383184197, 0.01929374414353107, -0.02071840586516728],
]


def test_a_multi_world_run_is_bit_identical_with_and_without_the_guard():
    runs = []
    for speed in (None, math.inf):
        scene = load(ARM, worlds=3)
        scene.contacts_enabled = False
        if speed is not None:
            scene.divergence_speed = speed
        for w, target in enumerate((-0.5, 0.3, 0.0)):
            scene.set_drive_target("/World/robot/joints/joint2", position=target, world=w)
        scene.step(40)
        runs.append(scene.articulations[0].state)
    assert np.array_equal(runs[0].q, runs[1].q) and np.array_equal(runs[0].qd, runs[1].qd)
    assert np.abs(runs[0].qd).max() > 1e-3  # still moving: a real comparison
    np.testing.assert_allclose(runs[0].q, ARM_Q_40, rtol=1e-12, atol=1e-15)


# ---- dynamics queries ------------------------------------------------------------------------------------
def test_dynamics_results_that_overflow_raise_naming_the_articulation():
    art = load(ARM).articulations[0]
    cache = art.create_cache()
    cache.joint_velocity[:] = 1e200  # finite in, inf out (velocity products)
    with pytest.raises(UsdartError, match=r"^/World/robot/base: the joint forces came out non-finite"):
        art.compute_coriolis_compensation(cache)
    cache.joint_velocity[:] = 0.0
    assert np.all(np.isfinite(art.compute_coriolis_compensation(cache)))


# ---- usdart simulate -------------------------------------------------------------------------------------
def test_usdart_simulate_exits_2_with_one_line_and_no_output(tmp_path):
    from usdart.app.cli import main

    source = tmp_path / "chain.usda"
    stage = light_chain()
    stage.GetRootLayer().Export(str(source))
    out = tmp_path / "out.usda"
    result = CliRunner().invoke(main, ["simulate", str(source), "-o", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("usdart: error: /World/chain: articulation (root link /World/chain/l0) diverged at t = ")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["chain.usda"]
