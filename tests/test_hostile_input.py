"""Hostile and careless input: every finding of the input-robustness review as its minimal stage.

Each stage gets a usdart error naming the prim (and the attribute) at fault, or loads and steps with a
documented, finite behaviour; never another exception type, never NaN.
"""

from __future__ import annotations

import numpy as np
import pytest

import usdart

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
    def Xform "arm" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
    {
        def Xform "base" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
BASE
        }
        def Xform "link" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
LINK
        }
        def PhysicsFixedJoint "anchor"
        {
            rel physics:body1 = </World/arm/base>
        }
        def PhysicsRevoluteJoint "hinge" APIS
        {
HINGE
        }
    }
}
"""
BODY = ["float physics:mass = 1", "float3 physics:diagonalInertia = (0.1, 0.1, 0.1)"]
DEFAULTS = {
    "SCENE": [],
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


def pendulum(tmp_path, scene="", base="", link="", hinge="", hinge_apis=(), name="stage.usda"):
    """The pendulum with lines authored into its scene, bodies and hinge; a line replaces the template's
    line for the same property."""
    apis = ", ".join(f'"{a}"' for a in hinge_apis)
    text = PENDULUM.replace("APIS", f"(prepend apiSchemas = [{apis}])" if apis else "")
    for marker, extra in (("SCENE", scene), ("BASE", base), ("LINK", link), ("HINGE", hinge)):
        lines = {_name(line): line for line in DEFAULTS[marker]}
        lines.update({_name(line): line for line in extra.splitlines() if line.strip()})
        text = text.replace(marker, "\n".join(" " * 12 + line for line in lines.values()))
    path = tmp_path / name
    path.write_text(text)
    return path


def load_error(path) -> str:
    with pytest.raises(usdart.UsdartError) as info:
        usdart.load(str(path))
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
    stage = pendulum(tmp_path, link=line)
    stage.write_text(
        stage.read_text().replace(
            '"PhysicsMassAPI"])\n        {\n            float physics:mass = 1\n            float3 physics:diagonalInertia = (0.1, 0.1, 0.1)\n            double3',
            f'"PhysicsMassAPI", "{api}"])\n        {{\n            float physics:mass = 1\n            float3 physics:diagonalInertia = (0.1, 0.1, 0.1)\n            double3',
        )
    )
    msg = load_error(stage)
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
    stage = pendulum(tmp_path)
    text = stage.read_text().replace(
        '"PhysicsArticulationRootAPI"])\n    {',
        '"PhysicsArticulationRootAPI", "PhysxArticulationAPI"])\n    {\n        float physxArticulation:sleepThreshold = -1',
    )
    stage.write_text(text)
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
    stage = pendulum(tmp_path)
    text = stage.read_text().replace(
        '"PhysicsArticulationRootAPI"])\n    {',
        '"PhysicsArticulationRootAPI"])\n    {\n        float3 xformOp:scale = (1, 0, 1)\n'
        '        uniform token[] xformOpOrder = ["xformOp:scale"]',
    )
    stage.write_text(text)
    msg = load_error(stage)
    assert msg.startswith("/World/arm:") and "collapses an axis" in msg


# ---- masses the dynamics cannot move -----------------------------------------------------------------------
def test_prismatic_joint_whose_child_has_inertia_but_no_mass(tmp_path):
    stage = pendulum(tmp_path, link="float physics:mass = 0")
    stage.write_text(stage.read_text().replace("PhysicsRevoluteJoint", "PhysicsPrismaticJoint"))
    msg = load_error(stage)
    assert msg.startswith("/World/arm/link:") and "/World/arm/hinge" in msg


def test_floating_articulation_whose_root_link_is_massless(tmp_path):
    stage = pendulum(tmp_path, base="float physics:mass = 0\nfloat3 physics:diagonalInertia = (0, 0, 0)")
    text = stage.read_text().replace("rel physics:body1 = </World/arm/base>", "")
    stage.write_text(text)
    msg = load_error(stage)
    assert msg.startswith("/World/arm/base:") and "mass" in msg


def test_zero_orient_quaternion_is_no_rotation_with_a_warning(tmp_path):
    stage = pendulum(
        tmp_path,
        link='quatf xformOp:orient = (0, 0, 0, 0)\nuniform token[] xformOpOrder = ["xformOp:translate", "xformOp:orient"]',
    )
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
