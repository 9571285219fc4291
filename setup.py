"""Everything about the package is in pyproject.toml; this file only adds one build step.

After the modules are copied into the build folder, `usdart warmup` runs there so numba's compiled kernels
ship inside the package (usdart/core/kernels/__pycache__/usdart-<sources hash>): the first simulation
after an install from source starts at once instead of compiling for a minute or more. The cache is for
this machine's CPU and this numba; anywhere else it is not used and the kernels compile on first use, as
without it. The step never fails the build: if it cannot run, the package installs without the cache.
Skipped for editable installs and when USDART_PRECOMPILE=0.
"""

from __future__ import annotations

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithKernels(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("USDART_PRECOMPILE", "1") == "0":
            return
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        # ahead of what is there: pip's isolated build environment reaches its packages through PYTHONPATH
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.abspath(self.build_lib), env.get("PYTHONPATH")]))
        command = [sys.executable, "-m", "usdart.app.warmup"]
        print("usdart: compiling the solver kernels into the package (USDART_PRECOMPILE=0 skips this)")
        try:
            done = subprocess.run(command, env=env, cwd=self.build_lib, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.SubprocessError) as error:
            print(f"usdart: kernels not compiled ({error}); they compile on first use")
            return
        if done.returncode != 0:
            print(f"usdart: kernels not compiled; they compile on first use:\n{done.stderr[-2000:]}")


setup(cmdclass={"build_py": BuildWithKernels})
