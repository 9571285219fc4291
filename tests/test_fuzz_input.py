"""Fuzzing usdart's input contract with hypothesis: hostile edits of real stages never escape as raw exceptions.

The sample stages, corpus robots and test-helper stages are mutated (NaN/inf/huge/negative values, wrong
types, dangling or self-referencing relationships, missing or stray APIs, broken xforms, deleted prims, bad
stage metadata, truncated or non-UTF-8 files, missing or garbage sublayers and payloads; see
tests/stage_mutations.py) and each result must load into a finite scene or raise a UsdartError naming a
prim or file; 50 steps of a clean load must stay finite or raise a UsdartError. A failure prints the shrunk
mutation list and what usdart did, and leaves the stage in FAILURE_COPY; scripts/fuzz_stages.py runs the
same vocabulary for thousands of examples and groups what it finds.

Derandomized (fixed seed, no example database), so CI runs the same examples every time.
"""

import faulthandler
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path

import stage_mutations as sm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import usdart

HANG_SECONDS = 20  # one example (load + 50 steps) takes milliseconds with a warm numba cache
EXAMPLES = 4400  # about 45 s on this two-core machine, idle, with a warm numba cache (about 10 ms an example)
FAILURE_COPY = Path(tempfile.gettempdir()) / "usdart_fuzz_failure"  # the failing stage, kept for a look


class Hang(BaseException):
    """Raised by the alarm; a BaseException so no `except Exception` in usdart swallows it."""


@contextmanager
def hang_guard(seconds: int):
    """SIGALRM interrupts Python code that runs too long; compiled numba code cannot be interrupted, so a
    watchdog dumps every thread's stack and ends the process after 3x that long rather than stall CI."""

    def alarm(signum, frame):
        raise Hang(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    faulthandler.dump_traceback_later(3 * seconds, exit=True)
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(example=st.deferred(sm.examples))
def test_mutated_stage_loads_and_steps_finite_or_raises_usdart_error(example):
    with tempfile.TemporaryDirectory(prefix="usdart_fuzz_") as folder:
        root, applied = sm.materialize(example, folder)
        try:
            with hang_guard(HANG_SECONDS):
                outcome = sm.check_contract(root)
        except Hang as hang:
            outcome = sm.Outcome(sm.HANG, message=str(hang))
        if not outcome.passed:  # hypothesis replays the shrunk example last: that is the copy left behind
            shutil.rmtree(FAILURE_COPY, ignore_errors=True)
            shutil.copytree(folder, FAILURE_COPY, symlinks=True)
    applied_text = "\n  ".join(m.describe() for m in applied) or "(none applied)"
    assert outcome.passed, (
        f"{outcome.describe()}\nsource: {example.source.name}\nmutations:\n  {applied_text}\n"
        f"stage: {FAILURE_COPY / root.name}"
    )


def test_the_contract_check_fails_on_nan_state(tmp_path):
    """The fuzz test can fail: a state that turns NaN without a UsdartError is reported as a failure."""
    (inv,) = [i for i in sm.inventories() if i.source.name == "floating_body"]
    root, _ = sm.materialize(sm.Example(inv.source, ()), tmp_path)
    assert sm.check_contract(root).category == sm.OK
    scene = usdart.load(str(root))
    scene.articulations[0].state.qd[:] = float("nan")  # a NaN state, whether or not the root has DOFs
    scene.articulations[0].state.root_vel[:] = float("nan")
    assert "non-finite" in sm.nonfinite_state(scene)


def test_raw_exceptions_and_unnamed_errors_fail_the_contract(tmp_path):
    raw = sm._error_outcome("load", KeyError("physics:mass"), tmp_path / "a.usda")
    unnamed = sm._error_outcome("load", sm.UsdartError("mass must be positive"), tmp_path / "a.usda")
    named = sm._error_outcome("load", sm.UsdartError("/World/b: mass must be positive"), tmp_path / "a.usda")
    assert (raw.passed, unnamed.passed, named.passed) == (False, False, True)
