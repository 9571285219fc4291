"""The dynamics API against Pinocchio on real robots and a spherical-joint ragdoll.

Live checks build a Pinocchio twin from the imported numbers (tests/pin_reference.py) and compare at
random states to 1e-9 relative: link poses, mass matrix, gravity, nonlinear effects, forward dynamics,
Jacobians, centroidal momentum. The corpus reference arrays (Pinocchio on the original URDF/MJCF) are
checked too, at the float32 precision with which the USD files store joint frames.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from pin_reference import PinTwin, root_acc_bias, root_map

import usdart
from usdart import CacheFlag
from usdart.core.frames import quat_to_matrix

# massless frames and undamped bodies as the URDF/MJCF source models (and MuJoCo, Pinocchio) have them
load = functools.partial(usdart.load, semantics="newton")

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
ROBOTS = {
    "panda": DATA / "panda/panda.usda",
    "ant": DATA / "ant/ant.usda",
    "ant_free": DATA / "ant_free/ant_free.usda",
    "ragdoll": ROOT / "sample_stages/ragdoll.usda",
}
REL = 1e-9

# the generalized (6 + n) forms under their PhysX 5 names (test_articulation_cache checks the warning)
pytestmark = pytest.mark.filterwarnings("ignore:compute_.* now follows PhysX 5:FutureWarning")


def close(ours, ref, rel=REL):
    """Agreement relative to the size of the reference array."""
    ours, ref = np.asarray(ours), np.asarray(ref)
    scale = max(np.abs(ref).max(), 1e-12)
    assert np.abs(ours - ref).max() <= rel * scale, f"max error {np.abs(ours - ref).max():.3e}, scale {scale:.3e}"


@pytest.fixture(scope="module", params=list(ROBOTS))
def robot(request):
    art = load(ROBOTS[request.param]).articulations[0]
    return request.param, art


def random_state(art, rng):
    """A random pose and velocity written to the articulation through its cache."""
    m = art.model
    cache = art.create_cache()
    lower = np.array([max(d.lower, -np.pi) for d in art.desc.dofs])
    upper = np.array([min(d.upper, np.pi) for d in art.desc.dofs])
    spherical = m.joint_type[m.dof_link] == 3
    lower[spherical], upper[spherical] = -1.0, 1.0  # rotation-vector components: stay inside [-pi, pi]
    cache.joint_position[:] = rng.uniform(lower, upper)
    cache.joint_velocity[:] = rng.normal(size=m.n_dofs)
    if m.n_root:
        quat = rng.normal(size=4)
        cache.root_transform[:] = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat)])
        cache.root_linear_velocity[:] = rng.normal(size=3)
        cache.root_angular_velocity[:] = rng.normal(size=3)
    art.apply_cache(cache, CacheFlag.ALL)
    return cache


def twin_at(art, cache):
    st = art.state
    twin = PinTwin(art.model, st.root_pos[0], st.root_quat[0])
    q = twin.q(st.q[0], st.joint_quat[0], st.root_pos[0], st.root_quat[0])
    nu = np.concatenate([st.root_vel[0], st.qd[0]]) if art.model.n_root else st.qd[0].copy()
    T = root_map(art.model, st.root_quat[0])
    return twin, q, nu, T


def armature(art):
    return np.diag(np.concatenate([np.zeros(art.model.n_root), art.model.armature]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_live_pinocchio_agreement(robot, seed):
    name, art = robot
    rng = np.random.default_rng(seed)
    cache = random_state(art, rng)
    twin, q, nu, T = twin_at(art, cache)
    pm, pd = twin.model, twin.data
    v_pin = twin.to_pin(T @ nu)
    bias = twin.to_pin(root_acc_bias(art.model, art.state.root_quat[0], nu))

    # link poses
    pin.framesForwardKinematics(pm, pd, q)
    poses = art.link_transforms()
    for i in range(art.model.n_links):
        frame = pd.oMf[pm.getFrameId(f"link{i}")]
        close(poses[i, :3], frame.translation)
        close(quat_to_matrix(poses[i, 3:]), frame.rotation)

    # mass matrix (PhysX leaves armature out; Pinocchio's includes it)
    M = art.compute_mass_matrix(cache) + armature(art)
    close(M, T.T @ twin.matrix_from_pin(pin.crba(pm, pd, q)) @ T)

    # gravity and nonlinear effects (zero generalized acceleration in usdart's coordinates)
    gravity = art.compute_gravity_compensation(cache)
    close(gravity, T.T @ twin.from_pin(pin.computeGeneralizedGravity(pm, pd, q)))
    nle = gravity + art.compute_coriolis_compensation(cache)
    close(nle, T.T @ twin.from_pin(pin.rnea(pm, pd, q, v_pin, bias)))

    # forward dynamics under random joint forces
    cache.joint_force[:] = rng.normal(size=art.model.n_dofs) * 5.0
    qdd = art.compute_joint_acceleration(cache)
    tau = np.concatenate([np.zeros(art.model.n_root), cache.joint_force])
    a_pin = pin.aba(pm, pd, q, v_pin, twin.to_pin(np.linalg.solve(T.T, tau)))
    nudot = np.linalg.solve(T, twin.from_pin(a_pin) - root_acc_bias(art.model, art.state.root_quat[0], nu))
    ours = (
        np.concatenate([cache.root_linear_acceleration, cache.root_angular_acceleration, qdd])
        if art.model.n_root
        else qdd
    )
    close(ours, nudot)

    # Jacobians at link COMs, world axes
    art.compute_dense_jacobian(cache)
    pin.computeJointJacobians(pm, pd, q)
    pin.updateFramePlacements(pm, pd)
    first = 0 if art.model.n_root else 1
    for i in range(first, art.model.n_links):
        J_pin = twin.from_pin(pin.getFrameJacobian(pm, pd, pm.getFrameId(f"com{i}"), pin.LOCAL_WORLD_ALIGNED))
        close(cache.dense_jacobian[6 * (i - first) : 6 * (i - first) + 6], J_pin @ T)

    if art.model.n_root:  # centroidal momentum matrix and bias
        A, hbias = art.compute_centroidal_momentum_matrix(cache)
        close(A, twin.from_pin(pin.ccrba(pm, pd, q, v_pin)) @ T)
        pin.computeCentroidalMomentumTimeVariation(pm, pd, q, v_pin, bias)
        close(hbias, pd.dhg.vector)


def test_floating_momentum_is_conserved_without_gravity():
    """With no gravity or external force, joint forces are internal: d/dt [P; L_G] = A nudot + bias = 0."""
    for path in (ROBOTS["ant_free"], ROBOTS["ragdoll"]):
        desc = load(path).articulations[0].desc
        art = usdart.Articulation(desc, gravity=(0.0, 0.0, 0.0))
        rng = np.random.default_rng(7)
        cache = random_state(art, rng)
        cache.joint_force[:] = rng.normal(size=art.model.n_dofs) * 10.0
        qdd = art.compute_joint_acceleration(cache)
        nudot = np.concatenate([cache.root_linear_acceleration, cache.root_angular_acceleration, qdd])
        A, bias = art.compute_centroidal_momentum_matrix(cache)
        momentum = A @ np.concatenate([cache.root_linear_velocity, cache.root_angular_velocity, cache.joint_velocity])
        rate = A @ nudot + bias
        assert np.abs(rate).max() <= 1e-10 * max(1.0, np.abs(momentum).max()), rate
        # the linear momentum is the total mass times the COM velocity, whatever the joints do
        assert np.abs(A[:3, :3] - art.model.mass.sum() * np.eye(3)).max() < 1e-12


# ---- corpus reference arrays (Pinocchio on the original URDF / MJCF) ---------------------------------
CORPUS = {"panda": "panda/ref_fixed", "ant": "ant/ref_fixed", "ant_free": "ant_free/ref_floating"}
# USD stores the converted joint frames as float32 (quaternions like 0.70710677): measured agreement is
# ~1e-8 on dynamics quantities and ~2e-7 on link rotations and Jacobians after eight joints
DYNAMICS_F32, KINEMATICS_F32 = 1e-7, 5e-7


@pytest.mark.parametrize("name", list(CORPUS))
def test_corpus_reference_arrays(name):
    ref = json.loads((DATA / f"{CORPUS[name]}.json").read_text())
    arrays = np.load(DATA / f"{CORPUS[name]}.npz")
    art = load(ROBOTS[name]).articulations[0]
    m = art.model
    dof_names = [d.rsplit("/", 1)[-1] for d in art.dof_names]
    ref_col = [ref["joint_names"].index(n) for n in dof_names]  # our DOF k <- reference joint column
    idx_v = {j["name"]: j["idx_v"] for j in ref["joints"]}
    perm = np.concatenate([np.arange(m.n_root), [idx_v[n] for n in dof_names]]).astype(int)
    link_names = [p.rsplit("/", 1)[-1] for p in art.links]
    cache = art.create_cache()
    for s in range(arrays["q_joints"].shape[0]):
        cache.joint_position[:] = arrays["q_joints"][s, ref_col]
        nu = np.zeros(m.n_root + m.n_dofs)
        nu[m.n_root :] = arrays["qd_joints"][s, ref_col]
        if m.n_root:
            R = quat_to_matrix(arrays["base_quat_wxyz"][s])
            cache.root_transform[:] = np.concatenate([arrays["base_pos"][s], arrays["base_quat_wxyz"][s]])
            w_body, v_body = arrays["base_angvel_body"][s], arrays["base_linvel_body"][s]
            nu[:3] = R @ (v_body - np.cross(m.com[0], w_body))
            nu[3:6] = R @ w_body
            cache.root_linear_velocity[:], cache.root_angular_velocity[:] = nu[:3], nu[3:6]
        cache.joint_velocity[:] = nu[m.n_root :]
        art.apply_cache(cache, CacheFlag.ALL)
        T = root_map(m, art.state.root_quat[0])
        sub = np.ix_(perm, perm)

        M = art.compute_mass_matrix(cache) + armature(art)
        close(M, T.T @ arrays["M"][s][sub] @ T, rel=DYNAMICS_F32)
        gravity = art.compute_gravity_compensation(cache)
        close(gravity, T.T @ arrays["g"][s][perm], rel=DYNAMICS_F32)
        # reference nle is at zero Pinocchio acceleration; ours at zero nudot: a_pin = bias
        bias_pin = root_acc_bias(m, art.state.root_quat[0], nu)
        nle = gravity + art.compute_coriolis_compensation(cache) - T.T @ arrays["M"][s][sub] @ bias_pin
        close(nle, T.T @ arrays["nle"][s][perm], rel=DYNAMICS_F32)
        # forward dynamics under the reference torques
        cache.joint_force[:] = arrays["tau_joints"][s, ref_col]
        qdd = art.compute_joint_acceleration(cache)
        close(
            qdd,
            arrays["qdd"][s][perm][m.n_root :]
            if not m.n_root
            else np.linalg.solve(T, arrays["qdd"][s][perm] - bias_pin)[m.n_root :],
            rel=DYNAMICS_F32,
        )
        # link frames
        poses = art.link_transforms()
        for f, frame in enumerate(ref["body_frames"]):
            i = link_names.index(frame)
            close(poses[i, :3], arrays["frame_pos"][s, f], rel=KINEMATICS_F32)
            close(quat_to_matrix(poses[i, 3:]), arrays["frame_rot"][s, f], rel=KINEMATICS_F32)
        # Jacobians of link frame origins: ours are at the COM, v_origin = v_com - (origin - com) x omega
        art.compute_dense_jacobian(cache)
        first = 0 if m.n_root else 1
        for f, frame in enumerate(ref["jacobian_frames"]):
            i = link_names.index(frame)
            J = cache.dense_jacobian[6 * (i - first) : 6 * (i - first) + 6].copy()
            offset = poses[i, :3] - (poses[i, :3] + quat_to_matrix(poses[i, 3:]) @ m.com[i])
            J[:3] -= np.cross(offset, J[3:].T).T
            close(J, arrays["J"][s, f][:, perm] @ T, rel=KINEMATICS_F32)


@pytest.mark.parametrize(
    "given",
    [lambda x: np.repeat(x, 2)[::2], lambda x: np.round(x).astype(int).tolist(), lambda x: x.astype(np.float32)],
    ids=["strided view", "list of ints", "float32"],
)
def test_compute_functions_take_any_numbers_as_pinocchio_does(given):
    """The compute functions call compiled kernels that trust their arguments' types (inverse_dynamics._direct,
    compiled for the types of a cache's first call): joint accelerations or forces given afterwards as a
    strided view, a list of ints or float32 still give Pinocchio's M(q) qdd and forward dynamics."""
    art = load(ROBOTS["panda"]).articulations[0]
    rng = np.random.default_rng(7)
    cache = random_state(art, rng)
    twin, q, nu, T = twin_at(art, cache)
    pm, pd = twin.model, twin.data
    wanted = rng.normal(size=art.model.n_dofs) * 3.0
    art.compute_joint_force(cache)  # compiled for the cache's own float64 arrays first
    art.compute_joint_acceleration(cache)
    cache.joint_acceleration = given(wanted)
    qdd = np.asarray(cache.joint_acceleration, dtype=float)
    M = T.T @ twin.matrix_from_pin(pin.crba(pm, pd, q)) @ T - armature(art)
    close(art.compute_joint_force(cache), M @ qdd)
    cache.joint_force = given(wanted)
    cache.joint_acceleration = np.zeros(art.model.n_dofs)  # (the result goes there: a float32 array keeps float32)
    tau = np.asarray(cache.joint_force, dtype=float)
    a_pin = pin.aba(pm, pd, q, twin.to_pin(T @ nu), twin.to_pin(np.linalg.solve(T.T, tau)))
    close(art.compute_joint_acceleration(cache), np.linalg.solve(T, twin.from_pin(a_pin)))
