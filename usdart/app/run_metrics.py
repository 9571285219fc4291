"""Summary numbers of a simulated run, for every world of a scene at once: the final joint state, the drive
error and when it settled, the peak joint force, the mechanical energy.

Joint forces are the projected forces PhysX reports (Articulation.projected_joint_forces): the solver rows'
impulses over the step (drive, friction, limit, velocity limit, mimic joints and fixed tendons) plus the
applied joint force, read for every world from the rows in one pass.
"""

from __future__ import annotations

import numpy as np

from ..cache import CacheFlag
from ..core import layout as L

SETTLING_BAND = 0.02  # settled: the drive error stays within 2 % of its start (the classic 2 % settling time)
SETTLING_FLOOR = 1e-4  # ... or within this (rad or m), for runs that start on target


class RunMetrics:
    """Per-step accumulation over all worlds of a scene: call `after_step` after every step."""

    def __init__(self, scene):
        self.scene = scene
        engine = self.engine = scene._engine
        model = engine.model
        self.driven = np.flatnonzero(model.dofs.dof[:, L.D_DRIVE] != L.DRIVE_NONE)
        rows = model.couplings.row
        self._single = np.flatnonzero(rows[:, L.R_KIND] <= L.ROW_VELOCITY_LIMIT)
        self._single_dof = rows[self._single, L.R_ID]
        self._second = np.isin(rows[self._single, L.R_KIND], (L.ROW_LIMIT,))
        coupled = np.flatnonzero(np.isin(rows[:, L.R_KIND], (L.ROW_MIMIC, L.ROW_FIXED_TENDON)))
        self._coupled = [self._coupling(r) for r in coupled]
        self.start_error = self.target_error()
        worlds = scene.worlds
        self.peak_force = np.zeros(worlds)
        self.last_unsettled = np.zeros(worlds)  # time of the last step outside the settling band

    def _coupling(self, r: int):
        """(row, its tree's DOFs, their entries in the row's Jacobian, second impulse too) of a coupling row."""
        model = self.engine.model
        row, tree = model.couplings.row[r], model.trees.tree[model.couplings.row[r, L.R_TREE0]]
        dofs = np.arange(tree[L.T_DOF0], tree[L.T_DOF1])
        entries = row[L.R_JACOBIAN] + model.dofs.dof[dofs, L.D_V] - tree[L.T_V0]
        return r, dofs, entries, row[L.R_KIND] == L.ROW_FIXED_TENDON

    def joint_forces(self) -> np.ndarray:
        """(worlds, n_dofs): every world's projected joint forces of the last step."""
        engine = self.engine
        values, dt = engine.work.row_value, engine.last_dt
        out = engine.control.joint_force.copy()
        if dt <= 0:
            return out
        impulse = values[:, self._single, L.RV_LAMBDA] + np.where(
            self._second, values[:, self._single, L.RV_LAMBDA2], 0.0
        )
        np.add.at(out, (slice(None), self._single_dof), impulse / dt)
        for r, dofs, entries, second in self._coupled:
            lam = values[:, r, L.RV_LAMBDA] + (values[:, r, L.RV_LAMBDA2] if second else 0.0)
            out[:, dofs] += engine.work.jac[:, entries] * (lam / dt)[:, None]
        return out

    def target_error(self) -> np.ndarray:
        """(worlds,): the largest |q - target position| over the driven DOFs (0 without drives)."""
        if not len(self.driven):
            return np.zeros(self.scene.worlds)
        q = self.engine.state.q[:, self.driven]
        return np.abs(q - self.engine.control.target_position[:, self.driven]).max(axis=1)

    def after_step(self) -> None:
        forces = self.joint_forces()
        if forces.shape[1]:
            np.maximum(self.peak_force, np.abs(forces).max(axis=1), out=self.peak_force)
        band = np.maximum(SETTLING_BAND * self.start_error, SETTLING_FLOOR)
        outside = self.target_error() > band
        self.last_unsettled[outside] = self.scene.time

    def settling_time(self) -> np.ndarray:
        """(worlds,): from when on the drive error stayed in its band (NaN: never settled, or no drives)."""
        settled = self.target_error() <= np.maximum(SETTLING_BAND * self.start_error, SETTLING_FLOOR)
        out = np.where(settled, self.last_unsettled, np.nan)
        return out if len(self.driven) else np.full(self.scene.worlds, np.nan)


def mechanical_energy(scene) -> np.ndarray:
    """(worlds,): kinetic plus gravitational potential energy of every articulation and free body (J; the
    potential is zero at the world origin), with each world's own masses, inertias and gravity."""
    engine = scene._engine
    links = engine.batched.links
    members = [*scene.articulations, *scene._free.values()]
    out = np.zeros(scene.worlds)
    for member in members:
        l0 = int(engine.model.trees.tree[member._tree, L.T_LINK0])
        ids = slice(l0, l0 + len(member.links))
        mass = links.link_par[:, ids, L.LP_MASS]  # (W, n)
        com_local = links.link_vec[:, ids, L.COM]
        inertia = links.link_rot[:, ids, L.INERTIA_COM]  # about the COM, link axes
        rot, pos = engine.state.link_rot[:, ids], engine.state.link_pos[:, ids]
        com = pos + np.einsum("wnij,wnj->wni", rot, com_local)
        velocity = np.array([_com_velocities(member, w) for w in range(scene.worlds)])  # (W, n, 6)
        v, omega = velocity[..., :3], velocity[..., 3:]
        omega_local = np.einsum("wnji,wnj->wni", rot, omega)
        kinetic = 0.5 * mass * (v * v).sum(-1) + 0.5 * np.einsum("wni,wnij,wnj->wn", omega_local, inertia, omega_local)
        gravity = engine.batched.gravity[:, None, :] * links.link_par[:, ids, L.LP_GRAVITY, None]
        potential = -mass * (gravity * com).sum(-1)
        out += (kinetic + potential).sum(axis=1)
    return out


def _com_velocities(member, world: int) -> np.ndarray:
    """(n_links, 6) [v_com; omega] of one articulation or free body in one world."""
    cache = member.create_cache()
    member.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY, world)
    return cache.link_velocity
