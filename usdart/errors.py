"""Exception and warning types: every message names the prim path it is about."""


class UsdartError(Exception):
    """Base class of everything usdart raises on purpose."""


class StageError(UsdartError):
    """The stage cannot be opened or read (missing file, syntax error, not a USD file)."""


class PrimError(UsdartError):
    """An error about one prim: `prim_path` (None when it is about none) and `reason`; the message is
    "<prim_path>: <reason>"."""

    def __init__(self, prim_path, message):
        self.prim_path = str(prim_path) if prim_path is not None else None
        self.reason = message
        super().__init__(f"{self.prim_path}: {message}" if self.prim_path else message)


class PhysicsImportError(PrimError):
    """The stage opened but its physics description cannot be simulated as authored."""


class AuthoringError(PrimError):
    """An authoring helper was asked to write something the schemas (or usdart's importer) cannot accept."""


class SimulationDiverged(PrimError):
    """A simulated state stopped being finite or physical (a velocity beyond
    usdart.core.layout.DIVERGENCE_SPEED): the scene stops that world and refuses to read its state until
    it is reset (`Scene.reset`) or given a new finite state (`Articulation.apply_cache`). `prim_path`: the
    articulation (its root-API prim, or a free body's prim), `time`: simulated seconds, `world`: its index."""

    def __init__(self, prim_path, message, time: float, world: int = 0):
        super().__init__(prim_path, message)
        self.time = float(time)
        self.world = int(world)
