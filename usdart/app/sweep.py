"""`usdart sweep` and `usdart.sweep`: many runs of one stage, spread over a Dask cluster, as one table.

The runs (usdart.app.sweep_plan) are cut into tasks of at most `batch` runs with the same variant
selections; a worker simulates a task's runs as the worlds of batched scenes (usdart.app.sweep_task).
Tasks go to a `dask.distributed` cluster: an embedded LocalCluster of `workers` processes by default, or
the scheduler at `scheduler`. A task whose worker dies is run again by Dask (`retries`); a task that
fails reports every one of its runs with the error, and the others finish.

Output in OUT_DIR: `runs.parquet` (CSV `runs.csv` when pyarrow is missing), one row per run, rewritten
atomically after every finished task from `parts/` (one file per task, written atomically), so an
interrupted sweep leaves only complete rows, and the same command run again skips the runs it has.
`sweep.json` records what the sweep is (stage, duration): a different sweep into the same folder is refused.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import math
import os
import sys
import time

import numpy as np

from ..errors import UsdartError
from .output_files import write_atomically
from .sweep_plan import Run, plan
from .sweep_task import result_row, run_task

DEFAULT_BATCH = 32  # runs per task: big enough to batch, small enough to spread and to resume


def sweep(
    stage: str,
    out_dir: str,
    set=(),  # noqa: A002 - the command's option name
    random=(),  # noqa: A002
    samples: int = 0,
    seed: int = 0,
    variants=(),
    duration: float | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    save_stages: bool = False,
    batch: int = DEFAULT_BATCH,
    progress: bool = False,
):
    """Run the sweep (see the module) and return its table: a pandas DataFrame when pandas is installed,
    else a dict of numpy arrays (column -> values, one per run, in run order)."""
    if not os.path.isfile(stage):
        raise UsdartError(f"{stage}: no such file")
    if int(batch) < 1:
        raise UsdartError(f"--batch must be at least 1, got {batch}")
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise UsdartError(f"duration must be a positive number of seconds, got {duration}")
    runs = plan(set, random, samples, seed, variants)
    os.makedirs(os.path.join(out_dir, "parts"), exist_ok=True)
    _check_manifest(out_dir, stage, duration)
    stages_dir = os.path.join(out_dir, "stages") if save_stages else None
    if stages_dir:
        os.makedirs(stages_dir, exist_ok=True)
    done = _finished_rows(out_dir)
    todo = [r for r in runs if r.run_id not in done or (save_stages and not _saved(stages_dir, r))]
    tasks = _tasks(todo, int(batch))
    bar = _TaskProgress(len(tasks), progress)
    if tasks:
        with _client(scheduler, workers) as client:
            _run_tasks(client, os.path.abspath(stage), tasks, duration, stages_dir, out_dir, runs, bar)
    bar.close()
    return _table(_write_table(out_dir, runs))


def _tasks(runs: list[Run], size: int) -> list[list[Run]]:
    """Runs with the same variant selections (likely one structure), cut into tasks of at most `size`."""
    by_variants: dict[str, list[Run]] = {}
    for run in runs:
        by_variants.setdefault(json.dumps(sorted(run.variants.items())), []).append(run)
    return [group[i : i + size] for group in by_variants.values() for i in range(0, len(group), size)]


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int | None):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsdartError("usdart sweep needs the sweep extra: pip install 'usdart[sweep]'") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as error:
            raise UsdartError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None
        with client:
            yield client
        return
    count = int(workers) if workers else min(os.cpu_count() or 1, 4)
    if count < 1:
        raise UsdartError(f"--workers must be at least 1, got {workers}")
    # one thread per worker process: the step holds the GIL only between kernel calls, and processes keep
    # numba's compiled kernels (loaded from its cache) and USD's state apart
    with (
        LocalCluster(n_workers=count, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        yield client


def _run_tasks(client, stage, tasks, duration, stages_dir, out_dir, runs, bar) -> None:
    from dask.distributed import as_completed

    futures = {
        client.submit(run_task, stage, task, duration, stages_dir, pure=False, retries=2): task for task in tasks
    }
    finished = 0
    for future in as_completed(futures):
        task = futures[future]
        try:
            rows = future.result()
        except Exception as error:  # the task failed on its worker: every run of it reports the error
            rows = [_failed(run, error) for run in task]
        _write_part(out_dir, task, rows)
        _write_table(out_dir, runs)
        finished += 1
        bar.update(finished)


def _failed(run: Run, error: Exception) -> dict:
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    return result_row(run, f"error: {message}")


# ---- files ----------------------------------------------------------------------------------------------
def _check_manifest(out_dir: str, stage: str, duration) -> None:
    """OUT_DIR holds one sweep: its stage (by content) and duration; another sweep is refused."""
    with open(stage, "rb") as f:
        digest = hashlib.sha1(f.read()).hexdigest()
    manifest = {"stage": os.path.abspath(stage), "stage_sha1": digest, "duration": duration}
    path = os.path.join(out_dir, "sweep.json")
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        if (old.get("stage_sha1"), old.get("duration")) != (digest, duration):
            raise UsdartError(
                f"{out_dir}: holds the results of another sweep ({old.get('stage')}, duration {old.get('duration')}); "
                "choose another output folder"
            )
        return
    write_atomically(path, lambda tmp: _write_json(tmp, manifest))


def _write_json(path: str, value) -> None:
    with open(path, "w") as f:
        json.dump(value, f, indent=1)


def _part_path(out_dir: str, task: list[Run]) -> str:
    key = hashlib.sha1("".join(r.run_id for r in task).encode()).hexdigest()[:16]
    return os.path.join(out_dir, "parts", f"{key}.json")


def _write_part(out_dir: str, task: list[Run], rows: list[dict]) -> None:
    write_atomically(_part_path(out_dir, task), lambda tmp: _write_json(tmp, rows))


def _read_parts(out_dir: str) -> dict[str, dict]:
    """Every row of the finished tasks, by run id (a later part wins: a re-run after an error)."""
    folder = os.path.join(out_dir, "parts")
    rows = {}
    names = [n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith(".")]
    for name in sorted(names, key=lambda n: os.path.getmtime(os.path.join(folder, n))):
        with open(os.path.join(folder, name)) as f:
            for row in json.load(f):
                rows[row["run_id"]] = row
    return rows


def _finished_rows(out_dir: str) -> dict[str, dict]:
    """Rows of runs that finished (status ok): re-running the sweep skips them; failed runs run again."""
    return {k: r for k, r in _read_parts(out_dir).items() if r["status"] == "ok"}


def _saved(stages_dir: str, run: Run) -> bool:
    return os.path.exists(os.path.join(stages_dir, f"{run.run_id}.usda"))


def _write_table(out_dir: str, runs: list[Run]) -> list[dict]:
    """runs.parquet (or runs.csv) of every finished run of this sweep, in run order; returns the rows."""
    found = _read_parts(out_dir)
    rows = [found[r.run_id] for r in runs if r.run_id in found]
    columns = list(dict.fromkeys(k for row in rows for k in row))
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        write_atomically(os.path.join(out_dir, "runs.csv"), lambda tmp: _write_csv(tmp, rows, columns))
        return rows
    table = pa.Table.from_pydict({c: [row.get(c) for row in rows] for c in columns})
    write_atomically(os.path.join(out_dir, "runs.parquet"), lambda tmp: pq.write_table(table, tmp))
    return rows


def _write_csv(path: str, rows: list[dict], columns: list[str]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)


def _table(rows: list[dict]):
    columns = list(dict.fromkeys(k for row in rows for k in row))
    data = {c: [row.get(c) for row in rows] for c in columns}
    try:
        import pandas as pd
    except ImportError:
        return {c: np.array(v) for c, v in data.items()}
    return pd.DataFrame(data, columns=columns)


class _TaskProgress:
    """tasks done / all on stderr (a terminal only), with the time so far."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.began = total, time.perf_counter()
        self.enabled = enabled and sys.stderr.isatty() and total > 0
        self.update(0)

    def update(self, done: int) -> None:
        if self.enabled:
            bar = "#" * int(30 * done / self.total)
            elapsed = time.perf_counter() - self.began
            sys.stderr.write(f"\r\033[Ksweeping [{bar:<30}] task {done}/{self.total}  {elapsed:.0f} s")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
