"""Loop-joint inverse dynamics (seed 000 "Loop Joints, Coefficient Matrix, and Lambda Constraint Impulses"):
the coefficient matrix against the loop rows' Jacobian built independently with Pinocchio (frames at the loop
joint's anchors, root left free on a floating base), and compute_lambda's joint forces holding a four-bar still
when the simulator applies them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from pin_reference import PinTwin, _se3, root_map
from pxr import Sdf, Usd, UsdPhysics

import usdart
from usdart import CacheFlag, UsdartError

SQUARE_LOOP = Path(__file__).parent.parent / "sample_stages" / "square_loop.usda"


def pinocchio_coefficients(art, cache) -> np.ndarray:
    """J^T of the loop rows (body1's anchor relative to body0's, along body0's joint-frame axes) from
    Pinocchio's frame Jacobians; a floating root left free with Pinocchio's mass matrix."""
    m = art.model
    twin = PinTwin(m, cache.root_transform[:3], cache.root_transform[3:])
    pm, ids = twin.model, []
    for i in range(len(m.loop_links)):
        for side in range(2):
            link, local = int(m.loop_links[i, side]), m.loop_frames[i, side]
            anchor = _se3(local[:3, :3], local[:3, 3])
            parent = pm.frames[pm.getFrameId(f"link{link}")] if link >= 0 else None
            joint, placement = (parent.parentJoint, parent.placement * anchor) if parent else (0, anchor)
            ids.append(pm.addFrame(pin.Frame(f"loop{i}_{side}", joint, placement, pin.FrameType.OP_FRAME)))
    data = pm.createData()
    q = twin.q(cache.joint_position, art.state.joint_quat[0], cache.root_transform[:3], cache.root_transform[3:])
    pin.computeJointJacobians(pm, data, q)
    pin.updateFramePlacements(pm, data)
    T = root_map(m, cache.root_transform[3:])
    rows = []
    for i in range(len(m.loop_links)):
        f0, f1 = ids[2 * i], ids[2 * i + 1]
        relative = twin.from_pin(
            pin.getFrameJacobian(pm, data, f1, pin.LOCAL_WORLD_ALIGNED)
            - pin.getFrameJacobian(pm, data, f0, pin.LOCAL_WORLD_ALIGNED)
        )
        relative = relative @ T  # usdart's root velocity (COM, world axes)
        for axis in np.flatnonzero(m.loop_locked[i]):
            rows.append(data.oMf[f0].rotation[:, axis % 3] @ (relative[:3] if axis < 3 else relative[3:]))
    J = np.array(rows)
    if not m.n_root:
        return J.T
    H = T.T @ twin.matrix_from_pin(pin.crba(pm, data, q)) @ T
    return J[:, 6:].T - H[6:, :6] @ np.linalg.solve(H[:6, :6], J[:, :6].T)


def fixed_four_bar(tmp_path) -> str:
    """The square loop sample standing upright: its first link welded to the world, gravity in its plane."""
    stage = Usd.Stage.Open(str(SQUARE_LOOP))
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.TransferContent(stage.GetRootLayer())
    upright = Usd.Stage.Open(layer)
    UsdPhysics.FixedJoint.Define(upright, "/World/anchor").CreateBody1Rel().SetTargets(["/World/rigidBody0"])
    for prim in upright.Traverse():
        if prim.IsA(UsdPhysics.Scene):
            UsdPhysics.Scene(prim).CreateGravityDirectionAttr().Set((0.0, -1.0, 0.0))
    path = str(tmp_path / "four_bar.usda")
    upright.GetRootLayer().Export(path)
    return path


@pytest.mark.parametrize("base", ["floating", "fixed"])
def test_coefficient_matrix_is_the_loop_rows_jacobian_transposed(tmp_path, base):
    """The square loop (a floating four-bar: its root left free) and the same four-bar welded to the world, at
    a pose off the closed one: equal to Pinocchio's to 1e-12."""
    scene = usdart.load(str(SQUARE_LOOP) if base == "floating" else fixed_four_bar(tmp_path))
    art = scene.articulations[0]
    assert art.loop_joint_count == 1 and art.fixed_base == (base == "fixed")
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache)
    cache.joint_position[:] += [0.1, -0.2, 0.05]
    K = art.compute_coefficient_matrix(cache)
    assert K.shape == (3, 5)  # 3 DOFs x the revolute loop joint's 5 locked axes
    assert np.array_equal(cache.coefficient_matrix, K)
    np.testing.assert_allclose(K, pinocchio_coefficients(art, cache), rtol=0, atol=1e-12)
    assert np.abs(K).max() > 0.5


@pytest.mark.parametrize("solver", ["PGS", "TGS"])
def test_compute_lambda_forces_hold_the_four_bar_still_in_simulation(tmp_path, solver):
    """Joint forces [5, -3, 2] set before, the gravity force of the tree as the target: compute_lambda
    converges, and its joint forces applied in a step of the simulator leave the joints unaccelerated (within
    1e-8; the forces set before accelerate them by 7 rad/s^2)."""
    scene = usdart.load(fixed_four_bar(tmp_path))
    scene.solver, scene.time_step = solver, 1 / 240
    art = scene.articulations[0]
    initial = art.create_cache()
    art.copy_internal_state_to_cache(initial)
    target = art.compute_generalized_gravity_force(initial).copy()  # (writes initial.joint_force)
    initial.joint_force[:] = [5.0, -3.0, 2.0]
    cache = art.create_cache()
    assert art.compute_lambda(cache, initial, target, max_iterations=200)
    assert cache.lambda_.shape == (5,) and np.abs(cache.lambda_).max() > 1.0
    np.testing.assert_allclose(cache.joint_force, target - cache.coefficient_matrix @ cache.lambda_, atol=1e-12)
    for forces, still in ((cache.joint_force, True), (initial.joint_force, False)):
        scene.reset()
        applied = art.create_cache()
        applied.joint_force[:] = forces
        art.apply_cache(applied, CacheFlag.FORCE)
        scene.step()
        art.copy_internal_state_to_cache(applied, CacheFlag.ACCELERATION)
        if still:
            assert np.abs(applied.joint_acceleration).max() < 1e-8
        else:
            assert np.abs(applied.joint_acceleration).max() > 1.0


def test_compute_lambda_refusals(tmp_path):
    floating = usdart.load(str(SQUARE_LOOP)).articulations[0]
    cache, initial = floating.create_cache(), floating.create_cache()
    with pytest.raises(UsdartError, match="max_iterations must be at least 1"):
        floating.compute_lambda(cache, initial, np.zeros(3), max_iterations=0)
    initial.joint_velocity[:] = [1.0, -1.0, 1.0]
    with pytest.raises(UsdartError, match="needs a fixed base"):
        floating.compute_lambda(cache, initial, np.zeros(3))
    with pytest.raises(UsdartError, match="joint_forces"):
        floating.compute_lambda(cache, floating.create_cache(), np.full(3, np.nan))
