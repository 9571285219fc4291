"""The public `Scene`: everything simulated on one stage, and `load`, its entry point."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
from pxr import Sdf, Usd, UsdPhysics

from . import parameters, topology
from .articulation import Articulation, divergence_error
from .contact_report import Contacts, contact_report
from .core import layout as L
from .core.articulation_model import (
    CONSTRAINT_AXES,
    build_articulation_model,
    locked_axes,
    loop_joint_descs,
)
from .core.description import ArticulationDesc, SceneDescription
from .core.engine import Engine
from .core.model import build_model, closed_trees, constraint_joint, parameter_tables, structure_difference
from .core.shapes import build_shapes, shape_colliders
from .core.state import set_initial_state, zeros_control, zeros_state
from .errors import UsdartError
from .usd.importer import read_stage
from .usd.importer.usd_values import PHYSICAL_SCALE
from .view import ArticulationView, select_articulations


class Scene:
    """Articulations (sorted by root link path), free bodies and scene settings of a stage, simulated as one
    model: one kernel call steps every articulation, free body and joint between them in every world.

    Divergence: every step checks every stepped articulation and free body (finite state, no velocity
    beyond `divergence_speed`). A world that fails stops there and `step` raises `SimulationDiverged`
    (naming the articulation, the time and what was wrong); from then on reading any state of the scene
    raises it again, until `reset()` or `Articulation.apply_cache` writes a finite state into every
    diverged world."""

    def __init__(self, stage, description: SceneDescription, worlds: int = 1, integrator: str = "euler"):
        self.stage = stage
        self.description = description
        self.worlds = int(worlds)
        gravity = description.settings.gravity
        self._joints = joints = description.joints
        descs = list(description.articulations)
        # a free rigid body moves like a one-link floating articulation, a kinematic body like one of infinite
        # mass carried to its target (usdart.core.kernels.kinematic)
        free_paths, kinematic_paths = description.free_bodies, description.kinematic_bodies
        descs += [_single_body(description.bodies[p]) for p in [*free_paths, *kinematic_paths]]
        trees = [
            build_articulation_model(d, gravity, joints if i < len(description.articulations) else None)
            for i, d in enumerate(descs)
        ]
        crossing = self._crossing_joints(descs)
        model = build_model(trees, [constraint_joint(j, s0, s1, locked_axes(j)) for j, s0, s1 in crossing], gravity)
        # the couplings' joints: the articulations' loop joints, then these
        self._coupled_paths = [j.path for d in description.articulations for j in loop_joint_descs(d, joints)]
        loops = len(self._coupled_paths)
        self._coupled_paths += [j.path for j, _, _ in crossing]
        self._constraint_index = {j.path: loops + k for k, (j, _, _) in enumerate(crossing)}
        first_link = model.trees.tree[:, L.T_LINK0]
        where = {link: (t, int(first_link[t]) + k) for t, d in enumerate(descs) for k, link in enumerate(d.links)}
        self._colliders = shape_colliders(description, where)
        model = model._replace(
            shapes=build_shapes(
                description,
                self._colliders,
                where,
                model.trees.tree,
                [d.self_collisions for d in descs],
                [t < len(description.articulations) for t in range(len(descs))],
            )
        )
        self._engine = engine = Engine(model, self.worlds)
        self._descs, self._trees = descs, trees
        self._write_initial_state(engine.state, engine.control)
        engine.pose_all_worlds()
        engine.measure_rest_lengths()
        members = [Articulation(d, _engine=engine, _tree=t, _model=m) for t, (d, m) in enumerate(zip(descs, trees))]
        engine.members = members
        n_art = len(description.articulations)
        self.articulations = members[:n_art]
        self._free = dict(zip(free_paths, members[n_art : n_art + len(free_paths)]))
        self._kinematic = dict(zip(kinematic_paths, members[n_art + len(free_paths) :]))
        self._initial = None  # each world's own start when the worlds came from different stages (batch)
        self.integrator = integrator
        self.solver = description.settings.solver
        self.external_forces_every_iteration = description.settings.external_forces_every_iteration
        coupled = {j.path for j, _, _ in crossing}
        self._unsimulated = [
            p
            for p in description.constraints
            if p not in coupled and not self._internal_loop(joints.get(p)) and not self._held_still(joints.get(p))
        ]

    def _crossing_joints(self, descs: list[ArticulationDesc]) -> list:
        """Joints whose bodies lie on different trees (or a free body and the world): (joint, side0, side1)
        with sides (tree, local link), (-1, -1) for the world; distance joints too when both bodies are links of
        one articulation (the articulation's loop joints hold axes only). Joints to unknown bodies are left out
        (reported as not simulated), and so are joints with no dynamic side (`_held_still`)."""
        where = {link: (t, k) for t, d in enumerate(descs) for k, link in enumerate(d.links)}
        out = []
        for path in self.description.constraints:
            joint = self._joints.get(path)
            if joint is None:
                continue
            sides = [(-1, -1) if b is None else where.get(b) for b in joint.bodies()]
            if None in sides:
                continue
            trees = {t for t, _ in sides if t >= 0}
            articulation_loop = len(trees) == 1 and next(iter(trees)) < len(self.description.articulations)
            if not trees or (articulation_loop and joint.kind != "distance") or self._held_still(joint):
                continue  # that articulation's own loop rows, or nothing dynamic to hold (`_held_still`)
            out.append((joint, *sides))
        return out

    def _held_still(self, joint) -> bool:
        """Joints between kinematic bodies, or a kinematic body and the world: they join nothing that moves
        by force, so they are simulated by doing nothing (as in PhysX)."""
        if joint is None:
            return False
        bodies, sides = self.description.bodies, [b for b in joint.bodies() if b is not None]
        return bool(sides) and all(b in bodies and bodies[b].kinematic for b in sides)

    def _internal_loop(self, joint) -> bool:
        """Loop joints inside one articulation (or to the world) are that articulation's own rows."""
        if joint is None or joint.kind == "distance":
            return False
        return any(all(b is None or b in art.desc.links for b in joint.bodies()) for art in self.articulations)

    @property
    def integrator(self) -> str:
        """ "euler" (semi-implicit, PhysX-like; the default) or "rk4" (smooth dynamics by RK4)."""
        return "rk4" if self._engine.rk4 else "euler"

    @integrator.setter
    def integrator(self, name: str) -> None:
        if name not in ("euler", "rk4"):
            raise UsdartError(f"unknown integrator {name!r} (use 'euler' or 'rk4')")
        self._engine.set_integrator(name == "rk4")

    @property
    def solver(self) -> str:
        """ "TGS" or "PGS": how the constraint rows are solved, as PhysX's solvers do (the stage's
        physxScene:solverType; unauthored, TGS with the "physx" semantics as in PhysX, PGS with "newton").
        PGS corrects once per step and moves the positions with the position-iteration velocity; TGS moves
        them in N substeps of dt / N (N = the position iterations). The RK4 integrator always uses PGS."""
        return self._engine.solver

    @solver.setter
    def solver(self, name: str) -> None:
        if name not in L.SOLVER_NAMES:
            raise UsdartError(f"unknown solver {name!r} (use 'TGS' or 'PGS')")
        self._engine.set_solver(name)

    @property
    def external_forces_every_iteration(self) -> bool:
        """TGS: gravity, link forces and joint forces act in every substep (True: what ovphysx does where
        physxScene:enableExternalForcesEveryIteration is not authored) or all at the step start (False);
        joint friction and drive envelopes then bound each substep's impulse or the step's. PGS ignores it."""
        return bool(self._engine.control.tree_settings[:, L.TS_SUBSTEP_FORCES].all())

    @external_forces_every_iteration.setter
    def external_forces_every_iteration(self, value: bool) -> None:
        self._engine.control.tree_settings[:, L.TS_SUBSTEP_FORCES] = bool(value)

    @property
    def contacts_enabled(self) -> bool:
        """Whether shapes collide (True: every collider of the stage, as PhysX; False: no contacts at all,
        e.g. to compare dynamics with a simulator that has none)."""
        return bool(self._engine.control.tree_settings[:, L.TS_CONTACTS].all())

    @contacts_enabled.setter
    def contacts_enabled(self, value: bool) -> None:
        self._engine.control.tree_settings[:, L.TS_CONTACTS] = bool(value)

    def contacts(self, world: int = 0) -> Contacts:
        """The contact points of the last step in a world (found at the step start, solved in it): see
        `Contacts`. Bodies that sleep make no contacts; points beyond the scene's room are counted in
        `dropped`."""
        if not 0 <= world < self.worlds:
            raise UsdartError(f"world {world} does not exist (the scene has {self.worlds})")
        return contact_report(self._engine, self._colliders, int(world))

    def _adopt_world(self, w: int, other: Scene) -> None:
        """World w becomes `other`'s world 0: its parameters (every float table of its model), its initial
        state and its drive targets. `other` must have this scene's structure (see `batch`)."""
        source = other.stage.GetRootLayer().identifier
        difference = _batch_difference(self, other)
        if difference:
            raise UsdartError(f"{source}: cannot be world {w} of a batch with {self._source}: {difference}")
        mine, theirs = self._engine, other._engine
        for table, value in zip(parameter_tables(mine.batched), parameter_tables(theirs.batched)):
            table[w] = value[0]
        for table, value in zip(mine.state, theirs.state):
            table[w] = value[0]
        for table, value in zip(mine.control[:5], theirs.control[:5]):  # not tree_settings (shared)
            table[w] = value[0]
        mine.update_poses(w)

    @property
    def _source(self) -> str:
        return self.stage.GetRootLayer().identifier

    def _write_initial_state(self, state, control) -> None:
        """Every tree's authored initial state (poses, joint states, velocities, drive targets) into every
        world of `state` and `control`."""
        for t, (desc, tree) in enumerate(zip(self._descs, self._trees)):
            set_initial_state(self._engine.model, state, control, t, desc, tree)

    @property
    def time(self) -> float:
        """Simulated seconds since the start (or the last `reset()`)."""
        return self._engine.time

    @time.setter
    def time(self, seconds: float) -> None:
        self._engine.time = float(seconds)

    def step(self, n: int = 1) -> None:
        """Advance every articulation and free body, in every world, by n steps of `time_step`.

        Raises `SimulationDiverged` when a world's state stops being finite or physical (see the class);
        that world stops at the failing step, the others complete the n steps, and `time` advances by n."""
        steps = int(n)
        if steps != n or steps < 0:
            raise UsdartError(f"step count must be a whole number >= 0, got {n}")
        engine = self._engine
        if engine.divergence:
            raise divergence_error(engine)
        diverged = engine.step(self.time_step, steps)
        engine.time += n * self.time_step
        if diverged:
            raise divergence_error(engine)

    @property
    def diverged(self) -> bool:
        """True while a world is stopped by a divergence (state reads raise `SimulationDiverged`)."""
        return bool(self._engine.divergence)

    def reset(self, world: int | None = None) -> None:
        """Put every articulation and free body back in its authored initial state (poses, joint states,
        velocities, drive targets; joint and link forces cleared), in one world or all of them, and clear
        a divergence there. Settings (time step, integrator, solver, sleep thresholds, `divergence_speed`,
        drive-limit flags) stay as they are; resetting all worlds sets `time` to 0."""
        if world is not None and not 0 <= world < self.worlds:
            raise UsdartError(f"world {world} does not exist (the scene has {self.worlds})")
        engine = self._engine
        if self._initial is None:
            state, control = zeros_state(engine.model, 1), zeros_control(engine.model, 1)
            self._write_initial_state(state, control)
        else:
            state, control = self._initial
        worlds = range(self.worlds) if world is None else [int(world)]
        for w in worlds:
            for target, fresh in zip(engine.state, state):
                target[w] = fresh[w if self._initial else 0]
            for target, fresh in zip(engine.control[:5], control[:5]):  # not tree_settings
                target[w] = fresh[w if self._initial else 0]
            engine.clear(w)
            engine.work.contact_count[w, : L.CC_STEP] = 0  # its last step's contacts are gone (the count goes on)
            engine.update_poses(w)
        if world is None:
            engine.time = 0.0

    @property
    def conserve_momentum(self) -> bool:
        """Whether the step keeps the momentum of floating articulations that no joint ties to the world or
        to another articulation: only gravity and link forces change it, never joint forces (default; see
        usdart.core.kernels.momentum). False steps as plain reduced-coordinate integrators do (MuJoCo's
        Euler and RK4), whose momentum errs at first order in dt when the mechanism changes shape fast."""
        return bool(self._engine.control.tree_settings[:, L.TS_CONSERVE_MOMENTUM].any())

    @conserve_momentum.setter
    def conserve_momentum(self, value: bool) -> None:
        closed = closed_trees(self._engine.model)
        self._engine.control.tree_settings[:, L.TS_CONSERVE_MOMENTUM] = closed & bool(value)

    @property
    def divergence_speed(self) -> float:
        """The divergence guard's velocity bound in m/s and rad/s (default 1e8, see
        usdart.core.layout.DIVERGENCE_SPEED); `inf` keeps only the finiteness check."""
        return float(self._engine.control.tree_settings[:, L.TS_DIVERGENCE_SPEED].max(initial=L.DIVERGENCE_SPEED))

    @divergence_speed.setter
    def divergence_speed(self, value: float) -> None:
        if not value > 0:
            raise UsdartError(f"divergence speed must be a positive number (m/s, rad/s), got {value}")
        self._engine.control.tree_settings[:, L.TS_DIVERGENCE_SPEED] = float(value)

    def set_drive_target(
        self, dof: str, position: float | None = None, velocity: float | None = None, world: int | None = None
    ) -> None:
        """Drive targets (SI, radians) of the DOF named `dof` (joint path, or `<joint>:rotX` ...), in one
        world or all: an articulation's DOF, or a driven free axis of a joint outside the trees (in the
        joint's body0 -> body1 sense); the bodies it moves wake."""
        for art in self.articulations:
            if str(dof) in art.dof_names:
                art.set_drive_target(dof, position, velocity, world)
                return
        if world is not None and not 0 <= world < self.worlds:
            raise UsdartError(f"world {world} does not exist (the scene has {self.worlds})")
        index, axis, sign = self._joint_drive(str(dof))
        engine, worlds = self._engine, slice(None) if world is None else world
        drive = engine.batched.couplings.joint_drive[worlds, index, axis]
        for value, column in ((position, L.JD_TARGET_POSITION), (velocity, L.JD_TARGET_VELOCITY)):
            if value is not None:
                if not np.isfinite(value):
                    raise UsdartError(f"{dof}: drive target {value} is not finite")
                drive[..., column] = sign * value
        for link in engine.model.couplings.joint_link[index]:
            if link >= 0:
                t = int(engine.model.links.link[link, L.L_TREE])
                l0, l1 = (int(x) for x in engine.model.trees.tree[t, :2])
                engine.state.asleep[worlds, t] = False
                engine.state.link_wake[worlds, l0:l1] = L.WAKE_TIME

    @property
    def driven_joints(self) -> list[str]:
        """Paths of the joints outside the articulations whose free axes have drive rows."""
        drive = self._engine.model.couplings.joint_drive
        return [p for p, i in self._constraint_index.items() if drive[i][:, [L.JD_STIFFNESS, L.JD_DAMPING]].any()]

    def broken_joints(self, world: int = 0) -> list[str]:
        """Paths of the joints that broke in `world` (their rows passed physics:breakForce / breakTorque in
        a step, as PhysX breaks a joint: it acts no more; `reset` mends them). Joints of an articulation's
        tree never break, as in PhysX."""
        if not 0 <= world < self.worlds:
            raise UsdartError(f"world {world} does not exist (the scene has {self.worlds})")
        broken = self._engine.state.joint_broken[world]
        return [self._coupled_paths[j] for j in np.flatnonzero(broken)]

    def joint(self, path: str):
        """The imported description of the joint at `path` (usdart.core.description.JointDesc)."""
        if str(path) not in self._joints:
            raise UsdartError(f"{path}: not a joint of this stage")
        return self._joints[str(path)]

    def _joint_drive(self, dof: str) -> tuple[int, int, float]:
        """(couplings joint, axis, sign) of a driven free axis of a joint outside the trees, by DOF name."""
        for path, index in self._constraint_index.items():
            joint = self._joints[path]
            for d in joint.dofs:
                if d.name == dof or (dof == path and len(joint.dofs) == 1):
                    axis = CONSTRAINT_AXES.index(d.axis)
                    if not self._engine.model.couplings.joint_drive[index, axis, [L.JD_STIFFNESS, L.JD_DAMPING]].any():
                        raise UsdartError(f"{dof}: this axis of a joint outside the articulations has no drive")
                    return index, axis, -1.0 if joint.reversed else 1.0
        raise UsdartError(f"{dof}: not a DOF of any articulation or driven joint on this stage")

    def set_parameter(self, path: str, name: str, values) -> None:
        """One value per world (or one for all) of a parameter, SI units with radians:
        - on a joint (its path, or one DOF's name): "stiffness", "damping", "max_force" (its drive),
          "static_friction", "dynamic_friction", "viscous_friction", "armature", "target_position",
          "target_velocity"; shape (worlds,) for a one-DOF joint, (worlds, DOFs) otherwise;
        - on a link or free body: "mass" (centre of mass kept, inertia scaled with it);
        - "gravity" (path ignored, e.g. the physics scene's): shape (worlds, 3).
        Values are checked (shape, finite, range) and the error names the prim. The articulation cache's
        dynamics functions and the articulations' read-only properties keep the stage's values."""
        parameters.set_parameter(self, path, name, values)

    def parameter(self, path: str, name: str) -> np.ndarray:
        """Every world's value of a parameter set_parameter takes (a copy)."""
        return parameters.parameter(self, path, name)

    def free_body(self, path: str) -> Articulation:
        """The one-link floating articulation that simulates a free rigid body: its `state` holds the body's
        velocity ([v_com; omega], world) and whether it sleeps."""
        if str(path) not in self._free:
            raise UsdartError(f"{path}: not a free (non-articulated, dynamic) rigid body of this stage")
        return self._free[str(path)]

    def body_transform(self, path: str, world: int = 0) -> np.ndarray:
        """World pose [x, y, z, qw, qx, qy, qz] of a free or kinematic rigid body's frame."""
        if str(path) in self._kinematic:
            return self._kinematic[str(path)].link_transforms(world)[0]
        return self.free_body(path).link_transforms(world)[0]

    @property
    def kinematic_bodies(self) -> list[str]:
        """Rigid bodies with physics:kinematicEnabled: moved by `set_kinematic_target`, pushed by nothing."""
        return list(self.description.kinematic_bodies)

    def set_kinematic_target(self, path: str, position, orientation=None, world: int | None = None) -> None:
        """Move a kinematic body to a world pose over the next step (PhysX's setKinematicTarget): position in
        metres, orientation a quaternion [w, x, y, z] (default: its last target's), in one world or all. The body
        moves with the constant velocity that reaches the target in one step; what it touches or is jointed to
        feels that velocity. It stays at the target until given another (as in PhysX, its velocity is zero
        then). Time-sampled transforms of kinematic bodies on the stage set these targets in `usdart simulate`.
        """
        body = self._kinematic.get(str(path))
        if body is None:
            raise UsdartError(f"{path}: not a kinematic rigid body of this stage (physics:kinematicEnabled)")
        if world is not None and not 0 <= world < self.worlds:
            raise UsdartError(f"world {world} does not exist (the scene has {self.worlds})")
        worlds = range(self.worlds) if world is None else [int(world)]
        pos = np.asarray(position, float)
        if pos.shape != (3,) or not np.all(np.abs(pos) <= PHYSICAL_SCALE):
            raise UsdartError(
                f"{path}: kinematic target position must be 3 finite numbers (m, within {PHYSICAL_SCALE:g}), "
                f"got {position!r}"
            )
        quat = None
        if orientation is not None:
            quat = np.asarray(orientation, float)
            norm = float(np.linalg.norm(quat)) if quat.shape == (4,) else 0.0
            if not (np.isfinite(norm) and norm > 0):
                raise UsdartError(f"{path}: kinematic target orientation must be a non-zero quaternion [w, x, y, z]")
            quat = quat / norm
        target = body.control.kinematic_target
        for w in worlds:
            target[w, :3] = pos
            if quat is not None:
                target[w, 3:] = quat

    @property
    def gravity(self) -> np.ndarray:
        return self.description.settings.gravity.copy()

    @property
    def time_step(self) -> float:
        """Seconds per step: the stage's rate (physxScene / newton timeStepsPerSecond), or as set here."""
        return self.description.settings.time_step

    @time_step.setter
    def time_step(self, seconds: float) -> None:
        if not (np.isfinite(seconds) and seconds > 0):
            raise UsdartError(f"time step must be a positive number of seconds, got {seconds}")
        self.description.settings.time_step = float(seconds)

    @property
    def warnings(self) -> list[str]:
        unsimulated = [f"{path}: joint to an unknown body: imported but not simulated" for path in self._unsimulated]
        return list(self.description.warnings) + unsimulated + self._ignored_drives() + self._distances_in_trees()

    def _distances_in_trees(self) -> list[str]:
        """Distance joints between links of one articulation that are not excluded from it: PhysX refuses them
        ("Articulation cannot contain a distance joint", measured on ovphysx), usdart simulates them."""
        out = []
        for art in self.articulations:
            for path in art.loop_joints:
                joint = self._joints.get(path)
                inside = joint is not None and all(b is not None and b in art.desc.links for b in joint.bodies())
                if inside and joint.kind == "distance" and not joint.excluded:
                    out.append(
                        f"{path}: a distance joint between links of one articulation: PhysX refuses it unless it "
                        "is excluded from the articulation (physics:excludeFromArticulation); usdart simulates it"
                    )
        return out

    def _ignored_drives(self) -> list[str]:
        """Drives on spherical joints outside articulation trees are ignored, as PhysX reads none there (said,
        not dropped silently; articulation_model.axis_drives builds the rest)."""
        out = []
        for path in self.description.constraints:
            joint = self._joints.get(path)
            if joint is None or path in self._unsimulated or joint.kind != "spherical":
                continue
            if any(d.drive is not None for d in joint.dofs):
                out.append(
                    f"{path}: a spherical joint outside an articulation's tree: its drives are ignored, as PhysX "
                    "reads none on one"
                )
        return out

    @property
    def free_bodies(self) -> list[str]:
        return list(self.description.free_bodies)

    @property
    def constraints(self) -> list[str]:
        """Joints solved as constraints rather than tree joints (loop joints, joints between articulations)."""
        return list(self.description.constraints)

    # ---- topology changes (usdart.topology) --------------------------------------------------------------
    def sync(self) -> None:
        """Re-read the stage after edits (prims added, removed or changed: by you, or by `remove` / `add`) and
        rebuild the scene in place: what still exists keeps its state in every world (bit for bit where its
        DOFs are unchanged), new articulations and bodies start as authored, removed ones are gone (see
        usdart.topology). Time, time step, integrator, solver, contacts, momentum and divergence settings stay;
        `articulations` and `free_body()` give new objects. Per-world parameters go back to the stage's.
        A scene batched from several stages (`batch`) has no one stage to re-read and refuses."""
        if self._initial is not None:
            raise UsdartError(f"{self._source}: a scene batched from several stages cannot re-read its stage")
        saved = topology.save([*self.articulations, *self._free.values(), *self._kinematic.values()])
        kept = dict(
            time=self.time,
            time_step=self.time_step,
            solver=self.solver,
            external_forces_every_iteration=self.external_forces_every_iteration,
            contacts_enabled=self.contacts_enabled,
            conserve_momentum=self.conserve_momentum,
            divergence_speed=self.divergence_speed,
        )
        stage, description = read_stage(self.stage, semantics=self.description.settings.semantics)
        self.__init__(stage, description, self.worlds, self.integrator)  # the one construction path
        for name, value in kept.items():
            setattr(self, name, value)
        topology.restore([*self.articulations, *self._free.values(), *self._kinematic.values()], saved)

    def remove(self, path: str) -> None:
        """Take the articulation (any of its links or its root-API prim), free body or kinematic body at `path`
        out of the scene: its links and every joint on them are deactivated, and ArticulationRootAPI taken off
        an ancestor that carried it, in the stage's session layer (never saved to your files); then `sync`."""
        members = [a for a in self.articulations if str(path) in (*a.desc.links, a.desc.api_prim)]
        member = members[0] if members else self._kinematic.get(str(path)) or self.free_body(path)
        links = set(member.desc.links)
        with Usd.EditContext(self.stage, self.stage.GetSessionLayer()):
            for prim in list(self.stage.Traverse()):
                joint = UsdPhysics.Joint(prim)
                if (
                    joint
                    and {str(t) for r in (joint.GetBody0Rel(), joint.GetBody1Rel()) for t in r.GetTargets()} & links
                ):
                    prim.SetActive(False)
            for link in links:
                if (prim := self.stage.GetPrimAtPath(link)) and prim.IsActive():
                    prim.SetActive(False)
            api = self.stage.GetPrimAtPath(member.desc.api_prim or "/")
            if api and api.IsActive() and api.HasAPI(UsdPhysics.ArticulationRootAPI):  # an ancestor of the links
                api.RemoveAppliedSchema("PhysicsArticulationRootAPI")
        self.sync()

    def add(self, source, path: str, prim: str | None = None) -> None:
        """Reference prim `prim` (default: the file's defaultPrim) of the USD file `source` (a robot, a prop)
        at `path` in the stage's session layer (never saved to your files), then `sync`: what it brings
        starts as authored."""
        layer = Sdf.Layer.FindOrOpen(os.fspath(source))
        if layer is None:
            raise UsdartError(f"{os.fspath(source)}: cannot be opened as a USD layer")
        if prim is None and not layer.defaultPrim:
            raise UsdartError(f"{os.fspath(source)}: has no defaultPrim; say which prim to add (prim=...)")
        if prim is not None and not layer.GetPrimAtPath(str(prim)):
            raise UsdartError(f"{os.fspath(source)}: has no prim {prim}")
        with Usd.EditContext(self.stage, self.stage.GetSessionLayer()):
            references = self.stage.DefinePrim(str(path)).GetReferences()
            references.AddReference(os.fspath(source), Sdf.Path(str(prim)) if prim else Sdf.Path())
        self.sync()

    def view(self, pattern: str = "*") -> ArticulationView:
        """The articulations whose root link or root-API prim path matches `pattern` (fnmatch: `*`, `?`,
        `[...]`), all of one structure, in every world: see `ArticulationView`."""
        return ArticulationView(select_articulations(self.articulations, str(pattern)), str(pattern))

    def articulation(self, path: str) -> Articulation:
        """The articulation whose root link, any link, or root-API prim is `path`."""
        path = str(path)
        for art in self.articulations:
            if path in art.desc.links or path == art.desc.api_prim:
                return art
        raise UsdartError(f"{path}: not a link or root of any articulation on this stage")

    def summary(self) -> dict:
        s = self.description.settings
        return dict(
            articulations=[a.summary() for a in self.articulations],
            free_bodies=self.free_bodies,
            kinematic_bodies=self.kinematic_bodies,
            # the shapes that collide, by kind (static ones included)
            colliders={kind: sum(c.shape == kind for c in self._colliders) for kind in L.SHAPE_NAMES}
            | {"static": sum(c.body is None for c in self._colliders)},
            scene=dict(
                gravity=s.gravity.tolist(),
                time_step=s.time_step,
                meters_per_unit=s.meters_per_unit,
                kilograms_per_unit=s.kilograms_per_unit,
            ),
            warnings=self.warnings,
        )


def load(source, worlds: int = 1, integrator: str = "euler", strict: bool = False, semantics: str = "physx") -> Scene:
    """Import a USD stage (file path or open `Usd.Stage`) into a `Scene`; `worlds` independent copies of
    its state are stepped together (parameter sweeps, learning). `strict`: a sublayer, reference or payload
    that cannot be loaded is an error, not a warning. `semantics`: "physx" (default) reads the stage as
    PhysX simulates it: PhysxRigidBodyAPI's fallbacks on bodies without the API (angular damping 0.05,
    100 rad/s), 1 mass unit for a body without mass, Newton schema joint attributes as ovphysx reads them
    (seeds of the PhysX per-axis values); "newton" as
    UsdPhysics and the Newton schema define it (no damping unless authored, massless frames, Newton
    armature/damping/friction/velocity limits), as MuJoCo and Pinocchio models of the same robot have it."""
    if int(worlds) < 1:
        raise UsdartError(f"worlds must be at least 1, got {worlds}")
    if semantics not in ("physx", "newton"):
        raise UsdartError(f"unknown semantics {semantics!r} (use 'physx' or 'newton')")
    stage, description = read_stage(source, strict=strict, semantics=semantics)
    return Scene(stage, description, int(worlds), integrator)


def batch(scenes: list[Scene]) -> Scene:
    """One scene whose world k is scenes[k] (each a one-world scene of the same structure: the same
    articulations, joints, DOFs, rows and shapes, the same time step and settings; parameters, joint frames,
    masses, gravity and initial states may differ). Stepping it gives each world exactly the motion its
    scene alone would have. Raises UsdartError naming the first stage that does not fit."""
    if not scenes:
        raise UsdartError("batch needs at least one scene")
    first = scenes[0]
    if any(s.worlds != 1 for s in scenes):
        raise UsdartError("batch takes one-world scenes (load each stage with worlds=1)")
    out = Scene(first.stage, first.description, len(scenes), first.integrator)
    out.solver, out.time_step = first.solver, first.time_step
    out.external_forces_every_iteration = first.external_forces_every_iteration
    for w, scene in enumerate(scenes[1:], 1):
        out._adopt_world(w, scene)
    out._initial = tuple(type(r)(*(a.copy() for a in r)) for r in (out._engine.state, out._engine.control))
    return out


def load_batch(sources, integrator: str = "euler", strict: bool = False, semantics: str = "physx") -> Scene:
    """Import several stages of one structure as the worlds of one scene (see `batch`)."""
    return batch([load(s, 1, integrator, strict, semantics) for s in sources])


def _batch_difference(scene: Scene, other: Scene) -> str | None:
    """Why `other` cannot be a world of `scene`'s batch (None when it can)."""
    pairs = (
        ("articulations", [a.root_link for a in scene.articulations], [a.root_link for a in other.articulations]),
        ("DOFs", [a.dof_names for a in scene.articulations], [a.dof_names for a in other.articulations]),
        ("free bodies", scene.free_bodies, other.free_bodies),
        ("time step", scene.time_step, other.time_step),
        ("solver", scene.solver, other.solver),
        ("integrator", scene.integrator, other.integrator),
    )
    for what, mine, theirs in pairs:
        if mine != theirs:
            return f"its {what} differ ({theirs} against {mine})"
    settings = scene._engine.control.tree_settings, other._engine.control.tree_settings
    if not np.array_equal(*settings, equal_nan=True):
        return "its articulation settings differ (sleep threshold, solver, momentum or divergence settings)"
    return structure_difference(scene._engine.model, other._engine.model)


def _single_body(body) -> ArticulationDesc:
    """A free or kinematic body as a one-link floating tree with its own solver iterations; no constraint-force
    mixing (PhysX has it for articulation links only). A kinematic body's mass never acts: one without mass or
    inertia gets 1 kg and a unit inertia, so that its tree is well formed."""
    body = dataclasses.replace(body, cfm_scale=0.0)
    if body.kinematic and (body.mass <= 0 or np.linalg.eigvalsh(0.5 * (body.inertia + body.inertia.T)).min() <= 0):
        body = dataclasses.replace(body, mass=1.0, inertia=np.eye(3))
    return ArticulationDesc(
        api_prim=body.path,
        root_link=body.path,
        fixed_base=False,
        links=[body.path],
        link_parents=[-1],
        bodies=[body],
        joints=[None],
        solver_position_iterations=body.solver_position_iterations,
        solver_velocity_iterations=body.solver_velocity_iterations,
        sleep_threshold=body.sleep_threshold,
        free_body=True,
    )
