"""`CacheFlag` and `ArticulationCache`: PhysX's PxArticulationCache with numpy arrays and Python names.

A cache is a copy of an articulation's data. `Articulation.copy_internal_state_to_cache` fills the parts
selected by flags, `Articulation.apply_cache` writes them back, and the inverse-dynamics functions read
their inputs from the cache and write their results into it. Link data are in low-level (BFS) link
order, DOF data in low-level DOF order; spatial vectors are [linear; angular] in world axes at link COMs.
"""

from __future__ import annotations

from enum import IntFlag

import numpy as np

from .core.articulation_model import ArticulationModel, structure_key
from .core.kernels.box import box
from .core.layout import JOINT_FORCE_KINDS
from .core.model import Model, batch_model
from .core.state import tree_view, workspace, zeros_control, zeros_state
from .errors import UsdartError
from .values import vector


class CacheFlag(IntFlag):
    """What to copy or apply (PhysX PxArticulationCacheFlag values)."""

    VELOCITY = 1 << 0
    ACCELERATION = 1 << 1
    POSITION = 1 << 2
    FORCE = 1 << 3
    LINK_VELOCITY = 1 << 4
    LINK_ACCELERATION = 1 << 5
    ROOT_TRANSFORM = 1 << 6
    ROOT_VELOCITIES = 1 << 7  # read: the root accelerations too
    JOINT_SOLVER_FORCES = 1 << 9
    LINK_INCOMING_JOINT_FORCE = 1 << 10
    JOINT_TARGET_POSITIONS = 1 << 11
    JOINT_TARGET_VELOCITIES = 1 << 12
    LINK_FORCE = 1 << 13
    LINK_TORQUE = 1 << 14
    ALL = (
        VELOCITY
        | ACCELERATION
        | POSITION
        | FORCE
        | LINK_VELOCITY
        | LINK_ACCELERATION
        | ROOT_TRANSFORM
        | ROOT_VELOCITIES
        | JOINT_SOLVER_FORCES
        | LINK_INCOMING_JOINT_FORCE
        | JOINT_TARGET_POSITIONS
        | JOINT_TARGET_VELOCITIES
        | LINK_FORCE
        | LINK_TORQUE
    )


class _StateInput:
    """A state input of the cache (joint positions and velocities, root pose and velocities): the cache keeps
    its own float64 array, and assigning to the attribute copies into it (the size checked, an error naming
    the cache's articulation otherwise), so the compute functions hand the same array to one kernel call."""

    def __set_name__(self, owner, name: str) -> None:
        self.name, self.slot = name, "_" + name

    def __get__(self, cache, owner=None):
        return self if cache is None else getattr(cache, self.slot)

    def __set__(self, cache, value) -> None:
        target = getattr(cache, self.slot)
        try:
            target[:] = vector(value, target.size, self.name, cache.owner)
        except (TypeError, ValueError) as error:
            raise UsdartError(f"{cache.owner}: {self.name} takes numbers: {error}") from None


class ArticulationCache:
    """Arrays sized for one articulation; reusable by any articulation of the same structure."""

    joint_position = _StateInput()
    joint_velocity = _StateInput()
    root_transform = _StateInput()  # position xyz, quaternion wxyz
    root_linear_velocity = _StateInput()  # of the root COM
    root_angular_velocity = _StateInput()

    def __init__(self, model: ArticulationModel, solo_model: Model, owner: str):
        n, nd = model.n_links, model.n_dofs
        nv = model.n_root + nd
        self.owner = owner  # root link path of the articulation that created the cache
        self.structure = structure_key(model)
        self._joint_position = np.zeros(nd)
        self._joint_velocity = np.zeros(nd)
        self.joint_acceleration = np.zeros(nd)
        self.joint_force = np.zeros(nd)
        self.joint_target_position = np.zeros(nd)
        self.joint_target_velocity = np.zeros(nd)
        # the solver's forces along each DOF over the last step, by kind (JOINT_FORCE_KINDS), and their sum
        self._solver_force_parts = np.zeros((len(JOINT_FORCE_KINDS), nd))
        self.joint_solver_forces = np.zeros(nd)
        self.link_velocity = np.zeros((n, 6))
        self.link_acceleration = np.zeros((n, 6))
        self.link_incoming_joint_force = np.zeros((n, 6))  # [force; torque] in the child joint frame
        self.link_force = np.zeros((n, 3))
        self.link_torque = np.zeros((n, 3))
        self._root_transform = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
        self._root_linear_velocity = np.zeros(3)
        self._root_angular_velocity = np.zeros(3)
        self.root_linear_acceleration = np.zeros(3)  # read only
        self.root_angular_acceleration = np.zeros(3)  # read only
        self.external_forces = np.zeros((n, 6))  # [force; torque] at each link COM, world
        self.dense_jacobian = np.zeros((6 * (n - (0 if model.n_root else 1)), nv))
        self.mass_matrix = np.zeros((nv, nv))
        self.coriolis_force = np.zeros(nv)
        self.gravity_compensation_force = np.zeros(nv)
        self.centroidal_momentum_matrix = np.zeros((6, nv))
        self.centroidal_momentum_bias = np.zeros(6)
        # loop joints: one column per locked axis of each (Articulation.compute_coefficient_matrix)
        n_loop_rows = int(model.loop_locked.sum())
        self.coefficient_matrix = np.zeros((nd, n_loop_rows))
        self.lambda_ = np.zeros(n_loop_rows)  # PhysX's `lambda`: the loop rows' forces (compute_lambda)
        # scratch for evaluating the dynamics at the cache's state: a one-world scene of this tree alone
        self._state = zeros_state(solo_model, 1)
        self._control = zeros_control(solo_model, 1)
        self._tree_state = tree_view(solo_model, self._state, 0)
        self._work = workspace(solo_model, 1, articulated=True)
        self._box = box((batch_model(solo_model, 1), self._state, self._control, self._work))
        self._compiled: dict = {}  # kernel -> its compiled function for these records (inverse_dynamics._direct)
        self.released = False  # release() frees the arrays; a released cache is refused

    @property
    def joint_solver_forces_by_kind(self) -> dict[str, np.ndarray]:
        """The joint solver forces split by what applied them: "drive", "friction", "limit", "velocity limit",
        "coupling" (mimic joints and fixed tendons); they sum to joint_solver_forces."""
        return dict(zip(JOINT_FORCE_KINDS, self._solver_force_parts))

    def release(self) -> None:
        """Free the cache's arrays (PhysX PxArticulationCache::release); any later use of it is an error."""
        for name in list(vars(self)):
            if name not in ("owner", "structure"):
                delattr(self, name)
        self.released = True

    def __repr__(self) -> str:
        if self.released:
            return f"ArticulationCache(of {self.owner!r}, released)"
        return f"ArticulationCache(of {self.owner!r}, {len(self.joint_position)} DOFs)"
