"""`Engine`: a scene model with its state, control and workspace for N worlds, and the kernel calls on them.

What `Scene` and `Articulation` use to step and to refresh poses; nothing here knows USD. The records are
boxed once (usdart.core.kernels.box), so a step from Python costs one small dispatch.

Divergence: the step kernel checks every stepped tree after every step (usdart.core.kernels.step,
`tree_in_bounds`) and stops a world whose state is not finite or moves faster than its bound
(layout.DIVERGENCE_SPEED). `Engine.step` then returns True and `divergence` holds, per diverged world, what
failed where; the public objects turn that into `SimulationDiverged` and refuse to read the state until
`recover` (a new finite state written) or `clear` (a reset) puts the world back.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numba
import numpy as np

from . import layout as L
from .kernels import entry
from .kernels.box import box
from .kernels.world import world_model
from .model import Model, batch_model
from .state import CONTACTS_PER_SHAPE, workspace, zeros_control, zeros_state


class Divergence(NamedTuple):
    """A world stopped by the divergence guard: the first tree that failed it and what was wrong."""

    world: int
    tree: int
    time: float  # simulated time at the end of the step whose state failed (Engine.time + steps * dt)
    dt: float  # that step's time step
    what: str  # "joint velocity", "root velocity", "joint position", "root pose" or "link position"
    index: int  # tree-local DOF; root velocity [vx vy vz wx wy wz] or pose [x y z qw qx qy qz]; tree-local link
    value: float  # the offending value (NaN, +-inf, or a speed beyond the bound)
    bound: float  # the tree's speed bound (control.tree_settings[:, TS_DIVERGENCE_SPEED])


class Engine:
    """The records of one scene model for N worlds, boxed for the kernels."""

    def __init__(self, model: Model, worlds: int):
        self.worlds = int(worlds)
        self.batched = batch_model(model, self.worlds)  # every world's parameters (float tables per world)
        self.model = world_model.py_func(self.batched, 0)  # world 0's: views into `batched`
        self.state = zeros_state(model, self.worlds)
        self.control = zeros_control(model, self.worlds)
        self.contacts_per_shape = CONTACTS_PER_SHAPE
        self.work = workspace(model, self.worlds)
        self._shapes = len(model.shapes.shape) > 0
        self.rk4 = False
        self._box = box((self.batched, self.state, self.control, self.work))
        self._step_address = 0  # of the compiled world step for these records (entry.step_address), once asked
        self._stepper = None  # `stepper`, once asked
        self._threads: ThreadPoolExecutor | None = None
        self._thread_count = 0
        self.time = 0.0  # simulated seconds (the scene's clock; divergence times count from it)
        self.last_dt = 0.0  # the last step's dt (0: no step yet): the rows' impulses are over it
        self.stepped = np.zeros(self.worlds, bool)  # worlds stepped since the build or their reset (State.*_start)
        self._all_stepped = False  # every entry of `stepped` is True (a step skips setting them again)
        self.divergence: dict[int, Divergence] = {}  # per diverged world; empty while everything is finite
        self.members: list = []  # the public object of each tree (set by its owner; names in error messages)
        self._dof_tree: np.ndarray | None = None

    def set_integrator(self, rk4: bool) -> None:
        """RK4 needs the articulated-body scratch; it is allocated the first time RK4 is chosen."""
        if rk4 and self.work.rk.shape[0] != self.worlds:
            self._renew_workspace(articulated=True)
        self.rk4 = bool(rk4)
        self._step_address = 0

    def _renew_workspace(self, articulated: bool) -> None:
        """A new workspace (RK4 arrays, more room for contacts), keeping what is not scratch: the divergence
        report, the broad phase's order, the step count and when trees last touched something (friction
        anchors kept from the last step are dropped: their table is sized by the room)."""
        old = self.work
        self.work = workspace(self.model, self.worlds, articulated, self.contacts_per_shape)
        for name in ("diverged", "shape_order", "contact_count", "contact_touched"):
            getattr(self.work, name)[:] = getattr(old, name)
        self._box = box((self.batched, self.state, self.control, self.work))
        self._step_address = 0  # (the records' types are the same: the same address, asked again)
        self._stepper = None

    @property
    def step_address(self) -> int:
        """The compiled world step (Euler or RK4) the entry calls: compiled or loaded on first use."""
        if not self._step_address:
            self._step_address = entry.step_address(self._box, self.rk4)
        return self._step_address

    @property
    def stepper(self):
        """entry.step compiled for these records, called directly (entry.compiled_step): loaded on first use."""
        if self._stepper is None:
            self._stepper = entry.compiled_step(self._box)
        return self._stepper

    def _room_for_contacts(self) -> None:
        """After a step that found more contact points than the workspace holds (those beyond were left out
        of that step, as PhysX's GPU buffers drop them): twice the room from the next step on."""
        count = self.work.contact_count
        if count[0, L.CC_DROPPED] if self.worlds == 1 else count[:, L.CC_DROPPED].any():
            self.contacts_per_shape *= 2
            self._renew_workspace(self.work.rk.shape[0] == self.worlds)

    @property
    def solver(self) -> str:
        """ "TGS" or "PGS" (every tree's TS_SOLVER: one solver per scene, as a PhysX scene has)."""
        return L.SOLVER_NAMES[int(self.control.tree_settings[0, L.TS_SOLVER])]

    def set_solver(self, name: str) -> None:
        self.control.tree_settings[:, L.TS_SOLVER] = L.SOLVER_NAMES.index(name)

    def step(self, dt: float, steps: int = 1, island: int = -1) -> bool:
        """`steps` steps of dt in every world (every island, or only `island`): one kernel call per thread.
        dt a float, steps and island ints (the callers check them). True when a world diverged: it stopped
        at the failing step (the others ran on) and `divergence` says where and what."""
        address = self._step_address or self.step_address
        stepper = self._stepper or self.stepper
        self.last_dt = dt
        if steps > 0 and not self._all_stepped:
            self.stepped[:] = True
            self._all_stepped = True
        if self.worlds == 1:
            diverged = stepper(self._box, 0, 1, address, island, dt, steps)
        else:
            diverged = sum(self.over_worlds(stepper, self._box, self.worlds, address, island, float(dt), int(steps)))
        if self._shapes:
            self._room_for_contacts()
        if diverged:
            self._record(dt)
            return True
        return False

    def over_worlds(self, kernel, b, worlds: int, *args) -> list:
        """[kernel(b, w0, w1, *args)] over contiguous blocks of worlds 0..worlds-1, one per thread: the
        kernels release the GIL, so Python threads keep every core busy with one compiled function."""
        threads = min(worlds, numba.get_num_threads())
        if threads <= 1:
            return [kernel(b, 0, worlds, *args)]
        if self._thread_count != threads:
            self._threads = ThreadPoolExecutor(threads, thread_name_prefix="usdart-worlds")
            self._thread_count = threads
        bounds = np.linspace(0, worlds, threads + 1).astype(int)
        jobs = [self._threads.submit(kernel, b, int(w0), int(w1), *args) for w0, w1 in zip(bounds[:-1], bounds[1:])]
        return [job.result() for job in jobs]

    # ---- the divergence guard's report ---------------------------------------------------------------
    def _record(self, dt: float) -> None:
        """A Divergence for every world the kernel newly stopped (ws.diverged set, not yet recorded)."""
        for w in np.flatnonzero(self.work.diverged[:, L.DV_STEP]):
            w = int(w)
            if w not in self.divergence:
                step, tree = (int(x) for x in self.work.diverged[w])
                self.divergence[w] = Divergence(w, tree, self.time + step * dt, dt, *self._diagnose(w, tree))

    def _diagnose(self, w: int, t: int) -> tuple[str, int, float, float]:
        """(what, index, value, bound) of tree t in world w: a non-finite velocity, else the fastest one
        beyond the bound, else a non-finite position (the state is as the failing step left it)."""
        l0, l1, d0, d1 = (int(x) for x in self.model.trees.tree[t, :4])
        st, bound = self.state, float(self.control.tree_settings[t, L.TS_DIVERGENCE_SPEED])
        speeds = (("joint velocity", st.qd[w, d0:d1]), ("root velocity", st.root_vel[w, t]))
        for what, values in speeds:
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                return what, int(bad[0]), float(values[bad[0]]), bound
        for what, values in speeds:
            if values.size and np.abs(values).max() > bound:
                k = int(np.argmax(np.abs(values)))
                return what, k, float(values[k]), bound
        for what, values in (("joint position", st.q[w, d0:d1]), ("root pose", self._root_pose(w, t))):
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                return what, int(bad[0]), float(values[bad[0]]), bound
        links = st.link_pos[w, l0:l1]
        bad = np.flatnonzero(~np.all(np.isfinite(links), axis=1))
        if bad.size:
            row = links[bad[0]]
            return "link position", int(bad[0]), float(row[~np.isfinite(row)][0]), bound
        return "state", -1, math.nan, bound  # not reached: the kernel found something

    def _root_pose(self, w: int, t: int) -> np.ndarray:
        return np.concatenate([self.state.root_pos[w, t], self.state.root_quat[w, t]])

    def in_bounds(self, world: int) -> bool:
        """Whether every tree of a world passes the divergence guard (as the kernel checks it), its joint
        quaternions included: the test for a world written from Python after it diverged."""
        st, m, w = self.state, self.model, int(world)
        if self._dof_tree is None:
            self._dof_tree = m.links.link[m.dofs.dof[:, L.D_LINK], L.L_TREE]
        bound = self.control.tree_settings[:, L.TS_DIVERGENCE_SPEED]
        positions = (st.q[w], st.joint_quat[w], st.root_pos[w], st.root_quat[w])
        return bool(
            np.all(np.abs(st.qd[w]) <= bound[self._dof_tree])
            and np.all(np.abs(st.root_vel[w]) <= bound[:, None])
            and all(np.all(np.isfinite(x)) for x in positions)
        )

    def recover(self, world: int) -> bool:
        """After the state of a diverged world was written: when it passes the guard, the world steps
        again (link poses from the state, non-finite accelerations of the failed step zeroed). False when
        it still fails (the world stays stopped)."""
        w = int(world)
        if w not in self.divergence:
            return True
        if not self.in_bounds(w):
            return False
        self.update_poses(w)
        if not np.all(np.isfinite(self.state.link_pos[w])):
            return False
        for acc in (self.state.qdd[w], self.state.root_acc[w]):
            acc[~np.isfinite(acc)] = 0.0
        self.clear(w)
        return True

    def clear(self, world: int) -> None:
        """Forget a world's divergence and its last step (its state was reset from outside)."""
        self.divergence.pop(int(world), None)
        self.work.diverged[int(world)] = 0
        self.stepped[int(world)] = False
        self._all_stepped = False

    def pose_all_worlds(self) -> None:
        """Link poses of every world from the state (at build): a zero-step call of the entry, which needs
        no world step (that compiles on the first step: a scene used only for dynamics never compiles it)."""
        entry.step(self._box, 0, self.worlds, 0, -1, 1.0, 0)

    def update_poses(self, world: int) -> None:
        """Link poses of a world from its state (after the state was written from Python)."""
        entry.update_poses(self._box, int(world))

    def measure_rest_lengths(self) -> None:
        """Spatial sub-tendons without an authored rest length keep the length they start with (in each
        world). Part of building the model: runs once, before the first step."""
        c = self.batched.couplings
        for w in range(self.worlds):
            pos, rot = self.state.link_pos[w], self.state.link_rot[w]
            for s in np.flatnonzero(np.isnan(c.spatial_par[w, :, L.TP_REST])):
                ids = list(range(c.spatial_start[s], c.spatial_start[s + 1]))
                points = [pos[c.spatial_link[p]] + rot[c.spatial_link[p]] @ c.spatial_point[w, p] for p in ids]
                c.spatial_par[w, s, L.TP_REST] = c.spatial_par[w, s, L.TP_OFFSET] + sum(
                    c.spatial_gearing[w, p] * np.linalg.norm(points[i] - points[i + 1]) for i, p in enumerate(ids[1:])
                )
