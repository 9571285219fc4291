"""usdart simulate / Recorder / plot / validate: outputs read back with plain usd-core and checked against
the Python API's own run, keyframes, unit conversions and the input file's bytes."""

from __future__ import annotations

import hashlib
import io
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from builders import body, joint, new_stage, root_api, set_attr
from click.testing import CliRunner
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

import usdart
from usdart.app.cli import main

ROOT = Path(__file__).parent.parent
ARM = ROOT / "sample_stages/arm_with_gripper.usda"


# ---- helpers: independent readers (plain usd-core + numpy) -------------------------------------------
def world_pose(stage, path, code):
    """(position, rotation matrix, per-axis scale) of a prim's local-to-world transform at a time code."""
    m = np.array(UsdGeom.Xformable(stage.GetPrimAtPath(path)).ComputeLocalToWorldTransform(code)).T
    scale = np.linalg.norm(m[:3, :3], axis=0)
    return m[:3, 3], m[:3, :3] / scale, scale


def rotation(q):
    w, x, y, z = np.asarray(q) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def angle_between(R1, R2):
    return math.acos(np.clip((np.trace(R1.T @ R2) - 1) / 2, -1.0, 1.0))


def sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def api_poses(source, step_counts, rate=None):
    """Link poses (per articulation) and free-body poses after each step count, from the Python API."""
    scene = usdart.load(source)
    if rate:
        scene.time_step = 1.0 / rate
    out, done = {}, 0
    for n in sorted(set(step_counts)):
        scene.step(n - done)
        done = n
        poses = {p: T for art in scene.articulations for p, T in zip(art.links, art.link_transforms())}
        poses.update({p: scene.body_transform(p) for p in scene.free_bodies})
        joints = {
            name: (q, qd)
            for art in scene.articulations
            for name, q, qd in zip(art.dof_names, art.state.q[0], art.state.qd[0])
        }
        out[n] = poses, joints
    return scene, out


def nested_stage(path):
    """A robot whose links are nested under each other and under a rotated, translated Xform, with a scaled
    link (with a link under it) and a non-physics Xform between two links; a free box under a keyframed
    (non-physics) Xform.
    Stage: 240 steps per second, 60 time codes per second, quatd/double ops (full precision)."""
    st = new_stage()
    st.SetDefaultPrim(st.GetPrimAtPath("/World"))
    st.SetTimeCodesPerSecond(60)
    scene = st.GetPrimAtPath("/World/scene")
    scene.AddAppliedSchema("PhysxSceneAPI")
    set_attr(scene, "physxScene:timeStepsPerSecond", 240, Sdf.ValueTypeNames.UInt)
    robot = UsdGeom.Xform.Define(st, "/World/robot")
    robot.AddTranslateOp().Set(Gf.Vec3d(0.2, -0.1, 0.5))
    robot.AddRotateZOp().Set(30.0)
    root_api(st, "/World/robot")

    def link(path, pos, scale=None):
        xf = UsdGeom.Xform.Define(st, path)
        xf.AddTranslateOp().Set(Gf.Vec3d(*pos))
        xf.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(1, 0, 0, 0))
        if scale:
            xf.AddScaleOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*scale))
        prim = xf.GetPrim()
        UsdPhysics.RigidBodyAPI.Apply(prim)
        mass = UsdPhysics.MassAPI.Apply(prim)
        mass.CreateMassAttr(1.0)
        mass.CreateDiagonalInertiaAttr(Gf.Vec3f(0.02, 0.02, 0.02))
        mass.CreateCenterOfMassAttr(Gf.Vec3f(0.2, 0, 0))
        return prim

    link("/World/robot/base", (0, 0, 0))
    link("/World/robot/base/link1", (0.3, 0, 0))
    offset = UsdGeom.Xform.Define(st, "/World/robot/base/link1/offset")
    offset.AddTranslateOp().Set(Gf.Vec3d(0.1, 0.0, 0.05))
    offset.AddRotateXOp().Set(20.0)
    link("/World/robot/base/link1/offset/link2", (0.2, 0, 0), scale=(0.5, 0.5, 0.5))
    joint(st, "/World/robot/joints/fix", None, "/World/robot/base", kind="fixed")
    j1 = joint(st, "/World/robot/joints/j1", "/World/robot/base", "/World/robot/base/link1", axis="Y", lp0=(0.3, 0, 0))
    # joint frames of link2 from the authored poses, so the joint meets in both bodies
    cache = UsdGeom.XformCache()
    l1 = cache.GetLocalToWorldTransform(st.GetPrimAtPath("/World/robot/base/link1"))
    l2 = cache.GetLocalToWorldTransform(st.GetPrimAtPath("/World/robot/base/link1/offset/link2"))
    anchor = l2.ExtractTranslation()
    j2 = joint(
        st,
        "/World/robot/joints/j2",
        "/World/robot/base/link1/offset/link2",
        "/World/robot/base/link1",
        axis="Z",
        lp0=(0, 0, 0),
        lp1=tuple(l1.GetInverse().Transform(anchor)),
    )  # body0 = child: reversed
    rel = (Gf.Matrix4d(l2).RemoveScaleShear() * l1.GetInverse()).ExtractRotationQuat()  # link2 frame in link1's frame
    UsdPhysics.Joint(j2).CreateLocalRot1Attr(Gf.Quatf(rel.GetReal(), *[float(c) for c in rel.GetImaginary()]))
    link("/World/robot/base/link1/offset/link2/tip", (0.4, 0, 0))  # under a scaled, moving link
    joint(
        st,
        "/World/robot/joints/weld",
        "/World/robot/base/link1/offset/link2",
        "/World/robot/base/link1/offset/link2/tip",
        kind="fixed",
        lp0=(0.4, 0, 0),
    )
    for j in (j1, j2):
        set_attr(j, "physics:lowerLimit", -170.0)
        set_attr(j, "physics:upperLimit", 170.0)
    mover = UsdGeom.Xform.Define(st, "/World/mover")
    op = mover.AddTranslateOp()
    op.Set(Gf.Vec3d(0, 0, 0))
    op.Set(Gf.Vec3d(0, 0, 0), 0)
    op.Set(Gf.Vec3d(1.0, 0.5, 0), 30)
    body(st, "/World/mover/box", pos=(0, 2, 1), mass=1.0)
    st.GetRootLayer().Export(str(path))
    return path


@pytest.fixture
def runner():
    return CliRunner()


def one_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


# ---- transforms, joint states, metadata ----------------------------------------------------------------
def test_world_transforms_and_metadata_of_nested_links(tmp_path):
    (tmp_path / "in").mkdir()
    source = nested_stage(tmp_path / "in" / "robot.usda")
    before = sha(source)
    out = tmp_path / "out" / "motion.usda"
    out.parent.mkdir()
    result = usdart.simulate(source, duration=0.5, output=out)
    assert (result.rate, result.fps, result.steps, result.frames) == (240.0, 60.0, 120, 31)
    assert sha(source) == before
    assert sorted(os.listdir(out.parent)) == ["motion.usda"]

    layer = Sdf.Layer.FindOrOpen(str(out))
    assert list(layer.subLayerPaths) == ["../in/robot.usda"]
    stage = Usd.Stage.Open(str(out))
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode(), stage.GetTimeCodesPerSecond()) == (0, 30, 60)
    assert UsdGeom.GetStageUpAxis(stage) == "Z" and UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert stage.GetDefaultPrim().GetPath() == Sdf.Path("/World")

    frames = [0, 7, 16, 30]
    _, truth = api_poses(source, [4 * f for f in frames])
    moved = 0.0
    for f in frames:
        poses, _ = truth[4 * f]
        assert set(poses) == {
            "/World/robot/base",
            "/World/robot/base/link1",
            "/World/robot/base/link1/offset/link2",
            "/World/robot/base/link1/offset/link2/tip",
            "/World/mover/box",
        }
        for path, T in poses.items():
            pos, R, _ = world_pose(stage, path, f)
            assert np.abs(pos - T[:3]).max() < 1e-6, (path, f)
            assert angle_between(R, rotation(T[3:])) < 1e-6, (path, f)
        moved = max(
            moved,
            np.linalg.norm(
                poses["/World/robot/base/link1/offset/link2"][:3]
                - truth[0][0]["/World/robot/base/link1/offset/link2"][:3]
            ),
        )
    assert moved > 0.05  # the links really swing, and the box falls while its parent Xform moves
    assert truth[120][0]["/World/mover/box"][2] < 1.0 - 0.5 * 9.81 * 0.45**2

    link2 = UsdGeom.Xformable(stage.GetPrimAtPath("/World/robot/base/link1/offset/link2"))
    assert link2.GetXformOpOrderAttr().Get() == ["xformOp:translate", "xformOp:orient", "xformOp:scale"]
    assert np.allclose(world_pose(stage, link2.GetPath(), 30)[2], 0.5)  # authored scale kept
    assert stage.GetPrimAtPath("/World/robot/base").GetAttribute("xformOp:translate").GetNumTimeSamples() == 31


def test_joint_states_in_degrees_and_stage_units_with_the_schema_applied(tmp_path):
    out = tmp_path / "arm.usda"
    usdart.simulate(ARM, duration=0.5, output=out, fps=30)  # 120 Hz: 4 steps per frame
    scene, truth = api_poses(ARM, [0, 8, 32, 60])
    stage = Usd.Stage.Open(str(out))
    mpu = UsdGeom.GetStageMetersPerUnit(stage)
    art = scene.articulations[0]
    checked = set()
    for n, (_, joints) in truth.items():
        for dof in art.desc.dofs:
            jd = next(j for j in art.desc.joints if j is not None and dof in j.dofs)
            sign = -1.0 if jd.reversed else 1.0
            q, qd = joints[dof.name]
            scale = (180.0 / math.pi) if dof.angular else 1.0 / mpu
            prim = stage.GetPrimAtPath(jd.path)
            got_q = prim.GetAttribute(f"state:{dof.usd_instance}:physics:position").Get(n / 4)
            got_qd = prim.GetAttribute(f"state:{dof.usd_instance}:physics:velocity").Get(n / 4)
            assert got_q == pytest.approx(sign * q * scale, rel=1e-6, abs=1e-5), (dof.name, n)
            assert got_qd == pytest.approx(sign * qd * scale, rel=1e-6, abs=1e-5), (dof.name, n)
            checked.add((dof.name, jd.reversed))
    assert ("/World/robot/joints/right_finger_joint", True) in checked  # a turned joint is un-negated


def test_joint_state_schema_is_applied_where_missing(tmp_path):
    source = nested_stage(tmp_path / "robot.usda")
    usdart.simulate(source, steps=8, output=tmp_path / "out.usda")
    stage = Usd.Stage.Open(str(tmp_path / "out.usda"))
    for path in ("/World/robot/joints/j1", "/World/robot/joints/j2"):
        prim = stage.GetPrimAtPath(path)
        assert "PhysicsJointStateAPI:angular" in prim.GetMetadata("apiSchemas").ApplyOperations([])
        assert prim.GetAttribute("state:angular:physics:position").GetNumTimeSamples() == 3
    assert not Usd.Stage.Open(str(source)).GetPrimAtPath("/World/robot/joints/j1").GetMetadata("apiSchemas")


def test_flattened_output_stands_alone(tmp_path):
    source = nested_stage(tmp_path / "robot.usda")
    usdart.simulate(source, duration=0.25, output=tmp_path / "flat.usda", flatten=True)
    os.remove(source)
    layer = Sdf.Layer.FindOrOpen(str(tmp_path / "flat.usda"))
    assert not layer.subLayerPaths
    stage = Usd.Stage.Open(layer)
    assert (stage.GetEndTimeCode(), stage.GetTimeCodesPerSecond()) == (15, 60)
    assert UsdPhysics.GetStageKilogramsPerUnit(stage) == 1.0
    scene, truth = api_poses(nested_stage(tmp_path / "again.usda"), [60])
    for path, T in truth[60][0].items():
        pos, R, _ = world_pose(stage, path, 15)
        assert np.abs(pos - T[:3]).max() < 1e-6 and angle_between(R, rotation(T[3:])) < 1e-6


def test_recorder_in_a_user_loop(tmp_path):
    source = nested_stage(tmp_path / "robot.usda")
    scene = usdart.load(source)
    rec = usdart.Recorder(scene, fps=30, articulations=["/World/robot/base"], free_bodies=False)
    rec.record()
    for _ in range(10):
        scene.step(8)  # 1/30 s at 240 Hz
        rec.record()
    assert rec.time_codes == pytest.approx(list(range(11)))
    with pytest.raises(usdart.UsdartError, match="increasing"):
        rec.record(time=0.0)
    rec.save(tmp_path / "loop.usda")
    stage = Usd.Stage.Open(str(tmp_path / "loop.usda"))
    art = scene.articulations[0]
    for path, T in zip(art.links, art.link_transforms()):
        pos, R, _ = world_pose(stage, path, 10)
        assert np.abs(pos - T[:3]).max() < 1e-6 and angle_between(R, rotation(T[3:])) < 1e-6
    box = stage.GetPrimAtPath("/World/mover/box")  # not recorded: keeps its authored transform
    assert not box.GetAttribute("xformOp:translate").ValueMightBeTimeVarying()


# ---- controls from the stage ---------------------------------------------------------------------------
def keyframed_stage(path, mpu=1.0):
    """Two drive-controlled hinges (one authored child-first, so turned) with keyframed targets, and a
    prismatic joint whose keyframed JointStateAPI position prescribes the motion; no gravity."""
    st = new_stage(mpu=mpu)
    st.SetTimeCodesPerSecond(60)
    UsdPhysics.Scene(st.GetPrimAtPath("/World/scene")).CreateGravityMagnitudeAttr(0.0)
    root_api(st, "/World")
    body(st, "/World/base", mass=1.0)
    joint(st, "/World/fix", None, "/World/base", kind="fixed")
    for name, turned in (("a", False), ("b", True)):
        body(st, f"/World/{name}", pos=(0, 0, 0), mass=1.0, inertia=(0.05, 0.05, 0.05))
        b0, b1 = (f"/World/{name}", "/World/base") if turned else ("/World/base", f"/World/{name}")
        j = joint(st, f"/World/{name}_hinge", b0, b1, axis="Z")
        drive = UsdPhysics.DriveAPI.Apply(j, "angular")
        drive.CreateStiffnessAttr(400.0 * math.pi / 180)  # 400 N m/rad, per degree in USD
        drive.CreateDampingAttr(2 * math.sqrt(400.0 * 0.05) * math.pi / 180)  # critically damped
        target = drive.CreateTargetPositionAttr(0.0)
        for code, degrees in ((0, 0.0), (60, 90.0), (90, 90.0), (120, -30.0)):
            target.Set(degrees, code)
    body(st, "/World/slider", pos=(0, 0, 0), mass=1.0)
    s = joint(st, "/World/slide", "/World/base", "/World/slider", kind="prismatic", axis="X")
    s.AddAppliedSchema("PhysicsJointStateAPI:linear")
    position = set_attr(s, "state:linear:physics:position", 0.0)
    for code, units in ((0, 0.0), (30, 20.0), (60, 20.0), (90, -10.0)):
        position.Set(units, code)
    st.GetRootLayer().Export(str(path))
    return path


def test_keyframed_drive_targets_are_followed(tmp_path):
    source = keyframed_stage(tmp_path / "keys.usda")
    before = sha(source)
    out = tmp_path / "followed.usda"
    usdart.simulate(source, duration=2.5, output=out, rate=600)
    assert sha(source) == before
    stage = Usd.Stage.Open(str(out))

    def target(t):  # the keyframes, in degrees against seconds
        return np.interp(t, [0, 1, 1.5, 2], [0, 90, 90, -30])

    for name in ("a", "b"):
        pos = stage.GetPrimAtPath(f"/World/{name}_hinge").GetAttribute("state:angular:physics:position")
        follow = {f: pos.Get(f) for f in (15, 30, 60, 85, 150)}
        # a critically damped drive lags a ramp by pi sqrt(I/k) (= 1.8 deg here) and settles on holds
        assert follow[30] == pytest.approx(target(0.5), abs=4.0)
        assert follow[85] == pytest.approx(90.0, abs=0.5)
        assert follow[150] == pytest.approx(-30.0, abs=0.5)
        assert abs(follow[15] - target(0.25)) < 4.0 and follow[15] > 10.0

    # the same run through the Python API, setting each step's interpolated target by hand
    scene = usdart.load(source)
    scene.time_step = 1 / 600
    art = scene.articulations[0]
    for k in range(1500):
        t = k / 600
        scene.set_drive_target("/World/a_hinge", position=math.radians(target(t)))
        scene.set_drive_target("/World/b_hinge", position=-math.radians(target(t)))  # turned joint
        q = np.interp(t, [0, 0.5, 1, 1.5], [0, 20, 20, -10])
        slope = 40.0 if t < 0.5 else (0.0 if t < 1.0 else (-60.0 if t < 1.5 else 0.0))
        cache = art.create_cache()
        cache.joint_position[art.dof_index("/World/slide")] = q
        cache.joint_velocity[art.dof_index("/World/slide")] = slope
        art.apply_cache(cache, usdart.CacheFlag.POSITION | usdart.CacheFlag.VELOCITY)
        scene.step(1)
    a = stage.GetPrimAtPath("/World/a_hinge").GetAttribute("state:angular:physics:position").Get(150)
    b = stage.GetPrimAtPath("/World/b_hinge").GetAttribute("state:angular:physics:position").Get(150)
    q = art.state.q[0]
    assert a == pytest.approx(math.degrees(q[art.dof_index("/World/a_hinge")]), abs=1e-4)
    assert b == pytest.approx(-math.degrees(q[art.dof_index("/World/b_hinge")]), abs=1e-4)


def test_keyframed_drive_targets_of_a_joint_outside_articulations_are_followed(tmp_path):
    """A door (a free body hinged to the world, no gravity) whose drive target is keyframed 0 -> 60 deg over
    1 s, then held: the simulated door ends on 60 deg, and equals the same run through the Python API setting
    each step's interpolated target (Scene.set_drive_target) to 1e-9."""
    st = new_stage()
    st.GetPrimAtPath("/World/scene").CreateAttribute("physics:gravityMagnitude", Sdf.ValueTypeNames.Float).Set(0.0)
    door = body(st, "/World/door", pos=(1, 0, 0))
    door.CreateAttribute("physxRigidBody:sleepThreshold", Sdf.ValueTypeNames.Float).Set(0.0)
    hinge = joint(st, "/World/hinge", None, "/World/door", axis="Z", lp1=(-1, 0, 0))
    drive = UsdPhysics.DriveAPI.Apply(hinge, "angular")
    drive.CreateStiffnessAttr(2.0)  # N m / deg
    drive.CreateDampingAttr(0.3)
    target = drive.CreateTargetPositionAttr(0.0)
    for code, degrees in ((0, 0.0), (24, 60.0)):  # 24 time codes per second
        target.Set(degrees, code)
    source = tmp_path / "door.usda"
    st.GetRootLayer().Export(str(source))
    out = tmp_path / "door_sim.usda"
    usdart.simulate(source, duration=3.0, output=out, rate=240)
    stage = Usd.Stage.Open(str(out))
    last = stage.GetEndTimeCode()
    turned = world_pose(stage, "/World/door", last)[1]
    assert math.degrees(math.atan2(turned[1, 0], turned[0, 0])) == pytest.approx(60.0, abs=0.01)

    scene = usdart.load(source)
    scene.time_step = 1 / 240
    for k in range(720):
        scene.set_drive_target("/World/hinge", position=math.radians(60.0 * min(k / 240, 1.0)))
        scene.step(1)
    ours = world_pose(stage, "/World/door", last)
    np.testing.assert_allclose(ours[0], scene.body_transform("/World/door")[:3], atol=1e-9)


def test_keyframed_joint_state_prescribes_the_motion_in_stage_units(tmp_path):
    source = keyframed_stage(tmp_path / "keys_cm.usda", mpu=0.01)  # positions keyframed in centimetres
    out = tmp_path / "slide.usda"
    usdart.simulate(source, duration=2.0, output=out, fps=20)
    stage = Usd.Stage.Open(str(out))
    slide = stage.GetPrimAtPath("/World/slide").GetAttribute("state:linear:physics:position")
    velocity = stage.GetPrimAtPath("/World/slide").GetAttribute("state:linear:physics:velocity")
    for frame in range(41):
        t = frame / 20
        expected = np.interp(t, [0, 0.5, 1, 1.5], [0, 20, 20, -10])
        assert slide.Get(frame) == pytest.approx(expected, abs=1e-4)
        x = world_pose(stage, "/World/slider", frame)[0][0] - world_pose(stage, "/World/base", frame)[0][0]
        assert x == pytest.approx(expected * 0.01, abs=1e-6)  # metres: the link really moved
    assert velocity.Get(5) == pytest.approx(40.0, abs=1e-4)  # slope of the keyframes, cm/s


# ---- command line: outputs, bad input, interruption ---------------------------------------------------
def test_cli_simulate_says_which_joints_broke(runner, tmp_path):
    """A 1 kg body welded 1 m from the world origin by a fixed joint whose breakForce (5 N) is below the
    weight it carries (9.81 N): the joint breaks on the first step and the body falls freely, its height at
    1 s within the first step's travel of -g t^2 / 2; the summary line names the joint."""
    stage = new_stage()
    body(stage, "/World/box", pos=(1, 0, 0))
    weld = joint(stage, "/World/weld", None, "/World/box", kind="fixed", lp1=(-1, 0, 0))
    weld.CreateAttribute("physics:breakForce", Sdf.ValueTypeNames.Float).Set(5.0)
    path, out = tmp_path / "weld.usda", tmp_path / "out.usda"
    stage.GetRootLayer().Export(str(path))
    result = runner.invoke(main, ["simulate", str(path), "-o", str(out), "--duration", "1", "--rate", "60"])
    assert result.exit_code == 0, result.output
    assert one_line(result.stdout).endswith("; joints broken: /World/weld")
    z = world_pose(Usd.Stage.Open(str(out)), "/World/box", 60)[0][2]
    assert -0.5 * 9.81 <= z <= -0.5 * 9.81 * (1 - 1 / 60) ** 2


def test_cli_simulate_writes_and_summarises(runner, tmp_path):
    out = tmp_path / "arm.usda"
    result = runner.invoke(main, ["simulate", str(ARM), "-o", str(out), "--duration", "0.25"])
    assert result.exit_code == 0, result.output
    line = one_line(result.stdout)
    assert line.startswith("simulated 0.25 s (30 steps at 120 Hz, 16 frames at 60 fps)") and "real time" in line
    assert Usd.Stage.Open(str(out)).GetEndTimeCode() == 15
    quiet = runner.invoke(main, ["simulate", str(ARM), "-o", str(out), "--steps", "3", "-q"])
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""


@pytest.mark.parametrize(
    "case",
    [
        "missing input",
        "missing folder",
        "folder is a file",
        "nothing to simulate",
        "both duration and steps",
        "output is the input",
    ],
)
def test_cli_bad_input_gives_one_line_and_no_file(runner, tmp_path, case):
    out = tmp_path / "out.usda"
    source = str(ARM)
    extra = []
    if case == "missing input":
        source = str(tmp_path / "nope.usda")
    elif case == "missing folder":
        out = tmp_path / "no" / "such" / "out.usda"
    elif case == "folder is a file":
        (tmp_path / "file").write_text("x")
        out = tmp_path / "file" / "out.usda"
    elif case == "nothing to simulate":
        st = new_stage()
        UsdGeom.Cube.Define(st, "/World/cube")
        source = str(tmp_path / "empty.usda")
        st.GetRootLayer().Export(source)
    elif case == "both duration and steps":
        extra = ["--duration", "1", "--steps", "3"]
    elif case == "output is the input":
        source = str(tmp_path / "arm.usda")
        Path(source).write_bytes(ARM.read_bytes())
        out = Path(source)
    files = sorted(os.listdir(tmp_path))
    before = sha(source) if os.path.exists(source) else None
    result = runner.invoke(main, ["simulate", source, "-o", str(out), *extra])
    assert result.exit_code == 2
    line = one_line(result.stderr)
    assert line.startswith("usdart: error: ")
    if case in ("missing input", "nothing to simulate"):
        assert os.path.basename(source) in line
    assert sorted(os.listdir(tmp_path)) == files
    if before:
        assert sha(source) == before


def test_ctrl_c_mid_run_leaves_no_file(runner, tmp_path, monkeypatch):
    calls = []

    def interrupted_step(self, n=1):
        calls.append(n)
        if len(calls) > 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(usdart.Scene, "step", interrupted_step)
    result = runner.invoke(main, ["simulate", str(ARM), "-o", str(tmp_path / "out.usda"), "--duration", "5"])
    assert result.exit_code == 130
    assert one_line(result.stderr) == "usdart: interrupted"
    assert os.listdir(tmp_path) == []


def test_interrupt_while_exporting_removes_the_temporary_file(tmp_path):
    from usdart.app.output_files import export_atomic

    class HalfWritten:
        def Export(self, path):
            Path(path).write_text("#usda 1.0\n(")
            raise KeyboardInterrupt

    (tmp_path / "out.usda").write_text("previous")
    with pytest.raises(KeyboardInterrupt):
        export_atomic(HalfWritten(), str(tmp_path / "out.usda"))
    assert os.listdir(tmp_path) == ["out.usda"] and (tmp_path / "out.usda").read_text() == "previous"


def test_sigint_to_a_running_simulation(tmp_path):
    out = tmp_path / "long.usda"
    # Ctrl-C's default handler, even when this test runs under a shell that ignores SIGINT (a background job)
    code = (
        "import signal, sys, usdart.app.cli; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.stderr.write('ready\\n'); sys.stderr.flush(); "
        f"usdart.app.cli.main(['simulate', {str(ARM)!r}, '-o', {str(out)!r}, '--duration', '1e5', '--fps', '1'])"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert proc.stderr.readline().strip() == "ready"
    time.sleep(2.0)  # load and start stepping
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert one_line(err) == "usdart: interrupted"
    assert os.listdir(tmp_path) == []


# ---- validate and plot ---------------------------------------------------------------------------------
def test_validate(runner, tmp_path):
    ok = runner.invoke(main, ["validate", str(ARM)])
    assert ok.exit_code == 0 and ok.stdout.startswith("ok: 1 articulation (9 DOFs)")
    warned = runner.invoke(main, ["validate", str(ROOT / "sample_stages/floating_body.usda")])
    assert warned.exit_code == 0
    assert warned.stdout.splitlines()[0].startswith("warning: /World/rigidBody: ")
    keys = runner.invoke(main, ["validate", str(keyframed_stage(tmp_path / "keys.usda"))])
    assert keys.exit_code == 0 and "3 time-sampled controls" in keys.stdout
    st = new_stage()
    source = str(tmp_path / "nothing.usda")
    st.GetRootLayer().Export(source)
    empty = runner.invoke(main, ["validate", source])
    assert empty.exit_code == 2 and "nothing to simulate" in one_line(empty.stderr)
    st = new_stage()
    body(st, "/World/bad", mass=-1.0)
    source = str(tmp_path / "bad.usda")
    st.GetRootLayer().Export(source)
    bad = runner.invoke(main, ["validate", source])
    assert bad.exit_code == 2 and "/World/bad" in one_line(bad.stderr)


def test_plot_reads_the_time_samples(runner, tmp_path):
    from usdart.app.plot import joint_series

    out = tmp_path / "keys_out.usda"
    usdart.simulate(keyframed_stage(tmp_path / "keys.usda"), duration=1.0, output=out)
    series, mpu = joint_series(out)
    assert mpu == 1.0 and len(series) == 1
    names = [s.name for s in series[0].dofs]
    assert names == ["/World/a_hinge", "/World/b_hinge", "/World/slide"]
    stage = Usd.Stage.Open(str(out))
    a = series[0].dofs[0]
    assert np.allclose(a.times, np.arange(61) / 60)
    assert a.position[30] == stage.GetPrimAtPath("/World/a_hinge").GetAttribute("state:angular:physics:position").Get(
        30
    )
    assert [s.name for s in joint_series(out, "*hinge")[0][0].dofs] == ["/World/a_hinge", "/World/b_hinge"]

    result = runner.invoke(main, ["plot", str(out), "-o", str(tmp_path / "p.png"), "--joints", "*slide*"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    default = runner.invoke(main, ["plot", str(out)])
    assert default.exit_code == 0 and (tmp_path / "keys_out.png").exists()
    none = runner.invoke(main, ["plot", str(ARM), "-o", str(tmp_path / "arm.png")])  # an input: no samples
    assert none.exit_code == 2 and "no time-sampled joint states" in one_line(none.stderr)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal_with_a_compile_notice_and_an_honest_estimate(monkeypatch):
    from usdart.app import simulation as sim

    clock = [0.0]
    monkeypatch.setattr(sim._time, "perf_counter", lambda: clock[0])
    assert not sim._Progress(100, enabled=True, stream=io.StringIO()).enabled  # not a terminal
    assert not sim._Progress(100, enabled=False, stream=_Terminal()).enabled  # --quiet

    screen = _Terminal()
    bar = sim._Progress(1000, enabled=True, stream=screen)
    bar._notice.cancel()
    bar._compiling()  # what the timer prints when the first step has not returned after a second
    assert "compiles" in screen.getvalue()
    clock[0] = 30.0  # the first step came back after 30 s of compilation
    bar.update(10)
    clock[0] = 32.0  # then 2 s for 490 more steps: 500 left at 245 steps/s
    bar.update(500)
    last = screen.getvalue().rsplit("\r", 1)[-1]
    assert "step 500/1000" in last and "eta 2 s" in last and "50.0%" in last
    bar.close()
    assert screen.getvalue().endswith("\r\033[K")
