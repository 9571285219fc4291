"""`ArticulationView`: articulations of one structure, in every world, read and written as arrays.

PhysX's data-oriented API and Isaac Lab's articulation views hand a whole batch of robots to a controller or a
learning loop at once. A view gathers the scene's articulations whose prim paths match a pattern; every array
it reads or takes is shaped (worlds, articulations, ...), in the order of `worlds` and `articulations`
(indices; all when None). What a view reads and writes is exactly what `Articulation`'s cache operations
give, to the bit; writes act from the next step.

The cost is per batch, not per robot: state fields are gathered from and scattered into the scene's arrays
with one index per field, and the matrices are computed for all worlds of an articulation with one
kernel call per thread on the view's own scratch scene (the scene's state is never touched by them); so are
the fields that replay the last step (link accelerations, incoming joint forces: usdart.last_step). Solver
forces and link velocities go through an articulation cache per robot and world.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

import numpy as np

from .articulation import _STATE_FLAGS, Articulation
from .cache import CacheFlag
from .core import layout as L
from .core.kernels import entry
from .core.kernels.box import box
from .core.model import batch_model
from .core.state import sync_spherical_positions, sync_spherical_quaternions, workspace, zeros_control, zeros_state
from .errors import UsdartError
from .last_step import Scratch, replay
from .values import all_finite, quaternion_norms

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

# fields of the last step replayed for every chosen world at once (usdart.last_step): name -> its part of the replay
_REPLAYED = {"link_accelerations": 0, "link_incoming_joint_forces": 1}
# fields that are a slice of the scene's arrays: name -> (record, per-DOF or per-tree array(s))
_DOF_ARRAYS = {
    "dof_positions": ("state", "q"),
    "dof_velocities": ("state", "qd"),
    "dof_accelerations": ("state", "qdd"),
    "dof_position_targets": ("control", "target_position"),
    "dof_velocity_targets": ("control", "target_velocity"),
    "dof_efforts": ("control", "joint_force"),
}


class ArticulationView:
    """Articulations of one structure (same links, joints and DOFs), in every world of their scene."""

    def __init__(self, articulations: Sequence[Articulation], pattern: str):
        if not articulations:
            raise UsdartError(f"no articulation matches '{pattern}'")
        first = articulations[0]
        others = [a.root_link for a in articulations if a._structure is not first._structure]
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
        self._model = first.model
        self._engine = first._engine
        self._trees = np.array([a._tree for a in self.articulations], dtype=np.int64)
        # each articulation's DOF columns in the scene's arrays (articulations x DOFs)
        first_dofs = self._engine.model.trees.tree[self._trees, L.T_DOF0]
        self._dofs = first_dofs[:, None] + np.arange(self._model.n_dofs)
        self._caches = [a.create_cache() for a in self.articulations]
        self._scratch = None

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

    def _field(self, name: str):
        if name not in _FIELDS:
            raise UsdartError(f"{self!r}: no field '{name}'; fields: {', '.join(FIELDS)}")
        return _FIELDS[name]

    def _require_finite(self) -> None:
        self.articulations[0]._require_finite()

    # ---- reading and writing ---------------------------------------------------------------------------------
    def read(self, name: str, articulations=None, worlds=None) -> np.ndarray:
        """One of `FIELDS` for the chosen articulations and worlds: shape (worlds, articulations, ...)."""
        attributes, flag, _ = self._field(name)
        arts, worlds = self._select(articulations, worlds)
        if flag & _STATE_FLAGS:  # a diverged scene's state is not read (as copy_internal_state_to_cache)
            self._require_finite()
        e = self._engine
        if name in _DOF_ARRAYS:
            record, array = _DOF_ARRAYS[name]
            return getattr(getattr(e, record), array)[np.ix_(worlds, self._dofs[arts].ravel())].reshape(
                len(worlds), len(arts), -1
            )
        if name == "root_transforms":
            at = np.ix_(worlds, self._trees[arts])
            return np.concatenate([e.state.root_pos[at], e.state.root_quat[at]], axis=-1)
        if name == "root_velocities":
            return e.state.root_vel[np.ix_(worlds, self._trees[arts])]
        if name in _REPLAYED:
            return self._replayed(name, arts, worlds)
        rows = []
        for w in worlds:
            row = []
            for a in arts:
                cache = self._caches[a]
                self.articulations[a].copy_internal_state_to_cache(cache, flag, world=w)
                row.append(np.concatenate([np.atleast_1d(getattr(cache, n)) for n in attributes], axis=-1))
            rows.append(row)
        return np.array(rows)

    def _replayed(self, name: str, arts: list[int], worlds: list[int]) -> np.ndarray:
        """A field of the last step (usdart.last_step), one kernel call per articulation for all chosen worlds."""
        out = np.zeros((len(worlds), len(arts), self._model.n_links, 6))
        for j, a in enumerate(arts):
            b, state, control = self._scratch_scene(a)
            m = self.articulations[a].model
            parts = replay(
                self._engine,
                int(self._trees[a]),
                np.array(worlds, dtype=np.int64),
                Scratch(b, state, control, self._scratch[3]),
                m.child_frame_pos,
                m.child_frame_rot,
            )
            out[:, j] = self._finite(parts[_REPLAYED[name]], a, worlds, name.replace("_", " "))
        return out

    def write(self, name: str, values, articulations=None, worlds=None) -> None:
        """Set one of the writable `FIELDS` for the chosen articulations and worlds from `values`, shaped
        (worlds, articulations, ...) or broadcastable to it; acts from the next step. The values are checked
        (finite, spherical joints within [-pi, pi], rotations non-zero) before anything is written."""
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
        if self._engine.divergence:  # cache by cache: each world's recovery is decided as it is written
            self._write_through_caches(attributes, flag, values, arts, worlds)
            return
        self._check(name, values, arts, worlds)
        e = self._engine
        if name in _DOF_ARRAYS:
            record, array = _DOF_ARRAYS[name]
            getattr(getattr(e, record), array)[np.ix_(worlds, self._dofs[arts].ravel())] = values.reshape(
                len(worlds), -1
            )
            if name == "dof_positions" and self.articulations[0]._spherical_joints:
                for a in arts:  # the joint quaternions follow the positions, as apply_cache does
                    art = self.articulations[a]
                    for w in worlds:
                        sync_spherical_quaternions(art.model, art._state, w)
                        sync_spherical_positions(art.model, art._state, w)
        elif name == "root_transforms":
            at = np.ix_(worlds, self._trees[arts])
            e.state.root_pos[at] = values[..., :3]
            e.state.root_quat[at] = values[..., 3:] / quaternion_norms(values[..., 3:])[..., None]
        elif self._model.n_root:  # root velocities of floating bases (a fixed base has none to set)
            e.state.root_vel[np.ix_(worlds, self._trees[arts])] = values
        if name in ("dof_positions", "root_transforms"):
            entry.step(e._box, 0, self.worlds, 0, -1, 1.0, 0)  # link poses of the worlds whose state changed
        for a in arts:  # as apply_cache: a changed state, target or force wakes the articulation
            state = self.articulations[a]._state
            state.asleep[worlds] = False
            state.link_wake[worlds] = L.WAKE_TIME

    def _check(self, name: str, values: np.ndarray, arts: list[int], worlds: list[int]) -> None:
        """The errors apply_cache would raise, naming the first articulation and world at fault."""
        bad = None
        if not all_finite(values):
            bad = np.argwhere(~np.isfinite(values))[0]
            what = "contains NaN or infinite values"
        elif name == "dof_positions":
            m = self._model
            spherical = [d for i in self.articulations[0]._spherical_joints for d in range(*m.dof_start[i : i + 2])]
            outside = np.abs(values[..., spherical]) > np.pi + 1e-9
            if outside.any():
                bad = np.argwhere(outside)[0]
                what = "has spherical joint positions outside [-pi, pi]"
        elif name == "root_transforms":
            small = quaternion_norms(values[..., 3:]) < 1e-12
            if small.any():
                bad = np.argwhere(small)[0]
                what = "has a zero root orientation quaternion (not a rotation)"
        if bad is not None:
            w, a = worlds[bad[0]], arts[bad[1]]
            raise UsdartError(f"{self.paths[a]} (world {w}): {name} {what}")

    def _write_through_caches(self, attributes, flag, values, arts, worlds) -> None:
        for i, w in enumerate(worlds):
            for j, a in enumerate(arts):
                cache, start = self._caches[a], 0
                self.articulations[a].copy_internal_state_to_cache(cache, flag, world=w)
                for n in attributes:
                    target = getattr(cache, n)
                    target[...] = values[i, j, start : start + target.size].reshape(target.shape)
                    start += target.size
                self.articulations[a].apply_cache(cache, flag, world=w)

    def link_transforms(self, articulations=None, worlds=None) -> np.ndarray:
        """World pose of every link, (worlds, articulations, links, 7) as [x y z qw qx qy qz]."""
        arts, worlds = self._select(articulations, worlds)
        return np.array([[self.articulations[a].link_transforms(w) for a in arts] for w in worlds])

    # ---- the dynamics at each articulation's state, as Articulation's compute functions give them ---------------
    def _scratch_scene(self, a: int):
        """(box, state, control): every world's copy of articulation a alone, as its articulation caches hold
        one. The state and workspace serve every articulation of the view; each has its own model (its root
        frame, its parameters), built at the first matrix asked for."""
        if self._scratch is None:
            solo, worlds = self.articulations[0]._solo_model, self.worlds
            state, control = zeros_state(solo, worlds), zeros_control(solo, worlds)
            self._scratch = ({}, state, control, workspace(solo, worlds, articulated=True))
        boxes, state, control, work = self._scratch
        if a not in boxes:
            boxes[a] = box((batch_model(self.articulations[a]._solo_model, self.worlds), state, control, work))
        return boxes[a], state, control

    def _load(self, a: int, velocities: bool):
        """The scratch scene at articulation a's state in every world (as Articulation._load a cache)."""
        self._require_finite()
        b, scratch, control = self._scratch_scene(a)
        scratch.qdd[:], scratch.root_acc[:], control.link_wrench[:] = 0.0, 0.0, 0.0  # inverse dynamics' inputs
        src, t, dofs = self._engine.state, self._trees[a], self._dofs[a]
        scratch.q[:] = src.q[:, dofs]
        scratch.qd[:] = src.qd[:, dofs] if velocities else 0.0
        if self.articulations[0]._spherical_joints:
            for w in range(self.worlds):
                sync_spherical_quaternions(self._model, scratch, w)
        scratch.root_pos[:, 0] = src.root_pos[:, t]
        scratch.root_quat[:, 0] = src.root_quat[:, t] / quaternion_norms(src.root_quat[:, t])[:, None]
        scratch.root_vel[:] = 0.0
        if self._model.n_root and velocities:
            scratch.root_vel[:, 0] = src.root_vel[:, t]
        return b

    def _compute(self, kind: int, what: str, articulations, worlds, velocities=False, gravity=False) -> np.ndarray:
        """`kind` (entry.TREE_*) of the chosen articulations, every world at once (threads over worlds), at
        the state's velocities or none, with gravity or without."""
        arts, worlds = self._select(articulations, worlds)
        m = self._model
        nv = m.n_root + m.n_dofs
        shape = {entry.TREE_JACOBIANS: (6 * (m.n_links - (0 if m.n_root else 1)), nv), entry.TREE_MASS_MATRIX: (nv, nv)}
        shape = shape.get(kind, (1, nv))
        out = np.zeros((self.worlds, len(arts), *shape))
        result = np.zeros((self.worlds, *shape))
        for j, a in enumerate(arts):
            b = self._load(a, velocities)
            result[:] = 0.0
            g = m.gravity if gravity else np.zeros(3)
            self._engine.over_worlds(entry.tree_dynamics, b, self.worlds, 0, kind, g, result)
            out[:, j] = self._finite(result, a, range(self.worlds), what)
        out = out.reshape(self.worlds, len(arts), *shape[1:]) if kind == entry.TREE_INVERSE_DYNAMICS else out
        return out if len(worlds) == self.worlds else out[worlds]

    def _finite(self, values: np.ndarray, a: int, worlds, what: str) -> np.ndarray:
        """`values` (one row per world of `worlds`) when all finite, else an error naming the robot and world."""
        if all_finite(values):
            return values
        w = list(worlds)[int(np.argwhere(~np.isfinite(values.reshape(len(values), -1)))[0, 0])]
        raise UsdartError(
            f"{self.paths[a]} (world {w}): the {what} came out non-finite from a finite state (an overflow: check "
            "for absurd link masses, inertias, gravity, forces or velocities)"
        )

    def jacobians(self, articulations=None, worlds=None) -> np.ndarray:
        """Dense link Jacobians (Articulation.compute_dense_jacobian), (worlds, articulations, rows, cols)."""
        return self._compute(entry.TREE_JACOBIANS, "Jacobians", articulations, worlds)

    def mass_matrices(self, articulations=None, worlds=None) -> np.ndarray:
        """Mass matrices with the root terms of a floating base (Articulation.compute_mass_matrix)."""
        return self._compute(entry.TREE_MASS_MATRIX, "mass matrices", articulations, worlds)

    def gravity_compensation(self, articulations=None, worlds=None) -> np.ndarray:
        """Forces holding each articulation against gravity (Articulation.compute_gravity_compensation)."""
        return self._compute(entry.TREE_INVERSE_DYNAMICS, "gravity forces", articulations, worlds, gravity=True)

    def coriolis_compensation(self, articulations=None, worlds=None) -> np.ndarray:
        """Coriolis and centrifugal forces (Articulation.compute_coriolis_compensation)."""
        return self._compute(entry.TREE_INVERSE_DYNAMICS, "Coriolis forces", articulations, worlds, velocities=True)


def select_articulations(articulations: Sequence[Articulation], pattern: str) -> list[Articulation]:
    """The articulations whose root link, root-API prim or any link path matches `pattern` (fnmatch: `*`, `?`,
    `[...]`), in scene order."""
    return [
        a
        for a in articulations
        if any(fnmatch.fnmatchcase(p, pattern) for p in (a.root_link, a.desc.api_prim or a.root_link))
    ]
