"""`usdart inspect --report`: every authored physics attribute with what the import made of it.

The statuses are checked against behaviour measured elsewhere: PhysX reads newton:damping and ignores
PhysxJointAPI (tests/test_physx.py runs ovphysx on both) and newton:contactGap (tests/test_physx_contacts.py),
so the "physx" reading must report those; the "newton" reading uses the joint values; a limit is used by
both; a contact offset is used on a sphere collider (tests/test_contacts.py measures it) and ignored on a body
prim that is no collider."""

from __future__ import annotations

import json

from builders import body, joint, new_stage, root_api, set_attr
from click.testing import CliRunner
from pxr import Sdf, UsdGeom, UsdPhysics

from usdart.app.cli import main
from usdart.usd.import_report import CONTACT_REASON


def stage_file(tmp_path):
    st = new_stage()
    body(st, "/World/arm/base")
    body(st, "/World/arm/link", pos=(1, 0, 0))
    joint(st, "/World/arm/fix", None, "/World/arm/base", kind="fixed")
    hinge = joint(st, "/World/arm/hinge", "/World/arm/base", "/World/arm/link", axis="Y", lp1=(-1, 0, 0))
    root_api(st, "/World/arm")
    set_attr(hinge, "physics:lowerLimit", -45.0)
    set_attr(hinge, "newton:damping", 2.0)
    hinge.AddAppliedSchema("PhysxJointAPI")
    hinge.CreateAttribute("physxJoint:armature", Sdf.ValueTypeNames.Float).Set(0.5)
    link = st.GetPrimAtPath("/World/arm/link")
    link.CreateAttribute("physxCollision:contactOffset", Sdf.ValueTypeNames.Float).Set(0.02)
    ball = UsdGeom.Sphere.Define(st, "/World/arm/link/ball").GetPrim()
    UsdPhysics.CollisionAPI.Apply(ball)
    ball.CreateAttribute("physxCollision:contactOffset", Sdf.ValueTypeNames.Float).Set(0.02)
    ball.CreateAttribute("newton:contactGap", Sdf.ValueTypeNames.Float).Set(0.01)
    path = tmp_path / "stage.usda"
    st.GetRootLayer().Export(str(path))
    return path


def fates(tmp_path, *options):
    result = CliRunner().invoke(main, ["inspect", str(stage_file(tmp_path)), "--report", "--json", *options])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["import_report"]
    return {(e["prim"], a["name"]): (a["status"], a["reason"]) for e in report for a in e["attributes"]}


def test_report_says_which_authored_attributes_the_physx_reading_used_and_why_not(tmp_path):
    fate = fates(tmp_path)
    assert fate["/World/arm/hinge", "physics:lowerLimit"] == ("used", "")
    assert fate["/World/arm/hinge", "physics:axis"] == ("used", "")
    assert fate["/World/arm/hinge", "newton:damping"] == ("used", "")
    status, reason = fate["/World/arm/link/ball", "newton:contactGap"]
    assert status == "ignored" and "PhysX does not read this Newton attribute" in reason
    status, reason = fate["/World/arm/hinge", "physxJoint:armature"]
    assert status == "ignored" and "PhysxJointAxisAPI" in reason
    assert fate["/World/arm/link", "physxCollision:contactOffset"] == ("ignored", CONTACT_REASON)
    assert fate["/World/arm/link/ball", "physxCollision:contactOffset"] == ("used", "")
    assert fate["/World/arm/link", "physics:mass"] == ("used", "")


def test_report_with_the_newton_reading_uses_the_newton_and_physx_joint_values(tmp_path):
    fate = fates(tmp_path, "--semantics", "newton")
    assert fate["/World/arm/hinge", "newton:damping"] == ("used", "")
    assert fate["/World/arm/hinge", "physxJoint:armature"] == ("used", "")


def test_report_table_counts_and_lists_them(tmp_path):
    result = CliRunner().invoke(main, ["inspect", str(stage_file(tmp_path)), "--report"])
    assert result.exit_code == 0, result.output
    assert "import report:" in result.output and " ignored (values in stage units" in result.output
    assert "  ignored  newton:contactGap = 0.01  (PhysX does not read this Newton attribute" in result.output
