"""Numba kernels of the scene model (float64, no allocation), named by pipeline stage.

kinematics (poses, world motion columns and inertias, link velocities), applied (link forces of a
step), crba / tree_factor (mass matrix in tree-sparse storage, its L^T D L factor and solves), rnea, aba,
jacobian, centroidal (the dynamics algorithms), rows (fill and solve one constraint-row kind each),
solver (projected Gauss-Seidel over an island's rows), kinematic (bodies moved to targets), integrate
(positions), sleep, step (one world: the stages in order), entry (the few functions Python calls).

Leaf kernels take only the arrays they use, sliced to one world, so each compiles once and fast; only
`step` and `entry` see the model, state and workspace records. Kernels are compiled forceinline (LLVM
inlines them into their callers: the world step is one function, whichever process compiled a kernel
first) and with `_nrt=False`: they cannot allocate, and array views skip reference counting.

Compiled kernels are cached on disk by `KernelCacheLocator`, in a folder named by a hash of every kernel
source file and the numba version (`cache_folder`): numba's own cache only notices edits to a function's
own file, so any edit here starts a fresh cache. The folder lives inside the installed package when that
is writable (so a cache prepared at install time, `usdart warmup`, ships with it and goes with an
uninstall), else in the user's cache folder; `$NUMBA_CACHE_DIR` overrides both. Other packages' numba
caches are not touched. Folders of other kernel sources are removed once unused (`remove_stale_caches`):
each is some 25 MB, and every edit or upgrade makes a new one.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import numba
from numba.core import caching


def _sources_hash() -> str:
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for path in sorted([*here.glob("*.py"), here.parent / "layout.py"]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(numba.__version__.encode())
    return digest.hexdigest()[:16]


KERNELS = Path(__file__).resolve().parent
SOURCES_HASH = _sources_hash()


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def cache_folder() -> str:
    """Where numba keeps usdart's compiled kernels: `$NUMBA_CACHE_DIR/usdart-<hash>` when set, else
    `<this package>/__pycache__/usdart-<hash>` when writable, else `<user cache>/usdart/usdart-<hash>`
    (hash: the kernel sources and numba's version)."""
    name = f"usdart-{SOURCES_HASH}"
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.path.join(os.environ["NUMBA_CACHE_DIR"], name)
    in_package = KERNELS / "__pycache__" / name
    if _writable(in_package):
        return str(in_package)
    user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(user, "usdart", name)


# how long a folder of other sources is kept after its last use: in the package folder only a process still
# running the previous sources can want it; a shared folder may serve other installs (other venvs, versions)
PACKAGE_GRACE_S = 3600.0
SHARED_GRACE_S = 30 * 86400.0


def remove_stale_caches(folder: str) -> list[str]:
    """Mark `folder` used now and delete its `usdart-*` siblings unused for longer than their grace period
    (PACKAGE_GRACE_S inside the package, SHARED_GRACE_S elsewhere). Returns the folders removed; never
    raises (a cache that cannot be tidied is only wasted space)."""
    here = Path(folder)
    grace = PACKAGE_GRACE_S if here.parent == KERNELS / "__pycache__" else SHARED_GRACE_S
    removed = []
    try:
        here.mkdir(parents=True, exist_ok=True)
        os.utime(here)
        now = time.time()
        for other in here.parent.glob("usdart-*"):
            if other.name != here.name and other.is_dir() and now - other.stat().st_mtime > grace:
                shutil.rmtree(other, ignore_errors=True)
                removed.append(str(other))
    except OSError:
        pass
    return removed


@functools.cache
def _content_hash(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class KernelCacheLocator(caching._CacheLocator):
    """numba's cache of usdart's kernel files, in `cache_folder()`. The folder's name already changes with
    any kernel source, so a file's stamp is its content hash (an install that resets modification times
    keeps its cache)."""

    folder = cache_folder()

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno

    def get_cache_path(self) -> str:
        return self.folder

    def get_source_stamp(self):
        return _content_hash(self._py_file)

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        if Path(py_file).resolve().parent != KERNELS:
            return None
        locator = cls(py_func, py_file)
        try:
            locator.ensure_cache_path()
        except OSError:
            return None  # numba's own locators take over
        return locator


remove_stale_caches(KernelCacheLocator.folder)

# before any kernel module is imported: numba picks the locator when a function is decorated
_LOCATORS = (getattr(caching, "CacheImpl", None) or caching._CacheImpl)._locator_classes  # CacheImpl: newer numba
if KernelCacheLocator not in _LOCATORS:
    _LOCATORS.insert(0, KernelCacheLocator)
