"""Small contact stages (bodies with colliders on a ground, materials, offsets), written with plain usd-core
so that usdart and real PhysX (tests/physx_runner.py) load the same files."""

from __future__ import annotations

import math
from pathlib import Path

from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics, UsdShade

# the text of a metre-kilogram stage, gravity 9.81 down Z, the solver to author in place of SOLVER
SCENE = """#usda 1.0
(
    kilogramsPerUnit = 1
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "World"
{
    def PhysicsScene "scene" (prepend apiSchemas = ["PhysxSceneAPI"])
    {
        vector3f physics:gravityDirection = (0, 0, -1)
        float physics:gravityMagnitude = 9.81
        uniform token physxScene:solverType = "SOLVER"
    }
"""

# the text of a rigid body, its name, mass, inertia, motion lines and position to fill in (free_body)
RIGID_BODY = """
    def Xform "NAME" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI", "PhysxRigidBodyAPI"])
    {
        float physics:mass = MASS
        float3 physics:diagonalInertia = (INERTIA)
        float physxRigidBody:linearDamping = 0
        float physxRigidBody:angularDamping = 0
        float physxRigidBody:maxAngularVelocity = 1e10
        MOTION
        double3 xformOp:translate = (POSITION)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
"""

# a 1 kg, 0.2 m box /World/rider at (RIDER) (x, y, z), bound to /World/grip; MOTION: lines such as its velocity
RIDER = """\
    def Cube "rider" (
        prepend apiSchemas = ["PhysicsCollisionAPI", "PhysicsRigidBodyAPI", "PhysicsMassAPI", "PhysxRigidBodyAPI",
                              "MaterialBindingAPI"]
    )
    {
        rel material:binding:physics = </World/grip>
        float physics:mass = 1
        float physxRigidBody:sleepThreshold = 0
        double size = 0.2
        MOTION
        double3 xformOp:translate = (RIDER)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
"""
# the material /World/grip: static and dynamic friction MU, no restitution
GRIP = """\
    def Material "grip" (prepend apiSchemas = ["PhysicsMaterialAPI"])
    {
        float physics:staticFriction = MU
        float physics:dynamicFriction = MU
        float physics:restitution = 0
    }
"""


def free_body(name="box", position="1, 0, 0", mass=1.0, inertia="0.1, 0.1, 0.1", motion="") -> str:
    """The text of a rigid body /World/<name> (PhysxRigidBodyAPI: no damping, no angular speed cap) at
    `position`; `motion`: lines such as its initial velocity."""
    text = RIGID_BODY.replace("NAME", name).replace("MASS", str(mass)).replace("INERTIA", inertia)
    return text.replace("MOTION", motion).replace("POSITION", position)


def contact_stage(solver="TGS", gravity=(0.0, 0.0, -1.0), magnitude=9.81, bounce_threshold=None):
    """A metre-kilogram stage with a physics scene (PhysX's solver `solver`) and nothing else."""
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, "Z")
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    UsdGeom.Xform.Define(stage, "/World")
    scene = UsdPhysics.Scene.Define(stage, "/World/scene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(*gravity))
    scene.CreateGravityMagnitudeAttr(magnitude)
    prim = scene.GetPrim()
    prim.AddAppliedSchema("PhysxSceneAPI")
    attr(prim, "physxScene:solverType", solver, Sdf.ValueTypeNames.Token)
    if bounce_threshold is not None:
        attr(prim, "physxScene:bounceThreshold", bounce_threshold)
    return stage


def attr(prim, name, value, type_name=Sdf.ValueTypeNames.Float):
    prim.CreateAttribute(name, type_name).Set(value)
    return prim


def material(stage, path, static=0.5, dynamic=0.5, restitution=0.0, friction_combine=None, restitution_combine=None):
    """A physics material; None leaves a value unauthored (a MaterialAPI's unauthored frictions are 0)."""
    prim = UsdShade.Material.Define(stage, path).GetPrim()
    api = UsdPhysics.MaterialAPI.Apply(prim)
    if static is not None:
        api.CreateStaticFrictionAttr(static)
    if dynamic is not None:
        api.CreateDynamicFrictionAttr(dynamic)
    if restitution is not None:
        api.CreateRestitutionAttr(restitution)
    if friction_combine or restitution_combine:
        prim.AddAppliedSchema("PhysxMaterialAPI")
    if friction_combine:
        attr(prim, "physxMaterial:frictionCombineMode", friction_combine, Sdf.ValueTypeNames.Token)
    if restitution_combine:
        attr(prim, "physxMaterial:restitutionCombineMode", restitution_combine, Sdf.ValueTypeNames.Token)
    return prim


def bind(prim, material_path):
    UsdShade.MaterialBindingAPI.Apply(prim)
    rel = prim.CreateRelationship("material:binding:physics")
    rel.SetTargets([Sdf.Path(material_path)])


def collider(
    stage, path, shape="sphere", size=0.1, pos=None, material_path=None, rest_offset=None, contact_offset=None
):
    """A collision shape: sphere (radius), cube (edge), capsule (radius, height 2 radius along X) or plane
    (normal Z); `size` in metres."""
    if shape == "sphere":
        prim = UsdGeom.Sphere.Define(stage, path).GetPrim()
        prim.GetAttribute("radius").Set(size)
    elif shape == "box":
        prim = UsdGeom.Cube.Define(stage, path).GetPrim()
        prim.GetAttribute("size").Set(size)
    elif shape == "capsule":
        capsule = UsdGeom.Capsule.Define(stage, path)
        capsule.CreateRadiusAttr(size)
        capsule.CreateHeightAttr(2 * size)
        capsule.CreateAxisAttr("X")
        prim = capsule.GetPrim()
    else:
        plane = UsdGeom.Plane.Define(stage, path)
        plane.CreateAxisAttr("Z")
        prim = plane.GetPrim()
    if pos is not None:
        UsdGeom.Xformable(prim).AddTranslateOp().Set(Gf.Vec3d(*pos))
    UsdPhysics.CollisionAPI.Apply(prim)
    if material_path:
        bind(prim, material_path)
    if rest_offset is not None or contact_offset is not None:
        prim.AddAppliedSchema("PhysxCollisionAPI")
        if rest_offset is not None:
            attr(prim, "physxCollision:restOffset", rest_offset)
        if contact_offset is not None:
            attr(prim, "physxCollision:contactOffset", contact_offset)
    return prim


def ground(stage, kind="plane", material_path=None, path="/World/ground", **offsets):
    """A static ground whose top is z = 0: an infinite plane, or a 40 m box."""
    if kind == "plane":
        return collider(stage, path, "plane", material_path=material_path, **offsets)
    return collider(stage, path, "box", 40.0, pos=(0, 0, -20), material_path=material_path, **offsets)


def dynamic_body(stage, path, pos=(0, 0, 0), mass=1.0, velocity=None, sleep=True, **physx):
    """A rigid body (mass authored: its inertia comes from its colliders). sleep=False: threshold 0 (PhysX
    sleeps slow bodies, which stops slow slides); other PhysxRigidBodyAPI values by name."""
    xf = UsdGeom.Xform.Define(stage, path)
    xf.AddTranslateOp().Set(Gf.Vec3d(*pos))
    prim = xf.GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim)
    UsdPhysics.MassAPI.Apply(prim).CreateMassAttr(mass)
    if velocity is not None:
        prim.GetAttribute("physics:velocity").Set(Gf.Vec3f(*velocity))
    if not sleep or physx:
        prim.AddAppliedSchema("PhysxRigidBodyAPI")
    if not sleep:
        attr(prim, "physxRigidBody:sleepThreshold", 0.0)
    for name, value in physx.items():
        attr(prim, f"physxRigidBody:{name}", value)
    return prim


def save(stage, path) -> str:
    stage.GetRootLayer().Export(str(path))
    return str(path)


def prism_mesh(stage, path, sides=8, radius=0.1, half_height=0.1, approximation="convexHull", pos=None, phase=0.5):
    """A mesh collider: a regular prism (`sides` sides, circumradius `radius`, axis Z, its first vertex at
    `phase` of a side's angle from +X) with the given physics:approximation; `pos` translates it (metres)."""
    import math

    angles = [2 * math.pi * (i + phase) / sides for i in range(sides)]
    points = [(radius * math.cos(a), radius * math.sin(a), z) for z in (-half_height, half_height) for a in angles]
    faces = [[i, (i + 1) % sides, sides + (i + 1) % sides, sides + i] for i in range(sides)]
    faces += [list(range(sides - 1, -1, -1)), list(range(sides, 2 * sides))]
    return mesh_collider(stage, path, points, faces, approximation, pos)


def mesh_collider(stage, path, points, faces, approximation, pos=None):
    """A Mesh prim of these points (metres) and faces (vertex index lists) with CollisionAPI and
    MeshCollisionAPI's approximation; `pos` translates it."""
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr([Gf.Vec3f(*p) for p in points])
    mesh.CreateFaceVertexCountsAttr([len(f) for f in faces])
    mesh.CreateFaceVertexIndicesAttr([i for f in faces for i in f])
    if pos is not None:
        UsdGeom.Xformable(mesh).AddTranslateOp().Set(Gf.Vec3d(*pos))
    UsdPhysics.CollisionAPI.Apply(mesh.GetPrim())
    UsdPhysics.MeshCollisionAPI.Apply(mesh.GetPrim()).CreateApproximationAttr(approximation)
    return mesh.GetPrim()


def u_channel(stage, path, width=0.6, height=0.3, wall=0.1, floor=0.1, length=0.6, approximation="convexDecomposition"):
    """A closed U-shaped channel mesh (outward faces): a floor `floor` thick and two walls `wall` thick, `width`
    across X and `height` up Z over z = 0, `length` along Y; three boxes, so its exact convex pieces are
    known. Its inside floor is at z = floor, between x = +-(width / 2 - wall)."""
    a, inner = width / 2, width / 2 - wall
    outline = [(-a, 0), (a, 0), (a, height), (inner, height), (inner, floor), (-inner, floor), (-inner, height)]
    outline.append((-a, height))  # counter-clockwise seen from -Y
    n = len(outline)
    points = [(x, y, z) for y in (-length / 2, length / 2) for x, z in outline]
    faces = [[(i + 1) % n, i, n + i, n + (i + 1) % n] for i in range(n)]
    for cap in ([0, 1, 4, 5], [1, 2, 3, 4], [0, 5, 6, 7]):  # each end: three convex quads
        faces += [cap, [n + k for k in reversed(cap)]]
    return mesh_collider(stage, path, points, faces, approximation)


def round_collider(stage, path, kind="cylinder", radius=0.1, height=0.2, axis="Z", material_path=None):
    """A Cylinder or Cone collider (UsdGeom: centred, a cone's apex toward +axis)."""
    geom = (UsdGeom.Cylinder if kind == "cylinder" else UsdGeom.Cone).Define(stage, path)
    geom.CreateRadiusAttr(radius)
    geom.CreateHeightAttr(height)
    geom.CreateAxisAttr(axis)
    UsdPhysics.CollisionAPI.Apply(geom.GetPrim())
    if material_path:
        bind(geom.GetPrim(), material_path)
    return geom.GetPrim()


def grid_mesh(stage, path, size=4.0, cells=4, approximation="none", pos=None):
    """A static triangle-mesh ground: a size x size square at z = 0 made of cells x cells quads, each split into
    two triangles (counter-clockwise seen from above); `pos` translates it (metres)."""
    ticks = [size * (i / cells - 0.5) for i in range(cells + 1)]
    points = [(x, y, 0.0) for y in ticks for x in ticks]
    row = cells + 1
    faces = []
    for j in range(cells):
        for i in range(cells):
            a, b, c, d = j * row + i, j * row + i + 1, (j + 1) * row + i + 1, (j + 1) * row + i
            faces += [[a, b, c], [a, c, d]]
    return mesh_collider(stage, path, points, faces, approximation, pos)


GRIPPER_SAMPLE = Path(__file__).parent.parent / "sample_stages" / "gripper_lift.usda"


def gripper_with_friction(tmp_path, friction, solver="TGS"):
    """The gripper-lift sample with its pads' and box's friction set to `friction` and PhysX's `solver`."""
    stage = Usd.Stage.Open(str(GRIPPER_SAMPLE))
    pads = UsdPhysics.MaterialAPI(stage.GetPrimAtPath("/World/materials/pads"))
    pads.GetStaticFrictionAttr().Set(friction)
    pads.GetDynamicFrictionAttr().Set(friction)
    scene = stage.GetPrimAtPath("/World/physicsScene")
    scene.AddAppliedSchema("PhysxSceneAPI")
    attr(scene, "physxScene:solverType", solver, Sdf.ValueTypeNames.Token)
    return save(stage, Path(tmp_path) / f"gripper_{friction}_{solver}.usda")


ANT = Path(__file__).parent / "data" / "ant_free"


def ant_on_plane(path, ants=1, spacing=3.0, self_collisions=None, sleep_threshold=None) -> Path:
    """The converted MuJoCo ant (data/ant_free/ant_free.usda, as the converter wrote it) above a plane;
    `ants` copies `spacing` m apart in a square grid (one scene holding a batch: they never touch).
    self_collisions, sleep_threshold: authored on each ant's articulation root (PhysxArticulationAPI) when
    given."""
    source = str(ANT / "ant_free.usda")
    if ants == 1:
        stage = Usd.Stage.Open(Usd.Stage.Open(source).Flatten())
    else:
        batch = Usd.Stage.CreateInMemory()
        UsdGeom.SetStageUpAxis(batch, UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(batch, 1.0)
        Sdf.CopySpec(Usd.Stage.Open(source).Flatten(), "/PhysicsScene", batch.GetRootLayer(), "/PhysicsScene")
        side = int(math.ceil(math.sqrt(ants)))
        for k in range(ants):
            env = UsdGeom.Xform.Define(batch, f"/envs/env_{k}")
            env.AddTranslateOp().Set(Gf.Vec3d(spacing * (k % side), spacing * (k // side), 0.0))
            env.GetPrim().GetReferences().AddReference(source)
        stage = Usd.Stage.Open(batch.Flatten())
    for prim in stage.Traverse():
        if prim.HasAPI(UsdPhysics.ArticulationRootAPI) and (self_collisions, sleep_threshold) != (None, None):
            prim.AddAppliedSchema("PhysxArticulationAPI")
            if self_collisions is not None:
                attr(prim, "physxArticulation:enabledSelfCollisions", self_collisions, Sdf.ValueTypeNames.Bool)
            if sleep_threshold is not None:
                attr(prim, "physxArticulation:sleepThreshold", sleep_threshold)
    plane = UsdGeom.Plane.Define(stage, "/ground")
    plane.CreateAxisAttr("Z")
    UsdPhysics.CollisionAPI.Apply(plane.GetPrim())
    stage.GetRootLayer().Export(str(path))
    return Path(path)


def mujoco_ant(dt):
    """MuJoCo's own ant, the MJCF the converted one came from (data/ant_free/ant_free.xml: no
    self-collisions, soft contacts with a 1 cm margin), above a plane; semi-implicit Euler at dt."""
    import mujoco

    spec = mujoco.MjSpec.from_file(str(ANT / "ant_free.xml"))
    spec.option.timestep = dt
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    spec.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], conaffinity=1)
    return spec.compile()
