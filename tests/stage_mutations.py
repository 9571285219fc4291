"""Mutations of physics stages, for fuzzing usdart's input handling.

Shared by tests/test_fuzz_input.py (hypothesis, in CI) and scripts/fuzz_stages.py (a long seeded run that
counts outcomes): both draw from the same vocabulary through a `Chooser`, so whatever the script finds the
test can find too, and a failure either reports is described the same way.

An `Example` is a source stage (a bundled sample stage, a corpus robot with its payload layers, or a stage
the test helpers write) plus 1-3 `Mutation`s. Mutations are plain, picklable records: `materialize` copies
the source's layers into a folder and applies them there (layer edits with Sdf, then byte-level breakage),
`check_contract` loads the result and says what happened. What a mutation may touch is read from the source
stage itself (`Inventory`: the physics prims it has, their authored and schema-declared attributes,
relationships, applied APIs, xform ops and layers), not from names hard-coded from the sample files, so new
sample stages widen the fuzzing without edits here.

The contract (what usdart promises for any file): `usdart.load` either raises a `UsdartError` whose message
names a prim path or a file, or returns a scene whose state is finite; `STEPS` calls of `scene.step()` then
either raise a `UsdartError` or leave every state value finite. Any other exception, a hang, or NaN/inf in
the returned state breaks it. Warnings are allowed.
"""

from __future__ import annotations

import atexit
import math
import re
import shutil
import tempfile
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from usdart.usd.schemas import register as _register_schemas

_register_schemas()  # before the first stage is opened, as usdart itself does

from pxr import Gf, Sdf, Tf, Usd, UsdGeom, UsdPhysics  # noqa: E402

import usdart  # noqa: E402
from usdart.errors import UsdartError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
STEPS = 50  # scene.step() calls after a clean load

# property names the importer reads (or that move bodies): the mutation targets
PHYSICS_PREFIXES = ("physics:", "physx", "drive:", "limit:", "state:", "newton:", "xformOp")
# API schemas a prim may wrongly carry; the sources' own APIs are added to these (`Inventory.apis_seen`)
STRAY_APIS = (
    "PhysicsRigidBodyAPI",
    "PhysicsMassAPI",
    "PhysicsCollisionAPI",
    "PhysicsArticulationRootAPI",
    "PhysicsFilteredPairsAPI",
    "PhysicsDriveAPI:angular",
    "PhysicsDriveAPI:linear",
    "PhysicsDriveAPI:rotX",
    "PhysicsLimitAPI:rotX",
    "PhysicsLimitAPI:transX",
    "PhysicsJointStateAPI:angular",
    "PhysicsJointStateAPI:linear",
    "PhysxRigidBodyAPI",
    "PhysxJointAPI",
    "PhysxArticulationAPI",
    "PhysxMimicJointAPI:rotZ",
    "PhysxJointAxisAPI:angular",
    "PhysxTendonAxisAPI:fuzz",
    "PhysxTendonAttachmentRootAPI:fuzz",
    "NewtonMimicAPI",
    "FuzzBogusAPI",
)
STAGE_METADATA = {
    "metersPerUnit": (math.nan, math.inf, -math.inf, 0.0, -1.0, 1e-30, 1e300),
    "kilogramsPerUnit": (math.nan, math.inf, -math.inf, 0.0, -1.0, 1e-30, 1e300),
    "timeCodesPerSecond": (math.nan, math.inf, 0.0, -24.0, 1e-30, 1e300),
    "upAxis": ("W", "", "X", "y", "Z "),
}
REALS = (
    ("nan", math.nan),
    ("+inf", math.inf),
    ("-inf", -math.inf),
    ("1e30", 1e30),
    ("-1e30", -1e30),
    ("1e300", 1e300),
    ("1e-30", 1e-30),
    ("negative", None),  # minus the current magnitude (-1 where it is zero)
    ("0", 0.0),
)
INTS = (("0", 0), ("-1", -1), ("2^31-1", 2**31 - 1), ("-2^31", -(2**31)))
UINTS = (("0", 0), ("2^32-1", 2**32 - 1))
TOKENS = ("", "bogus", "X", "Y", "Z", "angular", "linear", "force", "acceleration", "rotX", "transZ", "none")
STRINGS = ("", "bogus", "\u00e9\u4e2d\U0001f600")
QUATS = (
    ("zero", (0.0, 0.0, 0.0, 0.0)),
    ("nan", (math.nan, 0.0, 0.0, 0.0)),
    ("inf", (math.inf, 0.0, 0.0, 0.0)),
    ("huge", (1e30, 0.0, 0.0, 0.0)),
    ("tiny", (1e-30, 0.0, 0.0, 0.0)),
    ("non-unit", (2.0, 0.0, 0.0, 0.0)),
)
# an attribute re-authored under the same name with another type: (type name, value)
WRONG_TYPES = (
    ("string", "abc"),
    ("int", 7),
    ("token", "bogus"),
    ("bool", True),
    ("quatf", (0.0, 0.0, 0.0, 0.0)),
    ("float", 1.0),
    ("double3", (1.0, 2.0, 3.0)),
    ("double[]", [1.0, 2.0]),
    ("rel", None),  # a relationship where an attribute belongs
)
XFORM_BREAKS = ("zero_scale", "zero_orient", "missing_op", "nan_translate", "singular_matrix", "huge_translate")
BAD_BYTES = (b"\xff\xfe\xfd", b"\x80\x81", b"\xc3\x28", b"\x00\x00", b"\xed\xa0\x80")
SIDE_FILES = ("missing", "garbage_text", "garbage_binary", "empty", "self")
SIDE_FILE_NAME = "fuzz_side_layer.usda"

# kind -> weight: value edits dominate, structure and file breakage come up every few examples
KIND_WEIGHTS = (
    ("set", 10),
    ("retype", 3),
    ("block", 2),
    ("remove_prop", 2),
    ("rel", 4),
    ("remove_api", 2),
    ("add_api", 2),
    ("xform", 2),
    ("delete_prim", 2),
    ("metadata", 2),
    ("truncate", 1),
    ("bad_bytes", 1),
    ("sublayer", 1),
    ("asset_arc", 1),
)
TEXT_KINDS = ("truncate", "bad_bytes")  # byte-level: applied after every layer edit is written

T = TypeVar("T")
Location = tuple[str, str]  # (layer file relative to the source folder, spec path in that layer)


# ---- sources and what they contain -----------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    """A stage to mutate: its root file and every layer file it uses, relative to the root's folder."""

    name: str
    folder: Path
    root: str
    files: tuple[str, ...]

    @property
    def text_layers(self) -> tuple[str, ...]:
        return tuple(f for f in self.files if f.endswith(".usda"))


@dataclass(frozen=True)
class AttrInfo:
    name: str
    type_name: str
    uniform: bool
    value: Any  # composed default as plain Python (None: unauthored, blocked or too large to keep)
    authored_in: tuple[Location, ...]  # editable layers that author it


@dataclass(frozen=True)
class RelInfo:
    name: str
    targets: tuple[str, ...]
    authored_in: tuple[Location, ...]


@dataclass(frozen=True)
class PrimInfo:
    path: str
    type_name: str
    apis: tuple[str, ...]
    attrs: tuple[AttrInfo, ...]
    rels: tuple[RelInfo, ...]
    edit: Location  # where new opinions go: the strongest spec if editable, else an over in the root layer
    specs: tuple[Location, ...]  # every editable spec (deleting the prim removes them all)
    only_editable: bool  # no spec outside the editable layers (else deletion also deactivates it)
    xform_ops: tuple[str, ...] | None  # composed xformOpOrder of an Xformable (None: not Xformable)


@dataclass(frozen=True)
class Inventory:
    """What of a source stage the mutations may touch."""

    source: Source
    prims: tuple[PrimInfo, ...]  # physics prims: typed Physics*, carrying a physics API, or physics properties
    xformables: tuple[PrimInfo, ...]  # physics prims and their ancestors that have an xform
    bodies: tuple[str, ...]
    non_bodies: tuple[str, ...]  # prims a relationship may wrongly point to
    apis_seen: tuple[str, ...]
    arcs: tuple[Location, ...]  # prim specs in editable layers with payloads or references


def sources() -> list[Source]:
    """The bundled sample stages, the corpus robots copied into tests/data (root file named after its folder,
    as tests/test_corpus_import.py uses them), and the stages the test helpers write."""
    roots = sorted((REPO / "sample_stages").glob("*.usda"))
    data = REPO / "tests" / "data"
    roots += sorted(p / f"{p.name}.usda" for p in data.iterdir() if (p / f"{p.name}.usda").is_file())
    return [_source(root) for root in roots + _written_roots()]


def _written_roots() -> list[Path]:
    """What no bundled file has: every PhysX feature usdart reads (fixed and spatial tendons, mimic joints,
    drive envelopes, D6 joints, a loop joint, centimetres and grams; tests/authored_stage.py `build`) and
    the Isaac Sim gripper syntax. Written once per process to a folder removed at exit; examples copy them."""
    import authored_stage

    folder = Path(tempfile.mkdtemp(prefix="usdart_fuzz_sources_"))
    atexit.register(shutil.rmtree, folder, True)
    stage = authored_stage.build()  # keeps its in-memory root layer alive while it is exported
    (folder / "authored_features.usda").write_text(stage.GetRootLayer().ExportToString())
    (folder / "isaac_gripper.usda").write_text(authored_stage.ISAAC_STAGE)
    return [folder / "authored_features.usda", folder / "isaac_gripper.usda"]


def _source(root: Path) -> Source:
    stage = Usd.Stage.Open(str(root))
    files = set()
    for layer in stage.GetUsedLayers():
        real = layer.realPath
        if real and Path(real).resolve().is_relative_to(root.parent):
            files.add(Path(real).resolve().relative_to(root.parent).as_posix())
    return Source(root.stem, root.parent, root.name, tuple(sorted(files)))


@cache
def inventories() -> tuple[Inventory, ...]:
    return tuple(inventory(s) for s in sources())


def inventory(source: Source) -> Inventory:
    stage = Usd.Stage.Open(str(source.folder / source.root))
    editable = {str((source.folder / f).resolve()): f for f in source.text_layers}
    prims, xformables, bodies, non_bodies, apis_seen, arcs = [], [], [], [], set(), []
    physics_paths = set()
    for prim in stage.Traverse():
        path = str(prim.GetPath())
        apis = _api_tokens(prim)
        apis_seen.update(apis)
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            bodies.append(path)
        else:
            non_bodies.append(path)
        if _is_physics(prim, apis):
            prims.append(_prim_info(prim, apis, editable, source.root))
            physics_paths.add(path)
    # ancestors of physics prims move them too: their xforms are fair game
    wanted = {str(p) for path in physics_paths for p in Sdf.Path(path).GetPrefixes()}
    for path in sorted(wanted):
        prim = stage.GetPrimAtPath(path)
        if prim and prim.IsA(UsdGeom.Xformable):
            info = next((p for p in prims if p.path == path), None)
            xformables.append(info or _prim_info(prim, _api_tokens(prim), editable, source.root))
    for layer_file in source.text_layers:  # payloads and references that bring in (or sit under) physics prims
        layer = Sdf.Layer.FindOrOpen(str(source.folder / layer_file))

        def visit(spec_path, layer=layer, layer_file=layer_file):
            spec = layer.GetObjectAtPath(spec_path)
            if isinstance(spec, Sdf.PrimSpec) and (spec.hasPayloads or spec.hasReferences):
                if str(spec_path) in wanted or any(spec_path.HasPrefix(Sdf.Path(p)) for p in physics_paths):
                    arcs.append((layer_file, str(spec_path)))

        layer.Traverse(Sdf.Path.absoluteRootPath, visit)
    return Inventory(
        source, tuple(prims), tuple(xformables), tuple(bodies), tuple(non_bodies), tuple(sorted(apis_seen)), tuple(arcs)
    )


def _api_tokens(prim: Usd.Prim) -> tuple[str, ...]:
    """Applied API tokens as authored (GetAppliedSchemas drops the ones no registered schema defines)."""
    listop = prim.GetMetadata("apiSchemas")
    return tuple(listop.ApplyOperations([])) if listop else ()


def _is_physics(prim: Usd.Prim, apis: tuple[str, ...]) -> bool:
    if prim.GetTypeName().startswith("Physics") or any(a.startswith(("Physics", "Physx", "Newton")) for a in apis):
        return True
    names = (a.GetName() for a in prim.GetAttributes() if a.IsAuthored())
    return any(n.startswith(PHYSICS_PREFIXES) and not n.startswith("xformOp") for n in names)


def _prim_info(prim: Usd.Prim, apis: tuple[str, ...], editable: dict[str, str], root: str) -> PrimInfo:
    path = str(prim.GetPath())
    stack = [
        (s, editable.get(str(Path(s.layer.realPath).resolve())) if s.layer.realPath else None)
        for s in prim.GetPrimStack()
    ]
    specs = tuple((f, path) for s, f in stack if f is not None and str(s.path) == path)
    strongest = stack[0] if stack else None
    if strongest and strongest[1] is not None and str(strongest[0].path) == path:
        edit = (strongest[1], path)
    else:
        edit = (root, path)
    spec_by_file = {f: s for s, f in stack if f is not None and str(s.path) == path}

    def authored_in(name: str) -> tuple[Location, ...]:
        return tuple((f, path) for f, s in spec_by_file.items() if name in s.properties)

    attrs = tuple(
        AttrInfo(
            a.GetName(),
            str(a.GetTypeName()),
            a.GetVariability() == Sdf.VariabilityUniform,
            _plain(a.Get()),
            authored_in(a.GetName()),
        )
        for a in prim.GetAttributes()
        if a.GetName().startswith(PHYSICS_PREFIXES) and a.GetTypeName()
    )
    rels = tuple(
        RelInfo(r.GetName(), tuple(str(t) for t in r.GetTargets()), authored_in(r.GetName()))
        for r in prim.GetRelationships()
        if r.GetName().startswith(PHYSICS_PREFIXES)
    )
    ops = tuple(UsdGeom.Xformable(prim).GetXformOpOrderAttr().Get() or ()) if prim.IsA(UsdGeom.Xformable) else None
    return PrimInfo(
        path,
        str(prim.GetTypeName()),
        apis,
        attrs,
        rels,
        edit,
        specs,
        len(specs) == len(stack),
        ops,
    )


def _plain(value) -> Any:
    """A USD value as plain Python (floats, tuples, lists, strings); None for what mutations do not reuse."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (Gf.Quatf, Gf.Quatd, Gf.Quath)):
        return (float(value.GetReal()), *(float(x) for x in value.GetImaginary()))
    if hasattr(value, "__len__") and len(value) <= 256:
        try:
            items = [_plain(v) for v in value]
        except TypeError:
            return None
        return items if type(value).__module__.endswith("Vt") else tuple(items)
    return None


# ---- mutations ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutation:
    """One change to a source stage; everything `materialize` needs, and nothing that ties it to a process."""

    kind: str
    where: tuple[Location, ...] = ()
    prim: str = ""
    prop: str = ""
    type_name: str = ""
    value: Any = None
    label: str = ""
    uniform: bool = False
    op_order: tuple[str, ...] = ()
    detail: str = ""  # shown, but not part of the family (a cut position, say)

    @property
    def family(self) -> str:
        """What was done, without the prim path: the grouping key of outcomes."""
        return " ".join(x for x in (self.kind, self.prop, self.label) if x)

    def describe(self) -> str:
        target = f"{self.prim}.{self.prop}" if self.prim and self.prop else self.prim or self.prop
        files = sorted({f for f, _ in self.where})
        return " ".join(x for x in (self.kind, target, self.label, self.detail, f"[{', '.join(files)}]") if x)


@dataclass(frozen=True, repr=False)
class Example:
    source: Source
    mutations: tuple[Mutation, ...]

    def describe(self) -> str:
        return f"{self.source.name}: " + "; ".join(m.describe() for m in self.mutations)

    def __repr__(self) -> str:
        return f"<Example {self.describe()}>"

    def _repr_pretty_(self, printer, cycle) -> None:  # hypothesis prints a failing example with this
        printer.text(repr(self))


class Chooser(Protocol):
    """The only randomness drawing uses: hypothesis's `draw` in the test, a seeded `random.Random` in the script."""

    def choice(self, options: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...


class RandomChooser:
    def __init__(self, rng):
        self.rng = rng

    def choice(self, options):
        return options[self.rng.randrange(len(options))]

    def integer(self, low, high):
        return self.rng.randint(low, high)


class DrawChooser:
    """Hypothesis draws, so failures shrink towards the first option of every choice."""

    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def choice(self, options):
        return self.draw(self.st.sampled_from(list(options)))

    def integer(self, low, high):
        return self.draw(self.st.integers(low, high))


def draw_example(ch: Chooser, invs: Sequence[Inventory] | None = None) -> Example:
    inv = ch.choice(invs or inventories())
    return Example(inv.source, tuple(draw_mutation(ch, inv) for _ in range(ch.integer(1, 3))))


_KINDS = tuple(kind for kind, weight in KIND_WEIGHTS for _ in range(weight))


def draw_mutation(ch: Chooser, inv: Inventory) -> Mutation:
    """A mutation of a kind drawn by weight; a kind the stage offers nothing for falls back to setting a value."""
    return _DRAW[ch.choice(_KINDS)](ch, inv) or _draw_set(ch, inv)


def _draw_set(ch: Chooser, inv: Inventory) -> Mutation | None:
    prim = ch.choice([p for p in inv.prims if p.attrs])
    attr = ch.choice(prim.attrs)
    drawn = bad_value(ch, attr.type_name, attr.value)
    if drawn is None:
        return None
    value, label = drawn
    return Mutation("set", (prim.edit,), prim.path, attr.name, attr.type_name, value, label, attr.uniform)


def _draw_retype(ch: Chooser, inv: Inventory) -> Mutation | None:
    prim = ch.choice([p for p in inv.prims if p.attrs or p.rels])
    prop = ch.choice(prim.attrs + prim.rels)
    current = getattr(prop, "type_name", "rel")
    type_name, value = ch.choice([t for t in WRONG_TYPES if t[0] != current])
    where = tuple(dict.fromkeys((prim.edit, *prop.authored_in)))  # the old spec goes wherever it is
    return Mutation("retype", where, prim.path, prop.name, type_name, value, f"{current}->{type_name}")


def _draw_block(ch: Chooser, inv: Inventory) -> Mutation | None:
    prim = ch.choice([p for p in inv.prims if p.attrs])
    attr = ch.choice(prim.attrs)
    return Mutation("block", (prim.edit,), prim.path, attr.name, attr.type_name, label="blocked", uniform=attr.uniform)


def _draw_remove_prop(ch: Chooser, inv: Inventory) -> Mutation | None:
    candidates = [(p, a) for p in inv.prims for a in p.attrs + p.rels if a.authored_in]
    if not candidates:
        return None
    prim, prop = ch.choice(candidates)
    return Mutation("remove_prop", prop.authored_in, prim.path, prop.name, label="removed")


def _draw_rel(ch: Chooser, inv: Inventory) -> Mutation | None:
    candidates = [(p, r) for p in inv.prims for r in p.rels]
    if not candidates:
        return None
    prim, rel = ch.choice(candidates)
    options = {
        "missing-prim": (str(Sdf.Path(prim.path).GetParentPath().AppendChild("fuzz_missing")),),
        "self": (prim.path,),
        "empty": (),
        "deleted": None,
    }
    if inv.non_bodies:
        options["non-body"] = (ch.choice(inv.non_bodies),)
    if inv.bodies:
        options["two-targets"] = (*rel.targets, ch.choice(inv.bodies))[-2:]
    other = {"physics:body0": "physics:body1", "physics:body1": "physics:body0"}.get(rel.name)
    other_targets = next((r.targets for r in prim.rels if r.name == other), ())
    if other_targets:
        options["other-end"] = other_targets
    label = ch.choice(sorted(options))
    targets = options[label]
    if targets is None:  # delete every editable spec; where nothing editable authors it, clear it instead
        if rel.authored_in:
            return Mutation("remove_prop", rel.authored_in, prim.path, rel.name, label="deleted")
        targets, label = (), "empty"
    return Mutation("rel", (prim.edit,), prim.path, rel.name, value=targets, label=label)


def _draw_remove_api(ch: Chooser, inv: Inventory) -> Mutation | None:
    candidates = [(p, api) for p in inv.prims for api in p.apis]
    if not candidates:
        return None
    prim, api = ch.choice(candidates)
    return Mutation("remove_api", tuple(dict.fromkeys((prim.edit, *prim.specs))), prim.path, value=api, label=api)


def _draw_add_api(ch: Chooser, inv: Inventory) -> Mutation | None:
    prim = ch.choice(inv.prims)
    options = sorted((set(STRAY_APIS) | set(inv.apis_seen)) - set(prim.apis))
    api = ch.choice(options)
    return Mutation("add_api", (prim.edit,), prim.path, value=api, label=api)


def _draw_xform(ch: Chooser, inv: Inventory) -> Mutation | None:
    if not inv.xformables:
        return None
    prim = ch.choice(inv.xformables)
    how = ch.choice(XFORM_BREAKS)
    ops = tuple(prim.xform_ops or ())
    types = {a.name: a.type_name for a in prim.attrs}
    if how == "missing_op":
        return Mutation("xform", (prim.edit,), prim.path, label=how, op_order=(*ops, "xformOp:rotateXYZ:fuzzMissing"))
    op, value = {
        "zero_scale": ("xformOp:scale", (0.0, 0.0, 0.0)),
        "zero_orient": ("xformOp:orient", (0.0, 0.0, 0.0, 0.0)),
        "nan_translate": ("xformOp:translate", (math.nan, 0.0, 0.0)),
        "huge_translate": ("xformOp:translate", (1e300, 0.0, 0.0)),
        "singular_matrix": ("xformOp:transform", (0.0,) * 15 + (1.0,)),
    }[how]
    type_name = types.get(op) or {"xformOp:orient": "quatf", "xformOp:transform": "matrix4d"}.get(op, "double3")
    order = ops if op in ops else (*ops, op)
    return Mutation("xform", (prim.edit,), prim.path, op, type_name, value, how, op_order=order)


def _draw_delete_prim(ch: Chooser, inv: Inventory) -> Mutation | None:
    prim = ch.choice(inv.prims)
    deactivate_in = None if prim.only_editable else inv.source.root
    return Mutation("delete_prim", prim.specs, prim.path, value=deactivate_in, label=prim.type_name or "typeless")


def _draw_metadata(ch: Chooser, inv: Inventory) -> Mutation | None:
    key = ch.choice(sorted(STAGE_METADATA))
    value = ch.choice(STAGE_METADATA[key])
    return Mutation("metadata", ((inv.source.root, "/"),), prop=key, value=value, label=repr(value))


def _draw_truncate(ch: Chooser, inv: Inventory) -> Mutation | None:
    layer = ch.choice(inv.source.text_layers)
    permille = ch.integer(0, 999)
    return Mutation("truncate", ((layer, ""),), value=permille, label=Path(layer).name, detail=f"at {permille / 10}%")


def _draw_bad_bytes(ch: Chooser, inv: Inventory) -> Mutation | None:
    layer = ch.choice(inv.source.text_layers)
    data = ch.choice(BAD_BYTES)
    return Mutation("bad_bytes", ((layer, ""),), value=data, label=data.hex(), detail="after the header")


def _draw_sublayer(ch: Chooser, inv: Inventory) -> Mutation | None:
    how = ch.choice(SIDE_FILES)
    return Mutation("sublayer", ((inv.source.root, "/"),), value=how, label=how)


def _draw_asset_arc(ch: Chooser, inv: Inventory) -> Mutation | None:
    if not inv.arcs:
        return None
    where = ch.choice(inv.arcs)
    how = ch.choice(SIDE_FILES)
    return Mutation("asset_arc", (where,), where[1], value=how, label=how)


_DRAW: dict[str, Callable[[Chooser, Inventory], Mutation | None]] = {
    "set": _draw_set,
    "retype": _draw_retype,
    "block": _draw_block,
    "remove_prop": _draw_remove_prop,
    "rel": _draw_rel,
    "remove_api": _draw_remove_api,
    "add_api": _draw_add_api,
    "xform": _draw_xform,
    "delete_prim": _draw_delete_prim,
    "metadata": _draw_metadata,
    "truncate": _draw_truncate,
    "bad_bytes": _draw_bad_bytes,
    "sublayer": _draw_sublayer,
    "asset_arc": _draw_asset_arc,
}


def _value_shape(type_name: str) -> tuple[str, int, bool]:
    """(base, components, is_array) of an Sdf value type: base is real, int, uint, bool, token, string,
    asset, quat, matrix or other."""
    vtn = Sdf.ValueTypeNames.Find(type_name)
    scalar = str(vtn.scalarType.type.typeName)
    if scalar in ("float", "double", "pxr_half::half"):
        base, n = "real", 1
    elif scalar in ("int", "long", "long long"):
        base, n = "int", 1
    elif scalar in ("unsigned int", "unsigned char", "unsigned long", "unsigned long long"):
        base, n = "uint", 1
    elif scalar in ("bool", "TfToken", "string", "SdfAssetPath"):
        base, n = {"bool": "bool", "TfToken": "token", "string": "string", "SdfAssetPath": "asset"}[scalar], 1
    elif m := re.fullmatch(r"GfVec(\d)([fdhi])", scalar):
        base, n = ("int" if m.group(2) == "i" else "real"), int(m.group(1))
    elif scalar.startswith("GfQuat"):
        base, n = "quat", 4
    elif m := re.fullmatch(r"GfMatrix(\d)d", scalar):
        base, n = "matrix", int(m.group(1)) ** 2
    else:
        base, n = "other", 1
    return base, n, bool(vtn.isArray)


def bad_value(ch: Chooser, type_name: str, current: Any) -> tuple[Any, str] | None:
    """A hostile value of the given type, as plain Python, with a label; None for types not fuzzed."""
    base, n, is_array = _value_shape(type_name)
    if base == "other":
        return None
    if is_array:
        items = list(current) if isinstance(current, (list, tuple)) else []
        how = ch.choice(("empty", "longer", "shorter", "bad element"))
        element = _element_default(base, n)
        if how == "empty" or (how == "shorter" and len(items) <= 1):
            return [], "empty[]"
        if how == "longer":
            return items + [items[-1] if items else element] * 2, f"len {len(items)}->{len(items) + 2}"
        if how == "shorter":
            return items[:-1], f"len {len(items)}->{len(items) - 1}"
        items = items or [element]
        k = ch.integer(0, len(items) - 1)
        bad = bad_value(ch, type_name.removesuffix("[]"), items[k])
        if bad is None:
            return None
        items[k] = bad[0]
        return items, f"element {bad[1]}"
    if base == "real":
        label, value = ch.choice(REALS)
        if value is None:  # "negative"
            value = -(abs(current) or 1.0) if n == 1 and isinstance(current, (int, float)) else -1.0
        if n == 1:
            return value, label
        vec = list(current) if isinstance(current, (list, tuple)) and len(current) == n else [0.0] * n
        if ch.choice(("all", "one")) == "all":
            return tuple([value] * n), f"all {label}"
        k = ch.integer(0, n - 1)
        vec[k] = value
        return tuple(vec), f"[{k}] {label}"
    if base in ("int", "uint"):
        label, value = ch.choice(INTS if base == "int" else UINTS)
        return (value if n == 1 else tuple([value] * n)), label
    if base == "bool":
        return (not current if isinstance(current, bool) else True), "flipped"
    if base == "token":
        value = ch.choice([t for t in TOKENS if t != current])
        return value, f"token {value!r}"
    if base == "string":
        value = ch.choice(STRINGS)
        return value, f"string {value!r}"
    if base == "asset":
        return "./fuzz_missing.usda", "missing asset"
    if base == "quat":
        label, value = ch.choice(QUATS)
        return value, f"quat {label}"
    # a matrix: every entry but the homogeneous corner zero (singular), NaN or huge
    label, value = ch.choice((("zero", 0.0), ("nan", math.nan), ("huge", 1e300)))
    side = int(round(math.sqrt(n)))
    identity = [1.0 if i % (side + 1) == 0 else 0.0 for i in range(n)]
    return tuple(value if i < n - 1 else identity[i] for i in range(n)), f"matrix {label}"


def _element_default(base: str, n: int) -> Any:
    one = {"real": 0.0, "int": 0, "uint": 0, "bool": False, "token": "bogus", "string": "", "asset": ""}.get(base)
    if base == "quat":
        return (1.0, 0.0, 0.0, 0.0)
    return one if n == 1 else tuple([one] * n)


# ---- applying mutations -------------------------------------------------------------------------------------
APPLY_ERRORS = (Tf.ErrorException, TypeError, ValueError, OverflowError, KeyError)


def materialize(example: Example, folder, copy_binary: bool = False) -> tuple[Path, tuple[Mutation, ...]]:
    """Write the example's stage into `folder` (the source's layout: root file, payload layers) and return the
    root file and the mutations that applied (USD may refuse some values: those are left out).

    Layer edits are made on anonymous copies of the source layers and exported, so nothing is registered under
    the folder's paths before usdart opens them; unchanged text layers are copied and binary layers linked (or
    copied with `copy_binary`). Byte-level breakage comes last, after every layer is written."""
    folder = Path(folder)
    src = example.source
    layers: dict[str, Sdf.Layer] = {}

    def layer(name: str) -> Sdf.Layer:
        if name not in layers:
            layers[name] = Sdf.Layer.OpenAsAnonymous(str(src.folder / name))
        return layers[name]

    applied = []
    for m in example.mutations:
        if m.kind in TEXT_KINDS:
            applied.append(m)
            continue
        try:
            _APPLY[m.kind](layer, m)
        except APPLY_ERRORS:
            continue
        applied.append(m)
    for name in src.files:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name in layers:
            layers[name].Export(str(target))
        elif name.endswith(".usda") or copy_binary:
            shutil.copyfile(src.folder / name, target)
        else:
            target.symlink_to(src.folder / name)
    for m in applied:
        if m.kind in _APPLY_FILES:
            _APPLY_FILES[m.kind](folder, m, src)
    return folder / src.root, tuple(applied)


def _prim_spec(layer: Sdf.Layer, path: str) -> Sdf.PrimSpec:
    return layer.GetPrimAtPath(path) or Sdf.CreatePrimInLayer(layer, path)


def _to_usd(type_name: str, value: Any) -> Any:
    """Plain Python -> the USD value of `type_name` (tuples to Gf vectors, quaternions and matrices)."""
    vtn = Sdf.ValueTypeNames.Find(type_name)
    if vtn.isArray:
        element = vtn.scalarType.type.typeName
        scalar = Sdf.ValueTypeNames.Find(type_name.removesuffix("[]"))
        items = [_to_usd(str(scalar), v) for v in value] if element.startswith("Gf") else list(value)
        return vtn.type.pythonClass(items)
    cls = vtn.type.pythonClass
    if cls is None:
        return value
    if cls in (Gf.Quatf, Gf.Quatd, Gf.Quath):
        return cls(*(float(x) for x in value))
    return cls(*value)


def _author_attr(layer, where: Location, name: str, type_name: str, value: Any, uniform: bool) -> Sdf.AttributeSpec:
    """An attribute spec of exactly this type (an old spec of another type, or a relationship, is replaced)."""
    prim = _prim_spec(layer(where[0]), where[1])
    vtn = Sdf.ValueTypeNames.Find(type_name)
    old = prim.properties.get(name)
    if old is not None and not (isinstance(old, Sdf.AttributeSpec) and old.typeName == vtn):
        prim.RemoveProperty(old)
        old = None
    spec = old or Sdf.AttributeSpec(prim, name, vtn, Sdf.VariabilityUniform if uniform else Sdf.VariabilityVarying)
    if value is not None:
        spec.default = _to_usd(type_name, value)
    return spec


def _apply_set(layer, m: Mutation) -> None:
    _author_attr(layer, m.where[0], m.prop, m.type_name, m.value, m.uniform)


def _apply_retype(layer, m: Mutation) -> None:
    for name, path in m.where:
        prim = layer(name).GetPrimAtPath(path)
        if prim and m.prop in prim.properties:
            prim.RemoveProperty(prim.properties[m.prop])
    if m.type_name == "rel":
        prim = _prim_spec(layer(m.where[0][0]), m.where[0][1])
        Sdf.RelationshipSpec(prim, m.prop).targetPathList.explicitItems = [Sdf.Path(m.prim)]
    else:
        _author_attr(layer, m.where[0], m.prop, m.type_name, m.value, False)


def _apply_block(layer, m: Mutation) -> None:
    _author_attr(layer, m.where[0], m.prop, m.type_name, None, m.uniform).default = Sdf.ValueBlock()


def _apply_remove_prop(layer, m: Mutation) -> None:
    for name, path in m.where:
        prim = layer(name).GetPrimAtPath(path)
        if prim and m.prop in prim.properties:
            prim.RemoveProperty(prim.properties[m.prop])


def _apply_rel(layer, m: Mutation) -> None:
    prim = _prim_spec(layer(m.where[0][0]), m.where[0][1])
    old = prim.properties.get(m.prop)
    if old is not None and not isinstance(old, Sdf.RelationshipSpec):
        prim.RemoveProperty(old)
        old = None
    spec = old or Sdf.RelationshipSpec(prim, m.prop)
    spec.targetPathList.ClearEditsAndMakeExplicit()
    spec.targetPathList.explicitItems = [Sdf.Path(t) for t in m.value]


def _apply_remove_api(layer, m: Mutation) -> None:
    """Take the token out of every editable list op that adds it; where none does, delete it in the strongest."""
    found = False
    for name, path in m.where:
        prim = layer(name).GetPrimAtPath(path)
        if not prim or not prim.HasInfo("apiSchemas"):
            continue
        op = prim.GetInfo("apiSchemas")
        lists = [list(op.explicitItems), list(op.prependedItems), list(op.appendedItems)]
        if any(m.value in items for items in lists):
            found = True
            lists = [[x for x in items if x != m.value] for items in lists]
            if op.isExplicit:
                prim.SetInfo("apiSchemas", Sdf.TokenListOp.CreateExplicit(lists[0]))
            else:
                prim.SetInfo("apiSchemas", Sdf.TokenListOp.Create(lists[1], lists[2], list(op.deletedItems)))
    if not found:
        prim = _prim_spec(layer(m.where[0][0]), m.where[0][1])
        op = prim.GetInfo("apiSchemas") if prim.HasInfo("apiSchemas") else Sdf.TokenListOp()
        if op.isExplicit:
            prim.SetInfo("apiSchemas", Sdf.TokenListOp.CreateExplicit([x for x in op.explicitItems if x != m.value]))
        else:
            deleted = [*op.deletedItems, m.value]
            prim.SetInfo("apiSchemas", Sdf.TokenListOp.Create(list(op.prependedItems), list(op.appendedItems), deleted))


def _apply_add_api(layer, m: Mutation) -> None:
    prim = _prim_spec(layer(m.where[0][0]), m.where[0][1])
    op = prim.GetInfo("apiSchemas") if prim.HasInfo("apiSchemas") else Sdf.TokenListOp()
    if op.isExplicit:
        prim.SetInfo("apiSchemas", Sdf.TokenListOp.CreateExplicit([*op.explicitItems, m.value]))
    else:
        prepended = [*op.prependedItems, m.value]
        prim.SetInfo("apiSchemas", Sdf.TokenListOp.Create(prepended, list(op.appendedItems), list(op.deletedItems)))


def _apply_xform(layer, m: Mutation) -> None:
    if m.prop:
        _author_attr(layer, m.where[0], m.prop, m.type_name, m.value, False)
    _author_attr(layer, m.where[0], "xformOpOrder", "token[]", list(m.op_order), True)


def _apply_delete_prim(layer, m: Mutation) -> None:
    for name, path in m.where:
        lay = layer(name)
        spec = lay.GetPrimAtPath(path)
        if spec:
            parent = spec.nameParent or lay.pseudoRoot
            del parent.nameChildren[spec.name]
    if m.value:  # also defined where no edit reaches: switch it off from the root layer (named by value)
        _prim_spec(layer(m.value), m.prim).active = False


def _apply_metadata(layer, m: Mutation) -> None:
    layer(m.where[0][0]).pseudoRoot.SetInfo(m.prop, m.value)


def _apply_sublayer(layer, m: Mutation) -> None:
    root = m.where[0][0]
    name = Path(root).name if m.value == "self" else SIDE_FILE_NAME
    layer(root).subLayerPaths.append(f"./{name}")


def _apply_asset_arc(layer, m: Mutation) -> None:
    """Point every payload and reference of the prim spec at the side file (or at the layer itself)."""
    name, path = m.where[0]
    prim = layer(name).GetPrimAtPath(path)
    if prim is None:  # deleted by an earlier mutation
        return
    asset = f"./{Path(name).name if m.value == 'self' else SIDE_FILE_NAME}"
    for arcs, make in ((prim.payloadList, Sdf.Payload), (prim.referenceList, Sdf.Reference)):
        items = list(arcs.GetAddedOrExplicitItems())
        if items:
            arcs.ClearEdits()
            arcs.prependedItems = [make(asset, item.primPath, item.layerOffset) for item in items]


def _write_side_file(folder: Path, m: Mutation, src: Source) -> None:
    where = folder / Path(m.where[0][0]).parent / SIDE_FILE_NAME
    content = {
        "garbage_text": b"this is not a USD layer {[(\n",
        "garbage_binary": b"PXR-USDC" + bytes(range(256)) * 4,
        "empty": b"",
    }.get(m.value)
    if content is not None:
        where.write_bytes(content)


def _truncate(folder: Path, m: Mutation, src: Source) -> None:
    path = folder / m.where[0][0]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * m.value // 1000])


def _insert_bad_bytes(folder: Path, m: Mutation, src: Source) -> None:
    """Invalid UTF-8 right after the `#usda 1.0` header line."""
    path = folder / m.where[0][0]
    data = path.read_bytes()
    cut = data.find(b"\n") + 1
    path.write_bytes(data[:cut] + m.value + data[cut:])


_APPLY = {
    "set": _apply_set,
    "retype": _apply_retype,
    "block": _apply_block,
    "remove_prop": _apply_remove_prop,
    "rel": _apply_rel,
    "remove_api": _apply_remove_api,
    "add_api": _apply_add_api,
    "xform": _apply_xform,
    "delete_prim": _apply_delete_prim,
    "metadata": _apply_metadata,
    "sublayer": _apply_sublayer,
    "asset_arc": _apply_asset_arc,
}
_APPLY_FILES = {
    "sublayer": _write_side_file,
    "asset_arc": _write_side_file,
    "truncate": _truncate,
    "bad_bytes": _insert_bad_bytes,
}


# ---- the contract ----------------------------------------------------------------------------------------------
OK, CLEAN_ERROR = "ok", "clean error"
UNNAMED_ERROR, RAW_EXCEPTION, NONFINITE, HANG, CRASH = (
    "UsdartError naming no prim or file",
    "raw exception",
    "NaN/inf without error",
    "hang",
    "crash",
)
PASSING = (OK, CLEAN_ERROR)


@dataclass(frozen=True)
class Outcome:
    """What loading and stepping a file did: a category, and for failures where and what."""

    category: str
    phase: str = ""  # load | step
    error_type: str = ""
    message: str = ""  # first line
    site: str = ""  # innermost usdart frame (file:function) a raw exception came from
    details: str = field(default="", compare=False)  # traceback or offending values, for the report

    @property
    def passed(self) -> bool:
        return self.category in PASSING

    def signature(self, folder: str | None = None) -> str:
        """The failure's identity across examples: prim paths, numbers and the example folder elided."""
        message = self.message.replace(folder, "<dir>") if folder else self.message
        message = re.sub(r"(?<![\w.])/[\w/.:\[\]-]*", "<path>", message)
        number = r"(?<![\w<])[-+]?(?:0x[0-9a-f]+|\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)(?![\w>])"
        message = re.sub(number, "<n>", message, flags=re.I)
        return f"{self.category} | {self.phase} | {self.error_type}: {message[:160]} | {self.site}"

    def describe(self) -> str:
        what = f"{self.error_type}: {self.message}" if self.error_type else self.message
        where = f" at {self.site}" if self.site else ""
        return f"{self.category} during {self.phase}: {what}{where}\n{self.details}".strip()


def names_prim_or_file(message: str, path) -> bool:
    """True when the message names a prim path (a word starting with '/', the pseudo-root '/' included) or a
    file (a .usd* name or the file's own name)."""
    prim_path = re.search(r"(?<![\w.])/(?:\w|(?=[\s:,'\">)]|$))", message)
    return bool(prim_path) or ".usd" in message or Path(path).name in message


def check_contract(path, steps: int = STEPS) -> Outcome:
    """Load the file with usdart and step it `steps` times, in this process; classify what happened. Reading
    the state is part of each phase: a read may raise too (usdart refuses reads of a diverged scene)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warnings are allowed, and must not turn into errors under -W error
        try:
            scene = usdart.load(str(path))
            bad = nonfinite_state(scene)
        except Exception as error:  # noqa: BLE001 (the contract is about which exceptions come out)
            return _error_outcome("load", error, path)
        if bad:
            return Outcome(NONFINITE, "load", message=bad.splitlines()[0], details=bad)
        try:
            for _ in range(steps):
                scene.step()
            bad = nonfinite_state(scene)
        except Exception as error:  # noqa: BLE001
            return _error_outcome("step", error, path)
        if bad:
            return Outcome(NONFINITE, "step", message=bad.splitlines()[0], details=bad)
    return Outcome(OK)


def _error_outcome(phase: str, error: Exception, path) -> Outcome:
    message = (str(error).strip().splitlines() or [""])[0]
    kind = type(error).__name__
    if isinstance(error, UsdartError):
        category = CLEAN_ERROR if names_prim_or_file(str(error), path) else UNNAMED_ERROR
        return Outcome(category, phase, kind, message)
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "/usdart/" in f.filename.replace("\\", "/")] or frames
    site = f"{Path(ours[-1].filename).as_posix().split('/usdart/')[-1]}:{ours[-1].name}" if ours else ""
    details = "".join(traceback.format_exception(type(error), error, error.__traceback__)[-12:])
    return Outcome(RAW_EXCEPTION, phase, kind, message, site, details)


def nonfinite_state(scene) -> str:
    """Which state values of the scene are NaN or infinite (empty when all are finite), read through the public
    API: every articulation's joint positions and velocities, root pose and velocity, link poses; every free
    or kinematic body's pose (their velocities are not public; a non-finite velocity makes the pose non-finite a
    step later)."""
    lines = []
    for art in scene.articulations:
        bad = [
            name
            for name in ("q", "qd", "root_pos", "root_quat", "root_vel", "link_pos", "link_rot")
            if not np.all(np.isfinite(getattr(art.state, name)))
        ]
        if bad:
            lines.append(f"{art.root_link}: non-finite {', '.join(bad)}")
    for body in [*scene.free_bodies, *scene.kinematic_bodies]:
        pose = scene.body_transform(body)
        if not np.all(np.isfinite(pose)):
            lines.append(f"{body}: non-finite pose {pose.tolist()}")
    if not math.isfinite(scene.time):
        lines.append(f"scene time {scene.time}")
    return "\n".join(lines)


# ---- hypothesis ---------------------------------------------------------------------------------------------
def examples():
    """Hypothesis strategy of examples over every source (the inventories are read on first draw)."""
    from hypothesis import strategies as st

    @st.composite
    def _examples(draw):
        return draw_example(DrawChooser(draw))

    return _examples()
