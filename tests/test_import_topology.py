"""Articulation root rules, components, eccentricity, loops and reversed joints (DESIGN.md rules 1-6)."""

import math

import numpy as np
import pytest
from builders import apply, body, chain, joint, new_stage, root_api, set_attr

import usdart


def fixed_arm(stage, root="/World/arm"):
    """world -(fixed)-> base -(rev)-> l1 -(rev)-> l2"""
    chain(stage, root, ["base", "l1", "l2"])
    joint(stage, f"{root}/world_joint", None, f"{root}/base", kind="fixed")


def test_root_api_on_fixed_world_joint():
    st = new_stage()
    fixed_arm(st)
    root_api(st, "/World/arm/world_joint")
    (art,) = usdart.load(st).articulations
    assert art.fixed_base and art.root_link == "/World/arm/base"
    assert art.links == ["/World/arm/base", "/World/arm/l1", "/World/arm/l2"]
    assert art.link_parents.tolist() == [-1, 0, 1]
    assert art.joints == [None, "/World/arm/j1", "/World/arm/j2"]
    assert art.dof_names == ["/World/arm/j1", "/World/arm/j2"] and art.dof_count == 2


def test_root_api_on_ancestor_of_world_joint():
    st = new_stage()
    fixed_arm(st)
    root_api(st, "/World/arm")
    (art,) = usdart.load(st).articulations
    assert art.fixed_base and art.root_link == "/World/arm/base"


def test_root_api_on_body_floating():
    st = new_stage()
    chain(st, "/World/c", ["a", "b", "c"])
    root_api(st, "/World/c/b")
    (art,) = usdart.load(st).articulations
    assert not art.fixed_base and art.root_link == "/World/c/b"
    assert art.link_parents.tolist() == [-1, 0, 0]


def test_root_api_on_body_with_world_joint_is_fixed_at_world_body():
    st = new_stage()
    fixed_arm(st)
    root_api(st, "/World/arm/l1")
    scene = usdart.load(st)
    (art,) = scene.articulations
    assert art.fixed_base and art.root_link == "/World/arm/base"
    assert any("/World/arm/l1" in w and "world_joint" in w for w in scene.warnings)


def test_ancestor_picks_minimal_eccentricity():
    st = new_stage()
    chain(st, "/World/c", ["b0", "b1", "b2", "b3", "b4"])
    root_api(st, "/World/c")
    (art,) = usdart.load(st).articulations
    assert art.root_link == "/World/c/b2"  # eccentricity 2, every other body more
    assert not art.fixed_base


def test_eccentricity_tie_broken_by_smallest_path():
    st = new_stage()
    chain(st, "/World/c", ["d", "c", "b", "a"])  # path d-c-b-a: centres c and b (eccentricity 2)
    root_api(st, "/World/c")
    (art,) = usdart.load(st).articulations
    assert art.root_link == "/World/c/b"


def test_one_articulation_per_component_under_ancestor():
    st = new_stage()
    chain(st, "/World/two/A", ["a0", "a1"])
    chain(st, "/World/two/B", ["b0", "b1", "b2"])
    joint(st, "/World/two/A/fix", None, "/World/two/A/a0", kind="fixed")
    root_api(st, "/World/two")
    scene = usdart.load(st)
    assert [a.root_link for a in scene.articulations] == ["/World/two/A/a0", "/World/two/B/b1"]
    assert [a.fixed_base for a in scene.articulations] == [True, False]


def test_non_fixed_world_joint_keeps_its_dof():
    st = new_stage()
    body(st, "/World/cart", pos=(0, 0, 0))
    joint(st, "/World/rail", None, "/World/cart", kind="prismatic", axis="X")
    root_api(st, "/World/rail")
    (art,) = usdart.load(st).articulations
    assert art.fixed_base
    assert art.links == ["/World/rail", "/World/cart"]  # static anchor named after the joint
    assert art.joints == [None, "/World/rail"] and art.dof_names == ["/World/rail"]
    assert art.link_masses.tolist() == [0.0, 1.0]


def test_nested_root_apis_give_one_articulation_and_a_warning():
    st = new_stage()
    fixed_arm(st)
    root_api(st, "/World/arm")
    root_api(st, "/World/arm/world_joint")
    root_api(st, "/World")
    scene = usdart.load(st)
    assert len(scene.articulations) == 1
    dup = [w for w in scene.warnings if "nested or duplicate" in w]
    assert len(dup) == 2 and any(w.startswith("/World/arm:") for w in dup) and any(w.startswith("/World:") for w in dup)


def test_excluded_joint_is_a_loop_joint():
    st = new_stage()
    for i, p in enumerate([(0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)]):
        body(st, f"/World/b{i}", pos=p)
    for i, (a, b) in enumerate([(0, 1), (1, 2), (2, 3), (3, 0)]):
        joint(st, f"/World/j{i}", f"/World/b{a}", f"/World/b{b}", excluded=(i == 3))
    joint(st, "/World/fix", "/World/b0", None, kind="fixed")
    root_api(st, "/World/fix")
    scene = usdart.load(st)
    (art,) = scene.articulations
    assert art.links == ["/World/b0", "/World/b1", "/World/b2", "/World/b3"]
    assert art.link_parents.tolist() == [-1, 0, 1, 2]
    assert art.loop_joints == ["/World/j3"] and scene.constraints == ["/World/j3"]
    assert not any("loop" in w for w in scene.warnings)


def test_undeclared_cycle_is_broken_with_a_warning():
    st = new_stage()
    for i, p in enumerate([(0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)]):
        body(st, f"/World/b{i}", pos=p)
    for i, (a, b) in enumerate([(0, 1), (1, 2), (2, 3), (3, 0)]):
        joint(st, f"/World/j{i}", f"/World/b{a}", f"/World/b{b}")
    root_api(st, "/World/b0")
    scene = usdart.load(st)
    (art,) = scene.articulations
    # as PhysX: depth first from b0, each body's joints in path order: j0, j1, j2; j3 reaches b0 again
    assert art.links == ["/World/b0", "/World/b1", "/World/b2", "/World/b3"]
    assert art.loop_joints == ["/World/j3"]
    assert any("undeclared kinematic loop" in w and "/World/j3" in w for w in scene.warnings)


def test_free_bodies_are_kept():
    st = new_stage()
    fixed_arm(st)
    root_api(st, "/World/arm")
    body(st, "/World/ball", pos=(3, 0, 0))
    scene = usdart.load(st)
    assert scene.free_bodies == ["/World/ball"]


def reversed_pair(reverse: bool):
    st = new_stage()
    body(st, "/World/base")
    body(st, "/World/arm", pos=(1, 0, 0))
    joint(st, "/World/fix", None, "/World/base", kind="fixed")
    root_api(st, "/World/fix")
    b0, b1, lp0, lp1 = (
        ("/World/arm", "/World/base", (-0.5, 0, 0), (0.5, 0, 0))
        if reverse
        else ("/World/base", "/World/arm", (0.5, 0, 0), (-0.5, 0, 0))
    )
    j = joint(st, "/World/hinge", b0, b1, lp0=lp0, lp1=lp1)
    j.GetAttribute("physics:lowerLimit").Set(-10.0) if j.HasAttribute("physics:lowerLimit") else None
    set_attr(j, "physics:lowerLimit", -10.0)
    set_attr(j, "physics:upperLimit", 30.0)
    apply(j, "PhysicsDriveAPI:angular")
    set_attr(j, "drive:angular:physics:targetPosition", 20.0)
    set_attr(j, "drive:angular:physics:targetVelocity", 5.0)
    apply(j, "PhysicsJointStateAPI:angular")
    set_attr(j, "state:angular:physics:position", 15.0)
    set_attr(j, "state:angular:physics:velocity", -3.0)
    return usdart.load(st).articulations[0]


def test_reversed_joint_negates_limits_targets_and_state():
    fwd, rev = reversed_pair(False), reversed_pair(True)
    jf, jr = fwd.desc.joints[1], rev.desc.joints[1]
    assert jr.reversed and not jf.reversed
    assert (jr.body0, jr.body1) == ("/World/base", "/World/arm")
    d = math.radians
    (df,), (dr,) = jf.dofs, jr.dofs
    assert (df.lower, df.upper) == pytest.approx((d(-10), d(30)))
    assert (dr.lower, dr.upper) == pytest.approx((d(-30), d(10)))
    assert (dr.position, dr.velocity) == pytest.approx((-d(15), d(3)))
    assert (dr.drive.target_position, dr.drive.target_velocity) == pytest.approx((-d(20), -d(5)))
    # frames swapped: the parent-side frame sits 0.5 m along +x of the base in both stages
    np.testing.assert_allclose(jr.frame0.position, [0.5, 0, 0])
    np.testing.assert_allclose(jr.frame1.position, [-0.5, 0, 0])
    np.testing.assert_allclose(jf.frame0.position, jr.frame0.position)


def test_separated_joint_frames_are_reported():
    st = new_stage()
    body(st, "/World/a")
    body(st, "/World/b", pos=(2.0, 0, 0))
    joint(st, "/World/hinge", "/World/a", "/World/b", lp0=(0.5, 0, 0), lp1=(-0.5, 0, 0))  # frames 1 m apart
    root_api(st, "/World/a")
    (warning,) = [w for w in usdart.load(st).warnings if "apart" in w]
    assert warning.startswith("/World/hinge:") and "1 m apart" in warning
    joint(st, "/World/hinge", "/World/a", "/World/b", lp0=(1.0, 0, 0), lp1=(-1.0, 0, 0))
    assert not [w for w in usdart.load(st).warnings if "apart" in w]
