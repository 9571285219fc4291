"""The PhysX and Newton USD schemas, from their official packages: registration, fallbacks, value types.

NVIDIA's `physx-usd-schemas` (the codeless PhysxSchema Isaac Sim writes) and `newton-usd-schemas` register
their plugins with usd-core when imported. usd-core reads schema plugins once, when its schema registry is
first built (the first stage opened in the process), so `register()` runs on `import usdart` when pxr is
already loaded, else when usdart's USD side is first used. A package is not imported when some plugin
already defines its schemas (Isaac Sim / Omniverse load their own physxSchema): two definitions of one
schema would clash.

The importer's fallbacks and the authoring helpers' value types are read from the packages' own
`generatedSchema.usda` files as layers, not from the registry: they are the same whether or not the
registry saw the plugins (a stage opened before `import usdart`), so no result depends on import order.

One schema usdart still reads is gone from PhysX's schemas (25.11): PhysxJointAPI (physxJoint:*). Stages
converted by older Isaac Sim releases carry it; PhysX ignores it now and only the "newton" semantics
reads it, with the fallbacks its last definition (Omniverse Physics 110.0) declared: `LEGACY_DEFAULTS`.
"""

from __future__ import annotations

import importlib
import math
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

# (package, plugin name, one schema it defines): a plugin of that name, or any plugin defining that schema,
# means the schemas are already there
PACKAGES = (
    ("physx_usd_schemas", "physxSchema", "PhysxMimicJointAPI"),
    ("newton_usd_schemas", "newton", "NewtonJointAPI"),
)

# PhysxJointAPI as Omniverse Physics 110.0 declared it (float attributes; maxJointVelocity in deg/s or
# stage units/s)
LEGACY_DEFAULTS = {
    "physxJoint:armature": ("PhysxJointAPI", "float", False, 0.0),
    "physxJoint:jointFriction": ("PhysxJointAPI", "float", False, 0.0),
    "physxJoint:maxJointVelocity": ("PhysxJointAPI", "float", False, 1.0e6),
}


@dataclass(frozen=True)
class SchemaStatus:
    """Which schema packages `register()` imported in this process, and whether usd-core's schema registry
    knows the PhysX schemas (it does not when a stage was opened before usdart registered them)."""

    registered: tuple[str, ...]
    known_to_usd: bool
    reason: str


@dataclass(frozen=True)
class AttributeSpec:
    """An API schema attribute as its schema declares it; `name` keeps '{instance}' for multiple-apply."""

    schema: str
    name: str
    type_name: str
    uniform: bool
    default: object


_status: SchemaStatus | None = None


def _already_defined(plugin_name: str, schema: str) -> str | None:
    """What already defines these schemas in this process (None: nothing), without building the registry."""
    from pxr import Plug

    registry = Plug.Registry()
    if registry.GetPluginWithName(plugin_name):
        return f"plugin '{plugin_name}' is registered"
    for plugin in registry.GetAllPlugins():
        for info in plugin.metadata.get("Types", {}).values():
            if isinstance(info, dict) and info.get("alias", {}).get("UsdSchemaBase") == schema:
                return f"plugin '{plugin.name}' at {plugin.path} defines {schema}"
    return None


def register() -> SchemaStatus:
    """Import the schema packages once per process (later calls return the first answer)."""
    global _status
    if _status is not None:
        return _status
    registered, skipped = [], []
    for package, plugin_name, schema in PACKAGES:
        if package in sys.modules:
            registered.append(package)
        elif (other := _already_defined(plugin_name, schema)) is not None:
            skipped.append(f"{package} not imported: {other}")
        else:
            importlib.import_module(package)
            registered.append(package)
    from pxr import Usd

    known = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition(PACKAGES[0][2]) is not None
    if not known:
        skipped.append(
            "usd-core's schema registry was built before usdart registered the schemas (a stage was opened "
            "before usdart's USD side was imported): usd-core's HasAPI and fallbacks miss them, usdart does not"
        )
    _status = SchemaStatus(tuple(registered), known, "; ".join(skipped) or "all registered")
    return _status


def status() -> SchemaStatus:
    """The outcome of `register()` (which `import usdart` runs)."""
    return register()


def schema_files() -> list[Path]:
    """The official packages' generatedSchema.usda files (found without importing, so without registering)."""
    from importlib.util import find_spec

    files = []
    for package, _, _ in PACKAGES:
        spec = find_spec(package)
        if spec is None or spec.origin is None:
            raise ImportError(f"{package} is not installed: pip install {package.replace('_', '-')}")
        files += sorted(Path(spec.origin).parent.rglob("generatedSchema.usda"))
    return files


def _python_default(value, type_name: str):
    """A fallback as Python: float32 values widened to the decimal written in the schema (0.05, not
    0.0500000007), arrays as lists, tokens as str."""
    if value is None:
        return None
    if type_name in ("float", "half"):
        return float(str(np.float32(value))) if math.isfinite(value) else float(value)
    if type_name.endswith("[]"):
        return [float(str(np.float32(v))) if type_name == "float[]" else v for v in value]
    if type_name == "token":
        return str(value)
    return value


@cache
def attribute_specs() -> dict[tuple[str, str], AttributeSpec]:
    """(API schema, '{instance}' attribute name) -> its declaration, built-in API schemas' attributes
    included, for every API schema of the official packages, plus PhysxJointAPI's `LEGACY_DEFAULTS`.

    Keyed by schema too: tendon APIs share names with different types (physxTendon:<i>:gearing is
    float[] on joint axes, float on spatial attachments)."""
    from pxr import Sdf

    own: dict[str, list[AttributeSpec]] = {}
    builtins: dict[str, list[str]] = {}
    for path in schema_files():
        layer = Sdf.Layer.FindOrOpen(str(path))
        for prim in layer.rootPrims:
            if not prim.name.endswith("API"):
                continue
            attributes = []
            for attr in prim.attributes:
                type_name = str(attr.typeName)
                name = attr.name.replace("__INSTANCE_NAME__", "{instance}")
                uniform = attr.variability == Sdf.VariabilityUniform
                default = _python_default(attr.default, type_name)
                attributes.append(AttributeSpec(prim.name, name, type_name, uniform, default))
            own[prim.name] = attributes
            schemas = prim.GetInfo("apiSchemas") if prim.HasInfo("apiSchemas") else None
            builtins[prim.name] = [s.split(":")[0] for s in (schemas.ApplyOperations([]) if schemas else [])]
    specs = {}
    for schema, attributes in own.items():
        for base in builtins[schema]:
            specs.update({(schema, a.name): a for a in own.get(base, [])})
        specs.update({(schema, a.name): a for a in attributes})
    for name, (schema, type_name, uniform, default) in LEGACY_DEFAULTS.items():
        specs[(schema, name)] = AttributeSpec(schema, name, type_name, uniform, default)
    return specs


@cache
def schema_defaults() -> dict[str, object]:
    """Fallback of every schema attribute by '{instance}' name (a name two schemas share has one fallback)."""
    return {spec.name: spec.default for spec in attribute_specs().values() if spec.default is not None}
