"""Stepping: the seeds' scenarios and analytic solutions (semi-implicit Euler, PhysX-style PGS rows)."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pytest
from builders import apply, body, joint, new_stage, root_api, set_attr
from pxr import Gf, Sdf, UsdPhysics

import usdart
from usdart import CacheFlag
from usdart.core.frames import quat_to_matrix

# bodies without PhysxRigidBodyAPI as UsdPhysics alone has them
# (analytic solutions and MuJoCo references have no PhysX body damping)
load = functools.partial(usdart.load, semantics="newton")

ROOT = Path(__file__).parent.parent
DEG = math.pi / 180.0


def wheel(gravity=False, inertia=0.5, mass=2.0, d=0.0, **drive):
    """A body on a revolute joint about Z at the world origin; COM at distance d along +X."""
    st = new_stage()
    scene = UsdPhysics.Scene.Get(st, "/World/scene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, -1, 0))
    scene.CreateGravityMagnitudeAttr(10.0 if gravity else 0.0)
    body(st, "/World/base", mass=1.0)
    b = body(st, "/World/wheel", pos=(d, 0, 0), mass=mass, inertia=(inertia, inertia, inertia))
    joint(st, "/World/fix", None, "/World/base", kind="fixed")
    root_api(st, "/World/fix")
    j = joint(st, "/World/hinge", "/World/base", "/World/wheel", axis="Z", lp1=(-d, 0, 0))
    if drive:
        api = UsdPhysics.DriveAPI.Apply(j, "angular")
        api.CreateTypeAttr(drive.get("type", "force"))
        api.CreateStiffnessAttr(drive.get("stiffness", 0.0) * DEG)  # USD: per degree
        api.CreateDampingAttr(drive.get("damping", 0.0) * DEG)
        api.CreateMaxForceAttr(drive.get("max_force", 1e9))
        api.CreateTargetPositionAttr(drive.get("target_position", 0.0) / DEG)
        api.CreateTargetVelocityAttr(drive.get("target_velocity", 0.0) / DEG)
    return st, b, j


def articulation(stage):
    return load(stage).articulations[0]


def test_gear_mimic_joint_keeps_the_ratio():
    scene = load(ROOT / "sample_stages/gear.usda")
    gear = scene.articulations[0]
    worst = 0.0
    for _ in range(120):
        scene.step()
        q0, q1 = gear.state.q[0]
        worst = max(worst, abs(q0 + 5.0 * q1))
    assert worst < 1e-3
    qd0, qd1 = gear.state.qd[0]
    assert abs(qd0) > 1.0 and qd1 == pytest.approx(-qd0 / 5.0, rel=1e-6)  # both turn, 5:1


def test_gravity_compensation_holds_a_pendulum():
    st, _, _ = wheel(gravity=True, d=1.0)
    pend = articulation(st)
    cache = pend.create_cache()
    cache.joint_position[0] = math.pi / 2
    cache.joint_velocity[0] = 0.0
    pend.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    cache.joint_force[:] = pend.compute_generalized_gravity_force(cache)
    pend.apply_cache(cache, CacheFlag.FORCE)
    pend.step(1 / 60, 60)
    assert pend.state.q[0, 0] == pytest.approx(math.pi / 2, abs=1e-9)
    assert pend.state.qd[0, 0] == pytest.approx(0.0, abs=1e-9)


def test_double_pendulum_with_centrifugal_torque_keeps_joint_zero_speed():
    from test_inverse_dynamics_seed import double_pendulum

    art = double_pendulum(1.0)
    cache = art.create_cache()
    cache.joint_position[:] = [0.0, math.pi / 2]
    cache.joint_velocity[:] = [1.0, 0.0]
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    centrifugal = art.compute_coriolis_and_centrifugal_force(cache)
    cache.joint_force[:] = art.compute_generalized_gravity_force(cache) + centrifugal
    art.apply_cache(cache, CacheFlag.FORCE)
    art.step(1 / 60)
    art.copy_internal_state_to_cache(cache, CacheFlag.VELOCITY)
    assert cache.joint_velocity[0] == pytest.approx(1.0, abs=1e-9)
    assert cache.joint_velocity[1] == pytest.approx(0.0, abs=1e-9)


def _loop_gap(art):
    m = art.model
    T = art.link_transforms()
    ends = []
    for side in range(2):
        link, F = m.loop_links[0, side], m.loop_frames[0, side]
        ends.append(F[:3, 3] if link < 0 else T[link, :3] + quat_to_matrix(T[link, 3:]) @ F[:3, 3])
    return float(np.linalg.norm(ends[0] - ends[1]))


def test_four_body_loop_stays_closed_while_falling():
    """The seed's plain fall: nothing turns, so the loop joint's rows hold it closed. (Flexing and spinning, PhysX
    lets it open by up to 1 % of its edge, and usdart with it: test_physx, a flexing spinning loop.)"""
    scene = load(ROOT / "sample_stages/square_loop.usda")
    loop = scene.articulations[0]
    edge = float(np.linalg.norm(loop.link_transforms()[1, :3] - loop.link_transforms()[0, :3]))
    start_height = loop.link_transforms()[0, 2]
    for _ in range(120):  # 2 s at 60 Hz
        scene.step()
        assert _loop_gap(loop) < 1e-3 * edge
    assert loop.link_transforms()[0, 2] < start_height - 15.0  # it did fall (g t^2 / 2 = 19.6 m)


def test_floating_body_moves_with_its_initial_velocity():
    scene = load(ROOT / "sample_stages/floating_body.usda")
    b = scene.articulations[0]
    p0, v0 = b.link_transforms()[0, :3].copy(), b.state.root_vel[0].copy()
    com0 = p0 + quat_to_matrix(b.link_transforms()[0, 3:]) @ b.model.com[0]
    n, dt = 60, scene.time_step
    scene.step(n)
    pose = b.link_transforms()[0]
    com = pose[:3] + quat_to_matrix(pose[3:]) @ b.model.com[0]
    # semi-implicit Euler: x_n = x_0 + v_0 t + g dt^2 n (n + 1) / 2 (exact for constant gravity)
    np.testing.assert_allclose(com, com0 + v0[:3] * n * dt + scene.gravity * dt * dt * n * (n + 1) / 2, atol=1e-9)
    np.testing.assert_allclose(b.state.root_vel[0, :3], v0[:3] + scene.gravity * n * dt, atol=1e-9)
    assert scene.time == pytest.approx(n * dt)


def test_rigid_body_velocity_limits_bring_a_fast_body_back_in_one_step():
    """PhysX's soft link velocity limit: the force -m (1 - v_max/|v|) v / dt takes an isolated body that is
    too fast back to exactly v_max in one semi-implicit step (direction kept); slower bodies are untouched."""
    from usdart import authoring

    st = new_stage()
    UsdPhysics.Scene(st.GetPrimAtPath("/World/scene")).CreateGravityMagnitudeAttr(0.0)
    fast, slow = body(st, "/World/fast", inertia=(0.1, 0.1, 0.1)), body(st, "/World/slow", pos=(5, 0, 0))
    for prim in (fast, slow):
        authoring.set_rigid_body_settings(
            prim, max_linear_velocity=2.0, max_angular_velocity=3.0, linear_damping=0.0, angular_damping=0.0
        )
    authoring.set_rigid_body_velocity(fast, linear=(3.0, 4.0, 0.0), angular=(0.0, 0.0, 6.0))
    authoring.set_rigid_body_velocity(slow, linear=(1.0, 0.0, 0.0), angular=(0.0, 2.0, 0.0))
    scene = load(st)
    fast_body, slow_body = scene._free["/World/fast"], scene._free["/World/slow"]
    scene.step(1)
    np.testing.assert_allclose(fast_body.state.root_vel[0], [1.2, 1.6, 0, 0, 0, 3.0], atol=1e-12)
    np.testing.assert_allclose(slow_body.state.root_vel[0], [1.0, 0, 0, 0, 2.0, 0], atol=1e-12)
    scene.step(10)  # at the limit: no further pull
    np.testing.assert_allclose(fast_body.state.root_vel[0], [1.2, 1.6, 0, 0, 0, 3.0], atol=1e-12)


def test_small_angle_pendulum_period():
    d, mass, inertia = 1.0, 2.0, 0.5
    st, _, _ = wheel(gravity=True, d=d, mass=mass, inertia=inertia)
    pend = articulation(st)
    # hanging down is q = -pi/2 (COM at -Y); start 0.05 rad away
    pend.state.q[0, 0] = -math.pi / 2 + 0.05
    dt, crossings, previous = 1e-3, [], pend.state.q[0, 0] + math.pi / 2
    for step in range(1, 8001):
        pend.step(dt)
        angle = pend.state.q[0, 0] + math.pi / 2
        if previous > 0 >= angle:
            crossings.append(step * dt - dt * angle / (angle - previous))
        previous = angle
    period = np.mean(np.diff(crossings))
    expected = 2 * math.pi * math.sqrt((inertia + mass * d * d) / (mass * 10.0 * d))
    assert period == pytest.approx(expected, rel=5e-3)


@pytest.mark.parametrize("integrator,bound", [("rk4", 0.01), ("euler", 0.05)])
def test_double_pendulum_energy_drift(integrator, bound):
    """Frictionless, undriven, chaotic double pendulum for 10 s at 1 kHz. Energy is measured from the
    hanging rest pose; RK4 keeps it within 1 %, semi-implicit Euler (Coriolis terms explicit, as in
    PhysX and MuJoCo's Euler) drifts by a few percent on this violent motion."""
    from test_inverse_dynamics_seed import double_pendulum

    art = double_pendulum(1.0)  # gravity 10 along -Y, links along +Y at q = 0
    art.integrator = integrator
    cache = art.create_cache()
    cache.joint_position[:] = [1.0, -0.5]
    art.apply_cache(cache, CacheFlag.POSITION)
    masses = art.model.mass

    def energy():
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
        kinetic = 0.5 * cache.joint_velocity @ art.compute_mass_matrix(cache) @ cache.joint_velocity
        heights = art.link_transforms()[:, 1]  # COMs sit at the link origins here
        return kinetic + 10.0 * float(np.dot(masses, heights))

    rest = 10.0 * float(np.dot(masses, [0.0, -1.0, -2.0]))
    e0 = energy()
    drift = 0.0
    for _ in range(100):
        art.step(1e-3, 100)
        drift = max(drift, abs(energy() - e0))
    assert drift < bound * (e0 - rest)


def test_damping_only_drive_reaches_the_target_velocity():
    st, _, _ = wheel(damping=10.0, target_velocity=2.0)
    art = articulation(st)
    art.step(1e-3, 2000)
    assert art.state.qd[0, 0] == pytest.approx(2.0, abs=1e-6)


def test_critically_damped_drive_settles_without_overshoot():
    inertia = 0.5
    stiffness = 50.0
    damping = 2 * math.sqrt(stiffness * inertia)
    st, _, _ = wheel(inertia=inertia, stiffness=stiffness, damping=damping, target_position=1.0)
    art = articulation(st)
    peak = 0.0
    for _ in range(3000):
        art.step(1e-3)
        peak = max(peak, art.state.q[0, 0])
    assert peak <= 1.0 + 1e-6  # an underdamped drive would overshoot by percents
    assert art.state.q[0, 0] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("static,moves", [(25.0, False), (15.0, True)])
def test_static_friction_holds_below_and_slides_above(static, moves):
    """A horizontal pendulum pulls with m g d = 20 N m."""
    st, _, j = wheel(gravity=True, d=1.0)
    apply(j, "PhysxJointAxisAPI:angular")
    set_attr(j, "physxJointAxis:angular:staticFrictionEffort", static)
    set_attr(j, "physxJointAxis:angular:dynamicFrictionEffort", 10.0)
    art = articulation(st)
    art.step(1e-3, 500)
    if moves:
        # sliding: gravity torque 20 (nearly constant near horizontal) minus dynamic friction 10
        expected = -0.5 * (20.0 - 10.0) / (0.5 + 2.0) * 0.5**2
        assert art.state.q[0, 0] == pytest.approx(expected, rel=0.05)
    else:
        assert art.state.q[0, 0] == pytest.approx(0.0, abs=1e-12)


def test_envelope_caps_the_speed_at_max_actuator_velocity():
    st, _, j = wheel(damping=1e4, target_velocity=100.0, max_force=50.0)
    apply(j, "PhysxDrivePerformanceEnvelopeAPI:angular")
    set_attr(j, "physxDrivePerformanceEnvelope:angular:maxActuatorVelocity", 5.0 / DEG)
    art = articulation(st)
    art.step(1e-3, 1000)
    assert art.state.qd[0, 0] == pytest.approx(5.0, rel=1e-6)


def test_envelope_torque_falls_along_the_resistance_line():
    """|tau| <= 10 - 1 * |v|: from rest the wheel follows dv/dt = (10 - v) / I."""
    inertia = 0.5
    st, _, j = wheel(inertia=inertia, damping=1e4, target_velocity=100.0, max_force=10.0)
    apply(j, "PhysxDrivePerformanceEnvelopeAPI:angular")
    set_attr(j, "physxDrivePerformanceEnvelope:angular:velocityDependentResistance", 1.0 * DEG)  # per degree/s
    art = articulation(st)
    art.step(1e-3, 1000)
    expected = 10.0 * (1.0 - math.exp(-1.0 / inertia))
    assert art.state.qd[0, 0] == pytest.approx(expected, rel=1e-2)


def test_stiff_drives_and_large_mass_ratios_stay_stable():
    st = new_stage()
    body(st, "/World/base", mass=1.0)
    joint(st, "/World/fix", None, "/World/base", kind="fixed")
    root_api(st, "/World/fix")
    parent = "/World/base"
    for i, mass in enumerate([1000.0, 1.0, 1000.0, 1.0]):  # 1:1000 along the chain
        path = f"/World/l{i}"
        body(st, path, pos=(i + 1.0, 0, 0), mass=mass, inertia=(mass * 0.1,) * 3)
        j = joint(st, f"/World/j{i}", parent, path, axis="Y", lp0=(0.5, 0, 0) if i else (1.0, 0, 0), lp1=(-0.5, 0, 0))
        api = UsdPhysics.DriveAPI.Apply(j, "angular")
        api.CreateStiffnessAttr(1e6 * DEG)  # 1e6 N m/rad
        api.CreateDampingAttr(1e3 * DEG)
        api.CreateMaxForceAttr(1e12)
        api.CreateTargetPositionAttr(20.0)
        parent = path
    art = articulation(st)
    art.sleep_threshold = 0.0  # watch the ring-down to the end
    art.step(1 / 60, 1800)  # 30 s: the lightly damped heavy links ring down
    assert np.all(np.isfinite(art.state.q)) and np.all(np.abs(art.state.qd) < 1e-6)
    # static equilibrium: each drive's spring balances gravity, k (target - q) = G(q)
    cache = art.create_cache()
    gravity = art.compute_generalized_gravity_force(cache)
    np.testing.assert_allclose(1e6 * (20 * DEG - cache.joint_position), gravity, rtol=1e-3)


@pytest.mark.parametrize("as_force", [True, False])
def test_drive_max_force_as_force_or_impulse(as_force):
    """Saturated drive: the step's velocity change is maxForce dt / I (force) or maxForce / I (impulse)."""
    inertia, max_force, dt = 0.5, 2.0, 0.01
    st, _, _ = wheel(inertia=inertia, stiffness=1e6, target_position=10.0, max_force=max_force)
    art = articulation(st)
    art.drive_limits_are_forces = as_force
    art.step(dt)
    expected = max_force * (dt if as_force else 1.0) / inertia
    assert art.state.qd[0, 0] == pytest.approx(expected, rel=1e-12)


def test_scene_drive_targets_and_worlds():
    """Three worlds with different targets step in parallel exactly as three single runs."""
    st, _, _ = wheel(inertia=0.5, stiffness=20.0, damping=3.0)
    targets = [0.3, -0.7, 1.2]
    scene = load(st, worlds=3)
    for w, target in enumerate(targets):
        scene.set_drive_target("/World/hinge", position=target, world=w)
    scene.step(200)
    for w, target in enumerate(targets):
        single = load(st)
        single.set_drive_target("/World/hinge", position=target)
        single.step(200)
        assert scene.articulations[0].state.q[w, 0] == single.articulations[0].state.q[0, 0]
        assert scene.articulations[0].state.q[w, 0] == pytest.approx(target, abs=1e-3)
    with pytest.raises(usdart.UsdartError, match="not a DOF"):
        scene.set_drive_target("/World/nothing", position=0.0)


def test_fixed_tendon_is_a_spring_between_its_joints():
    """L = q1 - q2 with stiffness k: the relative angle oscillates at sqrt(2 k / I) (equal wheels)."""
    from usdart.authoring import TendonJoint, add_fixed_tendon

    st = new_stage()
    UsdPhysics.Scene.Get(st, "/World/scene").CreateGravityMagnitudeAttr(0.0)
    body(st, "/World/base", mass=1.0)
    joint(st, "/World/fix", None, "/World/base", kind="fixed")
    root_api(st, "/World/fix")
    inertia, k = 0.5, 8.0
    hinges = []
    for i in (1, 2):
        body(st, f"/World/w{i}", pos=(i, 0, 0), mass=1.0, inertia=(inertia,) * 3)
        hinges.append(joint(st, f"/World/h{i}", "/World/base", f"/World/w{i}", axis="Z", lp0=(i, 0, 0)))
    add_fixed_tendon("spring", TendonJoint(hinges[0], 1.0, 1.0), [TendonJoint(hinges[1], -1.0, -1.0)], stiffness=k)
    art = articulation(st)
    art.state.q[0] = [0.1, -0.1]
    dt, crossings, previous = 1e-3, [], 0.2
    for step in range(1, 3001):
        art.step(dt)
        rel = art.state.q[0, 0] - art.state.q[0, 1]
        if previous > 0 >= rel:
            crossings.append(step * dt)
        previous = rel
    period = np.mean(np.diff(crossings))  # falling zero crossings are one period apart
    assert period == pytest.approx(2 * math.pi / math.sqrt(2 * k / inertia), rel=5e-3)
    assert art.state.q[0].sum() == pytest.approx(0.0, abs=1e-12)  # internal: total momentum stays zero


def test_spatial_tendon_is_a_spring_along_its_path():
    """A wheel (I about Z) tied by a spatial tendon from a point far up the Y axis to a point at radius rho
    on the wheel: small oscillations at sqrt(k / I) * D rho / sqrt(rho^2 + D^2) (rest length = start)."""
    from usdart.authoring import add_spatial_tendon_leaf, add_spatial_tendon_root

    inertia, k, rho, far = 0.5, 40.0, 0.3, 5.0
    st, wheel_prim, _ = wheel(inertia=inertia)
    base = st.GetPrimAtPath("/World/base")
    add_spatial_tendon_root(base, "cable", (0.0, far, 0.0), stiffness=k)
    add_spatial_tendon_leaf(wheel_prim, "end", base, "cable", (rho, 0.0, 0.0))
    art = articulation(st)
    art.state.q[0, 0] = 0.02
    dt, crossings, previous = 1e-3, [], 0.02
    for step in range(1, 4001):
        art.step(dt)
        q = art.state.q[0, 0]
        if previous > 0 >= q:
            crossings.append(step * dt)
        previous = q
    omega = math.sqrt(k / inertia) * far * rho / math.hypot(rho, far)
    assert np.mean(np.diff(crossings)) == pytest.approx(2 * math.pi / omega, rel=5e-3)


def test_resting_articulation_sleeps_and_wakes_on_a_new_target():
    st, _, _ = wheel(stiffness=50.0, damping=10.0, target_position=0.0)
    art = articulation(st)
    assert art.sleep_threshold == pytest.approx(5e-5)  # PhysxArticulationAPI's default
    art.step(1 / 60, 30)  # 0.5 s at rest
    assert art.asleep()
    art.set_drive_target("/World/hinge", position=0.5)
    assert not art.asleep()
    art.step(1 / 60, 60)
    assert art.state.q[0, 0] == pytest.approx(0.5, abs=0.05)  # moved after waking
    art.sleep_threshold = 0.0
    art.step(1 / 60, 600)
    assert not art.asleep()  # never sleeps with a zero threshold


def _double_pendulum_stage(second_link_free: bool):
    """Fixed base, link 1 on a hinge; link 2 on a hinge to link 1, either in the tree or (excluded from the
    articulation) a free body held by that joint as a constraint."""
    st = new_stage()
    body(st, "/World/base", mass=1.0)
    body(st, "/World/l1", pos=(1, 0, 0), mass=1.0, inertia=(0.02, 0.02, 0.02))
    body(st, "/World/l2", pos=(2, 0, 0), mass=0.5, inertia=(0.01, 0.01, 0.01))
    joint(st, "/World/fix", None, "/World/base", kind="fixed")
    root_api(st, "/World/fix")
    joint(st, "/World/j1", "/World/base", "/World/l1", axis="Y", lp1=(-1, 0, 0))
    joint(
        st,
        "/World/j2",
        "/World/l1",
        "/World/l2",
        axis="Y",
        lp0=(0.5, 0, 0),
        lp1=(-0.5, 0, 0),
        excluded=True if second_link_free else None,
    )
    return st


def test_free_body_joined_to_an_articulation_moves_like_the_tree():
    """The same double pendulum as one tree and as articulation + jointed free body: both discretisations
    are first order, so their difference after 0.5 s shrinks with the step and the joint stays closed."""
    differences, gaps = [], []
    for hz in (240, 960):
        tree = load(_double_pendulum_stage(False))
        joined = load(_double_pendulum_stage(True))
        assert joined.free_bodies == ["/World/l2"] and "/World/j2" in joined.constraints
        assert not any("/World/j2" in w for w in joined.warnings)
        for scene in (tree, joined):
            scene.time_step = 1 / hz
            scene.step(hz // 2)
        tree_pose = tree.articulations[0].link_transforms()[2]
        joined_pose = joined.body_transform("/World/l2")
        differences.append(np.linalg.norm(joined_pose[:3] - tree_pose[:3]))
        assert tree_pose[2] < -1.0  # it swung down
        l1 = joined.articulations[0].link_transforms()[1]
        gap = (l1[:3] + quat_to_matrix(l1[3:]) @ [0.5, 0, 0]) - (
            joined_pose[:3] + quat_to_matrix(joined_pose[3:]) @ [-0.5, 0, 0]
        )
        gaps.append(np.linalg.norm(gap))
    # the joint stays closed to 1e-3 of the 1 m link (the seed loop's criterion); the residual is the
    # second-order drift of a linear position update, so it falls with dt^2
    assert gaps[0] < 1e-3 and gaps[1] < gaps[0] / 8
    assert differences[1] < 1e-3 and differences[1] < differences[0] / 3


def test_jointed_members_do_not_sleep():
    """Trees joined to others (one island) never sleep: with thresholds far above their energy, the swing is the same
    as with sleeping off (a member falling asleep would zero its velocities mid-swing)."""
    poses = []
    for threshold in (0.0, 1e3):
        scene = load(_double_pendulum_stage(True))
        for member in (scene.articulations[0], scene._free["/World/l2"]):
            member.sleep_threshold = threshold
        scene.time_step = 1 / 240
        scene.step(240)
        assert not scene.articulations[0].asleep() and not scene._free["/World/l2"].asleep()
        poses.append(scene.body_transform("/World/l2"))
    np.testing.assert_array_equal(poses[0], poses[1])


def test_a_distance_joint_without_bounds_joins_nothing():
    """A distance joint with neither physics:minDistance nor maxDistance authored (both -1: PhysX enables
    neither) is simulated and holds nothing: its two bodies fall freely, each -g dt^2 (1 + ... + n) after n
    semi-implicit steps, and nothing says the joint is not simulated."""
    st = new_stage()
    body(st, "/World/a")
    body(st, "/World/b", pos=(1, 0, 0))
    joint(st, "/World/pin", "/World/a", "/World/b", kind="distance")
    scene = load(st)
    assert "/World/pin" in scene.constraints
    assert not any("/World/pin" in w for w in scene.warnings)
    scene.time_step = 0.01
    scene.step(10)
    fall = -9.81 * 0.01**2 * 55
    assert scene.body_transform("/World/a")[2] == pytest.approx(fall, rel=1e-9)
    assert scene.body_transform("/World/b")[:3] == pytest.approx([1, 0, fall], rel=1e-9)


def test_what_joints_outside_articulations_do_not_simulate_is_said():
    """Limits and drives of a joint outside the trees are rows now (tests/test_physx.py): a hinge's, a D6's
    twist and swings (limits and drives), a spherical joint's cone. A spherical joint's drives are ignored, as
    PhysX reads none on one outside an articulation: a warning names the joint."""
    st = new_stage()
    for name, x in (("a", 0), ("b", 2), ("c", 4)):
        body(st, f"/World/{name}", pos=(x, 0, 0))
    hinge = joint(st, "/World/hinge", None, "/World/a", axis="Y")
    hinge.CreateAttribute("physics:lowerLimit", Sdf.ValueTypeNames.Float).Set(-10.0)
    hinge.CreateAttribute("physics:upperLimit", Sdf.ValueTypeNames.Float).Set(10.0)
    UsdPhysics.DriveAPI.Apply(hinge, "angular").CreateStiffnessAttr(10.0)
    swung = joint(st, "/World/swung", None, "/World/b", kind="d6", lp0=(2, 0, 0))
    UsdPhysics.DriveAPI.Apply(swung, "rotY").CreateStiffnessAttr(10.0)
    spherical = joint(st, "/World/spherical", None, "/World/b", kind="spherical", axis="X", lp0=(2, 0, 0))
    UsdPhysics.DriveAPI.Apply(spherical, "rotZ").CreateStiffnessAttr(10.0)
    ball = joint(st, "/World/ball", None, "/World/c", kind="d6", lp0=(4, 0, 0))
    for axis in ("transX", "transY", "transZ"):
        UsdPhysics.LimitAPI.Apply(ball, axis).CreateLowAttr(1.0)
        UsdPhysics.LimitAPI(ball, axis).CreateHighAttr(-1.0)  # locked
    for axis in ("rotY", "rotZ"):
        UsdPhysics.LimitAPI.Apply(ball, axis).CreateLowAttr(-20.0)
        UsdPhysics.LimitAPI(ball, axis).CreateHighAttr(20.0)
    warned = [w for w in load(st).warnings if "not" in w and "simulated yet" in w or "ignored, as PhysX" in w]
    assert [w.split(":")[0] for w in warned] == ["/World/spherical"]


def test_drive_targets_of_a_joint_outside_articulations_are_set_from_python():
    """A free body hinged to the world, no gravity, driven to its authored target (0): Scene.set_drive_target
    turns it to a new one in one world of two, where it settles (the spring's rest angle, to 1e-6 rad), the
    other world staying at 0; a velocity target on a slider's damping drive sets its speed."""
    st = new_stage()
    st.GetPrimAtPath("/World/scene").CreateAttribute("physics:gravityMagnitude", Sdf.ValueTypeNames.Float).Set(0.0)
    body(st, "/World/door", pos=(1, 0, 0))
    hinge = joint(st, "/World/hinge", None, "/World/door", axis="Y", lp1=(-1, 0, 0))
    drive = UsdPhysics.DriveAPI.Apply(hinge, "angular")
    drive.CreateStiffnessAttr(1.0)  # N m / deg
    drive.CreateDampingAttr(0.2)
    body(st, "/World/cart", pos=(0, 3, 0))
    slide = joint(st, "/World/slide", None, "/World/cart", kind="prismatic", axis="X", lp0=(0, 3, 0))
    UsdPhysics.DriveAPI.Apply(slide, "linear").CreateDampingAttr(50.0)
    scene = load(st, worlds=2)
    scene.free_body("/World/cart").sleep_threshold = 0.0
    scene.step(60)
    door = scene.free_body("/World/door")
    assert door.asleep(1)  # at rest on its target: the new one must wake it
    scene.set_drive_target("/World/hinge", position=math.radians(30), world=1)
    assert not door.asleep(1) and door.asleep(0)
    door.sleep_threshold = 0.0  # settling all the way (asleep, it would stop 2.5e-4 rad short)
    scene.set_drive_target("/World/slide", velocity=0.3)
    with pytest.raises(usdart.UsdartError, match="no drive|not a DOF"):
        scene.set_drive_target("/World/nothing", position=1.0)
    scene.step(600)

    def angle(world):
        w, x, y, z = scene.body_transform("/World/door", world)[3:]
        return 2 * math.atan2(y, w)  # about Y

    assert abs(angle(0)) < 1e-9
    assert angle(1) == pytest.approx(math.radians(30), abs=1e-6)
    x0 = scene.body_transform("/World/cart")[0]
    scene.step(60)
    assert (scene.body_transform("/World/cart")[0] - x0) / (60 * scene.time_step) == pytest.approx(0.3, rel=1e-6)


def test_free_body_pinned_to_the_world_is_a_pendulum():
    """A free body held by a hinge to the world (no articulation) swings from horizontal with the period of
    a physical pendulum: T = 4 sqrt(L / g) K(sin 45 deg), L = (I + m d^2) / (m d)."""
    st = new_stage()
    mass, inertia, d = 2.0, 0.01, 1.0
    body(st, "/World/bob", pos=(d, 0, 0), mass=mass, inertia=(inertia,) * 3)
    joint(st, "/World/pin", None, "/World/bob", axis="Y", lp1=(-d, 0, 0))
    scene = load(st)
    assert scene.free_bodies == ["/World/bob"] and scene.constraints == ["/World/pin"] and not scene.warnings
    dt, crossings, previous = 1e-3, [], 0.0
    scene.time_step = dt
    for step in range(1, 3001):
        scene.step()
        x, _, z = scene.body_transform("/World/bob")[:3]
        angle = math.atan2(x, -z)  # 0 at the bottom, +-pi/2 at the horizontal the swing reaches
        if previous * angle < 0:
            crossings.append(step * dt)
        previous = angle
    length = (inertia + mass * d * d) / (mass * d)
    k_45 = 1.8540746773013719  # complete elliptic integral of the first kind, K(sin 45 deg)
    period = 4 * math.sqrt(length / 9.81) * k_45
    assert 2 * (crossings[1] - crossings[0]) == pytest.approx(period, rel=5e-3)


def _propped_arm(break_force: float | None):
    """A fixed-base arm (a 1 m link on a Y hinge at the origin, the base welded to the world) held horizontal by
    a spherical joint from the world to its tip: one of the articulation's own loop joints."""
    st = new_stage()
    body(st, "/World/robot/base")
    body(st, "/World/robot/arm", pos=(0.5, 0, 0), inertia=(0.02, 0.1, 0.1))
    root_api(st, "/World/robot")
    joint(st, "/World/robot/anchor", None, "/World/robot/base", kind="fixed")
    joint(st, "/World/robot/shoulder", "/World/robot/base", "/World/robot/arm", axis="Y", lp1=(-0.5, 0, 0))
    prop = joint(st, "/World/prop", None, "/World/robot/arm", kind="spherical", lp0=(1, 0, 0), lp1=(0.5, 0, 0))
    if break_force is not None:
        prop.CreateAttribute("physics:breakForce", Sdf.ValueTypeNames.Float).Set(break_force)
    return st


def test_an_articulation_s_loop_joint_breaks_and_the_articulation_then_moves_without_it():
    """An articulation's own loop joint breaks like any joint outside the tree: propped at its tip (carrying
    half the arm's weight, 4.9 N), the arm stays horizontal under an unbreakable prop and under one of 10 N;
    a prop of 1 N breaks on the first step, and from there the arm swings exactly as the same arm without the
    prop does from rest (one step later, to the first step's sag: 1e-6 rad)."""
    angles = {}
    for name, limit in (("unbreakable", None), ("10 N", 10.0), ("1 N", 1.0)):
        scene = load(_propped_arm(limit))
        scene.time_step = 1 / 60
        arm = scene.articulations[0]
        angles[name] = []
        for _ in range(60):
            scene.step()
            cache = arm.create_cache()
            arm.copy_internal_state_to_cache(cache)
            angles[name].append(cache.joint_position[0])
        assert scene.broken_joints() == (["/World/prop"] if name == "1 N" else [])
    assert max(abs(a) for a in angles["unbreakable"]) < 1e-6 and max(abs(a) for a in angles["10 N"]) < 1e-6
    unpropped = _propped_arm(None)
    unpropped.RemovePrim("/World/prop")
    scene = load(unpropped)
    scene.time_step = 1 / 60
    arm = scene.articulations[0]
    swing = []
    for _ in range(59):
        scene.step()
        cache = arm.create_cache()
        arm.copy_internal_state_to_cache(cache)
        swing.append(cache.joint_position[0])
    assert abs(angles["1 N"][-1]) > 1.0  # it fell
    assert np.abs(np.array(angles["1 N"][1:]) - swing).max() < 1e-6
