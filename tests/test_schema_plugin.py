"""The PhysX schema plugin: what usd-core serves from it equals the reference table, it is registered on
`import usdart` unless a PhysX schema is already loaded, and the importer gives identical results without it."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from authored_stage import ISAAC_STAGE, authored_gripper, build
from pxr import Plug, Sdf, Usd, UsdValidation

import usdart
from usdart.usd.importer import usd_values

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(ROOT, "tests", "data", "physx_usd_schema_props.json")
MARKDOWN = "/work/shared/reference/physx_usd_schema.md"  # the shared reference, when this machine has it
SAMPLES = os.path.join(ROOT, "sample_stages")

with open(REFERENCE) as _f:
    SCHEMAS = json.load(_f)


def run(args, env=None, **kwargs):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=full_env, cwd=ROOT, **kwargs)


# ---- the plugin's content ---------------------------------------------------------------------------------
def test_registry_matches_reference_table_in_a_fresh_process():
    done = run([os.path.join("scripts", "check_schema_plugin.py")])
    properties = sum(len(s["properties"]) for s in SCHEMAS.values())
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"{len(SCHEMAS)} API schemas, {properties} properties checked: OK"
    assert (len(SCHEMAS), properties) == (14, 109)


@pytest.mark.skipif(not os.path.exists(MARKDOWN), reason="shared reference markdown not on this machine")
def test_registry_documentation_matches_reference_markdown():
    done = run([os.path.join("scripts", "check_schema_plugin.py"), "--markdown", MARKDOWN])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("properties checked with docs: OK")


def test_check_script_reports_a_wrong_plugin(tmp_path):
    """The check is not vacuous: a plugin with one wrong fallback and one wrong type fails it."""
    source = os.path.join(ROOT, "usdart", "data", "schema_plugin")
    for name in os.listdir(source):
        text = open(os.path.join(source, name)).read()
        if name == "generatedSchema.usda":
            text = text.replace(
                "float physxMimicJoint:__INSTANCE_NAME__:gearing = 1 ",
                "float physxMimicJoint:__INSTANCE_NAME__:gearing = 2 ",
            )
            text = text.replace("float physxJoint:armature = 0", "double physxJoint:armature = 0")
        (tmp_path / name).write_text(text)
    done = run([os.path.join("scripts", "check_schema_plugin.py"), "--plugin-dir", str(tmp_path)])
    assert done.returncode == 1
    assert "PhysxMimicJointAPI.physxMimicJoint:__INSTANCE_NAME__:gearing: fallback 2.0 != 1.0" in done.stdout
    assert "PhysxJointAPI.physxJoint:armature: type double != float" in done.stdout


def test_generated_files_are_current_with_the_schema_source():
    done = run([os.path.join("scripts", "gen_schema_plugin.py"), "--check"])
    assert done.returncode == 0, done.stdout + done.stderr


def test_generated_schema_text_is_usdgenschema_shaped():
    text = open(os.path.join(ROOT, "usdart", "data", "schema_plugin", "generatedSchema.usda")).read()
    for line in (
        'class "PhysicsJointStateAPI" (',
        "    float state:__INSTANCE_NAME__:physics:position = 0 (",
        "    float physxMimicJoint:__INSTANCE_NAME__:naturalFrequency = 0 (",
        '    uniform token physxMimicJoint:__INSTANCE_NAME__:referenceJointAxis = "rotX" (',
        "    rel physxMimicJoint:__INSTANCE_NAME__:referenceJoint (",
        '    apiSchemas = ["PhysxTendonAxisAPI:__INSTANCE_NAME__"]',
        '            string userDocBrief = "The joint that shall be mimicked."',
    ):
        assert line + "\n" in text, line
    info = open(os.path.join(ROOT, "usdart", "data", "schema_plugin", "plugInfo.json")).read()
    types = json.loads("\n".join(x for x in info.splitlines() if not x.startswith("#")))["Plugins"][0]["Info"]["Types"]
    kinds = {t["schemaIdentifier"]: t["schemaKind"] for t in types.values()}
    assert kinds == {name: s["kind"] + "API" for name, s in SCHEMAS.items()}


# ---- registered on import: what usd-core now gives ------------------------------------------------------------
def test_import_registers_plugin_and_usd_core_knows_the_schemas():
    assert usdart.usd.schema_plugin.status().registered
    stage = Usd.Stage.CreateInMemory()
    joint = stage.DefinePrim("/Joint", "PhysicsRevoluteJoint")
    for token in (
        "PhysxMimicJointAPI:rotZ",
        "PhysicsJointStateAPI:angular",
        "PhysxJointAPI",
        "PhysxTendonAxisRootAPI:t0",
    ):
        joint.AddAppliedSchema(token)
    assert joint.HasAPI("PhysxMimicJointAPI", "rotZ") and joint.HasAPI("PhysxJointAPI")
    assert joint.HasAPI("PhysxTendonAxisAPI", "t0")  # built into the tendon root API
    assert joint.GetAppliedSchemas() == [
        "PhysxMimicJointAPI:rotZ",
        "PhysicsJointStateAPI:angular",
        "PhysxJointAPI",
        "PhysxTendonAxisRootAPI:t0",
        "PhysxTendonAxisAPI:t0",
    ]
    fallbacks = {
        p["name"].format(instance=i): p["default"]
        for s, i in (
            ("PhysxMimicJointAPI", "rotZ"),
            ("PhysicsJointStateAPI", "angular"),
            ("PhysxJointAPI", None),
            ("PhysxTendonAxisRootAPI", "t0"),
        )
        for p in SCHEMAS[s]["properties"]
        if p["type"] != "rel" and p.get("default") is not None
    }
    assert len(fallbacks) == 18
    for name, expected in fallbacks.items():
        got = joint.GetAttribute(name).Get()
        got = list(got) if hasattr(got, "__len__") and not isinstance(got, str) else got
        expected = float(expected) if expected in ("inf", "-inf") else expected
        assert got == pytest.approx(expected, rel=1e-7) if not isinstance(expected, str) else got == expected, name
    definition = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition("PhysxMimicJointAPI")
    assert (
        definition.GetPropertyDocumentation("physxMimicJoint:__INSTANCE_NAME__:referenceJoint")
        == "The joint that shall be mimicked."
    )


def test_importer_defaults_equal_the_registered_fallbacks():
    """The importer reads unauthored PhysX attributes from its packaged table: identical to the plugin's.

    Two tendon names have a different fallback in two schemas (gearing: float[] [1] on fixed-tendon axes,
    float 1 on spatial attachments; restLength: 0 on fixed-tendon roots, -inf on spatial leaves); the
    table keyed by name cannot hold both, so coupling.py reads those with explicit per-schema defaults."""
    registry = Usd.SchemaRegistry()
    count, ambiguous = 0, set()
    for schema, spec in SCHEMAS.items():
        definition = registry.FindAppliedAPIPrimDefinition(schema)
        for prop in spec["properties"]:
            if prop["type"] == "rel":
                continue
            fallback = definition.GetAttributeDefinition(prop["name"].replace("{instance}", "__INSTANCE_NAME__"))
            fallback = fallback.GetFallbackValue()
            mine = usd_values.schema_default(prop["name"])
            if fallback is None:
                assert mine is None, prop["name"]
                continue
            if hasattr(fallback, "__len__") and not isinstance(fallback, str):
                fallback = list(fallback)
            same = mine == fallback if isinstance(mine, (str, bool)) else mine == pytest.approx(fallback, rel=1e-6)
            if not same:
                ambiguous.add(prop["name"])
                continue
            count += 1
    assert ambiguous == {"physxTendon:{instance}:gearing", "physxTendon:{instance}:restLength"}
    assert count == 103  # the other attributes with a fallback (all but two tokens without one)


# ---- not registered beside another PhysX schema, or when disabled ----------------------------------------------
FAKE_PHYSX_INFO = {
    "Plugins": [
        {
            "Info": {
                "Types": {
                    "PhysxSchemaPhysxMimicJointAPI": {
                        "alias": {"UsdSchemaBase": "PhysxMimicJointAPI"},
                        "autoGenerated": True,
                        "bases": ["UsdAPISchemaBase"],
                        "schemaKind": "multipleApplyAPI",
                    }
                }
            },
            "LibraryPath": "",
            "Name": "NAME",
            "ResourcePath": ".",
            "Root": ".",
            "Type": "resource",
        }
    ]
}
FAKE_PHYSX_SCHEMA = """#usda 1.0

class "PhysxMimicJointAPI"
{
    float physxMimicJoint:__INSTANCE_NAME__:gearing = 7
}
"""
PROBE = textwrap.dedent("""
    import json, sys
    from pxr import Plug, Usd
    if len(sys.argv) > 1:
        Plug.Registry().RegisterPlugins(sys.argv[1])  # e.g. Isaac Sim's physxSchema, loaded before usdart
    import usdart
    status = usdart.usd.schema_plugin.status()
    definition = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition("PhysxMimicJointAPI")
    gearing = definition.GetAttributeFallbackValue("physxMimicJoint:__INSTANCE_NAME__:gearing") if definition else None
    print(json.dumps(dict(registered=status.registered, reason=status.reason, gearing=gearing,
                          joint_api=Usd.SchemaRegistry().FindAppliedAPIPrimDefinition("PhysxJointAPI") is not None)))
""")


@pytest.mark.parametrize(
    "plugin_name, expected_reason",
    [
        ("physxSchema", "not needed: plugin 'physxSchema' is registered"),
        ("vendorPhysics", "not needed: plugin 'vendorPhysics' defines PhysxMimicJointAPI"),
    ],
)
def test_not_registered_when_a_physx_schema_is_already_loaded(tmp_path, plugin_name, expected_reason):
    info = json.loads(json.dumps(FAKE_PHYSX_INFO).replace('"NAME"', f'"{plugin_name}"'))
    if plugin_name != "physxSchema":  # another vendor's type name: found by its schema name
        info["Plugins"][0]["Info"]["Types"] = {"VendorMimicJointAPI": info["Plugins"][0]["Info"]["Types"].popitem()[1]}
    (tmp_path / "plugInfo.json").write_text(json.dumps(info))
    (tmp_path / "generatedSchema.usda").write_text(FAKE_PHYSX_SCHEMA)
    done = run(["-c", PROBE, str(tmp_path)], check=True)
    result = json.loads(done.stdout)
    assert result == dict(registered=False, reason=expected_reason, gearing=7.0, joint_api=False)
    assert "rror" not in done.stderr  # no duplicate-schema errors from usd-core


def test_disabled_by_environment_variable():
    done = run(["-c", PROBE], env={"USDART_NO_SCHEMA_PLUGIN": "1"}, check=True)
    assert json.loads(done.stdout) == dict(
        registered=False, reason="disabled by USDART_NO_SCHEMA_PLUGIN", gearing=None, joint_api=False
    )


# ---- the importer does not depend on it --------------------------------------------------------------------------
DUMP = textwrap.dedent("""
    import dataclasses, json, sys
    import numpy as np
    import usdart
    from usdart.usd.importer import read_stage

    def plain(x):
        if dataclasses.is_dataclass(x):
            return {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        if isinstance(x, (set, frozenset)):
            return sorted(plain(v) for v in x)
        if isinstance(x, np.ndarray):
            return plain(x.tolist())
        return repr(x) if isinstance(x, float) else x

    out = {"registered": usdart.usd.schema_plugin.status().registered}
    for path in sys.argv[1:]:
        out[path] = plain(read_stage(path)[1])
    print(json.dumps(out, sort_keys=True))
""")


def test_importer_gives_identical_descriptions_with_and_without_the_plugin(tmp_path):
    isaac = tmp_path / "gripper_isaac.usda"
    isaac.write_text(ISAAC_STAGE)
    stages = {"authored.usda": build(), "gripper_authored.usda": authored_gripper()}
    for name, stage in stages.items():
        stage.GetRootLayer().Export(str(tmp_path / name))
    paths = [
        str(isaac),
        *(str(tmp_path / n) for n in stages),
        *sorted(os.path.join(SAMPLES, n) for n in os.listdir(SAMPLES)),
        os.path.join(ROOT, "tests", "data", "panda", "panda.usda"),
    ]
    with_plugin = json.loads(run(["-c", DUMP, *paths], check=True).stdout)
    without = json.loads(run(["-c", DUMP, *paths], env={"USDART_NO_SCHEMA_PLUGIN": "1"}, check=True).stdout)
    assert with_plugin.pop("registered") is True and without.pop("registered") is False
    assert len(with_plugin) == len(paths) == 4 + len(os.listdir(SAMPLES))
    for path in paths:
        assert with_plugin[path] == without[path], path
    art = with_plugin[str(tmp_path / "authored.usda")]["articulations"][0]
    assert len(art["mimic_joints"]) == len(art["fixed_tendons"]) == len(art["spatial_tendons"]) == 1


# ---- authored files are valid against usd-core's validators and the registered schema types ---------------------
def _schema_type_mismatches(stage: Usd.Stage) -> list[str]:
    """Authored attributes whose type or variability differs from the registered schema's declaration."""
    out = []
    for prim in stage.Traverse():
        definition = prim.GetPrimDefinition()
        for attr in prim.GetAuthoredAttributes():
            declared = definition.GetAttributeDefinition(attr.GetName())
            if not declared:
                continue
            spec = attr.GetPropertyStack(Usd.TimeCode.Default())[0]
            if spec.typeName != declared.GetTypeName() or spec.variability != declared.GetVariability():
                out.append(f"{attr.GetPath()}: {spec.typeName} != {declared.GetTypeName()}")
    return out


def test_authored_and_sample_stages_are_validator_clean_and_schema_typed():
    validators = UsdValidation.ValidationContext(UsdValidation.ValidationRegistry().GetOrLoadAllValidators())
    samples = [Usd.Stage.Open(os.path.join(SAMPLES, n)) for n in sorted(os.listdir(SAMPLES))]
    stages = [build(), authored_gripper(), *samples]
    checked = 0
    for stage in stages:
        assert [e.GetMessage() for e in validators.Validate(stage)] == [], stage.GetRootLayer().identifier
        assert _schema_type_mismatches(stage) == [], stage.GetRootLayer().identifier
        checked += sum(
            1
            for p in stage.Traverse()
            for a in p.GetAuthoredAttributes()
            if p.GetPrimDefinition().GetAttributeDefinition(a.GetName())
        )
    assert checked > 300
    wrong = build()  # control: a double where the schema declares float is caught
    joint = wrong.GetRootLayer().GetPrimAtPath("/World/j1")
    name = "physxJointAxis:angular:armature"
    joint.RemoveProperty(joint.properties[name])  # Sdf: CreateAttribute would use the schema type
    Sdf.AttributeSpec(joint, name, Sdf.ValueTypeNames.Double).default = 1.0
    assert _schema_type_mismatches(wrong) == [f"/World/j1.{name}: double != float"]


def test_plugin_folder_is_a_standalone_usd_plugin():
    """PXR_PLUGINPATH_NAME pointed at the packaged folder works for any usd-core process (no usdart import)."""
    code = (
        "from pxr import Usd; import sys; "
        "print(Usd.SchemaRegistry().FindAppliedAPIPrimDefinition('PhysxJointAxisAPI') is not None, "
        "'usdart' in sys.modules)"
    )
    done = run(["-c", code], env={"PXR_PLUGINPATH_NAME": str(usdart.usd.schema_plugin.PLUGIN_DIR)}, check=True)
    assert done.stdout.split() == ["True", "False"]
    assert Plug.Registry().GetPluginWithName(usdart.usd.schema_plugin.PLUGIN_NAME) is not None
