"""Topology changes in a running scene (seed 000 "Changing the Topology of an Articulation that is in a Scene"):
removing an articulation, adding one from another file and changing a link's mass in the stage, each followed by
a sync, leave the other articulations' trajectories bit for bit as in a run without the changes, and the changed
one continues from its state."""

from __future__ import annotations

import numpy as np
import pytest
from builders import body, joint, new_stage, root_api

import usdart
from usdart import CacheFlag, UsdartError
from usdart.authoring import set_joint_state

START = {"p0": 0.3, "p1": -0.5, "p2": 1.0}  # each pendulum's start angle (rad)


def pendulums(path, names) -> str:
    """Fixed-base pendulums /World/<name> (a base welded to the world, a 1 kg link on a hinge about Y) at
    different places, each starting at its own angle."""
    stage = new_stage()
    for i, name in enumerate(names):
        root = f"/World/{name}"
        body(stage, f"{root}/base", pos=(3.0 * i, 0, 0))
        body(stage, f"{root}/link", pos=(3.0 * i + 1.0, 0, 0))
        joint(stage, f"{root}/anchor", None, f"{root}/base", kind="fixed", lp0=(3.0 * i, 0, 0))
        hinge = joint(stage, f"{root}/hinge", f"{root}/base", f"{root}/link", axis="Y", lp1=(-1.0, 0, 0))
        set_joint_state(hinge, position=START.get(name, 0.2))
        root_api(stage, root)
    stage.GetRootLayer().Export(str(path))
    return str(path)


def angle(scene, name) -> float:
    art = scene.articulation(f"/World/{name}/link")
    return float(art.state.q[0, 0])


def test_remove_add_and_edit_leave_the_others_bit_for_bit_and_the_edited_one_continues(tmp_path):
    path = pendulums(tmp_path / "three.usda", ["p0", "p1", "p2"])
    extra = pendulums(tmp_path / "one.usda", ["p9"])
    reference = usdart.load(path)
    reference.time_step = 1 / 120
    expected = {n: [] for n in START}
    for _ in range(90):
        reference.step()
        for n in START:
            expected[n].append(angle(reference, n))

    scene = usdart.load(path)
    scene.time_step = 1 / 120
    got = {n: [] for n in START}

    def run(steps, names):
        for _ in range(steps):
            scene.step()
            for n in names:
                got[n].append(angle(scene, n))

    run(30, START)
    old_p0 = scene.articulation("/World/p0/link")
    cache = old_p0.create_cache()
    scene.remove("/World/p1/link")
    assert [a.root_link for a in scene.articulations] == ["/World/p0/base", "/World/p2/base"]
    run(20, ["p0", "p2"])
    with pytest.raises(UsdartError, match="no defaultPrim"):
        scene.add(extra, "/World/p1_again")
    scene.add(extra, "/World/p1_again", prim="/World")
    added = scene.articulation("/World/p1_again/p9/link")
    assert added.state.q[0, 0] == pytest.approx(0.2)  # as authored
    run(10, ["p0", "p2"])
    before = angle(scene, "p2")
    link = scene.stage.GetPrimAtPath("/World/p2/link")
    link.GetAttribute("physics:mass").Set(2.0)
    scene.sync()
    assert angle(scene, "p2") == before  # continues from its state
    assert scene.articulation("/World/p2/link").link_masses[1] == 2.0
    run(30, ["p0", "p2"])
    assert np.array_equal(got["p0"], expected["p0"])  # untouched by every change, bit for bit
    assert np.array_equal(got["p2"][:60], expected["p2"][:60])
    assert np.abs(np.array(got["p2"][60:]) - expected["p2"][60:]).max() > 1e-6  # the mass edit acts
    assert scene.time == pytest.approx(90 / 120) and scene.time_step == 1 / 120
    # a cache of the old object works with the new one of the same structure
    scene.articulation("/World/p0/link").copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    assert cache.joint_position[0] == got["p0"][-1]


def test_changed_dofs_keep_the_state_of_those_that_remain(tmp_path):
    """A joint edited from revolute to fixed drops its DOF; the other DOFs of the articulation keep their
    positions and velocities by name."""
    stage = new_stage()
    for name, x in (("a", 0.0), ("b", 1.0), ("c", 2.0)):
        body(stage, f"/World/arm/{name}", pos=(x, 0, 0))
    joint(stage, "/World/arm/anchor", None, "/World/arm/a", kind="fixed")
    joint(stage, "/World/arm/j1", "/World/arm/a", "/World/arm/b", axis="Y", lp0=(0.5, 0, 0), lp1=(-0.5, 0, 0))
    joint(stage, "/World/arm/j2", "/World/arm/b", "/World/arm/c", axis="Y", lp0=(0.5, 0, 0), lp1=(-0.5, 0, 0))
    root_api(stage, "/World/arm")
    path = str(tmp_path / "arm.usda")
    stage.GetRootLayer().Export(path)
    scene = usdart.load(path)
    scene.step(20)
    arm = scene.articulations[0]
    q2, qd2 = float(arm.state.q[0, 1]), float(arm.state.qd[0, 1])
    assert abs(q2) > 1e-3
    cache = arm.create_cache()
    j1 = scene.stage.GetPrimAtPath("/World/arm/j1")
    j1.SetTypeName("PhysicsFixedJoint")
    scene.sync()
    arm = scene.articulations[0]
    assert arm.dof_names == ["/World/arm/j2"]
    assert (arm.state.q[0, 0], arm.state.qd[0, 0]) == (q2, qd2)
    with pytest.raises(UsdartError, match="cache was created for"):  # its structure changed
        arm.copy_internal_state_to_cache(cache)
