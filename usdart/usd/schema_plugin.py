"""Registers usdart's codeless PhysX schema plugin with usd-core, unless a PhysX schema is already there.

usd-core does not ship NVIDIA's PhysxSchema. With this plugin registered, usd-core knows the PhysX API
schemas usdart reads (PhysicsJointStateAPI, PhysxMimicJointAPI, PhysxJointAPI, ...): `prim.HasAPI`,
`GetAppliedSchemas`, fallback values and declared property types work as they do in Isaac Sim. The
files written are the same either way (applied-schema tokens and attributes by name), and the importer
reads them the same way with or without the plugin.

It is registered on `import usdart`, which must come before usd-core builds its schema registry (the
first stage opened in the process): a registry built earlier does not see plugins registered later.
`import usdart` registers it when pxr is already imported; otherwise (the numba core never needs pxr) the
first import of usdart's USD side (importer, authoring, `usdart.load`) or `status()` does. It is skipped
when:
- a PhysX schema is already registered (Isaac Sim / Omniverse: plugins "physxSchema",
  "physxSchemaAddition", the type PhysxSchemaPhysxMimicJointAPI, or any other plugin declaring one of
  the same schema names): two definitions of one schema would clash;
- the environment variable USDART_NO_SCHEMA_PLUGIN is set to a non-empty value other than "0".
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "data" / "schema_plugin"
PLUGIN_NAME = "usdartPhysxSchema"
DISABLE_ENV = "USDART_NO_SCHEMA_PLUGIN"
PHYSX_PLUGIN_NAMES = ("physxSchema", "physxSchemaAddition")
PHYSX_TYPE_NAME = "PhysxSchemaPhysxMimicJointAPI"


@dataclass(frozen=True)
class PluginStatus:
    """Whether usdart's plugin is registered in this process, and why not when it is not."""

    registered: bool
    reason: str


_status: PluginStatus | None = None


def schema_names() -> list[str]:
    """The API schema names (apiSchemas tokens without instance) the plugin defines."""
    text = (PLUGIN_DIR / "plugInfo.json").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    types = json.loads(body)["Plugins"][0]["Info"]["Types"]
    return sorted(info["alias"]["UsdSchemaBase"] for info in types.values())


def existing_physx_schema() -> str | None:
    """What already defines PhysX schemas in this process (None: nothing), without building the registry."""
    from pxr import Plug, Tf

    registry = Plug.Registry()
    for name in PHYSX_PLUGIN_NAMES:
        if registry.GetPluginWithName(name):
            return f"plugin '{name}' is registered"
    if not Tf.Type.FindByName(PHYSX_TYPE_NAME).isUnknown:
        return f"type {PHYSX_TYPE_NAME} is declared"
    ours = set(schema_names())
    for plugin in registry.GetAllPlugins():
        if plugin.name == PLUGIN_NAME:
            continue
        for info in plugin.metadata.get("Types", {}).values():
            alias = info.get("alias", {}).get("UsdSchemaBase") if isinstance(info, dict) else None
            if alias in ours:
                return f"plugin '{plugin.name}' defines {alias}"
    return None


def register() -> PluginStatus:
    """Register the plugin once per process (later calls return the first answer)."""
    global _status
    if _status is not None:
        return _status
    from pxr import Plug

    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        _status = PluginStatus(False, f"disabled by {DISABLE_ENV}")
    elif Plug.Registry().GetPluginWithName(PLUGIN_NAME):
        _status = PluginStatus(True, "already registered")
    elif (other := existing_physx_schema()) is not None:
        _status = PluginStatus(False, f"not needed: {other}")
    else:
        Plug.Registry().RegisterPlugins(str(PLUGIN_DIR))
        ok = bool(Plug.Registry().GetPluginWithName(PLUGIN_NAME))
        _status = PluginStatus(ok, "registered" if ok else f"usd-core did not register {PLUGIN_DIR}")
    return _status


def status() -> PluginStatus:
    """The outcome of `register()` (which `import usdart` runs)."""
    return register()
