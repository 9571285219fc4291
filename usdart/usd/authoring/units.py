"""SI -> stage units: the exact inverse of the importer's conversions (usdart/usd/importer/joints.py, coupling.py).

USD stores lengths in `metersPerUnit`, masses in `kilogramsPerUnit`, angles in degrees, and angular
gains per degree. Each factor below is "SI value of one stage unit", the number the importer multiplies
by; authoring divides by it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pxr import Usd, UsdGeom, UsdPhysics

DEG = math.pi / 180.0  # radians per degree


@dataclass(frozen=True)
class DofUnits:
    """SI value of one stage unit of each quantity of one degree of freedom."""

    angular: bool
    position: float  # rad or m
    effort: float  # N m or N
    inertia: float  # kg m^2 or kg (armature)
    meters_per_unit: float

    def drive_gain(self, acceleration: bool) -> float:
        """SI value of one stage unit of drive stiffness (per position) or damping (per velocity)."""
        gain_units = 1.0 if acceleration else self.effort / (1.0 if self.angular else self.meters_per_unit)
        return gain_units * ((1.0 / DEG) if self.angular else 1.0)


@dataclass(frozen=True)
class StageUnits:
    meters_per_unit: float
    kilograms_per_unit: float

    @classmethod
    def of(cls, stage: Usd.Stage) -> StageUnits:
        return cls(float(UsdGeom.GetStageMetersPerUnit(stage)), float(UsdPhysics.GetStageKilogramsPerUnit(stage)))

    def dof(self, angular: bool) -> DofUnits:
        mpu, kpu = self.meters_per_unit, self.kilograms_per_unit
        if angular:
            return DofUnits(True, DEG, kpu * mpu * mpu, kpu * mpu * mpu, mpu)
        return DofUnits(False, mpu, kpu * mpu, kpu, mpu)
