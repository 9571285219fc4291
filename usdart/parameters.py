"""Per-world parameters: each world of a scene with its own drive gains and targets, joint friction and
armature, link masses or gravity (domain randomisation, gain sweeps).

They are written into the engine's batched model (usdart.core.model.batch_model: float tables with a
leading world axis) or its per-world control, so one kernel call still steps every world. Values are SI
with radians for angular DOFs, as everywhere in the Python API (the importer converts USD's degrees).
A parameter that would need a constraint row the model does not have (a drive on an undriven DOF,
friction on a DOF built without it) is refused: that changes the model's structure, not a parameter.
"""

from __future__ import annotations

import numpy as np

from .core import layout as L
from .errors import UsdartError

# name: (DP_* column, the constraint row it acts through or None, whether +inf is a valid value)
DOF_PARAMETERS = {
    "stiffness": (L.DP_STIFFNESS, L.ROW_DRIVE, False),
    "damping": (L.DP_DRIVE_DAMPING, L.ROW_DRIVE, False),
    "max_force": (L.DP_MAX_FORCE, L.ROW_DRIVE, True),
    "static_friction": (L.DP_STATIC_FRICTION, L.ROW_FRICTION, False),
    "dynamic_friction": (L.DP_DYNAMIC_FRICTION, L.ROW_FRICTION, False),
    "viscous_friction": (L.DP_VISCOUS_FRICTION, L.ROW_FRICTION, False),
    "armature": (L.DP_ARMATURE, None, False),
}
TARGETS = ("target_position", "target_velocity")  # per-world already: the control's drive targets
LINK_PARAMETERS = ("mass",)
SCENE_PARAMETERS = ("gravity",)
NAMES = (*DOF_PARAMETERS, *TARGETS, *LINK_PARAMETERS, *SCENE_PARAMETERS)


def set_parameter(scene, path: str, name: str, values) -> None:
    """Give every world its own value of `name` on the prim at `path` (see Scene.set_parameter)."""
    engine, worlds = scene._engine, scene.worlds
    if name in SCENE_PARAMETERS:
        engine.batched.gravity[:] = _values(values, (worlds, 3), path, name, lower=-np.inf)
        return
    if name in LINK_PARAMETERS:
        link = _link(scene, path)
        mass = _values(values, (worlds,), path, name, lower=0.0, strict=True)
        current = engine.batched.links.link_par[:, link, L.LP_MASS]
        if not np.all(current > 0):
            raise UsdartError(f"{path}: {name} cannot be set on a massless link (give it a mass in USD)")
        _scale_mass(engine.batched.links, link, mass / current)
        return
    dofs = _joint_dofs(scene, path)
    shape = (worlds,) if len(dofs) == 1 else (worlds, len(dofs))
    if name in TARGETS:
        target = engine.control.target_position if name == "target_position" else engine.control.target_velocity
        target[:, dofs] = _values(values, shape, path, name, lower=-np.inf).reshape(worlds, len(dofs))
        return
    if name not in DOF_PARAMETERS:
        raise UsdartError(f"{path}: unknown parameter {name!r} (known: {', '.join(NAMES)})")
    column, row_kind, inf_ok = DOF_PARAMETERS[name]
    value = _values(values, shape, path, name, lower=0.0, inf_ok=inf_ok).reshape(worlds, len(dofs))
    if row_kind is not None:
        _require_row(engine.model, dofs, row_kind, path, name)
    engine.batched.dofs.dof_par[:, dofs, column] = value


def parameter(scene, path: str, name: str) -> np.ndarray:
    """Every world's value of `name` on the prim at `path` (a copy; shapes as set_parameter takes)."""
    engine = scene._engine
    if name in SCENE_PARAMETERS:
        return engine.batched.gravity.copy()
    if name in LINK_PARAMETERS:
        return engine.batched.links.link_par[:, _link(scene, path), L.LP_MASS].copy()
    dofs = _joint_dofs(scene, path)
    if name in TARGETS:
        values = (engine.control.target_position if name == "target_position" else engine.control.target_velocity)[
            :, dofs
        ]
    elif name in DOF_PARAMETERS:
        values = engine.batched.dofs.dof_par[:, dofs, DOF_PARAMETERS[name][0]]
    else:
        raise UsdartError(f"{path}: unknown parameter {name!r} (known: {', '.join(NAMES)})")
    return values[:, 0].copy() if len(dofs) == 1 else values.copy()


def _values(values, shape, path, name, lower, strict=False, inf_ok=False) -> np.ndarray:
    """`values` as floats of `shape` (a scalar or one row broadcasts to every world), finite (or +inf where
    allowed) and at least `lower` (above it when `strict`); otherwise an error naming the prim."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise UsdartError(f"{path}: {name} must be numbers, got {values!r}") from None
    try:
        array = np.broadcast_to(array, shape) if array.ndim < len(shape) else array
    except ValueError:
        pass
    if array.shape != shape:
        raise UsdartError(f"{path}: {name} needs shape {shape} (one value per world), got {np.shape(values)}")
    bad = np.isnan(array) | (np.isinf(array) & ~(inf_ok & (array > 0)))
    if bad.any():
        raise UsdartError(f"{path}: {name} must be finite, got {array[bad].flat[0]} (world {np.argwhere(bad)[0][0]})")
    low = array <= lower if strict else array < lower
    if low.any():
        relation = "above" if strict else "at least"
        world = np.argwhere(low)[0][0]
        raise UsdartError(f"{path}: {name} must be {relation} {lower:g}, got {array[low].flat[0]:g} (world {world})")
    return np.array(array)


def _joint_dofs(scene, path: str) -> list[int]:
    """Scene DOF indices of a joint (all its DOFs, in order) or of one DOF given by its name."""
    for articulation in scene.articulations:
        names = articulation.dof_names
        local = [k for k, n in enumerate(names) if n == path] or [
            k for k, n in enumerate(names) if n.startswith(path + ":")
        ]
        if local:
            d0 = int(scene._engine.model.trees.tree[articulation._tree, L.T_DOF0])
            return [d0 + k for k in local]
    raise UsdartError(f"{path}: not a joint DOF of any articulation in the scene")


def _link(scene, path: str) -> int:
    """Scene link index of an articulation link or a free rigid body."""
    members = [*scene.articulations, *(scene.free_body(p) for p in scene.free_bodies)]
    for member in members:
        if path in member.links:
            l0 = int(scene._engine.model.trees.tree[member._tree, L.T_LINK0])
            return l0 + member.links.index(path)
    raise UsdartError(f"{path}: not a simulated rigid body of the scene (a link or a free body)")


def _require_row(model, dofs, row_kind, path, name) -> None:
    rows = model.couplings.row
    have = set(rows[rows[:, L.R_KIND] == row_kind, L.R_ID].tolist())
    if not set(dofs) <= have:
        what = "a drive" if row_kind == L.ROW_DRIVE else "joint friction"
        raise UsdartError(
            f"{path}: {name} needs {what} on the joint, and the stage gives it none "
            f"(author {what} in USD; per-world values can change it, not add it)"
        )


def _scale_mass(links, link: int, factor: np.ndarray) -> None:
    """A link's mass times `factor` per world, its first moment and inertias with it (the centre of mass
    stays where it is)."""
    links.link_par[:, link, L.LP_MASS] *= factor
    links.link_vec[:, link, L.FIRST_MOMENT] *= factor[:, None]
    for column in (L.INERTIA_COM, L.INERTIA_ORIGIN):
        links.link_rot[:, link, column] *= factor[:, None, None]
