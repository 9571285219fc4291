"""Articulation views: a scene of mixed robots (two Pandas, an ant) in 64 worlds read and written through views
equals the same per-articulation cache operations, batched matrices equal per-articulation ones bit for bit,
and a view of two structures is refused."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, Usd, UsdGeom

import usdart
from usdart import CacheFlag, UsdartError

DATA = Path(__file__).parent / "data"
WORLDS = 64


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """Two Pandas and a floating ant referenced into one stage, 64 worlds."""
    stage = Usd.Stage.CreateNew(str(tmp_path_factory.mktemp("views") / "mixed.usda"))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    for name, source, x in (("panda_0", "panda/panda.usda", 0.0), ("panda_1", "panda/panda.usda", 2.0)):
        prim = stage.DefinePrim(f"/World/{name}")
        prim.GetReferences().AddReference(str(DATA / source))
        UsdGeom.Xformable(prim).AddTranslateOp().Set(Gf.Vec3d(x, 0, 0))
    stage.DefinePrim("/World/ant").GetReferences().AddReference(str(DATA / "ant_free/ant_free.usda"))
    stage.GetRootLayer().Save()
    scene = usdart.load(stage.GetRootLayer().realPath, worlds=WORLDS)
    scene.contacts_enabled = False
    return scene


def test_views_select_by_pattern_and_refuse_mixed_structures(scene):
    pandas = scene.view("/World/panda_*")
    assert pandas.count == 2 and pandas.worlds == WORLDS and len(pandas.dof_names) == 9
    assert sorted(p.split("/")[2] for p in pandas.paths) == ["panda_0", "panda_1"]
    assert scene.view("/World/ant*").count == 1
    with pytest.raises(UsdartError, match="different structures"):
        scene.view("/World/*")
    with pytest.raises(UsdartError, match="no articulation matches"):
        scene.view("/Nothing/*")
    with pytest.raises(UsdartError, match="read-only"):
        pandas.write("dof_accelerations", 0.0)
    with pytest.raises(UsdartError, match="shape"):
        pandas.write("dof_positions", np.zeros((3, 3)))
    with pytest.raises(UsdartError, match="indices"):
        pandas.read("dof_positions", worlds=[WORLDS])


def test_reads_and_writes_equal_per_articulation_cache_operations(scene):
    rng = np.random.default_rng(7)
    pandas, ants = scene.view("/World/panda_*"), scene.view("/World/ant*")
    # write a subset through the view ...
    q = rng.uniform(-0.5, 0.5, (3, 1, 9))
    pandas.write("dof_positions", q, articulations=[1], worlds=[3, 10, 63])
    root = np.array([[[0.1, 0.2, 1.0, np.cos(0.2), 0.0, 0.0, np.sin(0.2)]]])
    ants.write("root_transforms", root, worlds=[5])
    ants.write("root_velocities", rng.normal(size=(WORLDS, 1, 6)))
    pandas.write("dof_position_targets", 0.25)
    # ... equals what per-articulation caches read
    panda_1, ant = pandas.articulations[1], ants.articulations[0]
    cache = panda_1.create_cache()
    for i, w in enumerate([3, 10, 63]):
        panda_1.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.JOINT_TARGET_POSITIONS, world=w)
        assert np.array_equal(cache.joint_position, q[i, 0]) and np.all(cache.joint_target_position == 0.25)
    ant_cache = ant.create_cache()
    ant.copy_internal_state_to_cache(ant_cache, CacheFlag.ROOT_TRANSFORM, world=5)
    assert np.array_equal(ant_cache.root_transform, root[0, 0])
    assert np.array_equal(ant.link_transforms(5)[0], ants.link_transforms(worlds=[5])[0, 0, 0])
    # a cache written per articulation reads back through the view
    cache.joint_velocity[:] = np.arange(9) * 0.1
    panda_1.apply_cache(cache, CacheFlag.VELOCITY, world=20)
    assert np.array_equal(pandas.read("dof_velocities", articulations=[1], worlds=[20])[0, 0], cache.joint_velocity)
    # the same steps for both ways: a view write and the cache write give the same trajectories
    scene.step(3)
    both = pandas.read("dof_positions")
    assert both.shape == (WORLDS, 2, 9) and np.all(np.isfinite(both))
    assert not np.array_equal(both[3, 1], both[4, 1])  # the written world moved differently


def test_batched_matrices_equal_per_articulation_ones_bit_for_bit(scene):
    for pattern, count in (("/World/panda_*", 2), ("/World/ant*", 1)):
        view = scene.view(pattern)
        jacobians, masses = view.jacobians(), view.mass_matrices()
        gravity, coriolis = view.gravity_compensation(), view.coriolis_compensation()
        assert jacobians.shape[:2] == masses.shape[:2] == (WORLDS, count)
        for w in (0, 31, 63):
            for a, art in enumerate(view.articulations):
                cache = art.create_cache()
                art.copy_internal_state_to_cache(cache, world=w)
                art.compute_dense_jacobian(cache)
                assert np.array_equal(jacobians[w, a], cache.dense_jacobian)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FutureWarning)
                    assert np.array_equal(masses[w, a], art.compute_mass_matrix(cache))
                    assert np.array_equal(coriolis[w, a], art.compute_coriolis_compensation(cache))
                assert np.array_equal(gravity[w, a], art.compute_gravity_compensation(cache))
    assert masses.shape == (WORLDS, 1, 6 + 8, 6 + 8)  # the ant: root terms first (PhysX 5)


def test_the_replayed_last_step_equals_per_articulation_caches_bit_for_bit(scene):
    """Link accelerations and incoming joint forces replay the last step for every chosen world in one kernel
    call per robot (usdart.last_step): equal to the articulations' own cache reads, all worlds or a subset."""
    scene.step(2)
    for pattern in ("/World/panda_*", "/World/ant*"):
        view = scene.view(pattern)
        accelerations, forces = view.read("link_accelerations"), view.read("link_incoming_joint_forces")
        subset = view.read("link_incoming_joint_forces", articulations=[view.count - 1], worlds=[40, 5])
        if "panda" in pattern:  # the Pandas hold their links up (the ant falls freely: its joints carry little)
            assert np.abs(forces).max() > 1.0
        for a, art in enumerate(view.articulations):
            cache = art.create_cache()
            for w in (0, 5, 40, 63):
                art.copy_internal_state_to_cache(
                    cache, CacheFlag.LINK_ACCELERATION | CacheFlag.LINK_INCOMING_JOINT_FORCE, world=w
                )
                assert np.array_equal(accelerations[w, a], cache.link_acceleration)
                assert np.array_equal(forces[w, a], cache.link_incoming_joint_force)
                if a == view.count - 1 and w in (40, 5):
                    assert np.array_equal(subset[[40, 5].index(w), 0], cache.link_incoming_joint_force)


def test_a_bad_batch_is_refused_whole_naming_the_robot_and_world(scene):
    pandas = scene.view("/World/panda_*")
    before = pandas.read("dof_positions")
    q = np.broadcast_to(before, before.shape).copy()
    q[17, 1, 4] = np.nan
    with pytest.raises(UsdartError, match=r"panda_1.*\(world 17\): dof_positions contains NaN"):
        pandas.write("dof_positions", q)
    assert np.array_equal(pandas.read("dof_positions"), before)  # nothing written, not even the good rows
    ants = scene.view("/World/ant*")
    roots = ants.read("root_transforms")
    roots[9, 0, 3:] = 0.0
    with pytest.raises(UsdartError, match=r"\(world 9\): root_transforms has a zero root orientation"):
        ants.write("root_transforms", roots)


def test_a_view_write_moves_link_poses_and_wakes_the_robot_as_apply_cache_does(scene):
    pandas = scene.view("/World/panda_*")
    panda_0 = pandas.articulations[0]
    panda_0._state.asleep[40] = True  # as the step leaves a robot that came to rest
    q = pandas.read("dof_positions", articulations=[0], worlds=[40]) + 0.1
    pandas.write("dof_positions", q, articulations=[0], worlds=[40])
    assert not panda_0.asleep(40)
    cache = panda_0.create_cache()
    cache.joint_position[:] = q[0, 0]
    panda_0.apply_cache(cache, CacheFlag.POSITION, world=41)
    assert np.array_equal(panda_0.link_transforms(40), panda_0.link_transforms(41))
