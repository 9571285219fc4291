"""Writing PhysX API schemas by name, with the types the schema declares.

usd-core's registry may or may not know PhysxSchema (it does not when a stage was opened before
`import usdart`), so schemas are applied by token (`prim.AddAppliedSchema`, which writes `prepend
apiSchemas`) and attributes are created by name with the value type and variability the official schema
package declares (`usdart.usd.schemas`): the file text is the same either way, and the same as Isaac Sim
writes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pxr import Gf, Sdf, Usd, UsdPhysics, Vt

from ...core.description import ANGULAR_AXES, AXIS_ORDER
from ...errors import AuthoringError
from ..importer.joints import joint_kind
from ..schemas import attribute_specs


def apply_schema(prim: Usd.Prim, schema: str, instance: str | None = None) -> None:
    """Add `schema` or `schema:instance` to the prim's applied API schemas (once)."""
    token = f"{schema}:{instance}" if instance else schema
    op = prim.GetMetadata("apiSchemas")
    if op is None or token not in op.ApplyOperations([]):
        prim.AddAppliedSchema(token)


def _usd_value(prim: Usd.Prim, name: str, type_name: str, value):
    if type_name == "float[]":
        values = [float(v) for v in value]
        if any(math.isnan(v) for v in values):
            raise AuthoringError(prim.GetPath(), f"{name} contains NaN")
        return Vt.FloatArray(values)
    if type_name == "token[]":
        return Vt.TokenArray([str(v) for v in value])
    if type_name == "point3f":
        vec = [float(v) for v in value]
        if len(vec) != 3 or any(math.isnan(v) or math.isinf(v) for v in vec):
            raise AuthoringError(prim.GetPath(), f"{name} must be three finite numbers, got {tuple(value)}")
        return Gf.Vec3f(*vec)
    if type_name == "float":
        value = float(value)
        if math.isnan(value):
            raise AuthoringError(prim.GetPath(), f"{name} is NaN")
        return value
    if type_name == "bool":
        return bool(value)
    if type_name in ("int", "uint", "uint64"):
        if int(value) != value or (type_name != "int" and value < 0):
            raise AuthoringError(
                prim.GetPath(), f"{name} must be a{' non-negative' if type_name != 'int' else 'n'} integer, got {value}"
            )
        return int(value)
    return value


def set_attr(prim: Usd.Prim, schema: str, template: str, value, instance: str | None = None) -> Usd.Attribute:
    """Author an attribute of a PhysX API schema ('{instance}' in `template` is replaced) with its type."""
    spec = attribute_specs()[(schema, template)]
    type_name, uniform = spec.type_name, spec.uniform
    name = template.format(instance=instance) if instance else template
    attr = prim.CreateAttribute(
        name,
        Sdf.ValueTypeNames.Find(type_name),
        custom=False,
        variability=Sdf.VariabilityUniform if uniform else Sdf.VariabilityVarying,
    )
    attr.Set(_usd_value(prim, name, type_name, value))
    return attr


def set_rel(prim: Usd.Prim, name: str, target: Usd.Prim) -> Usd.Relationship:
    rel = prim.CreateRelationship(name, custom=False)
    rel.SetTargets([target.GetPath()])
    return rel


def non_negative(prim: Usd.Prim, **values: float | None) -> None:
    """Schema ranges [0, inf): refuse negative values before writing anything."""
    for name, value in values.items():
        if value is not None and (math.isnan(value) or value < 0):
            raise AuthoringError(prim.GetPath(), f"{name} must be non-negative, got {value}")


def prim_of(obj) -> Usd.Prim:
    """A Usd.Prim from a prim or a schema object (UsdPhysics.RevoluteJoint, ...)."""
    prim = obj.GetPrim() if hasattr(obj, "GetPrim") else obj
    if not isinstance(prim, Usd.Prim) or not prim.IsValid():
        raise AuthoringError(None, f"expected a valid Usd.Prim or schema object, got {obj!r}")
    return prim


def joint_dof(joint, axis: str | None = None) -> tuple[Usd.Prim, str, bool]:
    """(joint prim, API instance name, angular?) of one degree of freedom of a joint.

    Revolute joints have the instance "angular", prismatic joints "linear"; spherical joints rotX, rotY,
    rotZ; generic PhysicsJoints (D6) rotX ... transZ. `axis` may be omitted for single-DOF joints.
    """
    prim = prim_of(joint)
    kind = joint_kind(prim)
    if kind is None:
        raise AuthoringError(prim.GetPath(), f"is not a physics joint (type {prim.GetTypeName() or 'none'})")
    if kind in ("revolute", "prismatic"):
        instance = "angular" if kind == "revolute" else "linear"
        if axis not in (None, instance):
            raise AuthoringError(
                prim.GetPath(), f"a {kind} joint has one degree of freedom, '{instance}'; got axis '{axis}'"
            )
        return prim, instance, kind == "revolute"
    allowed: Sequence[str] = {"spherical": ANGULAR_AXES, "d6": AXIS_ORDER}.get(kind, ())
    if not allowed:
        raise AuthoringError(prim.GetPath(), f"a {kind} joint has no degree of freedom to author")
    if axis not in allowed:
        raise AuthoringError(prim.GetPath(), f"a {kind} joint needs axis= one of {', '.join(allowed)}; got {axis!r}")
    return prim, axis, axis in ANGULAR_AXES


def single_axis_token(prim: Usd.Prim) -> str:
    """'rotX'/'rotY'/'rotZ' from a revolute or prismatic joint's physics:axis (PhysX mimic axis tokens)."""
    axis = prim.GetAttribute(UsdPhysics.Tokens.physicsAxis).Get() or "X"
    return f"rot{axis}"
