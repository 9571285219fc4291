"""Unit conversion to SI/radians and reading of every articulation attribute (DESIGN.md rules 7-10)."""

import math

import numpy as np
import pytest
from builders import apply, body, joint, new_stage, root_api, set_attr
from pxr import Gf, Sdf, UsdPhysics

import usdart

DEG = math.pi / 180


def hinge_stage(mpu=1.0, kpu=1.0, kind="revolute"):
    st = new_stage(mpu=mpu, kpu=kpu)
    body(st, "/World/base", mass=2.0)
    body(st, "/World/arm", pos=(1, 0, 0), mass=3.0, inertia=(1.0, 2.0, 3.0))
    joint(st, "/World/fix", None, "/World/base", kind="fixed")
    root_api(st, "/World/fix")
    j = joint(st, "/World/hinge", "/World/base", "/World/arm", kind=kind, axis="Y", lp0=(0.5, 0, 0), lp1=(-0.5, 0, 0))
    return st, j


def dof_of(st, semantics="physx"):
    return usdart.load(st, semantics=semantics).articulations[0].desc.joints[1].dofs[0]


def test_centimetre_gram_stage_converts_lengths_masses_and_inertia():
    st, j = hinge_stage(mpu=0.01, kpu=0.001, kind="prismatic")
    set_attr(j, "physics:lowerLimit", -5.0)
    set_attr(j, "physics:upperLimit", 20.0)
    scene = usdart.load(st)
    art = scene.articulations[0]
    d = art.desc.joints[1]
    assert (d.dofs[0].lower, d.dofs[0].upper) == pytest.approx((-0.05, 0.20))
    np.testing.assert_allclose(d.frame0.position, [0.005, 0, 0])
    arm = art.desc.bodies[1]
    assert arm.mass == pytest.approx(0.003)
    np.testing.assert_allclose(np.diag(arm.inertia), np.array([1.0, 2.0, 3.0]) * 0.001 * 1e-4)
    np.testing.assert_allclose(arm.pose.position, [0.01, 0, 0])
    np.testing.assert_allclose(scene.gravity, [0, 0, -9.81])  # default gravity is Earth's, in SI


def test_authored_gravity_in_stage_units_and_time_step():
    st = new_stage(mpu=0.01)
    scene_prim = st.GetPrimAtPath("/World/scene")
    UsdPhysics.Scene(scene_prim).CreateGravityDirectionAttr(Gf.Vec3f(0, -2, 0))
    UsdPhysics.Scene(scene_prim).CreateGravityMagnitudeAttr(981.0)
    apply(scene_prim, "PhysxSceneAPI")
    set_attr(scene_prim, "physxScene:timeStepsPerSecond", 240, Sdf.ValueTypeNames.UInt)
    set_attr(scene_prim, "newton:timeStepsPerSecond", 500, Sdf.ValueTypeNames.Int, uniform=True)
    scene = usdart.load(st)
    np.testing.assert_allclose(scene.gravity, [0, -19.62, 0])  # direction not normalised, as PhysX applies it
    assert scene.time_step == pytest.approx(1 / 240)  # PhysX attribute wins over Newton's


def test_time_step_defaults():
    st = new_stage()
    assert usdart.load(st).time_step == pytest.approx(1 / 60)
    apply(st.GetPrimAtPath("/World/scene"), "NewtonSceneAPI")
    assert usdart.load(st).time_step == pytest.approx(1 / 1000)  # NewtonSceneAPI fallback
    set_attr(st.GetPrimAtPath("/World/scene"), "newton:gravityEnabled", False, Sdf.ValueTypeNames.Bool)
    np.testing.assert_allclose(usdart.load(st).gravity, 0)


def test_revolute_limits_drive_and_state_in_degrees():
    st, j = hinge_stage(mpu=0.01, kpu=1.0)
    set_attr(j, "physics:lowerLimit", -45.0)
    set_attr(j, "physics:upperLimit", 90.0)
    apply(j, "PhysicsDriveAPI:angular")
    set_attr(j, "drive:angular:physics:stiffness", 2.0)  # kg cm^2 / s^2 / deg
    set_attr(j, "drive:angular:physics:damping", 0.5)
    set_attr(j, "drive:angular:physics:maxForce", 300.0)  # kg cm^2/s^2
    set_attr(j, "drive:angular:physics:targetPosition", 30.0)
    set_attr(j, "drive:angular:physics:targetVelocity", 60.0)
    apply(j, "PhysicsJointStateAPI:angular")
    set_attr(j, "state:angular:physics:position", 10.0)
    set_attr(j, "state:angular:physics:velocity", 180.0)
    d = dof_of(st)
    assert d.axis == "rotY" and d.name == "/World/hinge"
    assert (d.lower, d.upper) == pytest.approx((-45 * DEG, 90 * DEG))
    assert d.drive.stiffness == pytest.approx(2.0 * 1e-4 / DEG)  # per radian, SI
    assert d.drive.damping == pytest.approx(0.5 * 1e-4 / DEG)
    assert d.drive.max_force == pytest.approx(300.0 * 1e-4)
    assert (d.drive.target_position, d.drive.target_velocity) == pytest.approx((30 * DEG, 60 * DEG))
    assert (d.position, d.velocity) == pytest.approx((10 * DEG, math.pi))
    assert not d.drive.acceleration


def test_linear_drive_and_acceleration_type():
    st, j = hinge_stage(mpu=0.01, kpu=1.0, kind="prismatic")
    apply(j, "PhysicsDriveAPI:linear")
    set_attr(j, "drive:linear:physics:stiffness", 100.0)  # kg/s^2
    set_attr(j, "drive:linear:physics:targetPosition", 3.0)  # cm
    set_attr(j, "drive:linear:physics:maxForce", 50.0)  # kg cm/s^2
    d = dof_of(st)
    assert d.drive.stiffness == pytest.approx(100.0)
    assert d.drive.target_position == pytest.approx(0.03)
    assert d.drive.max_force == pytest.approx(0.5)
    set_attr(j, "drive:linear:physics:type", "acceleration", Sdf.ValueTypeNames.Token, uniform=True)
    d = dof_of(st)
    assert d.drive.acceleration and d.drive.stiffness == pytest.approx(100.0)


def test_physx_joint_axis_friction_armature_and_envelope():
    """PhysxJointAPI (gone from PhysX's schemas; tests/test_physx.py measures that ovphysx ignores it) is
    read by the "newton" semantics only; PhysxJointAxisAPI:<axis> replaces it for its axis."""
    st, j = hinge_stage()
    apply(j, "PhysxJointAPI")
    set_attr(j, "physxJoint:armature", 0.5)
    set_attr(j, "physxJoint:maxJointVelocity", 90.0)
    d = dof_of(st, semantics="newton")
    assert (d.armature, d.max_velocity) == pytest.approx((0.5, math.pi / 2))
    d = dof_of(st)
    assert (d.armature, d.max_velocity) == (0.0, math.inf)
    apply(j, "PhysxJointAxisAPI:angular")  # replaces PhysxJointAPI for this axis
    set_attr(j, "physxJointAxis:angular:armature", 0.25)
    set_attr(j, "physxJointAxis:angular:staticFrictionEffort", 3.0)
    set_attr(j, "physxJointAxis:angular:dynamicFrictionEffort", 2.0)
    set_attr(j, "physxJointAxis:angular:viscousFrictionCoefficient", 0.1)  # N m s / deg
    apply(j, "PhysicsDriveAPI:angular")
    set_attr(j, "drive:angular:physics:maxForce", 40.0)
    apply(j, "PhysxDrivePerformanceEnvelopeAPI:angular")
    set_attr(j, "physxDrivePerformanceEnvelope:angular:maxActuatorVelocity", 360.0)
    set_attr(j, "physxDrivePerformanceEnvelope:angular:velocityDependentResistance", 0.2)  # N m s/deg
    set_attr(j, "physxDrivePerformanceEnvelope:angular:speedEffortGradient", 3.0)  # deg/s/N m
    d = dof_of(st, semantics="newton")
    assert d.armature == pytest.approx(0.25)
    assert d.max_velocity == math.inf  # the 25.11 axis schema's fallback (no limit), not PhysxJointAPI's 90 deg/s
    d = dof_of(st)
    assert d.armature == pytest.approx(0.25)
    assert (d.static_friction, d.dynamic_friction) == pytest.approx((3.0, 2.0))
    assert d.viscous_friction == pytest.approx(0.1 / DEG)
    env = d.drive
    assert env.max_actuator_velocity == pytest.approx(2 * math.pi)
    assert env.velocity_dependent_resistance == pytest.approx(0.2 / DEG)
    assert env.speed_effort_gradient == pytest.approx(3.0 * DEG)
    assert env.max_force == pytest.approx(40.0)


def test_newton_joint_attributes_and_physx_precedence():
    """Read with the "newton" semantics (newton:damping as passive damping); the default "physx" semantics reads
    them as ovphysx does (tests/test_physx.py measures it): seeds of the axis, newton:damping as viscous
    friction, a PhysxJointAxisAPI value replacing a seed only where it is positive."""
    st, j = hinge_stage()
    apply(j, "NewtonJointAPI")
    set_attr(j, "newton:armature", 0.3)
    set_attr(j, "newton:damping", 0.1)  # N m s / deg
    set_attr(j, "newton:friction", 0.7)
    set_attr(j, "newton:velocityLimit", 180.0)
    d = dof_of(st, semantics="newton")
    assert (d.armature, d.passive_damping, d.static_friction, d.max_velocity) == pytest.approx(
        (0.3, 0.1 / DEG, 0.7, math.pi)
    )
    d = dof_of(st)
    assert (d.armature, d.passive_damping, d.static_friction, d.max_velocity) == pytest.approx((0.3, 0, 0.7, math.pi))
    assert (d.dynamic_friction, d.viscous_friction) == pytest.approx((0.7, 0.1 / DEG))
    apply(j, "PhysxJointAxisAPI:angular")
    set_attr(j, "physxJointAxis:angular:armature", 0.0)  # an explicit zero keeps the seed, as in ovphysx
    set_attr(j, "physxJointAxis:angular:dynamicFrictionEffort", 0.2)  # either effort positive: both PhysX's
    set_attr(j, "physxJointAxis:angular:maxJointVelocity", 90.0)
    d = dof_of(st)
    assert (d.armature, d.static_friction, d.dynamic_friction, d.max_velocity) == pytest.approx(
        (0.3, 0.0, 0.2, math.pi / 2)
    )
    j.RemoveAppliedSchema("PhysxJointAxisAPI:angular")
    for name in ("armature", "dynamicFrictionEffort", "maxJointVelocity"):
        j.RemoveProperty(f"physxJointAxis:angular:{name}")
    apply(j, "PhysxJointAPI")
    set_attr(j, "physxJoint:armature", 0.9)
    d = dof_of(st, semantics="newton")
    assert d.armature == pytest.approx(0.9)  # authored PhysX wins
    assert d.max_velocity == pytest.approx(math.pi)  # authored Newton beats the PhysX fallback


def test_spherical_joint_dofs_turned_to_the_axis_and_cone_limits():
    st, j = hinge_stage(kind="spherical")
    UsdPhysics.SphericalJoint(j).CreateConeAngle0LimitAttr(30.0)
    UsdPhysics.SphericalJoint(j).CreateConeAngle1LimitAttr(-1.0)
    jd = usdart.load(st).articulations[0].desc.joints[1]
    assert [d.axis for d in jd.dofs] == ["rotX", "rotY", "rotZ"]
    assert [d.name for d in jd.dofs] == ["/World/hinge:rotX", "/World/hinge:rotY", "/World/hinge:rotZ"]
    assert (jd.dofs[1].lower, jd.dofs[1].upper) == pytest.approx((-30 * DEG, 30 * DEG))
    assert not jd.dofs[0].limited and not jd.dofs[2].limited
    # USD axis Y becomes the joint frame's X axis
    from usdart.core.frames import quat_to_matrix

    np.testing.assert_allclose(quat_to_matrix(jd.frame0.orientation) @ [1, 0, 0], [0, 1, 0], atol=1e-12)


@pytest.mark.parametrize(
    "free,expected",
    [
        ((), []),
        (("rotX",), ["rotX"]),
        (("rotY", "rotZ"), ["rotY", "rotZ"]),
        (("rotX", "rotY", "rotZ"), ["rotX", "rotY", "rotZ"]),
        (("transY",), ["transY"]),
    ],
)
def test_d6_joint_dofs_from_limits(free, expected):
    st, j = hinge_stage(kind="d6")
    for axis in ("transX", "transY", "transZ", "rotX", "rotY", "rotZ"):
        limit = UsdPhysics.LimitAPI.Apply(j, axis)
        if axis in free:
            limit.CreateLowAttr(-20.0)
            limit.CreateHighAttr(20.0)
        else:
            limit.CreateLowAttr(1.0)
            limit.CreateHighAttr(-1.0)
    jd = usdart.load(st).articulations[0].desc.joints[1]
    assert [d.axis for d in jd.dofs] == expected
    for d in jd.dofs:
        assert d.upper == pytest.approx(20 * DEG if d.angular else 20.0)
    if len(expected) == 1:
        assert jd.dofs[0].name == "/World/hinge"


def test_body_velocity_units():
    st = new_stage(mpu=0.01)
    b = body(st, "/World/ball")
    UsdPhysics.RigidBodyAPI(b).CreateVelocityAttr(Gf.Vec3f(100, 0, 0))
    UsdPhysics.RigidBodyAPI(b).CreateAngularVelocityAttr(Gf.Vec3f(0, 0, 90))
    root_api(st, "/World/ball")
    desc = usdart.load(st).articulations[0].desc.bodies[0]
    np.testing.assert_allclose(desc.linear_velocity, [1, 0, 0])
    np.testing.assert_allclose(desc.angular_velocity, [0, 0, math.pi / 2])


def test_physx_rigid_body_fallbacks_apply_to_every_body_unless_turned_off():
    """As PhysX simulates a plain UsdPhysics body: PhysxRigidBodyAPI's fallbacks (tests/test_physx.py
    checks the motion); semantics="newton" leaves bodies without the API undamped and unlimited."""
    st = new_stage()
    b = body(st, "/World/ball")
    root_api(st, "/World/ball")
    desc = usdart.load(st).articulations[0].desc.bodies[0]
    assert desc.angular_damping == pytest.approx(0.05) and desc.max_angular_velocity == pytest.approx(5729.58 * DEG)
    desc = usdart.load(st, semantics="newton").articulations[0].desc.bodies[0]
    assert desc.angular_damping == 0 and desc.max_angular_velocity == math.inf
    apply(b, "PhysxRigidBodyAPI")
    set_attr(b, "physxRigidBody:linearDamping", 0.3)
    desc = usdart.load(st, semantics="newton").articulations[0].desc.bodies[0]
    assert desc.linear_damping == pytest.approx(0.3)
    assert desc.angular_damping == pytest.approx(0.05)  # schema fallback
    assert desc.max_angular_velocity == pytest.approx(5729.58 * DEG)


def test_mimic_joint_physx_units_and_signs():
    st = new_stage()
    body(st, "/World/root")
    body(st, "/World/g0", pos=(-1, 0, 0))
    body(st, "/World/g1", pos=(1, 0, 0))
    joint(st, "/World/fix", "/World/root", None, kind="fixed")
    root_api(st, "/World/fix")
    j0 = joint(st, "/World/rev0", "/World/root", "/World/g0", lp0=(-1, 0, 0))
    j1 = joint(st, "/World/rev1", "/World/g1", "/World/root", lp1=(1, 0, 0))  # reversed w.r.t. the tree
    for j in (j0, j1):  # PhysX takes mimic joints between limited revolute joints only
        set_attr(j, "physics:lowerLimit", -170.0)
        set_attr(j, "physics:upperLimit", 170.0)
    apply(j0, "PhysxMimicJointAPI:rotZ")
    j0.CreateRelationship("physxMimicJoint:rotZ:referenceJoint", custom=False).SetTargets([Sdf.Path("/World/rev1")])
    set_attr(j0, "physxMimicJoint:rotZ:gearing", 5.0)
    set_attr(j0, "physxMimicJoint:rotZ:offset", 90.0)
    set_attr(j0, "physxMimicJoint:rotZ:naturalFrequency", 100.0)
    set_attr(j0, "physxMimicJoint:rotZ:dampingRatio", 1.2)
    (m,) = usdart.load(st).articulations[0].mimic_joints
    assert m["dof"] == "/World/rev0" and m["reference_dof"] == "/World/rev1"
    assert m["gearing"] == pytest.approx(-5.0)  # reference joint reversed: its internal position is negated
    assert m["offset"] == pytest.approx(math.pi / 2)
    assert (m["natural_frequency"], m["damping_ratio"]) == pytest.approx((100.0, 1.2))


def test_fixed_tendon_units():
    st, j = hinge_stage(mpu=0.01)
    apply(j, "PhysxTendonAxisRootAPI:t")
    set_attr(j, "physxTendon:t:gearing", [2.0], Sdf.ValueTypeNames.FloatArray)
    set_attr(j, "physxTendon:t:stiffness", 10.0)
    set_attr(j, "physxTendon:t:restLength", 5.0)
    (t,) = usdart.load(st).articulations[0].desc.fixed_tendons
    assert t.root_joint == "/World/hinge" and t.stiffness == pytest.approx(10.0)
    assert t.rest_length == pytest.approx(0.05)
    assert t.axes[0].gearing == pytest.approx(2.0 * 0.01 / DEG)  # cm per degree -> m per radian


def test_float_values_are_widened_to_their_decimal():
    st, j = hinge_stage()
    set_attr(j, "physics:upperLimit", 0.316)
    assert dof_of(st).upper == math.radians(0.316)
