"""The public `Articulation`: an imported articulation, its state, and the PhysX cache interface."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .cache import ArticulationCache, CacheFlag
from .core import layout as L
from .core.articulation_model import ArticulationModel, build_articulation_model, structure_key
from .core.description import AXIS_ORDER, ArticulationDesc
from .core.engine import Engine
from .core.frames import matrix_to_quat
from .core.kernels.entry import joint_solver_forces, link_motion
from .core.model import build_model
from .core.state import set_initial_state, sync_spherical_positions, sync_spherical_quaternions, tree_view
from .errors import SimulationDiverged, UsdartError
from .inverse_dynamics import InverseDynamicsMixin, finite_result
from .last_step import Scratch, replay
from .values import finite_vector, unit_quaternion

# cache parts that read the articulation's state (the rest are controls: forces, targets)
_STATE_FLAGS = (
    CacheFlag.POSITION
    | CacheFlag.VELOCITY
    | CacheFlag.ACCELERATION
    | CacheFlag.ROOT_TRANSFORM
    | CacheFlag.ROOT_VELOCITIES
    | CacheFlag.LINK_VELOCITY
    | CacheFlag.LINK_ACCELERATION
    | CacheFlag.LINK_INCOMING_JOINT_FORCE
    | CacheFlag.JOINT_SOLVER_FORCES
)


class ArticulationControl(NamedTuple):
    """An articulation's part of the scene's Control, as numpy views."""

    joint_force: np.ndarray  # (W, n_dofs)
    target_position: np.ndarray  # (W, n_dofs)
    target_velocity: np.ndarray  # (W, n_dofs)
    link_wrench: np.ndarray  # (W, n_links, 6)
    kinematic_target: np.ndarray  # (W, 7) a kinematic body's pose to reach [x, y, z, qw, qx, qy, qz]


class Articulation(InverseDynamicsMixin):
    """One reduced-coordinate articulation (or free body) of a `Scene`.

    Links are in low-level order (BFS from the root, parent index < child index); DOFs follow the
    links in that order and, inside a joint, PhysX's axis order (rotX, rotY, rotZ, transX, transY, transZ).
    The state starts as authored (root body pose and velocity, JointStateAPI); read and change it through
    a cache (`create_cache`, `copy_internal_state_to_cache`, `apply_cache`). `state` and `control` are
    views of the scene's arrays (leading axis: worlds). After a step diverged (`SimulationDiverged`),
    reading the state raises that error again until the scene is reset or a finite state is applied.

    `Articulation(desc)` on its own (without a scene) simulates that articulation alone.
    """

    def __init__(
        self,
        desc: ArticulationDesc,
        gravity=(0.0, 0.0, -9.81),
        joints: dict | None = None,
        worlds: int = 1,
        *,
        _engine: Engine | None = None,
        _tree: int = 0,
        _model: ArticulationModel | None = None,
    ):
        if worlds < 1:
            raise UsdartError(f"{desc.root_link}: worlds must be at least 1, got {worlds}")
        self.desc = desc
        self.model = _model if _model is not None else build_articulation_model(desc, gravity, joints)
        self._solo = None
        self._structure = structure_key(self.model)
        self._spherical_joints = np.flatnonzero(self.model.joint_type == L.JOINT_SPHERICAL).tolist()
        self._standalone = _engine is None
        if _engine is None:  # standalone: a scene of one tree
            _engine = Engine(self._solo_model, worlds)
            set_initial_state(_engine.model, _engine.state, _engine.control, 0, desc, self.model)
            _engine.pose_all_worlds()
            _engine.measure_rest_lengths()
            _engine.members = [self]
        self._engine, self._tree = _engine, int(_tree)
        self._island = int(_engine.model.trees.tree[self._tree, L.T_ISLAND])
        self.worlds = _engine.worlds
        self._state = tree_view(_engine.model, _engine.state, self._tree)
        l0, l1, d0, d1 = (int(x) for x in _engine.model.trees.tree[self._tree, :4])
        ctl = _engine.control
        self.control = ArticulationControl(
            ctl.joint_force[:, d0:d1],
            ctl.target_position[:, d0:d1],
            ctl.target_velocity[:, d0:d1],
            ctl.link_wrench[:, l0:l1],
            ctl.kinematic_target[:, self._tree],
        )
        self._maximal_index = np.array(
            [(link - 1) * 6 + AXIS_ORDER.index(d.axis) for link, d in zip(self.model.dof_link, desc.dofs)],
            dtype=np.int64,
        )

    @property
    def state(self):
        """This articulation's part of the scene's State (numpy views, leading axis: worlds). Raises
        `SimulationDiverged` while the scene is stopped by a divergence."""
        if self._engine.divergence:
            raise divergence_error(self._engine)
        return self._state

    def _require_finite(self) -> None:
        """Raise the scene's SimulationDiverged when a step diverged and nothing has reset it since."""
        if self._engine.divergence:
            raise divergence_error(self._engine)

    @property
    def _solo_model(self):
        """A scene model of this tree alone: the scratch scene of its caches (built when first needed)."""
        if self._solo is None:
            self._solo = build_model([self.model], [], self.model.gravity)
        return self._solo

    @property
    def root_link(self) -> str:
        return self.desc.root_link

    @property
    def fixed_base(self) -> bool:
        return self.desc.fixed_base

    @property
    def links(self) -> list[str]:
        return list(self.desc.links)

    @property
    def link_parents(self) -> np.ndarray:
        return np.array(self.desc.link_parents, dtype=np.int64)

    @property
    def joints(self) -> list[str | None]:
        """Inbound joint prim path per link (None for the root)."""
        return [j.path if j is not None else None for j in self.desc.joints]

    @property
    def dof_names(self) -> list[str]:
        return [d.name for d in self.desc.dofs]

    @property
    def dof_count(self) -> int:
        return len(self.desc.dofs)

    @property
    def loop_joints(self) -> list[str]:
        return list(self.desc.loop_joints)

    @property
    def mimic_joints(self) -> list[dict]:
        return [
            dict(
                joint=m.joint,
                dof=m.dof,
                reference_joint=m.reference_joint,
                reference_dof=m.reference_dof,
                gearing=m.gearing,
                offset=m.offset,
                natural_frequency=m.natural_frequency,
                damping_ratio=m.damping_ratio,
            )
            for m in self.desc.mimic_joints
        ]

    @property
    def link_masses(self) -> np.ndarray:
        return np.array([b.mass if b is not None else 0.0 for b in self.desc.bodies])

    @property
    def total_mass(self) -> float:
        """Mass the articulation moves: on a fixed base, the root and links welded to it are carried by the world."""
        masses = self.link_masses
        if not self.fixed_base:
            return float(masses.sum())
        static = np.zeros(len(masses), bool)
        static[0] = True
        for i in range(1, len(masses)):  # parents come before children
            static[i] = static[self.desc.link_parents[i]] and not self.desc.joints[i].dofs
        return float(masses[~static].sum())

    def link_index(self, path: str) -> int:
        return self.desc.links.index(str(path))

    def link_transforms(self, world: int = 0) -> np.ndarray:
        """World pose of every link frame (the body prims' frames): rows [x, y, z, qw, qx, qy, qz]."""
        self._check_world(world)
        self._require_finite()
        out = np.zeros((self.model.n_links, 7))
        out[:, :3] = self._state.link_pos[world]
        out[:, 3:] = [matrix_to_quat(R) for R in self._state.link_rot[world]]
        return out

    def _update_poses(self, world: int) -> None:
        """Link poses of a world from the state (after writing the state's arrays directly)."""
        self._engine.update_poses(world)

    def _check_world(self, world: int) -> None:
        if not 0 <= world < self.worlds:
            raise UsdartError(f"{self.root_link}: world {world} does not exist (this articulation has {self.worlds})")

    # ---- stepping ------------------------------------------------------------------------------------
    def step(self, dt: float, steps: int = 1) -> None:
        """Advance this articulation (with whatever is joined to it) in every world by `steps` steps of `dt`
        seconds, leaving the rest of its scene where it is: it touches static shapes only, not the scene's other
        bodies (kinematic ones included). `scene.step` steps everything."""
        if not dt > 0 or steps < 0:
            raise UsdartError(f"{self.root_link}: need a positive time step and a non-negative step count")
        engine = self._engine
        if engine.divergence:
            raise divergence_error(engine)
        diverged = engine.step(float(dt), int(steps), self._island)
        if self._standalone:  # its own clock (in a scene, the scene's clock counts scene steps only)
            engine.time += int(steps) * float(dt)
        if diverged:
            raise divergence_error(engine)

    @property
    def integrator(self) -> str:
        """ "euler" (semi-implicit, PhysX-like) or "rk4" (smooth dynamics by RK4); shared by the whole scene."""
        return "rk4" if self._engine.rk4 else "euler"

    @integrator.setter
    def integrator(self, name: str) -> None:
        if name not in ("euler", "rk4"):
            raise UsdartError(f"unknown integrator {name!r} (use 'euler' or 'rk4')")
        self._engine.set_integrator(name == "rk4")

    @property
    def solver(self) -> str:
        """ "TGS" (PhysX's default) or "PGS"; shared by the whole scene (usdart.Scene.solver)."""
        return self._engine.solver

    @solver.setter
    def solver(self, name: str) -> None:
        if name not in L.SOLVER_NAMES:
            raise UsdartError(f"unknown solver {name!r} (use 'TGS' or 'PGS')")
        self._engine.set_solver(name)

    @property
    def drive_limits_are_forces(self) -> bool:
        """PhysX's DRIVE_LIMITS_ARE_FORCES flag: drive maxForce is a force (True, the default) or an
        impulse per step (False)."""
        return bool(self._engine.control.tree_settings[self._tree, L.TS_DRIVE_LIMITS_ARE_FORCES])

    @drive_limits_are_forces.setter
    def drive_limits_are_forces(self, value: bool) -> None:
        self._engine.control.tree_settings[self._tree, L.TS_DRIVE_LIMITS_ARE_FORCES] = float(bool(value))

    def dof_index(self, dof) -> int:
        """Low-level index of a DOF given by index, DOF name, or joint path (single-DOF joints)."""
        if isinstance(dof, (int, np.integer)):
            if not 0 <= dof < self.dof_count:
                raise UsdartError(f"{self.root_link}: DOF index {dof} out of range (0..{self.dof_count - 1})")
            return int(dof)
        names = self.dof_names
        if str(dof) in names:
            return names.index(str(dof))
        raise UsdartError(f"{dof}: not a DOF of the articulation rooted at {self.root_link}")

    def set_drive_target(
        self, dof, position: float | None = None, velocity: float | None = None, world: int | None = None
    ) -> None:
        """Drive targets (SI units, radians) of one DOF, in one world or all of them."""
        k = self.dof_index(dof)
        worlds = slice(None) if world is None else world
        if world is not None:
            self._check_world(world)
        for value, target in ((position, self.control.target_position), (velocity, self.control.target_velocity)):
            if value is not None:
                if not np.isfinite(value):
                    raise UsdartError(f"{self.dof_names[k]}: drive target {value} is not finite")
                target[worlds, k] = value
        self.wake(world)

    @property
    def sleep_threshold(self) -> float:
        """Mass-normalised kinetic energy (m^2/s^2) under which a world at rest for 0.4 s sleeps (0: never)."""
        return float(self._engine.control.tree_settings[self._tree, L.TS_SLEEP_THRESHOLD])

    @sleep_threshold.setter
    def sleep_threshold(self, value: float) -> None:
        if not value >= 0:
            raise UsdartError(f"{self.root_link}: sleep threshold must be >= 0, got {value}")
        self._engine.control.tree_settings[self._tree, L.TS_SLEEP_THRESHOLD] = value

    def asleep(self, world: int = 0) -> bool:
        self._check_world(world)
        self._require_finite()
        return bool(self._state.asleep[world])

    def wake(self, world: int | None = None) -> None:
        """Wake one world (or all): changing its state, targets or forces through the API does this."""
        worlds = slice(None) if world is None else world
        self._state.asleep[worlds] = False
        self._state.link_wake[worlds] = L.WAKE_TIME

    # ---- the articulation cache ---------------------------------------------------------------------
    def create_cache(self) -> ArticulationCache:
        cache = ArticulationCache(self.model, self._solo_model, self.root_link)
        self.copy_internal_state_to_cache(cache, CacheFlag.ALL)
        return cache

    def _check_cache(self, cache: ArticulationCache) -> None:
        if not isinstance(cache, ArticulationCache):
            raise UsdartError(f"{self.root_link}: expected an ArticulationCache, got {type(cache).__name__}")
        if cache.released:
            raise UsdartError(f"{self.root_link}: the cache was released; create a new one with create_cache()")
        if cache.structure is not self._structure:  # keys are interned: equal keys are one object
            raise UsdartError(
                f"{self.root_link}: the cache was created for {cache.owner}, whose links, joints or "
                "DOFs differ; create a cache with this articulation's create_cache()"
            )

    def _check_spherical_range(self, positions) -> None:
        m = self.model
        for i in self._spherical_joints:
            values = np.asarray(positions[m.dof_start[i] : m.dof_start[i + 1]])
            if np.any(np.abs(values) > np.pi + 1e-9):
                raise UsdartError(
                    f"{self.desc.joints[i].path}: spherical joint positions must lie in [-pi, pi], "
                    f"got {values.tolist()}"
                )

    def copy_internal_state_to_cache(
        self, cache: ArticulationCache, flags: CacheFlag = CacheFlag.ALL, world: int = 0
    ) -> None:
        """Copy the selected parts of the articulation's state into the cache (LINK_FORCE/TORQUE are
        write-only and left alone). `world` picks one of the articulation's worlds."""
        self._check_cache(cache)
        self._check_world(world)
        m, st, ctl = self.model, self._state, self.control
        flags = CacheFlag(flags)
        if flags & _STATE_FLAGS:
            self._require_finite()
        if CacheFlag.POSITION in flags:
            cache.joint_position[:] = st.q[world]
        if CacheFlag.VELOCITY in flags:
            cache.joint_velocity[:] = st.qd[world]
        if CacheFlag.ACCELERATION in flags:
            cache.joint_acceleration[:] = st.qdd[world]
        if CacheFlag.FORCE in flags:
            cache.joint_force[:] = ctl.joint_force[world]
        if CacheFlag.JOINT_TARGET_POSITIONS in flags:
            cache.joint_target_position[:] = ctl.target_position[world]
        if CacheFlag.JOINT_TARGET_VELOCITIES in flags:
            cache.joint_target_velocity[:] = ctl.target_velocity[world]
        if CacheFlag.ROOT_TRANSFORM in flags:
            cache.root_transform[:3] = st.root_pos[world]
            cache.root_transform[3:] = st.root_quat[world]
        if flags & (CacheFlag.ROOT_VELOCITIES | CacheFlag.ACCELERATION):  # PxArticulationRootLinkData's
            cache.root_linear_acceleration[:] = st.root_acc[world, :3]
            cache.root_angular_acceleration[:] = st.root_acc[world, 3:]
        if CacheFlag.ROOT_VELOCITIES in flags:
            cache.root_linear_velocity[:] = st.root_vel[world, :3]
            cache.root_angular_velocity[:] = st.root_vel[world, 3:]
        if CacheFlag.JOINT_SOLVER_FORCES in flags:
            self._solver_forces(world, cache._solver_force_parts)
            cache.joint_solver_forces[:] = cache._solver_force_parts.sum(axis=0)
        if CacheFlag.LINK_VELOCITY in flags:  # at the current state
            e = self._engine
            l0 = int(e.model.trees.tree[self._tree, L.T_LINK0])
            n_links = len(e.model.links.link)  # link_motion writes scene-indexed link rows
            velocity_all = np.zeros((n_links, 6))
            link_motion(
                e._box, self._tree, world, np.zeros(len(e.model.trees.v_parent)), velocity_all, np.zeros((n_links, 6))
            )
            cache.link_velocity[:] = finite_result(velocity_all[l0 : l0 + m.n_links], self.root_link, "link velocities")
        if flags & (CacheFlag.LINK_ACCELERATION | CacheFlag.LINK_INCOMING_JOINT_FORCE):  # of the last step
            scratch = Scratch(cache._box, cache._state, cache._control, cache._work)
            acceleration, incoming = replay(
                self._engine, self._tree, np.array([world]), scratch, m.child_frame_pos, m.child_frame_rot
            )
            if CacheFlag.LINK_ACCELERATION in flags:
                cache.link_acceleration[:] = finite_result(acceleration[0], self.root_link, "link accelerations")
            if CacheFlag.LINK_INCOMING_JOINT_FORCE in flags:
                cache.link_incoming_joint_force[:] = finite_result(incoming[0], self.root_link, "incoming joint forces")

    def _solver_forces(self, world: int, out: np.ndarray) -> None:
        """out[kind]: the solver's force along each DOF over the last step, by kind (JOINT_FORCE_KINDS)."""
        e = self._engine
        if e.last_dt > 0.0:
            joint_solver_forces(e._box, self._tree, world, e.last_dt, out)
        else:  # no step yet (or RK4 steps, which solve no rows)
            out[:] = 0.0
        finite_result(out, self.root_link, "joint solver forces")

    def projected_joint_forces(self, world: int = 0) -> np.ndarray:
        """The force each joint applied along each of its DOFs over the last step, in the DOF's sense (N m or
        N): the solver's (drives, friction, limits, couplings: the cache's joint_solver_forces) plus the
        applied joint force (the cache's joint_force, which persists between steps); zeros before the first
        step. At rest it equals ovphysx's jointProjectedForce and the inverse dynamics' gravity force. ovphysx
        recomputes its value from the step's motion with the child's lever arm at the step end, which reads a
        spurious torque while a joint moves (a free hinge swinging reads about 0.5 N m); this is the force the
        joint applied."""
        self._check_world(world)
        self._require_finite()
        parts = np.zeros((len(L.JOINT_FORCE_KINDS), self.model.n_dofs))
        if self._engine.last_dt == 0.0:
            return parts[0]
        self._solver_forces(world, parts)
        return parts.sum(axis=0) + self.control.joint_force[world]

    def apply_cache(self, cache: ArticulationCache, flags: CacheFlag = CacheFlag.ALL, world: int = 0) -> None:
        """Write the selected parts of the cache into the articulation; positions and root transform
        recompute the link poses. Read-only parts (accelerations, link velocities, accelerations and
        incoming joint forces) are not applied. `world` picks one of the articulation's worlds.

        After a divergence, a world whose whole state is finite again once the cache is applied (every
        tree of it: apply positions, velocities and, for a floating base, root transform and velocities)
        steps again; while any world still fails, the scene stays diverged."""
        self._check_cache(cache)
        self._check_world(world)
        m, st, ctl = self.model, self._state, self.control
        flags = CacheFlag(flags)
        where = self.root_link
        if CacheFlag.POSITION in flags:
            q = finite_vector(cache.joint_position, m.n_dofs, where, "joint_position")
            self._check_spherical_range(q)
            st.q[world] = q
            sync_spherical_quaternions(m, st, world)
            sync_spherical_positions(m, st, world)
        if CacheFlag.VELOCITY in flags:
            st.qd[world] = finite_vector(cache.joint_velocity, m.n_dofs, where, "joint_velocity")
        if CacheFlag.FORCE in flags:
            ctl.joint_force[world] = finite_vector(cache.joint_force, m.n_dofs, where, "joint_force")
        if CacheFlag.JOINT_TARGET_POSITIONS in flags:
            ctl.target_position[world] = finite_vector(
                cache.joint_target_position, m.n_dofs, where, "joint_target_position"
            )
        if CacheFlag.JOINT_TARGET_VELOCITIES in flags:
            ctl.target_velocity[world] = finite_vector(
                cache.joint_target_velocity, m.n_dofs, where, "joint_target_velocity"
            )
        if CacheFlag.ROOT_TRANSFORM in flags:
            pose = finite_vector(cache.root_transform, 7, where, "root_transform")
            st.root_pos[world] = pose[:3]
            st.root_quat[world] = unit_quaternion(pose[3:], where)
        if CacheFlag.ROOT_VELOCITIES in flags and m.n_root:
            st.root_vel[world, :3] = finite_vector(cache.root_linear_velocity, 3, where, "root_linear_velocity")
            st.root_vel[world, 3:] = finite_vector(cache.root_angular_velocity, 3, where, "root_angular_velocity")
        if CacheFlag.LINK_FORCE in flags:
            ctl.link_wrench[world, :, :3] = finite_vector(cache.link_force, 3 * m.n_links, where, "link_force").reshape(
                -1, 3
            )
        if CacheFlag.LINK_TORQUE in flags:
            ctl.link_wrench[world, :, 3:] = finite_vector(
                cache.link_torque, 3 * m.n_links, where, "link_torque"
            ).reshape(-1, 3)
        if flags & (CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM):
            self._engine.update_poses(world)
        self.wake(world)
        if self._engine.divergence:
            self._engine.recover(world)

    def summary(self) -> dict:
        """Plain-data view (the `usdart inspect --json` entry)."""
        return dict(
            root_link=self.root_link,
            fixed_base=self.fixed_base,
            links=self.links,
            link_parents=self.link_parents.tolist(),
            joints=self.joints,
            dof_names=self.dof_names,
            dof_count=self.dof_count,
            loop_joints=self.loop_joints,
            mimic_joints=self.mimic_joints,
            link_masses=self.link_masses.tolist(),
            total_mass=self.total_mass,
        )

    def __repr__(self) -> str:
        base = "fixed" if self.fixed_base else "floating"
        return f"Articulation({self.root_link!r}, {base} base, {len(self.desc.links)} links, {self.dof_count} DOFs)"


_ROOT_VELOCITY = ("linear x", "linear y", "linear z", "angular x", "angular y", "angular z")


def divergence_error(engine: Engine) -> SimulationDiverged:
    """The one-line SimulationDiverged of an engine's earliest divergence (ties: the lowest world): which
    articulation or free body, when (and in which world), what was wrong, and what to try."""
    d = min(engine.divergence.values(), key=lambda d: (d.time, d.world))
    desc = engine.members[d.tree].desc
    if len(desc.links) == 1 and desc.joints[0] is None and not desc.fixed_base:
        who = "rigid body"
    else:
        who = "articulation" if desc.root_link == desc.api_prim else f"articulation (root link {desc.root_link})"
    where = f" in world {d.world} of {engine.worlds}" if engine.worlds > 1 else ""
    others = sorted(w for w in engine.divergence if w != d.world)
    if others:
        shown = ", ".join(str(w) for w in others[:5]) + (", ..." if len(others) > 5 else "")
        where += f" (worlds {shown} too)"
    finite = bool(np.isfinite(d.value))
    value, unit = f"{d.value:.3g}", ""
    if d.what == "joint velocity":
        dof = desc.dofs[d.index]
        unit = " rad/s" if dof.axis.startswith("rot") else " m/s"
        detail = f"joint velocity of {dof.name} is {value}{unit if finite else ''}"
    elif d.what == "root velocity":
        unit = " rad/s" if d.index >= 3 else " m/s"
        detail = f"root {_ROOT_VELOCITY[d.index]} velocity is {value}{unit if finite else ''}"
    elif d.what == "joint position":
        detail = f"joint position of {desc.dofs[d.index].name} is {value}"
    elif d.what == "root pose":
        detail = f"root {'position' if d.index < 3 else 'orientation'} is {value}"
    elif d.what == "link position":
        detail = f"position of link {desc.links[d.index]} is {value}"
    else:
        detail = "its state is not finite"
    if finite and d.what.endswith("velocity"):
        detail += f", beyond the bound of {d.bound:.3g}{unit}"
    return SimulationDiverged(
        desc.api_prim,
        f"{who} diverged at t = {d.time:.6g} s{where}: {detail}; try a smaller time step (a higher "
        f"physxScene:timeStepsPerSecond than {1.0 / d.dt:.6g}) or more solver iterations, and check link "
        "masses and inertias",
        d.time,
        d.world,
    )
