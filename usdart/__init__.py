"""usdart: USD-driven reduced-coordinate articulation simulation (PhysX semantics, numba solver)."""

import sys as _sys

from .usd.schema_plugin import register as _register_schema_plugin

if "pxr" in _sys.modules:  # usd-core reads schema plugins once, when the first stage is opened
    _register_schema_plugin()
from .articulation import Articulation
from .cache import ArticulationCache, CacheFlag
from .errors import PhysicsImportError, SimulationDiverged, StageError, UsdartError

# the objects that read or write USD import pxr on first use, so the numba core imports without it
_USD_SIDE = {"load": ".scene", "Scene": ".scene", "simulate": ".app.simulation", "Recorder": ".app.simulation"}


def __getattr__(name: str):
    if name in _USD_SIDE:
        import importlib

        value = getattr(importlib.import_module(_USD_SIDE[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'usdart' has no attribute {name!r}")


__all__ = [
    "load",
    "Scene",
    "Articulation",
    "ArticulationCache",
    "CacheFlag",
    "UsdartError",
    "StageError",
    "PhysicsImportError",
    "SimulationDiverged",
    "simulate",
    "Recorder",
]
__version__ = "0.1.0"
