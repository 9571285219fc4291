"""Hostile and careless input: every finding of the input-robustness review as its minimal stage.

Each stage gets a usdart error naming the prim (and the attribute) at fault, or loads and steps with a
documented, finite behaviour; never another exception type, never NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import apply, body, joint, new_stage, root_api, set_attr
from click.testing import CliRunner
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

import usdart
from usdart.app.cli import main

SAMPLES = Path(__file__).resolve().parents[1] / "sample_stages"

PENDULUM = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "World"
{
    def PhysicsScene "scene"
    {
SCENE
    }
    def Xform "arm" ARM_APIS
    {
ARM
        def Xform "base" BASE_APIS
        {
BASE
        }
        def Xform "link" LINK_APIS
        {
LINK
        }
        def PhysicsFixedJoint "anchor"
        {
            rel physics:body1 = </World/arm/base>
        }
        def PhysicsRevoluteJoint "hinge" HINGE_APIS
        {
HINGE
        }
    }
}
"""
BODY_APIS = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]
BODY = ["float physics:mass = 1", "float3 physics:diagonalInertia = (0.1, 0.1, 0.1)"]
DEFAULTS = {
    "SCENE": [],
    "ARM": [],
    "BASE": BODY,
    "LINK": [*BODY, "double3 xformOp:translate = (1, 0, 0)", 'uniform token[] xformOpOrder = ["xformOp:translate"]'],
    "HINGE": [
        'uniform token physics:axis = "Y"',
        "rel physics:body0 = </World/arm/base>",
        "rel physics:body1 = </World/arm/link>",
        "point3f physics:localPos0 = (0, 0, 0)",
        "point3f physics:localPos1 = (-1, 0, 0)",
    ],
}


def _name(line: str) -> str:
    return line.split("=")[0].split()[-1]


def pendulum(tmp_path, name="stage.usda", **authored):
    """The pendulum with lines authored into its scene, arm, bodies and hinge (`link="float physics:mass = 0"`;
    a line replaces the template's line for the same property) and API schemas added (`hinge_apis=[...]`)."""
    apis = {"ARM": ["PhysicsArticulationRootAPI"], "BASE": BODY_APIS, "LINK": BODY_APIS, "HINGE": []}
    text = PENDULUM
    for marker, base in apis.items():
        names = [*base, *authored.get(marker.lower() + "_apis", ())]
        listed = ", ".join(f'"{a}"' for a in names)
        text = text.replace(f"{marker}_APIS", f"(prepend apiSchemas = [{listed}])" if names else "")
    for marker, lines in DEFAULTS.items():
        merged = {_name(line): line for line in lines}
        merged.update({_name(line): line for line in authored.get(marker.lower(), "").splitlines() if line.strip()})
        text = text.replace(marker, "\n".join(" " * 12 + line for line in merged.values()))
    path = tmp_path / name
    path.write_text(text)
    return path


def load_error(path, semantics="physx") -> str:
    with pytest.raises(usdart.UsdartError) as info:
        usdart.load(str(path), semantics=semantics)
    return str(info.value)


def test_the_pendulum_template_loads_and_swings(tmp_path):
    scene = usdart.load(str(pendulum(tmp_path)))
    scene.step(30)
    art = scene.articulations[0]
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache)
    assert cache.joint_position[0] != 0 and np.all(np.isfinite(cache.joint_position))


# ---- infinities: only where the schema gives them a meaning ---------------------------------------------
@pytest.mark.parametrize(
    "where, line, attribute",
    [
        ("scene", "float physics:gravityMagnitude = inf", "physics:gravityMagnitude"),
        ("scene", "vector3f physics:gravityDirection = (0, 0, -inf)", "physics:gravityDirection"),
        ("link", "float physics:mass = inf", "physics:mass"),
        ("link", "float3 physics:diagonalInertia = (inf, 1, 1)", "physics:diagonalInertia"),
        ("link", "vector3f physics:angularVelocity = (inf, 0, 0)", "physics:angularVelocity"),
        ("link", "vector3f physics:velocity = (0, -inf, 0)", "physics:velocity"),
        ("hinge", "point3f physics:localPos0 = (inf, 0, 0)", "physics:localPos0"),
        ("hinge", "quatf physics:localRot0 = (inf, 0, 0, 0)", "physics:localRot0"),
        ("hinge", "float physics:lowerLimit = inf", "physics:lowerLimit"),
        ("hinge", "float physics:upperLimit = -inf", "physics:upperLimit"),
    ],
)
def test_infinity_where_it_means_nothing(tmp_path, where, line, attribute):
    msg = load_error(pendulum(tmp_path, **{where: line}))
    prim = {"scene": "/World/scene", "link": "/World/arm/link", "hinge": "/World/arm/hinge"}[where]
    assert msg.startswith(prim + ":") and f"'{attribute}'" in msg and "inf" in msg


@pytest.mark.parametrize(
    "api, line",
    [
        ("PhysicsJointStateAPI:angular", "float state:angular:physics:position = inf"),
        ("PhysicsJointStateAPI:angular", "float state:angular:physics:velocity = -inf"),
        ("PhysicsDriveAPI:angular", "float drive:angular:physics:targetPosition = inf"),
        ("PhysicsDriveAPI:angular", "float drive:angular:physics:targetVelocity = inf"),
        ("PhysicsDriveAPI:angular", "float drive:angular:physics:stiffness = inf"),
    ],
)
def test_infinite_joint_state_and_drive_values(tmp_path, api, line):
    msg = load_error(pendulum(tmp_path, hinge=line, hinge_apis=[api]))
    assert msg.startswith("/World/arm/hinge:") and line.split()[1] in msg


def test_infinity_that_means_no_limit_still_loads(tmp_path):
    stage = pendulum(
        tmp_path,
        hinge="float physics:lowerLimit = -inf\nfloat physics:upperLimit = inf\n"
        "float drive:angular:physics:maxForce = inf\nfloat drive:angular:physics:stiffness = 10",
        hinge_apis=["PhysicsDriveAPI:angular"],
    )
    scene = usdart.load(str(stage))
    scene.step(10)
    assert scene.articulations[0].dof_count == 1


# ---- wrong kinds of values ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "where, line, expect",
    [
        ("link", 'string physics:mass = "heavy"', "'physics:mass' holds a token or string ('heavy')"),
        ("link", "quatf physics:principalAxes = (0, 0, 0, 0)", "zero quaternion"),
        ("hinge", 'uniform token physics:axis = "x"', "'physics:axis' is 'x'; allowed: X, Y, Z"),
        ("hinge", 'uniform token physics:axis = "W"', "'physics:axis' is 'W'"),
        ("hinge", 'uniform token physics:axis = "XY"', "'physics:axis' is 'XY'"),
        ("hinge", "quatf physics:localRot1 = (0, 0, 0, 0)", "zero quaternion"),
        ("hinge", "int physics:lowerLimit = 3", None),  # an int is a number: loads
    ],
)
def test_values_of_the_wrong_kind(tmp_path, where, line, expect):
    stage = pendulum(tmp_path, **{where: line})
    if expect is None:
        usdart.load(str(stage)).step(5)
        return
    msg = load_error(stage)
    assert msg.startswith("/World/arm/") and expect in msg


def test_spherical_joint_with_an_invalid_axis(tmp_path):
    stage = pendulum(tmp_path, hinge='uniform token physics:axis = "W"')
    text = stage.read_text().replace("PhysicsRevoluteJoint", "PhysicsSphericalJoint")
    stage.write_text(text)
    assert "'physics:axis' is 'W'" in load_error(stage)


def test_body_relationship_authored_as_an_attribute(tmp_path):
    stage = pendulum(tmp_path)
    text = stage.read_text().replace(
        "rel physics:body1 = </World/arm/link>", 'string physics:body1 = "/World/arm/link"'
    )
    stage.write_text(text)
    msg = load_error(stage)
    assert msg.startswith("/World/arm/hinge:") and "physics:body1" in msg


# ---- physical ranges --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "where, line, attribute",
    [
        ("link", "float physics:mass = 1e30", "physics:mass"),
        ("link", "point3f physics:centerOfMass = (1e30, 0, 0)", "physics:centerOfMass"),
        ("scene", "float physics:gravityMagnitude = 1e30", "physics:gravityMagnitude"),
        ("hinge", "point3f physics:localPos1 = (1e30, 0, 0)", "physics:localPos1"),
    ],
)
def test_absurd_magnitudes(tmp_path, where, line, attribute):
    msg = load_error(pendulum(tmp_path, **{where: line}))
    assert f"'{attribute}'" in msg and "beyond any physical scale" in msg


@pytest.mark.parametrize(
    "api, line",
    [
        ("PhysxRigidBodyAPI", "float physxRigidBody:sleepThreshold = -1"),
        ("PhysxRigidBodyAPI", "float physxRigidBody:linearDamping = -0.5"),
    ],
)
def test_negative_body_settings(tmp_path, api, line):
    msg = load_error(pendulum(tmp_path, link=line, link_apis=[api]))
    assert msg.startswith("/World/arm/link:") and line.split()[1] in msg and "at least 0" in msg


@pytest.mark.parametrize(
    "api, line",
    [
        (
            "PhysxDrivePerformanceEnvelopeAPI:angular",
            "float physxDrivePerformanceEnvelope:angular:maxActuatorVelocity = -1",
        ),
        (
            "PhysxDrivePerformanceEnvelopeAPI:angular",
            "float physxDrivePerformanceEnvelope:angular:speedEffortGradient = -1",
        ),
        (
            "PhysxDrivePerformanceEnvelopeAPI:angular",
            "float physxDrivePerformanceEnvelope:angular:velocityDependentResistance = -2",
        ),
        ("PhysxJointAxisAPI:angular", "float physxJointAxis:angular:armature = -1"),
    ],
)
def test_negative_joint_settings(tmp_path, api, line):
    msg = load_error(pendulum(tmp_path, hinge=line, hinge_apis=["PhysicsDriveAPI:angular", api]))
    assert msg.startswith("/World/arm/hinge:") and line.split()[1] in msg and "at least 0" in msg


def test_negative_articulation_sleep_threshold(tmp_path):
    stage = pendulum(tmp_path, arm="float physxArticulation:sleepThreshold = -1", arm_apis=["PhysxArticulationAPI"])
    msg = load_error(stage)
    assert msg.startswith("/World/arm:") and "physxArticulation:sleepThreshold" in msg


# ---- transforms ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ops, culprit, expect",
    [
        ("double3 xformOp:translate = (nan, 0, 0)", "/World/arm/link", "not finite"),
        ("float3 xformOp:scale = (0, 1, 1)", "/World/arm/link", "collapses an axis"),
        ("float3 xformOp:scale = (nan, 1, 1)", "/World/arm/link", "not finite"),
        ("double3 xformOp:translate = (1e30, 0, 0)", "/World/arm/link", "beyond any physical scale"),
    ],
)
def test_broken_transforms(tmp_path, ops, culprit, expect):
    op = ops.split()[1]
    order = '["xformOp:translate"]' if op == "xformOp:translate" else f'["xformOp:translate", "{op}"]'
    stage = pendulum(tmp_path, link=f"{ops}\nuniform token[] xformOpOrder = {order}")
    msg = load_error(stage)
    assert msg.startswith(culprit + ":") and expect in msg


def test_broken_transform_of_an_ancestor_names_the_ancestor(tmp_path):
    stage = pendulum(tmp_path, arm='float3 xformOp:scale = (1, 0, 1)\nuniform token[] xformOpOrder = ["xformOp:scale"]')
    msg = load_error(stage)
    assert msg.startswith("/World/arm:") and "collapses an axis" in msg


# ---- masses the dynamics cannot move -----------------------------------------------------------------------
def test_prismatic_joint_whose_child_has_inertia_but_no_mass(tmp_path):
    stage = pendulum(tmp_path, link="float physics:mass = 0")
    stage.write_text(stage.read_text().replace("PhysicsRevoluteJoint", "PhysicsPrismaticJoint"))
    msg = load_error(stage, semantics="newton")  # with PhysX's fallback the link would weigh 1 kg
    assert msg.startswith("/World/arm/link:") and "/World/arm/hinge" in msg


def test_floating_articulation_whose_root_link_is_massless(tmp_path):
    stage = pendulum(tmp_path, base="float physics:mass = 0\nfloat3 physics:diagonalInertia = (0, 0, 0)")
    text = stage.read_text().replace("rel physics:body1 = </World/arm/base>", "")
    stage.write_text(text)
    msg = load_error(stage, semantics="newton")  # with PhysX's fallback the root would weigh 1 kg
    assert msg.startswith("/World/arm/base:") and "mass" in msg


def test_zero_orient_quaternion_is_no_rotation_with_a_warning(tmp_path):
    order = 'uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:orient"]'
    stage = pendulum(tmp_path, link=f"quatf xformOp:orient = (0, 0, 0, 0)\n{order}")
    scene = usdart.load(str(stage))
    assert any("/World/arm/link: xformOp:orient is a zero quaternion" in w for w in scene.warnings)
    # as USD reads it: the same pendulum as one with no orient op at all
    reference = usdart.load(str(pendulum(tmp_path, name="plain.usda")))
    for s in (scene, reference):
        s.step(20)
    a, b = (s.articulations[0] for s in (scene, reference))
    ca, cb = a.create_cache(), b.create_cache()
    a.copy_internal_state_to_cache(ca)
    b.copy_internal_state_to_cache(cb)
    assert ca.joint_position[0] == cb.joint_position[0] != 0


def test_xform_op_order_naming_an_op_that_is_not_authored(tmp_path):
    stage = pendulum(tmp_path, link='uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateXYZ"]')
    scene = usdart.load(str(stage))
    assert any("/World/arm/link: xformOpOrder names xformOp:rotateXYZ, which has no value" in w for w in scene.warnings)


# ---- couplings that cannot mean anything -----------------------------------------------------------------
def gear_pair():
    """Root body with two limited revolute children about Z (PhysX takes mimic joints between limited
    revolute joints only); rev0 mimics rev1 when a test says so."""
    st = new_stage()
    body(st, "/World/root")
    body(st, "/World/g0", pos=(-1, 0, 0))
    body(st, "/World/g1", pos=(1, 0, 0))
    joint(st, "/World/fix", "/World/root", None, kind="fixed")
    root_api(st, "/World/fix")
    j0 = joint(st, "/World/rev0", "/World/root", "/World/g0", lp0=(-1, 0, 0))
    j1 = joint(st, "/World/rev1", "/World/root", "/World/g1", lp0=(1, 0, 0))
    for j in (j0, j1):
        set_attr(j, "physics:lowerLimit", -170.0)
        set_attr(j, "physics:upperLimit", 170.0)
    return st, j0, j1


def mimic(j, reference: str, **values):
    apply(j, "PhysxMimicJointAPI:rotZ")
    j.CreateRelationship("physxMimicJoint:rotZ:referenceJoint", custom=False).SetTargets([Sdf.Path(reference)])
    for name, value in values.items():
        set_attr(j, f"physxMimicJoint:rotZ:{name}", value)


def stage_error(stage) -> str:
    with pytest.raises(usdart.UsdartError) as info:
        usdart.load(stage)
    return str(info.value)


def test_mimic_joint_that_references_itself():
    st, j0, _ = gear_pair()
    mimic(j0, "/World/rev0")
    msg = stage_error(st)
    assert msg.startswith("/World/rev0:") and "its own DOF" in msg


@pytest.mark.parametrize("name", ["naturalFrequency", "dampingRatio"])
def test_negative_mimic_compliance(name):
    st, j0, _ = gear_pair()
    mimic(j0, "/World/rev1", **{name: -1.0})
    msg = stage_error(st)
    assert msg.startswith("/World/rev0:") and f"physxMimicJoint:rotZ:{name}" in msg and "at least 0" in msg


@pytest.mark.parametrize("name", ["stiffness", "damping", "limitStiffness"])
def test_negative_fixed_tendon_gains(name):
    st, j0, j1 = gear_pair()
    apply(j0, "PhysxTendonAxisRootAPI:t")
    apply(j1, "PhysxTendonAxisAPI:t")
    set_attr(j0, f"physxTendon:t:{name}", -3.0)
    msg = stage_error(st)
    assert msg.startswith("/World/rev0:") and f"physxTendon:t:{name}" in msg


def test_fixed_tendon_axis_with_an_empty_gearing():
    st, j0, j1 = gear_pair()
    apply(j0, "PhysxTendonAxisRootAPI:t")
    apply(j1, "PhysxTendonAxisAPI:t")
    set_attr(j1, "physxTendon:t:gearing", [], Sdf.ValueTypeNames.FloatArray)
    msg = stage_error(st)
    assert msg.startswith("/World/rev1:") and "'physxTendon:t:gearing' is an empty array" in msg


def test_spatial_tendon_attachments_without_a_root():
    st, _, _ = gear_pair()
    a, b = st.GetPrimAtPath("/World/g0"), st.GetPrimAtPath("/World/g1")
    apply(a, "PhysxTendonAttachmentAPI:a")
    apply(b, "PhysxTendonAttachmentLeafAPI:b")
    b.CreateRelationship("physxTendon:b:parentLink", custom=False).SetTargets([Sdf.Path("/World/g0")])
    set_attr(b, "physxTendon:b:parentAttachment", "a", Sdf.ValueTypeNames.Token)
    a.CreateRelationship("physxTendon:a:parentLink", custom=False).SetTargets([Sdf.Path("/World/g1")])
    set_attr(a, "physxTendon:a:parentAttachment", "b", Sdf.ValueTypeNames.Token)  # a cycle, no root
    msg = stage_error(st)
    assert "is not connected to any PhysxTendonAttachmentRootAPI" in msg and msg.startswith("/World/g")


def test_a_duplicate_joint_takes_the_tree_slot_and_the_mimic_of_the_original_is_dropped_as_in_physx():
    """rev1 copied as /World/aaa_copy (a path that sorts first): as in PhysX, the copy is the tree joint and
    rev1 closes an undeclared loop, so rev0's mimic of rev1 is dropped with a warning (measured on ovphysx:
    DOFs aaa_copy and rev0, "failed to find internal joint object for reference joint /World/rev1");
    loading does not fail."""
    st, j0, j1 = gear_pair()
    mimic(j0, "/World/rev1", gearing=-1.0)
    joint(st, "/World/aaa_copy", "/World/root", "/World/g1", lp0=(1, 0, 0))
    scene = usdart.load(st)
    art = scene.articulations[0]
    assert art.dof_names == ["/World/aaa_copy", "/World/rev0"] and art.loop_joints == ["/World/rev1"]
    assert art.mimic_joints == []
    assert any("undeclared kinematic loop" in w and "/World/rev1" in w for w in scene.warnings)
    assert any(w.startswith("/World/rev0: mimic joint ignored") and "/World/rev1" in w for w in scene.warnings)


# ---- files and layers --------------------------------------------------------------------------------------
def test_missing_and_garbage_sublayers_are_one_line_warnings(tmp_path, capfd):
    pendulum(tmp_path, name="physics.usda")
    (tmp_path / "garbage.usda").write_text("#usda 1.0\n garbage {{{\n")
    root = tmp_path / "robot.usda"
    root.write_text("#usda 1.0\n(\n    subLayers = [@./missing.usda@, @./garbage.usda@, @./physics.usda@]\n)\n")
    scene = usdart.load(str(root))
    usd = [w for w in scene.warnings if w.startswith("USD: ")]
    assert len(usd) == 2 and "missing.usda" in usd[0] and "garbage.usda" in usd[1]
    assert all("\n" not in w for w in usd)
    assert "Warning" not in capfd.readouterr().err  # USD's own multi-line report is not printed
    with pytest.raises(usdart.UsdartError, match="missing.usda.*--strict"):
        usdart.load(str(root), strict=True)


def test_stage_whose_physics_payload_is_truncated_is_an_error_naming_it(tmp_path):
    physics = pendulum(tmp_path, name="Physics.usda")
    text = physics.read_text()
    physics.write_text(text[: len(text) // 2])
    root = tmp_path / "robot.usda"
    root.write_text('#usda 1.0\ndef Xform "World" (\n    prepend payload = @./Physics.usda@</World>\n)\n{\n}\n')
    msg = load_error(root)
    assert msg.startswith(str(root)) and "Physics.usda" in msg and "no physics" in msg


def test_file_that_is_not_utf8_after_its_header(tmp_path):
    path = tmp_path / "latin1.usda"
    path.write_bytes(b'#usda 1.0\ndef Xform "W\xe9lt"\n{\n}\n')
    msg = load_error(path)
    assert str(path) in msg


@pytest.mark.parametrize(
    "original, broken",
    [
        (b'physics:axis = "Y"', b'physics:axis = "Y\x00Z"'),
        (b"rel physics:body1 = </World/arm/link>", b"rel physics:body1 = </World/arm/li\x00nk>"),
        (b'def Xform "link"', b'def Xform "li\x00nk"'),
        (b'"PhysicsRigidBodyAPI", "PhysicsMassAPI"', b'"PhysicsRigidBody\x00API", "PhysicsMassAPI"'),
    ],
)
def test_nul_bytes(tmp_path, original, broken):
    """USD's parser either stops the token at the NUL (the axis reads "Y", as USD and PhysX see it) or
    rejects the file: a usdart error naming the file or prim, never a pxr exception."""
    stage = pendulum(tmp_path)
    stage.write_bytes(stage.read_bytes().replace(original, broken, 1))
    try:
        scene = usdart.load(str(stage))
    except usdart.UsdartError as exc:
        assert str(stage) in str(exc) or str(exc).startswith("/World")
        return
    scene.step(5)


@pytest.mark.parametrize(
    "samples, expect", [("{0: 0, 10: inf}", "not all finite"), ("{0: 0, 10: nan}", "not all finite")]
)
def test_time_sampled_drive_target_that_is_not_finite(tmp_path, samples, expect):
    stage = pendulum(
        tmp_path,
        hinge=f"float drive:angular:physics:targetPosition.timeSamples = {samples}",
        hinge_apis=["PhysicsDriveAPI:angular"],
    )
    with pytest.raises(usdart.UsdartError) as info:
        usdart.simulate(str(stage), duration=0.05)
    assert str(info.value).startswith("/World/arm/hinge: time samples of 'drive:angular:physics:targetPosition'")
    assert expect in str(info.value)


@pytest.mark.parametrize("degrees, loads", [(179.0, True), (-180.0, True), (400.0, False), (-181.0, False)])
def test_spherical_joint_state_outside_its_coordinate_range(tmp_path, degrees, loads):
    stage = pendulum(
        tmp_path,
        hinge=f"float state:rotY:physics:position = {degrees}",
        hinge_apis=["PhysicsJointStateAPI:rotY"],
    )
    stage.write_text(stage.read_text().replace("PhysicsRevoluteJoint", "PhysicsSphericalJoint"))
    if loads:
        scene = usdart.load(str(stage))
        art = scene.articulations[0]
        cache = art.create_cache()
        art.copy_internal_state_to_cache(cache)
        assert cache.joint_position[1] == pytest.approx(np.radians(degrees))
        return
    msg = load_error(stage)
    assert msg.startswith("/World/arm/hinge:") and "outside [-180, 180] deg" in msg


def test_loop_joint_whose_frames_are_far_apart_is_reported_and_never_gives_nan():
    """The square loop with its loop joint's frame 3 m off: no pose closes it. Warned at import. PGS's full
    correction moves the positions every step while its velocity iterations take the velocity back: the
    loop jumps between poses at rest, finite; TGS's damped substep corrections pull the loop as far as it
    goes and it comes to rest there. (PhysX gives NaN poses with either solver on this stage.)"""
    stage = Usd.Stage.Open(Sdf.Layer.OpenAsAnonymous(str(SAMPLES / "square_loop.usda")))  # the file stays as it is
    stage.GetPrimAtPath("/World/loopJoint").GetAttribute("physics:localPos0").Set(Gf.Vec3f(-4, 0, 0))
    scene = usdart.load(stage)
    scene.contacts_enabled = False  # the subject is the loop joint, not its links colliding
    assert any(w.startswith("/World/loopJoint: the joint's two frames are 3 m apart") for w in scene.warnings)
    scene.solver = "PGS"
    scene.step(600)
    arm = scene.articulations[0]
    assert np.all(np.isfinite(arm.state.q[0])) and np.abs(arm.state.qd[0]).max() < 1e-6
    scene.reset()
    scene.solver = "TGS"
    scene.step(600)
    arm = scene.articulations[0]
    assert np.abs(arm.state.q[0]).max() > 1.0  # pulled far from the start (all zero)
    assert np.abs(arm.state.qd[0]).max() < 1e-4  # and at rest there


def test_validate_strict_refuses_a_missing_sublayer_and_plain_validate_warns(tmp_path):
    pendulum(tmp_path, name="physics.usda")
    root = tmp_path / "robot.usda"
    root.write_text("#usda 1.0\n(\n    subLayers = [@./missing.usda@, @./physics.usda@]\n)\n")
    plain = CliRunner().invoke(main, ["validate", str(root)])
    assert plain.exit_code == 0 and "warning: USD: Could not load sublayer" in plain.output
    strict = CliRunner().invoke(main, ["validate", "--strict", str(root)])
    assert strict.exit_code == 2 and "missing.usda" in strict.output and "--strict" in strict.output
    assert len(strict.output.strip().splitlines()) == 1


# ---- found by the fuzz test ---------------------------------------------------------------------------------
def test_mass_attributes_of_the_wrong_kind_where_mass_api_is_not_applied(tmp_path):
    stage = pendulum(tmp_path, link='string physics:centerOfMass = "abc"')
    stage.write_text(
        stage.read_text().replace(
            'def Xform "link" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])',
            'def Xform "link" (prepend apiSchemas = ["PhysicsRigidBodyAPI"])',
        )
    )
    msg = load_error(stage)
    assert msg.startswith("/World/arm/link: attribute 'physics:centerOfMass' holds a token or string")


def test_collider_placed_beyond_physical_scales(tmp_path):
    stage = Usd.Stage.Open(str(pendulum(tmp_path)))
    box = UsdGeom.Cube.Define(stage, "/World/arm/link/box")
    UsdPhysics.CollisionAPI.Apply(box.GetPrim())
    box.AddTranslateOp().Set(Gf.Vec3d(1e300, 0, 0))
    msg = stage_error(stage)
    assert msg.startswith("/World/arm/link/box:") and "beyond any physical scale" in msg


def test_free_body_without_inertia_about_one_axis():
    st = new_stage()
    body(st, "/World/b", inertia=(0.1, 0.1, 0.0))
    msg = stage_error(st)
    assert msg.startswith("/World/b:") and "no inertia about some axis" in msg


def test_free_body_too_small_for_its_mass_is_refused_where_a_nanometre_ball_went_nan():
    """A 1 kg ball whose collider is 1 nm across (inertia 4e-19 kg m^2) went NaN in its first step (the
    solver holds inertia about the world origin, next to m |c|^2); it is refused at import, naming the body."""
    from contact_stages import collider, contact_stage, dynamic_body

    st = contact_stage()
    dynamic_body(st, "/World/b", pos=(0, 0, 1))
    collider(st, "/World/b/ball", "sphere", 1e-9)
    msg = stage_error(st)
    assert msg.startswith("/World/b:") and "inertia is too small to simulate next to its mass" in msg


def test_a_light_bead_a_kilometre_out_falls_as_one_at_the_origin():
    """The check above is not stricter than the solver: a 1 g, 3 mm bead 1 km from the origin (its inertia
    4e-12 of m |c|^2) loads and falls exactly as the same bead at the origin (translation invariance),
    to 1e-9 m over 1 s."""
    from contact_stages import collider, contact_stage, dynamic_body

    falls = []
    for x in (0.0, 1000.0):
        st = contact_stage()
        dynamic_body(st, "/World/b", pos=(x, 0, 1), mass=0.001)
        collider(st, "/World/b/bead", "sphere", 0.003)
        scene = usdart.load(st)
        scene.step(60)
        falls.append(scene.body_transform("/World/b")[:3] - (x, 0, 1))
    assert falls[0][2] < -4.0  # it fell
    assert np.abs(falls[1] - falls[0]).max() < 1e-9


def test_world_joint_carrying_a_tendon_attachment_is_not_an_attachment_link():
    """A revolute joint to the world makes a static anchor link named after the joint; an attachment API on
    that joint prim belongs to no body and is left out (as a stray API), not a KeyError."""
    st, j0, _ = gear_pair()
    st.GetPrimAtPath("/World/fix").SetTypeName("PhysicsRevoluteJoint")
    apply(st.GetPrimAtPath("/World/fix"), "PhysxTendonAttachmentRootAPI:t")
    scene = usdart.load(st)
    assert scene.articulations[0].desc.spatial_tendons == []


def test_xform_op_order_naming_an_op_type_usd_does_not_know(tmp_path):
    order = 'uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:foo"]'
    stage = pendulum(tmp_path, link=f"double3 xformOp:foo = (1, 2, 3)\n{order}")
    assert load_error(stage) == "/World/arm/link: xformOpOrder names xformOp:foo: USD has no op type 'foo'"


def test_single_axis_ops_are_numbers(tmp_path):
    order = 'uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:translateZ", "xformOp:rotateX"]'
    stage = pendulum(tmp_path, link=f"double xformOp:translateZ = 0.5\nfloat xformOp:rotateX = 90\n{order}")
    scene = usdart.load(str(stage))
    assert scene.description.bodies["/World/arm/link"].pose.position == pytest.approx([1, 0, 0.5])


def test_a_negative_cfm_scale_is_refused_naming_the_body(tmp_path):
    """physxRigidBody:cfmScale weakens constraint rows by adding to their response (PhysX's cfm): a negative
    one would make them divide by a response near or below zero."""
    stage = pendulum(tmp_path, link="float physxRigidBody:cfmScale = -5")
    with pytest.raises(usdart.UsdartError, match="physxRigidBody:cfmScale") as err:
        usdart.load(str(stage))
    assert err.value.prim_path.endswith("link")
