"""usdart.authoring: SI in, stage units out, Isaac Sim's syntax; read back by plain usd-core and by usdart.

The stage of `authored_stage.py` is written in centimetres and grams; expected file values below are the
SI inputs converted by hand (factors in the comments), not by usdart's code.
"""

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from authored_stage import ISAAC_STAGE, SI, authored_gripper, build
from click.testing import CliRunner
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

import usdart
from usdart import authoring as A
from usdart.app.cli import main as cli
from usdart.errors import AuthoringError

DEG = math.pi / 180
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def authored_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("authored") / "all_features.usda"
    stage = build()  # keep the stage alive while its layer is exported
    stage.GetRootLayer().Export(str(path))
    return str(path)


# ---- 1. plain usd-core in a fresh process: the text and the stored numbers -----------------------------
READER = textwrap.dedent("""
    import json, sys
    from pxr import Usd
    stage = Usd.Stage.Open(sys.argv[1])
    out = {"usdart_imported": any(m == "usdart" or m.startswith("usdart.") for m in sys.modules)}
    for prim in stage.Traverse():
        op = prim.GetMetadata("apiSchemas")
        props = {}
        for prop in prim.GetAuthoredProperties():
            if isinstance(prop, Usd.Attribute):
                value = prop.Get()
                if hasattr(value, "GetReal"):  # quaternion
                    value = [value.GetReal(), *value.GetImaginary()]
                value = list(value) if hasattr(value, "__len__") and not isinstance(value, str) else value
                props[prop.GetName()] = [str(prop.GetTypeName()), str(prop.GetVariability()), value]
            else:
                props[prop.GetName()] = ["rel", "", [str(t) for t in prop.GetTargets()]]
        out[str(prim.GetPath())] = {"apiSchemas": list(op.ApplyOperations([])) if op else [], "props": props}
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def plain(authored_file):
    done = subprocess.run([sys.executable, "-c", READER, authored_file], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def value(plain, path, name, type_name="float", uniform=False):
    t, variability, v = plain[path]["props"][name]
    assert t == type_name, (path, name, t)
    if type_name != "rel":
        assert variability == ("Sdf.VariabilityUniform" if uniform else "Sdf.VariabilityVarying"), (path, name)
    return v


def test_plain_usd_core_sees_isaac_style_applied_schemas(plain):
    assert plain["usdart_imported"] is False
    assert plain["/World/fix"]["apiSchemas"] == ["PhysicsArticulationRootAPI", "PhysxArticulationAPI"]
    assert plain["/World/j1"]["apiSchemas"] == [
        "PhysicsJointStateAPI:angular",
        "PhysicsDriveAPI:angular",
        "PhysxDrivePerformanceEnvelopeAPI:angular",
        "PhysxJointAxisAPI:angular",
        "PhysxTendonAxisRootAPI:t0",
    ]
    assert plain["/World/j2"]["apiSchemas"] == [
        "PhysxJointAxisAPI:angular",
        "PhysxMimicJointAPI:rotZ",
        "PhysxTendonAxisAPI:t0",
    ]
    assert set(plain["/World/d6"]["apiSchemas"]) == {
        "PhysicsLimitAPI:transX",
        "PhysicsLimitAPI:transY",
        "PhysicsLimitAPI:transZ",
        "PhysicsLimitAPI:rotZ",
        "PhysicsLimitAPI:rotX",
        "PhysicsJointStateAPI:rotX",
        "PhysicsDriveAPI:rotY",
    }
    assert plain["/World/scene"]["apiSchemas"] == ["PhysxSceneAPI"]
    assert "PhysxTendonAttachmentRootAPI:r" in plain["/World/b0"]["apiSchemas"]
    assert "PhysxTendonAttachmentLeafAPI:l" in plain["/World/b2"]["apiSchemas"]


def test_plain_usd_core_reads_stage_unit_values(plain):
    approx = lambda x: pytest.approx(x, rel=2e-7)  # noqa: E731 (float32 storage)
    j1, j2 = "/World/j1", "/World/j2"
    # angles: rad / (pi/180)
    assert value(plain, j1, "physics:lowerLimit") == approx(-68.75493541569878)  # -1.2 rad
    assert value(plain, j1, "state:angular:physics:position") == approx(28.64788975654116)  # 0.5 rad
    assert value(plain, j1, "state:angular:physics:velocity") == approx(5.729577951308232)  # 0.1 rad/s
    # angular force drive: N m/rad * (pi/180 rad/deg) / (1e-3 kg/g * 1e-4 m^2/cm^2)
    assert value(plain, j1, "drive:angular:physics:stiffness") == approx(17453292.519943293)  # 100 N m/rad
    assert value(plain, j1, "drive:angular:physics:damping") == approx(1745329.2519943293)  # 10 N m s/rad
    assert value(plain, j1, "drive:angular:physics:maxForce") == approx(5e8)  # 50 N m / 1e-7
    assert value(plain, j1, "drive:angular:physics:targetPosition") == approx(14.32394487827058)  # 0.25 rad
    assert value(plain, j1, "drive:angular:physics:type", "token", uniform=True) == "force"
    assert value(plain, j1, "physxDrivePerformanceEnvelope:angular:maxActuatorVelocity") == approx(171.88733853924697)
    assert value(plain, j1, "physxDrivePerformanceEnvelope:angular:velocityDependentResistance") == approx(
        34906.58503988659
    )  # 0.2 N m s/rad -> per deg/s
    assert value(plain, j1, "physxDrivePerformanceEnvelope:angular:speedEffortGradient") == approx(
        5.7295779513082324e-08
    )  # 0.01 rad/s/(N m)
    assert value(plain, j1, "physxJointAxis:angular:armature") == approx(1e5)  # 0.01 kg m^2 / 1e-7
    assert value(plain, j1, "physxJointAxis:angular:maxJointVelocity") == approx(114.59155902616465)  # 2 rad/s
    assert value(plain, j2, "physxJointAxis:angular:staticFrictionEffort") == approx(1e7)  # 1 N m
    assert value(plain, j2, "physxJointAxis:angular:viscousFrictionCoefficient") == approx(34906.58503988659)
    assert value(plain, j2, "physxJointAxis:angular:armature") == approx(2e5)  # 0.02 kg m^2
    # mimic: angular/angular gearing unchanged, offset in degrees, compliance as is
    assert value(plain, j2, "physxMimicJoint:rotZ:gearing") == approx(-2.0)
    assert value(plain, j2, "physxMimicJoint:rotZ:offset") == approx(5.729577951308232)  # 0.1 rad
    assert value(plain, j2, "physxMimicJoint:rotZ:naturalFrequency") == approx(10.0)
    assert value(plain, j2, "physxMimicJoint:rotZ:dampingRatio") == approx(1.0)
    assert value(plain, j2, "physxMimicJoint:rotZ:referenceJointAxis", "token", uniform=True) == "rotZ"
    assert value(plain, j2, "physxMimicJoint:rotZ:referenceJoint", "rel") == ["/World/j1"]
    # D6 acceleration drive: 1/s^2 per rad -> per deg (x pi/180); prismatic in cm, N/m -> g/s^2
    assert value(plain, "/World/d6", "drive:rotY:physics:stiffness") == approx(0.3490658503988659)  # 20
    assert value(plain, "/World/d6", "drive:rotY:physics:type", "token", uniform=True) == "acceleration"
    assert value(plain, "/World/d6", "limit:rotX:physics:high") == approx(40.10704565915762)  # 0.7 rad
    assert value(plain, "/World/slide", "state:linear:physics:position") == approx(3.0)  # 0.03 m
    assert value(plain, "/World/slide", "drive:linear:physics:stiffness") == approx(5e5)  # 500 N/m / 1e-3
    assert value(plain, "/World/slide", "drive:linear:physics:maxForce") == approx(8e6)  # 80 N / 1e-5
    # articulation, scene, bodies
    assert value(plain, "/World/fix", "physxArticulation:solverPositionIterationCount", "int") == 16
    assert value(plain, "/World/fix", "physxArticulation:sleepThreshold") == approx(10.0)  # 1e-3 m^2/s^2 / 1e-4
    assert value(plain, "/World/scene", "physxScene:timeStepsPerSecond", "uint") == 240
    assert value(plain, "/World/b1", "physxRigidBody:maxAngularVelocity") == approx(572.9577951308232)  # 10 rad/s
    assert value(plain, "/World/b1", "physxRigidBody:maxLinearVelocity") == approx(500.0)  # 5 m/s
    assert value(plain, "/World/b4", "physics:angularVelocity", "vector3f") == [0, 0, approx(114.59155902616465)]
    assert value(plain, "/World/loop", "physics:excludeFromArticulation", "bool", uniform=True) is True
    # tendons: N/m -> g/s^2, m -> cm, gearing m/rad -> cm/deg, lever arm m -> cm
    assert value(plain, j1, "physxTendon:t0:stiffness") == approx(1e5)
    assert value(plain, j1, "physxTendon:t0:restLength") == approx(10.0)
    assert value(plain, j1, "physxTendon:t0:gearing", "float[]") == [approx(0.03490658503988659)]
    assert value(plain, j2, "physxTendon:t0:forceCoefficient", "float[]") == [approx(4.0)]
    assert value(plain, "/World/b0", "physxTendon:r:localPos", "point3f") == [approx(10.0), 0, 0]
    assert value(plain, "/World/b1", "physxTendon:a:parentAttachment", "token", uniform=True) == "r"
    assert value(plain, "/World/b1", "physxTendon:a:parentLink", "rel") == ["/World/b0"]
    assert value(plain, "/World/b2", "physxTendon:l:restLength") == approx(50.0)


# ---- 2. usdart reads the same file back in SI ----------------------------------------------------------
@pytest.fixture(scope="module")
def imported(authored_file):
    scene = usdart.load(authored_file)
    assert scene.warnings == []
    return scene


def _dofs(scene):
    return {d.name: d for d in scene.description.articulations[0].dofs}


def test_usdart_reads_joint_values_back_in_si(imported):
    rel = dict(rel=1e-6)
    dofs = _dofs(imported)
    assert list(dofs) == ["/World/j1", "/World/j2", "/World/d6:rotX", "/World/d6:rotY", "/World/slide"]
    j1 = dofs["/World/j1"]
    assert (j1.lower, j1.upper) == pytest.approx(SI["j1_limits"], **rel)
    assert (j1.position, j1.velocity) == pytest.approx(SI["j1_state"], **rel)
    d = SI["j1_drive"]
    assert not j1.drive.acceleration
    assert (
        j1.drive.stiffness,
        j1.drive.damping,
        j1.drive.max_force,
        j1.drive.target_position,
        j1.drive.target_velocity,
    ) == pytest.approx(
        (d["stiffness"], d["damping"], d["max_force"], d["target_position"], d["target_velocity"]), **rel
    )
    e = SI["j1_envelope"]
    assert (
        j1.drive.max_actuator_velocity,
        j1.drive.velocity_dependent_resistance,
        j1.drive.speed_effort_gradient,
    ) == pytest.approx((e.max_actuator_velocity, e.velocity_dependent_resistance, e.speed_effort_gradient), **rel)
    assert (j1.armature, j1.max_velocity) == pytest.approx((0.01, 2.0), **rel)
    j2 = dofs["/World/j2"]
    assert (j2.armature, j2.static_friction, j2.dynamic_friction, j2.viscous_friction) == pytest.approx(
        (0.02, 1.0, 0.5, 0.2), **rel
    )
    rot_x, rot_y = dofs["/World/d6:rotX"], dofs["/World/d6:rotY"]
    assert (rot_x.lower, rot_x.upper, rot_x.position, rot_x.velocity) == pytest.approx((-0.5, 0.7, 0.2, -0.3), **rel)
    assert rot_y.drive.acceleration and (
        rot_y.drive.stiffness,
        rot_y.drive.damping,
        rot_y.drive.max_force,
        rot_y.drive.target_position,
    ) == pytest.approx((20.0, 2.0, 30.0, -0.4), **rel)
    slide = dofs["/World/slide"]
    assert (slide.lower, slide.upper, slide.position, slide.velocity) == pytest.approx((-0.05, 0.1, 0.03, 0.2), **rel)
    assert (
        slide.drive.stiffness,
        slide.drive.damping,
        slide.drive.max_force,
        slide.drive.target_position,
    ) == pytest.approx((500.0, 5.0, 80.0, 0.04), **rel)


def test_usdart_reads_couplings_and_settings_back_in_si(imported):
    rel = dict(rel=1e-6)
    art = imported.description.articulations[0]
    assert art.loop_joints == ["/World/loop"] and art.fixed_base
    (mimic,) = art.mimic_joints
    assert (mimic.dof, mimic.reference_dof) == ("/World/j2", "/World/j1")
    assert (mimic.gearing, mimic.offset, mimic.natural_frequency, mimic.damping_ratio) == pytest.approx(
        (-2.0, 0.1, 10.0, 1.0), **rel
    )
    assert (art.solver_position_iterations, art.solver_velocity_iterations, art.self_collisions) == (16, 2, False)
    assert (art.sleep_threshold, art.stabilization_threshold) == pytest.approx((1e-3, 2e-3), **rel)
    assert imported.time_step == pytest.approx(1 / 240)
    b1 = imported.description.bodies["/World/b1"]
    assert (
        b1.linear_damping,
        b1.angular_damping,
        b1.max_linear_velocity,
        b1.max_angular_velocity,
        b1.sleep_threshold,
    ) == pytest.approx((0.1, 0.2, 5.0, 10.0, 4e-4), **rel)
    assert b1.disable_gravity and b1.mass == pytest.approx(1.0)
    b4 = imported.description.bodies["/World/b4"]
    np.testing.assert_allclose(np.r_[b4.linear_velocity, b4.angular_velocity], [0, 0.5, 0, 0, 0, 2.0], rtol=1e-6)
    (tendon,) = art.fixed_tendons
    t = SI["tendon"]
    assert (tendon.root_joint, [a.joint for a in tendon.axes]) == ("/World/j1", ["/World/j1", "/World/j2"])
    assert (
        tendon.stiffness,
        tendon.damping,
        tendon.limit_stiffness,
        tendon.offset,
        tendon.rest_length,
        tendon.lower_limit,
        tendon.upper_limit,
    ) == pytest.approx(
        (
            t["stiffness"],
            t["damping"],
            t["limit_stiffness"],
            t["offset"],
            t["rest_length"],
            t["lower_limit"],
            t["upper_limit"],
        ),
        **rel,
    )
    assert [(a.gearing, a.force_coefficient) for a in tendon.axes] == [
        pytest.approx(ax, **rel) for ax in SI["tendon_axes"]
    ]
    (spatial,) = art.spatial_tendons
    assert (spatial.stiffness, spatial.damping, spatial.limit_stiffness, spatial.offset) == pytest.approx(
        (5.0, 0.5, 1.0, 0.02), **rel
    )
    root, mid, leaf = spatial.attachments
    assert [(a.link, a.name, a.parent, a.leaf) for a in spatial.attachments] == [
        ("/World/b0", "r", -1, False),
        ("/World/b1", "a", 0, False),
        ("/World/b2", "l", 1, True),
    ]
    np.testing.assert_allclose(
        np.r_[root.local_position, mid.local_position, leaf.local_position],
        [0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1],
        rtol=1e-6,
    )
    assert (mid.gearing, leaf.gearing, leaf.rest_length, leaf.lower_limit, leaf.upper_limit) == pytest.approx(
        (2.0, 1.5, 0.5, 0.2, 0.8), **rel
    )


# ---- 3. a stage in Isaac Sim's syntax imports like the same stage written by usdart.authoring ----------
def _joint_values(scene):
    art = scene.description.articulations[0]
    dofs = [(d.name, d.lower, d.upper, d.position, d.velocity, d.armature, d.max_velocity, d.drive) for d in art.dofs]
    mimics = [
        (m.dof, m.reference_dof, m.gearing, m.offset, m.natural_frequency, m.damping_ratio) for m in art.mimic_joints
    ]
    return art.root_link, art.fixed_base, dofs, mimics, art.solver_position_iterations, art.solver_velocity_iterations


def test_isaac_sim_syntax_imports_like_usdart_authoring(tmp_path):
    path = tmp_path / "gripper_isaac.usda"
    path.write_text(ISAAC_STAGE)
    isaac = _joint_values(usdart.load(str(path)))
    authored = _joint_values(usdart.load(authored_gripper()))
    assert isaac[0] == authored[0] == "/Gripper/base" and isaac[1] and authored[1]
    assert isaac[4:] == authored[4:] == (64, 4)
    for a, b in zip(isaac[2], authored[2]):
        assert a[0] == b[0]
        assert a[1:7] == pytest.approx(b[1:7], rel=1e-7)
        assert (a[7] is None) == (b[7] is None)
        if a[7] is not None:
            assert np.array(list(vars(a[7]).values()), float) == pytest.approx(
                np.array(list(vars(b[7]).values()), float), rel=1e-7
            )
    assert len(isaac[2]) == len(authored[2]) == 2
    finger = isaac[2][0]
    # independent check of the Isaac file's numbers in SI: 47 deg, 12 deg, 146.46 deg/s, 3 N m/deg
    assert finger[2:5] == pytest.approx((47 * DEG, 12 * DEG, 0.0))
    assert finger[6] == pytest.approx(146.46 * DEG, rel=1e-6)
    assert finger[7].stiffness == pytest.approx(3 / DEG, rel=1e-6) and finger[7].max_force == pytest.approx(26)
    assert isaac[3] == authored[3]
    assert isaac[3][0][:2] == ("/Gripper/Joints/right_outer_knuckle_joint", "/Gripper/Joints/finger_joint")
    assert isaac[3][0][2:] == pytest.approx((-1.0, 0.0, 25.0, 0.7), rel=1e-7)


def test_authoring_writes_isaac_sim_property_syntax(tmp_path):
    """Every property the Isaac-style file authors on the joints is written with the same name, type,
    variability and value by usdart.authoring (which adds explicit defaults such as referenceJointAxis)."""
    isaac = Usd.Stage.Open(Sdf.Layer.CreateAnonymous(".usda"))
    isaac.GetRootLayer().ImportFromString(ISAAC_STAGE)
    authored = authored_gripper()
    checked = 0
    for path in ("/Gripper", "/Gripper/Joints/finger_joint", "/Gripper/Joints/right_outer_knuckle_joint"):
        a, b = isaac.GetPrimAtPath(path), authored.GetPrimAtPath(path)
        assert set(a.GetAppliedSchemas() or []) <= set(b.GetAppliedSchemas() or [])
        for prop in a.GetAuthoredProperties():
            other = b.GetProperty(prop.GetName())
            assert other, (path, prop.GetName())
            if isinstance(prop, Usd.Relationship):
                assert other.GetTargets() == prop.GetTargets()
                continue
            assert (other.GetTypeName(), other.GetVariability()) == (prop.GetTypeName(), prop.GetVariability()), (
                path,
                prop.GetName(),
            )
            assert (
                other.Get() == pytest.approx(prop.Get(), rel=1e-6)
                if isinstance(prop.Get(), float)
                else other.Get() == prop.Get()
            )
            checked += 1
    assert checked >= 25
    follower = authored.GetPrimAtPath("/Gripper/Joints/right_outer_knuckle_joint")
    assert follower.GetMetadata("apiSchemas").ApplyOperations([]) == [
        "PhysxJointAxisAPI:angular",
        "PhysicsJointStateAPI:angular",
        "PhysxMimicJointAPI:rotZ",
    ]


# ---- 4. bad requests name the prim -------------------------------------------------------------------------
@pytest.fixture
def small():
    st = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(st, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(st, 1.0)
    UsdGeom.Xform.Define(st, "/World")
    for name, x in (("a", 0.0), ("b", 1.0)):
        xf = UsdGeom.Xform.Define(st, f"/World/{name}")
        xf.AddTranslateOp().Set(Gf.Vec3d(x, 0, 0))
        UsdPhysics.RigidBodyAPI.Apply(xf.GetPrim())
        UsdPhysics.MassAPI.Apply(xf.GetPrim()).CreateMassAttr(1.0)
    UsdGeom.Cube.Define(st, "/World/a/geom")
    UsdPhysics.RevoluteJoint.Define(st, "/World/hinge").CreateBody0Rel().SetTargets(["/World/a"])
    UsdPhysics.RevoluteJoint(st.GetPrimAtPath("/World/hinge")).CreateBody1Rel().SetTargets(["/World/b"])
    UsdPhysics.FixedJoint.Define(st, "/World/weld").CreateBody1Rel().SetTargets(["/World/a"])
    UsdPhysics.Joint.Define(st, "/World/d6")
    return st


@pytest.mark.parametrize(
    "call, path, words",
    [
        (lambda s: A.set_joint_state(s.GetPrimAtPath("/World/weld"), 1.0), "/World/weld", "no degree of freedom"),
        (lambda s: A.set_joint_state(s.GetPrimAtPath("/World/d6"), 1.0), "/World/d6", "needs axis"),
        (lambda s: A.set_joint_state(s.GetPrimAtPath("/World/hinge"), 1.0, axis="rotX"), "/World/hinge", "'angular'"),
        (lambda s: A.set_joint_state(s.GetPrimAtPath("/World/a"), 1.0), "/World/a", "not a physics joint"),
        (lambda s: A.set_drive(s.GetPrimAtPath("/World/hinge"), -1.0, 0.0), "/World/hinge", "stiffness"),
        (lambda s: A.set_drive(s.GetPrimAtPath("/World/hinge"), 1.0, 0.0, type="velocity"), "/World/hinge", "type"),
        (lambda s: A.set_drive_target(s.GetPrimAtPath("/World/hinge"), 1.0), "/World/hinge", "no PhysicsDriveAPI"),
        (lambda s: A.set_joint_limits(s.GetPrimAtPath("/World/hinge"), 1.0, -1.0), "/World/hinge", "greater"),
        (lambda s: A.set_joint_state(s.GetPrimAtPath("/World/hinge"), float("nan")), "/World/hinge", "NaN"),
        (lambda s: A.set_articulation_root(s.GetPrimAtPath("/World/hinge")), "/World/hinge", "world"),
        (lambda s: A.set_articulation_root(s.GetPrimAtPath("/World/a/geom")), "/World/a/geom", "inside the rigid body"),
        (
            lambda s: A.set_articulation_settings(s.GetPrimAtPath("/World"), solver_position_iterations=4),
            "/World",
            "PhysicsArticulationRootAPI",
        ),
        (
            lambda s: (
                A.set_articulation_root(s.GetPrimAtPath("/World")),
                A.set_articulation_root(s.GetPrimAtPath("/World/a")),
            ),
            "/World/a",
            "nested",
        ),
        (
            lambda s: A.set_mimic_joint(s.GetPrimAtPath("/World/hinge"), s.GetPrimAtPath("/World/hinge"), 1.0),
            "/World/hinge",
            "itself",
        ),
        (lambda s: A.add_fixed_tendon("a:b", A.TendonJoint(s.GetPrimAtPath("/World/hinge"))), "/World/hinge", "':'"),
        (lambda s: A.add_spatial_tendon_root(s.GetPrimAtPath("/World/hinge"), "t"), "/World/hinge", "rigid bodies"),
        (
            lambda s: A.set_joint_properties(
                s.GetPrimAtPath("/World/hinge"), static_friction=1.0, dynamic_friction=2.0
            ),
            "/World/hinge",
            "dynamic friction",
        ),
        (
            lambda s: A.set_rigid_body_settings(s.GetPrimAtPath("/World/a"), max_linear_velocity=-1.0),
            "/World/a",
            "non-negative",
        ),
        (
            lambda s: A.set_joint_properties(s.GetPrimAtPath("/World/d6"), static_friction=1.0, axis="transX"),
            "/World/d6",
            "only for the instances",
        ),
    ],
)
def test_bad_requests_raise_authoring_errors_naming_the_prim(small, call, path, words):
    with pytest.raises(AuthoringError) as err:
        call(small)
    assert err.value.prim_path == path and words in str(err.value) and str(err.value).startswith(path + ":")


def test_joint_properties_go_where_physx_reads_them(small):
    """Armature, velocity limit and friction all go into PhysxJointAxisAPI:<axis> (PhysX's schemas have no
    PhysxJointAPI any more), authored in two calls; the importer reads 0.3 kg m^2, 2 rad/s, 4 and 3 N m."""
    hinge = small.GetPrimAtPath("/World/hinge")
    A.set_joint_properties(hinge, armature=0.3, max_velocity=2.0)
    A.set_joint_properties(hinge, static_friction=4.0, dynamic_friction=3.0)
    assert not hinge.GetAttribute("physxJoint:armature")
    assert hinge.GetAttribute("physxJointAxis:angular:armature").Get() == pytest.approx(0.3)
    assert hinge.GetAttribute("physxJointAxis:angular:maxJointVelocity").Get() == pytest.approx(2.0 / DEG, rel=1e-6)
    small.RemovePrim("/World/d6")  # all axes free: not an articulation joint
    UsdPhysics.ArticulationRootAPI.Apply(small.GetPrimAtPath("/World/a"))
    (dof,) = usdart.load(small).description.articulations[0].dofs
    assert (dof.armature, dof.max_velocity, dof.static_friction, dof.dynamic_friction) == pytest.approx(
        (0.3, 2.0, 4.0, 3.0), rel=1e-6
    )


def test_mimic_between_a_slider_and_a_hinge_converts_gearing_units():
    """Prismatic follower, revolute reference, centimetre stage: gearing 0.05 m/rad is stored as
    0.05 * (pi/180) / 0.01 = 0.0872664626 cm/deg, offset 0.01 m as 1 cm; the instance is the slider's axis."""
    st = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(st, 0.01)
    UsdPhysics.SetStageKilogramsPerUnit(st, 1.0)
    for name in ("base", "arm", "slider"):
        UsdPhysics.RigidBodyAPI.Apply(UsdGeom.Xform.Define(st, f"/World/{name}").GetPrim())
        UsdPhysics.MassAPI.Apply(st.GetPrimAtPath(f"/World/{name}")).CreateMassAttr(1.0)
    UsdPhysics.FixedJoint.Define(st, "/World/fix").CreateBody1Rel().SetTargets(["/World/base"])
    hinge = UsdPhysics.RevoluteJoint.Define(st, "/World/hinge")
    slide = UsdPhysics.PrismaticJoint.Define(st, "/World/slide")
    for j, child, axis in ((hinge, "arm", "Z"), (slide, "slider", "X")):
        j.CreateBody0Rel().SetTargets(["/World/base"])
        j.CreateBody1Rel().SetTargets([f"/World/{child}"])
        j.CreateAxisAttr(axis)
        A.set_joint_limits(j, -1.0, 1.0)
    A.set_mimic_joint(slide, hinge, gearing=0.05, offset=0.01)
    prim = slide.GetPrim()
    assert prim.GetAttribute("physxMimicJoint:rotX:gearing").Get() == pytest.approx(0.0872664626, rel=1e-7)
    assert prim.GetAttribute("physxMimicJoint:rotX:offset").Get() == pytest.approx(1.0)
    assert prim.GetAttribute("physxMimicJoint:rotX:referenceJointAxis").Get() == "rotZ"
    A.set_articulation_root(st.GetPrimAtPath("/World/fix"))
    (mimic,) = usdart.load(st).description.articulations[0].mimic_joints
    assert (mimic.dof, mimic.reference_dof) == ("/World/slide", "/World/hinge")
    assert (mimic.gearing, mimic.offset) == pytest.approx((0.05, 0.01), rel=1e-6)


# ---- 5. usdart author: file edits from the command line ------------------------------------------------------
def test_cli_sets_joint_state_and_drive_target_in_place(tmp_path):
    stage = tmp_path / "gear.usda"
    stage.write_text(open(os.path.join(ROOT, "sample_stages", "gear.usda")).read())
    run = CliRunner().invoke(
        cli,
        [
            "author",
            "joint-state",
            str(stage),
            "/World/revoluteJoint1",
            "--position",
            "30",
            "--velocity",
            "-90",
            "--degrees",
        ],
    )
    assert run.exit_code == 0, run.output
    edited = Usd.Stage.Open(str(stage))
    j1 = edited.GetPrimAtPath("/World/revoluteJoint1")
    assert j1.GetAttribute("state:angular:physics:position").Get() == pytest.approx(30.0)
    assert j1.GetAttribute("state:angular:physics:velocity").Get() == pytest.approx(-90.0)
    assert sorted(os.listdir(tmp_path)) == ["gear.usda"]  # no temporary file left behind
    run = CliRunner().invoke(
        cli, ["author", "drive", str(stage), "/World/revoluteJoint1", "--stiffness", "57.29578", "--damping", "0"]
    )
    assert run.exit_code == 0, run.output
    out = tmp_path / "out.usda"
    run = CliRunner().invoke(
        cli, ["author", "drive-target", str(stage), "/World/revoluteJoint1", "--position", "0.5", "-o", str(out)]
    )
    assert run.exit_code == 0, run.output
    edited = Usd.Stage.Open(str(out))
    drive = UsdPhysics.DriveAPI(edited.GetPrimAtPath("/World/revoluteJoint1"), "angular")
    assert drive.GetTargetPositionAttr().Get() == pytest.approx(28.64789, rel=1e-6)  # 0.5 rad
    assert drive.GetStiffnessAttr().Get() == pytest.approx(1.0, rel=1e-6)  # 57.29578 N m/rad = 1 N m/deg


def test_cli_errors_are_one_line_exit_2(tmp_path):
    stage = tmp_path / "gear.usda"
    original = open(os.path.join(ROOT, "sample_stages", "gear.usda")).read()
    stage.write_text(original)
    for args in (
        ["joint-state", str(stage), "/World/nope", "--position", "1"],
        ["drive-target", str(stage), "/World/revoluteJoint1", "--position", "1"],
        ["articulation-root", str(stage), "/World/revoluteJoint0"],
        ["joint-state", str(tmp_path / "missing.usda"), "/World/revoluteJoint1", "--position", "1"],
    ):
        run = CliRunner().invoke(cli, ["author", *args])
        assert run.exit_code == 2, (args, run.output)
        assert run.output.startswith("usdart: error: ") and run.output.count("\n") == 1, run.output
    assert stage.read_text() == original
