"""Stages for the authoring and schema-plugin tests.

`build()`: every schema usdart.authoring writes, in centimetres and grams, from the SI values in `SI`.
Geometry is plain usd-core; every physics value goes through usdart.authoring. Chain (x along the world X):
world -fix-> b0 -j1 (revolute Z)-> b1 -j2 (revolute Z, mimics j1)-> b2 -d6 (rotX, rotY free)-> b3
-slide (prismatic X)-> b4, plus /World/loop (revolute b0 -> b2, excluded: a loop constraint).

`ISAAC_STAGE`: a two-finger gripper written as literal USDA in the syntax of Isaac Sim assets (the Robotiq
2F-85's finger and mimic knuckle joints, reference section 13.A); `authored_gripper()`: the same gripper
written through usdart.authoring from SI values.
"""

from __future__ import annotations

import math

from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

from usdart import authoring as A

MPU, KPU = 0.01, 0.001  # centimetres, grams

# SI inputs (rad, m, kg, s): the numbers the tests expect back from the importer
SI = dict(
    j1_limits=(-1.2, 1.5),
    j1_state=(0.5, 0.1),
    j1_drive=dict(stiffness=100.0, damping=10.0, max_force=50.0, target_position=0.25, target_velocity=0.5),
    j1_envelope=A.DriveEnvelope(
        max_actuator_velocity=3.0, velocity_dependent_resistance=0.2, speed_effort_gradient=0.01
    ),
    j1_props=dict(armature=0.01, max_velocity=2.0),
    j2_limits=(-1.0, 1.0),
    j2_props=dict(armature=0.02, static_friction=1.0, dynamic_friction=0.5, viscous_friction=0.2),
    mimic=dict(gearing=-2.0, offset=0.1, natural_frequency=10.0, damping_ratio=1.0),
    d6_rotx_limits=(-0.5, 0.7),
    d6_rotx_state=(0.2, -0.3),
    d6_roty_drive=dict(stiffness=20.0, damping=2.0, max_force=30.0, target_position=-0.4, type="acceleration"),
    slide_limits=(-0.05, 0.1),
    slide_state=(0.03, 0.2),
    slide_drive=dict(stiffness=500.0, damping=5.0, max_force=80.0, target_position=0.04),
    articulation=dict(
        solver_position_iterations=16,
        solver_velocity_iterations=2,
        sleep_threshold=1e-3,
        stabilization_threshold=2e-3,
        self_collisions=False,
    ),
    time_steps_per_second=240,
    b1_settings=dict(
        linear_damping=0.1,
        angular_damping=0.2,
        max_linear_velocity=5.0,
        max_angular_velocity=10.0,
        disable_gravity=True,
        sleep_threshold=4e-4,
    ),
    b4_velocity=((0.0, 0.5, 0.0), (0.0, 0.0, 2.0)),
    tendon=dict(
        stiffness=100.0,
        damping=3.0,
        limit_stiffness=7.0,
        offset=0.01,
        rest_length=0.1,
        lower_limit=-0.2,
        upper_limit=0.3,
    ),
    tendon_axes=((0.02, 0.05), (-0.01, 0.04)),  # (gearing m/rad, force coefficient m) of j1 (root), j2
    spatial_root=dict(local_position=(0.1, 0.0, 0.0), stiffness=5.0, damping=0.5, limit_stiffness=1.0, offset=0.02),
    spatial_attachment=dict(local_position=(0.0, 0.1, 0.0), gearing=2.0),
    spatial_leaf=dict(local_position=(0.0, 0.0, 0.1), gearing=1.5, rest_length=0.5, lower_limit=0.2, upper_limit=0.8),
)


def _body(stage, path, x_cm):
    xf = UsdGeom.Xform.Define(stage, path)
    xf.AddTranslateOp().Set(Gf.Vec3d(x_cm, 0, 0))
    prim = xf.GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim)
    mass = UsdPhysics.MassAPI.Apply(prim)
    mass.CreateMassAttr(1000.0)  # g
    mass.CreateDiagonalInertiaAttr(Gf.Vec3f(1e4, 1e4, 1e4))  # g cm^2
    mass.CreateCenterOfMassAttr(Gf.Vec3f(0, 0, 0))
    mass.CreatePrincipalAxesAttr(Gf.Quatf(1, 0, 0, 0))
    return prim


def _joint(stage, path, schema, body0, body1, axis=None):
    j = schema.Define(stage, path)
    if body0:
        j.CreateBody0Rel().SetTargets([Sdf.Path(body0)])
    j.CreateBody1Rel().SetTargets([Sdf.Path(body1)])
    if body0:
        j.CreateLocalPos0Attr(Gf.Vec3f(50, 0, 0))
        j.CreateLocalPos1Attr(Gf.Vec3f(-50, 0, 0))
    if axis:
        j.CreateAxisAttr(axis)
    return j.GetPrim()


def build() -> Usd.Stage:
    st = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(st, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(st, MPU)
    UsdPhysics.SetStageKilogramsPerUnit(st, KPU)
    world = UsdGeom.Xform.Define(st, "/World").GetPrim()
    st.SetDefaultPrim(world)
    scene = UsdPhysics.Scene.Define(st, "/World/scene")
    A.set_scene_settings(scene, time_steps_per_second=SI["time_steps_per_second"])
    b = [_body(st, f"/World/b{i}", 100.0 * i) for i in range(5)]
    fix = _joint(st, "/World/fix", UsdPhysics.FixedJoint, None, "/World/b0")
    j1 = _joint(st, "/World/j1", UsdPhysics.RevoluteJoint, "/World/b0", "/World/b1", "Z")
    j2 = _joint(st, "/World/j2", UsdPhysics.RevoluteJoint, "/World/b1", "/World/b2", "Z")
    d6 = _joint(st, "/World/d6", UsdPhysics.Joint, "/World/b2", "/World/b3")
    slide = _joint(st, "/World/slide", UsdPhysics.PrismaticJoint, "/World/b3", "/World/b4", "X")
    loop = _joint(st, "/World/loop", UsdPhysics.RevoluteJoint, "/World/b0", "/World/b2", "Z")
    UsdPhysics.Joint(loop).CreateLocalPos0Attr(Gf.Vec3f(200, 0, 0))
    UsdPhysics.Joint(loop).CreateLocalPos1Attr(Gf.Vec3f(0, 0, 0))

    A.set_articulation_root(fix)
    A.set_articulation_settings(fix, **SI["articulation"])
    A.exclude_from_articulation(loop)
    A.set_joint_limits(j1, *SI["j1_limits"])
    A.set_joint_state(j1, *SI["j1_state"])
    A.set_drive(j1, **SI["j1_drive"], envelope=SI["j1_envelope"])
    A.set_joint_properties(j1, **SI["j1_props"])
    A.set_joint_limits(j2, *SI["j2_limits"])
    A.set_joint_properties(j2, **SI["j2_props"])
    A.set_mimic_joint(j2, j1, **SI["mimic"])
    for axis in ("transX", "transY", "transZ", "rotZ"):  # lock: low > high
        A.set_joint_limits(d6, 1.0, -1.0, axis=axis)
    A.set_joint_limits(d6, *SI["d6_rotx_limits"], axis="rotX")
    A.set_joint_state(d6, *SI["d6_rotx_state"], axis="rotX")
    A.set_drive(d6, **SI["d6_roty_drive"], axis="rotY")
    A.set_joint_limits(slide, *SI["slide_limits"])
    A.set_joint_state(slide, *SI["slide_state"])
    A.set_drive(slide, **SI["slide_drive"])
    A.set_rigid_body_settings(b[1], **SI["b1_settings"])
    A.set_rigid_body_velocity(b[4], *SI["b4_velocity"])
    (g1, c1), (g2, c2) = SI["tendon_axes"]
    A.add_fixed_tendon("t0", A.TendonJoint(j1, g1, c1), [A.TendonJoint(j2, g2, c2)], **SI["tendon"])
    A.add_spatial_tendon_root(b[0], "r", **SI["spatial_root"])
    A.add_spatial_tendon_attachment(b[1], "a", b[0], "r", **SI["spatial_attachment"])
    A.add_spatial_tendon_leaf(b[2], "l", b[1], "a", **SI["spatial_leaf"])
    return st


ISAAC_STAGE = """#usda 1.0
(
    defaultPrim = "Gripper"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    upAxis = "Z"
)

def Xform "Gripper" (
    prepend apiSchemas = ["PhysicsArticulationRootAPI", "PhysxArticulationAPI"]
)
{
    int physxArticulation:solverPositionIterationCount = 64
    int physxArticulation:solverVelocityIterationCount = 4

    def Xform "base" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]
    )
    {
        point3f physics:centerOfMass = (0, 0, 0)
        float3 physics:diagonalInertia = (0.001, 0.001, 0.001)
        float physics:mass = 0.5
        quatf physics:principalAxes = (1, 0, 0, 0)
    }

    def Xform "left_knuckle" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]
    )
    {
        point3f physics:centerOfMass = (0, 0, 0)
        float3 physics:diagonalInertia = (1e-5, 1e-5, 1e-5)
        float physics:mass = 0.05
        quatf physics:principalAxes = (1, 0, 0, 0)
        double3 xformOp:translate = (0.03, 0, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }

    def Xform "right_knuckle" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]
    )
    {
        point3f physics:centerOfMass = (0, 0, 0)
        float3 physics:diagonalInertia = (1e-5, 1e-5, 1e-5)
        float physics:mass = 0.05
        quatf physics:principalAxes = (1, 0, 0, 0)
        double3 xformOp:translate = (-0.03, 0, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }

    def Scope "Joints"
    {
        def PhysicsFixedJoint "root_joint"
        {
            rel physics:body1 = </Gripper/base>
        }

        def PhysicsRevoluteJoint "finger_joint" (
            prepend apiSchemas = [
                "PhysxJointAxisAPI:angular", "PhysicsDriveAPI:angular", "PhysicsJointStateAPI:angular"
            ]
        )
        {
            float drive:angular:physics:damping = 0.0002
            float drive:angular:physics:maxForce = 26
            float drive:angular:physics:stiffness = 3
            float drive:angular:physics:targetPosition = 20
            uniform token physics:axis = "Z"
            rel physics:body0 = </Gripper/base>
            rel physics:body1 = </Gripper/left_knuckle>
            point3f physics:localPos0 = (0.03, 0, 0)
            point3f physics:localPos1 = (0, 0, 0)
            float physics:lowerLimit = 0
            float physics:upperLimit = 47
            float physxJointAxis:angular:armature = 0.0001
            float physxJointAxis:angular:maxJointVelocity = 146.46
            float state:angular:physics:position = 12
            float state:angular:physics:velocity = 0
        }

        def PhysicsRevoluteJoint "right_outer_knuckle_joint" (
            active = true
            delete apiSchemas = ["PhysicsDriveAPI:angular"]
            prepend apiSchemas = [
                "PhysxJointAxisAPI:angular", "PhysxMimicJointAPI:rotZ", "PhysicsJointStateAPI:angular"
            ]
        )
        {
            uniform token physics:axis = "Z"
            rel physics:body0 = </Gripper/base>
            rel physics:body1 = </Gripper/right_knuckle>
            point3f physics:localPos0 = (-0.03, 0, 0)
            point3f physics:localPos1 = (0, 0, 0)
            float physics:lowerLimit = 0
            float physics:upperLimit = 47
            float physxJointAxis:angular:armature = 0.0001
            float physxJointAxis:angular:maxJointVelocity = 10000
            float physxMimicJoint:rotZ:dampingRatio = 0.7
            float physxMimicJoint:rotZ:gearing = -1
            float physxMimicJoint:rotZ:naturalFrequency = 25
            rel physxMimicJoint:rotZ:referenceJoint = </Gripper/Joints/finger_joint>
            float state:angular:physics:position = 12
            float state:angular:physics:velocity = 0
        }
    }
}
"""


def authored_gripper() -> Usd.Stage:
    """The same gripper: geometry with usd-core, every physics value through usdart.authoring in SI."""
    st = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(st, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(st, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(st, 1.0)
    gripper = UsdGeom.Xform.Define(st, "/Gripper").GetPrim()
    st.SetDefaultPrim(gripper)
    for name, x, mass, inertia in (
        ("base", None, 0.5, 1e-3),
        ("left_knuckle", 0.03, 0.05, 1e-5),
        ("right_knuckle", -0.03, 0.05, 1e-5),
    ):
        xf = UsdGeom.Xform.Define(st, f"/Gripper/{name}")
        if x is not None:
            xf.AddTranslateOp().Set(Gf.Vec3d(x, 0, 0))
        UsdPhysics.RigidBodyAPI.Apply(xf.GetPrim())
        api = UsdPhysics.MassAPI.Apply(xf.GetPrim())
        api.CreateMassAttr(mass)
        api.CreateDiagonalInertiaAttr(Gf.Vec3f(inertia, inertia, inertia))
        api.CreateCenterOfMassAttr(Gf.Vec3f(0, 0, 0))
        api.CreatePrincipalAxesAttr(Gf.Quatf(1, 0, 0, 0))
    UsdGeom.Scope.Define(st, "/Gripper/Joints")
    UsdPhysics.FixedJoint.Define(st, "/Gripper/Joints/root_joint").CreateBody1Rel().SetTargets(["/Gripper/base"])
    joints = {}
    for name, child, x in (
        ("finger_joint", "left_knuckle", 0.03),
        ("right_outer_knuckle_joint", "right_knuckle", -0.03),
    ):
        j = UsdPhysics.RevoluteJoint.Define(st, f"/Gripper/Joints/{name}")
        j.CreateAxisAttr("Z")
        j.CreateBody0Rel().SetTargets(["/Gripper/base"])
        j.CreateBody1Rel().SetTargets([f"/Gripper/{child}"])
        j.CreateLocalPos0Attr(Gf.Vec3f(x, 0, 0))
        j.CreateLocalPos1Attr(Gf.Vec3f(0, 0, 0))
        A.set_joint_limits(j, 0.0, math.radians(47.0))
        A.set_joint_properties(j, armature=1e-4, max_velocity=math.radians(146.46 if x > 0 else 10000.0))
        A.set_joint_state(j, math.radians(12.0), 0.0)
        joints[name] = j
    # 3 N m/deg and 0.0002 N m s/deg in SI (per radian); 26 N m; 20 deg
    A.set_drive(
        joints["finger_joint"],
        stiffness=math.degrees(3.0),
        damping=math.degrees(0.0002),
        max_force=26.0,
        target_position=math.radians(20.0),
    )
    A.set_mimic_joint(
        joints["right_outer_knuckle_joint"],
        joints["finger_joint"],
        gearing=-1.0,
        natural_frequency=25.0,
        damping_ratio=0.7,
    )
    A.set_articulation_root(gripper)
    A.set_articulation_settings(gripper, solver_position_iterations=64, solver_velocity_iterations=4)
    return st
