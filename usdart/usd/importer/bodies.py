"""Rigid bodies: world pose, initial velocity, PhysxRigidBodyAPI settings and mass properties.

Mass follows UsdPhysics: an authored positive `physics:mass` wins; otherwise the colliders' masses
(volume x density, density from the collider's MassAPI, then the body's MassAPI, then the bound
physics material, then 1000 kg/m^3). An authored centre of mass and diagonal inertia win over the
collider-derived ones; collider inertia is rescaled to an authored mass. With no colliders and no
inertia, a positive mass gets the inertia of a 0.1 m solid sphere (UsdPhysics' fallback, with a
warning). A body that resolves to no mass (0 or none authored, no collider) gets PhysX's fallback of 1
mass unit with the authored centre of mass and inertia, else the sphere's (measured on ovphysx: it moves
as a 1 kg body with them, to 1e-6 rad; the URDF converter writes such bodies, e.g. panda_link8); with
`semantics = "newton"` it is a massless frame instead (allowed where it is welded to a massive
link, rejected elsewhere when the articulation is built).

PhysxRigidBodyAPI's values apply to every body, its schema fallbacks where the API is not applied (angular
damping 0.05, maxAngularVelocity 5729.58 deg/s = 100 rad/s, ...): PhysX simulates a plain UsdPhysics body
with them (measured on ovphysx: a pendulum without the API is 6.9e-3 rad from usdart without them, 1e-6
with). `semantics = "newton"` (usdart.load) gives bodies without the API no damping and no velocity
limits, as UsdPhysics alone (and MuJoCo or Pinocchio) would. An unauthored sleepThreshold is PhysX's units-
scaled default 0.005 m^2/s^2 whether the API is applied or not (ovphysx's PhysxRigidBodyAPI population; an
articulation's applied PhysxArticulationAPI instead keeps the schema's 5e-5, usdart.usd.importer.coupling).
Initial velocities are read in world axes (Isaac Sim's default), the angular one in deg/s.

A conveyor's surface velocity (PhysxSurfaceVelocityAPI; without it, a kinematic body's nonzero
physics:velocity / angularVelocity, PhysX's legacy form, in world axes) as ovphysx applies it (measured): the
angular part in deg/s about the body's origin (not its centre of mass), both in the body's axes where
surfaceVelocityLocalSpace (the default), the linear one then scaled by the body's world scale too.
"""

from __future__ import annotations

import numpy as np
from pxr import Usd, UsdPhysics, UsdShade

from ...core.description import BodyDesc, Pose, SceneSettings
from ...core.frames import decompose, matrix_to_quat, quat_to_matrix
from ...errors import PhysicsImportError
from .shape_mass import MassProperties, collider_mass_properties, combine
from .transforms import WorldTransforms
from .usd_values import PHYSICAL_SCALE, SDK_SLEEP_THRESHOLD, applied_schemas, authored, read, read_physx

DEFAULT_DENSITY = 1000.0  # kg/m^3
PHYSX_FALLBACK_MASS = 1.0  # stage mass units: what PhysX gives a body that resolves to no mass
FALLBACK_SPHERE_RADIUS = 0.1  # m


def read_body(
    prim: Usd.Prim,
    colliders: list[Usd.Prim],
    transforms: WorldTransforms,
    settings: SceneSettings,
    warnings: list[str],
) -> BodyDesc:
    mpu = settings.meters_per_unit
    world = transforms.matrix(prim)
    rot, t, scale = decompose(world)
    pose = Pose(position=t * mpu, orientation=matrix_to_quat(rot))
    mass, com, inertia = _mass_properties(prim, colliders, transforms, scale, settings, warnings)
    body = BodyDesc(
        path=str(prim.GetPath()),
        pose=pose,
        linear_velocity=np.asarray(read(prim, "physics:velocity", np.zeros(3)), float) * mpu,
        angular_velocity=np.radians(np.asarray(read(prim, "physics:angularVelocity", np.zeros(3)), float)),
        mass=mass,
        com=com,
        inertia=inertia,
        kinematic=bool(read(prim, "physics:kinematicEnabled", False)),
    )
    surface = _surface_velocity(prim, body, scale, mpu)
    if surface is not None:
        body.surface_velocity, body.surface_angular_velocity, body.surface_local = surface
    if settings.semantics == "physx" or "PhysxRigidBodyAPI" in applied_schemas(prim):
        body.linear_damping = float(read_physx(prim, "physxRigidBody:linearDamping"))
        body.angular_damping = float(read_physx(prim, "physxRigidBody:angularDamping"))
        body.max_linear_velocity = float(read_physx(prim, "physxRigidBody:maxLinearVelocity")) * mpu
        body.max_angular_velocity = np.radians(float(read_physx(prim, "physxRigidBody:maxAngularVelocity")))
        body.disable_gravity = bool(read_physx(prim, "physxRigidBody:disableGravity"))
        # PhysX weighs a link's cfm by cfmScale / lengthScale (the tolerances' length, 1 / metersPerUnit stage
        # units): in SI that is cfmScale / metersPerUnit metres (measured: a centimetre stage's is 100 times)
        body.cfm_scale = float(read_physx(prim, "physxRigidBody:cfmScale")) / mpu
        body.gyroscopic = "physx" if read_physx(prim, "physxRigidBody:enableGyroscopicForces") else "none"
        body.solver_position_iterations = int(read_physx(prim, "physxRigidBody:solverPositionIterationCount"))
        body.solver_velocity_iterations = int(read_physx(prim, "physxRigidBody:solverVelocityIterationCount"))
        # unauthored, with or without the API: PhysX's units-scaled default, not the schema's 5e-5 (ovphysx's
        # population writes it; measured: an applied API leaving it unauthored sleeps as 0.005 authored)
        threshold = authored(prim, "physxRigidBody:sleepThreshold")
        body.sleep_threshold = SDK_SLEEP_THRESHOLD if threshold is None else float(threshold) * mpu * mpu
    # contacts: Kit's parser default for the depenetration cap is 3 m/s whatever the stage unit
    depenetration = authored(prim, "physxRigidBody:maxDepenetrationVelocity")
    body.max_depenetration_velocity = 3.0 if depenetration is None else float(depenetration) * mpu
    impulse = authored(prim, "physxRigidBody:maxContactImpulse")
    body.max_contact_impulse = np.inf if impulse is None else float(impulse) * settings.kilograms_per_unit * mpu
    return body


def _surface_velocity(prim, body: BodyDesc, scale, mpu: float) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """(linear in m/s, angular in rad/s, in the body's axes) of the body's contact surfaces, or None (see the
    module docstring)."""
    if "PhysxSurfaceVelocityAPI" in applied_schemas(prim):
        if not read_physx(prim, "physxSurfaceVelocity:surfaceVelocityEnabled"):
            return None
        linear = np.asarray(read_physx(prim, "physxSurfaceVelocity:surfaceVelocity"), float)
        angular = np.radians(np.asarray(read_physx(prim, "physxSurfaceVelocity:surfaceAngularVelocity"), float))
        local = bool(read_physx(prim, "physxSurfaceVelocity:surfaceVelocityLocalSpace"))
        return (linear * scale if local else linear) * mpu, angular, local
    if body.kinematic and (np.any(body.linear_velocity) or np.any(body.angular_velocity)):
        return body.linear_velocity.copy(), body.angular_velocity.copy(), False
    return None


def _mass_properties(prim, colliders, transforms: WorldTransforms, scale, settings: SceneSettings, warnings):
    mpu, kpu = settings.meters_per_unit, settings.kilograms_per_unit
    path = prim.GetPath()
    mass_attr = authored(prim, "physics:mass")
    body_density = _density(prim, settings)
    com_attr = authored(prim, "physics:centerOfMass")
    if com_attr is not None and not np.all(np.isfinite(com_attr)):
        com_attr = None  # -inf sentinel: not specified
    diag = authored(prim, "physics:diagonalInertia")
    axes = read(prim, "physics:principalAxes", np.array([1.0, 0.0, 0.0, 0.0]))

    fully_authored = (
        mass_attr is not None
        and mass_attr > 0
        and com_attr is not None
        and diag is not None
        and np.any(np.asarray(diag) != 0)
    )
    parts = []
    for collider in [] if fully_authored else colliders:
        if read(collider, "physics:collisionEnabled", True) is False:
            continue
        # checked: a collider placed beyond physical scales is an error, not a collider to ignore
        collider_world = transforms.matrix(collider)
        try:
            unit = collider_mass_properties(collider, collider_world, transforms.matrix(prim), mpu)
        except ValueError as exc:
            warnings.append(f"{collider.GetPath()}: collider ignored for mass ({exc})")
            continue
        parts.append(_collider_mass(collider, unit, body_density, settings))
    from_colliders = combine(parts) if parts else None
    if from_colliders is not None and from_colliders.mass <= 0:
        from_colliders = None

    if mass_attr is not None and mass_attr > 0:
        mass = mass_attr * kpu
    elif from_colliders is not None:
        mass = from_colliders.mass
    elif settings.semantics == "physx":
        mass = PHYSX_FALLBACK_MASS * kpu
        warnings.append(
            f"{path}: no mass (none authored, or 0, and no collider); PhysX's fallback of "
            f"{PHYSX_FALLBACK_MASS:g} mass unit is used"
        )
    else:
        mass = 0.0  # massless unless authored: checked where the body is used

    if com_attr is not None:
        com = np.asarray(com_attr, float) * scale * mpu
    elif from_colliders is not None:
        com = from_colliders.com
    else:
        com = np.zeros(3)

    if diag is not None and np.any(np.asarray(diag) != 0):
        diag = np.asarray(diag, float)
        r = quat_to_matrix(axes)
        inertia = r @ np.diag(diag * kpu * mpu * mpu) @ r.T
    elif from_colliders is not None:
        shifted = MassProperties(from_colliders.mass, from_colliders.com, from_colliders.inertia)
        inertia = _inertia_about(shifted, com) * (mass / from_colliders.mass)
    elif mass > 0:
        inertia = np.eye(3) * 0.4 * mass * FALLBACK_SPHERE_RADIUS**2
        warnings.append(
            f"{path}: no colliders and no authored inertia; using the inertia of a "
            f"{FALLBACK_SPHERE_RADIUS} m solid sphere of {mass:g} kg (UsdPhysics fallback)"
        )
    else:
        inertia = np.zeros((3, 3))
    _check_mass_properties(path, mass, com, inertia, warnings)
    return float(mass), com, inertia


def _collider_mass(collider, unit: MassProperties, body_density, settings: SceneSettings) -> MassProperties:
    """Unit-density collider properties -> with its own mass or density, as UsdPhysics orders them."""
    collider_mass = authored(collider, "physics:mass") if collider.HasAPI(UsdPhysics.MassAPI) else None
    if collider_mass is not None and collider_mass > 0 and unit.mass > 0:
        return unit.scaled(collider_mass * settings.kilograms_per_unit / unit.mass)
    density = _density(collider, settings) if collider.HasAPI(UsdPhysics.MassAPI) else None
    if density is None:
        density = body_density
    if density is None:
        density = _material_density(collider, settings)
    return unit.scaled(DEFAULT_DENSITY if density is None else density)


def _density(prim, settings: SceneSettings):
    value = authored(prim, "physics:density")
    if value is None or value <= 0:
        return None
    return value * settings.kilograms_per_unit / settings.meters_per_unit**3


def _material_density(collider, settings: SceneSettings):
    binding = UsdShade.MaterialBindingAPI(collider)
    material, _ = binding.ComputeBoundMaterial("physics")
    if not material:
        return None
    return _density(material.GetPrim(), settings)


def _inertia_about(mp: MassProperties, point) -> np.ndarray:
    """Inertia of `mp` about `point` (parallel-axis theorem from its COM)."""
    d = np.asarray(point, float) - mp.com
    return mp.inertia + mp.mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))


def _check_mass_properties(path, mass: float, com: np.ndarray, inertia: np.ndarray, warnings: list[str]) -> None:
    finite = np.isfinite(mass) and np.all(np.isfinite(com)) and np.all(np.isfinite(inertia))
    if not finite or np.abs(com).max() > PHYSICAL_SCALE:
        raise PhysicsImportError(
            path,
            "its mass properties are not finite or beyond physical scales (collider sizes, placement, density or mass)",
        )
    eig = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if eig.min() < -1e-12 * max(1.0, abs(eig.max())):
        raise PhysicsImportError(path, f"inertia tensor is not positive semi-definite (eigenvalues {eig})")
    # a solid body has I1 + I2 >= I3; converted assets sometimes do not (PhysX accepts them, so do we)
    if eig.max() > 0 and eig[0] + eig[1] < eig[2] * (1 - 1e-6):
        warnings.append(f"{path}: principal moments {tuple(np.round(eig, 9))} violate I1 + I2 >= I3")
