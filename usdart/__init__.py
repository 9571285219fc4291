"""usdart: USD-driven reduced-coordinate articulation simulation (PhysX semantics, numba solver)."""
from .articulation import Articulation
from .errors import PhysicsImportError, StageError, UsdartError
from .scene import Scene, load

__all__ = ["load", "Scene", "Articulation", "UsdartError", "StageError", "PhysicsImportError"]
__version__ = "0.1.0"
