"""`usdart warmup` fills numba's cache with every kernel a session uses: after it, a new process that
simulates the arm sample and calls every articulation-cache function on the Panda compiles nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pxr import Sdf, Usd

import usdart
from usdart.core.kernels import KERNELS, KernelCacheLocator, cache_folder, remove_stale_caches

ROOT = Path(__file__).resolve().parent.parent

# the usdart kernels a process holds (compiled or loaded from the cache), with their signatures
REACHED = r"""
import sys
from numba.core.registry import CPUDispatcher


def reached():
    found = set()
    for name, module in list(sys.modules.items()):
        if name.startswith("usdart.core.kernels"):
            for attr, value in vars(module).items():
                if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
                    found.update(f"{name}.{attr}{sig}" for sig in value.signatures)
    return sorted(found)
"""

# the warmup, reporting what it reached
WARMUP = (
    REACHED
    + r"""
import json
from usdart.app.warmup import warmup
warmup()
print(json.dumps(reached()))
"""
)

# a session as a user has it, counting the usdart kernels numba compiles (instead of loading them)
SESSION = (
    REACHED
    + r"""
import json, sys, warnings
from numba.core import event

compiled = []


class Count(event.Listener):
    def on_start(self, ev):
        func = ev.data["dispatcher"].py_func
        if func.__module__.startswith("usdart.core.kernels"):
            compiled.append(f"{func.__module__}.{func.__qualname__}")

    def on_end(self, ev):
        pass


event.register("numba:compile", Count())
import usdart
from usdart.cache import CacheFlag

root = sys.argv[1]
result = usdart.simulate(root + "/sample_stages/arm_with_gripper.usda", duration=0.2)
art = usdart.load(root + "/tests/data/panda/panda.usda").articulations[0]
cache = art.create_cache()
art.copy_internal_state_to_cache(cache, CacheFlag.ALL)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    for name in sorted(n for n in dir(art) if n.startswith("compute_") and n != "compute_coriolis_force"):
        if name == "compute_lambda":
            art.compute_lambda(art.create_cache(), cache, cache.joint_force)
        elif name != "compute_centroidal_momentum_matrix":  # floating bases only
            getattr(art, name)(cache)
q = result.scene.articulations[0].state.q[0].tolist()
print(json.dumps({"compiled": compiled, "reached": reached(), "q": q}))
"""
)


def _session(env) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SESSION, str(ROOT)], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_after_warmup_a_new_session_compiles_nothing_and_moves_as_before():
    env = dict(os.environ)
    cli = subprocess.run(
        [sys.executable, "-m", "usdart.app.cli", "warmup"], env=env, capture_output=True, text=True, timeout=1800
    )
    assert cli.returncode == 0, cli.stderr
    assert f"cache: {cache_folder()}" in cli.stdout  # the folder this process uses too
    session = _session(env)
    assert session["compiled"] == []
    # with a cache other tests filled, compiling nothing proves little: every kernel version the session
    # holds must be one the warmup reached (loaded or compiled) itself
    warm = subprocess.run([sys.executable, "-c", WARMUP], env=env, capture_output=True, text=True, timeout=1800)
    assert warm.returncode == 0, warm.stderr
    missed = set(session["reached"]) - set(json.loads(warm.stdout.strip().splitlines()[-1]))
    assert not missed, sorted(m.split("(")[0] for m in missed)
    # the same motion as this process computes (loaded from the cache or compiled here), from the file as on
    # disk (not a layer another test of this process may have edited in memory)
    stage = Usd.Stage.Open(Sdf.Layer.OpenAsAnonymous(str(ROOT / "sample_stages/arm_with_gripper.usda")))
    alone = usdart.simulate(stage, duration=0.2)
    assert session["q"] == alone.scene.articulations[0].state.q[0].tolist()


def test_the_cache_is_used_only_for_usdart_kernels_and_follows_numba_cache_dir(tmp_path):
    assert KernelCacheLocator.from_function(_session, __file__) is None
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    code = "from usdart.core.kernels import cache_folder; print(cache_folder())"
    folder = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.strip()
    assert Path(folder).parent == tmp_path and Path(folder).name.startswith("usdart-")


def _aged(folder: Path, days: float) -> Path:
    folder.mkdir(parents=True)
    (folder / "kernel.nbi").write_bytes(b"x")
    then = time.time() - days * 86400.0
    os.utime(folder, (then, then))
    return folder


def test_caches_of_other_kernel_sources_are_removed_once_unused(tmp_path):
    # a shared folder (here NUMBA_CACHE_DIR) may serve other installs: a month's grace
    old, recent = _aged(tmp_path / "usdart-0123456789abcdef", 40), _aged(tmp_path / "usdart-fedcba9876543210", 1)
    foreign = _aged(tmp_path / "someone-else", 400)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    code = "from usdart.core.kernels import cache_folder; print(cache_folder())"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not old.exists() and recent.exists() and foreign.exists()
    assert Path(done.stdout.strip()).is_dir()
    # inside the package only a process still running the previous sources can want one: an hour's grace
    package = Path(KernelCacheLocator.folder).parent
    if package == KERNELS / "__pycache__":
        stale, fresh = _aged(package / "usdart-test0stale00000", 0.5), _aged(package / "usdart-test0fresh00000", 0.01)
        try:
            assert str(stale) in remove_stale_caches(KernelCacheLocator.folder)
            assert fresh.exists() and Path(KernelCacheLocator.folder).is_dir()
        finally:
            shutil.rmtree(stale, ignore_errors=True)
            shutil.rmtree(fresh, ignore_errors=True)
