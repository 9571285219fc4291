"""The public `Articulation`: an imported articulation, its state, and the PhysX cache interface."""
from __future__ import annotations

import numpy as np

from .cache import ArticulationCache, CacheFlag
from .errors import UsdartError
from .importer.description import AXIS_ORDER, ArticulationDesc
from .importer.frames import matrix_to_quat, quat_to_matrix
from .inverse_dynamics import InverseDynamicsMixin
from .kernels.box import box
from .kernels.entry import link_motion_one, poses_one, step_all, step_one
from .model import JOINT_SPHERICAL, WAKE_TIME, build_model, structure_key
from .state import (initial_state, sync_spherical_positions, sync_spherical_quaternions, workspace,
                    zeros_control, zeros_state)
from .values import finite_vector, unit_quaternion


class Articulation(InverseDynamicsMixin):
    """One reduced-coordinate articulation of a `Scene`.

    Links are in low-level order (BFS from the root, parent index < child index); DOFs follow the
    links in that order and, inside a joint, PhysX's axis order (rotX, rotY, rotZ, transX, transY, transZ).
    The state starts as authored (root body pose and velocity, JointStateAPI); read and change it through
    a cache (`create_cache`, `copy_internal_state_to_cache`, `apply_cache`).
    """

    def __init__(self, desc: ArticulationDesc, gravity=(0.0, 0.0, -9.81), joints: dict | None = None,
                 worlds: int = 1):
        if worlds < 1:
            raise UsdartError(f"{desc.root_link}: worlds must be at least 1, got {worlds}")
        self.desc = desc
        self.worlds = int(worlds)
        self.model = build_model(desc, gravity, joints)
        self.state = initial_state(desc, self.model, self.worlds)
        self.control = zeros_control(self.model, self.worlds)
        self.control.target_position[:] = [d.drive.target_position if d.drive else 0.0 for d in desc.dofs]
        self.control.target_velocity[:] = [d.drive.target_velocity if d.drive else 0.0 for d in desc.dofs]
        self.work = workspace(self.model, self.worlds)
        self.integrator = "euler"
        stage = zeros_state(self.model, self.worlds)  # RK4 stage scratch
        self._stage_box = box(stage)
        self._model_box, self._state_box = box(self.model), box(self.state)
        self._control_box, self._work_box = box(self.control), box(self.work)
        self._step_box = box((self.model, self.state, stage, self.control, self.work))
        for w in range(self.worlds):
            poses_one(self._model_box, self._state_box, self._work_box, w)
        self._measure_rest_lengths()
        self._maximal_index = np.array([(link - 1) * 6 + AXIS_ORDER.index(d.axis)
                                        for link, d in zip(self.model.dof_link, desc.dofs)], dtype=np.int64)

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
        return [dict(joint=m.joint, dof=m.dof, reference_joint=m.reference_joint, reference_dof=m.reference_dof,
                     gearing=m.gearing, offset=m.offset, natural_frequency=m.natural_frequency,
                     damping_ratio=m.damping_ratio) for m in self.desc.mimic_joints]

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
        out = np.zeros((self.model.n_links, 7))
        out[:, :3] = self.work.pos[world]
        out[:, 3:] = [matrix_to_quat(R) for R in self.work.rot[world]]
        return out

    def _measure_rest_lengths(self) -> None:
        """Spatial sub-tendons without an authored rest length keep the length they start with."""
        m = self.model
        T = self.link_transforms()
        for s in np.flatnonzero(np.isnan(m.spatial_params[:, 4])):
            ids = range(m.spatial_start[s], m.spatial_start[s + 1])
            points = [T[m.spatial_link[p], :3] + quat_to_matrix(T[m.spatial_link[p], 3:]) @ m.spatial_point[p] for p in ids]
            m.spatial_params[s, 4] = m.spatial_params[s, 3] + sum(
                m.spatial_gearing[p] * np.linalg.norm(points[i] - points[i + 1]) for i, p in enumerate(list(ids)[1:]))

    def _check_world(self, world: int) -> None:
        if not 0 <= world < self.worlds:
            raise UsdartError(f"{self.root_link}: world {world} does not exist (this articulation has {self.worlds})")

    # ---- stepping ------------------------------------------------------------------------------------
    def step(self, dt: float, steps: int = 1) -> None:
        """Advance every world by `steps` steps of `dt` seconds (worlds in parallel when there are several),
        with `self.integrator`: "euler" (semi-implicit, PhysX-like) or "rk4" (smooth dynamics by RK4)."""
        if self.integrator not in ("euler", "rk4"):
            raise UsdartError(f"{self.root_link}: unknown integrator {self.integrator!r} (use 'euler' or 'rk4')")
        if not dt > 0 or steps < 0:
            raise UsdartError(f"{self.root_link}: need a positive time step and a non-negative step count")
        rk4 = self.integrator == "rk4"
        if self.worlds == 1:
            step_one(self._step_box, 0, float(dt), int(steps), rk4)
        else:
            step_all(self._step_box, float(dt), int(steps), rk4)

    @property
    def drive_limits_are_forces(self) -> bool:
        """PhysX's DRIVE_LIMITS_ARE_FORCES flag: drive maxForce is a force (True, the default) or an
        impulse per step (False)."""
        return bool(self.model.drive_limits_are_forces[0])

    @drive_limits_are_forces.setter
    def drive_limits_are_forces(self, value: bool) -> None:
        self.model.drive_limits_are_forces[0] = bool(value)

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

    def set_drive_target(self, dof, position: float | None = None, velocity: float | None = None,
                         world: int | None = None) -> None:
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
        return float(self.model.sleep_threshold[0])

    @sleep_threshold.setter
    def sleep_threshold(self, value: float) -> None:
        if not value >= 0:
            raise UsdartError(f"{self.root_link}: sleep threshold must be >= 0, got {value}")
        self.model.sleep_threshold[0] = value

    def asleep(self, world: int = 0) -> bool:
        self._check_world(world)
        return bool(self.state.asleep[world])

    def wake(self, world: int | None = None) -> None:
        """Wake one world (or all): changing its state, targets or forces through the API does this."""
        worlds = slice(None) if world is None else world
        self.state.asleep[worlds] = False
        self.state.wake_time[worlds] = WAKE_TIME

    # ---- the articulation cache ---------------------------------------------------------------------
    def create_cache(self) -> ArticulationCache:
        cache = ArticulationCache(self.model, self.root_link)
        self.copy_internal_state_to_cache(cache, CacheFlag.ALL)
        return cache

    def _check_cache(self, cache: ArticulationCache) -> None:
        if not isinstance(cache, ArticulationCache):
            raise UsdartError(f"{self.root_link}: expected an ArticulationCache, got {type(cache).__name__}")
        if cache.structure != structure_key(self.model):
            raise UsdartError(f"{self.root_link}: the cache was created for {cache.owner}, whose links, joints or "
                              "DOFs differ; create a cache with this articulation's create_cache()")

    def _check_spherical_range(self, positions) -> None:
        m = self.model
        for i in np.flatnonzero(m.joint_type == JOINT_SPHERICAL):
            values = np.asarray(positions[m.dof_start[i]:m.dof_start[i + 1]])
            if np.any(np.abs(values) > np.pi + 1e-9):
                raise UsdartError(f"{self.desc.joints[i].path}: spherical joint positions must lie in [-pi, pi], "
                                  f"got {values.tolist()}")

    def copy_internal_state_to_cache(self, cache: ArticulationCache, flags: CacheFlag = CacheFlag.ALL,
                                     world: int = 0) -> None:
        """Copy the selected parts of the articulation's state into the cache (LINK_FORCE/TORQUE are
        write-only and left alone). `world` picks one of the articulation's worlds."""
        self._check_cache(cache)
        self._check_world(world)
        m, st, ctl = self.model, self.state, self.control
        flags = CacheFlag(flags)
        if CacheFlag.POSITION in flags:
            cache.joint_position[:] = st.q[world]
        if CacheFlag.VELOCITY in flags:
            cache.joint_velocity[:] = st.qd[world]
        if CacheFlag.ACCELERATION in flags:
            cache.joint_acceleration[:] = st.qdd[world]
            cache.root_linear_acceleration[:] = st.root_acc[world, :3]
            cache.root_angular_acceleration[:] = st.root_acc[world, 3:]
        if CacheFlag.FORCE in flags:
            cache.joint_force[:] = ctl.joint_force[world]
        if CacheFlag.JOINT_TARGET_POSITIONS in flags:
            cache.joint_target_position[:] = ctl.target_position[world]
        if CacheFlag.JOINT_TARGET_VELOCITIES in flags:
            cache.joint_target_velocity[:] = ctl.target_velocity[world]
        if CacheFlag.ROOT_TRANSFORM in flags:
            cache.root_transform[:3] = st.root_pos[world]
            cache.root_transform[3:] = st.root_quat[world]
        if CacheFlag.ROOT_VELOCITIES in flags:
            cache.root_linear_velocity[:] = st.root_vel[world, :3]
            cache.root_angular_velocity[:] = st.root_vel[world, 3:]
        if flags & (CacheFlag.LINK_VELOCITY | CacheFlag.LINK_ACCELERATION | CacheFlag.LINK_INCOMING_JOINT_FORCE):
            # RNEA at the last accelerations gives link velocities, accelerations and transmitted forces
            velocity, acceleration = np.zeros((m.n_links, 6)), np.zeros((m.n_links, 6))
            link_motion_one(self._model_box, self._state_box, self._control_box, self._work_box, world,
                            np.zeros((self.worlds, m.n_root + m.n_dofs)), velocity, acceleration)
            if CacheFlag.LINK_VELOCITY in flags:
                cache.link_velocity[:] = velocity
            if CacheFlag.LINK_ACCELERATION in flags:
                cache.link_acceleration[:] = acceleration
            if CacheFlag.LINK_INCOMING_JOINT_FORCE in flags:
                self._incoming_joint_forces(cache.link_incoming_joint_force, world)

    def _incoming_joint_forces(self, out, world: int) -> None:
        """ws.force (world, at the origin) as [force; torque] in each link's child joint frame."""
        m, ws = self.model, self.work
        out[0] = 0.0
        for i in range(1, m.n_links):
            R = ws.rot[world, i] @ m.child_frame_rot[i]
            x = ws.pos[world, i] + ws.rot[world, i] @ m.child_frame_pos[i]
            torque, force = ws.force[world, i, :3], ws.force[world, i, 3:]
            out[i, :3] = R.T @ force
            out[i, 3:] = R.T @ (torque - np.cross(x, force))

    def apply_cache(self, cache: ArticulationCache, flags: CacheFlag = CacheFlag.ALL, world: int = 0) -> None:
        """Write the selected parts of the cache into the articulation; positions and root transform
        recompute the link poses. Read-only parts (accelerations, link velocities, accelerations and
        incoming joint forces) are not applied. `world` picks one of the articulation's worlds."""
        self._check_cache(cache)
        self._check_world(world)
        m, st, ctl = self.model, self.state, self.control
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
            ctl.target_position[world] = finite_vector(cache.joint_target_position, m.n_dofs, where, "joint_target_position")
        if CacheFlag.JOINT_TARGET_VELOCITIES in flags:
            ctl.target_velocity[world] = finite_vector(cache.joint_target_velocity, m.n_dofs, where, "joint_target_velocity")
        if CacheFlag.ROOT_TRANSFORM in flags:
            pose = finite_vector(cache.root_transform, 7, where, "root_transform")
            st.root_pos[world] = pose[:3]
            st.root_quat[world] = unit_quaternion(pose[3:], where)
        if CacheFlag.ROOT_VELOCITIES in flags and m.n_root:
            st.root_vel[world, :3] = finite_vector(cache.root_linear_velocity, 3, where, "root_linear_velocity")
            st.root_vel[world, 3:] = finite_vector(cache.root_angular_velocity, 3, where, "root_angular_velocity")
        if CacheFlag.LINK_FORCE in flags:
            ctl.link_wrench[world, :, :3] = finite_vector(cache.link_force, 3 * m.n_links, where, "link_force").reshape(-1, 3)
        if CacheFlag.LINK_TORQUE in flags:
            ctl.link_wrench[world, :, 3:] = finite_vector(cache.link_torque, 3 * m.n_links, where, "link_torque").reshape(-1, 3)
        if flags & (CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM):
            poses_one(self._model_box, self._state_box, self._work_box, world)
        self.wake(world)

    def summary(self) -> dict:
        """Plain-data view (the `usdart inspect --json` entry)."""
        return dict(root_link=self.root_link, fixed_base=self.fixed_base, links=self.links,
                    link_parents=self.link_parents.tolist(), joints=self.joints, dof_names=self.dof_names,
                    dof_count=self.dof_count, loop_joints=self.loop_joints, mimic_joints=self.mimic_joints,
                    link_masses=self.link_masses.tolist(), total_mass=self.total_mass)

    def __repr__(self) -> str:
        base = "fixed" if self.fixed_base else "floating"
        return f"Articulation({self.root_link!r}, {base} base, {len(self.desc.links)} links, {self.dof_count} DOFs)"
