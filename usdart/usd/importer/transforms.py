"""World transforms of the prims the importer places things by, checked before anything is built on them.

A body or joint target whose transform is not finite, collapses an axis (scale 0, a zero `orient`
quaternion) or lies beyond physical scales cannot be simulated; the error names the prim whose own
xformOps are at fault, which is often an ancestor of the body. What USD itself reads in a defined way
(a zero `orient` quaternion is no rotation, an op named in xformOpOrder but not authored is skipped) is
kept, with a usdart warning instead of USD's console output.
"""

from __future__ import annotations

import numpy as np
from pxr import Gf, Tf, Usd, UsdGeom

from ...errors import PhysicsImportError
from .usd_values import PHYSICAL_SCALE

_OP_TYPES = {str(UsdGeom.XformOp.GetOpTypeToken(t)) for t in UsdGeom.XformOp.Type.allValues} - {""}
SMALLEST_SCALE = 1e-9  # an axis scaled below this has collapsed: no rotation or inertia can be recovered


class WorldTransforms:
    """Local-to-world matrices at the default time (UsdGeom.XformCache), each checked once."""

    def __init__(self, warnings: list[str]):
        self._cache = UsdGeom.XformCache(Usd.TimeCode.Default())
        self._checked: dict[str, Gf.Matrix4d] = {}
        self._ops_checked: set[str] = set()
        self._warnings = warnings

    def matrix(self, prim: Usd.Prim) -> Gf.Matrix4d:
        key = str(prim.GetPath())
        if key not in self._checked:
            self._warn_about_ops(prim)
            try:
                world = self._cache.GetLocalToWorldTransform(prim)
            except Tf.ErrorException:
                world = None
            if world is None or placement_defect(np.array(world)) is not None:
                _raise_for_culprit(prim)
            self._checked[key] = world
        return self._checked[key]

    def _warn_about_ops(self, prim: Usd.Prim) -> None:
        """Check the ops of the prim and its ancestors once each: values of the wrong kind are errors; what USD
        reads in a defined but surely unintended way is a warning."""
        p = prim
        while p and not p.IsPseudoRoot() and str(p.GetPath()) not in self._ops_checked:
            self._ops_checked.add(str(p.GetPath()))
            self._warnings.extend(check_ops(p))
            p = p.GetParent()


def check_ops(prim: Usd.Prim) -> list[str]:
    """Errors for a prim's xformOps of the wrong kind; warnings for ops USD skips or reads as no rotation."""
    warnings = []
    for name in _op_names(prim):
        attr = prim.GetAttribute(name)
        if not attr or not attr.HasValue():
            warnings.append(f"{prim.GetPath()}: xformOpOrder names {name}, which has no value; USD skips it")
            continue
        value, kind = _first_value(attr), _op_kind(name)
        if not _holds(value, kind):
            raise PhysicsImportError(prim.GetPath(), f"{name} holds {value!r:.60}, not {kind}")
        if kind == "a quaternion" and value.GetLength() == 0:
            warnings.append(f"{prim.GetPath()}: {name} is a zero quaternion; USD reads it as no rotation")
    return warnings


def _op_names(prim: Usd.Prim) -> list[str]:
    """The ops a prim's xformOpOrder lists (inverted ops and the stack reset left out)."""
    order = prim.GetAttribute("xformOpOrder")
    names = order.Get() if order else None
    if names is None:
        return []
    if isinstance(names, (str, bytes)) or not all(isinstance(n, str) for n in _items(names)):
        raise PhysicsImportError(prim.GetPath(), f"xformOpOrder must be an array of op names, not {names!r:.60}")
    for name in names:
        if not name.startswith(("xformOp:", "!invert!xformOp:", "!resetXformStack!")):
            raise PhysicsImportError(prim.GetPath(), f"xformOpOrder names '{name}', which is not an xformOp")
        op = name.split("xformOp:", 1)[-1].split(":")[0]
        if name.startswith(("xformOp:", "!invert!")) and op not in _OP_TYPES:
            raise PhysicsImportError(prim.GetPath(), f"xformOpOrder names {name}: USD has no op type '{op}'")
    return [n for n in names if n.startswith("xformOp:")]


def _op_kind(name: str) -> str:
    """What an xformOp's value must be, from its op type ('xformOp:rotateX:tilt' -> a number)."""
    op = name.split(":")[1]
    if op == "orient":
        return "a quaternion"
    if op == "transform":
        return "a 4x4 matrix"
    if op[-1] in "XYZ" and op[:-1] in ("rotate", "translate", "scale"):  # one axis
        return "a number"
    return "a 3-vector"


def _holds(value, kind: str) -> bool:
    if kind == "a quaternion":
        return hasattr(value, "GetImaginary")
    if kind == "a 4x4 matrix":
        return hasattr(value, "ExtractRotation")
    if kind == "a number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return hasattr(value, "__len__") and not isinstance(value, str) and len(value) == 3


def _items(value) -> list:
    try:
        return list(value)
    except TypeError:
        return [value]


def _first_value(attr):
    """The value the default-time transform uses: the default, else the earliest time sample."""
    value = attr.Get()
    return attr.Get(Usd.TimeCode.EarliestTime()) if value is None else value


def placement_defect(matrix: np.ndarray) -> str | None:
    """Why a row-vector 4x4 matrix cannot place a body, or None."""
    if not np.all(np.isfinite(matrix)):
        return "is not finite"
    scales = np.linalg.norm(matrix[:3, :3], axis=1)
    if scales.min() < SMALLEST_SCALE:
        return f"collapses an axis (scale {scales.min():g}: a zero scale or a zero orient quaternion)"
    if np.abs(matrix[3, :3]).max() > PHYSICAL_SCALE:
        return f"puts it {np.abs(matrix[3, :3]).max():g} stage units away, beyond any physical scale"
    return None


def _raise_for_culprit(prim: Usd.Prim) -> None:
    """Name the outermost prim (the prim itself or an ancestor) whose own transform is unusable."""
    chain = []
    p = prim
    while p and not p.IsPseudoRoot():
        chain.append(p)
        p = p.GetParent()
    for p in reversed(chain):
        xformable = UsdGeom.Xformable(p)
        if not xformable:
            continue
        try:
            local = np.array(xformable.GetLocalTransformation(Usd.TimeCode.Default()))
        except Tf.ErrorException as exc:
            detail = " ".join(str(exc).split())
            reason = detail.split("'")[-2] if detail.count("'") >= 2 else detail[:200]
            raise PhysicsImportError(p.GetPath(), f"its xformOps cannot be evaluated ({reason})") from None
        defect = placement_defect(local)
        if defect is not None:
            ops = ", ".join(str(op.GetOpName()) for op in xformable.GetOrderedXformOps())
            raise PhysicsImportError(p.GetPath(), f"its transform ({ops}) {defect}")
    raise PhysicsImportError(prim.GetPath(), "its world transform cannot be computed")
