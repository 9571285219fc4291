"""Reading authored values from prims: applied API schemas, attributes with schema defaults, NaN checks.

PhysX API schemas are found in the composed `apiSchemas` list-op metadata and their attributes are read by
name; defaults for unauthored attributes come from the official schema packages' files (`usdart.usd.schemas`),
so the importer behaves the same whether or not usd-core's registry saw those schemas.

Values authored as 32-bit floats are widened to the shortest decimal that round-trips in float32
(0.316f -> 0.316, not 0.31600001454...): the author wrote a decimal, and this recovers it.

Every value read goes through one check (`check_value`), driven by the attribute's name: it must have
the kind the schema declares (a number, a vector, a quaternion, a token among the allowed ones), be
finite unless an infinity means something there ("no limit", "unset"), respect the attribute's sign,
and stay within physical scales. Errors name the prim and the attribute.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from functools import cache

import numpy as np
from pxr import Sdf, Tf, Usd

from ...errors import PhysicsImportError
from ..schemas import schema_defaults

# the (prim path, attribute name) of every authored value the importer reads, while `recording_reads` runs
_READS: contextvars.ContextVar[set | None] = contextvars.ContextVar("usdart_attribute_reads", default=None)


@contextlib.contextmanager
def recording_reads():
    """Collect the (prim path, attribute name) pairs whose authored values are read inside the block (the
    import report: which authored attributes usdart used)."""
    reads: set[tuple[str, str]] = set()
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


# PhysX's units-scaled default sleep threshold, 5e-5 (PxTolerancesScale speed)^2 with the speed scale 10 m/s:
# what ovphysx uses for an articulation without PhysxArticulationAPI and for a rigid body whose threshold is
# unauthored, API or not (measured: each sleeps as with 0.005 m^2/s^2 authored; an articulation with the API
# applied and the threshold unauthored sleeps at the schema's raw 5e-5, ovphysx's population documents why)
SDK_SLEEP_THRESHOLD = 5e-3  # m^2/s^2


def schema_default(name: str):
    """Schema fallback of a PhysX or Newton attribute; multiple-apply names keep their '{instance}'."""
    return schema_defaults().get(name)


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
    value = python_value(attr, time)
    if value is None:
        return None
    reads = _READS.get()
    if reads is not None:
        reads.add((str(prim.GetPath()), name))
    return check_value(prim, attr, value)


def python_value(attr: Usd.Attribute, time=Usd.TimeCode.Default()):
    """The attribute's value as Python numbers (float32 widened to the decimal authored), or None; a
    time-sampled-only value gives its earliest sample."""
    value = attr.Get(time)
    if value is None and attr.GetNumTimeSamples() > 0:
        value = attr.Get(Usd.TimeCode.EarliestTime())
    return None if value is None else _to_python(value, _is_float32(attr))


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


# ---- the one check every authored value passes ---------------------------------------------------------
PHYSICAL_SCALE = 1e12  # beyond this (in stage units) no value describes a mechanism: a typo or a sentinel
_MULTI_APPLY = ("drive", "limit", "state", "physxJointAxis", "physxLimit", "physxMimicJoint", "physxTendon")
_MULTI_APPLY += ("physxDrivePerformanceEnvelope",)

# where an infinity means something, and which one: "no limit" (+inf upper bounds, -inf lower bounds) or
# "unset" (-inf gravity magnitude and centre of mass); PhysX attributes with an infinite fallback add theirs
_INFINITY_ALLOWED = {
    "physics:lowerLimit": -1,
    "physics:upperLimit": 1,
    "limit:{instance}:physics:low": -1,
    "limit:{instance}:physics:high": 1,
    "drive:{instance}:physics:maxForce": 1,
    "physics:maxDistance": 1,
    "physics:gravityMagnitude": -1,
    "physics:centerOfMass": -1,
    "physxJoint:maxJointVelocity": 1,
    "physxJointAxis:{instance}:maxJointVelocity": 1,
    "newton:velocityLimit": 1,
}

# (minimum, whether the minimum itself is excluded); every other number may be negative
_MINIMUM = dict.fromkeys(
    (
        "physics:mass",
        "physics:density",
        "physics:breakForce",
        "physics:breakTorque",
        "physxPhysicsDistanceJoint:springStiffness",
        "physxPhysicsDistanceJoint:springDamping",
        "physics:diagonalInertia",
        "drive:{instance}:physics:stiffness",
        "drive:{instance}:physics:damping",
        "drive:{instance}:physics:maxForce",
        "physxJoint:armature",
        "physxJoint:jointFriction",
        "physxJoint:maxJointVelocity",
        "physxJointAxis:{instance}:armature",
        "physxJointAxis:{instance}:maxJointVelocity",
        "physxJointAxis:{instance}:staticFrictionEffort",
        "physxJointAxis:{instance}:dynamicFrictionEffort",
        "physxJointAxis:{instance}:viscousFrictionCoefficient",
        "newton:armature",
        "newton:friction",
        "newton:damping",
        "newton:velocityLimit",
        "physxRigidBody:linearDamping",
        "physxRigidBody:angularDamping",
        "physxRigidBody:maxLinearVelocity",
        "physxRigidBody:maxAngularVelocity",
        "physxRigidBody:sleepThreshold",
        "physxRigidBody:stabilizationThreshold",
        "physxRigidBody:cfmScale",
        "physxRigidBody:solverVelocityIterationCount",
        "physxArticulation:sleepThreshold",
        "physxArticulation:stabilizationThreshold",
        "physxArticulation:solverVelocityIterationCount",
        "physxMimicJoint:{instance}:naturalFrequency",
        "physxMimicJoint:{instance}:dampingRatio",
        "physxTendon:{instance}:stiffness",
        "physxTendon:{instance}:damping",
        "physxTendon:{instance}:limitStiffness",
        "physxDrivePerformanceEnvelope:{instance}:maxActuatorVelocity",
        "physxDrivePerformanceEnvelope:{instance}:velocityDependentResistance",
        "physxDrivePerformanceEnvelope:{instance}:speedEffortGradient",
        "physxLimit:{instance}:restitution",
        "physxLimit:{instance}:bounceThreshold",
        "physxLimit:{instance}:stiffness",
        "physxLimit:{instance}:damping",
    ),
    (0.0, False),
)
_MINIMUM.update(
    {
        "physxScene:timeStepsPerSecond": (0.0, True),
        "newton:timeStepsPerSecond": (0.0, True),
        "physxArticulation:solverPositionIterationCount": (1.0, False),
        "physxRigidBody:solverPositionIterationCount": (1.0, False),
    }
)
# PhysX takes 1..255 solver iterations; more would only make a typo run for hours
_MAXIMUM = {
    "physxArticulation:solverPositionIterationCount": 255,
    "physxArticulation:solverVelocityIterationCount": 255,
    "physxRigidBody:solverPositionIterationCount": 255,
    "physxRigidBody:solverVelocityIterationCount": 255,
}
# gains and rates may be as stiff as an author likes (the step reports a run that diverges)
_ANY_SCALE = ("stiffness", "damping", "limitStiffness", "naturalFrequency", "timeStepsPerSecond")

# attributes of schemas usd-core does not register (NewtonSchema): their kind by name
_UNREGISTERED_KINDS = {
    "newton:armature": "number",
    "newton:friction": "number",
    "newton:damping": "number",
    "newton:velocityLimit": "number",
    "newton:timeStepsPerSecond": "number",
    "newton:mimicCoef0": "number",
    "newton:mimicCoef1": "number",
    "newton:gravityEnabled": "bool",
    "newton:mimicEnabled": "bool",
}
_NUMBER_TYPES = {"float", "double", "GfHalf", "int", "unsigned int", "int64_t", "uint64_t", "unsigned char"}


def attribute_template(name: str) -> str:
    """'drive:angular:physics:stiffness' -> 'drive:{instance}:physics:stiffness' (the rule tables' keys)."""
    parts = name.split(":")
    if len(parts) >= 3 and parts[0] in _MULTI_APPLY:
        parts[1] = "{instance}"
    return ":".join(parts)


def _kind(type_name: Sdf.ValueTypeName) -> str:
    """What a schema attribute holds, ignoring precision and role: number, bool, vec3, quat, text, ...[]."""
    scalar = type_name.scalarType.cppTypeName
    if scalar in _NUMBER_TYPES:
        kind = "number"
    elif scalar.startswith("GfVec3"):
        kind = "vec3"
    elif scalar.startswith("GfQuat"):
        kind = "quat"
    elif scalar in ("TfToken", "std::string"):
        kind = "text"
    else:
        kind = scalar
    return kind + "[]" if type_name.isArray else kind


def _value_kind(value) -> str:
    """The same classification of a value as read (an authored type can differ from the schema's type, and
    then the attribute reports the schema's type name but holds the authored value)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return {(3,): "vec3", (4,): "quat"}.get(value.shape, "number[]") if value.ndim == 1 else "array"
    if isinstance(value, (list, tuple)) or type(value).__name__.startswith("Vt"):
        return "text[]" if all(isinstance(v, str) for v in value) else "array"
    return type(value).__name__


def _article(kind: str) -> str:
    words = {
        "number[]": "an array of numbers",
        "text[]": "an array of tokens",
        "vec3": "a 3-vector",
        "quat": "a quaternion",
        "text": "a token or string",
        "number": "a number",
        "bool": "a bool",
    }
    return words.get(kind, kind)


def _declared(prim: Usd.Prim, name: str):
    """The schema's definition of an attribute: from the prim's applied schemas, else from any API schema
    that declares the name (an attribute read where its API is not applied still means the same)."""
    definition = prim.GetPrimDefinition().GetAttributeDefinition(name)
    if definition:
        return definition
    return _api_attribute_definitions().get(attribute_template(name))


@cache
def _api_attribute_definitions() -> dict:
    """Attribute definitions of every registered API schema, keyed by rule-table name ('{instance}')."""
    registry = Usd.SchemaRegistry()
    out = {}
    for schema_type in Tf.Type.FindByName("UsdAPISchemaBase").GetAllDerivedTypes():
        name = Usd.SchemaRegistry.GetSchemaTypeName(schema_type)
        definition = registry.FindAppliedAPIPrimDefinition(name) if name else None
        if not definition:
            continue
        for prop in definition.GetPropertyNames():
            attribute = definition.GetAttributeDefinition(prop)
            if attribute:
                out.setdefault(attribute_template(prop.replace("__INSTANCE_NAME__", "{instance}")), attribute)
    return out


def _infinity_allowed(template: str) -> int:
    """+1: +inf means something here, -1: -inf does, 0: neither."""
    if template in _INFINITY_ALLOWED:
        return _INFINITY_ALLOWED[template]
    fallback = schema_default(template)
    if isinstance(fallback, float) and math.isinf(fallback):
        return 1 if fallback > 0 else -1
    return 0


def check_value(prim: Usd.Prim, attr: Usd.Attribute, value):
    """`value` (read from `attr`) if it is a value of the kind, sign and scale the attribute means; else a
    PhysicsImportError naming the prim and the attribute."""
    name = attr.GetName()
    template = attribute_template(name)

    def fail(reason: str):
        raise PhysicsImportError(prim.GetPath(), f"attribute '{name}' {reason}")

    definition = _declared(prim, name)
    expected = _kind(definition.GetTypeName()) if definition else _UNREGISTERED_KINDS.get(name)
    held = _value_kind(value)
    if expected is not None and held != expected and not (expected.endswith("[]") and held in ("vec3", "quat")):
        fail(f"holds {_article(held)} ({_show(value)}); it must be {_article(expected)}")
    if held == "text":
        allowed = definition.GetMetadata("allowedTokens") if definition else None
        if allowed and str(value) not in [str(t) for t in allowed]:
            fail(f"is '{value}'; allowed: {', '.join(str(t) for t in allowed)}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, np.ndarray)):
        return value
    numbers = np.asarray(value, dtype=float).reshape(-1)
    if np.isnan(numbers).any():
        fail("is NaN" if numbers.size == 1 else "contains NaN")
    infinite = numbers[np.isinf(numbers)]
    if infinite.size and not np.all(np.sign(infinite) == _infinity_allowed(template)):
        fail(f"is {'infinite' if numbers.size == 1 else 'not finite'} ({_show(value)}), which means nothing here")
    finite = numbers[np.isfinite(numbers)]
    if held == "quat" and not np.any(finite):
        fail(f"is {_show(value)}, not a rotation (a zero quaternion)")
    low, strict = _MINIMUM.get(template, (-math.inf, False))
    if np.any(finite < low) or (strict and np.any(finite <= low)):
        fail(f"is {_show(value)}; it must be {'greater than' if strict else 'at least'} {low:g}")
    if template in _MAXIMUM and np.any(finite > _MAXIMUM[template]):
        fail(f"is {_show(value)}; it must be at most {_MAXIMUM[template]:g}")
    unbounded = _infinity_allowed(template) > 0 or template.rsplit(":", 1)[-1] in _ANY_SCALE
    if not unbounded and np.any(np.abs(finite) > PHYSICAL_SCALE):
        fail(f"is {_show(value)}, beyond any physical scale (|value| > {PHYSICAL_SCALE:g} in stage units)")
    return value


def _show(value) -> str:
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return "(" + ", ".join(f"{v:g}" for v in value.reshape(-1)[:6]) + (", ..." if value.size > 6 else "") + ")"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}"
    return repr(value)[:60]


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
