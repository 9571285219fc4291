"""Joint forces are internal: they never move the centre of mass of a floating articulation nor change its
angular momentum about it (conservation laws; PhysX keeps them, issue "Step for step with real PhysX").

Linear momentum is summed from the cache's link COM velocities and masses; angular momentum about the COM
comes from the centroidal momentum matrix (a CRBA-based kernel, independent of the step's momentum code).
"""

import functools
from pathlib import Path

import numpy as np
import pytest
from pxr import Usd, UsdPhysics
from test_hostile_input import pendulum

import usdart
from usdart.core.frames import quat_to_matrix

# bodies without PhysxRigidBodyAPI as UsdPhysics alone has them
# (conservation laws without PhysX's default link damping (a drag from outside)
load = functools.partial(usdart.load, semantics="newton")

DATA = Path(__file__).parent / "data"


def momentum(art):
    """(linear momentum from link COM velocities, angular momentum about the COM, COM velocity)."""
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache)
    p = (art.link_masses[:, None] * cache.link_velocity[:, :3]).sum(axis=0)
    A, _ = art.compute_centroidal_momentum_matrix(cache)
    nu = np.concatenate([cache.root_linear_velocity, cache.root_angular_velocity, cache.joint_velocity])
    return p, (A @ nu)[3:], p / art.total_mass


def centre_of_mass(art):
    frames = art.link_transforms()  # rows [x, y, z, qw, qx, qy, qz]
    coms = np.array([quat_to_matrix(f[3:]) @ b.com + f[:3] for f, b in zip(frames, art.desc.bodies)])
    return (art.link_masses[:, None] * coms).sum(axis=0) / art.total_mass


def free_two_link_body(tmp_path, hinge, apis, gravity=0.0):
    """The pendulum of test_hostile_input without its anchor: two links, asymmetric inertia, offset COM."""
    stage = pendulum(
        tmp_path,
        scene=f"float physics:gravityMagnitude = {gravity}",
        hinge=hinge,
        hinge_apis=apis,
        link="float3 physics:diagonalInertia = (0.1, 0.2, 0.3)\npoint3f physics:centerOfMass = (0.2, 0.1, 0)",
    )
    stage.write_text(stage.read_text().replace("rel physics:body1 = </World/arm/base>", ""))
    return str(stage)


STIFF_DRIVE = (
    "float drive:angular:physics:stiffness = 100\nfloat drive:angular:physics:targetPosition = 60",
    ["PhysicsDriveAPI:angular"],
)
VIOLATED_LIMIT = (
    "float physics:lowerLimit = -10\nfloat physics:upperLimit = 10\nfloat state:angular:physics:position = 30",
    ["PhysicsJointStateAPI:angular"],
)


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
@pytest.mark.parametrize("hinge, apis", [STIFF_DRIVE, VIOLATED_LIMIT], ids=["stiff drive", "violated limit"])
def test_joint_forces_leave_a_free_body_at_rest(tmp_path, integrator, hinge, apis):
    scene = load(free_two_link_body(tmp_path, hinge, apis), integrator=integrator)
    art = scene.articulations[0]
    start = centre_of_mass(art)
    scene.step(60)
    p, L, _ = momentum(art)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache)
    assert abs(cache.joint_position[0]) > 0.1  # the joint moved a lot
    assert np.abs(p).max() < 1e-10 and np.abs(L).max() < 1e-10
    assert np.abs(centre_of_mass(art) - start).max() < 1e-12  # and its centre of mass stays where it was
    if hinge == STIFF_DRIVE[0]:  # the same run without the momentum step: the error this guards against (a
        # limit's push-out keeps no velocity since its velocity iterations take it back, as PhysX's do)
        plain = load(free_two_link_body(tmp_path, hinge, apis), integrator=integrator)
        plain.conserve_momentum = False
        plain.step(60)
        assert np.abs(momentum(plain.articulations[0])[0]).max() > 1e-3


def test_under_gravity_only_gravity_changes_the_momentum(tmp_path):
    """p(t) = p(0) + M g t and L_c constant, while a stiff drive swings the body around."""
    scene = load(free_two_link_body(tmp_path, *STIFF_DRIVE, gravity=9.81))
    art = scene.articulations[0]
    scene.step(90)
    p, L, _ = momentum(art)
    expected = art.total_mass * np.array([0.0, 0.0, -9.81]) * scene.time
    np.testing.assert_allclose(p, expected, atol=1e-9)
    assert np.abs(L).max() < 1e-9


def test_a_link_force_changes_the_momentum_by_its_impulse(tmp_path):
    """A 2 N force on the link's COM for one step: linear momentum F dt, angular momentum (x - c) x F dt."""
    scene = load(free_two_link_body(tmp_path, *STIFF_DRIVE))
    art = scene.articulations[0]
    scene.step(10)
    p0, L0, _ = momentum(art)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache)
    # link COM and system COM at the step start, from the link poses and the authored COM offsets
    frames = art.link_transforms()  # rows [x, y, z, qw, qx, qy, qz]
    coms = np.array([quat_to_matrix(f[3:]) @ b.com + f[:3] for f, b in zip(frames, art.desc.bodies)])
    c = (art.link_masses[:, None] * coms).sum(axis=0) / art.total_mass
    force = np.array([0.0, 2.0, 0.0])
    cache.link_force[:] = 0.0
    cache.link_force[1] = force
    art.apply_cache(cache, usdart.CacheFlag.LINK_FORCE)
    scene.step(1)
    p1, L1, _ = momentum(art)
    dt = scene.time_step
    np.testing.assert_allclose(p1 - p0, force * dt, atol=1e-12)
    np.testing.assert_allclose(L1 - L0, np.cross(coms[1] - c, force) * dt, atol=1e-12)


def test_the_ant_with_its_feet_outside_their_limits_stays_where_it_is():
    """The converted ant starts with its ankles at 0 deg, outside their limits; in zero gravity the limits
    snap them in, and the torso must not fly off (it drifted 0.44 m/s with Euler, 0.72 m/s with RK4)."""
    stage = Usd.Stage.Open(str(DATA / "ant_free" / "ant_free.usda"))
    stage.SetEditTarget(stage.GetSessionLayer())  # the file's layer stays as on disk for other tests
    for prim in stage.Traverse():
        if prim.IsA(UsdPhysics.Scene):
            UsdPhysics.Scene(prim).GetGravityMagnitudeAttr().Set(0.0)
    for integrator in ("euler", "rk4"):
        scene = load(stage, integrator=integrator)
        art = scene.articulations[0]
        scene.step(int(1.0 / scene.time_step))
        _, L, com_velocity = momentum(art)
        assert np.abs(com_velocity).max() < 1e-10 and np.abs(L).max() < 1e-10, integrator
