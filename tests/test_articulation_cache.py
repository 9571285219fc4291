"""The articulation cache: copy/apply semantics, derived link data, floating-base forms, refusals."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from pxr import Sdf
from test_inverse_dynamics_seed import MASS, D, G, pendulum

import usdart
from usdart import CacheFlag, UsdartError
from usdart.core.frames import quat_to_matrix

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def panda():
    return usdart.load(DATA / "panda/panda.usda").articulations[0]


@pytest.fixture(scope="module")
def ant_free():
    return usdart.load(DATA / "ant_free/ant_free.usda").articulations[0]


def test_initial_state_is_the_authored_joint_state():
    arm = usdart.load(ROOT / "sample_stages/arm_with_gripper.usda").articulations[0]
    cache = arm.create_cache()
    np.testing.assert_allclose(cache.joint_position, [d.position for d in arm.desc.dofs])
    assert np.abs(cache.joint_position).max() > 0.1  # the sample authors a ready pose


def test_apply_then_copy_round_trips_and_moves_links(panda):
    cache = panda.create_cache()
    before = panda.link_transforms()
    cache.joint_position[:] = np.linspace(-0.5, 0.5, panda.dof_count)
    cache.joint_velocity[:] = 0.25
    cache.joint_force[:] = 1.5
    cache.joint_target_position[:] = 0.1
    cache.joint_target_velocity[:] = -0.2
    panda.apply_cache(cache, CacheFlag.ALL)
    fresh = panda.create_cache()
    for name in ("joint_position", "joint_velocity", "joint_force", "joint_target_position", "joint_target_velocity"):
        np.testing.assert_array_equal(getattr(fresh, name), getattr(cache, name))
    after = panda.link_transforms()
    np.testing.assert_array_equal(after[0], before[0])  # the fixed root stays
    assert np.abs(after[1:, :3] - before[1:, :3]).max() > 1e-3
    # only the flagged parts are applied
    cache.joint_position[:] = 0.0
    panda.apply_cache(cache, CacheFlag.VELOCITY)
    panda.copy_internal_state_to_cache(fresh, CacheFlag.POSITION)
    assert np.abs(fresh.joint_position).max() == pytest.approx(0.5)


def test_link_velocities_equal_jacobian_times_velocities(ant_free):
    rng = np.random.default_rng(3)
    cache = ant_free.create_cache()
    cache.joint_position[:] = rng.uniform(-0.5, 0.5, ant_free.dof_count)
    cache.joint_velocity[:] = rng.normal(size=ant_free.dof_count)
    cache.root_linear_velocity[:] = rng.normal(size=3)
    cache.root_angular_velocity[:] = rng.normal(size=3)
    ant_free.apply_cache(cache, CacheFlag.ALL)
    ant_free.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)
    ant_free.compute_dense_jacobian(cache)
    nu = np.concatenate([cache.root_linear_velocity, cache.root_angular_velocity, cache.joint_velocity])
    np.testing.assert_allclose(cache.link_velocity.reshape(-1), cache.dense_jacobian @ nu, atol=1e-12)
    # the root link reports the root velocity it was given (its COM velocity)
    np.testing.assert_allclose(cache.link_velocity[0], nu[:6], atol=1e-12)


def test_link_accelerations_are_the_derivative_of_link_velocities():
    """The last step's classical COM accelerations, at the state it started from with its accelerations
    (dv/dt), equal d/dt of the COM velocities along that motion (finite difference)."""
    panda = usdart.load(DATA / "panda/panda.usda").articulations[0]
    rng = np.random.default_rng(4)
    q, qd, tau = rng.uniform(-1, 1, (3, panda.dof_count))
    start = panda.create_cache()
    start.joint_position[:], start.joint_velocity[:], start.joint_force[:] = q, qd, 10 * tau
    panda.apply_cache(start, CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.FORCE)
    panda.step(1e-3)
    cache = panda.create_cache()
    panda.copy_internal_state_to_cache(cache, CacheFlag.LINK_ACCELERATION | CacheFlag.ACCELERATION)
    qdd = cache.joint_acceleration.copy()
    assert np.abs(qdd).max() > 1.0
    dt = 1e-6

    def velocities(t):
        cache = panda.create_cache()
        cache.joint_position[:] = q + qd * t + 0.5 * qdd * t * t
        cache.joint_velocity[:] = qd + qdd * t
        panda.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
        panda.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)
        return cache.link_velocity.copy()

    numeric = (velocities(dt) - velocities(-dt)) / (2 * dt)
    np.testing.assert_allclose(cache.link_acceleration, numeric, rtol=1e-5, atol=1e-6)  # up to 1e4 m/s^2


def test_incoming_joint_force_of_a_resting_pendulum():
    """Horizontal pendulum held still: the pivot carries the weight m g (up) and torque m g d."""
    pend = pendulum()
    cache = pend.create_cache()
    cache.joint_position[0] = np.pi / 2  # COM at (-d, 0, 0); joint frame axes = world axes here
    pend.apply_cache(cache, CacheFlag.POSITION)
    pend.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE)
    link = pend.link_index("/World/bob")
    R_joint = quat_to_matrix(pend.link_transforms()[link, 3:]) @ pend.model.child_frame_rot[link]
    force_world = R_joint @ cache.link_incoming_joint_force[link, :3]
    torque_world = R_joint @ cache.link_incoming_joint_force[link, 3:]
    np.testing.assert_allclose(force_world, [0, MASS * G, 0], atol=1e-9)
    np.testing.assert_allclose(torque_world, [0, 0, -MASS * G * D], atol=1e-9)
    np.testing.assert_array_equal(cache.link_incoming_joint_force[0], 0.0)


def test_incoming_joint_force_of_a_swinging_pendulum_is_m_a_less_gravity():
    """A swinging pendulum's pivot is the only thing besides gravity acting on its bob, so after a step the
    incoming joint force (turned into world axes with the bob's pose after the step) equals m a - m g, a the
    bob's COM acceleration from a finite difference of its COM velocity over the step (dt = 1e-5 s: the
    difference is the step's average, 2e-4 N off the step-start value here; 2e-3 N at dt = 1e-4 s)."""
    pend = pendulum()
    cache = pend.create_cache()
    cache.joint_position[0], cache.joint_velocity[0] = 1.0, 2.0
    pend.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    bob, dt = pend.link_index("/World/bob"), 1e-5
    pend.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)
    before = cache.link_velocity[bob, :3].copy()
    pend.step(dt)
    pend.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY | CacheFlag.LINK_INCOMING_JOINT_FORCE)
    acceleration = (cache.link_velocity[bob, :3] - before) / dt
    R = quat_to_matrix(pend.link_transforms()[bob, 3:]) @ pend.model.child_frame_rot[bob]
    force = R @ cache.link_incoming_joint_force[bob, :3]
    np.testing.assert_allclose(force, MASS * acceleration - MASS * np.array([0.0, -G, 0.0]), atol=1e-3)
    assert np.linalg.norm(MASS * acceleration) > 5.0  # swinging: the pivot carries more than the weight's share


@pytest.mark.filterwarnings("ignore:compute_mass_matrix now follows PhysX 5:FutureWarning")
def test_floating_base_joint_space_forms(ant_free):
    rng = np.random.default_rng(5)
    cache = ant_free.create_cache()
    cache.joint_position[:] = rng.uniform(-0.5, 0.5, ant_free.dof_count)
    cache.joint_velocity[:] = 0.0
    cache.root_linear_velocity[:] = cache.root_angular_velocity[:] = 0.0
    ant_free.apply_cache(cache, CacheFlag.ALL)
    # in free fall, uniform gravity needs no joint forces
    np.testing.assert_allclose(ant_free.compute_generalized_gravity_force(cache), 0.0, atol=1e-12)
    # the root holding wrench is the weight, acting at the articulation COM
    comp = ant_free.compute_gravity_compensation(cache)
    assert comp.shape == (6 + ant_free.dof_count,)
    np.testing.assert_allclose(comp[:3], -ant_free.model.mass.sum() * ant_free.model.gravity, rtol=1e-12)
    # joint forces for target accelerations with a free root reproduce them through forward dynamics
    # (PhysX's computeJointForce leaves armature out; forward dynamics has it)
    target = rng.normal(size=ant_free.dof_count)
    cache.joint_acceleration[:] = target
    tau = ant_free.compute_joint_force(cache)
    cache.joint_force[:] = tau + ant_free.model.armature * target
    np.testing.assert_allclose(ant_free.compute_joint_acceleration(cache), target, atol=1e-9)
    # the joint-space mass matrix is the Schur complement of the generalized one: same map qdd -> tau
    M = ant_free.compute_generalized_mass_matrix(cache)
    np.testing.assert_allclose(M @ target, tau, atol=1e-9)
    assert ant_free.compute_mass_matrix(cache).shape == (6 + ant_free.dof_count,) * 2


def test_caches_of_other_structures_are_refused(panda, ant_free):
    with pytest.raises(UsdartError, match="cache was created for"):
        panda.apply_cache(ant_free.create_cache(), CacheFlag.POSITION)
    with pytest.raises(UsdartError, match="cache was created for"):
        panda.compute_generalized_mass_matrix(ant_free.create_cache())


def test_same_structure_caches_are_shared():
    """Two copies of one robot share caches (PhysX: 'same structure')."""
    a = usdart.load(DATA / "panda/panda.usda").articulations[0]
    b = usdart.load(DATA / "panda/panda.usda").articulations[0]
    cache = a.create_cache()
    cache.joint_position[:] = 0.3
    b.apply_cache(cache, CacheFlag.POSITION)
    assert b.create_cache().joint_position == pytest.approx(np.full(b.dof_count, 0.3))


def test_bad_values_are_refused(panda):
    cache = panda.create_cache()
    cache.joint_position[0] = np.nan
    with pytest.raises(UsdartError, match="joint_position contains NaN"):
        panda.apply_cache(cache, CacheFlag.POSITION)
    cache = panda.create_cache()
    cache.joint_velocity[2] = np.inf
    with pytest.raises(UsdartError, match="joint_velocity contains NaN"):
        panda.compute_coriolis_and_centrifugal_force(cache)
    cache = panda.create_cache()
    cache.root_transform[3:] = 0.0
    with pytest.raises(UsdartError, match="not a rotation"):
        panda.apply_cache(cache, CacheFlag.ROOT_TRANSFORM)
    cache.root_transform[3:] = 1e200  # finite, but its norm overflows
    with pytest.raises(UsdartError, match="not a rotation"):
        panda.compute_generalized_mass_matrix(cache)


def test_state_inputs_assigned_whole_are_copied_in_and_checked(panda, ant_free):
    """Assigning a cache's joint or root state copies into the cache's own array: the compute functions see it
    exactly as an in-place write (whose forces the inverse-dynamics tests check against Pinocchio)."""
    q = np.linspace(-0.5, 0.5, panda.dof_count)
    in_place, assigned = panda.create_cache(), panda.create_cache()
    in_place.joint_position[:] = q
    assigned.joint_position = q.tolist()
    assert np.array_equal(
        panda.compute_generalized_gravity_force(assigned), panda.compute_generalized_gravity_force(in_place)
    )
    with pytest.raises(UsdartError, match=r"panda_link0: joint_position: expected 9 values, got 3"):
        assigned.joint_position = [0.0, 0.0, 0.0]
    with pytest.raises(UsdartError, match="root_transform takes numbers"):
        assigned.root_transform = "upright"
    # a floating root's velocities and pose reach the dynamics the same way; bad ones are named
    cache = ant_free.create_cache()
    cache.root_angular_velocity = [0.0, 0.0, 3.0]
    cache.root_transform = [0.0, 0.0, 0.5, 2.0, 0.0, 0.0, 0.0]  # normalised when read
    reference = ant_free.create_cache()
    reference.root_angular_velocity[2] = 3.0
    reference.root_transform[:] = [0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert np.array_equal(
            ant_free.compute_coriolis_compensation(cache), ant_free.compute_coriolis_compensation(reference)
        )
    cache.root_linear_velocity[1] = np.nan
    with pytest.raises(UsdartError, match="root_linear_velocity contains NaN"):
        ant_free.compute_coriolis_and_centrifugal_force(cache)


def test_spherical_positions_outside_pi_are_refused():
    ragdoll = usdart.load(ROOT / "sample_stages/ragdoll.usda").articulations[0]
    cache = ragdoll.create_cache()
    cache.joint_position[0] = 3.5
    with pytest.raises(UsdartError, match=r"must lie in \[-pi, pi\]"):
        ragdoll.apply_cache(cache, CacheFlag.POSITION)


def test_spherical_positions_round_trip_through_the_quaternion():
    ragdoll = usdart.load(ROOT / "sample_stages/ragdoll.usda").articulations[0]
    cache = ragdoll.create_cache()
    rng = np.random.default_rng(6)
    cache.joint_position[:] = rng.uniform(-1.0, 1.0, ragdoll.dof_count)
    ragdoll.apply_cache(cache, CacheFlag.POSITION)
    np.testing.assert_allclose(ragdoll.create_cache().joint_position, cache.joint_position, atol=1e-12)


def test_centroidal_matrix_needs_a_floating_base(panda):
    with pytest.raises(UsdartError, match="floating base"):
        panda.compute_centroidal_momentum_matrix(panda.create_cache())


def test_physx5_names_and_shapes_of_the_mass_matrix_and_coriolis_forces(ant_free, panda):
    """PhysX 5: computeMassMatrix and computeCoriolisCompensation give the generalized (6 + n) forms of a floating
    base, computeGeneralizedMassMatrix and computeCoriolisAndCentrifugalForce the joint-space ones. For one
    release usdart says so when the changed names meet a floating base, and compute_coriolis_force (the old
    name of the generalized Coriolis forces) still answers, deprecated."""
    cache = ant_free.create_cache()
    cache.joint_velocity[:] = np.linspace(-1.0, 1.0, ant_free.dof_count)
    cache.root_angular_velocity[:] = [0.3, -0.2, 0.5]
    n = ant_free.dof_count
    with pytest.warns(FutureWarning, match="compute_generalized_mass_matrix"):
        H = ant_free.compute_mass_matrix(cache)
    with pytest.warns(FutureWarning, match="compute_coriolis_and_centrifugal_force"):
        c = ant_free.compute_coriolis_compensation(cache)
    assert H.shape == (6 + n, 6 + n) and c.shape == (6 + n,)
    assert np.array_equal(cache.mass_matrix, H) and np.array_equal(cache.coriolis_force, c)
    with pytest.warns(DeprecationWarning, match="compute_coriolis_compensation"):
        assert np.array_equal(ant_free.compute_coriolis_force(cache), c)
    # the joint-space forms are the root-free Schur complements of the generalized ones
    M = ant_free.compute_generalized_mass_matrix(cache)
    np.testing.assert_allclose(M, H[6:, 6:] - H[6:, :6] @ np.linalg.solve(H[:6, :6], H[:6, 6:]), atol=1e-12)
    joint = ant_free.compute_coriolis_and_centrifugal_force(cache)
    np.testing.assert_allclose(joint, c[6:] - H[6:, :6] @ np.linalg.solve(H[:6, :6], c[:6]), atol=1e-12)
    fixed = panda.create_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fixed base gets the same either way: no warning
        assert np.array_equal(panda.compute_mass_matrix(fixed), panda.compute_generalized_mass_matrix(fixed))


def test_physx5_cache_flags_root_accelerations_and_release(ant_free):
    """PxArticulationCacheFlag values (eJOINT_SOLVER_FORCES = 1 << 9); reading the root velocities reads its
    accelerations too (PxArticulationRootLinkData); a released cache is refused."""
    assert (CacheFlag.JOINT_SOLVER_FORCES, CacheFlag.LINK_INCOMING_JOINT_FORCE) == (1 << 9, 1 << 10)
    scene = usdart.load(DATA / "ant_free/ant_free.usda")
    scene.contacts_enabled = False
    ant = scene.articulations[0]
    scene.time_step = dt = 1 / 60
    scene.step()
    cache = ant.create_cache()
    ant.copy_internal_state_to_cache(cache, CacheFlag.ROOT_VELOCITIES)
    before = np.concatenate([cache.root_linear_velocity, cache.root_angular_velocity])
    scene.step()
    ant.copy_internal_state_to_cache(cache, CacheFlag.ROOT_VELOCITIES)
    after = np.concatenate([cache.root_linear_velocity, cache.root_angular_velocity])
    acceleration = np.concatenate([cache.root_linear_acceleration, cache.root_angular_acceleration])
    np.testing.assert_allclose(acceleration, (after - before) / dt, rtol=1e-9, atol=1e-9)  # the step's
    assert np.abs(acceleration).max() > 1.0
    cache.release()
    assert cache.released and "released" in repr(cache)
    with pytest.raises(UsdartError, match="released"):
        ant.copy_internal_state_to_cache(cache)
    with pytest.raises(UsdartError, match="released"):
        ant.compute_generalized_gravity_force(cache)


def test_incoming_joint_forces_replay_the_last_step_as_pinocchio_does():
    """After a step of the Panda (random state, joint forces), each joint's incoming force equals Pinocchio's
    transmitted force (RNEA at the state the step started from, with the step's accelerations dv/dt, gravity
    and the link forces the step applied: PhysX's link damping), to 1e-9 in world axes: usdart reports it in
    the child joint frame at the link's pose after the step, Pinocchio in the joint frame it started from."""
    import pinocchio as pin
    from pin_reference import PinTwin

    panda = usdart.load(DATA / "panda/panda.usda").articulations[0]
    rng = np.random.default_rng(11)
    start = panda.create_cache()
    start.joint_position[:], start.joint_velocity[:] = rng.uniform(-1, 1, (2, panda.dof_count))
    start.joint_force[:] = rng.uniform(-20, 20, panda.dof_count)
    panda.apply_cache(start, CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.FORCE)
    m = panda.model
    before = panda.link_transforms()
    com = before[:, :3] + np.einsum("lij,lj->li", [quat_to_matrix(x[3:]) for x in before], m.com)
    panda.step(1 / 240)
    cache = panda.create_cache()
    panda.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE | CacheFlag.ACCELERATION)
    wrench = panda._engine.state.wrench_start[0]  # the step's link forces [force; torque about the COM], world
    assert np.abs(wrench).max() > 1e-3  # the links' damping torques: far above the 1e-9 compared
    twin = PinTwin(m)
    q0 = twin.q(start.joint_position, panda._engine.state.joint_quat_start[0], np.zeros(3), [1, 0, 0, 0])
    pin.forwardKinematics(twin.model, twin.data, q0)
    fext = [pin.Force.Zero() for _ in range(twin.model.njoints)]
    for link in range(m.n_links):
        j = twin._joint_of[link]
        frame = twin.data.oMi[j]
        force, torque = wrench[link, :3], wrench[link, 3:] + np.cross(com[link] - frame.translation, wrench[link, :3])
        fext[j] += pin.Force(frame.rotation.T @ force, frame.rotation.T @ torque)
    v0, a = twin.to_pin(start.joint_velocity), twin.to_pin(cache.joint_acceleration)
    pin.rnea(twin.model, twin.data, q0, v0, a, fext)
    after = panda.link_transforms()
    compared = 0
    for link in range(1, m.n_links):
        if m.dof_start[link + 1] == m.dof_start[link]:
            continue  # a fixed joint: Pinocchio merges the link into its parent's body
        f = twin.data.f[twin._joint_of[link]]
        R_pin = twin.data.oMi[twin._joint_of[link]].rotation
        R_now = quat_to_matrix(after[link, 3:]) @ m.child_frame_rot[link]
        np.testing.assert_allclose(R_now @ cache.link_incoming_joint_force[link, :3], R_pin @ f.linear, atol=1e-9)
        np.testing.assert_allclose(R_now @ cache.link_incoming_joint_force[link, 3:], R_pin @ f.angular, atol=1e-9)
        compared += 1
    assert compared == panda.dof_count


def test_incoming_joint_force_counts_the_link_forces_of_the_step():
    """A link force that carries the bob's weight during a step: the pivot carries nothing (before the link
    forces of the step were counted it reported the weight m g)."""
    pend = pendulum()
    cache = pend.create_cache()
    cache.joint_position[0] = np.pi / 2
    pend.apply_cache(cache, CacheFlag.POSITION)
    link = pend.link_index("/World/bob")
    cache.link_force[link] = [0.0, MASS * G, 0.0]  # gravity is -y here
    pend.apply_cache(cache, CacheFlag.LINK_FORCE)
    pend.step(1e-3)
    pend.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE | CacheFlag.VELOCITY)
    assert abs(cache.joint_velocity[0]) < 1e-12
    np.testing.assert_allclose(cache.link_incoming_joint_force[link], 0.0, atol=1e-9)


def _supported_link(tmp_path, sleeps: bool):
    """A link hinged at one end and resting on a box support under its centre of mass; an articulation that
    never sleeps unless `sleeps`. Returns (scene, articulation)."""
    from builders import body, joint, new_stage, root_api
    from contact_stages import collider

    stage = new_stage()
    body(stage, "/World/arm/base", pos=(0, 0, 1))
    body(stage, "/World/arm/link", pos=(1, 0, 1), mass=1.0)
    joint(stage, "/World/arm/anchor", None, "/World/arm/base", kind="fixed", lp0=(0, 0, 1))
    joint(stage, "/World/arm/hinge", "/World/arm/base", "/World/arm/link", axis="Y", lp1=(-1, 0, 0))
    root_api(stage, "/World/arm")
    if not sleeps:
        arm = stage.GetPrimAtPath("/World/arm")
        arm.AddAppliedSchema("PhysxArticulationAPI")
        arm.CreateAttribute("physxArticulation:sleepThreshold", Sdf.ValueTypeNames.Float).Set(0.0)
    collider(stage, "/World/arm/link/box", "box", 0.2)
    collider(stage, "/World/support", "box", 0.2, pos=(1, 0, 0.8))  # its top at the link box's bottom
    path = str(tmp_path / "supported.usda")
    stage.GetRootLayer().Export(path)
    scene = usdart.load(path)
    return scene, scene.articulations[0]


def _hinge_and_support(scene, arm, cache) -> tuple[np.ndarray, np.ndarray]:
    """The hinge's incoming force and the support's force on the link, world axes, of the last step."""
    arm.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE)
    contacts = scene.contacts(0)
    on_a = contacts.normal_impulse[:, None] * contacts.normal + contacts.friction_impulse  # on each pair's side A
    sign = np.where(np.array(contacts.body0) == "/World/arm/link", 1.0, -1.0)
    support = (sign[:, None] * on_a).sum(axis=0) / scene.time_step
    R = quat_to_matrix(arm.link_transforms()[1, 3:]) @ arm.model.child_frame_rot[1]
    return R @ cache.link_incoming_joint_force[1, :3], support


def test_incoming_joint_force_counts_the_contacts_of_the_step(tmp_path):
    """The supported link at rest: the hinge carries the weight less what the support does (without the
    contact forces it reported the whole weight m g)."""
    scene, arm = _supported_link(tmp_path, sleeps=False)
    scene.step(120)
    cache = arm.create_cache()
    arm.copy_internal_state_to_cache(cache, CacheFlag.VELOCITY)
    assert abs(cache.joint_velocity[0]) < 1e-6  # at rest on the support
    hinge, support = _hinge_and_support(scene, arm, cache)
    assert support[2] > 4.0  # the support carries most of it
    np.testing.assert_allclose(hinge + support, [0.0, 0.0, 9.81], atol=1e-6)


def test_a_sleeping_articulation_keeps_the_incoming_joint_forces_of_its_last_step(tmp_path):
    """The supported link falls asleep. While it sleeps, its incoming joint force stays what its last step
    gave (PhysX's stay frozen too: measured on ovphysx, from the step the articulation sleeps on), hinge plus
    support still equal to its weight. (Before, a sleeping articulation's replay had no contacts, and its
    hinge carried the whole weight.)"""
    scene, arm = _supported_link(tmp_path, sleeps=True)
    cache = arm.create_cache()
    for _ in range(600):
        scene.step()
        if arm.asleep():
            break
    assert arm.asleep()
    hinge, support = _hinge_and_support(scene, arm, cache)  # the step it fell asleep on made contacts
    np.testing.assert_allclose(hinge + support, [0.0, 0.0, 9.81], atol=1e-4)
    assert support[2] > 4.0
    scene.step(30)
    assert arm.asleep() and len(scene.contacts(0).normal_impulse) == 0  # a sleeping body makes no contacts
    arm.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE)
    R = quat_to_matrix(arm.link_transforms()[1, 3:]) @ arm.model.child_frame_rot[1]
    np.testing.assert_array_equal(R @ cache.link_incoming_joint_force[1, :3], hinge)


def test_incoming_joint_force_leaves_out_the_gravity_a_link_does_not_feel(tmp_path):
    """A link with gravity switched off (physxRigidBody:disableGravity) held horizontal at rest on its
    hinge: nothing acts on it, so its hinge carries nothing (the step's link forces, which cancel its
    gravity, are part of the replay; before, the replay gave it its weight m g)."""
    from builders import body, joint, new_stage, root_api

    stage = new_stage()
    body(stage, "/World/arm/base", pos=(0, 0, 1))
    link = body(stage, "/World/arm/link", pos=(1, 0, 1), mass=3.0)
    link.AddAppliedSchema("PhysxRigidBodyAPI")
    link.CreateAttribute("physxRigidBody:disableGravity", Sdf.ValueTypeNames.Bool).Set(True)
    joint(stage, "/World/arm/anchor", None, "/World/arm/base", kind="fixed", lp0=(0, 0, 1))
    joint(stage, "/World/arm/hinge", "/World/arm/base", "/World/arm/link", axis="Y", lp1=(-1, 0, 0))
    root_api(stage, "/World/arm")
    path = str(tmp_path / "weightless.usda")
    stage.GetRootLayer().Export(path)
    scene = usdart.load(path)
    arm = scene.articulations[0]
    scene.step(10)
    cache = arm.create_cache()
    arm.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE | CacheFlag.POSITION)
    assert cache.joint_position[0] == 0.0  # it did not fall
    np.testing.assert_allclose(cache.link_incoming_joint_force[1], 0.0, atol=1e-12)


def test_incoming_joint_force_counts_the_loop_joints_of_the_step(tmp_path):
    """A 2 m beam hinged to a fixed base at one end and held at the other by a loop joint (a second hinge
    about the same axis, excluded from the tree), at rest: each end carries half its weight (moments about
    either hinge), so the tree hinge's incoming force is m g / 2 up, not the whole m g it reported while the
    loop joint's impulses were left out of the replay."""
    from builders import body, joint, new_stage, root_api

    stage = new_stage()
    body(stage, "/World/frame/base", pos=(0, 0, 1))
    body(stage, "/World/frame/beam", pos=(1, 0, 1), mass=2.0)
    joint(stage, "/World/frame/anchor", None, "/World/frame/base", kind="fixed", lp0=(0, 0, 1))
    joint(stage, "/World/frame/hinge", "/World/frame/base", "/World/frame/beam", axis="Y", lp1=(-1, 0, 0))
    joint(
        stage, "/World/frame/loop", "/World/frame/base", "/World/frame/beam", axis="Y", lp0=(2, 0, 0),
        lp1=(1, 0, 0), excluded=True,
    )  # fmt: skip
    root_api(stage, "/World/frame")
    path = str(tmp_path / "beam.usda")
    stage.GetRootLayer().Export(path)
    scene = usdart.load(path)
    frame = scene.articulations[0]
    assert frame.loop_joints == ["/World/frame/loop"]
    scene.step(30)
    cache = frame.create_cache()
    frame.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE | CacheFlag.VELOCITY)
    assert abs(cache.joint_velocity[0]) < 1e-9  # held still by the two hinges
    beam = frame.link_index("/World/frame/beam")
    R = quat_to_matrix(frame.link_transforms()[beam, 3:]) @ frame.model.child_frame_rot[beam]
    np.testing.assert_allclose(R @ cache.link_incoming_joint_force[beam, :3], [0.0, 0.0, 9.81], atol=1e-6)
    np.testing.assert_allclose(R @ cache.link_incoming_joint_force[beam, 3:], 0.0, atol=1e-6)
