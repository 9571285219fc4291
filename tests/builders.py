"""Small in-memory stages for import tests, written with plain usd-core."""

from __future__ import annotations

from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics


def new_stage(mpu=1.0, kpu=1.0, up="Z", scene=True):
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, up)
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    UsdPhysics.SetStageKilogramsPerUnit(stage, kpu)
    UsdGeom.Xform.Define(stage, "/World")
    if scene:
        UsdPhysics.Scene.Define(stage, "/World/scene")
    return stage


def body(stage, path, pos=(0, 0, 0), mass=1.0, inertia=(0.1, 0.1, 0.1), rot=None):
    xf = UsdGeom.Xform.Define(stage, path)
    xf.AddTranslateOp().Set(Gf.Vec3d(*pos))
    if rot is not None:
        xf.AddOrientOp().Set(Gf.Quatf(*rot))
    prim = xf.GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim)
    if mass is not None:
        api = UsdPhysics.MassAPI.Apply(prim)
        api.CreateMassAttr(mass)
        if inertia is not None:
            api.CreateDiagonalInertiaAttr(Gf.Vec3f(*inertia))
            api.CreateCenterOfMassAttr(Gf.Vec3f(0, 0, 0))
    return prim


_JOINTS = {
    "revolute": UsdPhysics.RevoluteJoint,
    "fixed": UsdPhysics.FixedJoint,
    "prismatic": UsdPhysics.PrismaticJoint,
    "spherical": UsdPhysics.SphericalJoint,
    "d6": UsdPhysics.Joint,
    "distance": UsdPhysics.DistanceJoint,
}


def joint(stage, path, b0, b1, kind="revolute", axis="Z", lp0=(0, 0, 0), lp1=(0, 0, 0), excluded=None):
    j = _JOINTS[kind].Define(stage, path)
    if b0:
        j.CreateBody0Rel().SetTargets([Sdf.Path(b0)])
    if b1:
        j.CreateBody1Rel().SetTargets([Sdf.Path(b1)])
    j.CreateLocalPos0Attr(Gf.Vec3f(*lp0))
    j.CreateLocalPos1Attr(Gf.Vec3f(*lp1))
    if kind in ("revolute", "prismatic", "spherical"):
        j.CreateAxisAttr(axis)
    if excluded is not None:
        j.CreateExcludeFromArticulationAttr(excluded)
    return j.GetPrim()


def root_api(stage, path):
    UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath(path))


def chain(stage, root, names, kind="revolute", spacing=1.0):
    """Bodies root/names[i] along x, joined in order by joints root/j<i>."""
    for i, n in enumerate(names):
        body(stage, f"{root}/{n}", pos=(spacing * i, 0, 0))
    for i in range(1, len(names)):
        joint(
            stage,
            f"{root}/j{i}",
            f"{root}/{names[i - 1]}",
            f"{root}/{names[i]}",
            kind=kind,
            lp0=(spacing / 2, 0, 0),
            lp1=(-spacing / 2, 0, 0),
        )


def set_attr(prim, name, value, type_name=Sdf.ValueTypeNames.Float, uniform=False):
    attr = prim.CreateAttribute(
        name, type_name, custom=False, variability=Sdf.VariabilityUniform if uniform else Sdf.VariabilityVarying
    )
    attr.Set(value)
    return attr


def apply(prim, token):
    prim.AddAppliedSchema(token)
