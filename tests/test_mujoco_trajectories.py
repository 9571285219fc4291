"""Whole trajectories against MuJoCo: 1 s at dt = 1 ms from the corpus initial states, no contacts or limits.

- RK4 against the stored MuJoCo RK4 trajectories (tests/data/*/ref_*.npz, MuJoCo on the original
  URDF/MJCF), in the `ideal` (rigid bodies, armature, gravity) and `passive` (plus joint damping) variants.
- Euler and RK4 against live MuJoCo on the twin built from the imported numbers (tests/mujoco_twin.py):
  MuJoCo's Euler is semi-implicit with joint damping implicit (M + dt D), the scheme usdart's Euler uses.

The stages are edited in memory only, in the session layer: joint limits, velocity limits and the Panda's
finger mimic joint are blocked or disabled (the references disable limits and equalities); `ideal` also
blocks the ant's passive damping. Unlimited revolute joints wrap (by 4 pi beyond +-2 pi, as PhysX's),
MuJoCo's do not, so angles compare modulo 2 pi.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import mujoco
import numpy as np
import pytest
from mujoco_twin import full_mass_matrix, mujoco_twin
from pxr import Gf, Sdf, Usd, UsdPhysics

import usdart
from usdart import CacheFlag
from usdart.core.frames import quat_to_matrix


def load(*args, **kwargs):
    """Bodies without PhysxRigidBodyAPI as UsdPhysics alone has them (MuJoCo's models have no PhysX body
    damping or velocity limits), and no contacts: the twins and the stored references have none (the ant's
    torso overlaps its upper legs, which PhysX would push apart)."""
    scene = usdart.load(*args, semantics="newton", **kwargs)
    scene.contacts_enabled = False
    return scene


DATA = Path(__file__).parent / "data"
ROBOTS = {
    "panda": ("panda/panda.usda", "panda/ref_fixed"),
    "ant": ("ant/ant.usda", "ant/ref_fixed"),
    "ant_free": ("ant_free/ant_free.usda", "ant_free/ref_floating"),
}
DT, FRAME_STEPS, FRAMES = 1e-3, 10, 100  # frames every 10 ms, 1 s

# RK4 against the stored trajectories, max |error| over the 101 frames (measured):
# - joints 1e-6 rad (the requirement). Panda 6.4e-7 in both variants: the twin built from the USD numbers
#   gives the same 6.4e-7 against the reference while it and usdart agree to 2.5e-14, so the gap is the
#   USD file's float32 joint frames, amplified by 1 s of chaotic motion (4e-12 at 10 ms, 2.5e-8 at 0.4 s).
#   Ant 2.9e-11 ideal, 3.9e-9 passive: the USD damping 0.017453292 / deg is 0.99999997 / rad (4e-11 with 1.0).
# - floating ant base: position 1.7e-10 m; orientation 1.5e-8 rad, because usdart's RK4 averages the
#   stage angular velocities in world axes and MuJoCo's in body axes (equal to O(dt^2) per step; the
#   stored Pinocchio re-integration differs from MuJoCo by 4e-8 rad for the same reason). Joints as above:
#   3.3e-11 ideal, 2.8e-9 passive.
RK4_JOINTS, RK4_BASE_POS, RK4_BASE_ROT = 1e-6, 1e-9, 1e-7
# live MuJoCo on the twin (measured): Euler <= 1.8e-15 m or rad everywhere (the same scheme; for a floating
# root too while its COM is at the link origin, as the ant's: with an offset COM usdart moves the COM and
# MuJoCo the origin, which differ by O(dt) in the root translation only). RK4 <= 3e-14 on the fixed bases;
# on the floating base 2.8e-11 joints, 1.9e-11 m, 1.5e-8 rad (the angular-velocity averaging above).
LIVE = {
    "euler": dict(joints=1e-12, base_pos=1e-12, base_rot=1e-12),
    "rk4": dict(joints=1e-9, base_pos=1e-9, base_rot=1e-7),
}
TWIN_F32 = 1e-7  # twin vs stored MuJoCo M, bias, qacc: measured 2.0e-8 relative (Panda), 1.2e-9 (ant)
PANDA_DAMPING = {"revolute": 2.0, "prismatic": 5.0}  # N m s / rad, N s / m, set on both sides for Euler


@cache
def reference(name):
    ref = ROBOTS[name][1]
    return json.loads((DATA / f"{ref}.json").read_text()), dict(np.load(DATA / f"{ref}.npz"))


def open_stage(name, damping: bool = True, panda_damping: bool = False) -> Usd.Stage:
    """The robot's stage with limits, velocity limits and mimic joints off (and, unless `damping`, the
    authored passive damping), edited in the session layer; the files on disk are untouched."""
    stage = Usd.Stage.Open(str(DATA / ROBOTS[name][0]))
    stage.SetEditTarget(stage.GetSessionLayer())
    blocked = ["physics:lowerLimit", "physics:upperLimit", "newton:velocityLimit"]
    blocked += [] if damping else ["newton:damping"]
    for prim in stage.Traverse():
        if not prim.IsA(UsdPhysics.Joint):
            continue
        for attr in filter(None, map(prim.GetAttribute, blocked)):
            attr.Block()
        if prim.GetRelationship("newton:mimicJoint"):
            prim.CreateAttribute("newton:mimicEnabled", Sdf.ValueTypeNames.Bool).Set(False)
        if panda_damping and (prim.IsA(UsdPhysics.RevoluteJoint) or prim.IsA(UsdPhysics.PrismaticJoint)):
            revolute = prim.IsA(UsdPhysics.RevoluteJoint)  # newton:damping is per degree for angular joints
            value = PANDA_DAMPING["revolute"] * math.pi / 180.0 if revolute else PANDA_DAMPING["prismatic"]
            prim.CreateAttribute("newton:damping", Sdf.ValueTypeNames.Float).Set(value)
    return stage


def start(name, stage, integrator):
    """Scene stepping at 1 ms from the reference initial state; joints matched by name. Returns the scene,
    its articulation and, per usdart DOF, the reference joint column and sign (-1 for a joint usdart
    turned to follow the tree)."""
    meta, _ = reference(name)
    scene = load(stage, integrator=integrator)
    scene.time_step = DT
    scene.conserve_momentum = False  # MuJoCo's integrators keep no momentum beyond their own order
    art = scene.articulations[0]
    m = art.model
    assert len(m.mimic_follower) == 0 and np.isinf(m.dof_lower).all() and np.isinf(m.dof_upper).all()
    assert np.isinf(m.max_joint_velocity).all()
    col = [meta["joint_names"].index(dof.rsplit("/", 1)[-1]) for dof in art.dof_names]
    sign = np.array([-1.0 if art.desc.joints[i].reversed else 1.0 for i in m.dof_link])
    init = meta["trajectory"]["initial_state"]
    cache = art.create_cache()
    cache.joint_position[:] = sign * np.asarray(init["q_joints"])[col]
    cache.joint_velocity[:] = sign * np.asarray(init["qd_joints"])[col]
    flags = CacheFlag.POSITION | CacheFlag.VELOCITY
    if m.n_root:  # reference: origin velocity and angular velocity in body axes; usdart: [v_com; omega] world
        R = quat_to_matrix(init["base_quat_wxyz"])
        v_body, w_body = np.asarray(init["base_linvel_body"]), np.asarray(init["base_angvel_body"])
        cache.root_transform[:] = np.concatenate([init["base_pos"], init["base_quat_wxyz"]])
        cache.root_linear_velocity[:] = R @ (v_body + np.cross(w_body, m.com[0]))
        cache.root_angular_velocity[:] = R @ w_body
        flags |= CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES
    art.apply_cache(cache, flags)
    return scene, art, col, sign


def wrapped(a):
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def rotation_angle(qa, qb) -> float:
    """Angle of the rotation between two unit quaternions (wxyz)."""
    difference = np.linalg.norm(quat_to_matrix(qa).T @ quat_to_matrix(qb) - np.eye(3))  # sqrt(8) sin(angle / 2)
    return 2.0 * math.asin(min(1.0, difference / math.sqrt(8.0)))


@pytest.mark.parametrize("variant", ["ideal", "passive"])
@pytest.mark.parametrize("name", list(ROBOTS))
def test_rk4_matches_stored_mujoco_trajectory(name, variant):
    meta, arrays = reference(name)
    traj = meta["trajectory"]
    assert traj["integrator"] == "RK4" and traj["dt"][variant] == DT and traj["n_frames"] == FRAMES + 1
    assert all(j["stiffness"] == 0.0 for j in meta["joints"])  # no joint springs to model
    scene, art, col, sign = start(name, open_stage(name, damping=variant == "passive"), "rk4")
    m = art.model
    joints = {j["name"]: j for j in meta["joints"]}
    names = [meta["joint_names"][c] for c in col]
    # the imported armature and damping are the reference model's (float32 in USD)
    np.testing.assert_allclose(m.armature, [joints[n]["armature"] for n in names], rtol=1e-7)
    damping = [joints[n]["damping"] if variant == "passive" else 0.0 for n in names]
    np.testing.assert_allclose(m.passive_damping, damping, rtol=1e-7)

    q_ref = sign * arrays[f"traj_{variant}_q_joints"][:, col]
    worst = dict(joints=0.0, base_pos=0.0, base_rot=0.0)
    for f in range(1, FRAMES + 1):
        scene.step(FRAME_STEPS)
        st = art.state
        worst["joints"] = max(worst["joints"], np.abs(wrapped(st.q[0] - q_ref[f])).max())
        if m.n_root:
            pos, quat = arrays[f"traj_{variant}_base_pos"][f], arrays[f"traj_{variant}_base_quat_wxyz"][f]
            worst["base_pos"] = max(worst["base_pos"], np.abs(st.root_pos[0] - pos).max())
            worst["base_rot"] = max(worst["base_rot"], rotation_angle(st.root_quat[0], quat))
    assert not art.state.asleep[0]
    assert worst["joints"] <= RK4_JOINTS, worst
    assert worst["base_pos"] <= RK4_BASE_POS and worst["base_rot"] <= RK4_BASE_ROT, worst


@pytest.mark.parametrize("name", list(ROBOTS))
def test_twin_matches_stored_mujoco_dynamics(name):
    """The twin (from the USD numbers) is MuJoCo's model of the robot: mass matrix, bias forces and forward
    dynamics at the stored samples agree with MuJoCo on the original model to the USD's float32 precision."""
    meta, arrays = reference(name)
    art = load(open_stage(name, damping=False)).articulations[0]  # mj_qacc: no damping
    model, maps = mujoco_twin(art, DT)
    data = mujoco.MjData(model)
    joints = {j["name"]: j for j in meta["joints"]}
    names = [dof.rsplit("/", 1)[-1] for dof in art.dof_names]
    n_root = art.model.n_root
    ours_q = np.concatenate([np.arange(7 * (n_root > 0)), maps.qpos_adr]).astype(int)
    ours_v = np.concatenate([np.arange(n_root), maps.qvel_adr]).astype(int)
    ref_q = np.concatenate([np.arange(7 * (n_root > 0)), [joints[n]["mj_qadr"] for n in names]]).astype(int)
    ref_v = np.concatenate([np.arange(n_root), [joints[n]["mj_vadr"] for n in names]]).astype(int)
    for s in range(arrays["mj_qpos"].shape[0]):
        data.qpos[ours_q], data.qvel[ours_v] = arrays["mj_qpos"][s, ref_q], arrays["mj_qvel"][s, ref_v]
        data.qfrc_applied[ours_v] = arrays["mj_tau"][s, ref_v]
        mujoco.mj_forward(model, data)
        M = full_mass_matrix(model, data)[np.ix_(ours_v, ours_v)]
        for ours, ref in (
            (M, arrays["mj_M"][s][np.ix_(ref_v, ref_v)]),
            (data.qfrc_bias[ours_v], arrays["mj_nle"][s, ref_v]),
            (data.qacc[ours_v], arrays["mj_qacc"][s, ref_v]),
        ):
            assert np.abs(ours - ref).max() <= TWIN_F32 * np.abs(ref).max(), np.abs(ours - ref).max()


def against_live_twin(scene, art, integrator):
    """Step usdart and its MuJoCo twin side by side for 1 s; the largest differences, and joint travel."""
    model, maps = mujoco_twin(art, DT, integrator)
    kind = mujoco.mjtIntegrator.mjINT_EULER if integrator == "euler" else mujoco.mjtIntegrator.mjINT_RK4
    assert model.opt.integrator == kind
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = maps.to_mujoco(art.state)
    worst, travel = dict(joints=0.0, base_pos=0.0, base_rot=0.0), 0.0
    q0 = art.state.q[0].copy()
    for _ in range(FRAMES):
        scene.step(FRAME_STEPS)
        for _ in range(FRAME_STEPS):
            mujoco.mj_step(model, data)
        twin, st = maps.from_mujoco(data.qpos, data.qvel), art.state
        worst["joints"] = max(worst["joints"], np.abs(wrapped(twin["q"] - st.q[0])).max())
        travel = max(travel, np.abs(wrapped(st.q[0] - q0)).max())
        if art.model.n_root:
            worst["base_pos"] = max(worst["base_pos"], np.abs(twin["root_pos"] - st.root_pos[0]).max())
            worst["base_rot"] = max(worst["base_rot"], rotation_angle(twin["root_quat"], st.root_quat[0]))
    return worst, travel


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
@pytest.mark.parametrize("name", list(ROBOTS))
def test_matches_live_mujoco_twin(name, integrator):
    """Damping on: the ant's authored 1 N m s/rad, and PANDA_DAMPING authored on the Panda."""
    scene, art, _, _ = start(name, open_stage(name, damping=True, panda_damping=name == "panda"), integrator)
    m = art.model
    if name == "panda":
        expected = [PANDA_DAMPING["revolute" if angular else "prismatic"] for angular in m.dof_angular]
        np.testing.assert_allclose(m.passive_damping, expected, rtol=1e-7)
    assert (m.passive_damping > 0.5).all()
    worst, travel = against_live_twin(scene, art, integrator)
    assert travel > 0.1  # the mechanism moved (ant 0.23-0.31 rad, Panda 3.1 rad)
    for key, tol in LIVE[integrator].items():
        assert worst[key] <= tol, worst


def test_floating_root_with_offset_com_matches_live_mujoco_rk4():
    """The twin's root velocity map (v_origin = v_com - omega x R c) with the ant torso's COM moved off
    its origin: RK4 agrees as for the authored ant (measured 2.8e-11 rad joints, 8.3e-10 m, 1.5e-8 rad).
    (Euler does not: usdart moves the root COM with v_com and MuJoCo the origin with v_origin, measured
    1.6e-5 m apart after 1 s, joints still equal.)"""
    stage = open_stage("ant_free")
    torso = UsdPhysics.MassAPI.Apply(stage.GetPrimAtPath("/ant_free/Geometry/torso"))
    torso.CreateCenterOfMassAttr(Gf.Vec3f(0.05, -0.02, 0.03))
    scene, art, _, _ = start("ant_free", stage, "rk4")
    assert np.allclose(art.model.com[0], [0.05, -0.02, 0.03])
    worst, _ = against_live_twin(scene, art, "rk4")
    assert worst["joints"] <= 1e-9 and worst["base_pos"] <= 1e-8 and worst["base_rot"] <= 1e-7, worst
