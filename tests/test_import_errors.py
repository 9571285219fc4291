"""Bad input: a clear error naming the prim path; the CLI prints one line and exits with code 2."""

import math

import pytest
from builders import body, chain, new_stage, root_api, set_attr
from click.testing import CliRunner
from pxr import Gf, Sdf, UsdPhysics

import usdart
from usdart.app.cli import main


def import_error(stage):
    with pytest.raises(usdart.UsdartError) as info:
        usdart.load(stage, semantics="newton")  # massless bodies are refused, not given 1 kg
    return str(info.value)


def cli(*args):
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_missing_file(tmp_path):
    code, out = cli("inspect", str(tmp_path / "nope.usda"))
    assert code == 2 and "no such file" in out and "Traceback" not in out
    assert len(out.strip().splitlines()) == 1


def test_usd_syntax_error(tmp_path):
    bad = tmp_path / "bad.usda"
    bad.write_text('#usda 1.0\ndef Xform "World" {\n  double3 xformOp:translate = (0, 0\n}\n')
    code, out = cli("inspect", str(bad))
    assert code == 2 and "cannot be read as USD" in out and str(bad) in out
    assert len(out.strip().splitlines()) == 1


def test_joint_target_that_does_not_exist():
    st = new_stage()
    chain(st, "/World/a", ["b0", "b1"])
    st.GetPrimAtPath("/World/a/j1").GetRelationship("physics:body1").SetTargets([Sdf.Path("/World/a/typo")])
    root_api(st, "/World/a/b0")
    msg = import_error(st)
    assert msg.startswith("/World/a/j1:") and "/World/a/typo" in msg and "does not exist" in msg


def test_zero_mass_link_that_a_joint_must_move():
    st = new_stage()
    chain(st, "/World/a", ["b0", "b1"])
    UsdPhysics.MassAPI(st.GetPrimAtPath("/World/a/b1")).GetMassAttr().Set(0.0)
    UsdPhysics.MassAPI(st.GetPrimAtPath("/World/a/b1")).GetDiagonalInertiaAttr().Set(Gf.Vec3f(0, 0, 0))
    root_api(st, "/World/a/b0")
    msg = import_error(st)
    assert msg.startswith("/World/a/b1:") and "no mass or inertia" in msg


def test_massless_welded_frame_is_fine():
    st = new_stage()
    chain(st, "/World/a", ["b0", "b1", "tip"])
    st.GetPrimAtPath("/World/a/j2").SetTypeName("PhysicsFixedJoint")
    UsdPhysics.MassAPI(st.GetPrimAtPath("/World/a/tip")).GetMassAttr().Set(0.0)
    root_api(st, "/World/a/b0")
    assert usdart.load(st, semantics="newton").articulations[0].link_masses.tolist() == [1.0, 1.0, 0.0]


def test_negative_mass():
    st = new_stage()
    body(st, "/World/b", mass=-1.0)
    root_api(st, "/World/b")
    assert import_error(st).startswith("/World/b:")


def test_inertia_not_positive_definite():
    st = new_stage()
    body(st, "/World/b", inertia=(1.0, -2.0, 1.0))
    root_api(st, "/World/b")
    msg = import_error(st)
    assert msg.startswith("/World/b:") and "diagonalInertia" in msg


def test_free_body_without_mass():
    st = new_stage()
    body(st, "/World/b", mass=None)
    msg = import_error(st)
    assert msg.startswith("/World/b:") and "zero mass" in msg


def test_unsupported_d6_combination():
    st = new_stage()
    chain(st, "/World/a", ["b0", "b1"])
    st.GetPrimAtPath("/World/a/j1").SetTypeName("PhysicsJoint")  # no limits: six free axes
    root_api(st, "/World/a/b0")
    msg = import_error(st)
    assert msg.startswith("/World/a/j1:") and "D6 joint" in msg


def test_nan_attribute():
    st = new_stage()
    chain(st, "/World/a", ["b0", "b1"])
    set_attr(st.GetPrimAtPath("/World/a/j1"), "physics:upperLimit", math.nan)
    root_api(st, "/World/a/b0")
    msg = import_error(st)
    assert msg.startswith("/World/a/j1:") and "NaN" in msg and "physics:upperLimit" in msg


def test_root_api_on_prim_without_bodies():
    st = new_stage()
    chain(st, "/World/a", ["b0", "b1"])
    st.DefinePrim("/World/empty", "Xform")
    root_api(st, "/World/empty")
    msg = import_error(st)
    assert msg.startswith("/World/empty:") and "no rigid bodies" in msg


def test_root_api_on_internal_joint():
    st = new_stage()
    chain(st, "/World/a", ["b0", "b1"])
    root_api(st, "/World/a/j1")
    assert import_error(st).startswith("/World/a/j1:")


def test_cli_reports_import_error_in_one_line(tmp_path):
    st = new_stage()
    body(st, "/World/b", mass=-1.0)
    root_api(st, "/World/b")
    path = tmp_path / "neg.usda"
    st.GetRootLayer().Export(str(path))
    code, out = cli("inspect", str(path))
    assert code == 2 and out.strip().startswith("usdart: error: /World/b:") and len(out.strip().splitlines()) == 1
