"""usdart: USD-driven reduced-coordinate articulation simulation (PhysX semantics, numba solver)."""

import sys as _sys

from .usd.schemas import register as _register_schemas

if "pxr" in _sys.modules:  # usd-core reads schema plugins once, when the first stage is opened
    _register_schemas()
from .errors import PhysicsImportError, SimulationDiverged, StageError, UsdartError

# imported on first use: the USD side needs pxr (the numba core runs without it), and the numba side takes
# a moment to import (the command line guards Ctrl-C before it does)
_LAZY = {
    "load": ".scene",
    "load_batch": ".scene",
    "batch": ".scene",
    "Scene": ".scene",
    "sweep": ".app.sweep",
    "simulate": ".app.simulation",
    "Recorder": ".app.simulation",
    "Articulation": ".articulation",
    "ArticulationCache": ".cache",
    "CacheFlag": ".cache",
    "ArticulationView": ".view",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'usdart' has no attribute {name!r}")


__all__ = [
    "load",
    "load_batch",
    "batch",
    "sweep",
    "Scene",
    "Articulation",
    "ArticulationCache",
    "CacheFlag",
    "ArticulationView",
    "UsdartError",
    "StageError",
    "PhysicsImportError",
    "SimulationDiverged",
    "simulate",
    "Recorder",
]
__version__ = "0.1.0"
