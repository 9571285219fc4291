"""`ArticulationView`: articulations of one structure, in every world, read and written as arrays.

PhysX's data-oriented API and Isaac Lab's articulation views hand a whole batch of robots to a controller or a
learning loop at once. A view gathers the scene's articulations whose prim paths match a pattern; every array
it reads or takes is shaped (worlds, articulations, ...), in the order of `worlds` and `articulations`
(indices; all when None). A view goes through the same cache operations as `Articulation`, so what it reads
and writes is exactly what those give; writes act from the next step.
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Sequence

import numpy as np

from .articulation import Articulation
from .cache import CacheFlag
from .core.articulation_model import structure_key
from .errors import UsdartError

# name -> (cache attributes, flag, writable)
_FIELDS = {
    "dof_positions": (("joint_position",), CacheFlag.POSITION, True),
    "dof_velocities": (("joint_velocity",), CacheFlag.VELOCITY, True),
    "dof_accelerations": (("joint_acceleration",), CacheFlag.ACCELERATION, False),
    "dof_position_targets": (("joint_target_position",), CacheFlag.JOINT_TARGET_POSITIONS, True),
    "dof_velocity_targets": (("joint_target_velocity",), CacheFlag.JOINT_TARGET_VELOCITIES, True),
    "dof_efforts": (("joint_force",), CacheFlag.FORCE, True),  # the applied joint forces
    "dof_solver_forces": (("joint_solver_forces",), CacheFlag.JOINT_SOLVER_FORCES, False),
    "root_transforms": (("root_transform",), CacheFlag.ROOT_TRANSFORM, True),  # [x y z qw qx qy qz]
    "root_velocities": (("root_linear_velocity", "root_angular_velocity"), CacheFlag.ROOT_VELOCITIES, True),
    "link_velocities": (("link_velocity",), CacheFlag.LINK_VELOCITY, False),
    "link_accelerations": (("link_acceleration",), CacheFlag.LINK_ACCELERATION, False),
    "link_incoming_joint_forces": (("link_incoming_joint_force",), CacheFlag.LINK_INCOMING_JOINT_FORCE, False),
}
FIELDS = tuple(_FIELDS)


class ArticulationView:
    """Articulations of one structure (same links, joints and DOFs), in every world of their scene."""

    def __init__(self, articulations: Sequence[Articulation], pattern: str):
        if not articulations:
            raise UsdartError(f"no articulation matches '{pattern}'")
        first = articulations[0]
        others = [a.root_link for a in articulations if structure_key(a.model) != structure_key(first.model)]
        if others:
            raise UsdartError(
                f"'{pattern}' matches articulations of different structures: {first.root_link} and "
                f"{', '.join(others)} (a view needs the same links, joints and DOFs; use one view per robot)"
            )
        self.pattern = pattern
        self.articulations = list(articulations)
        self.paths = [a.root_link for a in self.articulations]
        self.worlds = first.worlds
        self.dof_names = first.dof_names
        self.links = first.links
        self._caches = [a.create_cache() for a in self.articulations]

    @property
    def count(self) -> int:
        return len(self.articulations)

    def __repr__(self) -> str:
        return f"ArticulationView('{self.pattern}': {self.count} articulations x {self.worlds} worlds)"

    def _select(self, articulations, worlds) -> tuple[list[int], list[int]]:
        chosen = []
        for what, given, size in (("articulation", articulations, self.count), ("world", worlds, self.worlds)):
            if given is None:
                chosen.append(list(range(size)))
                continue
            indices = [int(i) for i in np.atleast_1d(given)]
            bad = [i for i in indices if not 0 <= i < size]
            if bad or any(int(i) != i for i in np.atleast_1d(given)):
                raise UsdartError(f"{self!r}: {what} indices must be whole numbers in [0, {size}), got {given}")
            chosen.append(indices)
        return chosen[0], chosen[1]

    def read(self, name: str, articulations=None, worlds=None) -> np.ndarray:
        """One of `FIELDS` for the chosen articulations and worlds: shape (worlds, articulations, ...)."""
        attributes, flag, _ = self._field(name)
        arts, worlds = self._select(articulations, worlds)
        rows = []
        for w in worlds:
            row = []
            for a in arts:
                cache = self._caches[a]
                self.articulations[a].copy_internal_state_to_cache(cache, flag, world=w)
                row.append(np.concatenate([np.atleast_1d(getattr(cache, n)) for n in attributes], axis=-1))
            rows.append(row)
        return np.array(rows)

    def write(self, name: str, values, articulations=None, worlds=None) -> None:
        """Set one of the writable `FIELDS` for the chosen articulations and worlds from `values`, shaped
        (worlds, articulations, ...) or broadcastable to it; acts from the next step."""
        attributes, flag, writable = self._field(name)
        if not writable:
            raise UsdartError(f"{self!r}: {name} is read-only")
        arts, worlds = self._select(articulations, worlds)
        size = sum(np.size(getattr(self._caches[0], n)) for n in attributes)  # writable fields are vectors
        shape = (len(worlds), len(arts), size)
        try:
            values = np.broadcast_to(np.asarray(values, dtype=float), shape)
        except (TypeError, ValueError) as error:
            raise UsdartError(f"{self!r}: {name} takes an array of shape {shape}: {error}") from None
        for i, w in enumerate(worlds):
            for j, a in enumerate(arts):
                cache, start = self._caches[a], 0
                self.articulations[a].copy_internal_state_to_cache(cache, flag, world=w)
                for n in attributes:
                    target = getattr(cache, n)
                    target[...] = values[i, j, start : start + target.size].reshape(target.shape)
                    start += target.size
                self.articulations[a].apply_cache(cache, flag, world=w)

    def _field(self, name: str):
        if name not in _FIELDS:
            raise UsdartError(f"{self!r}: no field '{name}'; fields: {', '.join(FIELDS)}")
        return _FIELDS[name]

    def link_transforms(self, articulations=None, worlds=None) -> np.ndarray:
        """World pose of every link, (worlds, articulations, links, 7) as [x y z qw qx qy qz]."""
        arts, worlds = self._select(articulations, worlds)
        return np.array([[self.articulations[a].link_transforms(w) for a in arts] for w in worlds])

    # ---- the dynamics at each articulation's state, as Articulation's compute functions give them ---------------
    def _compute(self, function: str, articulations, worlds) -> np.ndarray:
        arts, worlds = self._select(articulations, worlds)
        state = CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES
        out = []
        for w in worlds:
            row = []
            for a in arts:
                art, cache = self.articulations[a], self._caches[a]
                art.copy_internal_state_to_cache(cache, state, world=w)
                with warnings.catch_warnings():  # the view means PhysX 5's forms (see inverse_dynamics)
                    warnings.simplefilter("ignore", FutureWarning)
                    result = getattr(art, function)(cache)
                row.append(np.array(cache.dense_jacobian) if function == "compute_dense_jacobian" else result)
            out.append(row)
        return np.array(out)

    def jacobians(self, articulations=None, worlds=None) -> np.ndarray:
        """Dense link Jacobians (Articulation.compute_dense_jacobian), (worlds, articulations, rows, cols)."""
        return self._compute("compute_dense_jacobian", articulations, worlds)

    def mass_matrices(self, articulations=None, worlds=None) -> np.ndarray:
        """Mass matrices with the root terms of a floating base (Articulation.compute_mass_matrix)."""
        return self._compute("compute_mass_matrix", articulations, worlds)

    def gravity_compensation(self, articulations=None, worlds=None) -> np.ndarray:
        """Forces holding each articulation against gravity (Articulation.compute_gravity_compensation)."""
        return self._compute("compute_gravity_compensation", articulations, worlds)

    def coriolis_compensation(self, articulations=None, worlds=None) -> np.ndarray:
        """Coriolis and centrifugal forces (Articulation.compute_coriolis_compensation)."""
        return self._compute("compute_coriolis_compensation", articulations, worlds)


def select_articulations(articulations: Sequence[Articulation], pattern: str) -> list[Articulation]:
    """The articulations whose root link, root-API prim or any link path matches `pattern` (fnmatch: `*`, `?`,
    `[...]`), in scene order."""
    return [
        a
        for a in articulations
        if any(fnmatch.fnmatchcase(p, pattern) for p in (a.root_link, a.desc.api_prim or a.root_link))
    ]
