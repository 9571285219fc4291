"""`usdart warmup` fills numba's cache with every kernel a session uses: after it, a new process that
simulates the arm sample and calls every articulation-cache function on the Panda compiles nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pxr import Sdf, Usd

import usdart
from usdart.core.kernels import KernelCacheLocator, cache_folder

ROOT = Path(__file__).resolve().parent.parent

# a session as a user has it, counting the usdart kernels numba compiles (instead of loading them)
SESSION = r"""
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
print(json.dumps({"compiled": compiled, "q": q}))
"""


def _session(env) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SESSION, str(ROOT)], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_after_warmup_a_new_session_compiles_nothing_and_moves_as_before():
    env = dict(os.environ)
    warm = subprocess.run(
        [sys.executable, "-m", "usdart.app.cli", "warmup"], env=env, capture_output=True, text=True, timeout=1800
    )
    assert warm.returncode == 0, warm.stderr
    assert f"cache: {cache_folder()}" in warm.stdout  # the folder this process uses too
    session = _session(env)
    assert session["compiled"] == []
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
