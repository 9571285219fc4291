"""The public `Scene`: everything simulated on one stage, and `load`, its entry point."""
from __future__ import annotations

import numpy as np

from .articulation import Articulation
from .coupled import coupled_groups
from .errors import UsdartError
from .importer import read_stage
from .importer.description import ArticulationDesc, SceneDescription


class Scene:
    """Articulations (sorted by root link path), free bodies and scene settings of a stage."""

    def __init__(self, stage, description: SceneDescription, worlds: int = 1, integrator: str = "euler"):
        self.stage = stage
        self.description = description
        self.worlds = int(worlds)
        self.time = 0.0
        gravity, joints = description.settings.gravity, description.joints
        self.articulations = [Articulation(a, gravity, joints, self.worlds) for a in description.articulations]
        # a free rigid body moves like a one-link floating articulation
        self._free = {path: Articulation(_single_body(description.bodies[path]), gravity, None, self.worlds)
                      for path in description.free_bodies if not description.bodies[path].kinematic}
        self.integrator = integrator
        members = [*self.articulations, *self._free.values()]
        constraint_joints = [description.joints[p] for p in description.constraints if p in description.joints]
        self._groups = coupled_groups(members, constraint_joints, self.worlds)
        grouped = {id(m) for g in self._groups for m in g.members}
        self._solo = [m for m in members if id(m) not in grouped]
        coupled = {p for g in self._groups for p in g.joint_paths}
        self._unsimulated = [p for p in description.constraints
                             if p not in coupled and not self._internal_loop(description.joints.get(p))]

    def _internal_loop(self, joint) -> bool:
        """Loop joints inside one articulation (or to the world) are that articulation's own rows."""
        if joint is None or joint.kind == "distance":
            return False
        return any(all(b is None or b in art.desc.links for b in joint.bodies()) for art in self.articulations)

    @property
    def integrator(self) -> str:
        """"euler" (semi-implicit, PhysX-like; the default) or "rk4" (smooth dynamics by RK4)."""
        return self._integrator

    @integrator.setter
    def integrator(self, name: str) -> None:
        if name not in ("euler", "rk4"):
            raise UsdartError(f"unknown integrator {name!r} (use 'euler' or 'rk4')")
        self._integrator = name
        for art in (*self.articulations, *self._free.values()):
            art.integrator = name

    def step(self, n: int = 1) -> None:
        """Advance every articulation and free body, in every world, by n steps of `time_step`."""
        if n < 0:
            raise UsdartError(f"step count must not be negative, got {n}")
        for member in self._solo:
            member.step(self.time_step, n)
        for group in self._groups:
            group.step(self.time_step, n, self.integrator == "rk4")
        self.time += n * self.time_step

    def set_drive_target(self, dof: str, position: float | None = None, velocity: float | None = None,
                         world: int | None = None) -> None:
        """Drive targets (SI, radians) of the DOF named `dof` (joint path, or `<joint>:rotX` ...), in one
        world or all."""
        for art in self.articulations:
            if str(dof) in art.dof_names:
                art.set_drive_target(dof, position, velocity, world)
                return
        raise UsdartError(f"{dof}: not a DOF of any articulation on this stage")

    def body_transform(self, path: str, world: int = 0) -> np.ndarray:
        """World pose [x, y, z, qw, qx, qy, qz] of a free rigid body's frame."""
        if str(path) not in self._free:
            raise UsdartError(f"{path}: not a free (non-articulated, dynamic) rigid body of this stage")
        return self._free[str(path)].link_transforms(world)[0]

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
        return list(self.description.warnings) + [
            f"{path}: distance joint, or joint to a kinematic or unknown body: imported but not simulated yet"
            for path in self._unsimulated]

    @property
    def free_bodies(self) -> list[str]:
        return list(self.description.free_bodies)

    @property
    def constraints(self) -> list[str]:
        """Joints solved as constraints rather than tree joints (loop joints, joints between articulations)."""
        return list(self.description.constraints)

    def articulation(self, path: str) -> Articulation:
        """The articulation whose root link, any link, or root-API prim is `path`."""
        path = str(path)
        for art in self.articulations:
            if path in art.desc.links or path == art.desc.api_prim:
                return art
        raise UsdartError(f"{path}: not a link or root of any articulation on this stage")

    def summary(self) -> dict:
        s = self.description.settings
        return dict(articulations=[a.summary() for a in self.articulations], free_bodies=self.free_bodies,
                    scene=dict(gravity=s.gravity.tolist(), time_step=s.time_step, meters_per_unit=s.meters_per_unit,
                               kilograms_per_unit=s.kilograms_per_unit),
                    warnings=self.warnings)


def load(source, worlds: int = 1, integrator: str = "euler") -> Scene:
    """Import a USD stage (file path or open `Usd.Stage`) into a `Scene`; `worlds` independent copies of
    its state are stepped together (parameter sweeps, learning)."""
    if int(worlds) < 1:
        raise UsdartError(f"worlds must be at least 1, got {worlds}")
    stage, description = read_stage(source)
    return Scene(stage, description, int(worlds), integrator)


def _single_body(body) -> ArticulationDesc:
    return ArticulationDesc(api_prim=body.path, root_link=body.path, fixed_base=False, links=[body.path],
                            link_parents=[-1], bodies=[body], joints=[None])
