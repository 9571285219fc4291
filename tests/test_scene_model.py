"""The scene model: one model, one kernel call, and results that do not depend on the company.

A scene packs every articulation, free body and joint between them into one `Model` and steps all of it
(in every world) with a single numba call. These tests pin down what that design promises:

* each kernel compiles once: a second signature would mean a second multi-second compile (and usually a
  type that drifts between callers, e.g. a layout or a literal);
* the kernels, model, state and engine never import pxr (they must run without USD);
* an articulation moves bit for bit the same alone, as one world of a batch, as one member of a bigger
  scene, stepped N steps in one call or one step per call: islands are independent, and indexing a tree
  inside the flat tables must not change a single float;
* two articulations joined by a joint plus fifty free bodies are stepped by one kernel call, the joint
  holds, and the free bodies fall exactly as semi-implicit Euler says.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from builders import body, joint, new_stage, root_api
from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags, compile_extra
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.typed_passes import NopythonTypeInference
from pxr import Sdf, Usd
from test_stepping import _double_pendulum_stage

import usdart
import usdart.core.kernels
from usdart import Articulation, CacheFlag
from usdart.core.frames import quat_to_matrix
from usdart.core.kernels import entry

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
ARM = ROOT / "sample_stages/arm_with_gripper.usda"
STEP_KERNELS = ("entry.step", "step.world_step", "step.world_step_rk4")


# ---- 1. every kernel compiles once ---------------------------------------------------------------------------
def _kernel_dispatchers() -> dict[str, object]:
    """Every numba dispatcher defined in (or imported into) a module of usdart.core.kernels, by qualified name."""
    found = {}
    for info in pkgutil.iter_modules(usdart.core.kernels.__path__, "usdart.core.kernels."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if hasattr(obj, "signatures") and hasattr(obj, "py_func"):
                found[f"{obj.py_func.__module__}.{obj.py_func.__qualname__}"] = obj
    return found


@register_pass(mutates_CFG=False, analysis_only=True)
class _StopAfterTyping(FunctionPass):
    _name = "usdart_stop_after_typing"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        state.cr = state.typemap  # any result ends the pipeline: nothing is lowered
        return False


class _TypingOnly(CompilerBase):
    """numba's untyped passes and type inference, without code generation."""

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_untyped_pipeline(self.state)
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(_StopAfterTyping, "stop after typing")
        pm.finalize()
        return [pm]


def _type_callees(dispatchers) -> None:
    """A kernel loaded from numba's disk cache never types the kernels it calls, so in a warm-cache process
    their signatures stay empty and a double compile hides. Type every compiled signature again (callees
    compile or load at the argument types they are given) until no new signature appears."""
    typed = set()
    while todo := [(d, sig) for d in dispatchers for sig in d.signatures if (d, sig) not in typed]:
        for d, sig in todo:
            typed.add((d, sig))
            flags = Flags()
            d.targetdescr.options.parse_as_flags(flags, d.targetoptions)
            compile_extra(d.typingctx, d.targetctx, d.py_func, sig, None, flags, d.locals, pipeline_class=_TypingOnly)


def _differences(d) -> str:
    """The parameters whose types differ between a dispatcher's signatures."""
    names = list(inspect.signature(d.py_func).parameters)
    columns = zip(names, *d.signatures)
    return ", ".join(f"{name}: {' | '.join(map(str, types))}" for name, *types in columns if len(set(types)) > 1)


def _every_dynamics_function(art: Articulation) -> None:
    cache = art.create_cache()
    cache.joint_position[:] = np.linspace(-0.3, 0.3, art.dof_count)
    cache.joint_velocity[:] = 0.5
    cache.joint_acceleration[:] = 0.25
    cache.joint_force[:] = 1.0
    cache.external_forces[:] = 0.1
    for name in sorted(n for n in dir(art) if n.startswith("compute_") and n != "compute_coriolis_force"):
        if name == "compute_centroidal_momentum_matrix" and art.fixed_base:
            continue  # floating bases only (refused otherwise, as PhysX)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # the PhysX 5 renames (test_articulation_cache)
            if name == "compute_lambda":
                art.compute_lambda(art.create_cache(), cache, cache.joint_force)
            else:
                getattr(art, name)(cache)
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    art.copy_internal_state_to_cache(cache, CacheFlag.ALL)


def test_every_kernel_compiles_once():
    for worlds in (1, 3):
        scene = usdart.load(DATA / "panda/panda.usda", worlds=worlds)
        for _ in range(5):
            scene.step()
        scene.integrator = "rk4"
        scene.step(2)
        assert np.all(np.isfinite(scene.articulations[0].state.q))
    _every_dynamics_function(usdart.load(DATA / "panda/panda.usda").articulations[0])
    ant = usdart.load(DATA / "ant_free/ant_free.usda").articulations[0]
    assert not ant.fixed_base
    _every_dynamics_function(ant)
    pendulum = usdart.load(_double_pendulum_stage(True))
    pendulum.step(5)
    assert pendulum.body_transform("/World/l2")[2] < 0.0
    batch = usdart.load(DATA / "panda/panda.usda", worlds=2)  # views: every batched kind through one kernel
    view = batch.view(batch.articulations[0].root_link)
    for kind in ("jacobians", "mass_matrices", "gravity_compensation", "coriolis_compensation"):
        assert np.all(np.isfinite(getattr(view, kind)()))

    dispatchers = _kernel_dispatchers()
    assert {f"usdart.core.kernels.{name}" for name in STEP_KERNELS} <= set(dispatchers)
    _type_callees(dispatchers.values())
    offenders = {name: d for name, d in sorted(dispatchers.items()) if len(d.signatures) > 1}
    assert not offenders, "kernels compiled more than once:\n" + "\n".join(
        f"  {name} ({len(d.signatures)} signatures; differing: {_differences(d)})" for name, d in offenders.items()
    )
    for name in STEP_KERNELS:  # all were used above (Euler and RK4, one world and three)
        assert len(dispatchers[f"usdart.core.kernels.{name}"].signatures) == 1, name


# ---- 2. no USD below the scene ------------------------------------------------------------------------------
_WHO_IMPORTS_PXR = """
import sys, traceback

class Spy:  # on the first `import pxr`, print the usdart frames that asked for it
    def find_spec(self, name, path=None, target=None):
        if name == "pxr":
            frames = [f"{f.filename}:{f.lineno}" for f in traceback.extract_stack() if "usdart" in f.filename]
            print("pxr imported from", " <- ".join(reversed(frames)))
            sys.meta_path.remove(self)
        return None

sys.meta_path.insert(0, Spy())
import usdart.core.kernels.entry, usdart.core.model, usdart.core.state, usdart.core.engine
print("pxr loaded" if "pxr" in sys.modules else "pxr absent")
"""


def test_kernels_do_not_import_pxr():
    env = dict(os.environ, NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/nbc_helper"))
    done = subprocess.run(
        [sys.executable, "-c", _WHO_IMPORTS_PXR], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "pxr absent", done.stdout


# ---- 3. the same articulation, bit for bit, wherever it is stepped -------------------------------------------
STEPS = 50
ROBOT = "/World/robot/base"


def _kick(art: Articulation, world: int) -> None:
    """A common start away from rest: the arm moving towards new drive targets, the fingers driven
    against their limits (targets 0.1 m beyond the 0.04 m travel; the right finger's DOF runs negative)."""
    art.state.qd[world, :-2] = np.linspace(-1.5, 1.5, art.dof_count - 2)
    art.control.target_position[world, :-2] += 0.4
    art.control.target_position[world, -2:] = 0.1 * np.sign(art.state.q[world, -2:])


def _snapshot(art: Articulation, world: int = 0) -> dict[str, np.ndarray]:
    st = art.state
    return dict(
        q=st.q[world].copy(),
        qd=st.qd[world].copy(),
        root_pos=st.root_pos[world].copy(),
        root_quat=st.root_quat[world].copy(),
        link_pos=st.link_pos[world].copy(),
        link_rot=st.link_rot[world].copy(),
        link_transforms=art.link_transforms(world),
    )


def _assert_identical(a: dict, b: dict, what: str) -> None:
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=f"{what}: {key}")


def _add_pendulum(stage, root: str, x: float) -> None:
    """A fixed-base two-link chain (an articulation of its own) at x."""
    body(stage, f"{root}/base", pos=(x, 0, 1))
    body(stage, f"{root}/l1", pos=(x + 1, 0, 1), inertia=(0.02, 0.02, 0.02))
    body(stage, f"{root}/l2", pos=(x + 2, 0, 1), mass=0.5, inertia=(0.01, 0.01, 0.01))
    joint(stage, f"{root}/fix", None, f"{root}/base", kind="fixed", lp0=(x, 0, 1))
    root_api(stage, f"{root}/fix")
    joint(stage, f"{root}/j1", f"{root}/base", f"{root}/l1", axis="Y", lp1=(-1, 0, 0))
    joint(stage, f"{root}/j2", f"{root}/l1", f"{root}/l2", axis="Y", lp0=(0.5, 0, 0), lp1=(-0.5, 0, 0))


def _arm_in_company():
    """The arm sample plus an articulation sorted before it, and free bodies sorted before and after it."""
    stage = Usd.Stage.Open(Sdf.Layer.OpenAsAnonymous(str(ARM)))  # a private copy: the file's layer stays clean
    _add_pendulum(stage, "/World/a_pendulum", x=10.0)
    for i in range(3):
        body(stage, f"/World/box_{i}", pos=(-10.0 - 2 * i, 0, 3))
        body(stage, f"/World/zz_{i}", pos=(10.0 + 2 * i, 5, 3), mass=2.0)
    return stage


def test_api_step_batch_world_and_scene_member_are_bit_identical():
    alone = usdart.load(ARM)
    arm = alone.articulations[0]
    assert [n.rsplit("/", 1)[1] for n in arm.dof_names[-2:]] == ["left_finger_joint", "right_finger_joint"]
    start = _snapshot(arm)
    _kick(arm, 0)
    alone.step(STEPS)
    expected = _snapshot(arm)
    # the run is not trivial: the arm moved, and the fingers sit on their limits (drives, limits and
    # joint velocities all act)
    assert np.abs(expected["q"][:-2] - start["q"][:-2]).max() > 0.1
    assert expected["q"][-2:] == pytest.approx([0.04, -0.04], abs=1e-3)

    batch = usdart.load(ARM, worlds=4)
    arm4 = batch.articulations[0]
    for w in range(4):
        _kick(arm4, w)
        if w != 2:
            arm4.state.q[w] = start["q"] + 0.05 * (w - 2)
    batch.step(STEPS)
    _assert_identical(expected, _snapshot(arm4, 2), "world 2 of 4")
    for w in (0, 1, 3):
        assert np.abs(arm4.state.q[w] - expected["q"]).max() > 1e-3  # the other worlds did differ

    company = usdart.load(_arm_in_company())
    assert len(company.articulations) == 2 and len(company.free_bodies) == 6
    member = company.articulation(ROBOT)
    assert company.articulations.index(member) == 1  # not the first tree: its rows are offset in the tables
    _assert_identical(start, _snapshot(member), "member at load")
    _kick(member, 0)
    company.step(STEPS)
    _assert_identical(expected, _snapshot(member), "member of a bigger scene")
    assert company.body_transform("/World/zz_0")[2] < 2.5  # the company did move (fell 0.85 m)

    one_by_one = usdart.load(ARM)
    _kick(one_by_one.articulations[0], 0)
    for _ in range(STEPS):
        one_by_one.step(1)
    _assert_identical(expected, _snapshot(one_by_one.articulations[0]), "one step per call")

    # the member stepped on its own (Articulation.step: its island only) leaves the others where they are
    company = usdart.load(_arm_in_company())
    member, other = company.articulation(ROBOT), company.articulation("/World/a_pendulum/base")
    others_before = other.link_transforms(), company.body_transform("/World/box_0")
    _kick(member, 0)
    member.step(company.time_step, STEPS)
    _assert_identical(expected, _snapshot(member), "Articulation.step of a member")
    np.testing.assert_array_equal(other.link_transforms(), others_before[0])
    np.testing.assert_array_equal(company.body_transform("/World/box_0"), others_before[1])

    # a standalone Articulation (built from its description: no colliders) is the arm without contacts
    without = usdart.load(ARM)
    without.contacts_enabled = False
    _kick(without.articulations[0], 0)
    without.step(STEPS)
    standalone = Articulation(arm.desc, gravity=alone.gravity, joints=alone.description.joints)
    _kick(standalone, 0)
    standalone.step(alone.time_step, STEPS)
    _assert_identical(_snapshot(without.articulations[0]), _snapshot(standalone), "standalone Articulation(desc)")


# ---- 4. two joined articulations and fifty free bodies: one call ---------------------------------------------
FREE = 50


def _two_joined_chains_and_free_bodies():
    """Chains A (hinge at the origin) and B (hinge at x = 3), each base -> horizontal link -> hanging link;
    the hanging links' lower ends are 1 m apart and joined in the middle by a hinge excluded from the
    articulations: a planar five-bar linkage. Plus FREE free bodies far away."""
    st = new_stage()
    for name, x, side in (("a", 0.0, 1.0), ("b", 3.0, -1.0)):
        root = f"/World/{name}"
        body(st, f"{root}/base", pos=(x, 0, 0))
        body(st, f"{root}/upper", pos=(x + side, 0, 0), inertia=(0.02, 0.02, 0.02))
        body(st, f"{root}/lower", pos=(x + side, 0, -1), mass=0.5, inertia=(0.01, 0.01, 0.01))
        joint(st, f"{root}/fix", None, f"{root}/base", kind="fixed", lp0=(x, 0, 0))
        root_api(st, f"{root}/fix")
        joint(st, f"{root}/shoulder", f"{root}/base", f"{root}/upper", axis="Y", lp1=(-side, 0, 0))
        joint(st, f"{root}/elbow", f"{root}/upper", f"{root}/lower", axis="Y", lp1=(0, 0, 1))
    joint(
        st,
        "/World/link",
        "/World/a/lower",
        "/World/b/lower",
        axis="Y",
        lp0=(0.5, 0, 0),
        lp1=(-0.5, 0, 0),
        excluded=True,
    )
    for i in range(FREE):
        body(st, f"/World/free/f{i:02d}", pos=(20.0 + (i % 10), 2.0 * (i // 10), 10.0 + 0.1 * i))
    return st


def _counting(monkeypatch, calls: list[str], scene) -> None:
    """Every call the scene's engine makes to the compiled entry.step appended to `calls`."""
    real = entry.compiled_step

    def counting(b):
        stepper = real(b)

        def counted(*args):
            calls.append("step")
            return stepper(*args)

        return counted

    monkeypatch.setattr(entry, "compiled_step", counting)
    scene._engine._stepper = None  # asked for again, through the count


def _joint_gap(scene) -> float:
    a = scene.articulation("/World/a/base").link_transforms()
    b = scene.articulation("/World/b/base").link_transforms()
    ends = [T[2, :3] + quat_to_matrix(T[2, 3:]) @ offset for T, offset in ((a, [0.5, 0, 0]), (b, [-0.5, 0, 0]))]
    return float(np.linalg.norm(ends[0] - ends[1]))


def test_two_articulations_joined_and_fifty_free_bodies_step_in_one_kernel_call(monkeypatch):
    scene = usdart.load(_two_joined_chains_and_free_bodies())
    scene.solver = "PGS"  # semi-implicit Euler (TGS free fall: tests/test_physx_tgs.py)
    assert len(scene.articulations) == 2 and len(scene.free_bodies) == FREE
    assert "/World/link" in scene.constraints
    assert not any("/World/link" in w for w in scene.warnings), scene.warnings
    # the joint's residual gap is the dt^2 drift of a linear position update (about w^2 dt^2 L, w up to
    # 8 rad/s here): 1e-3 m at 240 Hz, a quarter of it at 480 Hz
    dt = scene.time_step = 1 / 480
    start = {p: scene.body_transform(p).copy() for p in scene.free_bodies}
    joint_start = scene.articulation("/World/a/base").link_transforms()[2]
    assert _joint_gap(scene) == pytest.approx(0.0, abs=1e-12)

    calls: list[str] = []
    _counting(monkeypatch, calls, scene)
    scene.step(7)
    assert calls == ["step"]
    scene.step(233)  # 0.5 s in all
    assert calls == ["step", "step"]

    n, g = 240, -scene.gravity[2]
    moved = scene.articulation("/World/a/base").link_transforms()[2]
    assert np.linalg.norm(moved[:3] - joint_start[:3]) > 0.05  # the linkage swung
    assert _joint_gap(scene) < 1e-3
    for path, pose0 in start.items():
        pose = scene.body_transform(path)
        # semi-implicit Euler from rest: z_n = z_0 - g dt^2 n (n + 1) / 2
        assert pose[2] == pytest.approx(pose0[2] - g * dt * dt * n * (n + 1) / 2, rel=1e-9, abs=0.0), path
        np.testing.assert_array_equal(pose[:2], pose0[:2])
        np.testing.assert_array_equal(pose[3:], pose0[3:])


# ---- 5. a jointed free body among many ------------------------------------------------------------------------
def _swing(stage, hz: int = 240) -> usdart.Scene:
    scene = usdart.load(stage)
    scene.time_step = 1 / hz
    scene.step(hz)  # 1 s
    return scene


def test_free_body_double_pendulum_still_agrees_with_the_tree():
    """The double pendulum whose second link is a free body held by a joint moves bit for bit the same with
    twenty more free bodies on the stage (some sorted before it, some after), and still like the tree."""
    crowded_stage = _double_pendulum_stage(True)
    for i in range(20):
        body(crowded_stage, f"/World/{'a' if i % 2 else 'z'}_extra{i:02d}", pos=(5.0 + i, 3.0, 2.0))
    plain, crowded = _swing(_double_pendulum_stage(True)), _swing(crowded_stage)
    assert len(plain.free_bodies) == 1 and len(crowded.free_bodies) == 21
    for scene in (plain, crowded):
        assert "/World/j2" in scene.constraints and not any("/World/j2" in w for w in scene.warnings)
    pose = crowded.body_transform("/World/l2")
    np.testing.assert_array_equal(pose, plain.body_transform("/World/l2"))
    np.testing.assert_array_equal(crowded.articulations[0].link_transforms(), plain.articulations[0].link_transforms())
    # the tree and the jointed free body are different first-order discretisations: 2.2 cm apart after 1 s
    # at 240 Hz, 0.5 cm at 960 Hz (test_stepping checks that convergence)
    tree_pose = _swing(_double_pendulum_stage(False)).articulations[0].link_transforms()[2]
    assert tree_pose[2] < -1.0  # it swung down
    assert np.linalg.norm(pose[:3] - tree_pose[:3]) < 0.05
