"""Real robots converted to USD (tests/data, from ../shared/corpus) import as their sources define them."""

import functools
import json
import os

import numpy as np
import pytest

import usdart

# massless frames and undamped bodies as the URDF/MJCF source models (and MuJoCo, Pinocchio) have them
load = functools.partial(usdart.load, semantics="newton")

DATA = os.path.join(os.path.dirname(__file__), "data")
ROBOTS = [
    ("panda", "panda.usda", "ref_fixed.json"),
    ("ant", "ant.usda", "ref_fixed.json"),
    ("ant_free", "ant_free.usda", "ref_floating.json"),
]


@pytest.fixture(scope="module", params=ROBOTS, ids=[r[0] for r in ROBOTS])
def robot(request):
    name, usd, ref = request.param
    with open(os.path.join(DATA, name, ref)) as f:
        reference = json.load(f)
    scene = load(os.path.join(DATA, name, usd))
    return scene, reference


def test_one_articulation_with_reference_base_and_dofs(robot):
    scene, ref = robot
    (art,) = scene.articulations
    assert art.fixed_base == (ref["base"] == "fixed")
    assert art.dof_count == ref["n_joint_dofs"]
    assert sorted(n.rsplit("/", 1)[-1] for n in art.dof_names) == sorted(ref["joint_names"])
    # the root link is the reference's base body (its first body frame)
    assert art.root_link.rsplit("/", 1)[-1] == ref["body_frames"][0]


def test_total_mass_matches_reference(robot):
    """Panda masses are authored; the ant's come from capsule and sphere colliders with density."""
    scene, ref = robot
    (art,) = scene.articulations
    assert art.total_mass == pytest.approx(ref["total_mass"], rel=1e-6)


def test_link_masses_match_mujoco_bodies(robot):
    scene, ref = robot
    (art,) = scene.articulations
    masses = dict(zip((p.rsplit("/", 1)[-1] for p in art.links), art.link_masses))
    for name, body in ref["mujoco_bodies"].items():
        if name in masses:
            assert masses[name] == pytest.approx(body["mass"], rel=1e-6, abs=1e-12), name


def test_panda_finger_mimic_from_newton_schema():
    scene = load(os.path.join(DATA, "panda", "panda.usda"))
    (m,) = scene.articulations[0].mimic_joints
    assert m["dof"].endswith("panda_finger_joint2") and m["reference_dof"].endswith("panda_finger_joint1")
    assert m["gearing"] == pytest.approx(-1.0) and m["offset"] == 0.0


def test_ant_newton_joint_attributes():
    scene = load(os.path.join(DATA, "ant", "ant.usda"))
    with open(os.path.join(DATA, "ant", "ref_fixed.json")) as f:
        ref = {j["name"]: j for j in json.load(f)["joints"]}
    for dof in scene.articulations[0].desc.dofs:
        r = ref[dof.name.rsplit("/", 1)[-1]]
        assert dof.armature == pytest.approx(r["armature"], rel=1e-6)
        assert dof.passive_damping == pytest.approx(r["damping"], rel=1e-6)
        np.testing.assert_allclose([dof.lower, dof.upper], r["range"], rtol=1e-6)
    assert scene.time_step == pytest.approx(0.01)  # newton:timeStepsPerSecond = 100
    np.testing.assert_allclose(scene.gravity, [0, 0, -9.81])


def test_cli_semantics_choose_how_the_panda_massless_frames_are_read():
    """panda_link8 and panda_grasptarget author mass 0 and have no collider: PhysX's reading gives them
    1 kg each, the Newton/UsdPhysics reading keeps them massless frames."""
    from click.testing import CliRunner

    from usdart.app.cli import main

    path = os.path.join(DATA, "panda", "panda.usda")
    masses = {}
    for semantics in ("physx", "newton"):
        result = CliRunner().invoke(main, ["inspect", "--json", "--semantics", semantics, path])
        assert result.exit_code == 0, result.output
        art = json.loads(result.output)["articulations"][0]
        masses[semantics] = dict(zip((p.rsplit("/", 1)[-1] for p in art["links"]), art["link_masses"]))
    assert masses["physx"]["panda_link8"] == masses["physx"]["panda_grasptarget"] == 1.0
    assert masses["newton"]["panda_link8"] == masses["newton"]["panda_grasptarget"] == 0.0
    assert masses["physx"]["panda_hand"] == masses["newton"]["panda_hand"] > 0
