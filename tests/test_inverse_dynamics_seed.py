"""Seed 000's worked examples ("Inverse Dynamics, Jacobian and other Utility Computations") as tests.

The pendulum: 1 kg, centre of mass d = 1 m from the pivot, inertia about the COM m d^2 / 3, a revolute
joint about Z at the pivot. Angle 0 points the pendulum up along +Y; gravity is 10 m/s^2 along -Y.
USD stores diagonal inertia as float32, so results involving 1/3 agree to float32 precision (F32).
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import body, joint, new_stage, root_api
from pxr import Gf, UsdPhysics

import usdart
from usdart import CacheFlag

MASS, D, G = 1.0, 1.0, 10.0
I_COM = D * D * MASS / 3.0
I_PIVOT = I_COM + D * D * MASS
F32 = 1e-7


def _scene(stage):
    scene = UsdPhysics.Scene.Get(stage, "/World/scene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, -1, 0))
    scene.CreateGravityMagnitudeAttr(G)


def pendulum():
    stage = new_stage()
    _scene(stage)
    body(stage, "/World/base", mass=1.0)
    body(stage, "/World/bob", pos=(0, D, 0), mass=MASS, inertia=(I_COM, I_COM, I_COM))
    joint(stage, "/World/fix", None, "/World/base", kind="fixed")
    joint(stage, "/World/pivot", "/World/base", "/World/bob", axis="Z", lp1=(0, -D, 0))
    root_api(stage, "/World/fix")
    return usdart.load(stage, semantics="newton").articulations[0]  # the seed's bodies: undamped


def double_pendulum(length=1.0):
    """Two 1 kg links along +Y, each with its COM at its far end (point masses plus a small inertia)."""
    stage = new_stage()
    _scene(stage)
    body(stage, "/World/base", mass=1.0)
    body(stage, "/World/l1", pos=(0, length, 0), mass=1.0, inertia=(0.01, 0.01, 0.01))
    body(stage, "/World/l2", pos=(0, 2 * length, 0), mass=1.0, inertia=(0.01, 0.01, 0.01))
    joint(stage, "/World/fix", None, "/World/base", kind="fixed")
    joint(stage, "/World/j0", "/World/base", "/World/l1", axis="Z", lp1=(0, -length, 0))
    joint(stage, "/World/j1", "/World/l1", "/World/l2", axis="Z", lp1=(0, -length, 0))
    root_api(stage, "/World/fix")
    return usdart.load(stage, semantics="newton").articulations[0]  # the seed's bodies: undamped


@pytest.fixture(scope="module")
def pend():
    return pendulum()


def test_holding_torque_is_m_g_d(pend):
    cache = pend.create_cache()
    cache.joint_position[0] = np.pi / 2  # pendulum horizontal, its COM at (-d, 0, 0)
    pend.apply_cache(cache, CacheFlag.POSITION)
    torque = pend.compute_generalized_gravity_force(cache)
    # gravity pulls the COM at -x down: torque +m g d about +Z, so holding needs -m g d
    assert torque[0] == pytest.approx(-MASS * G * D, rel=1e-12)
    # applying it leaves the pendulum at rest: the joint acceleration is zero
    cache.joint_force[:] = torque
    assert pend.compute_joint_acceleration(cache)[0] == pytest.approx(0.0, abs=1e-12)


def test_generalized_external_force_counter_torque(pend):
    cache = pend.create_cache()
    angle = np.pi / 4
    cache.joint_position[0] = angle
    pend.apply_cache(cache, CacheFlag.POSITION)
    cache.external_forces[1] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0]  # force +X at the COM, torque +Z
    counter = pend.compute_generalized_external_force(cache)
    assert counter[0] == pytest.approx(np.cos(angle) * D * 1.0 - 1.0, rel=1e-12)


def test_joint_acceleration_with_and_without_cancelling_torque(pend):
    cache = pend.create_cache()
    cache.joint_position[0] = np.pi / 2
    cache.joint_velocity[0] = 0.0
    cache.joint_force[0] = 0.0
    gravity_torque = G * MASS * D
    assert pend.compute_joint_acceleration(cache)[0] == pytest.approx(gravity_torque / I_PIVOT, rel=F32)
    cache.joint_force[0] = -gravity_torque
    assert pend.compute_joint_acceleration(cache)[0] == pytest.approx(0.0, abs=1e-12)


def test_joint_force_for_target_acceleration(pend):
    cache = pend.create_cache()
    cache.joint_position[0] = 0.3  # gravity is not part of this computation, so the angle does not matter
    cache.joint_acceleration[0] = 1.0
    assert pend.compute_joint_force(cache)[0] == pytest.approx(I_PIVOT * 1.0, rel=F32)


def test_mass_matrix_of_the_pendulum_is_the_pivot_inertia(pend):
    cache = pend.create_cache()
    assert pend.compute_generalized_mass_matrix(cache) == pytest.approx(np.array([[I_PIVOT]]), rel=F32)


def test_double_pendulum_centrifugal_torque():
    length = 1.0
    art = double_pendulum(length)
    cache = art.create_cache()
    cache.joint_position[:] = [0.0, np.pi / 2]  # second link perpendicular to the first
    cache.joint_velocity[:] = [1.0, 0.0]
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    torque = art.compute_coriolis_and_centrifugal_force(cache)
    # link 2's COM (point mass at distance l from joint 1, perpendicular to link 1) circles the pivot:
    # holding it needs m w^2 * l * l about joint 1, and no torque at joint 0 (force through the pivot)
    assert torque[1] == pytest.approx(1.0 * 1.0**2 * length * length, rel=1e-12)
    assert torque[0] == pytest.approx(0.0, abs=1e-12)
    # with gravity compensation added, the forward dynamics gives zero accelerations
    gravity = art.compute_generalized_gravity_force(cache)
    cache.joint_force[:] = gravity + torque
    np.testing.assert_allclose(art.compute_joint_acceleration(cache), 0.0, atol=1e-12)


def test_pendulum_jacobian_entries(pend):
    cache = pend.create_cache()
    cache.joint_position[0] = np.pi / 2  # pointing along -X, away from the pivot
    pend.apply_cache(cache, CacheFlag.POSITION)
    rows, cols = pend.compute_dense_jacobian(cache)
    assert (rows, cols) == (6, 1)  # fixed base: one moving link, one DOF
    link = pend.link_index("/World/bob")
    J = cache.dense_jacobian
    assert J[(link - 1) * 6 + 1, 0] == pytest.approx(-D, rel=1e-12)  # dvy/dw
    assert J[(link - 1) * 6 + 5, 0] == pytest.approx(1.0, rel=1e-12)  # dwz/dw
    np.testing.assert_allclose(np.delete(J[:, 0], [1, 5]), 0.0, atol=1e-12)


def test_pack_and_unpack_a_revolute_about_z(pend):
    maximal = pend.unpack_joint_data([0.5])
    expected = np.zeros(6)
    expected[2] = 0.5  # eSWING2: rotation about Z
    np.testing.assert_array_equal(maximal, expected)
    packed = np.zeros(6)
    packed[2] = 0.5
    np.testing.assert_array_equal(pend.pack_joint_data(packed), [0.5])
