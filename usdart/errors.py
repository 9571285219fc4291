"""Exception and warning types: every message names the prim path it is about."""


class UsdartError(Exception):
    """Base class of everything usdart raises on purpose."""


class StageError(UsdartError):
    """The stage cannot be opened or read (missing file, syntax error, not a USD file)."""


class PhysicsImportError(UsdartError):
    """The stage opened but its physics description cannot be simulated as authored."""

    def __init__(self, prim_path, message):
        self.prim_path = str(prim_path) if prim_path is not None else None
        self.reason = message
        super().__init__(f"{self.prim_path}: {message}" if self.prim_path else message)


class AuthoringError(UsdartError):
    """An authoring helper was asked to write something the schemas (or usdart's importer) cannot accept."""

    def __init__(self, prim_path, message):
        self.prim_path = str(prim_path) if prim_path is not None else None
        self.reason = message
        super().__init__(f"{self.prim_path}: {message}" if self.prim_path else message)
