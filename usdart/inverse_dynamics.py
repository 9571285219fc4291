"""Inverse dynamics and related computations of an `Articulation`, evaluated at a cache's state.

PhysX semantics (seed 000 "Inverse Dynamics", seed 002): inputs come from the cache (joint positions
and velocities, root transform and velocities, joint forces or accelerations, external forces) and the
results are written into the cache and returned. The articulation's own state is never changed.

Layouts and names as PhysX 5: compute_mass_matrix, compute_coriolis_compensation and
compute_gravity_compensation give the generalized forms, which for a floating base put the root first,
[linear (3), angular (3)], then the DOFs (6 + n); root forces are the force and the torque about the root
COM, root velocities and accelerations those of the root COM, all in world axes. The joint-space forms
(compute_generalized_mass_matrix, compute_coriolis_and_centrifugal_force, compute_generalized_gravity_force,
PhysX's deprecated names) have one entry per DOF and treat a floating root as free: the joint forces that
produce the requested motion with no wrench on the root.
"""

from __future__ import annotations

import warnings

import numpy as np

from .cache import ArticulationCache
from .core.kernels.entry import (
    centroidal,
    compiled,
    forward_dynamics,
    inverse_dynamics,
    jacobians,
    load_tree_state,
    mass_matrix,
)
from .core.layout import JOINT_SPHERICAL
from .core.state import sync_spherical_quaternions
from .errors import UsdartError
from .values import all_finite, finite_vector, unit_quaternion, vector

_ZERO3 = np.zeros(3)


def _renamed(articulation, name: str, new: str) -> None:
    """Until the next release: say, on a floating base (a fixed base gets the same result either way), that
    `name` now gives PhysX 5's generalized (6 + n) result where it used to give the joint-space one."""
    if articulation.model.n_root:
        warnings.warn(
            f"{name} now follows PhysX 5: on a floating base it includes the root terms (6 + n); for the "
            f"joint-space result it gave before, call {new}",
            FutureWarning,
            stacklevel=3,
        )


def _direct(cache: ArticulationCache, kernel, *args):
    """kernel(*args) through its compiled function for the cache's records (entry.compiled, looked up once
    per cache): some 0.6 us less a call than numba's dispatcher. Every call site passes the same types:
    float64 C-contiguous arrays (`_floats` where a user's array may come in), ints, floats, bools."""
    call = cache._compiled.get(kernel)
    if call is None:
        call = cache._compiled[kernel] = compiled(kernel, *args)
    return call(*args)


def _floats(values, size: int) -> np.ndarray:
    """`values` as a C-contiguous float64 vector of `size` entries (the type `_direct`'s calls are compiled for)."""
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(size))


def finite_result(values: np.ndarray, where: str, what: str) -> np.ndarray:
    """`values` when every entry is finite; else an error naming the articulation (`where`). Inputs are
    checked finite on the way in, so a non-finite result is an overflow of absurd magnitudes."""
    if not all_finite(values):
        raise UsdartError(
            f"{where}: the {what} came out non-finite from a finite state (an overflow: check for absurd "
            "link masses, inertias, gravity, forces or velocities)"
        )
    return values


def _solve(A: np.ndarray, b: np.ndarray, where: str) -> np.ndarray:
    """A^-1 b for the floating root's 6 x 6 mass block; an error naming the articulation when singular."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        raise UsdartError(
            f"{where}: the floating root's mass matrix is singular (massless root and subtree?); give the "
            "root link a mass and an inertia"
        ) from None


class InverseDynamicsMixin:
    """Methods shared by `Articulation`; needs `self.model`, `self.root_link` and `self._check_cache`. The
    kernels run on the cache's scratch scene (this tree alone, tree 0, world 0)."""

    # ---- evaluation at the cache's state -------------------------------------------------------------
    def _load(self, cache: ArticulationCache, velocities: bool = True):
        """Copy the cache's state into its scratch scene; returns the box the entry points take. One kernel
        call when the inputs are usable and the tree has no spherical joint; else `_load_checked`, which
        names what is wrong (or loads the spherical joints' quaternions)."""
        self._check_cache(cache)
        root_velocities = velocities and self.model.n_root > 0
        if self._spherical_joints or not _direct(
            cache,
            load_tree_state,
            cache._box,
            cache.joint_position,
            cache.joint_velocity,
            cache.root_transform,
            cache.root_linear_velocity,
            cache.root_angular_velocity,
            bool(velocities),
            bool(root_velocities),
        ):
            self._load_checked(cache, velocities)
        return cache._box

    def _load_checked(self, cache: ArticulationCache, velocities: bool) -> None:
        m, st, where = self.model, cache._tree_state, self.root_link
        st.q[0] = finite_vector(cache.joint_position, m.n_dofs, where, "joint_position")
        st.qd[0] = finite_vector(cache.joint_velocity, m.n_dofs, where, "joint_velocity") if velocities else 0.0
        if self._spherical_joints:
            self._check_spherical_range(cache.joint_position)
            sync_spherical_quaternions(m, st, 0)
        pose = finite_vector(cache.root_transform, 7, where, "root_transform")
        st.root_pos[0] = pose[:3]
        st.root_quat[0] = unit_quaternion(pose[3:], where)
        st.root_vel[0] = 0.0
        if m.n_root and velocities:
            st.root_vel[0, :3] = finite_vector(cache.root_linear_velocity, 3, where, "root_linear_velocity")
            st.root_vel[0, 3:] = finite_vector(cache.root_angular_velocity, 3, where, "root_angular_velocity")

    def _rnea(self, cache, qdd=None, root_acc=None, gravity=_ZERO3, wrench=None, velocities=False):
        """Generalized forces (6 + n when floating) at the cache's pose."""
        m = self.model
        b = self._load(cache, velocities)
        qdd_in = np.zeros(m.n_dofs) if qdd is None else _floats(qdd, m.n_dofs)
        root_in = np.zeros(6) if root_acc is None else _floats(root_acc, 6)
        wrench_in = cache._control.link_wrench[0]
        wrench_in[:] = 0.0 if wrench is None else wrench
        out = np.zeros(m.n_root + m.n_dofs)
        _direct(
            cache,
            inverse_dynamics,
            b,
            0,
            0,
            qdd_in,
            root_in,
            1.0,
            wrench_in,
            _floats(gravity, 3),
            1.0 if velocities else 0.0,
            out,
        )
        return finite_result(out, self.root_link, "joint forces")

    def _generalized_mass(self, cache) -> np.ndarray:
        m = self.model
        b = self._load(cache, velocities=False)
        H = np.zeros((m.n_root + m.n_dofs, m.n_root + m.n_dofs))
        _direct(cache, mass_matrix, b, 0, 0, False, H)
        return finite_result(H, self.root_link, "mass matrix")

    def _free_root(self, cache, generalized: np.ndarray) -> np.ndarray:
        """Joint forces when the floating root may move freely: tau_j - H_j0 H_00^-1 f_0."""
        if self.model.n_root == 0:
            return generalized
        H = self._generalized_mass(cache)
        tau = generalized[6:] - H[6:, :6] @ _solve(H[:6, :6], generalized[:6], self.root_link)
        return finite_result(tau, self.root_link, "joint forces")

    def _joint_result(self, cache, values) -> np.ndarray:
        cache.joint_force[:] = values
        return cache.joint_force.copy()

    # ---- joint-space forces ------------------------------------------------------------------------
    def compute_generalized_gravity_force(self, cache: ArticulationCache) -> np.ndarray:
        """Joint forces that hold the pose against gravity (G(q)); written to cache.joint_force."""
        gen = self._rnea(cache, gravity=self.model.gravity)
        return self._joint_result(cache, self._free_root(cache, gen))

    def compute_coriolis_and_centrifugal_force(self, cache: ArticulationCache) -> np.ndarray:
        """Joint forces against Coriolis and centrifugal effects of the cache's velocities (C(q, qd) qd),
        root free (PhysX 5 computeCoriolisAndCentrifugalForce, deprecated there for
        computeCoriolisCompensation)."""
        gen = self._rnea(cache, velocities=True)
        return self._joint_result(cache, self._free_root(cache, gen))

    def compute_generalized_external_force(self, cache: ArticulationCache) -> np.ndarray:
        """Joint forces that counteract cache.external_forces ([force; torque] at link COMs, world)."""
        wrench = finite_vector(cache.external_forces, 6 * self.model.n_links, self.root_link, "external_forces")
        gen = self._rnea(cache, wrench=wrench.reshape(-1, 6))
        return self._joint_result(cache, self._free_root(cache, gen))

    def compute_joint_force(self, cache: ArticulationCache) -> np.ndarray:
        """Joint forces for the accelerations in cache.joint_acceleration, without gravity, velocities or
        armature (M(q) qdd; PhysX computeJointForce)."""
        qdd = finite_vector(cache.joint_acceleration, self.model.n_dofs, self.root_link, "joint_acceleration")
        gen = self._rnea(cache, qdd=qdd)
        return self._joint_result(cache, self._free_root(cache, gen))

    def compute_joint_acceleration(self, cache: ArticulationCache) -> np.ndarray:
        """Forward dynamics: accelerations under cache.joint_force, gravity and the cache's velocities,
        armature included; no drives, damping or external forces. A floating root's acceleration goes to
        cache.root_linear_acceleration / root_angular_acceleration."""
        m = self.model
        b = self._load(cache, velocities=True)
        out = np.zeros(m.n_root + m.n_dofs)
        tau = _floats(finite_vector(cache.joint_force, m.n_dofs, self.root_link, "joint_force"), m.n_dofs)
        cache._control.link_wrench[0] = 0.0  # no link forces
        _direct(cache, forward_dynamics, b, 0, 0, tau, cache._control.link_wrench[0], _floats(m.gravity, 3), out)
        finite_result(out, self.root_link, "joint accelerations")
        if m.n_root:
            cache.root_linear_acceleration[:] = out[:3]
            cache.root_angular_acceleration[:] = out[3:6]
        cache.joint_acceleration[:] = out[m.n_root :]
        return cache.joint_acceleration.copy()

    # ---- generalized (6 + n) forms -----------------------------------------------------------------
    def compute_gravity_compensation(self, cache: ArticulationCache) -> np.ndarray:
        """Forces holding the articulation still against gravity; floating: root wrench first (6 + n)."""
        cache.gravity_compensation_force = self._rnea(cache, gravity=self.model.gravity)
        return cache.gravity_compensation_force.copy()

    def compute_coriolis_compensation(self, cache: ArticulationCache) -> np.ndarray:
        """Coriolis and centrifugal forces at the cache's velocities with zero root acceleration; floating:
        root terms first (6 + n). PhysX 5 computeCoriolisCompensation (cache.coriolis_force)."""
        _renamed(self, "compute_coriolis_compensation", "compute_coriolis_and_centrifugal_force")
        cache.coriolis_force = self._rnea(cache, velocities=True)
        return cache.coriolis_force.copy()

    def compute_coriolis_force(self, cache: ArticulationCache) -> np.ndarray:
        """Deprecated: compute_coriolis_compensation (PhysX 5's name for the same (6 + n) forces)."""
        warnings.warn(
            "compute_coriolis_force is deprecated: call compute_coriolis_compensation (PhysX 5's name)",
            DeprecationWarning,
            stacklevel=2,
        )
        cache.coriolis_force = self._rnea(cache, velocities=True)
        return cache.coriolis_force.copy()

    def compute_mass_matrix(self, cache: ArticulationCache) -> np.ndarray:
        """Mass matrix without armature; floating: (6 + n)^2, rows [force, torque, joints] x columns
        [root linear acc, root angular acc, joint accs]. PhysX 5 computeMassMatrix (cache.mass_matrix)."""
        _renamed(self, "compute_mass_matrix", "compute_generalized_mass_matrix")
        cache.mass_matrix = self._generalized_mass(cache)
        return cache.mass_matrix.copy()

    def compute_generalized_mass_matrix(self, cache: ArticulationCache) -> np.ndarray:
        """Joint-space mass matrix without armature (n x n); floating: with the root free (Schur complement).
        PhysX 5 computeGeneralizedMassMatrix (deprecated there for computeMassMatrix)."""
        H = self._generalized_mass(cache)
        if self.model.n_root:
            H = finite_result(
                H[6:, 6:] - H[6:, :6] @ _solve(H[:6, :6], H[:6, 6:], self.root_link), self.root_link, "mass matrix"
            )
        cache.mass_matrix = H
        return H.copy()

    # ---- loop joints (seed 000 "Loop Joints, Coefficient Matrix, and Lambda Constraint Impulses") -----------
    def _loop_rows(self, cache: ArticulationCache) -> np.ndarray:
        """J (M x n_v) at the cache's pose: one row per locked axis of each loop joint: the velocity of body1's
        joint-frame origin (axes x, y, z) or its angular velocity (rotX, rotY, rotZ) relative to body0's,
        along body0's joint-frame axes. (The solver's linear rows are these; its angular rows are PhysX's
        quaternion rows, usdart.core.kernels.couplings.fill_joint_axis, half of these where the frames agree.)"""
        m = self.model
        b = self._load(cache, velocities=False)
        first = 0 if m.n_root else 1
        J_links = np.zeros((6 * (m.n_links - first), m.n_root + m.n_dofs))
        jacobians(b, 0, 0, False, J_links)  # at the link frame origins; poses the scratch state
        rot, pos = cache._tree_state.link_rot[0], cache._tree_state.link_pos[0]
        rows = []
        for i in range(len(m.loop_links)):
            frames, point_jacobians = [], []
            for side in range(2):
                link, local = int(m.loop_links[i, side]), m.loop_frames[i, side]
                if link < 0:  # the world
                    frames.append(local)
                    point_jacobians.append(np.zeros((6, J_links.shape[1])))
                    continue
                world = np.eye(4)
                world[:3, :3], world[:3, 3] = rot[link] @ local[:3, :3], pos[link] + rot[link] @ local[:3, 3]
                if link < first:  # a fixed root does not move
                    point_jacobians.append(np.zeros((6, J_links.shape[1])))
                    frames.append(world)
                    continue
                block = J_links[6 * (link - first) : 6 * (link - first) + 6]
                arm = world[:3, 3] - pos[link]  # v_point = v_origin + w x arm
                skew = np.array([[0, -arm[2], arm[1]], [arm[2], 0, -arm[0]], [-arm[1], arm[0], 0]])
                point_jacobians.append(np.vstack([block[:3] - skew @ block[3:], block[3:]]))
                frames.append(world)
            relative = point_jacobians[1] - point_jacobians[0]
            for axis in np.flatnonzero(m.loop_locked[i]):
                direction = frames[0][:3, axis % 3]
                rows.append(direction @ (relative[:3] if axis < 3 else relative[3:]))
        J = np.array(rows).reshape(len(rows), m.n_root + m.n_dofs)
        return finite_result(J, self.root_link, "loop constraint Jacobian")

    @property
    def loop_joint_count(self) -> int:
        """Loop-closing joints of this articulation (PhysX getNbLoopJoints)."""
        return len(self.model.loop_links)

    def compute_coefficient_matrix(self, cache: ArticulationCache) -> np.ndarray:
        """cache.coefficient_matrix (n_dofs x M): column r holds the joint forces that a unit force of loop
        row r (one per locked axis of each loop joint, `_loop_rows`) exerts on the joints, J_r^T; a floating
        root is left free (its share moves to the joints as in the joint-space mass matrix). PhysX keeps one
        column per loop joint, in impulse units (1/dt), and computes it right only for a single joint
        between a link and the world; usdart's columns are every row, in force per unit force."""
        return self._coefficients(cache, self._loop_rows(cache)).copy()

    def _coefficients(self, cache: ArticulationCache, J: np.ndarray) -> np.ndarray:
        """cache.coefficient_matrix from the loop rows J at the cache's pose (a floating root left free)."""
        cache.coefficient_matrix = finite_result(self._free_root(cache, J.T), self.root_link, "coefficient matrix")
        return cache.coefficient_matrix

    def compute_lambda(
        self, cache: ArticulationCache, initial_state: ArticulationCache, joint_forces, max_iterations: int = 200
    ) -> bool:
        """The loop rows' forces when the joint forces that counteract them are applied too (seed 000).

        `initial_state`: the state (positions, velocities, root) and the joint forces applied before; joint_forces:
        the forces the motion needs without the loops (for example compute_generalized_gravity_force plus
        compute_coriolis_and_centrifugal_force). Each iteration solves the loop rows' forces f exactly (the
        articulation's dynamics with armature, rows kept closed at the acceleration level) under the current
        joint forces, then sets the joint forces to joint_forces - K f (K: the coefficient matrix); it stops
        when f changes by less than 1e-10 of its size. Writes cache.lambda_ (f, N or N m per row),
        cache.joint_force and cache.coefficient_matrix; returns whether f converged within max_iterations.
        Where the rows are redundant (a planar loop's out-of-plane axes) f is the least-norm one."""
        self._check_cache(initial_state)
        m, where = self.model, self.root_link
        if int(max_iterations) < 1:
            raise UsdartError(f"{where}: max_iterations must be at least 1, got {max_iterations}")
        target = finite_vector(joint_forces, m.n_dofs, where, "joint_forces")
        for name in ("joint_position", "joint_velocity", "root_transform", "root_linear_velocity"):
            getattr(cache, name)[:] = getattr(initial_state, name)
        cache.root_angular_velocity[:] = initial_state.root_angular_velocity
        tau = finite_vector(initial_state.joint_force, m.n_dofs, where, "initial_state.joint_force").copy()
        J = self._loop_rows(cache)
        K = self._coefficients(cache, J)
        H = self._generalized_mass(cache)
        H[m.n_root :, m.n_root :] += np.diag(m.armature)
        bias = self._rnea(cache, gravity=m.gravity, velocities=True)  # H qdd + bias = applied forces
        drift = self._loop_row_drift(cache, J)  # dJ/dt qd
        response = J @ np.linalg.solve(H, J.T)
        previous, converged = None, False
        for _ in range(int(max_iterations)):
            applied = np.concatenate([np.zeros(m.n_root), tau])
            f = np.linalg.lstsq(response, -drift - J @ np.linalg.solve(H, applied - bias), rcond=1e-12)[0]
            size = max(1.0, np.abs(f).max(initial=0.0))
            if previous is not None and np.abs(f - previous).max(initial=0.0) <= 1e-10 * size:
                converged = True
                break
            previous = f
            tau = target - K @ f
        cache.lambda_ = finite_result(f, where, "loop forces")
        cache.joint_force[:] = finite_result(tau, where, "joint forces")
        return converged

    def _loop_row_drift(self, cache: ArticulationCache, J: np.ndarray) -> np.ndarray:
        """dJ/dt qd of the loop rows at the cache's state (their acceleration at zero joint accelerations), by
        a central difference of J along the motion; zero at rest."""
        m = self.model
        moving = np.any(cache.joint_velocity) or (m.n_root and np.any(cache.root_linear_velocity))
        if not (moving or (m.n_root and np.any(cache.root_angular_velocity))) or J.shape[0] == 0:
            return np.zeros(J.shape[0])
        if m.n_root or np.any(m.joint_type == JOINT_SPHERICAL):
            raise UsdartError(
                f"{self.root_link}: compute_lambda with velocities needs a fixed base without spherical joints "
                "(the loop rows' velocity term); pass a state at rest"
            )
        qd = cache.joint_velocity.copy()
        q0, eps = cache.joint_position.copy(), 1e-6 / max(1.0, np.abs(qd).max())
        sides = []
        for sign in (1.0, -1.0):
            cache.joint_position[:] = q0 + sign * eps * qd
            sides.append(self._loop_rows(cache))
        cache.joint_position[:] = q0
        return (sides[0] - sides[1]) / (2.0 * eps) @ qd

    # ---- kinematic matrices ------------------------------------------------------------------------
    def compute_dense_jacobian(self, cache: ArticulationCache) -> tuple[int, int]:
        """cache.dense_jacobian: rows 6 per link (root skipped when fixed), [vx vy vz wx wy wz] of the
        link COM in world axes; columns [root v, root w (floating)] then DOFs. Returns (rows, cols)."""
        b = self._load(cache, velocities=False)
        jacobians(b, 0, 0, True, cache.dense_jacobian)
        finite_result(cache.dense_jacobian, self.root_link, "Jacobian")
        return cache.dense_jacobian.shape

    def compute_centroidal_momentum_matrix(self, cache: ArticulationCache) -> tuple[np.ndarray, np.ndarray]:
        """(A, bias) with [P; L_G] = A [root velocity; qd] and d/dt [P; L_G] = A [root acc; qdd] + bias,
        L_G about the articulation COM; floating bases only (as PhysX)."""
        m = self.model
        if m.n_root == 0:
            raise UsdartError(
                f"{self.root_link}: the centroidal momentum matrix needs a floating base "
                "(PhysX computes it for floating articulations only)"
            )
        b = self._load(cache, velocities=True)
        nv = m.n_root + m.n_dofs
        A, bias = np.zeros((6, nv)), np.zeros(6)
        centroidal(b, 0, 0, np.zeros(m.n_dofs), np.zeros(6), np.zeros((m.n_links, 6)), _ZERO3, np.zeros(nv), A, bias)
        finite_result(A, self.root_link, "centroidal momentum matrix")
        finite_result(bias, self.root_link, "centroidal momentum bias")
        cache.centroidal_momentum_matrix = A
        cache.centroidal_momentum_bias = bias
        return A.copy(), bias.copy()

    # ---- maximal <-> reduced joint data ------------------------------------------------------------
    def unpack_joint_data(self, reduced) -> np.ndarray:
        """Reduced (one per DOF) -> maximal layout: 6 entries per non-root link in PhysX axis order
        (rotX, rotY, rotZ, transX, transY, transZ), entry (link - 1) * 6 + axis; locked axes are 0."""
        reduced = vector(reduced, self.model.n_dofs, "reduced joint data")
        maximum = np.zeros(6 * (self.model.n_links - 1))
        maximum[self._maximal_index] = reduced
        return maximum

    def pack_joint_data(self, maximum) -> np.ndarray:
        """Maximal layout (see unpack_joint_data) -> one entry per DOF; locked axes are dropped."""
        maximum = vector(maximum, 6 * (self.model.n_links - 1), "maximal joint data")
        return maximum[self._maximal_index].copy()
