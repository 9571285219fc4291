"""Per-world parameters: a batch of worlds with different stages or parameters moves exactly as the same
worlds run one by one, and a drive per world follows its own second-order response."""

from __future__ import annotations

import numpy as np
import pytest
from builders import apply, body, joint, new_stage, root_api, set_attr
from pxr import UsdPhysics

import usdart
from usdart.core.kernels.world import world_model
from usdart.core.model import batch_model, parameter_tables
from usdart.errors import UsdartError


def pendulum(length=1.0, mass=1.0, gravity=9.81):
    """A bob on a hinge about y, hanging from a fixed base `length` away along x (starts horizontal)."""
    stage = new_stage()
    UsdPhysics.Scene.Get(stage, "/World/scene").CreateGravityMagnitudeAttr(gravity)
    body(stage, "/World/base", mass=1.0)
    body(stage, "/World/bob", pos=(length, 0, 0), mass=mass, inertia=(0.01 * mass,) * 3)
    joint(stage, "/World/fix", None, "/World/base", kind="fixed")
    joint(stage, "/World/hinge", "/World/base", "/World/bob", axis="Y", lp1=(-length, 0, 0))
    root_api(stage, "/World/base")
    return stage


def slider(stiffness=100.0, damping=2.0, mass=1.0):
    """A body on a prismatic joint along x driven to 0.1 m, no gravity: m x'' + d x' + k x = k 0.1."""
    stage = new_stage()
    UsdPhysics.Scene.Get(stage, "/World/scene").CreateGravityMagnitudeAttr(0.0)
    body(stage, "/World/base", mass=1.0)
    body(stage, "/World/slide", mass=mass, inertia=(0.1, 0.1, 0.1))
    joint(stage, "/World/fix", None, "/World/base", kind="fixed")
    prim = joint(stage, "/World/drive", "/World/base", "/World/slide", kind="prismatic", axis="X")
    drive = UsdPhysics.DriveAPI.Apply(prim, "linear")
    drive.CreateStiffnessAttr(stiffness)
    drive.CreateDampingAttr(damping)
    drive.CreateTargetPositionAttr(0.1)
    root_api(stage, "/World/base")
    return stage


def joint_positions(scene):
    return scene.articulations[0].state.q[:, 0].copy()


def test_a_batch_of_pendulums_of_different_lengths_and_masses_moves_as_each_alone():
    specs = [(0.5, 1.0), (1.0, 2.0), (1.5, 0.5), (0.8, 3.0)]
    batch = usdart.batch([usdart.load(pendulum(*p)) for p in specs])
    alone = [usdart.load(pendulum(*p)) for p in specs]
    for _ in range(3):
        batch.step(60)
        for scene in alone:
            scene.step(60)
        expected = [joint_positions(scene)[0] for scene in alone]
        assert np.array_equal(joint_positions(batch), expected)  # bit for bit
    assert len(set(np.round(joint_positions(batch), 6))) == len(specs)  # four different motions
    batch.reset()  # each world back to its own start: the same run again
    batch.step(180)
    assert np.array_equal(joint_positions(batch), expected)


def test_gravity_per_world_matches_stages_with_that_gravity():
    gravities = np.array([9.81, 3.71, 1.62])
    scene = usdart.load(pendulum(), worlds=3)
    scene.set_parameter("/World/scene", "gravity", gravities[:, None] * [0, 0, -1])
    scene.step(120)
    for w, g in enumerate(gravities):
        alone = usdart.load(pendulum(gravity=g))
        alone.step(120)
        assert joint_positions(scene)[w] == pytest.approx(joint_positions(alone)[0], abs=1e-12)


def test_link_mass_per_world_scales_inertia_with_it():
    masses = np.array([0.5, 1.0, 4.0])
    scene = usdart.load(pendulum(), worlds=3)
    scene.set_parameter("/World/bob", "mass", masses)
    assert np.array_equal(scene.parameter("/World/bob", "mass"), masses)
    scene.step(120)
    for w, m in enumerate(masses):
        alone = usdart.load(pendulum(mass=m))  # mass m, inertia 0.01 m as authored
        alone.step(120)
        assert joint_positions(scene)[w] == pytest.approx(joint_positions(alone)[0], abs=1e-12)


def test_drive_stiffness_per_world_follows_the_analytic_second_order_response():
    stiffness = np.array([25.0, 100.0, 400.0, 1600.0])
    damping, mass, target = 2.0, 1.0, 0.1
    scene = usdart.load(slider(), worlds=len(stiffness))
    scene.time_step = 1 / 4000
    scene.set_parameter("/World/drive", "stiffness", stiffness)
    times = np.arange(1, 4001) * scene.time_step
    x = np.zeros((len(times), len(stiffness)))
    for i in range(len(times)):
        scene.step()
        x[i] = joint_positions(scene)
    zeta = damping / (2 * np.sqrt(stiffness * mass))  # underdamped in every world
    omega = np.sqrt(stiffness / mass)
    omega_d = omega * np.sqrt(1 - zeta**2)
    t = times[:, None]
    exact = target * (
        1 - np.exp(-zeta * omega * t) * (np.cos(omega_d * t) + zeta / np.sqrt(1 - zeta**2) * np.sin(omega_d * t))
    )
    # the implicit step lags the continuous motion by O(omega dt): 1e-3 m of 0.1 m at the stiffest world
    assert np.abs(x - exact).max(axis=0) == pytest.approx(0, abs=1.2e-3)
    assert np.abs(x - exact).max(axis=0)[0] < 1e-4
    # each world keeps its own frequency: the first zero crossing of the error is at pi / omega_d
    for w in range(len(stiffness)):
        overshoot = x[:, w] - target
        first_peak = times[np.argmax(overshoot[: int(2 * np.pi / omega_d[w] / scene.time_step)])]
        assert first_peak == pytest.approx(np.pi / omega_d[w], rel=0.01)


def test_per_world_drive_targets_and_friction_round_trip():
    stage = slider()
    prim = stage.GetPrimAtPath("/World/drive")
    apply(prim, "PhysxJointAxisAPI:linear")
    set_attr(prim, "physxJointAxis:linear:staticFrictionEffort", 0.5)
    set_attr(prim, "physxJointAxis:linear:dynamicFrictionEffort", 0.5)
    scene = usdart.load(stage, worlds=2)
    scene.set_parameter("/World/drive", "target_position", [0.2, -0.3])
    assert np.array_equal(scene.parameter("/World/drive", "target_position"), [0.2, -0.3])
    assert np.array_equal(scene.articulations[0].control.target_position[:, 0], [0.2, -0.3])
    assert np.array_equal(scene.parameter("/World/drive", "static_friction"), [0.5, 0.5])
    scene.set_parameter("/World/drive", "static_friction", 2.0)  # one value for every world
    assert np.array_equal(scene.parameter("/World/drive", "static_friction"), [2.0, 2.0])


@pytest.mark.parametrize(
    ("path", "name", "values", "message"),
    [
        ("/World/drive", "stiffness", [1.0, 2.0, 3.0], "one value per world"),
        ("/World/drive", "stiffness", [1.0, np.nan], "must be finite"),
        ("/World/drive", "damping", [1.0, -2.0], "at least 0"),
        ("/World/drive", "max_force", [np.inf, -np.inf], "must be finite"),
        ("/World/slide", "mass", [1.0, 0.0], "above 0"),
        ("/World/drive", "static_friction", [1.0, 1.0], "needs joint friction"),
        ("/World/drive", "springiness", [1.0, 1.0], "unknown parameter"),
        ("/World/nothing", "stiffness", [1.0, 1.0], "not a joint DOF"),
        ("/World/nothing", "mass", [1.0, 1.0], "not a simulated rigid body"),
        ("/World/drive", "armature", "soft", "must be numbers"),
    ],
)
def test_bad_parameter_values_are_refused_naming_the_prim(path, name, values, message):
    scene = usdart.load(slider(), worlds=2)
    before = [t.copy() for t in parameter_tables(scene._engine.batched)]
    with pytest.raises(UsdartError, match=message) as error:
        scene.set_parameter(path, name, values)
    assert path in str(error.value)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(before, parameter_tables(scene._engine.batched)))


def test_stages_of_different_structure_cannot_share_a_batch():
    other = slider()
    joint(other, "/World/extra", "/World/base", "/World/slide", kind="fixed", excluded=True)
    with pytest.raises(UsdartError, match="cannot be world 1"):
        usdart.batch([usdart.load(slider()), usdart.load(other)])


def test_a_world_of_the_batched_model_has_the_model_types():
    """world_model slices every float table (a table it forgot would keep its world axis)."""
    model = usdart.load(pendulum())._engine.model
    one = world_model.py_func(batch_model(model, 3), 1)
    tables, batched = parameter_tables(model), parameter_tables(one)
    assert len(tables) == len(batched) > 10
    for a, b in zip(tables, batched):
        assert a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
