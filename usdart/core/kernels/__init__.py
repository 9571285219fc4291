"""Numba kernels of the scene model (float64, no allocation), named by pipeline stage.

kinematics (poses, world motion columns and inertias, link velocities), applied (link forces of a
step), crba / tree_factor (mass matrix in tree-sparse storage, its L^T D L factor and solves), rnea, aba,
jacobian, centroidal (the dynamics algorithms), rows (fill and solve one constraint-row kind each),
solver (projected Gauss-Seidel over an island's rows), integrate (positions), sleep, step (one world:
the stages in order), entry (the few functions Python calls).

Leaf kernels take only the arrays they use, sliced to one world, so each compiles once and fast; only
`step` and `entry` see the model, state and workspace records. Kernels are compiled with `_nrt=False`:
they cannot allocate, and array views skip reference counting.

numba's on-disk cache only notices edits to a function's own file. usdart therefore keeps it in a
folder named by a hash of every kernel source file (`cache_folder`): any edit starts a fresh cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def _sources_hash() -> str:
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for path in sorted([*here.glob("*.py"), here.parent / "layout.py"]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(numba.__version__.encode())
    return digest.hexdigest()[:16]


def cache_folder() -> str:
    """Where numba keeps usdart's compiled kernels: `$NUMBA_CACHE_DIR` (or the user cache folder) /
    usdart-<hash of the kernel sources>."""
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "usdart"
    )
    return os.path.join(base, f"usdart-{_sources_hash()}")


# before any kernel module is imported: numba picks the cache locator when a function is decorated
numba.config.CACHE_DIR = cache_folder()
