"""Authoring helpers: write the UsdPhysics and PhysX schemas usdart reads, from SI values and radians.

Every helper converts to the stage's units (metersPerUnit, kilogramsPerUnit, degrees, angular gains per
degree) exactly as the importer converts back, writes the schema the way Isaac Sim does (applied-schema
tokens, attributes by name with the schema's types), and returns the prim or API it wrote. Joint values
are in the joint's own body0 -> body1 sense. Bad requests raise `usdart.errors.AuthoringError` naming
the prim. usd-core alone is enough: the PhysX schema plugin is not needed to write or read the files.

    from usdart import authoring
    authoring.set_articulation_root(stage.GetPrimAtPath("/World/robot"))
    authoring.set_drive(joint, stiffness=400.0, damping=40.0, max_force=87.0, target_position=0.5)
    authoring.set_joint_state(joint, position=0.5)
"""

from ..schemas import register as _register_schemas
from .articulation import exclude_from_articulation, set_articulation_root, set_articulation_settings
from .contacts import add_physics_material, bind_physics_material, set_collision_offsets
from .coupling import (
    TendonJoint,
    add_fixed_tendon,
    add_spatial_tendon_attachment,
    add_spatial_tendon_leaf,
    add_spatial_tendon_root,
    set_mimic_joint,
)
from .joints import (
    ACCELERATION,
    FORCE,
    DriveEnvelope,
    set_drive,
    set_drive_envelope,
    set_drive_target,
    set_joint_limits,
    set_joint_properties,
    set_joint_state,
)
from .scene import set_rigid_body_settings, set_rigid_body_velocity, set_scene_settings
from .units import DofUnits, StageUnits

_register_schemas()  # before this package edits any stage

__all__ = [
    "add_physics_material",
    "bind_physics_material",
    "set_collision_offsets",
    "set_articulation_root",
    "exclude_from_articulation",
    "set_articulation_settings",
    "set_joint_limits",
    "set_joint_state",
    "set_drive",
    "set_drive_target",
    "set_drive_envelope",
    "DriveEnvelope",
    "FORCE",
    "ACCELERATION",
    "set_joint_properties",
    "set_mimic_joint",
    "TendonJoint",
    "add_fixed_tendon",
    "add_spatial_tendon_root",
    "add_spatial_tendon_attachment",
    "add_spatial_tendon_leaf",
    "set_scene_settings",
    "set_rigid_body_settings",
    "set_rigid_body_velocity",
    "StageUnits",
    "DofUnits",
]
