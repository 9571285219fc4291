"""Bodies joined by several joints, as NVIDIA's MJCF converter writes MuJoCo's multi-hinge bodies: composed in
authored order (usd.importer.topology), checked against MuJoCo on the source model.

tests/data/humanoid: MuJoCo's humanoid with its torso welded to the world, limits, springs, tendons and
contacts removed (humanoid.xml), and the converter's USD of it (humanoid.usda): 21 hinges over 13 bodies, 7 body
pairs joined by two or three hinges. PhysX builds 12 DOFs from that file, makes the other 9 hinges loop
joints, reports the pairs as closed articulations and steps to NaN within 5-25 steps (measured on ovphysx,
PGS and TGS at 60 and 240 Hz): MuJoCo's composition is what the file means.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
from pxr import Sdf, Usd, UsdGeom

import usdart
from usdart import CacheFlag

DATA = Path(__file__).parent / "data" / "humanoid"
DT = 1e-3
# Measured over 1 s from random joint positions and velocities: 2.3e-7 rad (torso welded) and 9.5e-8 (free),
# Euler and RK4 alike: the USD's float32 joint frames and masses (the corpus arms meet 6.4e-7 for the
# same reason).
JOINT_TOLERANCE = 1e-6
PAIRS = {  # the bodies' pairs (parent leaf, child leaf) joined by several hinges, in the MJCF's order
    ("torso", "waist_lower"): ["abdomen_z", "abdomen_y"],
    ("pelvis", "thigh_right"): ["hip_x_right", "hip_z_right", "hip_y_right"],
    ("pelvis", "thigh_left"): ["hip_x_left", "hip_z_left", "hip_y_left"],
    ("shin_right", "foot_right"): ["ankle_y_right", "ankle_x_right"],
    ("shin_left", "foot_left"): ["ankle_y_left", "ankle_x_left"],
    ("torso", "upper_arm_right"): ["shoulder1_right", "shoulder2_right"],
    ("torso", "upper_arm_left"): ["shoulder1_left", "shoulder2_left"],
}


def humanoid_stage(floating: bool) -> Usd.Stage:
    stage = Usd.Stage.Open(str(DATA / "humanoid.usda"))
    if floating:  # the converter's weld of the torso to the world, switched off in the session layer
        stage.SetEditTarget(stage.GetSessionLayer())
        stage.GetPrimAtPath("/Humanoid/Geometry/torso/PhysicsFixedJoint").SetActive(False)
    return stage


def mujoco_humanoid(floating: bool, integrator: str) -> mujoco.MjModel:
    xml = (DATA / "humanoid.xml").read_text()
    if floating:
        xml = xml.replace('childclass="body">', 'childclass="body"><freejoint/>', 1)
    model = mujoco.MjModel.from_xml_string(xml)
    model.opt.timestep = DT
    model.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT  # the hands meet the legs within 0.3 s
    return model


def test_the_converted_humanoid_has_its_21_hinges_in_the_mjcf_order():
    scene = usdart.load(humanoid_stage(floating=False), semantics="newton")
    art = scene.articulations[0]
    leaves = [name.rsplit("/", 1)[-1] for name in art.dof_names]
    warnings = scene.description.warnings
    assert len(leaves) == 21 and art.loop_joints == [] and art.model.n_root == 0
    for (parent, child), hinges in PAIRS.items():
        at = leaves.index(hinges[0])
        assert leaves[at : at + len(hinges)] == hinges  # one DOF per joint prim, composed in authored order
        assert any(f"/{child}: {len(hinges)} joints from " in w and f"/{parent} (" in w for w in warnings)
    # the links between a pair's joints are massless frames named after the joint before them
    massless = [link.rsplit("/", 1)[-1] for link, mass in zip(art.links, art.link_masses) if mass == 0.0]
    assert sorted(massless) == sorted(h for hinges in PAIRS.values() for h in hinges[:-1])


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
@pytest.mark.parametrize("floating", [False, True], ids=["torso welded", "torso free"])
def test_the_converted_humanoid_moves_as_mujoco_s(floating, integrator):
    """1 s at 1 ms from random joint positions and velocities (gravity on, no contacts), every hinge against
    MuJoCo on the source model; MuJoCo's damping is implicit in its Euler, as usdart's with the "newton"
    semantics."""
    model = mujoco_humanoid(floating, integrator)
    data = mujoco.MjData(model)
    scene = usdart.load(humanoid_stage(floating), semantics="newton", integrator=integrator)
    scene.contacts_enabled = False
    scene.time_step = DT
    scene.conserve_momentum = False  # MuJoCo's integrators keep no momentum beyond their own order
    art = scene.articulations[0]
    assert art.model.n_root == (6 if floating else 0)
    joints = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n.rsplit("/", 1)[-1]) for n in art.dof_names]
    qpos, qvel = model.jnt_qposadr[joints], model.jnt_dofadr[joints]
    sign = np.array([-1.0 if art.desc.joints[i].reversed else 1.0 for i in art.model.dof_link])
    rng = np.random.default_rng(7)
    data.qpos[qpos] = rng.uniform(-0.5, 0.5, len(joints))
    data.qvel[qvel] = rng.uniform(-2.0, 2.0, len(joints))
    cache = art.create_cache()
    cache.joint_position[:] = sign * data.qpos[qpos]
    cache.joint_velocity[:] = sign * data.qvel[qvel]
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    worst = travel = 0.0
    start = data.qpos[qpos].copy()
    for _ in range(100):
        scene.step(10)
        mujoco.mj_step(model, data, nstep=10)
        worst = max(worst, np.abs(art.state.q[0] - sign * data.qpos[qpos]).max())
        travel = max(travel, np.abs(data.qpos[qpos] - start).max())
    assert travel > 0.5  # the hinges swing far from where they started
    assert worst <= JOINT_TOLERANCE, worst


def test_a_composed_pair_never_touches():
    """The pelvis and each thigh overlap (a 0.09 m capsule 0.1 m from a 0.06 m one), as MuJoCo's parent and
    child bodies may: composed, they are the parent and child PhysX never lets collide, though massless links
    stand between them."""
    stage = humanoid_stage(floating=False)
    pelvis = "/Humanoid/Geometry/torso/waist_lower/pelvis"
    for side in ("right", "left"):
        assert capsule_gap(stage, f"{pelvis}/butt", f"{pelvis}/thigh_{side}/thigh_{side}") < -0.05
    scene = usdart.load(stage, semantics="newton")
    scene.step()
    contacts = scene.contacts()
    touching = {tuple(sorted(pair)) for pair in zip(contacts.body0, contacts.body1)}
    assert not touching & {(pelvis, f"{pelvis}/thigh_{side}") for side in ("right", "left")}


def capsule_gap(stage: Usd.Stage, a: str, b: str) -> float:
    """Distance between two UsdGeom capsules' surfaces where authored (negative: they overlap), from their
    axis segments sampled finely."""
    cache = UsdGeom.XformCache()
    segments, radii = [], []
    for path in (a, b):
        capsule = UsdGeom.Capsule(stage.GetPrimAtPath(path))
        half, axis = capsule.GetHeightAttr().Get() / 2, "XYZ".index(capsule.GetAxisAttr().Get())
        ends = np.zeros((2, 4))
        ends[:, 3], ends[:, axis] = 1.0, (-half, half)
        world = ends @ np.array(cache.GetLocalToWorldTransform(stage.GetPrimAtPath(path)))
        t = np.linspace(0.0, 1.0, 2001)[:, None]
        segments.append(world[0, :3] + t * (world[1, :3] - world[0, :3]))
        radii.append(capsule.GetRadiusAttr().Get())
    distance = np.linalg.norm(segments[0][:, None] - segments[1][None], axis=2).min()
    return float(distance - sum(radii))


def test_joints_about_one_axis_keep_physx_s_tree_and_loop(tmp_path):
    """Two hinges about the same axis through the same point add no motion: they are not composed (a
    singular mass matrix), and the pair keeps PhysX's rule, the smaller path in the tree, the other a loop."""
    path = tmp_path / "twice.usda"
    path.write_text(TWICE)
    scene = usdart.load(str(path))
    art = scene.articulations[0]
    assert art.dof_names == ["/World/a/hinge_a"] and art.loop_joints == ["/World/a/hinge_b"]
    assert not any("composed" in w for w in scene.description.warnings)


TWICE = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "World"
{
    def PhysicsScene "scene" {}
    def Xform "base" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI", "PhysicsArticulationRootAPI"])
    {
        float physics:mass = 1
        float3 physics:diagonalInertia = (0.1, 0.1, 0.1)
    }
    def PhysicsFixedJoint "root"
    {
        rel physics:body1 = </World/base>
    }
    def Xform "a" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
    {
        double3 xformOp:translate = (1, 0, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        float physics:mass = 1
        float3 physics:diagonalInertia = (0.1, 0.1, 0.1)
        def PhysicsRevoluteJoint "hinge_a"
        {
            rel physics:body0 = </World/base>
            rel physics:body1 = </World/a>
            point3f physics:localPos0 = (0.5, 0, 0)
            point3f physics:localPos1 = (-0.5, 0, 0)
            uniform token physics:axis = "Y"
        }
        def PhysicsRevoluteJoint "hinge_b"
        {
            rel physics:body0 = </World/base>
            rel physics:body1 = </World/a>
            point3f physics:localPos0 = (0.5, 0, 0)
            point3f physics:localPos1 = (-0.5, 0, 0)
            uniform token physics:axis = "Y"
        }
    }
}
"""


def test_the_written_hip_angles_compose_to_the_written_thigh_pose(tmp_path):
    """`usdart simulate` writes each composed joint's own angle and only the bodies' transforms; read back from
    the output, the thigh's rotation relative to the pelvis is the hip's three angles composed in the MJCF's
    order (x, then z, then y, each about the frame the previous ones turned), as MuJoCo composes them."""
    stage = humanoid_stage(floating=False)
    hips = "/Humanoid/Geometry/torso/waist_lower/pelvis/thigh_right"
    for name, speed in (("hip_x_right", 400.0), ("hip_z_right", -500.0), ("hip_y_right", 600.0)):
        joint = stage.GetPrimAtPath(f"{hips}/{name}")
        joint.ApplyAPI("PhysicsJointStateAPI", "angular")
        joint.CreateAttribute("state:angular:physics:velocity", Sdf.ValueTypeNames.Float).Set(speed)
    source = tmp_path / "humanoid_moving.usda"
    stage.GetRootLayer().Export(str(source))
    out = tmp_path / "out.usda"
    usdart.simulate(str(source), duration=0.5, output=out)
    result = Usd.Stage.Open(str(out))
    end = result.GetEndTimeCode()
    cache = UsdGeom.XformCache(end)

    def rotation(path):
        matrix = np.array(cache.GetLocalToWorldTransform(result.GetPrimAtPath(path)))[:3, :3].T
        return matrix / np.linalg.norm(matrix, axis=0)

    def turn(axis, degrees):
        c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
        i, j = [(1, 2), (2, 0), (0, 1)]["xyz".index(axis)]
        m = np.eye(3)
        m[i, i] = m[j, j] = c
        m[j, i], m[i, j] = s, -s
        return m

    angles = {
        a: result.GetPrimAtPath(f"{hips}/hip_{a}_right").GetAttribute("state:angular:physics:position").Get(end)
        for a in "xzy"
    }
    assert min(abs(v) for v in angles.values()) > 2.0  # each hinge turned (measured -6.8, -2.9, 55.5 deg)
    relative = rotation(hips.rsplit("/", 1)[0]).T @ rotation(hips)
    composed = turn("x", angles["x"]) @ turn("z", angles["z"]) @ turn("y", angles["y"])
    assert np.abs(relative - composed).max() < 1e-5  # measured 4.5e-9 (the reverse order: 0.12)
    assert not [a for a in result.GetPrimAtPath(f"{hips}/hip_x_right").GetAttributes() if "xformOp" in a.GetName()]
