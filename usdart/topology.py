"""Changing a running scene's topology: re-read its stage after edits, keeping the state of what still exists.

PhysX lets an application remove, add or change an articulation in a running scene (seed 000, "Changing the
Topology of an Articulation that is in a Scene"). usdart's scene is built from its stage, so a change is an edit
of the stage (made by the user, or by `Scene.remove` / `Scene.add` in the stage's session layer, which is never
saved over the user's files) followed by `Scene.sync`, which rebuilds the scene and carries the state over:

- an articulation or free body whose root link and DOFs are unchanged keeps its whole state in every world,
  bit for bit (joint positions, velocities, spherical joints' quaternions, root pose and velocity, sleep,
  link poses) and its controls (joint forces, drive targets, pending link forces);
- one whose DOFs changed keeps, by DOF name, the positions, velocities, joint forces and targets of the DOFs
  that still exist, and its root pose and velocity; the rest start as authored;
- new ones start as authored; removed ones are gone.

The Articulation objects are new after a sync; a cache keeps working with the new object of an articulation
whose links, joints and DOFs are unchanged, and is refused (naming both) by one whose structure changed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .articulation import Articulation
from .cache import ArticulationCache, CacheFlag
from .core.articulation_model import structure_key

_STATE = (
    CacheFlag.POSITION
    | CacheFlag.VELOCITY
    | CacheFlag.ROOT_TRANSFORM
    | CacheFlag.ROOT_VELOCITIES
    | CacheFlag.FORCE
    | CacheFlag.JOINT_TARGET_POSITIONS
    | CacheFlag.JOINT_TARGET_VELOCITIES
)
_PER_DOF = ("joint_position", "joint_velocity", "joint_force", "joint_target_position", "joint_target_velocity")


@dataclass
class Saved:
    """One articulation's (or free body's) state and controls in every world, before a rebuild."""

    structure: tuple
    dof_names: list[str]
    state: tuple  # TreeState arrays, copied
    control: tuple  # ArticulationControl arrays, copied
    caches: list[ArticulationCache]  # per world: by-name fallback when the structure changed


def save(members: list[Articulation]) -> dict[str, Saved]:
    """Every member's state by root link path (raises SimulationDiverged while the scene is diverged)."""
    out = {}
    for art in members:
        caches = []
        for w in range(art.worlds):
            cache = art.create_cache()
            art.copy_internal_state_to_cache(cache, _STATE, world=w)
            caches.append(cache)
        out[art.root_link] = Saved(
            structure_key(art.model),
            list(art.dof_names),
            tuple(np.array(a) for a in art.state),
            tuple(np.array(a) for a in art.control),
            caches,
        )
    return out


def restore(members: list[Articulation], saved: dict[str, Saved]) -> None:
    """Carry the saved state over to the rebuilt members that still exist (module docstring)."""
    for art in members:
        old = saved.get(art.root_link)
        if old is None:
            continue
        if old.structure == structure_key(art.model) and old.dof_names == list(art.dof_names):
            for target, value in zip(art.state, old.state):
                target[...] = value
            for target, value in zip(art.control, old.control):
                target[...] = value
            continue
        index = {name: k for k, name in enumerate(old.dof_names)}
        pairs = [(k, index[name]) for k, name in enumerate(art.dof_names) if name in index]
        for w, before in enumerate(old.caches):
            cache = art.create_cache()
            art.copy_internal_state_to_cache(cache, _STATE, world=w)  # as authored
            for name in _PER_DOF:
                now, then = getattr(cache, name), getattr(before, name)
                for k, j in pairs:
                    now[k] = then[j]
            cache.root_transform[:] = before.root_transform
            cache.root_linear_velocity[:] = before.root_linear_velocity
            cache.root_angular_velocity[:] = before.root_angular_velocity
            art.apply_cache(cache, _STATE, world=w)
