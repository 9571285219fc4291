"""Body mass from MassAPI or from colliders and density, against closed-form values (DESIGN.md rule 9)."""

import math

import numpy as np
import pytest
from builders import body, new_stage, root_api
from pxr import Gf, UsdGeom, UsdPhysics, UsdShade

import usdart


def one_body(stage, make_collider, **body_kw):
    b = body(stage, "/World/b", mass=None, **body_kw)
    collider = make_collider(stage, "/World/b/shape")
    UsdPhysics.CollisionAPI.Apply(collider.GetPrim())
    root_api(stage, "/World/b")
    return b, collider


def imported(stage):
    return usdart.load(stage).articulations[0].desc.bodies[0]


def cube(size):
    def make(st, path):
        c = UsdGeom.Cube.Define(st, path)
        c.CreateSizeAttr(size)
        return c

    return make


def test_cube_default_density():
    st = new_stage()
    one_body(st, cube(0.2))
    b = imported(st)
    m = 1000 * 0.2**3
    assert b.mass == pytest.approx(m)
    np.testing.assert_allclose(b.inertia, np.eye(3) * m * (0.04 + 0.04) / 12, rtol=1e-12)


def test_sphere_capsule_cylinder_cone_along_axes():
    r, h = 0.1, 0.4
    cases = {
        "sphere": (lambda st, p: UsdGeom.Sphere.Define(st, p), 4 / 3 * math.pi * r**3),
        "capsule": (UsdGeom.Capsule.Define, math.pi * r * r * h + 4 / 3 * math.pi * r**3),
        "cylinder": (UsdGeom.Cylinder.Define, math.pi * r * r * h),
        "cone": (UsdGeom.Cone.Define, math.pi * r * r * h / 3),
    }
    for name, (define, volume) in cases.items():
        for axis in ("X", "Y", "Z"):
            st = new_stage()

            def make(stage, path, define=define, name=name, axis=axis):
                g = define(stage, path)
                g.CreateRadiusAttr(r)
                if name != "sphere":
                    g.CreateHeightAttr(h)
                    g.CreateAxisAttr(axis)
                return g

            one_body(st, make)
            b = imported(st)
            m = 1000 * volume
            assert b.mass == pytest.approx(m, rel=1e-9), (name, axis)
            k = "XYZ".index(axis)
            if name == "cylinder":
                i_axis, i_perp = m * r * r / 2, m * (3 * r * r + h * h) / 12
            elif name == "cone":
                i_axis, i_perp = 0.3 * m * r * r, m * (3 / 80) * (4 * r * r + h * h)
                assert b.com[k] == pytest.approx(-h / 4)
            elif name == "capsule":
                mc, ms = 1000 * math.pi * r * r * h, 1000 * 4 / 3 * math.pi * r**3
                i_axis = mc * r * r / 2 + ms * 2 * r * r / 5
                i_perp = mc * (3 * r * r + h * h) / 12 + ms * (2 * r * r / 5 + h * h / 4 + 3 * h * r / 8)
            else:
                i_axis = i_perp = 0.4 * m * r * r
            expected = np.full(3, i_perp)
            expected[k] = i_axis
            np.testing.assert_allclose(np.diag(b.inertia), expected, rtol=1e-9, err_msg=f"{name} {axis}")


def test_convex_mesh_cube_and_offset_collider():
    pts = [(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
    faces = [0, 1, 3, 2, 4, 6, 7, 5, 0, 4, 5, 1, 2, 3, 7, 6, 0, 2, 6, 4, 1, 5, 7, 3]

    def mesh(st, path):
        m = UsdGeom.Mesh.Define(st, path)
        m.CreatePointsAttr(pts)
        m.CreateFaceVertexCountsAttr([4] * 6)
        m.CreateFaceVertexIndicesAttr(faces)
        m.AddTranslateOp().Set(Gf.Vec3d(2, 0, 0))
        return m

    for approximation in ("none", "convexHull"):
        st = new_stage()
        _, collider = one_body(st, mesh)
        UsdPhysics.MeshCollisionAPI.Apply(collider.GetPrim()).CreateApproximationAttr(approximation)
        b = imported(st)
        assert b.mass == pytest.approx(1000.0)
        np.testing.assert_allclose(b.com, [2, 0, 0], atol=1e-12)
        np.testing.assert_allclose(b.inertia, np.eye(3) * 1000 / 6, rtol=1e-9, atol=1e-9)


def test_density_precedence_collider_body_material():
    st = new_stage()
    b, collider = one_body(st, cube(1.0))
    material = UsdShade.Material.Define(st, "/World/steel")
    UsdPhysics.MaterialAPI.Apply(material.GetPrim()).CreateDensityAttr(7800.0)
    UsdShade.MaterialBindingAPI.Apply(collider.GetPrim()).Bind(material, materialPurpose="physics")
    assert imported(st).mass == pytest.approx(7800.0)
    UsdPhysics.MassAPI.Apply(b).CreateDensityAttr(500.0)
    assert imported(st).mass == pytest.approx(500.0)
    UsdPhysics.MassAPI.Apply(collider.GetPrim()).CreateDensityAttr(200.0)
    assert imported(st).mass == pytest.approx(200.0)


def test_authored_mass_rescales_collider_inertia_and_units():
    st = new_stage(mpu=0.01, kpu=0.001)  # cm and g
    b, _ = one_body(st, cube(10.0))  # a 10 cm cube
    UsdPhysics.MassAPI.Apply(b).CreateMassAttr(2000.0)  # 2 kg
    body_desc = imported(st)
    assert body_desc.mass == pytest.approx(2.0)
    np.testing.assert_allclose(body_desc.inertia, np.eye(3) * 2.0 * 0.02 / 12, rtol=1e-9)


def test_default_density_in_centimetre_stage():
    st = new_stage(mpu=0.01)
    one_body(st, cube(100.0))  # 1 m cube
    assert imported(st).mass == pytest.approx(1000.0)


def test_mass_without_colliders_or_inertia_uses_small_sphere_with_warning():
    st = new_stage()
    body(st, "/World/b", mass=2.0, inertia=None)
    root_api(st, "/World/b")
    scene = usdart.load(st)
    b = scene.articulations[0].desc.bodies[0]
    np.testing.assert_allclose(b.inertia, np.eye(3) * 0.4 * 2.0 * 0.01)
    assert any("0.1 m solid sphere" in w for w in scene.warnings)


def test_authored_com_and_principal_axes():
    st = new_stage(mpu=0.5)
    b = body(st, "/World/b", mass=1.0, inertia=(1.0, 2.0, 3.0))
    api = UsdPhysics.MassAPI(b)
    api.CreateCenterOfMassAttr(Gf.Vec3f(0, 2, 0))
    s = math.sqrt(0.5)
    api.CreatePrincipalAxesAttr(Gf.Quatf(s, 0, 0, s))  # 90 deg about Z: principal x -> world y
    root_api(st, "/World/b")
    desc = imported(st)
    np.testing.assert_allclose(desc.com, [0, 1.0, 0])
    np.testing.assert_allclose(np.diag(desc.inertia), np.array([2.0, 1.0, 3.0]) * 0.25, atol=1e-7)


def test_convex_hull_of_cloud_equals_enclosing_cube_and_sphere_volume_converges():
    from usdart.usd.importer.shape_mass import closed_triangle_mesh, convex_hull

    rng = np.random.default_rng(3)
    corners = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 2) for z in (-1, 1)], float)
    cloud = np.vstack([rng.uniform([-1, -1, -1], [1, 2, 1], size=(3000, 3)), corners])
    pts, tris = convex_hull(cloud)
    hull = closed_triangle_mesh(pts, tris)
    assert len(pts) == 8 and hull.mass == pytest.approx(2 * 3 * 2)
    np.testing.assert_allclose(hull.com, [0, 0.5, 0], atol=1e-12)
    np.testing.assert_allclose(np.diag(hull.inertia), 12 / 12 * np.array([9 + 4, 4 + 4, 4 + 9]), rtol=1e-12)
    sphere = rng.normal(size=(4000, 3))
    sphere /= np.linalg.norm(sphere, axis=1)[:, None]
    pts, tris = convex_hull(sphere)
    assert len(tris) == 2 * len(pts) - 4  # Euler: closed triangulated convex surface
    ratio = closed_triangle_mesh(pts, tris).mass / (4 / 3 * math.pi)
    assert 0.995 < ratio < 1.0  # inscribed polytope: just below the sphere (~1/n shortfall)
