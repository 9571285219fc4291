"""The public `Scene`: everything simulated on one stage, and `load`, its entry point."""
from __future__ import annotations

import numpy as np

from .articulation import Articulation
from .errors import UsdartError
from .importer import read_stage
from .importer.description import SceneDescription


class Scene:
    """Articulations (sorted by root link path), free bodies and scene settings of a stage."""

    def __init__(self, stage, description: SceneDescription):
        self.stage = stage
        self.description = description
        self.articulations = [Articulation(a, description.settings.gravity, description.joints)
                              for a in description.articulations]

    @property
    def gravity(self) -> np.ndarray:
        return self.description.settings.gravity.copy()

    @property
    def time_step(self) -> float:
        return self.description.settings.time_step

    @property
    def warnings(self) -> list[str]:
        return list(self.description.warnings)

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


def load(source) -> Scene:
    """Import a USD stage (file path or open `Usd.Stage`) into a `Scene`."""
    stage, description = read_stage(source)
    return Scene(stage, description)
