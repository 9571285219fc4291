"""`usdart sweep`: every run of a grid or of random draws equals the same run done alone with `usdart
simulate` (bit for bit), on an embedded cluster, on a scheduler started apart, with a worker killed
mid-sweep, and resumed; and the summary metrics against their definitions."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from pxr import Sdf, Usd

import usdart
from usdart.app.cli import main
from usdart.app.sweep_plan import Run, parse_random, plan
from usdart.app.sweep_task import open_run_stage
from usdart.errors import UsdartError

pytest.importorskip("dask.distributed")
pq = pytest.importorskip("pyarrow.parquet")

SAMPLE = Path(__file__).resolve().parent.parent / "sample_stages" / "arm_with_gripper.usda"
JOINT = "/World/robot/joints/joint1"
STIFFNESS = f"{JOINT}.drive:angular:physics:stiffness"
DAMPING = f"{JOINT}.drive:angular:physics:damping"
DURATION = 0.5


@pytest.fixture(scope="module")
def turning_arm(tmp_path_factory) -> Path:
    """The arm sample with joint1 driven to -60 degrees: its gains decide how it gets there."""
    folder = tmp_path_factory.mktemp("sweep_stage")
    stage = Usd.Stage.Open(Sdf.Layer.OpenAsAnonymous(str(SAMPLE)))  # the file's own layer stays as on disk
    stage.GetPrimAtPath(JOINT).GetAttribute("drive:angular:physics:targetPosition").Set(-60.0)
    stage.GetRootLayer().Export(str(folder / "turning.usda"))
    return folder / "turning.usda"


def table(out_dir: Path) -> list[dict]:
    return pq.read_table(out_dir / "runs.parquet").to_pylist()


def run_alone(stage_path: Path, run: Run, folder: Path, duration: float) -> usdart.Scene:
    """The run as a user would do it without a sweep: edit a copy of the stage file, `usdart.simulate` it."""
    layer = Sdf.Layer.OpenAsAnonymous(str(stage_path))  # not the file's layer: that stays as it is
    stage = Usd.Stage.Open(layer)
    for key, value in run.values.items():
        path = Sdf.Path(key)
        stage.GetPrimAtPath(path.GetPrimPath()).GetAttribute(path.name).Set(value)
    edited = folder / f"{run.run_id}.usda"
    layer.Export(str(edited))
    return usdart.simulate(str(edited), duration=duration).scene


def assert_rows_equal_runs_alone(stage_path, rows, runs, folder, duration=DURATION):
    by_id = {row["run_id"]: row for row in rows}
    for run in runs:
        row = by_id[run.run_id]
        assert row["status"] == "ok"
        art = run_alone(stage_path, run, folder, duration).articulations[0]
        for k, name in enumerate(art.dof_names):
            assert row[f"q:{name}"] == art.state.q[0, k]  # bit for bit
            assert row[f"qd:{name}"] == art.state.qd[0, k]


def test_a_gain_grid_on_a_local_cluster_equals_each_run_alone(turning_arm, tmp_path):
    out = tmp_path / "grid"
    sets = [f"{STIFFNESS}=30,100,300,1000", f"{DAMPING}=1,5,20,60"]
    result = CliRunner().invoke(
        main,
        ["sweep", str(turning_arm), "-o", str(out), *sum((["--set", s] for s in sets), []), "--duration", "0.5"]
        + ["--workers", "2", "--batch", "5", "--save-stages", "-q"],
    )
    assert result.exit_code == 0, result.output
    rows = table(out)
    runs = plan(sets)
    assert [r["run_id"] for r in rows] == [r.run_id for r in runs]  # 16 rows, in grid order
    assert_rows_equal_runs_alone(turning_arm, rows, runs, tmp_path)
    final = [r[f"q:{JOINT}"] for r in rows]
    assert len(set(final)) == 16 and np.ptp(final) > 0.5  # the gains matter: sixteen different motions
    # the saved stage of a run is what `usdart simulate -o` writes for it, with the run's values
    run = runs[5]
    alone = tmp_path / "alone.usda"
    edited = tmp_path / f"{run.run_id}.usda"
    assert (
        CliRunner().invoke(main, ["simulate", str(edited), "-o", str(alone), "--duration", "0.5", "-q"]).exit_code == 0
    )
    saved = Usd.Stage.Open(str(out / "stages" / f"{run.run_id}.usda"))
    reference = Usd.Stage.Open(str(alone))
    assert saved.GetAttributeAtPath(STIFFNESS).Get() == run.values[STIFFNESS]
    for path in (f"{JOINT}.state:angular:physics:position", "/World/robot/hand.xformOp:orient"):
        a, b = saved.GetAttributeAtPath(path), reference.GetAttributeAtPath(path)
        assert a.GetTimeSamples() == b.GetTimeSamples() and len(a.GetTimeSamples()) > 10
        assert all(a.Get(t) == b.Get(t) for t in a.GetTimeSamples())


def test_random_samples_are_reproducible_and_equal_each_run_alone(turning_arm, tmp_path):
    randoms = [f"{STIFFNESS}=loguniform(20,2000)", f"{DAMPING}=uniform(0.5,50)"]
    frame = usdart.sweep(
        str(turning_arm), str(tmp_path / "random"), random=randoms, samples=64, seed=7, duration=DURATION, workers=1
    )
    runs = plan(randoms=randoms, samples=64, seed=7)
    assert list(frame["run_id"]) == [r.run_id for r in runs] and list(frame["status"]) == ["ok"] * 64
    stiffness = np.array(frame[STIFFNESS], float)
    assert 20 <= stiffness.min() and stiffness.max() <= 2000 and len(set(stiffness)) == 64
    assert plan(randoms=randoms, samples=64, seed=7) == runs  # the same draws again
    assert plan(randoms=randoms, samples=64, seed=8)[0].values != runs[0].values
    rows = [dict(zip(frame.keys(), values)) for values in zip(*(list(frame[c]) for c in frame.keys()))]
    assert_rows_equal_runs_alone(turning_arm, rows, runs[::8], tmp_path)


@pytest.fixture()
def scheduler(tmp_path):
    """A Dask scheduler and two single-threaded workers started apart (as on a cluster), on localhost."""
    file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    procs = [
        subprocess.Popen(
            [*dask, "--scheduler-file", str(file), "--port", "0", "--dashboard-address", ":0", "--host", "127.0.0.1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    for _ in range(200):
        if file.exists() and file.stat().st_size:
            break
        time.sleep(0.1)
    address = json.loads(file.read_text())["address"]
    worker = [
        sys.executable,
        "-m",
        "distributed.cli.dask_worker",
        address,
        "--nthreads",
        "1",
        "--no-nanny",
        "--no-dashboard",
    ]
    workers = [subprocess.Popen(worker, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
    procs += workers
    yield address, workers
    for proc in procs:
        proc.kill()
        proc.wait()


def test_a_sweep_on_a_scheduler_started_apart_survives_a_killed_worker(turning_arm, tmp_path, scheduler):
    address, workers = scheduler
    out = tmp_path / "remote"
    sets = [f"{STIFFNESS}=30,100,300,1000", f"{DAMPING}=1,5,20"]
    result = {}

    def run():
        result["frame"] = usdart.sweep(str(turning_arm), str(out), set=sets, duration=2.0, scheduler=address, batch=1)

    thread = threading.Thread(target=run)
    thread.start()
    parts = out / "parts"
    for _ in range(1200):  # the first finished task: both workers are busy by then
        if parts.exists() and any(parts.glob("*.json")):
            break
        time.sleep(0.05)
    os.kill(workers[0].pid, signal.SIGKILL)
    assert len(list(parts.glob("*.json"))) < 12  # killed mid-sweep
    thread.join(timeout=600)
    frame = result["frame"]
    assert list(frame["status"]) == ["ok"] * 12
    assert len(list(parts.glob("*.json"))) == 12
    assert_rows_equal_runs_alone(turning_arm, table(out), plan(sets)[:2], tmp_path, 2.0)  # (2 s runs: two suffice)


def test_a_sweep_resumes_where_it_stopped(turning_arm, tmp_path):
    out = tmp_path / "resume"
    first = usdart.sweep(str(turning_arm), str(out), set=[f"{STIFFNESS}=100,300"], duration=DURATION, workers=1)
    parts = sorted((out / "parts").glob("*.json"))
    stamps = [p.stat().st_mtime_ns for p in parts]
    more = usdart.sweep(str(turning_arm), str(out), set=[f"{STIFFNESS}=100,300,1000"], duration=DURATION, workers=1)
    assert [p.stat().st_mtime_ns for p in parts] == stamps  # the finished runs were not run again
    assert len(list((out / "parts").glob("*.json"))) == len(parts) + 1
    assert list(more["run_id"])[:2] == list(first["run_id"]) and len(more["run_id"]) == 3
    assert list(more[f"q:{JOINT}"])[:2] == list(first[f"q:{JOINT}"])
    assert [r["run_id"] for r in table(out)] == list(more["run_id"])
    with pytest.raises(UsdartError, match="another sweep"):
        usdart.sweep(str(turning_arm), str(out), set=[f"{STIFFNESS}=100"], duration=1.0, workers=1)


def test_a_run_that_fails_is_reported_and_the_others_finish(turning_arm, tmp_path):
    mass = "/World/robot/link3.physics:mass"
    frame = usdart.sweep(str(turning_arm), str(tmp_path / "fail"), set=[f"{mass}=1,-5,2"], duration=DURATION, workers=1)
    status = list(frame["status"])
    assert status[0] == status[2] == "ok"
    assert status[1].startswith("error:") and "/World/robot/link3" in status[1]
    assert list(frame[mass]) == [1.0, -5.0, 2.0]  # the failed run's parameters are in its row


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "/World/robot/joints/joint1=1,2"], "expected PRIM.ATTR"),
        (["--set", f"{STIFFNESS}=1,x"], "not a number"),
        (["--random", f"{STIFFNESS}=uniform(3,1)", "--samples", "2"], "needs a < b"),
        (["--random", f"{STIFFNESS}=gauss(3,1)", "--samples", "2"], "expected PRIM.ATTR=uniform"),
        (["--random", f"{STIFFNESS}=uniform(1,3)"], "needs --samples"),
        (["--variant", "/World/robot=a"], "expected PRIM:SET"),
    ],
)
def test_bad_sweep_options_exit_2_with_one_line(turning_arm, tmp_path, args, message):
    result = CliRunner().invoke(main, ["sweep", str(turning_arm), "-o", str(tmp_path / "out"), *args])
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "out" / "runs.parquet").exists()


def test_swept_values_go_to_the_session_layer_with_their_type(turning_arm):
    run = Run({STIFFNESS: 250.0, "/World/robot/joints/joint1.physics:jointEnabled": 1.0})
    stage = open_run_stage(str(turning_arm), run)
    assert stage.GetAttributeAtPath(STIFFNESS).Get() == 250.0
    assert stage.GetAttributeAtPath("/World/robot/joints/joint1.physics:jointEnabled").Get() is True
    assert not stage.GetRootLayer().dirty  # the file is never written
    with pytest.raises(UsdartError, match="no attribute"):
        open_run_stage(str(turning_arm), Run({f"{JOINT}.physics:nonsense": 1.0}))
    with pytest.raises(UsdartError, match="no such prim"):
        open_run_stage(str(turning_arm), Run({"/World/none.physics:mass": 1.0}))
    assert parse_random(f"{STIFFNESS}=normal(1,2)") == (STIFFNESS, "normal", 1.0, 2.0)


def test_variants_and_structure_changes_are_separate_batches_each_equal_to_its_run_alone(tmp_path):
    """A variant set that changes a mass (same structure) and a swept viscous joint friction of 0 or not (the
    friction row exists or not: two structures inside one task): every run equals the same stage alone."""
    stage = Usd.Stage.Open(Sdf.Layer.OpenAsAnonymous(str(SAMPLE)))  # the file's own layer stays as on disk
    link = stage.GetPrimAtPath("/World/robot/link3")
    link.GetAttribute("physics:mass").Clear()  # a local opinion would win over the variants'
    variants = link.GetVariantSets().AddVariantSet("payload")
    for name, mass in (("light", 0.5), ("heavy", 4.0)):
        variants.AddVariant(name)
        variants.SetVariantSelection(name)
        with variants.GetVariantEditContext():
            link.GetAttribute("physics:mass").Set(mass)
    variants.ClearVariantSelection()
    friction = f"{JOINT}.physxJointAxis:angular:viscousFrictionCoefficient"
    stage.GetPrimAtPath(JOINT).GetAttribute("drive:angular:physics:targetPosition").Set(-60.0)
    path = tmp_path / "variants.usda"
    stage.GetRootLayer().Export(str(path))
    stage.GetRootLayer().Reload()  # the sample's layer as on disk again
    frame = usdart.sweep(
        str(path),
        str(tmp_path / "out"),
        set=[f"{friction}=0,2"],
        variants=["/World/robot/link3:payload=light,heavy"],
        duration=DURATION,
        workers=1,
    )
    assert list(frame["status"]) == ["ok"] * 4
    assert list(frame["/World/robot/link3:payload"]) == ["light", "heavy", "light", "heavy"]
    final = list(frame[f"q:{JOINT}"])
    for k, (value, selection) in enumerate([(0, "light"), (0, "heavy"), (2, "light"), (2, "heavy")]):
        alone = Usd.Stage.Open(Sdf.Layer.OpenAsAnonymous(str(path)))
        alone.GetPrimAtPath("/World/robot/link3").GetVariantSet("payload").SetVariantSelection(selection)
        alone.GetAttributeAtPath(friction).Set(float(value))
        edited = tmp_path / f"alone{k}.usda"
        alone.GetRootLayer().Export(str(edited))
        scene = usdart.simulate(str(edited), duration=DURATION).scene
        assert final[k] == scene.articulations[0].state.q[0, 0]
    assert len(set(final)) == 4


def _as_from_a_shell():
    """A command started from a terminal: Ctrl-C's default action, no signal blocked. (The test process's own
    signal state is not the command's to inherit: CI's pytest-xdist workers have been seen with SIGINT
    ignored, which the command keeps, as a program started with nohup does, and then finishes its sweep.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def test_ctrl_c_leaves_only_complete_rows_and_the_same_command_finishes_the_sweep(tmp_path):
    """The command interrupted mid-sweep exits 130 with complete rows only (no temporary file, no worker
    left running); run again, it runs only the missing runs."""
    psutil = pytest.importorskip("psutil")
    ragdoll = SAMPLE.parent / "ragdoll.usda"  # falls for ever: every run takes its full time
    runs = 48  # some 20 s of work after the first two: the interrupt lands mid-sweep even on a loaded machine
    values = ",".join(f"{g:g}" for g in np.linspace(1.0, 12.0, runs))
    out = tmp_path / "interrupted"
    command = [sys.executable, "-m", "usdart.app.cli", "sweep", str(ragdoll), "-o", str(out), "--set"]
    command += [f"/World/physicsScene.physics:gravityMagnitude={values}", "--duration", "120", "--batch", "1"]
    command += ["--workers", "2", "-q"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_shell
    )
    parts = out / "parts"
    deadline = time.monotonic() + 900  # a cold kernel cache compiles for minutes before the first run ends
    while not (parts.exists() and len(list(parts.glob("*.json"))) >= 2):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()[1]
        time.sleep(0.05)
    children = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and "interrupted" in err, err
    psutil.wait_procs(children, timeout=30)
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    # the table is rewritten after each part is written: the interrupt may fall between the two, so it may
    # lack the newest part, never hold a row without one (a part per task: --batch 1, one run each)
    rows, done_parts = table(out), {p.stem for p in parts.glob("*.json")}
    assert len(done_parts) - 1 <= len(rows) <= len(done_parts) < runs
    assert {hashlib.sha1(r["run_id"].encode()).hexdigest()[:16] for r in rows} <= done_parts
    assert all(r["status"] == "ok" and r["energy"] is not None for r in rows)
    assert not [p for p in out.rglob("*") if "usdart-tmp" in p.name]
    stamps = {p.name: p.stat().st_mtime_ns for p in parts.glob("*.json")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert {p.name: p.stat().st_mtime_ns for p in parts.glob("*.json") if p.name in stamps} == stamps
    assert len(table(out)) == runs
