"""`usdart warmup`: compile every kernel a session can call into numba's cache, ahead of the first run.

A first run otherwise spends a minute or more compiling the step and the dynamics functions. Run once
after installing (an install from source does it while building: see setup.py), or to fill a cache
folder of your own (`NUMBA_CACHE_DIR`). The kernels' types do not depend on the stage (one compiled
version per kernel, whatever the model), so one small stage that reaches every entry point fills the
cache for all: a floating articulation with a driven, limited hinge and a ball joint, a fixed-base
pendulum, a free body, colliders and a ground, stepped with TGS and PGS (and RK4 when asked: its step is
a second one, about 40 s more), then every articulation-cache function and a view's batched dynamics (in
a second process at the same time where there are two cores).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

from pxr import Sdf, Usd

STAGE = """#usda 1.0
(
    defaultPrim = "World"
    metersPerUnit = 1
    kilogramsPerUnit = 1
    upAxis = "Z"
)
def Xform "World"
{
    def PhysicsScene "physicsScene"
    {
    }
    def Plane "ground" (prepend apiSchemas = ["PhysicsCollisionAPI"])
    {
        uniform token axis = "Z"
    }
    def Xform "robot" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
    {
        def Cube "base" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI", "PhysicsMassAPI"])
        {
            double size = 0.2
            float physics:mass = 2
            double3 xformOp:translate = (0, 0, 0.5)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        def Capsule "arm" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI", "PhysicsMassAPI"])
        {
            double radius = 0.05
            double height = 0.3
            uniform token axis = "X"
            float physics:mass = 1
            double3 xformOp:translate = (0.3, 0, 0.5)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        def Sphere "hand" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI", "PhysicsMassAPI"])
        {
            double radius = 0.06
            float physics:mass = 0.5
            double3 xformOp:translate = (0.55, 0, 0.5)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        def PhysicsRevoluteJoint "hinge" (prepend apiSchemas = ["PhysicsDriveAPI:angular"])
        {
            rel physics:body0 = </World/robot/base>
            rel physics:body1 = </World/robot/arm>
            point3f physics:localPos0 = (0.1, 0, 0)
            point3f physics:localPos1 = (-0.2, 0, 0)
            uniform token physics:axis = "Y"
            float physics:lowerLimit = -90
            float physics:upperLimit = 90
            float drive:angular:physics:stiffness = 10
            float drive:angular:physics:damping = 1
            float drive:angular:physics:targetPosition = 30
        }
        def PhysicsSphericalJoint "wrist"
        {
            rel physics:body0 = </World/robot/arm>
            rel physics:body1 = </World/robot/hand>
            point3f physics:localPos0 = (0.2, 0, 0)
            point3f physics:localPos1 = (-0.05, 0, 0)
        }
    }
    def Xform "pendulum" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
    {
        def Sphere "bob" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
            double radius = 0.05
            float physics:mass = 1
            double3 xformOp:translate = (0, -1, 1)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        def PhysicsRevoluteJoint "pivot"
        {
            rel physics:body1 = </World/pendulum/bob>
            point3f physics:localPos0 = (0, -1, 1.5)
            point3f physics:localPos1 = (0, 0, 0.5)
            uniform token physics:axis = "X"
        }
    }
    def Sphere "ball" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI", "PhysicsMassAPI"])
    {
        double radius = 0.1
        float physics:mass = 1
        double3 xformOp:translate = (0, 1, 0.3)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
}
"""


def _stage() -> Usd.Stage:
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.ImportFromString(STAGE)
    return Usd.Stage.Open(layer)


def _stepping(rk4: bool, echo, began: float) -> None:
    """The step (Euler, TGS and PGS; RK4's too when asked) for one world and for a block of two."""
    from .. import load

    stage = _stage()
    for worlds in (1, 2):
        scene = load(stage, worlds=worlds)
        for solver in ("TGS", "PGS"):
            scene.solver = solver
            scene.step(2)
        if rk4:
            scene.integrator = "rk4"
            scene.step(2)
        if echo:
            echo(f"stepping, {worlds} world{'s' if worlds > 1 else ''}: {time.perf_counter() - began:.1f} s")


def _dynamics() -> None:
    """Every articulation-cache function and a view's batched dynamics."""
    from .. import load
    from ..cache import CacheFlag

    scene = load(_stage(), worlds=2)
    for art in scene.articulations:  # the robot's ball joint takes another way into the cache than the hinge
        cache = art.create_cache()
        art.copy_internal_state_to_cache(cache, CacheFlag.ALL)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # the PhysX 5 renames of two functions
            for name in sorted(n for n in dir(art) if n.startswith("compute_") and n != "compute_coriolis_force"):
                if name == "compute_lambda":
                    art.compute_lambda(art.create_cache(), cache, cache.joint_force)
                elif name != "compute_centroidal_momentum_matrix" or not art.fixed_base:  # floating bases only
                    getattr(art, name)(cache)
        art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    scene.view(scene.articulations[0].root_link).mass_matrices()  # views' batched dynamics: one kernel for all


def _start_helper() -> subprocess.Popen | None:
    """A second process compiling the dynamics functions into the same cache folder while this one compiles
    the step (numba compiles one function at a time per process); None on a single core."""
    if (os.cpu_count() or 1) < 2:
        return None
    package_parent = str(Path(__file__).resolve().parents[2])  # this very usdart, whatever sys.path says
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")])))
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "usdart.app.warmup", "--dynamics"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def warmup(rk4: bool = False, echo=None) -> float:
    """Compile (or load from the cache) every kernel, RK4's step too when `rk4`; returns the seconds it took.
    `echo(str)` reports progress. With two cores or more, a helper process compiles the dynamics functions
    meanwhile; this process then loads them from the cache (or compiles what the helper did not)."""
    began = time.perf_counter()
    helper = _start_helper()
    try:
        _stepping(rk4, echo, began)
        if helper is not None:
            helper.wait()
    finally:
        if helper is not None and helper.poll() is None:
            helper.kill()
    _dynamics()
    seconds = time.perf_counter() - began
    if echo:
        echo(f"dynamics functions: {seconds:.1f} s")
    return seconds


if __name__ == "__main__":  # the build step (setup.py), and the helper process (--dynamics)
    if sys.argv[1:] == ["--dynamics"]:
        _dynamics()
    else:
        warmup(echo=print)
