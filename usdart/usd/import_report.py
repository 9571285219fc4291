"""What the import made of every physics attribute a stage authors: used, or ignored and why.

`usdart inspect --report` lists, per prim, the physics API schemas it applies and each authored attribute
of the physics namespaces (physics:, drive:, state:, limit:, physx*, newton:) with its fate: "used" when the
importer read its value (usdart.usd.importer.usd_values.recording_reads), else "ignored" with the reason
(a Newton attribute PhysX does not read, PhysxJointAPI is gone from PhysX's schemas, a contact attribute
usdart's contacts do not read yet, ...). Values are in the stage's units; the importer converts them to SI and radians.
"""

from __future__ import annotations

from pxr import Usd

from .importer.usd_values import applied_schemas, python_value

PHYSICS_NAMESPACES = ("physics:", "drive:", "state:", "limit:", "physx", "newton:")
# attributes of contacts and collision geometry (usdart.usd.importer.colliders reads those its contacts use)
CONTACT_ATTRIBUTES = (
    "physxCollision",
    "physxContactReport",
    "physxMaterial",
    "physxConvex",
    "physxTriangleMesh",
    "physxSDFMeshCollision",
    "physxSphereFillCollision",
    "physxMeshMergeCollision",
    "physxSurfaceVelocity",
    "physics:restitution",
    "physics:staticFriction",
    "physics:dynamicFriction",
    "physics:approximation",
    "physics:collisionEnabled",
    "physics:filteredGroups",
    "physics:invertFilteredGroups",
    "physics:mergeGroup",
)


CONTACT_REASON = (
    "not read by usdart's contacts: not on a collider they simulate, or a contact feature not simulated yet"
)
# V-HACD's settings (usdart.usd.importer.decomposition): usdart decomposes with CoACD, which has no voxels
VHACD_REASON = "a V-HACD voxel setting: usdart decomposes with CoACD, which cuts the mesh itself (no voxels)"
VHACD_ATTRIBUTES = tuple(
    f"physxConvexDecompositionCollision:{name}"
    for name in ("errorPercentage", "voxelResolution", "minThickness", "shrinkWrap")
)


def _reason(name: str, semantics: str) -> str:
    if semantics == "physx" and name.startswith("newton:"):
        return "PhysX does not read this Newton attribute (--semantics newton may)"
    if semantics == "physx" and name.startswith("physxJoint:"):
        return "PhysxJointAPI is gone from PhysX's schemas (25.11): author PhysxJointAxisAPI:<axis> instead"
    if name in VHACD_ATTRIBUTES:
        return VHACD_REASON
    if name.startswith(CONTACT_ATTRIBUTES):
        return CONTACT_REASON
    return "not read by usdart"


def import_report(stage: Usd.Stage, reads: set[tuple[str, str]], semantics: str) -> list[dict]:
    """One entry per prim that applies a physics API or authors a physics attribute: {"prim", "apis",
    "attributes": [{"name", "value", "status": "used" | "ignored", "reason"}]}, in stage order."""
    report = []
    for prim in stage.Traverse():
        path = str(prim.GetPath())
        apis = [a for a in applied_schemas(prim) if a.startswith(("Physics", "Physx", "Newton"))]
        attributes = []
        for attr in prim.GetAuthoredAttributes():
            name = attr.GetName()
            if not name.startswith(PHYSICS_NAMESPACES) or not attr.HasAuthoredValue():
                continue
            used = (path, name) in reads
            attributes.append(
                {
                    "name": name,
                    "value": _show(python_value(attr)),
                    "status": "used" if used else "ignored",
                    "reason": "" if used else _reason(name, semantics),
                }
            )
        if apis or attributes:
            report.append({"prim": path, "apis": apis, "attributes": attributes})
    return report


def _show(value) -> str:
    if hasattr(value, "tolist"):  # vectors and quaternions as plain lists
        value = [round(x, 9) for x in value.tolist()] if value.ndim == 1 else value.tolist()
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def report_table(report: list[dict], settings: dict) -> str:
    used = sum(a["status"] == "used" for entry in report for a in entry["attributes"])
    ignored = sum(a["status"] == "ignored" for entry in report for a in entry["attributes"])
    lines = [
        "",
        f"import report: {used} authored physics attributes used, {ignored} ignored (values in stage units: "
        f"metersPerUnit {settings['meters_per_unit']:g}, kilogramsPerUnit {settings['kilograms_per_unit']:g}, "
        "angles in degrees; the import converts them to SI and radians)",
    ]
    for entry in report:
        lines.append(f"{entry['prim']}" + (f"  [{', '.join(entry['apis'])}]" if entry["apis"] else ""))
        for a in entry["attributes"]:
            why = f"  ({a['reason']})" if a["reason"] else ""
            lines.append(f"  {a['status']:<8} {a['name']} = {a['value']}{why}")
    return "\n".join(lines)
