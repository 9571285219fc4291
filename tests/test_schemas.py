"""The official PhysX and Newton schema packages: what usdart takes from them equals the PhysX schema reference
table (apart from the changes NVIDIA made since, listed), they are registered on `import usdart` unless a PhysX
schema is already loaded, and the importer gives identical results whether or not usd-core's registry saw them."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from authored_stage import ISAAC_STAGE, authored_gripper, build
from pxr import Sdf, Usd, UsdValidation

from usdart.usd import schemas
from usdart.usd.importer import usd_values

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(ROOT, "tests", "data", "physx_usd_schema_props.json")  # Omniverse Physics 110.0
SAMPLES = os.path.join(ROOT, "sample_stages")

with open(REFERENCE) as _f:
    SCHEMAS = json.load(_f)


def run(args, env=None, **kwargs):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=full_env, cwd=ROOT, **kwargs)


def _reference_default(prop):
    value = prop.get("default")
    return float(value) if value in ("inf", "-inf") else value


# ---- what usdart takes from the packages -------------------------------------------------------------------------
def test_declarations_equal_the_reference_table_but_for_nvidias_later_changes():
    """Every attribute of the 110.0 reference table, as the 25.11 package declares it; the differences are the
    ones NVIDIA's schema made since (PhysxJointAPI kept from 110.0 for old converted stages)."""
    specs = schemas.attribute_specs()
    differences, checked = {}, 0
    for schema, spec in SCHEMAS.items():
        for prop in spec["properties"]:
            if prop["type"] == "rel":
                continue
            declared = specs.get((schema, prop["name"]))
            if declared is None:
                differences[prop["name"]] = "gone"
                continue
            checked += 1
            assert (declared.type_name, declared.uniform) == (prop["type"], bool(prop.get("uniform"))), prop["name"]
            expected = _reference_default(prop)
            if declared.default != (pytest.approx(expected, rel=1e-7) if isinstance(expected, float) else expected):
                differences[prop["name"]] = (expected, declared.default)
    assert differences == {
        "physxScene:enableExternalForcesEveryIteration": (False, True),  # deprecated: TGS always does it now
        "physxScene:gpuMaxSoftBodyContacts": "gone",  # renamed gpuMaxDeformableVolumeContacts
        "physxJointAxis:{instance}:maxJointVelocity": (1.0e6, float("inf")),
    }
    assert checked == 106


def test_fallbacks_equal_what_usd_core_serves_from_the_registered_packages():
    """The fallbacks usdart reads from the packages' files are the registry's (float32 widened to the decimal)."""
    assert schemas.status().registered == ("physx_usd_schemas", "newton_usd_schemas")
    assert schemas.status().known_to_usd
    registry = Usd.SchemaRegistry()
    compared = 0
    for (schema, name), spec in schemas.attribute_specs().items():
        definition = registry.FindAppliedAPIPrimDefinition(schema)
        if schema == "PhysxJointAPI":
            assert definition is None  # gone from PhysX's schemas
            continue
        fallback = definition.GetAttributeFallbackValue(name.replace("{instance}", "__INSTANCE_NAME__"))
        if fallback is None:
            assert spec.default is None, name
            continue
        fallback = list(fallback) if hasattr(fallback, "__len__") and not isinstance(fallback, str) else fallback
        assert spec.default == (pytest.approx(fallback, rel=1e-7) if isinstance(fallback, float) else fallback), name
        compared += 1
    assert compared == 475
    assert usd_values.schema_default("physxRigidBody:angularDamping") == 0.05  # the decimal, not 0.0500000007
    assert usd_values.schema_default("physxJoint:maxJointVelocity") == 1.0e6
    assert usd_values.schema_default("newton:mimicCoef1") == 1.0


def test_usd_core_knows_the_schemas_after_import():
    stage = Usd.Stage.CreateInMemory()
    joint = stage.DefinePrim("/Joint", "PhysicsRevoluteJoint")
    for token in ("PhysxMimicJointAPI:rotZ", "PhysicsJointStateAPI:angular", "PhysxTendonAxisRootAPI:t0"):
        joint.AddAppliedSchema(token)
    joint.AddAppliedSchema("NewtonMimicAPI")
    assert joint.HasAPI("PhysxMimicJointAPI", "rotZ") and joint.HasAPI("NewtonMimicAPI")
    assert joint.HasAPI("PhysxTendonAxisAPI", "t0")  # built into the tendon root API
    assert joint.GetAttribute("physxMimicJoint:rotZ:gearing").Get() == 1.0
    assert joint.GetAttribute("physxTendon:t0:gearing").Get() == [1.0]


# ---- not registered beside another PhysX schema ------------------------------------------------------------------
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
    Plug.Registry().RegisterPlugins(sys.argv[1])  # e.g. Isaac Sim's physxSchema, loaded before usdart
    import usdart
    from usdart.usd import schemas
    status = schemas.status()
    definition = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition("PhysxMimicJointAPI")
    gearing = definition.GetAttributeFallbackValue("physxMimicJoint:__INSTANCE_NAME__:gearing")
    print(json.dumps(dict(registered=status.registered, reason=status.reason, gearing=gearing,
                          loaded="physx_usd_schemas" in sys.modules)))
""")


@pytest.mark.parametrize("plugin_name", ["physxSchema", "vendorPhysics"])
def test_physx_package_not_registered_when_a_physx_schema_is_already_loaded(tmp_path, plugin_name):
    info = json.loads(json.dumps(FAKE_PHYSX_INFO).replace('"NAME"', f'"{plugin_name}"'))
    if plugin_name != "physxSchema":  # another vendor's type name: found by its schema name
        info["Plugins"][0]["Info"]["Types"] = {"VendorMimicJointAPI": info["Plugins"][0]["Info"]["Types"].popitem()[1]}
    (tmp_path / "plugInfo.json").write_text(json.dumps(info))
    (tmp_path / "generatedSchema.usda").write_text(FAKE_PHYSX_SCHEMA)
    done = run(["-c", PROBE, str(tmp_path)], check=True)
    result = json.loads(done.stdout)
    why = "is registered" if plugin_name == "physxSchema" else "defines PhysxMimicJointAPI"
    assert result["registered"] == ["newton_usd_schemas"] and not result["loaded"]
    assert result["reason"].startswith(f"physx_usd_schemas not imported: plugin '{plugin_name}'")
    assert why in result["reason"]
    assert result["gearing"] == 7.0  # the schema already loaded stays in charge
    assert "rror" not in done.stderr  # no duplicate-schema errors from usd-core


# ---- the importer does not depend on usd-core's registry knowing the schemas ---------------------------------------
DUMP = textwrap.dedent("""
    import dataclasses, json, sys
    import numpy as np
    from pxr import Usd
    if sys.argv[1] == "late":
        Usd.SchemaRegistry()  # usd-core's schema registry built before usdart registers the packages
    import usdart
    from usdart.usd import schemas
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

    out = {"known": schemas.status().known_to_usd}
    for path in sys.argv[2:]:
        out[path] = plain(read_stage(path)[1])
    print(json.dumps(out, sort_keys=True))
""")


def test_importer_gives_identical_descriptions_whether_or_not_usd_core_knows_the_schemas(tmp_path):
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
    known = json.loads(run(["-c", DUMP, "first", *paths], check=True).stdout)
    unknown = json.loads(run(["-c", DUMP, "late", *paths], check=True).stdout)
    assert known.pop("known") is True and unknown.pop("known") is False
    assert len(known) == len(paths) == 4 + len(os.listdir(SAMPLES))
    for path in paths:
        assert known[path] == unknown[path], path
    art = known[str(tmp_path / "authored.usda")]["articulations"][0]
    assert len(art["mimic_joints"]) == len(art["fixed_tendons"]) == len(art["spatial_tendons"]) == 1


# ---- authored files are valid against usd-core's validators and the official schema types -----------------------
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
