"""Long fuzz run of usdart's input handling: count outcomes, group failures, save a minimal stage per group.

    python scripts/fuzz_stages.py --examples 5000 --seed 1 --jobs 2 --out /tmp/fuzz_findings

The examples are drawn from the same mutation vocabulary as tests/test_fuzz_input.py (tests/stage_mutations.py),
by a `random.Random` seeded per example (`f"{seed}:{index}"`), so a run is reproducible and any example can be
replayed alone (`--replay INDEX`). Each example runs in a worker process with a per-example timeout: a hang in
compiled code cannot be interrupted, only killed, and a crash takes down only its worker (both are restarted).

An example that breaks the contract with several mutations is replayed with every smaller subset of them; the
smallest that fails the same way is recorded as its cause (else the whole combination is). Failures are grouped
by category, exception type, first line of the message (prim paths and numbers elided), where in usdart a
raw exception came from, and the causing mutation (without prim path). Every group gets a folder under
--out with the stage of its smallest example (symlinks to binary layers of the source), and summary.json
holds the whole tally.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import stage_mutations as sm  # noqa: E402

HARNESS_ERROR = "fuzzer error (a bug of the mutations)"
CATEGORIES = (
    sm.OK,
    sm.CLEAN_ERROR,
    sm.RAW_EXCEPTION,
    sm.NONFINITE,
    sm.HANG,
    sm.CRASH,
    sm.UNNAMED_ERROR,
    HARNESS_ERROR,
)


# ---- workers ----------------------------------------------------------------------------------------------
def _worker(conn, quiet: bool, warm_up: sm.Source, scratch: str) -> None:
    """Run examples sent over `conn` until it closes, each in a folder under `scratch` (the parent removes it:
    a killed worker leaves its folder behind). USD's diagnostics go to stderr from C++: silenced."""
    if quiet:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    _warm_up(warm_up)
    conn.send("ready")
    while True:
        try:
            task_id, example = conn.recv()
        except EOFError:
            return
        with tempfile.TemporaryDirectory(dir=scratch) as folder:
            try:
                root, applied = sm.materialize(example, folder)
            except Exception as error:  # noqa: BLE001 (a bug of the fuzzer, reported as such)
                applied, outcome = example.mutations, _harness_error(error)
            else:
                outcome = sm.check_contract(root)
            signature = outcome.signature(folder)
        refused = [m.family for m in example.mutations if not any(m is a for a in applied)]
        conn.send((task_id, applied, refused, outcome, signature))


def _harness_error(error: Exception) -> sm.Outcome:
    details = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return sm.Outcome(HARNESS_ERROR, "materialize", type(error).__name__, str(error), details=details)


def _warm_up(source: sm.Source) -> None:
    """Load numba's cached kernels before the first timed example (a fresh cache compiles here, untimed)."""
    with tempfile.TemporaryDirectory() as folder:
        root, _ = sm.materialize(sm.Example(source, ()), folder)
        sm.check_contract(root, steps=2)


class Pool:
    """Worker processes with a deadline per task: a worker past it is killed (a hang) and replaced."""

    def __init__(self, jobs: int, timeout: float, quiet: bool, warm_up: sm.Source, scratch: str):
        self.ctx = mp.get_context("spawn")  # pxr and numba threads do not survive fork
        self.timeout, self.quiet, self.warm_up, self.scratch = timeout, quiet, warm_up, scratch
        self.workers = [self._start() for _ in range(jobs)]

    def _start(self) -> dict:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child, self.quiet, self.warm_up, self.scratch), daemon=True)
        proc.start()
        child.close()
        return dict(proc=proc, conn=parent, task=None, deadline=None, ready=False)

    def run(self, tasks: Tasks, on_result) -> None:
        """Run `tasks` (which may grow while running) to the end; on_result(task_id, applied, refused,
        outcome, signature) for every task."""
        while True:
            for w in self.workers:
                if w["ready"] and w["task"] is None and (item := tasks.pop()) is not None:
                    w["task"], w["deadline"] = item, time.monotonic() + self.timeout
                    w["conn"].send(item)
            if not any(w["task"] is not None for w in self.workers) and not tasks.has_more():
                return
            busy = [w for w in self.workers if w["task"] is not None or not w["ready"]]
            deadlines = [w["deadline"] for w in busy if w["deadline"] is not None]
            ready = wait([w["conn"] for w in busy], timeout=max(0.0, min(deadlines, default=1.0) - time.monotonic()))
            for w in self.workers:
                if w["conn"] in ready:
                    self._receive(w, on_result)
                elif w["deadline"] is not None and time.monotonic() > w["deadline"]:
                    task_id, example = w["task"]
                    self._replace(w)
                    outcome = sm.Outcome(sm.HANG, "load or step", message=f"no result after {self.timeout:g} s")
                    on_result(task_id, example.mutations, [], outcome, outcome.signature())

    def _receive(self, w: dict, on_result) -> None:
        try:
            message = w["conn"].recv()
        except (EOFError, ConnectionResetError):
            code = w["proc"].exitcode
            w["proc"].join(timeout=5)
            code = w["proc"].exitcode if code is None else code
            task = w["task"]
            self._replace(w)
            if task is None:
                raise RuntimeError(f"a worker died while starting (exit code {code})") from None
            outcome = sm.Outcome(sm.CRASH, "load or step", "exit code", f"worker exited with code {code}")
            on_result(task[0], task[1].mutations, [], outcome, outcome.signature())
            return
        if message == "ready":
            w["ready"] = True
            return
        w["task"], w["deadline"] = None, None
        on_result(*message)

    def _replace(self, w: dict) -> None:
        if w["proc"].is_alive():
            w["proc"].kill()  # only ever a worker this pool started
        w["proc"].join(timeout=5)
        w["conn"].close()
        w.update(self._start())

    def close(self) -> None:
        for w in self.workers:
            w["conn"].close()
        for w in self.workers:
            w["proc"].join(timeout=5)
            if w["proc"].is_alive():
                w["proc"].kill()


# ---- bookkeeping ---------------------------------------------------------------------------------------------
@dataclass
class Group:
    """Examples that failed the same way, by the same cause."""

    signature: str
    cause: str
    outcome: sm.Outcome
    count: int = 0
    best: sm.Example | None = None
    best_index: int = -1
    examples: list[int] = field(default_factory=list)


class Tasks:
    """The examples, then (with priority) single-mutation replays of failures that had several mutations."""

    def __init__(self, examples: int, seed: int, invs):
        self.n, self.seed, self.invs = examples, seed, invs
        self.next_index = 0
        self.replays: list = []

    def example(self, index: int) -> sm.Example:
        return sm.draw_example(sm.RandomChooser(random.Random(f"{self.seed}:{index}")), self.invs)

    def has_more(self) -> bool:
        return bool(self.replays) or self.next_index < self.n

    def pop(self):
        """The next (task_id, example), or None."""
        if self.replays:
            return self.replays.pop(0)
        if self.next_index >= self.n:
            return None
        self.next_index += 1
        return ("example", self.next_index - 1), self.example(self.next_index - 1)


class Tally:
    """Counts and failure groups; a failure with several mutations waits for the replays of its subsets."""

    def __init__(self, tasks: Tasks, shrink: bool):
        self.tasks, self.shrink = tasks, shrink
        self.counts: Counter = Counter()
        self.groups: dict[tuple[str, str], Group] = {}
        self.skipped: Counter = Counter()
        self.waiting: dict[int, dict] = {}  # example index -> failure awaiting the replays of its subsets
        self.done = 0

    def on_result(self, task_id, applied, refused, outcome: sm.Outcome, signature: str) -> None:
        kind, index = task_id[0], task_id[1]
        if kind == "example":
            self.done += 1
            self.counts[outcome.category] += 1
            self.skipped.update(refused)
            if outcome.passed:
                return
            example = sm.Example(self.tasks.example(index).source, tuple(applied))
            if not self.shrink or len(applied) < 2:
                self._record(index, example, outcome, signature)
                return
            subsets = _proper_subsets(len(applied))
            self.waiting[index] = dict(example=example, outcome=outcome, signature=signature, subsets=subsets, left=0)
            for k, subset in enumerate(subsets):
                self.waiting[index]["left"] += 1
                mutations = tuple(applied[i] for i in subset)
                self.tasks.replays.append((("replay", index, k), sm.Example(example.source, mutations)))
            return
        entry = self.waiting[index]
        entry["left"] -= 1
        if signature == entry["signature"]:
            entry["found"] = min(entry.get("found", task_id[2]), task_id[2])  # subsets are ordered by size
        if entry["left"] == 0:
            del self.waiting[index]
            example = entry["example"]
            if "found" in entry:
                subset = entry["subsets"][entry["found"]]
                example = sm.Example(example.source, tuple(example.mutations[i] for i in subset))
            self._record(index, example, entry["outcome"], entry["signature"])

    def _record(self, index: int, example: sm.Example, outcome: sm.Outcome, signature: str) -> None:
        cause = " + ".join(m.family for m in example.mutations)
        key = (signature, cause)
        group = self.groups.setdefault(key, Group(signature, cause, outcome))
        group.count += 1
        group.examples.append(index)
        if group.best is None or len(example.mutations) < len(group.best.mutations):
            group.best, group.best_index, group.outcome = example, index, outcome


def _proper_subsets(n: int) -> list[tuple[int, ...]]:
    """Index subsets of n mutations smaller than n, smallest first: the replays that find the cause."""
    return [subset for size in range(1, n) for subset in itertools.combinations(range(n), size)]


# ---- reporting -------------------------------------------------------------------------------------------------
def save_findings(tally: Tally, out: Path) -> list[tuple[Group, Path]]:
    """One folder per group (numbered, most frequent first) with its smallest example's stage and FINDING.txt;
    the finding folders of an earlier run in `out` are replaced."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*/FINDING.txt"):
        shutil.rmtree(old.parent)
    saved = []
    ordered = sorted(tally.groups.values(), key=lambda g: (-g.count, g.signature, g.cause))
    for k, group in enumerate(ordered, 1):
        slug = re.sub(r"[^\w]+", "_", f"{group.outcome.error_type or group.outcome.category} {group.cause}")[:60]
        folder = out / f"{k:03d}_{slug.strip('_')}"
        folder.mkdir()
        try:
            root, _ = sm.materialize(group.best, folder)
        except Exception as error:  # noqa: BLE001 (reported in the finding instead of ending the report)
            root = folder / f"NOT WRITTEN ({type(error).__name__}: {error})"
        (folder / "FINDING.txt").write_text(
            f"{group.outcome.describe()}\n\ncount: {group.count}\ncause: {group.cause}\n"
            f"example index: {group.best_index} (replay: --replay {group.best_index} with the same --seed)\n"
            f"source: {group.best.source.name}\nmutations:\n"
            + "".join(f"  {m.describe()}\n" for m in group.best.mutations)
            + f"\nreproduce: python -c \"import usdart; s = usdart.load('{root}'); s.step(50)\"\n"
        )
        saved.append((group, root))
    return saved


def report(tally: Tally, saved, elapsed: float, out: Path) -> str:
    """Counts per category, then each distinct failure (signature) with the mutations that cause it."""
    lines = [f"{tally.done} examples in {elapsed:.0f} s"]
    lines += [f"  {category:<38} {tally.counts[category]:>6}" for category in CATEGORIES]
    if tally.skipped:
        common = ", ".join(f"{family} x{n}" for family, n in tally.skipped.most_common(5))
        lines.append(f"  (mutations USD refused to author, left out: {sum(tally.skipped.values())}; {common})")
    by_signature: dict[str, list] = {}
    for group, root in saved:
        by_signature.setdefault(group.signature, []).append((group, root))
    ordered = sorted(by_signature.values(), key=lambda gs: -sum(g.count for g, _ in gs))
    lines.append(f"\n{len(ordered)} distinct failures ({len(saved)} failure/cause groups), most frequent first:")
    for k, groups in enumerate(ordered, 1):
        o = groups[0][0].outcome
        lines.append(
            f"\n{k:3d}. x{sum(g.count for g, _ in groups)}  {o.category} ({o.phase}): {o.error_type}: {o.message[:200]}"
        )
        if o.site:
            lines.append(f"      at {o.site}")
        for group, root in groups:
            lines.append(f"      x{group.count:<4} {group.cause}")
            lines.append(f"            {root}")
    summary = dict(
        examples=tally.done,
        seconds=elapsed,
        counts={c: tally.counts[c] for c in CATEGORIES},
        groups=[
            dict(
                count=g.count,
                category=g.outcome.category,
                phase=g.outcome.phase,
                error_type=g.outcome.error_type,
                message=g.outcome.message,
                site=g.outcome.site,
                signature=g.signature,
                cause=g.cause,
                example=g.best.describe(),
                example_index=g.best_index,
                stage=str(root),
            )
            for g, root in saved
        ],
    )
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per example (load + steps)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/fuzz_findings"))
    parser.add_argument("--no-shrink", action="store_true", help="do not replay subsets of multi-mutation failures")
    parser.add_argument("--verbose", action="store_true", help="keep USD's diagnostics on stderr")
    parser.add_argument("--replay", type=int, help="run one example in this process and print what happened")
    args = parser.parse_args(argv)

    invs = sm.inventories()
    tasks = Tasks(args.examples, args.seed, invs)
    if args.replay is not None:
        example = tasks.example(args.replay)
        print(example.describe())
        with tempfile.TemporaryDirectory(prefix="usdart_fuzz_") as folder:
            root, _ = sm.materialize(example, folder)
            print(sm.check_contract(root).describe())
        return 0

    tally = Tally(tasks, shrink=not args.no_shrink)
    start = time.monotonic()
    last = [start]

    def on_result(*result):
        tally.on_result(*result)
        if time.monotonic() - last[0] > 30:
            last[0] = time.monotonic()
            counts = ", ".join(f"{c}: {tally.counts[c]}" for c in CATEGORIES if tally.counts[c])
            print(f"[{last[0] - start:5.0f} s] {tally.done}/{args.examples}  {counts}", file=sys.stderr, flush=True)

    scratch = tempfile.mkdtemp(prefix="usdart_fuzz_run_")
    pool = Pool(args.jobs, args.timeout, quiet=not args.verbose, warm_up=invs[0].source, scratch=scratch)
    try:
        pool.run(tasks, on_result)
    finally:
        pool.close()
        shutil.rmtree(scratch, ignore_errors=True)
    saved = save_findings(tally, args.out)
    print(report(tally, saved, time.monotonic() - start, args.out))
    return 1 if saved else 0


if __name__ == "__main__":
    sys.exit(main())
