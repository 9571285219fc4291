"""Spherical joints with 2 and 3 rotational DOFs (quaternion state, PhysX velocity semantics).

A spherical joint's DOF velocities are the child's angular velocity components along the unlocked
joint axes (child joint frame), and its positions the rotation-vector components. Pinocchio has no
2-DOF equivalent, so these tests use independent truths: finite differences of the link poses under
that angular velocity, and the equations of motion M qdd + h = tau between three algorithms.
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import body, joint, new_stage, root_api
from pxr import Gf, UsdPhysics

import usdart
from usdart import CacheFlag
from usdart.core.frames import quat_multiply, quat_to_matrix
from usdart.core.state import rotation_vector_to_quat


def shoulder(free_axes):
    """Base fixed to the world, an upper arm on a D6 joint, a forearm on a revolute joint."""
    st = new_stage()
    body(st, "/World/base", mass=2.0)
    body(st, "/World/upper", pos=(0.6, 0, 0), mass=1.5, inertia=(0.02, 0.05, 0.06))
    body(st, "/World/fore", pos=(1.2, 0.1, 0), mass=0.7, inertia=(0.01, 0.02, 0.03))
    joint(st, "/World/fix", None, "/World/base", kind="fixed")
    root_api(st, "/World/fix")
    j = joint(st, "/World/shoulder", "/World/base", "/World/upper", kind="d6", lp0=(0.2, 0, 0), lp1=(-0.4, 0, 0))
    for axis in ("transX", "transY", "transZ", "rotX", "rotY", "rotZ"):
        if axis not in free_axes:
            limit = UsdPhysics.LimitAPI.Apply(j, axis)
            limit.CreateLowAttr(1.0)
            limit.CreateHighAttr(-1.0)
    elbow = joint(st, "/World/elbow", "/World/upper", "/World/fore", axis="Z", lp0=(0.3, 0.05, 0), lp1=(-0.3, -0.05, 0))
    UsdPhysics.Joint(elbow).CreateLocalRot0Attr(Gf.Quatf(0.9238795, 0.3826834, 0, 0))
    UsdPhysics.Joint(elbow).CreateLocalRot1Attr(Gf.Quatf(0.9238795, 0.3826834, 0, 0))
    return usdart.load(st).articulations[0]


@pytest.mark.parametrize("free", [("rotY", "rotZ"), ("rotX", "rotY", "rotZ"), ("rotX", "rotZ")])
def test_link_velocity_is_the_derivative_of_the_pose(free):
    art = shoulder(free)
    m = art.model
    rng = np.random.default_rng(1)
    cache = art.create_cache()
    cache.joint_position[:] = rng.uniform(-1, 1, art.dof_count)
    cache.joint_velocity[:] = rng.normal(size=art.dof_count)
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    art.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)

    # move the state by dt: the spherical quaternion turns by its child-frame angular velocity
    dt = 1e-7
    lo, hi = m.dof_start[1], m.dof_start[2]
    omega_child = m.dof_axis[lo:hi].T @ cache.joint_velocity[lo:hi]
    poses = []
    for sign in (-1, 1):
        st = art.state
        quat0, q0 = st.joint_quat[0, 1].copy(), st.q[0].copy()
        st.joint_quat[0, 1] = quat_multiply(quat0, rotation_vector_to_quat(sign * dt * omega_child))
        st.q[0, hi:] = q0[hi:] + sign * dt * cache.joint_velocity[hi:]
        art._update_poses(0)
        poses.append(art.link_transforms())
        st.joint_quat[0, 1], st.q[0] = quat0, q0
    for i in (1, 2):
        com = [p[i, :3] + quat_to_matrix(p[i, 3:]) @ m.com[i] for p in poses]
        np.testing.assert_allclose(cache.link_velocity[i, :3], (com[1] - com[0]) / (2 * dt), atol=1e-6)
        R0, R1 = quat_to_matrix(poses[0][i, 3:]), quat_to_matrix(poses[1][i, 3:])
        skew = (R1 - R0) / (2 * dt) @ quat_to_matrix(poses[0][i, 3:]).T
        np.testing.assert_allclose(cache.link_velocity[i, 3:], [skew[2, 1], skew[0, 2], skew[1, 0]], atol=1e-6)


@pytest.mark.parametrize("free", [("rotY", "rotZ"), ("rotX", "rotY", "rotZ")])
def test_equations_of_motion_agree(free):
    """Forward dynamics (ABA) solves M qdd + h = tau with CRBA's M and RNEA's h."""
    art = shoulder(free)
    rng = np.random.default_rng(2)
    cache = art.create_cache()
    cache.joint_position[:] = rng.uniform(-1, 1, art.dof_count)
    cache.joint_velocity[:] = rng.normal(size=art.dof_count)
    cache.joint_force[:] = rng.normal(size=art.dof_count)
    qdd = art.compute_joint_acceleration(cache)
    M = art.compute_mass_matrix(cache) + np.diag(art.model.armature)
    h = art.compute_gravity_compensation(cache) + art.compute_coriolis_compensation(cache)
    np.testing.assert_allclose(M @ qdd + h, cache.joint_force, atol=1e-10)
    assert np.all(np.linalg.eigvalsh(M) > 0)


def test_rotation_vector_positions():
    """Positions are rotation-vector components: a pure rotY position turns the link about the joint's Y."""
    art = shoulder(("rotX", "rotY", "rotZ"))
    cache = art.create_cache()
    before = art.link_transforms()[1]
    cache.joint_position[:3] = [0.0, 0.4, 0.0]
    art.apply_cache(cache, CacheFlag.POSITION)
    after = art.link_transforms()[1]
    relative = quat_to_matrix(before[3:]).T @ quat_to_matrix(after[3:])
    # the joint frames are identity-aligned with the links here, so the link turns by 0.4 rad about Y
    np.testing.assert_allclose(relative, quat_to_matrix(rotation_vector_to_quat([0, 0.4, 0])), atol=1e-12)
