"""Reading authored values from prims: applied API schemas, attributes with schema defaults, NaN checks.

usd-core does not ship PhysxSchema, so PhysX API schemas are found in the composed `apiSchemas` list-op
metadata and their attributes are read by name; defaults for unauthored attributes come from the
PhysX schema tables packaged in `usdart/data/physx_usd_schema_props.json` (the same values the schema
plugin declares as fallbacks), so the importer behaves the same with or without the plugin.

Values authored as 32-bit floats are widened to the shortest decimal that round-trips in float32
(0.316f -> 0.316, not 0.31600001454...): the author wrote a decimal, and this recovers it.
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources

import numpy as np
from pxr import Usd

from ...errors import PhysicsImportError


@cache
def physx_schema_defaults() -> dict[str, object]:
    """Fallback value of every PhysX schema attribute, keyed by name with '{instance}' placeholders."""
    text = resources.files("usdart").joinpath("data/physx_usd_schema_props.json").read_text()
    defaults = {}
    for schema in json.loads(text).values():
        for prop in schema["properties"]:
            if prop.get("type") != "rel" and "default" in prop:
                defaults[prop["name"]] = prop["default"]
    return defaults


def schema_default(name: str):
    """Schema fallback of a PhysX attribute; multiple-apply names keep their '{instance}' placeholder."""
    value = physx_schema_defaults().get(name)
    if isinstance(value, str):
        return {"inf": math.inf, "-inf": -math.inf}.get(value, value)
    return value


def applied_schemas(prim: Usd.Prim) -> list[str]:
    """Every applied API schema token, registered or not, in composed order."""
    tokens = list(prim.GetAppliedSchemas())
    op = prim.GetMetadata("apiSchemas")
    if op is not None:
        for token in op.ApplyOperations([]):
            if token not in tokens:
                tokens.append(token)
    return tokens


def api_instances(schemas: list[str], schema: str) -> list[str]:
    """Instance names of a multiple-apply schema among applied tokens ('PhysxMimicJointAPI:rotZ' -> 'rotZ')."""
    prefix = schema + ":"
    return [s[len(prefix) :] for s in schemas if s.startswith(prefix)]


def _is_float32(attr: Usd.Attribute) -> bool:
    name = attr.GetTypeName().cppTypeName
    return (
        name in ("float", "VtArray<float>")
        or (name.startswith("Gf") and name.endswith("f"))
        or (name.startswith("VtArray<Gf") and name.endswith("f>"))
    )


def _widen(x) -> float:
    return float(str(np.float32(x)))


def _to_python(value, float32: bool):
    """Gf/Vt values -> float, numpy arrays; quaternions become (w, x, y, z)."""
    if hasattr(value, "GetReal") and hasattr(value, "GetImaginary"):
        comps = [value.GetReal(), *value.GetImaginary()]
        return np.array([_widen(c) for c in comps] if float32 else comps, dtype=float)
    if isinstance(value, bool) or isinstance(value, (str, int)) and not isinstance(value, float):
        return value
    if isinstance(value, float):
        return _widen(value) if float32 else value
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        return value
    if float32:
        arr = np.array([_widen(v) for v in arr.ravel()], dtype=float).reshape(arr.shape) if arr.size <= 64 else arr
    return arr


def authored(prim: Usd.Prim, name: str, time=Usd.TimeCode.Default()):
    """The authored value of an attribute, or None. Time-sampled-only values give the earliest sample."""
    attr = prim.GetAttribute(name)
    if not attr or not attr.HasAuthoredValue():
        return None
    value = attr.Get(time)
    if value is None and attr.GetNumTimeSamples() > 0:
        value = attr.Get(Usd.TimeCode.EarliestTime())
    if value is None:
        return None
    value = _to_python(value, _is_float32(attr))
    check_finite_or_inf(prim, name, value)
    return value


def read(prim: Usd.Prim, name: str, default=None, time=Usd.TimeCode.Default()):
    """Authored value, else `default` (pass the schema default)."""
    value = authored(prim, name, time)
    return default if value is None else value


def read_physx(prim: Usd.Prim, name: str, instance: str | None = None, time=Usd.TimeCode.Default()):
    """A PhysX schema attribute with its schema fallback; `name` may contain '{instance}'."""
    full = name.format(instance=instance) if instance else name
    value = authored(prim, full, time)
    if value is None:
        return schema_default(name)
    return value


def check_finite_or_inf(prim: Usd.Prim, name: str, value) -> None:
    """NaN is never a meaningful physics value (inf is: 'unlimited')."""
    if isinstance(value, float) and math.isnan(value):
        raise PhysicsImportError(prim.GetPath(), f"attribute '{name}' is NaN")
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and np.isnan(value).any():
        raise PhysicsImportError(prim.GetPath(), f"attribute '{name}' contains NaN")


def first_target(prim: Usd.Prim, rel_name: str, warnings: list[str]) -> str | None:
    """First target of a relationship as an absolute path string; warns when there are several."""
    rel = prim.GetRelationship(rel_name)
    if not rel:
        return None
    targets = rel.GetForwardedTargets() if hasattr(rel, "GetForwardedTargets") else rel.GetTargets()
    if not targets:
        return None
    if len(targets) > 1:
        warnings.append(
            f"{prim.GetPath()}: relationship '{rel_name}' has {len(targets)} targets; "
            f"only the first ({targets[0]}) is used"
        )
    return str(targets[0])
