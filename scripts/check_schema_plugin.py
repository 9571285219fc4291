"""Check usdart's PhysX schema plugin against the PhysX schema reference tables.

The plugin is registered in this process and read back through `Usd.SchemaRegistry`, so what is checked
is what usd-core actually serves (not the text of the files): every API schema of the reference JSON
(`tests/data/physx_usd_schema_props.json`, a copy of the shared reference) must exist with the same kind,
property names, types, variability, fallback values and allowed tokens, and built-in API schemas;
multiple-apply schemas are also applied under their instance names to check `HasAPI` and fallbacks.
With `--markdown` (the reference `physx_usd_schema.md`), each property's documentation must be the
table's "meaning" text (the first sentence of the upstream doc).

Usage: python scripts/check_schema_plugin.py [--props JSON] [--markdown MD] [--plugin-dir DIR]
Exit code 0 when everything matches, 1 with one line per difference otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_PROPS = os.path.join(ROOT, "tests", "data", "physx_usd_schema_props.json")
DEFAULT_PLUGIN = os.path.join(ROOT, "usdart", "data", "schema_plugin")
INSTANCE = "__INSTANCE_NAME__"


def template_name(name: str) -> str:
    """'state:{instance}:physics:position' -> 'state:__INSTANCE_NAME__:physics:position'."""
    return name.replace("{instance}", INSTANCE)


# ---- the reference markdown: "meaning" column per (schema, property) --------------------------------------
def markdown_rows(path: str, schemas: list[str]) -> dict[tuple[str, str], dict[str, str]]:
    """Rows of the property tables, keyed by (schema, property template name).

    A table belongs to the schema named by the closest heading ("## 3. PhysxJointAPI") or caption line
    ("PhysxTendonAxisRootAPI (own properties; ...):") above it; tables after section 10 (UsdPhysics) are
    not PhysX schemas and are skipped.
    """
    rows: dict[tuple[str, str], dict[str, str]] = {}
    current = None
    by_length = sorted(schemas, key=len, reverse=True)  # 'PhysxTendonAxisRootAPI' before 'PhysxTendonAxisAPI'
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                number = line[3:].split(".", 1)[0]
                if number[:2].isdigit() and int(number[:2]) >= 11:
                    current = None
                    continue
                heading = line[3:]
                current = next((s for s in by_length if re.search(rf"\b{s}\b", heading)), None)
                continue
            caption = next((s for s in by_length if line.startswith(s + ":") or line.startswith(s + " (")), None)
            if caption:
                current = caption
                continue
            if current and line.startswith("| `"):
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
                name = cells[0].strip("`")
                rows[(current, name)] = dict(
                    type=cells[1],
                    variability=cells[2],
                    default=cells[3],
                    allowed=cells[4],
                    range=cells[5],
                    units=cells[6],
                    meaning=cells[7].replace("\\|", "|"),
                )
    return rows


# ---- the checks ------------------------------------------------------------------------------------------
def _same_value(expected, actual) -> bool:
    if expected is None:
        return actual is None
    if isinstance(expected, str) and expected in ("inf", "-inf"):
        expected = float(expected)
    if isinstance(expected, list):
        return (
            actual is not None
            and len(actual) == len(expected)
            and all(_same_value(e, a) for e, a in zip(expected, actual))
        )
    if isinstance(expected, bool) or isinstance(expected, str):
        return actual == expected
    if isinstance(expected, (int, float)):
        if actual is None:
            return False
        if math.isinf(expected):
            return actual == expected
        # float32 fallbacks: compare at single precision
        return math.isclose(float(actual), float(expected), rel_tol=1e-6, abs_tol=0.0)
    return expected == actual


def check(props_path: str, markdown_path: str | None = None) -> tuple[list[str], int]:
    """Differences between the registered schemas and the reference, and the number of properties checked."""
    from pxr import Sdf, Usd

    with open(props_path, encoding="utf-8") as f:
        reference = json.load(f)
    docs = markdown_rows(markdown_path, list(reference)) if markdown_path else {}
    registry = Usd.SchemaRegistry()
    problems: list[str] = []
    checked = 0
    for schema, spec in reference.items():
        definition = registry.FindAppliedAPIPrimDefinition(schema)
        if definition is None:
            problems.append(f"{schema}: not registered as an applied API schema")
            continue
        multiple = spec["kind"] == "multipleApply"
        if Usd.SchemaRegistry.IsMultipleApplyAPISchema(schema) != multiple:
            problems.append(f"{schema}: kind is not {spec['kind']}")
        expected_names = {template_name(p["name"]) for p in spec["properties"]}
        for builtin in spec["builtinApiSchemas"]:  # their properties are checked under their own name
            expected_names |= {template_name(p["name"]) for p in reference[builtin.split(":")[0]]["properties"]}
        actual_names = set(definition.GetPropertyNames())
        for name in sorted(expected_names - actual_names):
            problems.append(f"{schema}: missing property {name}")
        for name in sorted(actual_names - expected_names):
            problems.append(f"{schema}: unexpected property {name}")
        own = f"{schema}:{INSTANCE}" if multiple else schema
        builtins = [s for s in definition.GetAppliedAPISchemas() if s != own]
        if builtins != list(spec["builtinApiSchemas"]):
            problems.append(f"{schema}: built-in API schemas {builtins} != {spec['builtinApiSchemas']}")
        for prop in spec["properties"]:
            name = template_name(prop["name"])
            if name not in actual_names:
                continue
            checked += 1
            where = f"{schema}.{name}"
            if prop["type"] == "rel":
                if definition.GetRelationshipDefinition(name) is None:
                    problems.append(f"{where}: not a relationship")
            else:
                attr = definition.GetAttributeDefinition(name)
                if attr is None:
                    problems.append(f"{where}: not an attribute")
                    continue
                if attr.GetTypeName() != Sdf.ValueTypeNames.Find(prop["type"]):
                    problems.append(f"{where}: type {attr.GetTypeName()} != {prop['type']}")
                uniform = attr.GetVariability() == Sdf.VariabilityUniform
                if uniform != prop["uniform"]:
                    problems.append(
                        f"{where}: {'uniform' if uniform else 'varying'}, reference says "
                        f"{'uniform' if prop['uniform'] else 'varying'}"
                    )
                fallback = attr.GetFallbackValue()
                if not _same_value(
                    prop.get("default"),
                    None
                    if fallback is None
                    else list(fallback)
                    if hasattr(fallback, "__len__") and not isinstance(fallback, str)
                    else fallback,
                ):
                    problems.append(f"{where}: fallback {fallback!r} != {prop.get('default')!r}")
                allowed = attr.GetMetadata("allowedTokens")
                if list(allowed or []) != list(prop.get("allowedTokens") or []):
                    problems.append(f"{where}: allowedTokens {list(allowed or [])} != {prop.get('allowedTokens')}")
            if docs:
                row = docs.get((schema, name))
                doc = definition.GetPropertyDefinition(name).GetDocumentation()
                if row is None:
                    problems.append(f"{where}: no row in the reference markdown")
                elif not _same_doc(row["meaning"], doc):
                    problems.append(f"{where}: doc {doc!r} != reference {row['meaning']!r}")
        problems.extend(_check_instances(schema, spec))
    return problems, checked


def _same_doc(reference: str, doc: str) -> bool:
    reference = " ".join(reference.split())
    doc = " ".join(doc.split())
    if reference.endswith("\u2026 (truncated)"):  # the table shortens one long sentence
        return doc.startswith(reference[: -len("\u2026 (truncated)")])
    return doc == reference


def _check_instances(schema: str, spec: dict) -> list[str]:
    """Apply the schema (under each documented instance name) and read HasAPI and fallbacks back."""
    from pxr import Usd

    problems = []
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/Prim")
    names = spec["instanceNames"]
    instances = names if isinstance(names, list) else ["t0"] if names else [None]
    for instance in instances:
        token = f"{schema}:{instance}" if instance else schema
        prim.AddAppliedSchema(token)
        has = prim.HasAPI(schema, instance) if instance else prim.HasAPI(schema)
        if not has or token not in prim.GetAppliedSchemas():
            problems.append(f"{token}: HasAPI/GetAppliedSchemas do not see the applied schema")
        for prop in spec["properties"]:
            if prop["type"] == "rel":
                if not prim.GetRelationship(prop["name"].format(instance=instance)):
                    problems.append(f"{token}: relationship {prop['name']} not defined on the prim")
                continue
            attr = prim.GetAttribute(prop["name"].format(instance=instance))
            value = attr.Get() if attr else None
            if value is not None and hasattr(value, "__len__") and not isinstance(value, str):
                value = list(value)
            if not _same_value(prop.get("default"), value):
                problems.append(f"{token}: {prop['name']} fallback {value!r} != {prop.get('default')!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--props", default=DEFAULT_PROPS, help="reference JSON (default: %(default)s)")
    parser.add_argument("--markdown", help="reference markdown, to check documentation too")
    parser.add_argument("--plugin-dir", default=DEFAULT_PLUGIN, help="plugin folder (default: %(default)s)")
    args = parser.parse_args(argv)

    from pxr import Plug

    Plug.Registry().RegisterPlugins(os.path.abspath(args.plugin_dir))  # before the schema registry is built
    problems, checked = check(args.props, args.markdown)
    for p in problems:
        print(p)
    with open(args.props, encoding="utf-8") as f:
        count = len(json.load(f))
    status = "OK" if not problems else f"{len(problems)} difference(s)"
    print(f"{count} API schemas, {checked} properties checked{' with docs' if args.markdown else ''}: {status}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
