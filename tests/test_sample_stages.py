"""The bundled sample stages import as the seeds describe them, through `usdart inspect --json`."""

import json
import math
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from usdart.app.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "sample_stages")


def inspect(name):
    result = CliRunner().invoke(main, ["inspect", os.path.join(SAMPLES, name), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_every_sample_stage_inspects_as_table_and_json():
    names = sorted(n for n in os.listdir(SAMPLES) if n.endswith(".usda"))
    assert len(names) >= 6
    for name in names:
        table = CliRunner().invoke(main, ["inspect", os.path.join(SAMPLES, name)])
        assert table.exit_code == 0 and ("articulation" in table.output or "free bodies" in table.output), name
        assert inspect(name)["articulations"] or inspect(name)["free_bodies"], name


def test_two_link_arm_is_fixed_at_the_base():
    (art,) = inspect("two_link_arm.usda")["articulations"]
    assert art["fixed_base"] and art["root_link"] == "/World/rigidBody0"
    assert art["links"] == ["/World/rigidBody0", "/World/rigidBody1"] and art["dof_count"] == 1


def test_floating_body_is_a_one_link_floating_articulation():
    (art,) = inspect("floating_body.usda")["articulations"]
    assert not art["fixed_base"] and art["links"] == ["/World/rigidBody"] and art["dof_count"] == 0
    assert art["total_mass"] == pytest.approx(2.0)


def test_square_loop_has_one_loop_joint():
    (art,) = inspect("square_loop.usda")["articulations"]
    assert art["loop_joints"] == ["/World/loopJoint"] and len(art["links"]) == 4 and art["dof_count"] == 3


def test_gear_mimic_joint_and_sphere_masses():
    summary = inspect("gear.usda")
    (art,) = summary["articulations"]
    (mimic,) = art["mimic_joints"]
    assert mimic["gearing"] == pytest.approx(5.0) and mimic["reference_dof"] == "/World/revoluteJoint1"
    sphere = 1000 * 4 / 3 * math.pi * 0.05**3
    masses = dict(zip(art["links"], art["link_masses"]))
    assert masses["/World/rigidBody0"] == pytest.approx(sphere) and masses["/World/rigidBody1"] == pytest.approx(sphere)


def test_arm_with_gripper_root_on_ancestor():
    (art,) = inspect("arm_with_gripper.usda")["articulations"]
    assert art["fixed_base"] and art["root_link"] == "/World/robot/base" and art["dof_count"] == 9


def test_ragdoll_root_from_eccentricity():
    (art,) = inspect("ragdoll.usda")["articulations"]
    assert not art["fixed_base"] and art["root_link"] == "/World/ragdoll/spine"


def test_sample_script_reproduces_the_bundled_stages(tmp_path):
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_sample_stages.py"), str(tmp_path)], check=True)
    for name in os.listdir(SAMPLES):
        with open(os.path.join(SAMPLES, name)) as a, open(tmp_path / name) as b:
            assert a.read() == b.read(), name


def test_the_contacts_sample_lists_its_colliders():
    """inspect counts the shapes that collide by kind: the contacts sample's stack and tilted box, its two
    balls, its capsule and its static ground plane."""
    assert inspect("contacts.usda")["colliders"] == {
        "sphere": 2, "capsule": 1, "box": 4, "cylinder": 0, "cone": 0, "convex": 0, "mesh": 0, "plane": 1,
        "static": 1,
    }  # fmt: skip
    table = CliRunner().invoke(main, ["inspect", os.path.join(SAMPLES, "contacts.usda")])
    assert "colliders: 2 spheres, 1 capsule, 4 boxes, 1 plane (1 static)" in table.output
