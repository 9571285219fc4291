"""Simulated states -> USD time samples: a layer of `over`s written through Sdf, in one change block.

Why Sdf and not Usd attributes: Usd's `Set` per sample notifies the stage and re-resolves on every call;
`SdfLayer.SetTimeSample` on an anonymous layer nobody composes yet costs about a microsecond per sample,
and every pose is computed beforehand for all frames at once with numpy.

Link and free-body prims get `xformOp:translate` and `xformOp:orient` time samples (double3 and quatd, or
the input's float3 / quatf where it authored those) and a new `xformOpOrder` [translate, orient(, scale)],
with the prim's authored scale kept as `xformOp:scale`.
The ops are relative to the prim's parent at each time code, so that the prim's world transform (scale
removed) is the simulated pose: when the parent is, or sits under, another written body, the parent's
world transform comes from that body's simulated pose (times the authored transforms between them); else
from the composed input stage (at each time code when something above is animated).

Joints get `state:<axis>:physics:position` / `velocity` time samples (PhysicsJointStateAPI, prepended to
`apiSchemas` where the input does not apply it) in the stage's units and USD's body0 -> body1 sense.
"""

from __future__ import annotations

import collections
import functools
from dataclasses import dataclass

import numpy as np
from pxr import Gf, Sdf, Usd, UsdGeom, Vt

from ..core.frames import decompose, usd_to_column
from .importer.usd_values import applied_schemas

# stage metadata lives in the root layer: the output carries the input's
COPIED_METADATA = ("defaultPrim", "upAxis", "metersPerUnit", "kilogramsPerUnit")
_OPS = {
    "translate": Sdf.ValueTypeNames.Double3,
    "orient": Sdf.ValueTypeNames.Quatd,
    "scale": Sdf.ValueTypeNames.Double3,
}
_FLOAT_OPS = {
    "translate": (Sdf.ValueTypeNames.Double3, Sdf.ValueTypeNames.Float3),
    "orient": (Sdf.ValueTypeNames.Quatd, Sdf.ValueTypeNames.Quatf),
    "scale": (Sdf.ValueTypeNames.Double3, Sdf.ValueTypeNames.Float3),
}


@dataclass
class BodyFrames:
    """World pose of a body prim's frame (scale removed) at each recorded frame."""

    path: str
    position: np.ndarray  # (F, 3)
    rotation: np.ndarray  # (F, 3, 3)


@dataclass
class DofSeries:
    """One DOF's JointStateAPI values at each recorded frame, in stage units and USD's sense."""

    joint: str
    instance: str  # angular, linear, rotX ...
    position: np.ndarray  # (F,)
    velocity: np.ndarray  # (F,)


def new_layer(
    stage: Usd.Stage, time_codes_per_second: float, start: float, end: float, sublayer: str | None
) -> Sdf.Layer:
    """An anonymous layer with the input's stage metadata and the output's time range."""
    layer = Sdf.Layer.CreateAnonymous(".usda")
    source = stage.GetRootLayer().pseudoRoot
    for key in COPIED_METADATA:
        if source.HasInfo(key):
            layer.pseudoRoot.SetInfo(key, source.GetInfo(key))
    if sublayer is not None:
        layer.subLayerPaths.append(sublayer)
    layer.timeCodesPerSecond = time_codes_per_second
    layer.framesPerSecond = time_codes_per_second
    layer.startTimeCode = start
    layer.endTimeCode = end
    return layer


def write(layer: Sdf.Layer, stage: Usd.Stage, time_codes, bodies: list[BodyFrames], dofs: list[DofSeries]) -> None:
    """Author every body's xformOps and every DOF's joint state into `layer`.

    Everything read from the stage is read first: inside the change block only Sdf is touched (Usd must
    not be used while a change block is open)."""
    times = [float(t) for t in time_codes]
    locals_ = local_transforms(stage, times, bodies)
    body_plans = [
        (body.path, {op: _op(stage.GetPrimAtPath(body.path), op) for op in _OPS}, *locals_[body.path])
        for body in bodies
    ]
    dof_plans = [(series, _dof_plan(stage.GetPrimAtPath(series.joint), series.instance)) for series in dofs]
    with Sdf.ChangeBlock():
        for plan in body_plans:
            _write_body(layer, times, *plan)
        for series, (api_token, type_names) in dof_plans:
            _write_dof(layer, times, series, api_token, type_names)


# ---- poses -------------------------------------------------------------------------------------------
def local_transforms(stage: Usd.Stage, time_codes: list[float], bodies: list[BodyFrames]) -> dict:
    """Per body path: (translate (F, 3), orient (F, 4) wxyz, authored scale (3,), resets the xform stack)."""
    written = {b.path: b for b in bodies}
    out = {}
    for body in bodies:
        prim = stage.GetPrimAtPath(body.path)
        xformable = UsdGeom.Xformable(prim)
        resets = bool(xformable.GetResetXformStack())
        parent = _parent_matrices(stage, prim, time_codes, written, resets)
        world = np.zeros((len(time_codes), 4, 4))
        world[:, :3, :3] = body.rotation
        world[:, :3, 3] = body.position
        world[:, 3, 3] = 1.0
        local = np.linalg.solve(parent, world) if parent.ndim == 3 else np.linalg.inv(parent) @ world
        rotation = _nearest_rotations(local[:, :3, :3])
        scale = decompose(xformable.GetLocalTransformation(Usd.TimeCode.Default()))[2]
        out[body.path] = (local[:, :3, 3].copy(), _continuous(_quaternions(rotation)), scale, resets)
    return out


def _parent_matrices(stage, prim, time_codes, written, resets) -> np.ndarray:
    """Parent world matrix (column convention, scale kept): (4, 4) when constant, else (F, 4, 4)."""
    if resets:
        return np.eye(4)
    parent = prim.GetParent()
    chain, anchor = [], None  # prims from the parent up to (not including) the nearest written body
    p = parent
    while p and not p.IsPseudoRoot():
        if str(p.GetPath()) in written:
            anchor = written[str(p.GetPath())]
            break
        chain.append(p)
        if UsdGeom.Xformable(p) and UsdGeom.Xformable(p).GetResetXformStack():
            break  # everything above is ignored by the composed transform
        p = p.GetParent()
    animated = any(
        UsdGeom.Xformable(c) and UsdGeom.Xformable(c).TransformMightBeTimeVarying()
        for c in (chain if anchor is not None else _ancestors(parent))
    )
    codes = time_codes if animated else [Usd.TimeCode.Default()]
    matrices = []
    for code in codes:
        cache = UsdGeom.XformCache(code)
        if anchor is None:
            matrices.append(usd_to_column(cache.GetLocalToWorldTransform(parent)))
        else:
            relative = np.eye(4)
            for c in chain:  # parent first: relative = L(top of chain) @ ... @ L(parent)
                relative = usd_to_column(cache.GetLocalTransformation(c)[0]) @ relative
            matrices.append(relative)
    if anchor is None:
        return matrices[0] if not animated else np.array(matrices)
    anchor_prim = stage.GetPrimAtPath(anchor.path)
    scale = decompose(UsdGeom.XformCache(Usd.TimeCode.Default()).GetLocalToWorldTransform(anchor_prim))[2]
    anchor_world = np.zeros((len(time_codes), 4, 4))
    anchor_world[:, :3, :3] = anchor.rotation * scale  # columns scaled: R @ diag(scale)
    anchor_world[:, :3, 3] = anchor.position
    anchor_world[:, 3, 3] = 1.0
    return anchor_world @ (np.array(matrices) if animated else matrices[0])


def _ancestors(prim):
    while prim and not prim.IsPseudoRoot():
        yield prim
        prim = prim.GetParent()


def _nearest_rotations(linear: np.ndarray) -> np.ndarray:
    """Polar decomposition: the rotation nearest to each (scaled, possibly sheared) 3x3 matrix; matrices
    that are rotations already (no scale above the prim, the common case) are returned as they are."""
    gram = np.einsum("fji,fjk->fik", linear, linear)
    if np.abs(gram - np.eye(3)).max(initial=0.0) < 1e-12:
        return linear
    u, _, vt = np.linalg.svd(linear)
    d = np.sign(np.linalg.det(u @ vt))
    u[:, :, 2] *= d[:, None]
    return u @ vt


def _quaternions(R: np.ndarray) -> np.ndarray:
    """Rotation matrices (F, 3, 3) -> unit quaternions (F, 4) wxyz, Shepperd's branch choice."""
    tr = np.trace(R, axis1=1, axis2=2)
    diag = np.stack([tr, R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]], axis=1)
    four_sq = np.column_stack([1.0 + tr, 1.0 + 2.0 * diag[:, 1:] - tr[:, None]])  # 4 w^2, 4 x^2, 4 y^2, 4 z^2
    k = four_sq.argmax(axis=1)
    s = 2.0 * np.sqrt(np.maximum(four_sq[np.arange(len(R)), k], 1e-300))  # 4 |largest component|
    a = np.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]], axis=1)  # 4 w (x, y, z)
    b = np.stack([R[:, 0, 1] + R[:, 1, 0], R[:, 0, 2] + R[:, 2, 0], R[:, 1, 2] + R[:, 2, 1]], axis=1)  # 4 xy, xz, yz
    cases = (
        np.stack(
            [
                np.column_stack([s * s / 4, a[:, 0], a[:, 1], a[:, 2]]),
                np.column_stack([a[:, 0], s * s / 4, b[:, 0], b[:, 1]]),
                np.column_stack([a[:, 1], b[:, 0], s * s / 4, b[:, 2]]),
                np.column_stack([a[:, 2], b[:, 1], b[:, 2], s * s / 4]),
            ],
            axis=1,
        )
        / s[:, None, None]
    )
    q = cases[np.arange(len(R)), k]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q * np.where(q[:, :1] < 0, -1.0, 1.0)


def _continuous(q: np.ndarray) -> np.ndarray:
    """Flip signs so consecutive quaternions lie in the same hemisphere (USD interpolates between them)."""
    if len(q) > 1:
        flips = np.where(np.einsum("ij,ij->i", q[1:], q[:-1]) < 0, -1.0, 1.0)
        q[1:] *= np.cumprod(flips)[:, None]
    return q


# ---- authoring ---------------------------------------------------------------------------------------
def _samples(layer: Sdf.Layer, path: Sdf.Path, times: list[float], values) -> None:
    collections.deque(map(functools.partial(layer.SetTimeSample, path), times, values), maxlen=0)


def _op(prim: Usd.Prim, op: str) -> tuple[str, Sdf.ValueTypeName]:
    """Name and type of one of our ops: the input's own op when it has a float or double type (its
    precision is the author's choice), else ours in double; a half-precision or odd-typed op of the same
    name gets our op beside it, suffixed `:usdart`."""
    name = f"xformOp:{op}"
    existing = prim.GetAttribute(name)
    if not existing or not existing.GetTypeName():
        return name, _OPS[op]
    if existing.GetTypeName() in _FLOAT_OPS[op]:
        return name, existing.GetTypeName()
    return f"{name}:usdart", _OPS[op]


def _write_body(layer, times, path, ops, translate, orient, scale, resets) -> None:
    spec = Sdf.CreatePrimInLayer(layer, path)
    (t_name, t_type), (o_name, o_type), (s_name, s_type) = ops["translate"], ops["orient"], ops["scale"]
    t_spec = Sdf.AttributeSpec(spec, t_name, t_type)
    o_spec = Sdf.AttributeSpec(spec, o_name, o_type)
    vec = Vt.Vec3dArray if t_type == Sdf.ValueTypeNames.Double3 else Vt.Vec3fArray
    quat = Vt.QuatdArray if o_type == Sdf.ValueTypeNames.Quatd else Vt.QuatfArray
    dtype = {Vt.Vec3dArray: np.float64, Vt.Vec3fArray: np.float32}
    _samples(layer, t_spec.path, times, vec.FromNumpy(np.ascontiguousarray(translate, dtype=dtype[vec])))
    orient_xyzw = orient[:, [1, 2, 3, 0]]
    _samples(
        layer,
        o_spec.path,
        times,
        quat.FromNumpy(np.ascontiguousarray(orient_xyzw, dtype=np.float64 if quat is Vt.QuatdArray else np.float32)),
    )
    order = (["!resetXformStack!"] if resets else []) + [t_name, o_name]
    if not np.allclose(scale, 1.0, rtol=0.0, atol=1e-12):
        s_spec = Sdf.AttributeSpec(spec, s_name, s_type)
        s_spec.default = (Gf.Vec3d if s_type == Sdf.ValueTypeNames.Double3 else Gf.Vec3f)(*scale.tolist())
        order.append(s_name)
    order_spec = Sdf.AttributeSpec(spec, "xformOpOrder", Sdf.ValueTypeNames.TokenArray, Sdf.VariabilityUniform)
    order_spec.default = Vt.TokenArray(order)


def _dof_plan(prim: Usd.Prim, instance: str):
    """(JointStateAPI token to apply or None, attribute type per quantity): the input's type if it has one."""
    token = f"PhysicsJointStateAPI:{instance}"
    types = {}
    for quantity in ("position", "velocity"):
        existing = prim.GetAttribute(f"state:{instance}:physics:{quantity}")
        types[quantity] = existing.GetTypeName() if existing and existing.GetTypeName() else Sdf.ValueTypeNames.Float
    return (None if token in applied_schemas(prim) else token), types


def _write_dof(layer, times, series: DofSeries, api_token, type_names) -> None:
    spec = Sdf.CreatePrimInLayer(layer, series.joint)
    if api_token is not None:
        ops = spec.GetInfo("apiSchemas") if spec.HasInfo("apiSchemas") else Sdf.TokenListOp()
        spec.SetInfo("apiSchemas", Sdf.TokenListOp.Create(prependedItems=[*ops.prependedItems, api_token]))
    for quantity, values in (("position", series.position), ("velocity", series.velocity)):
        attr = Sdf.AttributeSpec(spec, f"state:{series.instance}:physics:{quantity}", type_names[quantity])
        _samples(layer, attr.path, times, np.asarray(values, dtype=float).tolist())
