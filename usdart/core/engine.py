"""`Engine`: a scene model with its state, control and workspace for N worlds, and the kernel calls on them.

What `Scene` and `Articulation` use to step and to refresh poses; nothing here knows USD. The records are
boxed once (usdart.core.kernels.box), so a step from Python costs one small dispatch.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from . import layout as L
from .kernels import entry
from .kernels.box import box
from .model import Model
from .state import workspace, zeros_control, zeros_state


class Engine:
    """The records of one scene model for N worlds, boxed for the kernels."""

    def __init__(self, model: Model, worlds: int):
        self.model = model
        self.worlds = int(worlds)
        self.state = zeros_state(model, self.worlds)
        self.control = zeros_control(model, self.worlds)
        self.work = workspace(model, self.worlds)
        self.rk4 = False
        self._box = box((model, self.state, self.control, self.work))
        self._threads: ThreadPoolExecutor | None = None
        self._thread_count = 0

    def set_integrator(self, rk4: bool) -> None:
        """RK4 needs the articulated-body scratch; it is allocated the first time RK4 is chosen."""
        if rk4 and self.work.rk.shape[0] != self.worlds:
            self.work = workspace(self.model, self.worlds, articulated=True)
            self._box = box((self.model, self.state, self.control, self.work))
        self.rk4 = bool(rk4)

    def step(self, dt: float, steps: int = 1, island: int = -1) -> None:
        """`steps` steps of dt in every world (every island, or only `island`): one kernel call per thread.
        dt a float, steps and island ints (the callers check them)."""
        kernel = entry.step_rk4 if self.rk4 else entry.step
        if self.worlds == 1:
            kernel(self._box, 0, 1, island, dt, steps)
            return
        threads = min(self.worlds, numba.get_num_threads())
        # the kernel releases the GIL: one contiguous block of worlds per thread, the same compiled step
        if self._thread_count != threads:
            self._threads = ThreadPoolExecutor(threads, thread_name_prefix="usdart-step")
            self._thread_count = threads
        bounds = np.linspace(0, self.worlds, threads + 1).astype(int)
        jobs = [
            self._threads.submit(kernel, self._box, int(w0), int(w1), island, float(dt), int(steps))
            for w0, w1 in zip(bounds[:-1], bounds[1:])
        ]
        for job in jobs:
            job.result()

    def pose_all_worlds(self) -> None:
        """Link poses of every world from the state (at build): a zero-step call of the serial step, which
        a run compiles anyway, for one world."""
        if self.worlds == 1:
            entry.step(self._box, 0, 1, -1, 1.0, 0)
        else:
            for w in range(self.worlds):
                self.update_poses(w)

    def update_poses(self, world: int) -> None:
        """Link poses of a world from its state (after the state was written from Python)."""
        entry.update_poses(self._box, int(world))

    def measure_rest_lengths(self) -> None:
        """Spatial sub-tendons without an authored rest length keep the length they start with (world 0).
        Part of building the model: runs once, before the first step."""
        c = self.model.couplings
        pos, rot = self.state.link_pos[0], self.state.link_rot[0]
        for s in np.flatnonzero(np.isnan(c.spatial_par[:, L.TP_REST])):
            ids = range(c.spatial_start[s], c.spatial_start[s + 1])
            points = [pos[c.spatial_link[p]] + rot[c.spatial_link[p]] @ c.spatial_point[p] for p in ids]
            c.spatial_par[s, L.TP_REST] = c.spatial_par[s, L.TP_OFFSET] + sum(
                c.spatial_gearing[p] * np.linalg.norm(points[i] - points[i + 1]) for i, p in enumerate(list(ids)[1:])
            )
