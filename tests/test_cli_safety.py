"""Hostile and careless command lines: outputs that are input files, runs the stage's metadata makes
absurd, timeCodesPerSecond = 0, folders given as stages, non-finite JSON, Ctrl-C at any moment, and the
temporary files of killed runs. Every check reads the exit code, the one line on stderr and the files'
bytes."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import usdart
from usdart.app import output_files, simulation
from usdart.app.cli import main

ROOT = Path(__file__).parent.parent
ARM = ROOT / "sample_stages/arm_with_gripper.usda"
TWO_LINK = (ROOT / "sample_stages/two_link_arm.usda").read_text()


@pytest.fixture
def runner():
    return CliRunner()


def error_line(result) -> str:
    """The one line a refused command prints (exit code 2, nothing else, no traceback)."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("usdart: error: "), result.stderr
    return lines[0].removeprefix("usdart: error: ")


def snapshot(folder: Path) -> dict:
    """Every file under `folder` (hidden ones too) with the hash of its bytes; symbolic links as links."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            out[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[str(path)] = "folder"
    return out


def with_metadata(text: str, lines: str) -> str:
    """A copy of a sample stage with more stage metadata lines."""
    return text.replace('    upAxis = "Z"\n', f'    upAxis = "Z"\n{lines}\n', 1)


# ---- 1. the output is never a file of the input -----------------------------------------------------------
@pytest.fixture
def robot(tmp_path) -> Path:
    """robot.usda sublayers phys.usda (a simulatable arm) and a missing file, and references a part that
    has a payload; a symbolic link points at phys.usda."""
    (tmp_path / "phys.usda").write_text(TWO_LINK)
    (tmp_path / "robot.usda").write_text(
        "#usda 1.0\n(\n    subLayers = [@./phys.usda@, @missing.usda@]\n)\n\n"
        'def Xform "Extra" (\n    prepend references = @parts/part.usda@\n)\n{\n}\n'
    )
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts/part.usda").write_text(
        '#usda 1.0\n(\n    defaultPrim = "Part"\n)\n\n'
        'def Xform "Part" (\n    prepend payload = @../heavy.usda@\n)\n{\n}\n'
    )
    (tmp_path / "heavy.usda").write_text('#usda 1.0\n(\n    defaultPrim = "Heavy"\n)\n\ndef Xform "Heavy"\n{\n}\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.usda").symlink_to("phys.usda")
    return tmp_path / "robot.usda"


LAYER_CASES = {
    # output as given -> the input file it is (None: the root)
    "root": ("robot.usda", None),
    "sublayer": ("phys.usda", "phys.usda"),
    "sublayer spelled another way": ("sub/../phys.usda", "phys.usda"),
    "symbolic link to a sublayer": ("link.usda", "phys.usda"),
    "reference": ("parts/part.usda", "parts/part.usda"),
    "payload of a reference": ("heavy.usda", "heavy.usda"),
    "missing sublayer": ("missing.usda", "missing.usda"),
}


def expected_refusal(folder: Path, output: str, layer: str | None) -> str:
    target = os.path.join(os.path.realpath(os.path.dirname(folder / output)), os.path.basename(output))
    if layer is None:
        return f"{target}: is the input file; usdart never overwrites its input"
    alias = "" if str(folder / layer) == target else f"{folder / layer}, "
    return (
        f"{target}: is {alias}a sublayer, reference or payload of the input {folder / 'robot.usda'}; "
        "usdart never overwrites its input"
    )


@pytest.mark.parametrize("case", LAYER_CASES)
def test_simulate_refuses_every_file_of_the_input_before_loading(runner, robot, monkeypatch, case):
    output, layer = LAYER_CASES[case]
    folder = robot.parent
    before = snapshot(folder)
    loaded = []
    monkeypatch.setattr(usdart.scene, "load", lambda *a, **k: loaded.append(a))
    result = runner.invoke(main, ["simulate", str(robot), "-o", str(folder / output), "--steps", "2"])
    assert error_line(result) == expected_refusal(folder, output, layer)
    assert loaded == []  # refused before the stage was loaded
    assert snapshot(folder) == before


@pytest.mark.parametrize("case", ["sublayer", "symbolic link to a sublayer", "payload of a reference"])
def test_python_simulate_and_recorder_refuse_files_of_the_input(robot, case):
    output, layer = LAYER_CASES[case]
    folder = robot.parent
    before = snapshot(folder)
    expected = expected_refusal(folder, output, layer)
    with pytest.raises(usdart.UsdartError) as path_input:
        usdart.simulate(str(robot), output=str(folder / output), steps=2)
    scene = usdart.load(str(robot))
    with pytest.raises(usdart.UsdartError) as scene_input:
        usdart.simulate(scene, output=str(folder / output), steps=2)
    recorder = usdart.Recorder(scene)
    recorder.record()
    with pytest.raises(usdart.UsdartError) as recorder_save:
        recorder.save(folder / output)
    assert str(path_input.value) == str(scene_input.value) == str(recorder_save.value) == expected
    assert snapshot(folder) == before


def test_the_refused_output_works_elsewhere(runner, robot):
    """The same input simulates into a new file (so the refusals above are about the output alone)."""
    result = runner.invoke(main, ["simulate", str(robot), "-o", str(robot.parent / "out.usda"), "--steps", "2", "-q"])
    assert result.exit_code == 0, result.output
    assert (robot.parent / "out.usda").read_text().count("@robot.usda@") == 1


def test_author_refuses_a_sublayer_as_output_and_edits_the_root_in_place(runner, robot):
    folder = robot.parent
    before = snapshot(folder)
    args = ["author", "drive", str(robot), "/World/revoluteJoint", "--stiffness", "10", "--damping", "1"]
    for output, layer in (LAYER_CASES["sublayer"], LAYER_CASES["symbolic link to a sublayer"]):
        assert error_line(runner.invoke(main, [*args, "-o", str(folder / output)])) == expected_refusal(
            folder, output, layer
        )
    assert snapshot(folder) == before
    in_place = runner.invoke(main, [*args, "-o", str(robot)])  # -o STAGE is editing in place
    assert in_place.exit_code == 0, in_place.output
    assert in_place.stdout == f"wrote {os.path.realpath(robot)}\n"
    assert "PhysicsDriveAPI:angular" in robot.read_text()
    assert {p: h for p, h in snapshot(folder).items() if p != str(robot)} == {
        p: h for p, h in before.items() if p != str(robot)
    }


def test_plot_refuses_to_write_over_a_file_of_its_input(runner, robot):
    folder = robot.parent
    before = snapshot(folder)
    output, layer = LAYER_CASES["sublayer"]
    result = runner.invoke(main, ["plot", str(robot), "-o", str(folder / output)])
    assert error_line(result) == expected_refusal(folder, output, layer)
    assert snapshot(folder) == before


def test_broken_dependencies_do_not_break_the_check(tmp_path, capfd):
    (tmp_path / "garbage.usda").write_text("#usda 1.0\n(((")
    (tmp_path / "folder.usda").mkdir()
    stage = tmp_path / "broken.usda"
    stage.write_text("#usda 1.0\n(\n    subLayers = [@garbage.usda@, @folder.usda@, @gone.usda@, @no_format.xyz@]\n)\n")
    assert output_files.check_output(tmp_path / "out.usda", stage) == str(tmp_path / "out.usda")
    assert capfd.readouterr() == ("", "")  # quiet: the loader reports broken layers, not this check
    for name in ("garbage.usda", "gone.usda"):
        with pytest.raises(usdart.UsdartError, match="^" + re.escape(f"{tmp_path / name}: is a sublayer")):
            output_files.check_output(tmp_path / name, stage)
    # a missing input is the loader's to report
    assert output_files.check_output(tmp_path / "out.usda", tmp_path / "nope.usda") == str(tmp_path / "out.usda")


# ---- 2. runs the stage's metadata makes absurd are refused before the first step ----------------------------
@pytest.fixture
def no_stepping(monkeypatch):
    def step(self, n=1):
        raise AssertionError("a refused run must not step")

    monkeypatch.setattr(usdart.Scene, "step", step)


def huge(tmp_path, lines) -> Path:
    path = tmp_path / "huge.usda"
    path.write_text(with_metadata(TWO_LINK, lines))
    return path


@pytest.mark.parametrize(
    "metadata, rate, steps",
    [
        ("    endTimeCode = 1e12", 60, "2,500,000,000,000 steps (4.16667e+10 s at 60 Hz)"),  # 24 codes a second
        ("", 1_000_000_000, "2,000,000,000 steps (2 s at 1e+09 Hz)"),  # the default 2 s at the stage's rate
    ],
)
def test_too_many_steps_from_the_stage(runner, tmp_path, no_stepping, metadata, rate, steps):
    stage = tmp_path / "huge.usda"
    text = with_metadata(TWO_LINK, metadata)
    stage.write_text(text.replace("timeStepsPerSecond = 60", f"timeStepsPerSecond = {rate}"))
    result = runner.invoke(main, ["simulate", str(stage), "-o", str(tmp_path / "out.usda")])
    assert error_line(result) == (
        f"{stage}: the stage's metadata asks for {steps}, more than 10,000,000; give --duration or --steps"
    )
    with pytest.raises(usdart.UsdartError) as python_api:
        usdart.simulate(str(stage))
    assert str(python_api.value) == error_line(result)
    assert sorted(os.listdir(tmp_path)) == ["huge.usda"]


def test_too_many_frames_from_the_time_range_and_rate(runner, tmp_path, no_stepping):
    stage = huge(tmp_path, "    endTimeCode = 1e12\n    timeCodesPerSecond = 1e9")
    result = runner.invoke(main, ["simulate", str(stage), "-o", str(tmp_path / "out.usda")])
    assert error_line(result) == (
        f"{stage}: the stage's metadata asks for 1,000,000,000,001 frames (1000 s at 1e+09 fps), "
        "more than 1,000,000; give --fps, --duration or --steps"
    )


def test_given_steps_are_honoured_but_frames_must_fit_in_memory(runner, tmp_path, no_stepping):
    stage = huge(tmp_path, "    endTimeCode = 1e12\n    timeCodesPerSecond = 1e9")
    result = runner.invoke(main, ["simulate", str(stage), "-o", str(tmp_path / "out.usda"), "--steps", "600"])
    found = re.fullmatch(
        re.escape(f"{stage}: recording 10,000,000,001 frames (10 s at 1e+09 fps) needs about ")
        + r"(\S+) GB of memory and (\S+) GB is available; give a lower --fps \(or a shorter --duration or fewer "
        r"--steps\)",
        error_line(result),
    )
    assert found and float(found[1]) > float(found[2])


def test_memory_estimate_uses_the_recorded_frame_size(tmp_path, monkeypatch, no_stepping):
    """A run that fits the step and frame bounds is refused when its frames need more than is available."""
    stage = huge(tmp_path, "")
    scene = usdart.load(str(stage))
    per_frame = simulation.Recorder(scene).frame_bytes()
    assert 2 * 12 * 8 < per_frame < 4000  # two links' poses in float64, plus the Python objects holding them
    monkeypatch.setattr(simulation, "available_memory", lambda: 1000 * per_frame)
    with pytest.raises(usdart.UsdartError, match=r"recording 1,201 frames \(20 s at 60 fps\)"):
        simulation.simulate(scene, duration=20.0)
    monkeypatch.setattr(simulation.Scene, "step", lambda self, n=1: None)
    assert simulation.simulate(scene, duration=10.0).frames == 601  # fits: runs


def test_given_steps_and_fps_run(runner, tmp_path):
    stage = huge(tmp_path, "    endTimeCode = 1e12\n    timeCodesPerSecond = 1e9")
    out = tmp_path / "out.usda"
    result = runner.invoke(main, ["simulate", str(stage), "-o", str(out), "--steps", "6", "--fps", "60", "-q"])
    assert result.exit_code == 0, result.output
    assert out.exists()


# ---- 3. timeCodesPerSecond = 0 ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["0", "-24"])
def test_time_codes_per_second_that_is_not_positive(runner, tmp_path, value, no_stepping):
    stage = tmp_path / "zero.usda"
    stage.write_text(with_metadata(TWO_LINK, f"    timeCodesPerSecond = {value}"))
    before = snapshot(tmp_path)
    expected = (
        f"{stage}: timeCodesPerSecond = {value} in the stage metadata; it must be a positive number "
        "(USD divides time codes by it)"
    )
    for extra in ([], ["--fps", "30", "--steps", "3"]):  # the output would sublayer the input all the same
        result = runner.invoke(main, ["simulate", str(stage), "-o", str(tmp_path / "out.usda"), *extra])
        assert error_line(result) == expected
    assert error_line(runner.invoke(main, ["validate", str(stage)])) == expected
    with pytest.raises(usdart.UsdartError) as recorder:
        usdart.Recorder(usdart.load(str(stage)), fps=30)
    assert str(recorder.value) == expected
    assert snapshot(tmp_path) == before


# ---- 4. a folder where a stage (or an output) is expected ---------------------------------------------------
STAGE_COMMANDS = {
    "inspect": [],
    "validate": [],
    "simulate": ["-o", "{tmp}/out.usda"],
    "plot": [],
    "author joint-state": ["/World/j", "--position", "0"],
    "author drive": ["/World/j", "--stiffness", "1", "--damping", "1"],
    "author drive-target": ["/World/j", "--position", "0"],
    "author articulation-root": ["/World"],
    "author exclude": ["/World/j"],
}


@pytest.mark.parametrize("command", STAGE_COMMANDS)
def test_a_folder_given_as_the_stage(runner, tmp_path, command):
    folder = tmp_path / "x.usda"
    folder.mkdir()
    before = snapshot(tmp_path)
    args = [*command.split(), str(folder), *(a.format(tmp=tmp_path) for a in STAGE_COMMANDS[command])]
    assert error_line(runner.invoke(main, args)).startswith(f"{folder}: is a folder")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ["simulate", "author drive"])
def test_a_folder_given_as_the_output(runner, tmp_path, command):
    stage = tmp_path / "arm.usda"
    stage.write_text(TWO_LINK)
    (tmp_path / "out.usda").mkdir()
    before = snapshot(tmp_path)
    args = ["author", "drive", str(stage), "/World/revoluteJoint", "--stiffness", "1", "--damping", "1"]
    args = args if command == "author drive" else ["simulate", str(stage), "--steps", "2"]
    result = runner.invoke(main, [*args, "-o", str(tmp_path / "out.usda")])
    assert error_line(result) == f"{tmp_path / 'out.usda'}: is a folder"
    assert snapshot(tmp_path) == before


# ---- 5. inspect --json is strict JSON ------------------------------------------------------------------------
def test_inspect_json_has_no_nan_or_infinity(runner, monkeypatch):
    summary = usdart.Scene.summary

    def with_non_finite(self):
        s = summary(self)
        s["scene"]["time_step"] = math.inf
        s["scene"]["gravity"] = [-math.inf, 0.0, math.nan]
        s["articulations"][0]["link_masses"][0] = math.inf
        return s

    monkeypatch.setattr(usdart.Scene, "summary", with_non_finite)
    result = runner.invoke(main, ["inspect", str(ARM), "--json"])
    assert result.exit_code == 0, result.output

    def refuse(name):
        raise AssertionError(f"{name} is not JSON")

    data = json.loads(result.stdout, parse_constant=refuse)
    assert data["scene"]["time_step"] == "inf"
    assert data["scene"]["gravity"] == ["-inf", 0.0, None]
    assert data["articulations"][0]["link_masses"][0] == "inf"
    assert (
        data["articulations"][0]["link_masses"][1]
        == summary(usdart.load(str(ARM)))["articulations"][0]["link_masses"][1]
    )
    help_text = runner.invoke(main, ["inspect", "--help"]).stdout
    assert '"inf" and "-inf"' in " ".join(help_text.split())


# ---- 6. Ctrl-C and SIGTERM at any moment ----------------------------------------------------------------------
SLOW_WRITE = """
import os, sys, time
from usdart.app import output_files, simulation
def slow_export(layer, target):
    def write(tmp):
        with open(tmp, "w") as f:
            f.write("#usda 1.0\\n(")  # half a file
        usd_tmp = os.path.splitext(tmp)[0] + ".Ab12Cd"  # as Sdf's Export names its own temporary file
        open(usd_tmp, "w").close()
        print("writing", flush=True)
        time.sleep(60)
    output_files.write_atomically(target, write)
simulation.export_atomic = slow_export
"""


def start_usdart(args, cwd, cache=None, before=""):
    """`usdart ARGS` as the `usdart` script runs it (main() called as a program), with Python's Ctrl-C
    handler even under a parent that ignores SIGINT (a background job, a pytest-xdist worker). Returns once
    the child printed `ready` on stdout, right after the CLI set up its interrupt guard: `import usdart`
    itself (numba's import) comes before any code of the CLI runs and is not covered."""
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import usdart.app.cli as cli\n" + before + "\nguard = cli._guard_interrupts\n"
        "cli._guard_interrupts = lambda: (guard(), print('ready', flush=True))\n"
        f"cli.main({[str(a) for a in args]!r})\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache)) if cache else None
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env
    )
    assert proc.stdout.readline() == "ready\n", proc.stderr.read()
    return proc


def stop(proc, sig, wait_for=None, delay=0.0):
    """Send `sig` after `delay` seconds (or once stdout says `wait_for`); returns (stdout, stderr, seconds
    from the signal to the exit)."""
    if wait_for:
        assert proc.stdout.readline() == wait_for + "\n", proc.stderr.read()
    time.sleep(delay)
    proc.send_signal(sig)
    sent = time.perf_counter()
    out, err = proc.communicate(timeout=60)
    return out, err, time.perf_counter() - sent


@pytest.mark.parametrize("delay", [0.0, 1.0, 3.0, 6.0])  # importing pxr, loading, numba compiling
def test_ctrl_c_while_starting_and_compiling(tmp_path, delay):
    work = tmp_path / "work"
    work.mkdir()
    stage = work / "arm.usda"
    stage.write_bytes(ARM.read_bytes())
    before = snapshot(work)
    args = ["simulate", stage, "-o", work / "out.usda", "--duration", "100"]
    proc = start_usdart(args, work, tmp_path / "cache")
    out, err, took = stop(proc, signal.SIGINT, delay=delay)
    assert (proc.returncode, err, out) == (130, "usdart: interrupted\n", "")
    assert took < 5.0
    assert snapshot(work) == before  # no output, no temporary file, the input as it was


def test_sigterm(tmp_path):
    stage = tmp_path / "arm.usda"
    stage.write_bytes(ARM.read_bytes())
    before = snapshot(tmp_path)
    proc = start_usdart(["simulate", stage, "-o", tmp_path / "out.usda", "--duration", "1e4"], tmp_path)
    out, err, took = stop(proc, signal.SIGTERM, delay=2.0)
    assert (proc.returncode, err, out, took < 5.0) == (143, "usdart: terminated\n", "", True)
    assert snapshot(tmp_path) == before


def test_ctrl_c_while_writing_removes_both_temporary_files_and_keeps_the_old_output(tmp_path):
    stage = tmp_path / "arm.usda"
    stage.write_bytes(ARM.read_bytes())
    (tmp_path / "out.usda").write_text("the previous output\n")
    before = snapshot(tmp_path)
    proc = start_usdart(["simulate", stage, "-o", tmp_path / "out.usda", "--steps", "3"], tmp_path, before=SLOW_WRITE)
    out, err, took = stop(proc, signal.SIGINT, wait_for="writing")
    assert (proc.returncode, err, out, took < 5.0) == (130, "usdart: interrupted\n", "", True)
    assert snapshot(tmp_path) == before


def test_ctrl_c_ignored_by_the_parent_stays_ignored(tmp_path):
    """A background job (`usdart ... &` in a script) is not stopped by the terminal's Ctrl-C."""
    stage = tmp_path / "arm.usda"
    stage.write_bytes(ARM.read_bytes())
    proc = start_usdart(
        ["simulate", stage, "-o", tmp_path / "out.usda", "--steps", "240", "-q"],
        tmp_path,
        before="signal.signal(signal.SIGINT, signal.SIG_IGN)",
    )
    out, err, _ = stop(proc, signal.SIGINT, delay=0.5)
    assert (proc.returncode, out, err) == (0, "", "")
    assert (tmp_path / "out.usda").exists()


# ---- 7. temporary files of killed runs ---------------------------------------------------------------------
def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_killed_run_leaves_temporary_files_that_the_next_run_removes(runner, tmp_path):
    stage = tmp_path / "arm.usda"
    stage.write_bytes(ARM.read_bytes())
    proc = start_usdart(["simulate", stage, "-o", tmp_path / "out.usda", "--steps", "3"], tmp_path, before=SLOW_WRITE)
    stop(proc, signal.SIGKILL, wait_for="writing")
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert left == [f".out.{proc.pid}.usdart-tmp.Ab12Cd", f".out.{proc.pid}.usdart-tmp.usda"]
    # the next run into the folder removes them once nothing has touched them for a while
    fresh = runner.invoke(main, ["simulate", str(stage), "-o", str(tmp_path / "next.usda"), "--steps", "2", "-q"])
    assert fresh.exit_code == 0 and sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == left
    old = time.time() - output_files.STALE_AFTER - 1
    for name in left:
        os.utime(tmp_path / name, (old, old))
    again = runner.invoke(main, ["simulate", str(stage), "-o", str(tmp_path / "next.usda"), "--steps", "2", "-q"])
    assert again.exit_code == 0, again.output
    assert sorted(os.listdir(tmp_path)) == ["arm.usda", "next.usda"]


def test_stale_temporary_files_go_and_live_ones_stay(runner, tmp_path):
    stage = tmp_path / "arm.usda"
    stage.write_bytes(ARM.read_bytes())
    dead, alive = dead_pid(), os.getppid()
    names = {
        f".out.{dead}.usdart-tmp.usda": False,  # ours, writer gone
        f".out.{dead}.usdart-tmp.x9Y8z7": False,  # USD's for ours, writer gone
        f".robot.v2.{dead}.usdart-tmp.usdc": False,  # dots in the stem
        f".out.{alive}.usdart-tmp.usda": True,  # a writer still running
        f".notes.{dead}.txt": True,  # not our pattern
        f"out.{dead}.usdart-tmp.usda": True,  # not hidden: not ours
    }
    old = time.time() - output_files.STALE_AFTER - 1
    for name in names:
        (tmp_path / name).write_text("partial")
        os.utime(tmp_path / name, (old, old))
    result = runner.invoke(main, ["simulate", str(stage), "-o", str(tmp_path / "out.usda"), "--steps", "2", "-q"])
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir(tmp_path)) == sorted(["arm.usda", "out.usda", *(n for n, stays in names.items() if stays)])
