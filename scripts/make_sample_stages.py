"""Write the bundled sample stages (sample_stages/*.usda) with plain usd-core.

- two_link_arm.usda: seed fixed-base example, root API on the fixed world joint, revolute about Y with
  JointStateAPI (45 deg).
- floating_body.usda: seed floating body, root API on the body, initial linear and angular velocity.
- square_loop.usda: seed square of four bodies; three revolute joints in the tree and a fourth one excluded
  from the articulation closes the loop (a four-bar linkage), root API on rigidBody0.
- gear.usda: seed mimic gear: two revolute joints on a fixed root body, joint0 mimics joint1 with
  gearing 5 and starts at 800 deg/s; sphere colliders give the masses (density 1000).
- arm_with_gripper.usda: a 7-DOF arm with a two-finger gripper, root API on the ancestor Xform, joints in a
  Scope, PD drives, PhysxJointAPI, one finger joint authored with body0/body1 reversed.
- ragdoll.usda: spherical shoulders/hips/neck/waist and revolute elbows/knees, root API on a Scope; the
  spine is the unique minimal-eccentricity body, so it becomes the root.

PhysxSchema is not in usd-core: PhysX API schemas are applied by token and their attributes created by name.
Usage: python scripts/make_sample_stages.py [OUTPUT_FOLDER]
"""
from __future__ import annotations

import math
import os
import sys

from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

HERE = os.path.dirname(os.path.abspath(__file__))


def new_stage(steps_per_second: int) -> Usd.Stage:
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    world = UsdGeom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(world.GetPrim())
    scene = UsdPhysics.Scene.Define(stage, "/World/physicsScene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, 0, -1))
    scene.CreateGravityMagnitudeAttr(9.81)
    scene.GetPrim().AddAppliedSchema("PhysxSceneAPI")
    physx_attr(scene.GetPrim(), "physxScene:timeStepsPerSecond", steps_per_second, Sdf.ValueTypeNames.UInt)
    return stage


def physx_attr(prim, name, value, type_name=Sdf.ValueTypeNames.Float, uniform=False):
    variability = Sdf.VariabilityUniform if uniform else Sdf.VariabilityVarying
    prim.CreateAttribute(name, type_name, custom=False, variability=variability).Set(value)


def body(stage, path, pos, mass=None, collider=None, rot=(1, 0, 0, 0)):
    """A rigid body Xform at `pos`; collider = ('cube', size) | ('sphere', r) | ('capsule', r, h, axis)."""
    xf = UsdGeom.Xform.Define(stage, path)
    xf.AddTranslateOp().Set(Gf.Vec3d(*pos))
    xf.AddOrientOp().Set(Gf.Quatf(*rot))
    prim = xf.GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim)
    if mass is not None:
        UsdPhysics.MassAPI.Apply(prim).CreateMassAttr(mass)
    if collider:
        kind = collider[0]
        if kind == "cube":
            geom = UsdGeom.Cube.Define(stage, path + "/collider")
            geom.CreateSizeAttr(collider[1])
        elif kind == "sphere":
            geom = UsdGeom.Sphere.Define(stage, path + "/collider")
            geom.CreateRadiusAttr(collider[1])
        else:
            geom = UsdGeom.Capsule.Define(stage, path + "/collider")
            geom.CreateRadiusAttr(collider[1])
            geom.CreateHeightAttr(collider[2])
            geom.CreateAxisAttr(collider[3])
            if len(collider) > 4:
                geom.AddTranslateOp().Set(Gf.Vec3d(*collider[4]))
        UsdPhysics.CollisionAPI.Apply(geom.GetPrim())
    return prim


def joint(stage, path, kind, b0, b1, lp0=(0, 0, 0), lp1=(0, 0, 0), axis=None, limits=None):
    cls = {"fixed": UsdPhysics.FixedJoint, "revolute": UsdPhysics.RevoluteJoint,
           "prismatic": UsdPhysics.PrismaticJoint, "spherical": UsdPhysics.SphericalJoint}[kind]
    j = cls.Define(stage, path)
    if b0:
        j.CreateBody0Rel().SetTargets([Sdf.Path(b0)])
    if b1:
        j.CreateBody1Rel().SetTargets([Sdf.Path(b1)])
    j.CreateLocalPos0Attr(Gf.Vec3f(*lp0))
    j.CreateLocalPos1Attr(Gf.Vec3f(*lp1))
    j.CreateLocalRot0Attr(Gf.Quatf(1, 0, 0, 0))
    j.CreateLocalRot1Attr(Gf.Quatf(1, 0, 0, 0))
    if axis:
        j.CreateAxisAttr(axis)
    if limits and kind in ("revolute", "prismatic"):
        j.CreateLowerLimitAttr(limits[0])
        j.CreateUpperLimitAttr(limits[1])
    if limits and kind == "spherical":
        j.CreateConeAngle0LimitAttr(limits[0])
        j.CreateConeAngle1LimitAttr(limits[1])
    return j.GetPrim()


def joint_state(prim, instance, position, velocity):
    prim.AddAppliedSchema(f"PhysicsJointStateAPI:{instance}")
    physx_attr(prim, f"state:{instance}:physics:position", float(position))
    physx_attr(prim, f"state:{instance}:physics:velocity", float(velocity))


def root_api(stage, path):
    UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath(path))


def two_link_arm():
    st = new_stage(60)
    body(st, "/World/rigidBody0", (0, 0, 0), mass=2.0, collider=("cube", 0.2))
    # at the authored joint state (45 deg about Y) the link hangs rotated about the hinge at y = 0.5 m
    body(st, "/World/rigidBody1", (0, 1.0, 0), mass=1.0, collider=("cube", 0.2),
         rot=(math.cos(math.pi / 8), 0, math.sin(math.pi / 8), 0))
    hinge = joint(st, "/World/revoluteJoint", "revolute", "/World/rigidBody0", "/World/rigidBody1",
                  lp0=(0, 1.0, 0), axis="Y")
    joint_state(hinge, "angular", 45.0, 0.0)
    joint(st, "/World/fixedJoint", "fixed", "/World/rigidBody0", None)
    root_api(st, "/World/fixedJoint")
    return st


def floating_body():
    st = new_stage(60)
    prim = body(st, "/World/rigidBody", (0, 0, 0), mass=2.0)
    api = UsdPhysics.RigidBodyAPI(prim)
    api.CreateVelocityAttr(Gf.Vec3f(0, 10, 0))
    api.CreateAngularVelocityAttr(Gf.Vec3f(0, 0, 10))
    root_api(st, "/World/rigidBody")
    return st


def square_loop():
    st = new_stage(60)
    corners = [(0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)]
    for i, c in enumerate(corners):
        body(st, f"/World/rigidBody{i}", c, mass=2.0, collider=("cube", 0.1))
    for i, (a, b) in enumerate([(0, 1), (1, 2), (2, 3), (3, 0)]):
        offset = tuple(corners[b][k] - corners[a][k] for k in range(3))
        path = f"/World/revoluteJoint{i}" if i < 3 else "/World/loopJoint"
        j = joint(st, path, "revolute", f"/World/rigidBody{a}", f"/World/rigidBody{b}", lp0=offset, axis="Z")
        if i == 3:
            UsdPhysics.Joint(j).CreateExcludeFromArticulationAttr(True)
    root_api(st, "/World/rigidBody0")
    return st


def gear():
    st = new_stage(60)
    body(st, "/World/rootBody", (0, 0, 0), mass=1.0, collider=("cube", 0.2))
    for i, x in enumerate((-0.5, 0.5)):
        prim = body(st, f"/World/rigidBody{i}", (x, 0, 0), collider=("sphere", 0.05))
        UsdPhysics.MassAPI.Apply(prim).CreateDensityAttr(1000.0)
        joint(st, f"/World/revoluteJoint{i}", "revolute", "/World/rootBody", f"/World/rigidBody{i}",
              lp0=(x, 0, 0), axis="Z", limits=(-9000.0, 9000.0))
    joint(st, "/World/rootBodyFixedJoint", "fixed", "/World/rootBody", None)
    root_api(st, "/World/rootBodyFixedJoint")
    j0 = st.GetPrimAtPath("/World/revoluteJoint0")
    joint_state(j0, "angular", 0.0, 800.0)
    j0.AddAppliedSchema("PhysxMimicJointAPI:rotZ")
    j0.CreateRelationship("physxMimicJoint:rotZ:referenceJoint", custom=False).SetTargets(
        [Sdf.Path("/World/revoluteJoint1")])
    physx_attr(j0, "physxMimicJoint:rotZ:referenceJointAxis", "rotZ", Sdf.ValueTypeNames.Token, uniform=True)
    physx_attr(j0, "physxMimicJoint:rotZ:gearing", 5.0)
    physx_attr(j0, "physxMimicJoint:rotZ:offset", 0.0)
    return st


ARM_JOINTS = [  # (offset from previous joint in the parent link frame, axis, limits deg, link mass)
    ((0, 0, 0.333), "Z", (-166, 166), 4.0), ((0, 0, 0), "Y", (-101, 101), 3.0),
    ((0, 0, 0.316), "Z", (-166, 166), 3.0), ((0.0825, 0, 0), "Y", (-176, -4), 2.5),
    ((-0.0825, 0, 0.384), "Z", (-166, 166), 2.5), ((0, 0, 0), "Y", (-1, 215), 2.0),
    ((0.088, 0, 0), "Z", (-166, 166), 1.5),
]


def arm_with_gripper():
    """Zero joint angles are authored: all link frames stay axis-aligned, so poses are running offsets."""
    st = new_stage(120)
    UsdGeom.Xform.Define(st, "/World/robot")
    UsdGeom.Scope.Define(st, "/World/robot/joints")
    body(st, "/World/robot/base", (0, 0, 0), mass=5.0, collider=("capsule", 0.06, 0.1, "Z", (0, 0, 0.1)))
    joint(st, "/World/robot/joints/base_joint", "fixed", None, "/World/robot/base")
    pos, parent = [0.0, 0.0, 0.0], "/World/robot/base"
    for i, (offset, axis, limits, mass) in enumerate(ARM_JOINTS, start=1):
        pos = [pos[k] + offset[k] for k in range(3)]
        link = f"/World/robot/link{i}"
        body(st, link, tuple(pos), mass=mass, collider=("capsule", 0.05, 0.08, "Z"))
        parent_pos = st.GetPrimAtPath(parent).GetAttribute("xformOp:translate").Get()
        j = joint(st, f"/World/robot/joints/joint{i}", "revolute", parent, link,
                  lp0=tuple(pos[k] - parent_pos[k] for k in range(3)), axis=axis, limits=limits)
        j.AddAppliedSchema("PhysicsDriveAPI:angular")
        physx_attr(j, "drive:angular:physics:stiffness", 7.0)  # N m / deg
        physx_attr(j, "drive:angular:physics:damping", 0.7)  # N m s / deg
        physx_attr(j, "drive:angular:physics:maxForce", 87.0)
        physx_attr(j, "drive:angular:physics:targetPosition", 0.0)
        j.AddAppliedSchema("PhysxJointAPI")
        physx_attr(j, "physxJoint:armature", 0.01)
        physx_attr(j, "physxJoint:maxJointVelocity", 150.0)
        joint_state(j, "angular", 0.0, 0.0)
        parent = link
    hand_pos = (pos[0], pos[1], pos[2] - 0.107)
    body(st, "/World/robot/hand", hand_pos, mass=0.7, collider=("cube", 0.08))
    joint(st, "/World/robot/joints/hand_joint", "fixed", parent, "/World/robot/hand", lp0=(0, 0, -0.107))
    for side, y in (("left", 0.02), ("right", -0.02)):
        finger = f"/World/robot/{side}_finger"
        body(st, finger, (hand_pos[0], hand_pos[1] + y, hand_pos[2] - 0.06), mass=0.1, collider=("cube", 0.02))
        if side == "left":
            j = joint(st, f"/World/robot/joints/{side}_finger_joint", "prismatic", "/World/robot/hand", finger,
                      lp0=(0, y, -0.06), axis="Y", limits=(0.0, 0.04))
        else:
            # authored reversed (body0 = finger): opening moves the finger along -Y of the hand, which is +Y as
            # seen from the finger, so the limits keep the same sign; usdart negates them for the tree.
            j = joint(st, f"/World/robot/joints/{side}_finger_joint", "prismatic", finger, "/World/robot/hand",
                      lp1=(0, y, -0.06), axis="Y", limits=(0.0, 0.04))
        j.AddAppliedSchema("PhysicsDriveAPI:linear")
        physx_attr(j, "drive:linear:physics:stiffness", 1000.0)
        physx_attr(j, "drive:linear:physics:damping", 50.0)
        physx_attr(j, "drive:linear:physics:maxForce", 20.0)
    robot = st.GetPrimAtPath("/World/robot")
    UsdPhysics.ArticulationRootAPI.Apply(robot)
    robot.AddAppliedSchema("PhysxArticulationAPI")
    physx_attr(robot, "physxArticulation:solverPositionIterationCount", 32, Sdf.ValueTypeNames.Int)
    physx_attr(robot, "physxArticulation:solverVelocityIterationCount", 1, Sdf.ValueTypeNames.Int)
    return st


RAGDOLL = {  # body: (position, mass, parent, joint kind, axis)
    "pelvis": ((0, 0, 1.0), 8.0, "spine", "spherical"),
    "spine": ((0, 0, 1.15), 6.0, None, None),
    "torso": ((0, 0, 1.35), 12.0, "spine", "spherical"),
    "head": ((0, 0, 1.65), 4.0, "torso", "spherical"),
    "upper_arm_l": ((0.25, 0, 1.45), 2.0, "torso", "spherical"),
    "lower_arm_l": ((0.5, 0, 1.45), 1.5, "upper_arm_l", "revolute"),
    "upper_arm_r": ((-0.25, 0, 1.45), 2.0, "torso", "spherical"),
    "lower_arm_r": ((-0.5, 0, 1.45), 1.5, "upper_arm_r", "revolute"),
    "thigh_l": ((0.1, 0, 0.75), 6.0, "pelvis", "spherical"),
    "shin_l": ((0.1, 0, 0.35), 4.0, "thigh_l", "revolute"),
    "thigh_r": ((-0.1, 0, 0.75), 6.0, "pelvis", "spherical"),
    "shin_r": ((-0.1, 0, 0.35), 4.0, "thigh_r", "revolute"),
}


def ragdoll():
    """Longest paths run hand-to-foot (8 joints); the spine sits in the middle of all of them."""
    st = new_stage(120)
    UsdGeom.Scope.Define(st, "/World/ragdoll")
    for name, (pos, mass, _, _) in RAGDOLL.items():
        body(st, f"/World/ragdoll/{name}", pos, mass=mass, collider=("capsule", 0.06, 0.12, "Z"))
    for name, (pos, _, parent, kind) in RAGDOLL.items():
        if parent is None:
            continue
        ppos = RAGDOLL[parent][0]
        anchor = tuple((pos[k] + ppos[k]) / 2 for k in range(3))  # joint halfway between the two bodies
        joint(st, f"/World/ragdoll/{name}_joint", kind, f"/World/ragdoll/{parent}", f"/World/ragdoll/{name}",
              lp0=tuple(anchor[k] - ppos[k] for k in range(3)), lp1=tuple(anchor[k] - pos[k] for k in range(3)),
              axis="X", limits=(45.0, 30.0) if kind == "spherical" else (0.0, 150.0))
    root_api(st, "/World/ragdoll")
    return st


STAGES = {"two_link_arm.usda": two_link_arm, "floating_body.usda": floating_body, "square_loop.usda": square_loop,
          "gear.usda": gear, "arm_with_gripper.usda": arm_with_gripper, "ragdoll.usda": ragdoll}


def main(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    for name, make in STAGES.items():
        stage = make()  # keep the stage alive while its layer is exported
        stage.GetRootLayer().Export(os.path.join(out_dir, name))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(HERE), "sample_stages"))
