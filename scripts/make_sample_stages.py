"""Write the bundled sample stages (sample_stages/*.usda) with plain usd-core.

Every stage has metersPerUnit = 1, kilogramsPerUnit = 1, upAxis = Z, a /World Xform default prim and a
PhysicsScene /World/physicsScene (gravity (0, 0, -1) * 9.81, PhysxSceneAPI with physxScene:timeStepsPerSecond
60 for the seed examples, 120 for the arm and the ragdoll). Angles are in degrees, as USD writes them.

- two_link_arm.usda: the seed's "Create a Fixed-Base Articulation": rigidBody0 fixed to the world by
  /World/fixedJoint (body0 only, carries PhysicsArticulationRootAPI), rigidBody1 hinged to it about Y by
  /World/revoluteJoint 1 m away; PhysicsJointStateAPI:angular starts the hinge at 45 deg, and rigidBody1 is
  authored at the pose that joint angle implies. Fixed base, 1 DOF.
- floating_body.usda: the seed's "Create a Floating-Base Articulation": one body with the root API on the body
  itself, initial velocity (0, 10, 0) m/s and angular velocity (0, 0, 10) deg/s, mass 2, no collider.
  Floating, 0 joint DOFs.
- square_loop.usda: the seed's "Exclude Joints from Articulations", made movable: four bodies on the corners
  of a 1 m square joined by revolute joints about Z; the fourth (/World/loopJoint) closes the loop and has
  physics:excludeFromArticulation = true (a four-bar linkage). No world joint, root API on rigidBody0.
  Floating, 3 DOFs, one loop joint.
- gear.usda: the seed's "Articulation Mimic Joints": two sphere bodies on revolute joints about Z from a root
  body fixed to the world; revoluteJoint0 carries PhysxMimicJointAPI:rotZ (reference revoluteJoint1, gearing
  5, offset 0: q0 + 5 q1 = 0) and starts at 800 deg/s. The spheres have MassAPI density 1000 and no mass,
  so their mass comes from the collider. Fixed base, 2 DOFs, one mimic coupling.
- arm_with_gripper.usda: a Franka-like 7-DOF arm with a two-finger gripper. The root API (plus
  PhysxArticulationAPI) sits on the ancestor Xform /World/robot, joints live in a Scope, links are flat
  siblings. Revolute joints with angular drives, PhysxJointAPI and joint state (a "ready" pose), a fixed
  hand joint, two prismatic finger joints with linear drives, the right one authored with body0/body1
  reversed. Body poses are composed from the joint frames at the authored joint state. Fixed base, 9 DOFs.
- ragdoll.usda: a floating ragdoll under the Scope /World/ragdoll (root API on the Scope): spherical joints
  with cone limits for the spine, neck, shoulders and hips, revolute elbows and knees, no world joint. The
  root is chosen by minimal eccentricity, which is unique: the spine. 12 links, 25 DOFs.

Geometry (bodies, colliders, joint frames) is written with plain usd-core; every physics schema value (scene
rate, limits, drives, joint state, PhysX joint properties, mimic joint, excluded joint, articulation root and
settings) goes through usdart.authoring, in SI units and radians: the tables below keep the seeds' and the
Panda's numbers in degrees and convert them where they are authored. usdart.authoring applies PhysX API
schemas by token and creates their attributes by name with the schema's types, as Isaac-authored files read,
so the files are the same with or without a PhysX schema plugin. The output is deterministic: running the
script twice gives byte-identical files.

Usage: python scripts/make_sample_stages.py [OUTPUT_FOLDER]    (default: sample_stages/ in the repository)
"""

from __future__ import annotations

import math
import os
import sys

from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

from usdart import authoring

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "sample_stages")

# ----------------------------------------------------------------------------------------------------------
# Poses: (position Gf.Vec3d, rotation Gf.Quatd); a pose maps its local coordinates to its parent's.
# ----------------------------------------------------------------------------------------------------------
IDENTITY = Gf.Quatd(1.0, 0.0, 0.0, 0.0)
AXES = {"X": Gf.Vec3d(1, 0, 0), "Y": Gf.Vec3d(0, 1, 0), "Z": Gf.Vec3d(0, 0, 1)}


def quat(axis, degrees: float) -> Gf.Quatd:
    """Rotation by `degrees` about `axis` ("X"/"Y"/"Z" or a vector)."""
    vec = AXES[axis] if isinstance(axis, str) else Gf.Vec3d(*axis)
    return Gf.Rotation(vec, degrees).GetQuat()


def pose(pos=(0.0, 0.0, 0.0), rot: Gf.Quatd = IDENTITY):
    return Gf.Vec3d(*pos), Gf.Quatd(rot)


def compose(a, b):
    """a * b: first b's local transform, then a."""
    return a[0] + a[1].Transform(b[0]), (a[1] * b[1]).GetNormalized()


def inverse(a):
    inv = a[1].GetInverse()
    return -inv.Transform(a[0]), inv


def joint_motion(kind: str, axis: str, value: float):
    """Pose of joint frame 1 in joint frame 0 at joint coordinate `value` (deg or m) along/about `axis`."""
    if kind == "revolute":
        return pose(rot=quat(axis, value))
    if kind == "prismatic":
        return pose(tuple(value * c for c in AXES[axis]))
    return pose()


def child_pose(parent, frame_parent, frame_child, kind="fixed", axis="X", value=0.0, reversed_=False):
    """World pose of a body placed by a joint from `parent`, with the joint at coordinate `value`.

    A joint satisfies  pose(body0) * frame0 * motion(value) = pose(body1) * frame1. Normally body0 is the
    parent; with reversed_ = True the child is body0 (frame_child = frame0, frame_parent = frame1).
    """
    motion = joint_motion(kind, axis, value)
    if not reversed_:
        return compose(compose(compose(parent, frame_parent), motion), inverse(frame_child))
    return compose(compose(compose(parent, frame_parent), inverse(motion)), inverse(frame_child))


def clean(x: float) -> float:
    """Round away floating-point noise (1e-17 and the like) so the files read well; 1e-12 m is far below
    single precision, in which USD stores the joint frames anyway."""
    r = round(x, 12)
    return 0.0 if r == 0 else r


def vec3d(v) -> Gf.Vec3d:
    return Gf.Vec3d(*(clean(c) for c in v))


def vec3f(v) -> Gf.Vec3f:
    return Gf.Vec3f(*(clean(c) for c in v))


def quatf(q: Gf.Quatd) -> Gf.Quatf:
    q = q.GetNormalized()
    if q.GetReal() < 0:  # one canonical sign, so the files are stable
        q = -q
    im = q.GetImaginary()
    return Gf.Quatf(clean(q.GetReal()), clean(im[0]), clean(im[1]), clean(im[2]))


# ----------------------------------------------------------------------------------------------------------
# Authoring helpers
# ----------------------------------------------------------------------------------------------------------
def new_stage(steps_per_second: int) -> Usd.Stage:
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    world = UsdGeom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(world.GetPrim())
    scene = UsdPhysics.Scene.Define(stage, "/World/physicsScene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0.0, 0.0, -1.0))
    scene.CreateGravityMagnitudeAttr(9.81)
    authoring.set_scene_settings(scene, time_steps_per_second=steps_per_second)
    return stage


def capsule_between(a, b):
    """(centre, orientation, height) of a Z-axis capsule whose segment runs from a to b (body frame)."""
    a, b = Gf.Vec3d(*a), Gf.Vec3d(*b)
    d = b - a
    rot = Gf.Rotation(Gf.Vec3d(0, 0, 1), d.GetNormalized()).GetQuat() if d.GetLength() > 0 else IDENTITY
    return (a + b) * 0.5, rot, d.GetLength()


def add_collider(stage, body_path, collider):
    """collider: ("cube", size) | ("sphere", radius) | ("capsule", radius, height, axis)
    | ("segment", radius, a, b): a Z capsule from point a to point b of the body frame."""
    kind, path = collider[0], body_path + "/collider"
    if kind == "cube":
        geom = UsdGeom.Cube.Define(stage, path)
        geom.CreateSizeAttr(collider[1])
    elif kind == "sphere":
        geom = UsdGeom.Sphere.Define(stage, path)
        geom.CreateRadiusAttr(collider[1])
    elif kind == "capsule":
        geom = UsdGeom.Capsule.Define(stage, path)
        geom.CreateRadiusAttr(collider[1])
        geom.CreateHeightAttr(collider[2])
        geom.CreateAxisAttr(collider[3])
    elif kind == "segment":
        centre, rot, height = capsule_between(collider[2], collider[3])
        geom = UsdGeom.Capsule.Define(stage, path)
        geom.CreateRadiusAttr(collider[1])
        geom.CreateHeightAttr(clean(height))
        geom.CreateAxisAttr(UsdGeom.Tokens.z)
        geom.AddTranslateOp().Set(vec3d(centre))
        geom.AddOrientOp().Set(quatf(rot))
    else:
        raise ValueError(kind)
    UsdPhysics.CollisionAPI.Apply(geom.GetPrim())


def body(stage, path, world_pose, mass=None, density=None, collider=None):
    """A rigid body Xform at `world_pose` (its parent prim must have the identity transform)."""
    xf = UsdGeom.Xform.Define(stage, path)
    xf.AddTranslateOp().Set(vec3d(world_pose[0]))
    xf.AddOrientOp().Set(quatf(world_pose[1]))
    prim = xf.GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim).CreateRigidBodyEnabledAttr(True)
    if mass is not None or density is not None:
        mass_api = UsdPhysics.MassAPI.Apply(prim)
        if mass is not None:
            mass_api.CreateMassAttr(mass)
        if density is not None:
            mass_api.CreateDensityAttr(density)
    if collider:
        add_collider(stage, path, collider)
    return prim


JOINT_TYPES = {
    "fixed": UsdPhysics.FixedJoint,
    "revolute": UsdPhysics.RevoluteJoint,
    "prismatic": UsdPhysics.PrismaticJoint,
    "spherical": UsdPhysics.SphericalJoint,
}


def joint(stage, path, kind, body0, body1, frame0=None, frame1=None, axis=None, limits=None):
    """A joint; frame0/frame1 are poses in body0/body1 (world if that body is empty); limits are
    (lower, upper) for revolute/prismatic joints and (coneAngle0, coneAngle1) for spherical ones (deg or m)."""
    frame0, frame1 = frame0 or pose(), frame1 or pose()
    j = JOINT_TYPES[kind].Define(stage, path)
    if body0:
        j.CreateBody0Rel().SetTargets([Sdf.Path(body0)])
    if body1:
        j.CreateBody1Rel().SetTargets([Sdf.Path(body1)])
    j.CreateLocalPos0Attr(vec3f(frame0[0]))
    j.CreateLocalRot0Attr(quatf(frame0[1]))
    j.CreateLocalPos1Attr(vec3f(frame1[0]))
    j.CreateLocalRot1Attr(quatf(frame1[1]))
    if axis:
        j.CreateAxisAttr(axis)
    if limits and kind in ("revolute", "prismatic"):  # deg or m in the tables; authoring takes rad or m
        to_si = math.radians if kind == "revolute" else float
        authoring.set_joint_limits(j, to_si(limits[0]), to_si(limits[1]))
    if limits and kind == "spherical":
        j.CreateConeAngle0LimitAttr(float(limits[0]))
        j.CreateConeAngle1LimitAttr(float(limits[1]))
    return j.GetPrim()


# ----------------------------------------------------------------------------------------------------------
# 1. Fixed-base two-link arm (seed "Create a Fixed-Base Articulation" + its JointStateAPI snippet)
# ----------------------------------------------------------------------------------------------------------
def two_link_arm():
    st = new_stage(60)
    base = pose()
    body(st, "/World/rigidBody0", base, mass=2.0, collider=("cube", 0.2))
    # The seed's localPos0 (0, 10, 0) in metres: the hinge is 1 m along +Y of rigidBody0 and is the origin of
    # rigidBody1 (localPos1 = 0). The authored joint state is 45 deg about Y, so rigidBody1 sits at the hinge
    # turned by 45 deg about Y.
    hinge0, hinge1 = pose((0.0, 1.0, 0.0)), pose()
    body(
        st,
        "/World/rigidBody1",
        child_pose(base, hinge0, hinge1, "revolute", "Y", 45.0),
        mass=1.0,
        collider=("cube", 0.2),
    )
    hinge = joint(
        st, "/World/revoluteJoint", "revolute", "/World/rigidBody0", "/World/rigidBody1", hinge0, hinge1, axis="Y"
    )
    authoring.set_joint_state(hinge, math.radians(45.0), 0.0)
    # body0 only: the world is on the other side. Its frames are ignored for the root joint.
    joint(st, "/World/fixedJoint", "fixed", "/World/rigidBody0", None)
    authoring.set_articulation_root(st.GetPrimAtPath("/World/fixedJoint"))
    return st


# ----------------------------------------------------------------------------------------------------------
# 2. Floating single body (seed "Create a Floating-Base Articulation")
# ----------------------------------------------------------------------------------------------------------
def floating_body():
    st = new_stage(60)
    prim = body(st, "/World/rigidBody", pose(), mass=2.0)  # no collider, as in the seed
    authoring.set_rigid_body_velocity(prim, linear=(0.0, 10.0, 0.0), angular=(0.0, 0.0, math.radians(10.0)))
    authoring.set_articulation_root(prim)
    return st


# ----------------------------------------------------------------------------------------------------------
# 3. Four-bar loop (seed "Exclude Joints from Articulations"; revolute instead of fixed, no world joint)
# ----------------------------------------------------------------------------------------------------------
def square_loop():
    st = new_stage(60)
    corners = [(0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0, 1.0, 0.0), (1.0, 0.0, 0.0)]
    for i, corner in enumerate(corners):
        body(st, f"/World/rigidBody{i}", pose(corner), mass=2.0, collider=("cube", 0.1))
    for i, (a, b) in enumerate([(0, 1), (1, 2), (2, 3), (3, 0)]):
        # body0's frame sits on the next corner (body1's origin), so both frames coincide
        offset = tuple(corners[b][k] - corners[a][k] for k in range(3))
        path = f"/World/revoluteJoint{i}" if i < 3 else "/World/loopJoint"
        j = joint(st, path, "revolute", f"/World/rigidBody{a}", f"/World/rigidBody{b}", pose(offset), pose(), axis="Z")
        if i == 3:  # closes the loop: simulated as a plain constraint outside the articulation tree
            authoring.exclude_from_articulation(j)
    authoring.set_articulation_root(st.GetPrimAtPath("/World/rigidBody0"))  # floating base rooted at rigidBody0
    return st


# ----------------------------------------------------------------------------------------------------------
# 4. Mimic-joint gear (seed "Articulation Mimic Joints"; seed radii/offsets 5 -> 0.05 m / 0.5 m)
# ----------------------------------------------------------------------------------------------------------
def gear():
    st = new_stage(60)
    root = pose()
    body(st, "/World/rootBody", root, mass=1.0, collider=("cube", 0.2))
    for i, x in enumerate((-0.5, 0.5)):
        frame0 = pose((x, 0.0, 0.0))
        # MassAPI with density only: the mass comes from the sphere (1000 * 4/3 pi 0.05^3 = 0.5236 kg)
        body(
            st,
            f"/World/rigidBody{i}",
            child_pose(root, frame0, pose(), "revolute", "Z", 0.0),
            density=1000.0,
            collider=("sphere", 0.05),
        )
        joint(
            st,
            f"/World/revoluteJoint{i}",
            "revolute",
            "/World/rootBody",
            f"/World/rigidBody{i}",
            frame0,
            pose(),
            axis="Z",
            limits=(-9000.0, 9000.0),
        )  # mimic joints need limits; these are never reached
    joint(st, "/World/rootBodyFixedJoint", "fixed", "/World/rootBody", None)
    authoring.set_articulation_root(st.GetPrimAtPath("/World/rootBodyFixedJoint"))
    j0, j1 = st.GetPrimAtPath("/World/revoluteJoint0"), st.GetPrimAtPath("/World/revoluteJoint1")
    authoring.set_joint_state(j0, 0.0, math.radians(800.0))  # 800 deg/s
    # q0 + gearing * q1 + offset = 0 with gearing 5: joint1 turns at -1/5 of joint0's rate
    # (PhysxMimicJointAPI:rotZ, referenceJointAxis rotZ: both joints turn about Z)
    authoring.set_mimic_joint(j0, j1, gearing=5.0, offset=0.0)
    return st


# ----------------------------------------------------------------------------------------------------------
# 5. 7-DOF arm with a two-finger gripper
# ----------------------------------------------------------------------------------------------------------
# Franka Panda-like kinematics. All link frames are parallel to the world at zero joint angles (the arm stands
# straight up). Each row: joint name, child link, offset of the joint in the parent link frame, joint frame
# rotation (same in both links), axis, limits (deg), "ready" joint state (deg), child mass (kg), collider.
# Joints 4 and 6 turn about -Y like the Panda's (axis token "Y" in a joint frame turned 180 deg about Z), so the
# Panda's limits (-176..-4, -1..215) and its ready pose (0, -45, 0, -135, 0, 90, 45) apply unchanged.
FLIP_Y = quat("Z", 180.0)
ARM = [
    (
        "joint1",
        "link1",
        (0.0, 0.0, 0.333),
        IDENTITY,
        "Z",
        (-166, 166),
        0.0,
        4.0,
        ("segment", 0.06, (0, 0, -0.12), (0, 0, 0)),
    ),
    (
        "joint2",
        "link2",
        (0.0, 0.0, 0.0),
        IDENTITY,
        "Y",
        (-101, 101),
        -45.0,
        3.0,
        ("segment", 0.06, (0, 0, 0.05), (0, 0, 0.25)),
    ),
    (
        "joint3",
        "link3",
        (0.0, 0.0, 0.316),
        IDENTITY,
        "Z",
        (-166, 166),
        0.0,
        3.0,
        ("segment", 0.055, (0, 0, 0), (0.0825, 0, 0)),
    ),
    (
        "joint4",
        "link4",
        (0.0825, 0.0, 0.0),
        FLIP_Y,
        "Y",
        (-176, -4),
        -135.0,
        2.5,
        ("segment", 0.055, (0, 0, 0), (-0.0825, 0, 0.384)),
    ),
    (
        "joint5",
        "link5",
        (-0.0825, 0.0, 0.384),
        IDENTITY,
        "Z",
        (-166, 166),
        0.0,
        2.5,
        ("segment", 0.05, (0, 0, -0.08), (0, 0, 0)),
    ),
    (
        "joint6",
        "link6",
        (0.0, 0.0, 0.0),
        FLIP_Y,
        "Y",
        (-1, 215),
        90.0,
        2.0,
        ("segment", 0.05, (0, 0, 0), (0.088, 0, 0)),
    ),
    (
        "joint7",
        "link7",
        (0.088, 0.0, 0.0),
        IDENTITY,
        "Z",
        (-166, 166),
        45.0,
        1.5,
        ("segment", 0.045, (0, 0, 0), (0, 0, -0.107)),
    ),
]
HAND_OFFSET = (0.0, 0.0, -0.107)  # flange, along link7's -Z (the hand points down at zero angles)
FINGER_OFFSET = (0.0, 0.0, -0.0584)  # finger joint origin in the hand frame, between the closed fingers
FINGER_OPENING = 0.02  # m per finger, authored joint state and drive target of both finger joints


def arm_with_gripper():
    st = new_stage(120)
    robot = UsdGeom.Xform.Define(st, "/World/robot").GetPrim()  # no xformOps: identity
    UsdGeom.Scope.Define(st, "/World/robot/joints")
    J = "/World/robot/joints/"
    R = "/World/robot/"

    base = pose()
    body(st, R + "base", base, mass=5.0, collider=("segment", 0.07, (0, 0, 0.06), (0, 0, 0.2)))
    joint(st, J + "base_joint", "fixed", None, R + "base", base, pose())  # body0 empty: the world

    parent, parent_pose = R + "base", base
    for name, link, offset, frame_rot, axis, limits, q, mass, collider in ARM:
        frame0, frame1 = pose(offset, frame_rot), pose((0, 0, 0), frame_rot)
        link_pose = child_pose(parent_pose, frame0, frame1, "revolute", axis, q)
        body(st, R + link, link_pose, mass=mass, collider=collider)
        j = joint(st, J + name, "revolute", parent, R + link, frame0, frame1, axis=axis, limits=limits)
        # 7 N m/deg, 0.7 N m s/deg, 87 N m; armature 0.01 kg m^2, 150 deg/s
        authoring.set_drive(
            j, stiffness=math.degrees(7.0), damping=math.degrees(0.7), max_force=87.0, target_position=math.radians(q)
        )
        authoring.set_joint_properties(j, armature=0.01, max_velocity=math.radians(150.0))
        authoring.set_joint_state(j, math.radians(q), 0.0)
        parent, parent_pose = R + link, link_pose

    hand_frame = pose(HAND_OFFSET)
    hand_pose = child_pose(parent_pose, hand_frame, pose())
    body(st, R + "hand", hand_pose, mass=0.7, collider=("capsule", 0.03, 0.14, "Y"))
    joint(st, J + "hand_joint", "fixed", parent, R + "hand", hand_frame, pose())

    finger_collider = ("segment", 0.01, (0, 0, 0), (0, 0, -0.04))
    slide = pose(FINGER_OFFSET)  # joint frame on the hand side
    # Left finger: body0 = hand, body1 = finger, axis Y: the coordinate is the finger's travel along the
    # hand's +Y, so opening is positive: limits 0 .. 0.04 m.
    left_pose = child_pose(hand_pose, slide, pose(), "prismatic", "Y", FINGER_OPENING)
    body(st, R + "left_finger", left_pose, mass=0.1, collider=finger_collider)
    left = joint(
        st,
        J + "left_finger_joint",
        "prismatic",
        R + "hand",
        R + "left_finger",
        slide,
        pose(),
        axis="Y",
        limits=(0.0, 0.04),
    )
    # Right finger, authored REVERSED: body0 = right_finger, body1 = hand (frame0 on the finger, frame1 on
    # the hand, same orientation, axis Y). The joint coordinate d is the travel of body1 relative to body0,
    # i.e. of the hand relative to the finger, along +Y: swapping body0/body1 negates the coordinate,
    # d = -q, where q is the finger's travel along the hand's +Y. The right finger opens towards the hand's
    # -Y (q from 0 down to -0.04), so d runs from 0 up to 0.04: the two negations cancel and the authored
    # limits (0, 0.04), joint state and drive target are the same numbers as the left finger's, with opening
    # positive for both. An importer that turns the joint round to the tree (hand -> finger, as PhysX and
    # usdart do) negates and swaps them: q in [-0.04, 0], state -0.02, target -0.02.
    right_pose = child_pose(hand_pose, slide, pose(), "prismatic", "Y", FINGER_OPENING, reversed_=True)
    body(st, R + "right_finger", right_pose, mass=0.1, collider=finger_collider)
    right = joint(
        st,
        J + "right_finger_joint",
        "prismatic",
        R + "right_finger",
        R + "hand",
        pose(),
        slide,
        axis="Y",
        limits=(0.0, 0.04),
    )
    for j in (left, right):
        authoring.set_drive(j, stiffness=1000.0, damping=50.0, max_force=70.0, target_position=FINGER_OPENING)
        authoring.set_joint_state(j, FINGER_OPENING, 0.0)

    # Root API on the ancestor: the topology decides the root; base_joint attaches base to the world.
    authoring.set_articulation_root(robot)
    authoring.set_articulation_settings(robot, solver_position_iterations=32, solver_velocity_iterations=1)
    return st


# ----------------------------------------------------------------------------------------------------------
# 6. Ragdoll
# ----------------------------------------------------------------------------------------------------------
# T-pose, facing -Y, so its left side is +X; pelvis at z = 1 m. Bodies are axis-aligned with their origin at
# the centre of their capsule: name -> (position, mass, capsule (radius, height, axis)).
RAGDOLL_BODIES = {
    "pelvis": ((0.0, 0.0, 1.0), 8.0, (0.09, 0.14, "X")),
    "spine": ((0.0, 0.0, 1.17), 6.0, (0.08, 0.10, "X")),
    "torso": ((0.0, 0.0, 1.38), 12.0, (0.11, 0.16, "X")),
    "head": ((0.0, 0.0, 1.70), 4.0, (0.09, 0.06, "Z")),
    "upper_arm_l": ((0.34, 0.0, 1.45), 2.0, (0.045, 0.19, "X")),
    "lower_arm_l": ((0.61, 0.0, 1.45), 1.5, (0.04, 0.18, "X")),
    "upper_arm_r": ((-0.34, 0.0, 1.45), 2.0, (0.045, 0.19, "X")),
    "lower_arm_r": ((-0.61, 0.0, 1.45), 1.5, (0.04, 0.18, "X")),
    "thigh_l": ((0.1, 0.0, 0.71), 6.0, (0.06, 0.30, "Z")),
    "shin_l": ((0.1, 0.0, 0.29), 4.0, (0.05, 0.32, "Z")),
    "thigh_r": ((-0.1, 0.0, 0.71), 6.0, (0.06, 0.30, "Z")),
    "shin_r": ((-0.1, 0.0, 0.29), 4.0, (0.05, 0.32, "Z")),
}
# Joints are authored outwards from the pelvis (body0 = the body nearer the pelvis): name -> (kind, body0,
# body1, anchor (world), joint frame rotation, axis, limits). Spherical joints: axis X turned along the child
# bone, so the cone (coneAngle0Limit towards joint Y, coneAngle1Limit towards joint Z, deg) opens around it.
# Revolute elbows bend forward about Z (right: +Z, left: -Z since the forearms point opposite ways), knees
# bend backward about X.
UP, DOWN, LEFT, RIGHT = quat("Y", -90.0), quat("Y", 90.0), IDENTITY, quat("Z", 180.0)  # joint X -> +Z, -Z, +X, -X
RAGDOLL_JOINTS = {
    "lower_spine": ("spherical", "pelvis", "spine", (0.0, 0.0, 1.09), UP, "X", (30.0, 20.0)),
    "upper_spine": ("spherical", "spine", "torso", (0.0, 0.0, 1.26), UP, "X", (30.0, 20.0)),
    "neck": ("spherical", "torso", "head", (0.0, 0.0, 1.56), UP, "X", (45.0, 30.0)),
    "shoulder_l": ("spherical", "torso", "upper_arm_l", (0.2, 0.0, 1.45), LEFT, "X", (80.0, 60.0)),
    "elbow_l": ("revolute", "upper_arm_l", "lower_arm_l", (0.48, 0.0, 1.45), IDENTITY, "Z", (-150.0, 0.0)),
    "shoulder_r": ("spherical", "torso", "upper_arm_r", (-0.2, 0.0, 1.45), RIGHT, "X", (80.0, 60.0)),
    "elbow_r": ("revolute", "upper_arm_r", "lower_arm_r", (-0.48, 0.0, 1.45), IDENTITY, "Z", (0.0, 150.0)),
    "hip_l": ("spherical", "pelvis", "thigh_l", (0.1, 0.0, 0.92), DOWN, "X", (60.0, 40.0)),
    "knee_l": ("revolute", "thigh_l", "shin_l", (0.1, 0.0, 0.50), IDENTITY, "X", (0.0, 150.0)),
    "hip_r": ("spherical", "pelvis", "thigh_r", (-0.1, 0.0, 0.92), DOWN, "X", (60.0, 40.0)),
    "knee_r": ("revolute", "thigh_r", "shin_r", (-0.1, 0.0, 0.50), IDENTITY, "X", (0.0, 150.0)),
}


def ragdoll():
    """Floating ragdoll; the root API is on the Scope, so the root link comes from the topology.

    Expected root: the spine. With no world joint PhysX roots a floating articulation at the link of minimal
    eccentricity (largest joint count to any other link). The longest paths run hand to foot: lower_arm -
    upper_arm - torso - spine - pelvis - thigh - shin (6 joints). The spine is 3 joints from every extremity
    (lower arms, shins) and at most 3 from anything, so its eccentricity is 3; the pelvis and the torso have 4
    (pelvis -> lower arm, torso -> shin), every other link more. Without the spine, pelvis and torso would
    tie at 3 and the root would depend on the tie-break. The joints are authored from the pelvis outwards,
    so lower_spine (body0 = pelvis, body1 = spine) runs against the tree and is turned round on import.
    """
    st = new_stage(120)
    UsdGeom.Scope.Define(st, "/World/ragdoll")
    D = "/World/ragdoll/"
    for name, (pos, mass, (radius, height, axis)) in RAGDOLL_BODIES.items():
        body(st, D + name, pose(pos), mass=mass, collider=("capsule", radius, height, axis))
    for name, (kind, b0, b1, anchor, rot, axis, limits) in RAGDOLL_JOINTS.items():
        p0, p1 = RAGDOLL_BODIES[b0][0], RAGDOLL_BODIES[b1][0]
        frame0 = pose(tuple(anchor[k] - p0[k] for k in range(3)), rot)
        frame1 = pose(tuple(anchor[k] - p1[k] for k in range(3)), rot)
        joint(st, D + name, kind, D + b0, D + b1, frame0, frame1, axis=axis, limits=limits)
    authoring.set_articulation_root(st.GetPrimAtPath("/World/ragdoll"))
    return st


def contacts():
    """A ground plane (its material 0.6 / 0.5) and bodies that land on it: a stack of three 0.2 m boxes placed
    touching (at rest with their centres at 0.1, 0.3 and 0.5 m), a box dropped from 0.5 m tilted 30 degrees,
    a rubber ball (restitution 0.8, combined by "max": it bounces) and a plain ball dropped from 1 m, and a
    capsule slid along the ground at 2 m/s until friction stops it."""
    st = new_stage(60)
    ground = UsdGeom.Plane.Define(st, "/World/ground")
    ground.CreateAxisAttr(UsdGeom.Tokens.z)
    UsdPhysics.CollisionAPI.Apply(ground.GetPrim())
    floor = authoring.add_physics_material(st, "/World/materials/floor", 0.6, 0.5, 0.0)
    rubber = authoring.add_physics_material(st, "/World/materials/rubber", 0.8, 0.7, 0.8, restitution_combine="max")
    authoring.bind_physics_material(ground.GetPrim(), floor)
    for k in range(3):
        body(st, f"/World/stack_{k}", pose((0.0, 0.0, 0.1 + 0.2 * k)), mass=1.0, collider=("cube", 0.2))
    body(st, "/World/dropped_box", pose((0.6, 0.0, 0.5), quat("X", 30.0)), mass=1.0, collider=("cube", 0.2))
    ball = body(st, "/World/rubber_ball", pose((-0.6, 0.0, 1.0)), mass=0.2, collider=("sphere", 0.1))
    authoring.bind_physics_material(st.GetPrimAtPath("/World/rubber_ball/collider"), rubber)
    body(st, "/World/ball", pose((-0.6, 0.6, 1.0)), mass=1.0, collider=("sphere", 0.1))
    capsule = body(st, "/World/capsule", pose((0.0, -0.8, 0.1)), mass=0.5, collider=("capsule", 0.1, 0.3, "X"))
    authoring.set_rigid_body_velocity(capsule, linear=(2.0, 0.0, 0.0))
    del ball
    return st


# ----------------------------------------------------------------------------------------------------------
# 8. A gripper lifting a box
# ----------------------------------------------------------------------------------------------------------
GRIP_BOX = 0.06  # m: the box's edge
GRIP_FRICTION = 1.0  # the pads' and the box's material


def gripper_lift(friction: float = GRIP_FRICTION):
    """A two-finger gripper on a vertical slide lifts a 0.2 kg box off the ground. The articulation: a base
    fixed to the world, a carriage on a prismatic lift joint (a velocity drive raising it at 0.1 m/s), two
    fingers on prismatic joints across Y, the right one a mimic of the left (q_right + q_left = 0) so that
    they close symmetrically. The left finger's drive closes it with at most 20 N; the pads start 1 mm off
    the box. Friction `friction` on the pads and the box: at 1 the pads hold the box (2 x 20 N x 1 against
    its 1.96 N weight) and it rises with the carriage; below m g / 2F (0.049) it would stay."""
    st = new_stage(120)
    ground = UsdGeom.Plane.Define(st, "/World/ground")
    ground.CreateAxisAttr(UsdGeom.Tokens.z)
    UsdPhysics.CollisionAPI.Apply(ground.GetPrim())
    pads = authoring.add_physics_material(st, "/World/materials/pads", friction, friction, 0.0)
    half = GRIP_BOX / 2
    box = body(st, "/World/box", pose((0.0, 0.0, half)), mass=0.2, collider=("cube", GRIP_BOX))
    authoring.bind_physics_material(st.GetPrimAtPath("/World/box/collider"), pads)
    del box

    gripper = UsdGeom.Xform.Define(st, "/World/gripper").GetPrim()  # no xformOps: identity
    UsdGeom.Scope.Define(st, "/World/gripper/joints")
    J, G = "/World/gripper/joints/", "/World/gripper/"
    height = half + 0.005  # the pads' centre, 5 mm above the box's
    for name, mass in (("base", 1.0), ("carriage", 0.5)):  # no colliders: their inertia authored
        prim = body(st, G + name, pose((0.0, 0.0, height)), mass=mass)
        mass_api = UsdPhysics.MassAPI(prim)
        mass_api.CreateDiagonalInertiaAttr(Gf.Vec3f(*(0.002 * mass,) * 3))
        mass_api.CreatePrincipalAxesAttr(Gf.Quatf(1.0, 0.0, 0.0, 0.0))
    joint(st, J + "base_joint", "fixed", None, G + "base", pose((0.0, 0.0, height)), pose())
    lift = joint(st, J + "lift", "prismatic", G + "base", G + "carriage", axis="Z", limits=(0.0, 0.5))
    authoring.set_drive(lift, stiffness=0.0, damping=2000.0, max_force=200.0, target_velocity=0.1)
    opening = half + 0.001
    fingers = {}
    for side, sign in (("left", 1.0), ("right", -1.0)):
        # the finger's origin is its pad's centre, the pad 1 cm thick: the inner face at |y| = q
        frame = pose((0.0, sign * 0.005, 0.0))
        link = G + f"{side}_finger"
        body(st, link, pose((0.0, sign * (opening + 0.005), height)), mass=0.05)
        pad = UsdGeom.Cube.Define(st, link + "/collider")
        pad.CreateSizeAttr(1.0)
        pad.AddScaleOp().Set(Gf.Vec3f(0.03, 0.01, 0.04))
        UsdPhysics.CollisionAPI.Apply(pad.GetPrim())
        authoring.bind_physics_material(pad.GetPrim(), pads)
        limits = (0.0, 0.05) if sign > 0 else (-0.05, 0.0)
        fingers[side] = joint(st, J + f"{side}_finger_joint", "prismatic", G + "carriage", link, frame, pose(),
                              axis="Y", limits=limits)  # fmt: skip
        authoring.set_joint_state(fingers[side], sign * opening, 0.0)
    authoring.set_drive(fingers["left"], stiffness=2000.0, damping=20.0, max_force=20.0, target_position=0.0)
    authoring.set_mimic_joint(fingers["right"], fingers["left"], gearing=1.0, offset=0.0)
    authoring.set_articulation_root(gripper)
    return st


STAGES = {
    "two_link_arm.usda": two_link_arm,
    "floating_body.usda": floating_body,
    "square_loop.usda": square_loop,
    "gear.usda": gear,
    "arm_with_gripper.usda": arm_with_gripper,
    "ragdoll.usda": ragdoll,
    "contacts.usda": contacts,
    "gripper_lift.usda": gripper_lift,
}


def main(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    for name, make in STAGES.items():
        stage = make()  # keep the stage alive while its layer is exported
        stage.GetRootLayer().Export(os.path.join(out_dir, name))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT)
