"""usdart: USD-driven reduced-coordinate articulation simulation (PhysX semantics, numba solver)."""

from .usd.schema_plugin import register as _register_schema_plugin

_register_schema_plugin()  # first: usd-core reads schema plugins once, when the first stage is opened
from .app.simulation import Recorder, simulate
from .articulation import Articulation
from .cache import ArticulationCache, CacheFlag
from .errors import PhysicsImportError, StageError, UsdartError
from .scene import Scene, load

__all__ = [
    "load",
    "Scene",
    "Articulation",
    "ArticulationCache",
    "CacheFlag",
    "UsdartError",
    "StageError",
    "PhysicsImportError",
    "simulate",
    "Recorder",
]
__version__ = "0.1.0"
