"""Step for step with real PhysX: usdart and ovphysx (CPU) on the same stages, with PhysX's TGS and PGS solvers.

Each scenario runs 2 s at 60 Hz and at 240 Hz in both simulators from the same USD file, with
`physxScene:solverType` authored in it, and the joint positions after every step must agree to 1e-4 rad
(revolute, compared modulo 2 pi: PhysX wraps free revolute joints a little later than usdart) or 1e-4 m
(prismatic). PhysX's side is tests/physx_runner.py; the whole module skips without ovphysx.

The small stages are a pendulum (base fixed to the world, one link 1 m out on a Y hinge), with
PhysxRigidBodyAPI on its links: linear and angular damping 0 and a huge maxAngularVelocity, so that PhysX's
defaults for bodies without that API (angular damping 0.05, ...) do not act, as usdart applies them only
where the API is applied. A scenario that does not agree is an xfail(strict=True) with the measured
error, never a looser tolerance.
"""

from __future__ import annotations

import math
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from pxr import Sdf, Usd, UsdPhysics

pytest.importorskip("ovphysx", reason="real PhysX (the ovphysx wheel, in the [test] extra) is not installed")
pytest.importorskip("ovstage", reason="ovphysx's ovstage dependency is not installed")
try:  # by metadata, as ovphysx finds it: importing physx_usd_schemas would register it with usd-core's pxr
    metadata.distribution("physx-usd-schemas")
except metadata.PackageNotFoundError:
    pytest.skip("PhysX's USD schemas (physx-usd-schemas, [test] extra) are not installed", allow_module_level=True)

from builders import body, joint, new_stage, root_api  # noqa: E402
from contact_stages import SCENE, free_body  # noqa: E402
from physx_runner import (  # noqa: E402
    SOLVERS,
    force_solver,
    rotation_angle,
    run_physx,
    run_physx_bodies,
    run_usdart_bodies,
)

import usdart  # noqa: E402
from usdart import CacheFlag  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "sample_stages"
TOL = 1e-4  # rad or m, max over 2 s of every DOF
DURATION = 2.0
RATES = (60, 240)
NO_SELF_COLLISIONS = " without self-collisions"
NEWTON_SWITCH = " (the Newton switch)"  # newton:selfCollisionEnabled = false, PhysxArticulationAPI removed

STAGE = (
    SCENE
    + """\
    def Xform "arm" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
    {
        def Xform "base" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI", "PhysxRigidBodyAPI"])
        {
BODY
        }
        def Xform "link" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI", "PhysxRigidBodyAPI"])
        {
BODY
            double3 xformOp:translate = (1, 0, 0)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        def PhysicsFixedJoint "anchor"
        {
            rel physics:body1 = </World/arm/base>
        }
        def PhysicsRevoluteJoint "hinge" HINGE_APIS
        {
            uniform token physics:axis = "Y"
HINGE
        }
    }
}
"""
)
BODY = """            float physics:mass = 1
            float3 physics:diagonalInertia = (0.1, 0.1, 0.1)
            float physxRigidBody:linearDamping = 0
            float physxRigidBody:angularDamping = 0
            float physxRigidBody:maxAngularVelocity = 1e10"""
FORWARD = """            rel physics:body0 = </World/arm/base>
            rel physics:body1 = </World/arm/link>
            point3f physics:localPos0 = (0, 0, 0)
            point3f physics:localPos1 = (-1, 0, 0)"""
# the same hinge authored child -> parent: PhysX reports it negated, usdart's internal state does not
REVERSED = """            rel physics:body0 = </World/arm/link>
            rel physics:body1 = </World/arm/base>
            point3f physics:localPos0 = (-1, 0, 0)
            point3f physics:localPos1 = (0, 0, 0)"""

# scenario -> (hinge API schemas, hinge lines); angles in degrees and gains per degree, as USD authors them
PENDULUMS = {
    "pendulum": ([], FORWARD),
    "pendulum_reversed_joint": ([], REVERSED),
    "pd_drive": (
        ["PhysicsDriveAPI:angular"],
        FORWARD
        + """
            uniform token drive:angular:physics:type = "force"
            float drive:angular:physics:stiffness = 0.5
            float drive:angular:physics:damping = 0.02
            float drive:angular:physics:targetPosition = 30""",
    ),
    # zero gravity (set in pendulum_stage), 600 deg/s towards a weak drive's 150 deg target: the angle passes
    # 180 deg and 360 deg, where PhysX jumps by 720 deg, and the drive acts on the jumped value
    "spin_past_the_drive": (
        ["PhysicsDriveAPI:angular", "PhysicsJointStateAPI:angular"],
        FORWARD
        + """
            float drive:angular:physics:stiffness = 0.05
            float drive:angular:physics:damping = 0.001
            float drive:angular:physics:targetPosition = 150
            float state:angular:physics:velocity = 600""",
    ),
    "acceleration_drive": (
        ["PhysicsDriveAPI:angular"],
        FORWARD
        + """
            uniform token drive:angular:physics:type = "acceleration"
            float drive:angular:physics:stiffness = 0.2
            float drive:angular:physics:damping = 0.01
            float drive:angular:physics:targetPosition = 30""",
    ),
    # a stiff drive capped at 5 N m pulling the 9.81 N m link up: saturated throughout (PhysX's TGS spreads
    # the capped impulse over its substeps; bounding the step's total instead was 2e-2 rad off)
    "saturated_drive": (
        ["PhysicsDriveAPI:angular"],
        FORWARD
        + """
            float drive:angular:physics:stiffness = 174.53293
            float drive:angular:physics:maxForce = 5
            float drive:angular:physics:targetPosition = -90""",
    ),
    # starts at 0, outside its [30, 70] deg limits: the first step pushes it in (as the converted ant's ankles)
    "start_outside_limit": (
        [],
        FORWARD
        + """
            float physics:lowerLimit = 30
            float physics:upperLimit = 70""",
    ),
    # the same with viscous joint friction (1 N m s/rad), as the ant's newton:damping
    "start_outside_limit_viscous": (
        ["PhysxJointAxisAPI:angular"],
        FORWARD
        + """
            float physics:lowerLimit = 30
            float physics:upperLimit = 70
            float physxJointAxis:angular:viscousFrictionCoefficient = 0.017453292""",
    ),
    "limit_hit": (
        [],
        FORWARD
        + """
            float physics:lowerLimit = -30
            float physics:upperLimit = 40""",
    ),
    "joint_friction": (
        ["PhysxJointAxisAPI:angular"],
        FORWARD
        + """
            float physxJointAxis:angular:staticFrictionEffort = 6
            float physxJointAxis:angular:dynamicFrictionEffort = 5
            float physxJointAxis:angular:viscousFrictionCoefficient = 0.01""",
    ),
}


def pendulum_stage(tmp_path: Path, scenario: str, solver: str = "PGS") -> Path:
    apis, hinge = PENDULUMS[scenario]
    stage = STAGE.replace("Magnitude = 9.81", "Magnitude = 0") if scenario == "spin_past_the_drive" else STAGE
    text = (
        stage.replace("SOLVER", solver)
        .replace("BODY", BODY)
        .replace("HINGE_APIS", f"(prepend apiSchemas = [{', '.join(repr(a) for a in apis)}])" if apis else "")
        .replace("HINGE", hinge)
    )
    path = tmp_path / f"{scenario}_{solver}.usda"
    path.write_text(text)
    return path


def sample_stage(tmp_path: Path, case: str, solver: str = "PGS") -> Path:
    """A bundled sample with physxScene:solverType = solver authored (a flattened copy); the case
    "<name>.usda without self-collisions" also authors physxArticulation:enabledSelfCollisions = false; with
    "(the Newton switch)" after it, newton:selfCollisionEnabled = false on a root without PhysxArticulationAPI
    (which PhysX then reads)."""
    name = case.split()[0]
    path = force_solver(SAMPLES / name, solver, tmp_path / name)
    if NO_SELF_COLLISIONS in case:
        stage = Usd.Stage.Open(str(path))
        for prim in stage.Traverse():
            if not prim.HasAPI(UsdPhysics.ArticulationRootAPI):
                continue
            if case.endswith(NEWTON_SWITCH):
                prim.RemoveAppliedSchema("PhysxArticulationAPI")
                prim.CreateAttribute("newton:selfCollisionEnabled", Sdf.ValueTypeNames.Bool).Set(False)
            else:
                prim.CreateAttribute("physxArticulation:enabledSelfCollisions", Sdf.ValueTypeNames.Bool).Set(False)
        stage.Save()
    return path


def run_usdart(path: Path, dt: float, steps: int) -> dict:
    scene = usdart.load(str(path))
    scene.time_step = dt
    art = scene.articulations[0]
    cache = art.create_cache()
    q, qd = np.zeros((steps, art.dof_count)), np.zeros((steps, art.dof_count))
    poses = np.zeros((steps, len(art.links), 7))
    for k in range(steps):
        scene.step()
        art.copy_internal_state_to_cache(cache)
        q[k], qd[k], poses[k] = cache.joint_position, cache.joint_velocity, art.link_transforms()
    names = {"dof_names": art.dof_names, "links": art.links}
    return {**names, "joint_position": q, "joint_velocity": qd, "link_pose": poses}


def joint_error(path: Path, rate: int, solver: str | None = None) -> tuple[float, dict, dict]:
    """Max |q_physx - q_usdart| over 2 s at `rate` Hz, every DOF; revolute DOFs modulo 2 pi. solver: the
    one PhysX runs (None: the stage's own, which usdart reads too)."""
    dt, steps = 1.0 / rate, round(DURATION * rate)
    ours, theirs = run_usdart(path, dt, steps), run_physx(path, dt, steps, solver=solver)
    assert [n.split(":")[0] for n in ours["dof_names"]] == theirs["dof_names"]
    assert ours["links"] == theirs["links"]
    stage = Usd.Stage.Open(str(path))
    revolute = np.array([stage.GetPrimAtPath(n).IsA(UsdPhysics.RevoluteJoint) for n in theirs["dof_names"]])
    diff = theirs["joint_position"] - ours["joint_position"]
    diff[:, revolute] = (diff[:, revolute] + np.pi) % (2 * np.pi) - np.pi
    return float(np.abs(diff).max()), ours, theirs


# ---- the scenarios usdart matches (or documents where it does not) -----------------------------------------
CASES = [
    *PENDULUMS,
    "two_link_arm.usda",  # at rest: its hinge axis passes through the link's centre of mass (checks the import)
    "gear.usda",  # a hard mimic joint (gearing 5) whose start velocities violate it, spinning at 14 rad/s
    "arm_with_gripper.usda",
    "arm_with_gripper.usda" + NO_SELF_COLLISIONS,
    "arm_with_gripper.usda" + NO_SELF_COLLISIONS + NEWTON_SWITCH,
]
_CONTACTS = (
    "both collide the sample's overlapping capsules of non-adjacent links (articulation self-collisions are "
    "on by default); the deep overlaps at the start are pushed apart differently (without self-collisions "
    "they agree: case below): "
)
XFAIL = {
    ("arm_with_gripper.usda", "PGS", 60): _CONTACTS + "max joint error 0.11 rad",
    ("arm_with_gripper.usda", "PGS", 240): _CONTACTS + "max joint error 0.36 rad",
    ("arm_with_gripper.usda", "TGS", 60): _CONTACTS + "max joint error 0.46 rad",
    ("arm_with_gripper.usda", "TGS", 240): _CONTACTS + "max joint error 0.015 rad",
}


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("case", CASES)
def test_joint_positions_match_physx(tmp_path, case, solver, rate, request):
    if (case, solver, rate) in XFAIL:
        request.applymarker(pytest.mark.xfail(strict=True, reason=XFAIL[case, solver, rate]))
    path = pendulum_stage(tmp_path, case, solver) if case in PENDULUMS else sample_stage(tmp_path, case, solver)
    error, _, _ = joint_error(path, rate)
    assert error <= TOL, f"{case} at {rate} Hz: max joint error {error:.3g} vs PhysX {solver}"


@pytest.mark.parametrize("solver", SOLVERS)
def test_unlimited_revolute_angles_wrap_by_4_pi_as_in_physx(tmp_path, solver):
    """PhysX keeps an unlimited revolute angle in [-2 pi, 2 pi] by jumps of 4 pi (the same pose) and drives
    act on that value: the spinning drive's angles agree raw, not only modulo 2 pi (measured 1.6e-5 rad)."""
    path = pendulum_stage(tmp_path, "spin_past_the_drive", solver)
    for rate in RATES:
        _, ours, theirs = joint_error(path, rate)
        assert np.abs(ours["joint_position"] - theirs["joint_position"]).max() <= TOL
        assert ours["joint_position"].max() > 6.0 and ours["joint_position"].min() < -6.0


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_mimic_joint_on_an_unlimited_revolute_joint_is_dropped_as_in_physx(tmp_path, solver):
    """PhysX refuses a mimic joint whose joints are revolute without finite limits ("needs a finite limit
    set to be used by the mimic joint feature") and moves them independently; usdart drops it with a
    warning naming the joints, and the gear sample without its limits then agrees raw (the driver spins
    past +-2 pi, its follower stays at rest)."""
    path = sample_stage(tmp_path, "gear.usda", solver)
    text = (
        path.read_text()
        .replace("float physics:lowerLimit = -9000\n", "")
        .replace("float physics:upperLimit = 9000\n", "")
    )
    path.write_text(text)
    assert "9000" not in text
    scene = usdart.load(str(path))
    assert scene.articulations[0].mimic_joints == []
    assert any("PhysxMimicJointAPI ignored, as PhysX ignores it" in w for w in scene.warnings)
    for rate in RATES:
        _, ours, theirs = joint_error(path, rate)
        assert np.abs(ours["joint_position"] - theirs["joint_position"]).max() <= TOL
        assert ours["joint_position"][:, 0].min() < -6.0 and np.all(ours["joint_velocity"][:, 1] == 0.0)


def test_conventions_sign_order_and_poses(tmp_path):
    """The runner's conversions: a hinge authored child -> parent comes back in usdart's tree sense (PhysX
    itself reports it negated), and link poses agree as [x, y, z, qw, qx, qy, qz] rows."""
    error, ours, theirs = joint_error(pendulum_stage(tmp_path, "pendulum_reversed_joint"), 60)
    assert theirs["dof_signs"].tolist() == [-1.0]
    assert theirs["joint_position"][0, 0] > 0 and error <= TOL
    position_error = np.abs(theirs["link_pose"][..., :3] - ours["link_pose"][..., :3]).max()
    assert position_error <= TOL and rotation_angle(theirs["link_pose"], ours["link_pose"]).max() <= TOL


@pytest.mark.parametrize(
    "direction, magnitude",
    [("(0, 0, -2)", "9.81"), ("(0, 0, -0.5)", "9.81"), ("(0, 0, 0)", "9.81"), ("(1, 0, -1)", "4")],
)
def test_gravity_is_the_authored_direction_times_the_magnitude(tmp_path, direction, magnitude):
    """PhysX does not normalise physics:gravityDirection ((0, 0, -2) doubles gravity) and an authored zero
    direction is no gravity (UsdPhysics documents both otherwise; PhysX wins, README "Simulation")."""
    path = pendulum_stage(tmp_path, "pendulum")
    text = path.read_text().replace("(0, 0, -1)\n", f"{direction}\n", 1).replace("= 9.81", f"= {magnitude}", 1)
    path.write_text(text)
    error, ours, _ = joint_error(path, 60)
    assert error <= TOL, f"gravity {direction} x {magnitude}: max joint error {error:.3g} vs PhysX PGS"
    moved = np.abs(ours["joint_position"]).max()
    assert (moved == 0.0) if direction == "(0, 0, 0)" else (moved > 0.1)


def free_driven_body(tmp_path: Path, solver: str = "PGS") -> Path:
    """The PD-drive pendulum without its anchor, in zero gravity, with a stiffer drive: a two-link body
    that swings itself about; only internal forces act, so its centre of mass must not move."""
    text = pendulum_stage(tmp_path, "pd_drive", solver).read_text()
    text = text.replace("rel physics:body1 = </World/arm/base>", "").replace("Magnitude = 9.81", "Magnitude = 0")
    path = tmp_path / "free_driven_body.usda"
    path.write_text(text.replace("stiffness = 0.5", "stiffness = 20"))
    return path


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("solver", SOLVERS)
def test_a_free_body_driven_by_its_joint_moves_as_in_physx(tmp_path, solver, rate):
    """Link poses as PhysX's to 1e-4 (measured 6e-7): usdart keeps the momentum that joint forces cannot
    change. The plain reduced-coordinate step (`conserve_momentum = False`) drifts its COM by 1.5e-3 m.
    The body comes to rest and falls asleep on the same step as in PhysX (PhysX's wake counters and sleep
    filters; no PhysxArticulationAPI, so PhysX's SDK threshold 0.005 m^2/s^2, not the schema's 5e-5)."""
    path = free_driven_body(tmp_path, solver)
    error, ours, theirs = joint_error(path, rate)
    assert error <= TOL
    asleep = [np.flatnonzero(np.all(run["joint_velocity"] == 0.0, axis=1)) for run in (ours, theirs)]
    assert len(asleep[1]) and asleep[0][0] == asleep[1][0]  # the first step with every velocity 0
    position_error = np.abs(theirs["link_pose"][..., :3] - ours["link_pose"][..., :3]).max()
    assert position_error <= TOL and rotation_angle(theirs["link_pose"], ours["link_pose"]).max() <= TOL
    scene = usdart.load(str(path))
    scene.time_step, scene.conserve_momentum = 1.0 / rate, False
    art = scene.articulations[0]
    start = art.link_transforms()[:, :3].mean(axis=0)  # equal link masses, COMs at the link origins
    scene.step(round(DURATION * rate))
    assert np.abs(art.link_transforms()[:, :3].mean(axis=0) - start).max() > 1e-3


def plain_bodies(tmp_path: Path, solver: str) -> Path:
    """The pendulum with plain UsdPhysics bodies (no PhysxRigidBodyAPI: PhysX's fallbacks apply)."""
    text = pendulum_stage(tmp_path, "pendulum", solver).read_text().replace(', "PhysxRigidBodyAPI"', "")
    for line in ("linearDamping = 0", "angularDamping = 0", "maxAngularVelocity = 1e10"):
        text = text.replace(f"            float physxRigidBody:{line}\n", "")
    path = tmp_path / "plain_bodies.usda"
    path.write_text(text)
    assert "physxRigidBody" not in text
    return path


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("solver", SOLVERS)
def test_a_body_without_physx_rigid_body_api_moves_with_its_fallbacks(tmp_path, solver, rate):
    """PhysX runs a plain UsdPhysics body with PhysxRigidBodyAPI's fallbacks (angular damping 0.05, ...):
    without them usdart was 6.9e-3 rad away over 2 s; with them (the default) it agrees."""
    error, _, _ = joint_error(plain_bodies(tmp_path, solver), rate)
    assert error <= TOL, f"max joint error {error:.3g} vs PhysX {solver}"


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    "meters_per_unit, cfm_scale", [(1.0, None), (0.01, None), (1.0, 0.0), (1.0, 0.1)], ids=["m", "cm", "no cfm", "0.1"]
)
def test_link_cfm_weakens_acceleration_drives_as_in_physx(tmp_path, solver, meters_per_unit, cfm_scale):
    """PhysX sizes acceleration-drive, limit, friction and velocity-limit impulses by 1 / (r + cfm), cfm the
    larger of the DOF's two links' cfmScale / lengthScale times their COM's linear response: for the
    pendulum 0.025 / 1.1 on a metre stage, 100 times that on a centimetre one (PhysX's length scale),
    none with physxRigidBody:cfmScale = 0. An acceleration drive's gains are thus scaled by
    I / (1 + 0.025 d^2), d the COM's distance from the axis in metres."""
    path = pendulum_stage(tmp_path, "acceleration_drive", solver)
    text = path.read_text().replace("metersPerUnit = 1\n", f"metersPerUnit = {meters_per_unit}\n")
    if meters_per_unit != 1.0:  # the same pendulum in stage units: lengths / mpu, inertia / mpu^2
        scale = 1.0 / meters_per_unit
        text = text.replace("(1, 0, 0)", f"({scale}, 0, 0)").replace("(-1, 0, 0)", f"({-scale}, 0, 0)")
        text = text.replace("(0.1, 0.1, 0.1)", f"({0.1 * scale**2}, {0.1 * scale**2}, {0.1 * scale**2})")
        text = text.replace("gravityMagnitude = 9.81", f"gravityMagnitude = {9.81 * scale}")
    if cfm_scale is not None:
        text = text.replace(
            "maxAngularVelocity = 1e10",
            f"maxAngularVelocity = 1e10\n            float physxRigidBody:cfmScale = {cfm_scale}",
        )
    path.write_text(text)
    error, ours, _ = joint_error(path, 60)
    assert error <= TOL, f"max joint error {error:.3g} vs PhysX {solver}"
    if cfm_scale is None:  # it matters: without the cfm the run is elsewhere
        stiff = tmp_path / "no_cfm.usda"
        stiff.write_text(
            text.replace(
                "maxAngularVelocity = 1e10", "maxAngularVelocity = 1e10\n            float physxRigidBody:cfmScale = 0"
            )
        )
        other = run_usdart(stiff, 1 / 60, len(ours["joint_position"]))
        assert np.abs(other["joint_position"] - ours["joint_position"]).max() > 1e-3


def slider_stage(tmp_path: Path, solver: str, velocity: float, line: str = "", meters_per_unit: float = 1.0) -> Path:
    """The pendulum's hinge turned into a slider along X in zero gravity, started at `velocity` stage units/s;
    `line`: one more attribute line on it (its PhysxJointAxisAPI:linear applied)."""
    text = pendulum_stage(tmp_path, "pendulum", solver).read_text().replace("Magnitude = 9.81", "Magnitude = 0")
    apis = '"PhysicsJointStateAPI:linear", "PhysxJointAxisAPI:linear"' if line else '"PhysicsJointStateAPI:linear"'
    text = text.replace(
        'def PhysicsRevoluteJoint "hinge" ', f'def PhysicsPrismaticJoint "hinge" (prepend apiSchemas = [{apis}])'
    )
    text = text.replace(
        'uniform token physics:axis = "Y"\n',
        f'uniform token physics:axis = "X"\n            float state:linear:physics:velocity = {velocity}\n'
        + (f"            {line}\n" if line else ""),
    )
    path = tmp_path / "slider.usda"
    path.write_text(text.replace("metersPerUnit = 1\n", f"metersPerUnit = {meters_per_unit}\n"))
    return path


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    "velocity, line, expected",
    [
        (150.0, "", 100.0),
        (50.0, "", 50.0),
        (150.0, "float physxJointAxis:linear:maxJointVelocity = 120", 100.0),
        (150.0, "float physxJointAxis:linear:maxJointVelocity = 0.5", 0.5),
    ],
)
def test_a_slider_is_capped_at_100_units_per_second_as_in_physx(tmp_path, solver, velocity, line, expected):
    """PhysX scales all joint velocities down at the step start when one passes a bound it reads by the DOF's
    index in its joint: a slider reads rotX's slot, PhysX's default 100 stage units/s, whatever it authors
    above that; a smaller maxJointVelocity is enforced by the slider's own row. Velocities to 1e-4 m/s;
    positions (up to 200 m, summed in float32 by PhysX, every TGS substep) to 1e-4 relative."""
    path = slider_stage(tmp_path, solver, velocity, line)
    _, ours, theirs = joint_error(path, 60)
    assert np.abs(ours["joint_velocity"] - theirs["joint_velocity"]).max() <= TOL
    assert ours["joint_position"][:, 0] == pytest.approx(theirs["joint_position"][:, 0], rel=1e-4)
    assert ours["joint_velocity"][-1, 0] == pytest.approx(expected) == theirs["joint_velocity"][-1, 0]


def test_the_slider_cap_is_100_stage_units_and_scales_every_joint(tmp_path):
    """On a centimetre stage the cap is 100 cm/s (PhysX reads stage units); the scaling is uniform: a hinge
    on the capped slider, started at 10 rad/s, is slowed by the same factor (150 -> 100 m/s: 6.667 rad/s)."""
    path = slider_stage(tmp_path, "PGS", 150.0, meters_per_unit=0.01)
    theirs = run_physx(path, 1 / 60, 3, solver=None)["joint_velocity"][:, 0]
    ours = run_usdart(path, 1 / 60, 3)["joint_velocity"][:, 0]
    assert theirs == pytest.approx(100.0) and ours == pytest.approx(1.0)  # cm/s there, m/s here
    text = slider_stage(tmp_path, "PGS", 150.0).read_text()
    head, tail = text.split('        def PhysicsFixedJoint "anchor"')
    link2 = (
        head[head.index('        def Xform "link"') :].replace('"link"', '"link2"').replace("(1, 0, 0)", "(2, 0, 0)")
    )
    hinge = """        def PhysicsRevoluteJoint "hinge2" (prepend apiSchemas = ["PhysicsJointStateAPI:angular"])
        {
            uniform token physics:axis = "Y"
            rel physics:body0 = </World/arm/link>
            rel physics:body1 = </World/arm/link2>
            point3f physics:localPos0 = (0, 0, 0)
            point3f physics:localPos1 = (-1, 0, 0)
            float state:angular:physics:velocity = 572.9577951308232
        }
"""
    path.write_text(head + link2 + hinge + '        def PhysicsFixedJoint "anchor"' + tail)
    theirs = run_physx(path, 1 / 60, 1, solver=None)["joint_velocity"][0]
    ours = run_usdart(path, 1 / 60, 1)["joint_velocity"][0]
    assert np.abs(theirs - ours).max() <= 1e-4 and ours[1] == pytest.approx(10.0 * 100.0 / 150.0, rel=0.01)


def with_scene_line(path: Path, line: str) -> Path:
    """The stage at `path` with one more attribute line on its PhysicsScene (after the solver type)."""
    text = path.read_text()
    solver_line = next(x for x in text.splitlines() if "physxScene:solverType" in x)
    path.write_text(text.replace(solver_line, f"{solver_line}\n        {line}"))
    return path


@pytest.mark.parametrize("every_iteration", [None, "true", "false"])
@pytest.mark.parametrize("scenario", ["plain bodies", "joint_friction"])
def test_tgs_external_forces_act_in_every_substep_unless_turned_off(tmp_path, scenario, every_iteration):
    """ovphysx behaves as with physxScene:enableExternalForcesEveryIteration = true where it is not authored
    (its schema says false; README "PhysX behaviour"): gravity acts in each TGS substep (a free fall moves by
    (N + 1) / 2N g dt^2 a step), link damping at the step start, joint friction bounds each substep's own
    impulse. Authored false: all of them at the step start, friction accumulated over the step."""
    path = plain_bodies(tmp_path, "TGS") if scenario == "plain bodies" else pendulum_stage(tmp_path, scenario, "TGS")
    if every_iteration is not None:
        with_scene_line(path, f"bool physxScene:enableExternalForcesEveryIteration = {every_iteration}")
    for rate in RATES:
        error, ours, _ = joint_error(path, rate)
        assert error <= TOL, f"{scenario}, every iteration {every_iteration}, {rate} Hz: max joint error {error:.3g}"
    flipped = usdart.load(str(path))
    assert flipped.external_forces_every_iteration is (every_iteration != "false")
    flipped.time_step = 1.0 / RATES[-1]
    flipped.external_forces_every_iteration = not flipped.external_forces_every_iteration  # it matters here:
    flipped.step(round(DURATION * RATES[-1]))
    cache = flipped.articulations[0].create_cache()
    flipped.articulations[0].copy_internal_state_to_cache(cache)
    assert abs(cache.joint_position[0] - ours["joint_position"][-1, 0]) > 1e-3


@pytest.mark.parametrize("iterations", [1, 8])
def test_tgs_free_fall_moves_by_the_substep_closed_form(tmp_path, iterations):
    """A floating two-link body driving its hinge while it falls: its centre of mass follows TGS's free fall
    c_n = c_0 - g dt^2 (n (n - 1) / 2 + n (N + 1) / 2N) for N position iterations (internal forces cannot
    move it), and its link poses agree with PhysX's."""
    path = free_driven_body(tmp_path, "TGS")
    text = path.read_text().replace("Magnitude = 0", "Magnitude = 9.81")
    text = text.replace(
        '["PhysicsArticulationRootAPI"])\n    {',
        '["PhysicsArticulationRootAPI", "PhysxArticulationAPI"])\n    {\n'
        f"        int physxArticulation:solverPositionIterationCount = {iterations}",
    )
    assert "solverPositionIterationCount" in text
    path.write_text(text)
    rate = 60
    error, ours, theirs = joint_error(path, rate)
    assert error <= TOL
    assert np.abs(theirs["link_pose"][..., :3] - ours["link_pose"][..., :3]).max() <= TOL
    n, dt, g = np.arange(1, len(ours["link_pose"]) + 1), 1.0 / rate, 9.81
    com_z = ours["link_pose"][:, :, 2].mean(axis=1)  # equal link masses, COMs at the link origins
    share = (iterations + 1) / (2 * iterations)
    assert com_z == pytest.approx(-g * dt * dt * (n * (n - 1) / 2 + n * share), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "link_mass",
    [
        "float physics:mass = 0",  # the URDF converter's massless frames (panda_link8): 1 kg, sphere inertia
        "float physics:mass = 0\n            float3 physics:diagonalInertia = (0.1, 0.1, 0.1)",  # keeps its inertia
        "float physics:mass = 0\n            float3 physics:diagonalInertia = (0.1, 0.1, 0.1)\n"
        "            point3f physics:centerOfMass = (0.3, 0, 0)",  # and its centre of mass
        "",  # no mass at all and no collider
    ],
    ids=["mass 0", "mass 0 with inertia", "mass 0 with inertia and COM", "no mass"],
)
def test_a_body_without_mass_gets_physx_fallback(tmp_path, link_mass):
    """PhysX gives a body that resolves to no mass 1 kg (authored COM and inertia kept, else a 0.1 m
    sphere's inertia); usdart does the same by default and moves as PhysX does."""
    text = pendulum_stage(tmp_path, "pendulum").read_text()
    head, link = text.split('def Xform "link"')
    link = link.replace(
        "            float physics:mass = 1\n            float3 physics:diagonalInertia = (0.1, 0.1, 0.1)",
        "            " + link_mass,
        1,
    )
    path = tmp_path / "massless_link.usda"
    path.write_text(head + 'def Xform "link"' + link)
    scene = usdart.load(str(path))
    assert scene.articulations[0].link_masses[1] == 1.0
    assert any("PhysX's fallback of 1 mass unit" in w for w in scene.warnings)
    error, _, _ = joint_error(path, 60)
    assert error <= TOL, f"max joint error {error:.3g} vs PhysX PGS"


@pytest.mark.parametrize(
    "attribute",
    ["newton:damping = 2", "newton:armature = 0.5", "newton:friction = 3", "newton:velocityLimit = 20"],
)
def test_physx_reads_newton_joint_attributes(tmp_path, attribute):
    """ovphysx with the Newton schema registered (as usdart installs it) seeds a hinge's armature, viscous
    friction, friction efforts and velocity limit from NewtonJointAPI; usdart's "physx" reading does the same
    and moves as PhysX does (the attribute changes the swing by more than 0.1 rad)."""
    path = pendulum_stage(tmp_path, "pendulum")
    text = path.read_text().replace(
        'def PhysicsRevoluteJoint "hinge" ',
        'def PhysicsRevoluteJoint "hinge" (prepend apiSchemas = ["NewtonJointAPI"])',
    )
    text = text.replace(
        'uniform token physics:axis = "Y"\n', f'uniform token physics:axis = "Y"\n            float {attribute}\n'
    )
    path.write_text(text)
    error, ours, _ = joint_error(path, 60)
    assert error <= TOL, f"{attribute}: max joint error {error:.3g} vs PhysX PGS"
    (tmp_path / "plain").mkdir()
    _, plain, _ = joint_error(pendulum_stage(tmp_path / "plain", "pendulum"), 60)
    assert np.abs(plain["joint_position"] - ours["joint_position"]).max() > 0.1  # the attribute does act


@pytest.mark.parametrize("attribute", ["physxJoint:armature = 0.5", "physxJoint:maxJointVelocity = 10"])
def test_physx_ignores_physx_joint_api(tmp_path, attribute):
    """PhysX's schemas (physx-usd-schemas 25.11, as ovphysx 0.7 runs them) have no PhysxJointAPI: its
    attributes change nothing there, and usdart's "physx" reading ignores them with a warning naming the
    prim (the per-axis PhysxJointAxisAPI:<axis> is read); the "newton" reading still applies them."""
    path = pendulum_stage(tmp_path, "pendulum", "TGS")
    text = path.read_text().replace(
        'def PhysicsRevoluteJoint "hinge" ', 'def PhysicsRevoluteJoint "hinge" (prepend apiSchemas = ["PhysxJointAPI"])'
    )
    path.write_text(text.replace('physics:axis = "Y"\n', f'physics:axis = "Y"\n            float {attribute}\n'))
    error, ours, _ = joint_error(path, 60)
    assert error <= TOL, f"{attribute}: max joint error {error:.3g} vs PhysX"
    assert any(w.startswith("/World/arm/hinge: physxJoint:") for w in usdart.load(str(path)).warnings)
    newton = usdart.load(str(path), semantics="newton")
    newton.solver, newton.time_step = "TGS", 1 / 60
    newton.step(round(DURATION * 60))
    cache = newton.articulations[0].create_cache()
    newton.articulations[0].copy_internal_state_to_cache(cache)
    assert abs(cache.joint_position[0] - ours["joint_position"][-1, 0]) > 0.1


@pytest.mark.parametrize("solver", SOLVERS)
def test_corpus_panda_first_steps_match_physx_with_its_newton_mimic(tmp_path, solver):
    """The converted Panda (self-collisions off: PhysxArticulationAPI applied on its root, which the converter
    leaves out) falling from rest at 240 Hz: the first 0.25 s agree with PhysX to 1e-4 rad (measured 1.1e-5;
    later the joint limits it reaches make the runs part, see the README). PhysX (the Newton schema registered)
    couples its fingers by the NewtonMimicAPI the converter wrote; usdart's "physx" reading does too."""
    path = force_solver(Path(__file__).parent / "data" / "panda" / "panda.usda", solver, tmp_path / "panda.usda")
    stage = Usd.Stage.Open(str(path))
    for prim in stage.Traverse():
        if prim.HasAPI(UsdPhysics.ArticulationRootAPI):
            prim.AddAppliedSchema("PhysxArticulationAPI")
            prim.CreateAttribute("physxArticulation:enabledSelfCollisions", Sdf.ValueTypeNames.Bool).Set(False)
    stage.Save()
    rate, steps = 240, 60
    ours, theirs = run_usdart(path, 1.0 / rate, steps), run_physx(path, 1.0 / rate, steps, solver=None)
    assert np.abs(ours["joint_position"] - theirs["joint_position"]).max() <= TOL
    assert len(usdart.load(str(path)).articulations[0].mimic_joints) == 1


# ---- joints outside articulations: a free body hung from the world -------------------------------------------
HUNG_BODY = (
    SCENE
    + """\
    def Xform "box" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI", "PhysxRigidBodyAPI"])
    {
        float physics:mass = 1
        float3 physics:diagonalInertia = (0.1, 0.1, 0.1)
        float physxRigidBody:linearDamping = 0
        float physxRigidBody:angularDamping = 0
        float physxRigidBody:maxAngularVelocity = 1e10
        double3 xformOp:translate = (1, 0, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
    def JOINT "joint"
    {
        rel physics:body1 = </World/box>
        point3f physics:localPos0 = (0, 0, 0)
        point3f physics:localPos1 = (-1, 0, 0)
        AXIS
    }
}
"""
)
LOCK = "float limit:{0}:physics:low = 1\n        float limit:{0}:physics:high = -1"
D6_LOCKS = ["transX", "transY", "rotX", "rotY"]  # free: transZ and rotZ, a cylindrical joint about Z
HUNG_JOINTS = {
    "D6 cylindrical": (
        'PhysicsJoint "joint" (prepend apiSchemas = [' + ", ".join(f'"PhysicsLimitAPI:{a}"' for a in D6_LOCKS) + "])\n",
        "\n        ".join(LOCK.format(a) for a in D6_LOCKS),
    ),
    "revolute": ("PhysicsRevoluteJoint", 'uniform token physics:axis = "Y"'),  # swings about Y
    "prismatic": ("PhysicsPrismaticJoint", 'uniform token physics:axis = "Z"'),  # falls along Z
    "spherical": ("PhysicsSphericalJoint", 'uniform token physics:axis = "X"'),  # swings as the revolute
    "fixed": ("PhysicsFixedJoint", ""),  # held 1 m out
}


def both_hung(path, steps: int, rate: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """PhysX's and usdart's poses of /World/box after each of `steps` steps at `rate` Hz: (theirs, ours)."""
    theirs = run_physx_bodies(path, 1.0 / rate, steps, ["/World/box"])["pose"][:, 0]
    return theirs, run_usdart_bodies(path, 1.0 / rate, steps, ["/World/box"])[:, 0]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("kind", HUNG_JOINTS)
def test_a_free_body_hung_from_the_world_moves_as_in_physx(tmp_path, kind, solver):
    """A 1 kg body hung from the world by each joint kind, outside any articulation (PhysX's maximal-
    coordinate joint rows; usdart's joint rows between a one-link tree and the world): its pose over 2 s
    at 60 Hz, to 1e-4 m (a D6 with free linear and angular axes too: PhysX simulates any D6 there). The
    welded body is held exactly (2e-10 m) because a joint's rows are made
    independent as PhysX makes them (without that, Gauss-Seidel let it sag 5.9e-4 m in a step)."""
    joint_type, axis = HUNG_JOINTS[kind]
    path = tmp_path / f"hung_{kind.replace(' ', '_')}_{solver}.usda"
    text = HUNG_BODY.replace("SOLVER", solver).replace("AXIS", axis)
    if joint_type.startswith("PhysicsJoint"):  # a D6: its declaration carries the limit APIs; thrown up its
        text = text.replace('def JOINT "joint"\n', "def " + joint_type)  # free axis and spun about locked
        text = text.replace(  # ones, which the joint stops (falling freely alone would look the same)
            "double3 xformOp:translate = (1, 0, 0)",
            "vector3f physics:velocity = (0, 0, 2)\n        vector3f physics:angularVelocity = (90, 90, 0)\n"
            "        double3 xformOp:translate = (1, 0, 0)",
        )
    path.write_text(text.replace("JOINT", joint_type))
    theirs, ours = both_hung(path, round(DURATION * 60))
    assert np.abs(theirs[0, :3] - [1.0, 0.0, 0.0]).max() < 0.1  # hung where authored
    assert (np.ptp(theirs[:, 2]) < 1e-6) if kind == "fixed" else (np.ptp(theirs[:, 2]) > 0.1)  # held or moving
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL
    assert rotation_angle(theirs, ours).max() <= TOL


def hung_as_in_physx(path: Path, text: str) -> tuple[np.ndarray, np.ndarray]:
    """The hung-body stage `text` written to `path`, every joint simulated (no warning says otherwise), and
    both_hung's poses over DURATION at 60 Hz, checked equal to TOL in position and rotation: (theirs, ours)."""
    path.write_text(text)
    assert not [w for w in usdart.load(str(path)).warnings if "not simulated" in w]
    theirs, ours = both_hung(path, round(DURATION * 60))
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL
    assert rotation_angle(theirs, ours).max() <= TOL
    return theirs, ours


LIMITED_JOINTS = {  # the hung body's joint with limits on its free axes: joint type, axis and limit lines, end
    "revolute into its upper limit": (  # falls about Y from horizontal, to rest at 40 deg
        "PhysicsRevoluteJoint",
        'uniform token physics:axis = "Y"\n        float physics:lowerLimit = -30\n'
        "        float physics:upperLimit = 40",
    ),
    "prismatic onto its lower limit": (  # falls along Z, to rest 0.3 m down
        "PhysicsPrismaticJoint",
        'uniform token physics:axis = "Z"\n        float physics:lowerLimit = -0.3\n'
        "        float physics:upperLimit = 0.2",
    ),
    "D6 cylindrical, both axes limited": (  # thrown up its free Z and spun about it into both limits
        HUNG_JOINTS["D6 cylindrical"][0].replace("])", ', "PhysicsLimitAPI:transZ", "PhysicsLimitAPI:rotZ"])'),
        HUNG_JOINTS["D6 cylindrical"][1]
        + "\n        float limit:transZ:physics:low = -0.2\n        float limit:transZ:physics:high = 0.05"
        + "\n        float limit:rotZ:physics:low = -25\n        float limit:rotZ:physics:high = 35",
    ),
}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("kind", LIMITED_JOINTS)
def test_limits_of_a_joint_outside_articulations_hold_as_in_physx(tmp_path, kind, solver):
    """The hung body with the limits of its joint's free axes: PhysX's D6 limit rows (a rotation's angle as
    its twist about the axis, a linear axis along body0's joint axis; each side an inequality row, its bias
    kept while the limit is not reached, and made independent of the joint's locked rows as PhysX's
    preprocessRows makes it: of all of them in PGS, of those of its kind in TGS; a linear limit between rigid
    bodies also turns with their lever arms in every TGS substep, as PhysX's linear rows do). Its pose over 2 s
    at 60 Hz equals PhysX's to 1e-4 (measured 6e-8 to 5e-6), and it ends on its limit (PGS exactly: 40 deg to
    1e-6 rad, -0.3 m to 1e-6 m; PhysX's TGS rests 3.3e-4 rad past the revolute's, usdart's too). Before, these
    limits were not simulated (a warning said so)."""
    joint_type, lines = LIMITED_JOINTS[kind]
    text = HUNG_BODY.replace("SOLVER", solver).replace("AXIS", lines)
    if kind.startswith("D6"):
        text = text.replace('def JOINT "joint"\n', "def " + joint_type).replace(
            "double3 xformOp:translate = (1, 0, 0)",
            "vector3f physics:velocity = (0, 0, 2)\n        vector3f physics:angularVelocity = (0, 0, 200)\n"
            "        double3 xformOp:translate = (1, 0, 0)",
        )
    theirs, ours = hung_as_in_physx(tmp_path / f"limited_{solver}.usda", text.replace("JOINT", joint_type))
    x, z = ours[-1, 0], ours[-1, 2]
    if kind.startswith("revolute"):
        angle = math.atan2(-z, x)  # the body turned about Y from (1, 0, 0)
        assert abs(angle - math.radians(40)) < (1e-6 if solver == "PGS" else 1e-3)
    elif kind.startswith("prismatic"):
        assert abs(z + 0.3) < (1e-6 if solver == "PGS" else 1e-4)


DRIVEN_JOINTS = {  # the hung body's joint with a drive on its free axis: joint type, drive instance, lines
    "revolute to a target angle": (
        "PhysicsRevoluteJoint",
        "angular",
        'uniform token physics:axis = "Y"\n        float drive:angular:physics:stiffness = 2\n'
        "        float drive:angular:physics:damping = 0.05\n        float drive:angular:physics:targetPosition = -30",
    ),
    "revolute at a target speed, capped": (
        "PhysicsRevoluteJoint",
        "angular",
        'uniform token physics:axis = "Y"\n        float drive:angular:physics:damping = 1\n'
        "        float drive:angular:physics:targetVelocity = -90\n        float drive:angular:physics:maxForce = 12",
    ),
    "revolute, acceleration drive": (
        "PhysicsRevoluteJoint",
        "angular",
        'uniform token physics:axis = "Y"\n        uniform token drive:angular:physics:type = "acceleration"\n'
        "        float drive:angular:physics:stiffness = 0.5\n        float drive:angular:physics:damping = 0.02\n"
        "        float drive:angular:physics:targetPosition = -20",
    ),
    "revolute driven against its limit": (
        "PhysicsRevoluteJoint",
        "angular",
        'uniform token physics:axis = "Y"\n        float drive:angular:physics:stiffness = 5\n'
        "        float drive:angular:physics:damping = 0.1\n        float drive:angular:physics:targetPosition = -80\n"
        "        float physics:lowerLimit = -45\n        float physics:upperLimit = 45",
    ),
    "prismatic to a target position": (
        "PhysicsPrismaticJoint",
        "linear",
        'uniform token physics:axis = "Z"\n        float drive:linear:physics:stiffness = 200\n'
        "        float drive:linear:physics:damping = 5\n        float drive:linear:physics:targetPosition = 0.2",
    ),
}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("kind", DRIVEN_JOINTS)
def test_drives_of_a_joint_outside_articulations_act_as_in_physx(tmp_path, kind, solver):
    """The hung body driven along its joint's free axis: PhysX's D6 drive rows (along body0's joint axis; a
    rotation's error 2 sin of half its turn from the target; PhysX's implicit spring, PGS and TGS, force and
    acceleration drives, the impulse capped at maxForce dt). Its pose over 2 s at 60 Hz equals PhysX's to 1e-4
    (measured 2e-8 to 6e-6). Before, these drives were not simulated (a warning said so)."""
    joint_type, instance, lines = DRIVEN_JOINTS[kind]
    text = HUNG_BODY.replace("SOLVER", solver).replace("AXIS", lines)
    api = f'(prepend apiSchemas = ["PhysicsDriveAPI:{instance}"])'
    text = text.replace('def JOINT "joint"\n', f'def JOINT "joint" {api}\n')
    theirs, ours = hung_as_in_physx(tmp_path / f"driven_{solver}.usda", text.replace("JOINT", joint_type))
    assert np.ptp(theirs[:, 2]) > 0.05  # it moved


def bob_on_its_joint(stage, path, solver) -> tuple[np.ndarray, np.ndarray]:
    """The stage written to `path`, all its joints simulated (no warning says otherwise), and /World/bob's poses
    in ovphysx and usdart over DURATION at 60 Hz: (theirs, ours), their positions checked to TOL."""
    stage.GetRootLayer().Export(str(path))
    assert not [w for w in usdart.load(str(path)).warnings if "not simulated" in w]
    dt, steps = 1 / 60, round(DURATION * 60)
    theirs = run_physx_bodies(path, dt, steps, ["/World/bob"], solver)["pose"][:, 0]
    ours = run_usdart_bodies(path, dt, steps, ["/World/bob"], solver)[:, 0]
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL
    return theirs, ours


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("cone, spin", [((30.0, 20.0), 0.0), ((20.0, 40.0), 90.0)], ids=["falls onto", "spun along"])
def test_a_spherical_joint_cone_outside_articulations_holds_as_in_physx(tmp_path, solver, cone, spin):
    """A 2 kg body on a ball joint to the world, its swing limited by an elliptical cone (half-angles about Y
    and Z): it falls onto the cone, or is spun (deg/s about Z) along its edge. PhysX's cone row
    (ConeLimitHelperTanLess: the swing's tan-quarter angles clamped to the ellipse, the row about the edge's
    normal, its error the sine of the angle left): the pose over 2 s at 60 Hz equals ovphysx's to 1e-4
    (measured 4e-7 to 1.4e-5; spun, the body's unequal moments turn it as PhysX's rigid bodies turn, without
    which it parted by 6e-3 m, cone or not). Falling, it rests on the cone's 30 deg."""
    stage = new_stage()
    bob = body(stage, "/World/bob", pos=(1, 0, 1), mass=2.0, inertia=(0.1, 0.2, 0.3))
    if spin:
        bob.CreateAttribute("physics:angularVelocity", Sdf.ValueTypeNames.Vector3f).Set((0, 0, spin))
        bob.CreateAttribute("physics:velocity", Sdf.ValueTypeNames.Vector3f).Set((0, math.radians(spin), 0))
    ball = joint(stage, "/World/ball", None, "/World/bob", kind="spherical", axis="X", lp0=(0, 0, 1), lp1=(-1, 0, 0))
    ball.CreateAttribute("physics:coneAngle0Limit", Sdf.ValueTypeNames.Float).Set(cone[0])
    ball.CreateAttribute("physics:coneAngle1Limit", Sdf.ValueTypeNames.Float).Set(cone[1])
    theirs, ours = bob_on_its_joint(stage, tmp_path / "cone.usda", solver)
    from usdart.core.frames import quat_to_matrix

    swing = [quat_to_matrix(a[3:])[:, 0] @ quat_to_matrix(b[3:])[:, 0] for a, b in zip(theirs, ours)]
    assert np.arccos(np.clip(swing, -1.0, 1.0)).max() <= TOL  # the body's x axis: what the cone holds
    assert rotation_angle(theirs, ours).max() <= TOL
    if not spin:
        assert math.atan2(1.0 - ours[-1, 2], ours[-1, 0]) == pytest.approx(math.radians(30), abs=2e-3)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("spin", [0.0, 200.0], ids=["falls onto", "spun along"])
def test_a_d6_swing_pyramid_outside_articulations_holds_as_in_physx(tmp_path, solver, spin):
    """A 2 kg body on a D6 to the world with its linear axes and twist locked, its swings about Y and Z limited
    to [-25, 35] and [-15, 40] deg (PhysX's pyramid: each swing's angle 4 atan2(s_a, 1 + s_w) of the
    rotation's swing part, its row about that axis turned by the swing): it falls onto the Y limit and rests
    there, or is spun (deg/s about Z) along the pyramid's edges, as in ovphysx, to 1e-4 over 2 s at 60 Hz
    (measured 4e-7 to 1.5e-6 in PGS, 8e-6 to 4.5e-5 in TGS)."""
    stage = new_stage()
    bob = body(stage, "/World/bob", pos=(1, 0, 1), mass=2.0, inertia=(0.1, 0.2, 0.3))
    if spin:
        bob.CreateAttribute("physics:angularVelocity", Sdf.ValueTypeNames.Vector3f).Set((0, 0, spin))
        bob.CreateAttribute("physics:velocity", Sdf.ValueTypeNames.Vector3f).Set((0, math.radians(spin), 0))
    d6 = joint(stage, "/World/d6", None, "/World/bob", kind="d6", lp0=(0, 0, 1), lp1=(-1, 0, 0))
    for axis, (low, high) in (
        ("transX", (1, -1)),
        ("transY", (1, -1)),
        ("transZ", (1, -1)),
        ("rotX", (1, -1)),  # locked
        ("rotY", (-25, 35)),
        ("rotZ", (-15, 40)),
    ):
        UsdPhysics.LimitAPI.Apply(d6, axis).CreateLowAttr(float(low))
        UsdPhysics.LimitAPI(d6, axis).CreateHighAttr(float(high))
    theirs, ours = bob_on_its_joint(stage, tmp_path / "pyramid.usda", solver)
    assert rotation_angle(theirs, ours).max() <= TOL
    if not spin:
        assert math.atan2(1.0 - ours[-1, 2], ours[-1, 0]) == pytest.approx(math.radians(35), abs=2e-3)


D6_DRIVES = {  # per driven rotation: stiffness, damping (per degree), target position (deg), target velocity (deg/s)
    "swing about Y to 30 deg": {"rotY": (2.0, 0.1, 30.0, 0.0)},
    "swing about Z at 40 deg/s": {"rotZ": (0.0, 1.0, 0.0, 40.0)},
    "twist and swings held at 0": {
        "rotX": (2.0, 0.1, 0.0, 0.0),
        "rotY": (1.0, 0.05, 0.0, 0.0),
        "rotZ": (3.0, 0.1, 0.0, 0.0),
    },
    "twist and swings to (10, 30, 20) deg": {
        "rotX": (2.0, 0.1, 10.0, 0.0),
        "rotY": (1.0, 0.05, 30.0, 0.0),
        "rotZ": (3.0, 0.1, 20.0, 0.0),
    },
}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("case", D6_DRIVES)
def test_the_swing_and_twist_drives_of_a_d6_outside_articulations_act_as_in_physx(tmp_path, case, solver):
    """A 2 kg body on a D6 to the world with its linear axes locked and its rotations free, driven about them:
    PhysX's swing1 / swing2 drives (rotY / rotZ, each with its own gains: a drive about one leaves the other
    swing free) and twist drive (rotX), all toward one target rotation, rotZ's turn times rotY's times rotX's,
    each row's error taken from delta = the relative rotation times the target's inverse (the twist 2 delta_x,
    a swing the z or -y component of delta's x axis; both measured on ovphysx: with delta the other way round
    a target off more than one axis was reached along another path, 0.19 m apart after 2 s). Its pose over 2 s
    at 60 Hz equals ovphysx's to 1e-4 (measured 2e-7 to 2.9e-5)."""
    stage = new_stage()
    body(stage, "/World/bob", pos=(1, 0, 1), mass=2.0, inertia=(0.1, 0.2, 0.3))
    d6 = joint(stage, "/World/d6", None, "/World/bob", kind="d6", lp0=(0, 0, 1), lp1=(-1, 0, 0))
    for axis in ("transX", "transY", "transZ"):
        UsdPhysics.LimitAPI.Apply(d6, axis).CreateLowAttr(1.0)
        UsdPhysics.LimitAPI(d6, axis).CreateHighAttr(-1.0)  # locked
    if "rotX" not in D6_DRIVES[case]:
        UsdPhysics.LimitAPI.Apply(d6, "rotX").CreateLowAttr(1.0)
        UsdPhysics.LimitAPI(d6, "rotX").CreateHighAttr(-1.0)
    for axis, (stiffness, damping, position, velocity) in D6_DRIVES[case].items():
        drive = UsdPhysics.DriveAPI.Apply(d6, axis)
        drive.CreateStiffnessAttr(stiffness)
        drive.CreateDampingAttr(damping)
        drive.CreateTargetPositionAttr(position)
        drive.CreateTargetVelocityAttr(velocity)
    theirs, ours = bob_on_its_joint(stage, tmp_path / "d6_drives.usda", solver)
    assert rotation_angle(theirs, ours).max() <= TOL


# an arm (a fixed-base articulation: base welded to the world, a 1 m link on a driven Y hinge) with a 0.5 kg bob
# hinged to its tip by a joint excluded from the articulation: PhysX's "extended" joint, link to rigid body
ARM_WITH_BOB = """
    def Xform "robot" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
    {
BASE
ARM
        def PhysicsFixedJoint "anchor"
        {
            rel physics:body1 = </World/robot/base>
        }
        def PhysicsRevoluteJoint "shoulder" (prepend apiSchemas = ["PhysicsDriveAPI:angular"])
        {
            rel physics:body0 = </World/robot/base>
            rel physics:body1 = </World/robot/arm>
            point3f physics:localPos1 = (-0.5, 0, 0)
            uniform token physics:axis = "Y"
            DRIVE
        }
    }
    def PhysicsRevoluteJoint "hook"
    {
        rel physics:body0 = </World/robot/arm>
        rel physics:body1 = </World/bob>
        point3f physics:localPos0 = (0.5, 0, 0)
        point3f physics:localPos1 = (HOOK)
        uniform token physics:axis = "AXIS"
        bool physics:excludeFromArticulation = 1
    }
"""
ARM_DRIVES = {  # the shoulder's drive lines (stiffness and damping per degree)
    "held": "float drive:angular:physics:stiffness = 1e4\n            float drive:angular:physics:damping = 100",
    "turning at 60 deg/s": (
        "float drive:angular:physics:damping = 1e4\n            float drive:angular:physics:targetVelocity = 60"
    ),
}
EXTENDED_XFAIL = {  # (arm, axis, solver) -> the measured gap
    ("turning at 60 deg/s", "X", "PGS"): (
        "a moving link, the bob swinging across the arm's turn: within 6e-6 m for 20 steps, then apart to 5.8e-4 m "
        "after 2 s (64 iterations: the same; TGS agrees to 5.5e-5)"
    ),
}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("axis", ["Y", "X"], ids=["in the arm's plane", "across it"])
@pytest.mark.parametrize("arm", ARM_DRIVES)
def test_a_body_hinged_to_an_articulation_link_swings_as_in_physx(tmp_path, arm, axis, solver, request):
    """A 0.5 kg bob hinged 0.4 m off an arm's tip (about Y: in the arm's plane; about X: across it) by a joint
    excluded from the articulation, released from the horizontal: PhysX's extended joint, whose rows are not
    made independent and whose response takes the links' constraint-force mixing. Its pose over 2 s at 60 Hz
    equals ovphysx's to 1e-4 m with the arm held by a stiff drive or turned by one at 60 deg/s: the rows see
    the links' drift (kinematics.link_drifts) and are solved before the articulation's own rows, as PhysX
    solves its constraints before articulations' internal ones. Measured: held 5e-7 / 2.1e-5 m (PGS, about Y /
    X), 7.8e-6 / 1.2e-5 (TGS); turning 6.7e-7 (PGS about Y), 3.4e-5 / 5.5e-5 (TGS). Before: the rows made
    independent 2.5e-2 m; then without the drift, a turning arm 2.7e-3 (PGS) and 3.6e-2 (TGS); then with
    the joints solved after the drives, TGS 2.9e-4 to 6.9e-4 held (PhysX's joint sagging 2.4e-5 m under the
    bob from the first step, where usdart's held) and 1e-2 to 3e-2 turning. Where it does not agree yet, the
    measured gap is the xfail reason."""
    if (arm, axis, solver) in EXTENDED_XFAIL:
        request.applymarker(pytest.mark.xfail(strict=True, reason=EXTENDED_XFAIL[arm, axis, solver]))
    links = [free_body(name, pos, 1.0, inertia).replace("\n    ", "\n        ") for name, pos, inertia in (
        ("base", "0, 0, 0", "0.1, 0.1, 0.1"), ("arm", "0.5, 0, 0", "0.02, 0.1, 0.1"))]  # fmt: skip
    across = axis == "X"
    bob = free_body("bob", "1, 0.4, 0" if across else "1.4, 0, 0", 0.5, "0.01, 0.01, 0.01")
    stage = ARM_WITH_BOB.replace("BASE", links[0]).replace("ARM", links[1]).replace("DRIVE", ARM_DRIVES[arm])
    stage = stage.replace("HOOK", "0, -0.4, 0" if across else "-0.4, 0, 0").replace("AXIS", axis)
    path = tmp_path / "arm_with_bob.usda"
    path.write_text(SCENE.replace("SOLVER", solver) + stage + bob + "}\n")
    theirs = run_physx_bodies(path, 1 / 60, round(DURATION * 60), ["/World/bob"])["pose"][:, 0]
    ours = run_usdart_bodies(path, 1 / 60, round(DURATION * 60), ["/World/bob"])[:, 0]
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_flexing_spinning_loop_opens_as_in_physx(tmp_path, solver):
    """The square loop sample (four bodies at the corners of a 1 m square, Z hinges, the fourth closing the
    loop) started flexing (its tree joints at 1, -0.7, 0.4 rad/s by JointStateAPI) and spinning (0.3 rad/s
    about Z) as it falls. PhysX's rows see each link moving with its velocity-product acceleration over the
    step added (kinematics.link_drifts), which the loop joint, between links whose centres of mass are apart,
    reads as a relative motion: the loop opens, by up to 1 % of its edge over 2 s in PGS (measured: ovphysx
    0.0100 m, usdart 0.0095 m; usdart without the drift kept it closed to 1e-15 and was 2.3e-4 m from ovphysx
    from the first step). Every body within 1e-4 m of ovphysx over the first 40 steps (measured 2.9e-5 PGS,
    3.1e-5 TGS; the flexing loop is chaotic: they part later)."""
    stage = Usd.Stage.Open(str(SAMPLES / "square_loop.usda"))
    scene_prim = stage.GetPrimAtPath("/World/physicsScene")
    scene_prim.CreateAttribute("physxScene:solverType", Sdf.ValueTypeNames.Token).Set(solver)
    for name, speed in (("revoluteJoint0", 1.0), ("revoluteJoint1", -0.7), ("revoluteJoint2", 0.4)):
        hinge = stage.GetPrimAtPath("/World/" + name)
        hinge.AddAppliedSchema("PhysicsJointStateAPI:angular")
        hinge.CreateAttribute("state:angular:physics:position", Sdf.ValueTypeNames.Float).Set(0.0)
        hinge.CreateAttribute("state:angular:physics:velocity", Sdf.ValueTypeNames.Float).Set(math.degrees(speed))
    root = stage.GetPrimAtPath("/World/rigidBody0")
    root.CreateAttribute("physics:angularVelocity", Sdf.ValueTypeNames.Vector3f).Set((0.0, 0.0, math.degrees(0.3)))
    path = tmp_path / "square_spin.usda"
    stage.GetRootLayer().Export(str(path))
    names, steps = [f"/World/rigidBody{i}" for i in range(4)], 40
    theirs = run_physx_bodies(path, 1 / 60, steps, names, solver)["pose"]
    scene = usdart.load(str(path))
    scene.time_step = 1 / 60
    loop = scene.articulations[0]
    rows = [loop.link_index(n) for n in names]
    ours = np.zeros_like(theirs)
    for k in range(steps):
        scene.step()
        ours[k] = loop.link_transforms()[rows]
    assert np.abs(theirs[:, :, :3] - ours[:, :, :3]).max() <= TOL


# joint kind, axis line, how far the body is turned from the joint's frame (rad, about X), how far it is off (m)
DISPLACED = {
    "fixed, turned 1.2 rad": ("PhysicsFixedJoint", "", 1.2, 0.0),
    "fixed, turned 0.3 rad": ("PhysicsFixedJoint", "", 0.3, 0.0),
    "fixed, 9 m off": ("PhysicsFixedJoint", "", 0.0, 9.0),
    "revolute, locked axes turned 1 rad": ("PhysicsRevoluteJoint", 'uniform token physics:axis = "Y"', 1.0, 0.0),
}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("case", DISPLACED)
def test_a_joint_authored_away_from_its_body_pulls_it_in_as_in_physx(tmp_path, case, solver):
    """The hung body of the tests above with its joint frame turned or moved away from where the body is
    authored: the joint pulls it in over the first steps exactly as PhysX does (2 s at 60 Hz, to 1e-4; measured
    5e-6). Two PhysX rules make it so. A locked rotation is the imaginary part of the relative quaternion, so
    a large turn is corrected by 2 tan(angle / 2) (before: by the angle, 6.7e-2 apart after the first step in
    PGS). And TGS caps the correction speed a row's error asks for at 0.75 rad / dt, 15 m / dt between rigid
    bodies (before: uncapped, 5.4e-2 rad and 0.1 m apart)."""
    joint_type, axis, turn, off = DISPLACED[case]
    frame = f"quatf physics:localRot1 = ({math.cos(turn / 2)}, {math.sin(turn / 2)}, 0, 0)"
    text = HUNG_BODY.replace("SOLVER", solver).replace("AXIS", axis + "\n        " + frame)
    text = text.replace("JOINT", joint_type).replace("localPos1 = (-1, 0, 0)", f"localPos1 = ({-1.0 - off}, 0, 0)")
    path = tmp_path / f"displaced_{solver}.usda"
    path.write_text(text)
    theirs, ours = both_hung(path, round(DURATION * 60))
    assert np.abs(theirs[0] - [1.0, 0, 0, 1, 0, 0, 0]).max() > 0.05  # the first step pulled it well away
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL
    assert rotation_angle(theirs, ours).max() <= TOL


SECOND_HINGE = """\
        def PhysicsRevoluteJoint "a_hinge"
        {
            uniform token physics:axis = "Y"
            rel physics:body0 = </World/arm/base>
            rel physics:body1 = </World/arm/link>
            point3f physics:localPos0 = (0, 0, 0)
            point3f physics:localPos1 = (-1, 0, 0)
        }
"""


def siblings_stage(path: Path) -> None:
    """A fixed root R with children A (authored first, by joint j_b) and B (by j_a), each with one child (by
    k_z and k_y): stage order and joint-path order disagree at both levels."""
    stage = new_stage()
    for name, x in (("R", 0), ("A", 1), ("B", -1), ("C", 2), ("D", -2)):
        body(stage, f"/World/{name}", pos=(x, 0, 0))
    for name, parent, child, x in (("j_b", "R", "A", 0.5), ("j_a", "R", "B", -0.5), ("k_z", "A", "C", 0.5)):
        joint(stage, f"/World/{name}", f"/World/{parent}", f"/World/{child}", lp0=(x, 0, 0), lp1=(-x, 0, 0))
    joint(stage, "/World/k_y", "/World/B", "/World/D", lp0=(-0.5, 0, 0), lp1=(0.5, 0, 0))
    joint(stage, "/World/anchor", None, "/World/R", kind="fixed")
    root_api(stage, "/World/R")
    stage.GetRootLayer().Export(str(path))


@pytest.mark.parametrize("case", ["square loop, undeclared", "two hinges between the same links", "siblings"])
def test_the_tree_and_its_dof_order_are_physx_s(tmp_path, case):
    """Which joints PhysX makes the tree, and in which order it numbers them (measured on ovphysx). A loop
    nobody declared (no physics:excludeFromArticulation): joints are taken depth first from the root, each
    body's joints in prim-path order, and the joint that reaches a body already in the tree closes the loop;
    links are numbered breadth first, siblings in the path order of their joints. The square loop sample
    with its declaration removed: PhysX's DOFs are loopJoint, revoluteJoint2, revoluteJoint1 (usdart's tree
    had revoluteJoint0, loopJoint, revoluteJoint1); a second hinge "a_hinge" authored after the pendulum's
    "hinge": PhysX's tree joint is a_hinge (usdart took the first authored); siblings whose stage order and
    joint-path order disagree: PhysX's DOFs are j_a, j_b, k_y, k_z (usdart's followed the stage order)."""
    path = tmp_path / "tree.usda"
    if case == "siblings":
        siblings_stage(path)
    elif case.startswith("square"):
        text = (SAMPLES / "square_loop.usda").read_text()
        path.write_text(text.replace("uniform bool physics:excludeFromArticulation = 1", ""))
    else:
        text = pendulum_stage(tmp_path, "pendulum", "TGS").read_text()
        hinge = text.index('        def PhysicsRevoluteJoint "hinge"')
        end = text.index("        }\n", hinge) + len("        }\n")
        path.write_text(text[:end] + SECOND_HINGE + text[end:])
    theirs = run_physx(path, 1 / 60, 1, solver=None)["dof_names"]
    art = usdart.load(str(path)).articulations[0]
    assert [name.split(":")[0] for name in art.dof_names] == theirs
    expected = {
        "square loop, undeclared": ["/World/revoluteJoint0"],
        "two hinges between the same links": ["/World/arm/hinge"],
        "siblings": [],
    }
    assert art.loop_joints == expected[case]


def rest_step(poses: np.ndarray) -> int:
    """The first step after which nothing moves any more (poses (S, ..., 7) per step); S if still moving."""
    moved = np.flatnonzero(np.abs(np.diff(poses.reshape(len(poses), -1), axis=0)).max(axis=1) > 0)
    return int(moved[-1]) + 2 if len(moved) else 0


BOB_COLLIDER = """\
        def Cube "geom" (prepend apiSchemas = ["PhysicsCollisionAPI"])
        {
            double size = 0.2
        }
"""
FLOOR_BELOW = """\
    def Cube "floor" (prepend apiSchemas = ["PhysicsCollisionAPI"])
    {
        double size = 1
        double3 xformOp:translate = (0, 0, -1.608)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
"""


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("floor", [False, True])
def test_a_damped_hung_body_swings_and_falls_asleep_as_in_physx(tmp_path, solver, floor):
    """The hinged body of the tests above with linear and angular damping 3/s (PhysxRigidBodyAPI applied, its
    sleepThreshold unauthored), 5 s at 60 Hz: it swings out and comes to rest on PhysX's step, with PhysX's
    poses to 1e-4 (measured 2e-5) before and after. What it took: PhysX damps the velocity the body would
    reach, (v + g dt)(1 - c dt), not v (before: 4.9e-2 m apart in PGS); an unauthored threshold is PhysX's
    units-scaled 0.005 m^2/s^2 even with the API applied (before: 5e-5); the joint counts as an interaction
    of the body, which doubles its threshold (without: asleep 68 steps late); and a rigid body falls asleep
    at its pose of the step start, where PhysX rolls it back (before: one step late). With a floor 8 mm under
    the bob's lowest pass, never touched, PhysX's broad-phase pair is one more interaction: it sleeps some
    60 steps later (TGS 230 against 166), and so does usdart."""
    joint_type, axis = HUNG_JOINTS["revolute"]
    text = HUNG_BODY.replace("SOLVER", solver).replace("AXIS", axis).replace("JOINT", joint_type)
    text = text.replace("Damping = 0", "Damping = 3")
    if floor:
        order = '        uniform token[] xformOpOrder = ["xformOp:translate"]\n'
        text = text.replace(order + "    }\n    def ", order + BOB_COLLIDER + "    }\n" + FLOOR_BELOW + "    def ", 1)
    path = tmp_path / f"damped_{solver}.usda"
    path.write_text(text)
    theirs, ours = both_hung(path, 300)
    assert 60 < rest_step(theirs) < 300  # it swings, then sleeps
    assert (rest_step(theirs) > 200) == floor
    assert rest_step(ours) == rest_step(theirs)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL
    assert rotation_angle(theirs, ours).max() <= TOL


KINEMATIC_ANCHOR = """\
    def Xform "anchor" (prepend apiSchemas = ["PhysicsRigidBodyAPI"])
    {
        bool physics:kinematicEnabled = 1
        double3 xformOp:translate = (0.5, 0, 0.2)
        quatf xformOp:orient = (0.9659258, 0, 0, 0.25881904)
        uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:orient"]
    }
"""


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_body_hung_from_a_kinematic_body_moves_as_in_physx(tmp_path, solver):
    """The hinged body of the test above hung instead from a kinematic body (turned 30 degrees, away from the
    hinge; no kinematic target, so it holds still): the joint to it holds the body as in PhysX, to 1e-4 m
    over 2 s (usdart once left such joints out: the body fell). Moving ones: tests/test_kinematic.py."""
    joint_type, axis = HUNG_JOINTS["revolute"]
    half = math.radians(15.0)
    conjugate = f"({math.cos(half)}, 0, 0, {-math.sin(half)})"  # the anchor's turn undone: frames agree
    local = np.array([[math.cos(2 * half), math.sin(2 * half)], [-math.sin(2 * half), math.cos(2 * half)]])
    x, y = local @ [-0.5, 0.0]  # the world origin in the anchor's frame
    text = HUNG_BODY.replace("SOLVER", solver).replace("AXIS", axis).replace("JOINT", joint_type)
    text = text.replace('    def Xform "box"', KINEMATIC_ANCHOR + '    def Xform "box"')
    text = text.replace(
        "        point3f physics:localPos0 = (0, 0, 0)",
        "        rel physics:body0 = </World/anchor>\n"
        f"        point3f physics:localPos0 = ({x}, {y}, -0.2)\n"
        f"        quatf physics:localRot0 = {conjugate}",
    )
    path = tmp_path / f"hung_from_kinematic_{solver}.usda"
    path.write_text(text)
    rate, steps = 60, round(DURATION * 60)
    theirs = run_physx_bodies(path, 1.0 / rate, steps, ["/World/box"])["pose"][:, 0]
    scene = usdart.load(str(path))
    assert not any("/World/joint" in w for w in scene.warnings)
    scene.time_step = 1.0 / rate
    ours = np.zeros_like(theirs)
    for k in range(steps):
        scene.step()
        ours[k] = scene.body_transform("/World/box")
    assert np.ptp(theirs[:, 2]) > 0.1  # it swings
    assert np.abs(np.linalg.norm(ours[:, :3], axis=1) - 1.0).max() < 5e-3  # about the hinge at the origin
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL
    assert rotation_angle(theirs, ours).max() <= TOL


# ---- joint solver forces: what the joints apply, against PhysX's projected joint force -------------------------
PER_RAD = math.pi / 180  # gains and coefficients per degree as USD authors them: x per rad -> x * PER_RAD per deg
HELD = {  # case -> (hinge API schemas, hinge lines, the kind of solver row that holds the link)
    "a stiff drive": (
        ["PhysicsDriveAPI:angular"],
        f"""
            float drive:angular:physics:stiffness = {1e4 * PER_RAD}
            float drive:angular:physics:damping = {100 * PER_RAD}
            float drive:angular:physics:targetPosition = 0""",
        "drive",
    ),
    "a limit": ([], "\n            float physics:lowerLimit = -10\n            float physics:upperLimit = 10", "limit"),
    "a saturated drive": (  # 5 N m cannot lift the 9.81 N m link: it settles where gravity's torque is 5 N m
        ["PhysicsDriveAPI:angular", "PhysxJointAxisAPI:angular"],
        f"""
            float drive:angular:physics:stiffness = {1e4 * PER_RAD}
            float drive:angular:physics:maxForce = 5
            float drive:angular:physics:targetPosition = -90
            float physxJointAxis:angular:viscousFrictionCoefficient = {6 * PER_RAD}""",
        "drive",
    ),
    "friction": (
        ["PhysxJointAxisAPI:angular"],
        """
            float physxJointAxis:angular:staticFrictionEffort = 20
            float physxJointAxis:angular:dynamicFrictionEffort = 20""",
        "friction",
    ),
}


HELD_XFAIL: dict = {}  # (case, solver) -> why usdart does not match PhysX there yet


def _held_case(case, solver):
    known = HELD_XFAIL.get((case, solver))
    return pytest.param(solver, case, marks=pytest.mark.xfail(strict=True, reason=known) if known else ())


@pytest.mark.parametrize("solver, case", [_held_case(c, s) for c in HELD for s in SOLVERS])
def test_a_held_pendulum_reports_physx_projected_joint_force_and_the_inverse_dynamics(tmp_path, case, solver):
    """A 1 kg link 1 m from its hinge, held by a drive, a limit, a saturated drive (settling where gravity's
    torque is 5 N m) or friction, 8 s at 60 Hz: the joint's force along the DOF equals PhysX's projected joint
    force within 1e-4 relative and the inverse dynamics' gravity force at the pose; the split by kind puts it
    all on the row that holds the link (the saturated drive's exactly 5 N m)."""
    apis, hinge, kind = HELD[case]
    awake = (  # sleeping would freeze a link still settling: both simulators keep it awake
        'def Xform "arm" (prepend apiSchemas = ["PhysicsArticulationRootAPI", "PhysxArticulationAPI"])\n    {\n'
        "        float physxArticulation:sleepThreshold = 0\n"
    )
    text = (
        STAGE.replace('def Xform "arm" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])\n    {\n', awake)
        .replace("SOLVER", solver)
        .replace("BODY", BODY)
        .replace("HINGE_APIS", f"(prepend apiSchemas = [{', '.join(repr(a) for a in apis)}])" if apis else "")
        .replace("HINGE", FORWARD + hinge)
    )
    path = tmp_path / "held.usda"
    path.write_text(text)
    steps = 480
    theirs = run_physx(path, 1 / 60, steps, solver=None, forces=True)
    scene = usdart.load(str(path))
    scene.time_step = 1 / 60
    scene.step(steps)
    arm = scene.articulations[0]
    cache = arm.create_cache()
    arm.copy_internal_state_to_cache(cache)
    ours = arm.projected_joint_forces()
    physx = theirs["joint_projected_force"][-1]
    assert np.abs(ours - physx).max() <= 1e-4 * np.abs(physx).max(), (ours, physx)
    assert np.abs(cache.joint_solver_forces - ours).max() == 0.0  # no applied joint force here
    gravity = arm.compute_generalized_gravity_force(cache)
    assert np.abs(ours - gravity).max() <= 1e-4 * np.abs(gravity).max()
    split = cache.joint_solver_forces_by_kind
    assert np.abs(split[kind] - ours).max() <= 1e-4 * np.abs(ours).max()
    if case == "a saturated drive":
        assert np.abs(split["drive"]) == pytest.approx(5.0, abs=1e-9)
    assert abs(ours[0]) > 4.0


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("limit", [None, 20.0], ids=["swinging", "into a limit"])
def test_incoming_joint_forces_are_physx_s(tmp_path, solver, limit):
    """A 2 kg link hinged 1 m from a fixed base (centre of mass off its frame, PhysX's default link damping)
    falls from horizontal, freely or into a 20 deg limit, 1 s at 60 Hz. After every step its incoming joint
    force equals ovphysx's (in the child joint frame at the step end) within 5e-5 of its largest component
    (measured: 1e-6 to 1.7e-5, the float32 trajectories' drift). So does the torque,
    once ovphysx's lever is accounted for: it moves the step's force from the centre of mass to the joint
    through the offset the link has at the step end (FeatherstoneArticulation::copyInternalStateToCache),
    where usdart takes the moment about the joint where the force acted. The link's acceleration over the
    step equals ovphysx's within 1e-4 of its largest component (measured: up to 5.4e-5 on the limit's
    step, where dv/dt scales the float32 velocities' difference by 1 / dt)."""
    from usdart.core.frames import quat_to_matrix

    stage = new_stage()
    body(stage, "/World/arm/base", pos=(0, 0, 1))
    link = body(stage, "/World/arm/link", pos=(1, 0, 1), mass=2.0, inertia=(0.1, 0.2, 0.3))
    link.GetAttribute("physics:centerOfMass").Set((0.1, 0.05, -0.02))
    joint(stage, "/World/arm/anchor", None, "/World/arm/base", kind="fixed", lp0=(0, 0, 1))
    hinge = joint(stage, "/World/arm/hinge", "/World/arm/base", "/World/arm/link", axis="Y", lp1=(-1, 0, 0))
    if limit is not None:
        hinge.CreateAttribute("physics:lowerLimit", Sdf.ValueTypeNames.Float).Set(-limit)
        hinge.CreateAttribute("physics:upperLimit", Sdf.ValueTypeNames.Float).Set(limit)
    root_api(stage, "/World/arm")
    path = str(tmp_path / "hinged.usda")
    stage.GetRootLayer().Export(path)
    dt, steps = 1 / 60, 60
    physx = run_physx(path, dt, steps, solver=solver, incoming=True, accelerations=True)
    theirs, their_acceleration = physx["link_incoming_joint_force"][:, 1], physx["link_acceleration"][:, 1]
    scene = usdart.load(path)
    scene.solver, scene.time_step = solver, dt
    arm = scene.articulations[0]
    m, cache = arm.model, arm.create_cache()
    for k in range(steps):
        before = quat_to_matrix(arm.link_transforms()[1, 3:])
        scene.step()
        now = quat_to_matrix(arm.link_transforms()[1, 3:])
        arm.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE | CacheFlag.LINK_ACCELERATION)
        scale = max(1.0, np.abs(their_acceleration[k]).max())
        np.testing.assert_allclose(cache.link_acceleration[1], their_acceleration[k], atol=1e-4 * scale)
        ours = cache.link_incoming_joint_force[1]
        frame = now @ m.child_frame_rot[1]
        force = frame @ ours[:3]
        moved = (now - before) @ (m.child_frame_pos[1] - m.com[1])  # the joint's offset from the COM, turned
        lever = frame.T @ np.cross(force, moved)
        scale = max(1.0, np.abs(theirs[k]).max())
        np.testing.assert_allclose(ours[:3], theirs[k, :3], atol=5e-5 * scale, err_msg=f"step {k + 1}")
        np.testing.assert_allclose(ours[3:] + lever, theirs[k, 3:], atol=5e-5 * scale, err_msg=f"step {k + 1}")
    assert np.abs(theirs[:, 3:]).max() > 0.1  # the lever's torque (a free hinge carries none about its axis)


def test_an_applied_joint_force_holding_a_pendulum_is_part_of_the_projected_force(tmp_path):
    """No drive: the cache's joint force set to the inverse dynamics' gravity force holds the link still, and
    the projected force reports it (as ovphysx's does an actuation force: measured -4.905 N m on a 0.5 m
    pendulum, with or without a drive); the solver's own forces are zero."""
    scene = usdart.load(str(pendulum_stage(tmp_path, "pendulum")))
    scene.time_step = 1 / 60
    arm = scene.articulations[0]
    cache = arm.create_cache()
    arm.copy_internal_state_to_cache(cache)
    assert np.all(arm.projected_joint_forces() == 0.0)  # no step yet
    cache.joint_force[:] = arm.compute_generalized_gravity_force(cache)
    arm.apply_cache(cache, CacheFlag.FORCE)
    scene.step(60)
    arm.copy_internal_state_to_cache(cache)
    assert abs(cache.joint_position[0]) < 1e-9
    assert arm.projected_joint_forces() == pytest.approx(cache.joint_force, rel=1e-12)
    assert abs(cache.joint_force[0]) == pytest.approx(9.81, rel=1e-9)
    assert np.all(cache.joint_solver_forces == 0.0)
