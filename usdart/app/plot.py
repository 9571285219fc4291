"""`usdart plot`: joint positions and velocities over time, read back from a simulated stage's time samples.

The data come from the file alone (JointStateAPI `state:<axis>:physics:position/velocity` samples, time
codes over timeCodesPerSecond), grouped per articulation as the importer builds them, so the plot shows
what a USD reader sees. Values stay in the stage's units: degrees for angular DOFs, stage lengths for
linear ones (on a second axis). matplotlib is an optional extra (`pip install "usdart[plot]"`).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsdartError
from ..usd.importer import read_stage


@dataclass
class Series:
    name: str  # DOF name (joint path, or <joint path>:rotX ...)
    angular: bool
    times: np.ndarray  # seconds
    position: np.ndarray
    velocity: np.ndarray


@dataclass
class ArticulationSeries:
    root_link: str
    dofs: list[Series] = field(default_factory=list)


def joint_series(path, pattern: str | None = None) -> tuple[list[ArticulationSeries], float]:
    """Time-sampled joint states per articulation (DOFs whose name or joint name matches the glob
    `pattern`), and the stage's metersPerUnit."""
    stage, description = read_stage(path)
    tcps = float(stage.GetTimeCodesPerSecond()) or 24.0
    out = []
    for art in description.articulations:
        found = ArticulationSeries(art.root_link)
        for joint in art.joints:
            if joint is None:
                continue
            prim = stage.GetPrimAtPath(joint.path)
            for dof in joint.dofs:
                if pattern and not any(
                    fnmatch.fnmatchcase(n, pattern) for n in (dof.name, joint.path, joint.path.rsplit("/", 1)[-1])
                ):
                    continue
                pos = prim.GetAttribute(f"state:{dof.usd_instance}:physics:position")
                vel = prim.GetAttribute(f"state:{dof.usd_instance}:physics:velocity")
                if not pos or pos.GetNumTimeSamples() == 0:
                    continue
                codes = pos.GetTimeSamples()
                found.dofs.append(
                    Series(
                        dof.name,
                        dof.angular,
                        np.array(codes) / tcps,
                        np.array([pos.Get(c) for c in codes], float),
                        np.array([vel.Get(c) if vel else np.nan for c in codes], float),
                    )
                )
        if found.dofs:
            out.append(found)
    if not out:
        what = f" matching {pattern!r}" if pattern else ""
        raise UsdartError(f"{path}: no time-sampled joint states{what} (is it an output of usdart simulate?)")
    return out, description.settings.meters_per_unit


def plot(path, output=None, pattern: str | None = None) -> str:
    """Write a PNG (default: beside `path`, same name) with one row per articulation: positions, velocities."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsdartError('usdart plot needs matplotlib: pip install "usdart[plot]"') from None
    from .output_files import writable_target, write_atomically

    target = writable_target(output or os.path.splitext(os.fspath(path))[0] + ".png")
    series, mpu = joint_series(path, pattern)
    length = "m" if mpu == 1.0 else f"units of {mpu:g} m"
    fig, axes = plt.subplots(len(series), 2, figsize=(12, 3.6 * len(series)), squeeze=False)
    for row, art in zip(axes, series):
        panels = ((row[0], "position", "positions", ""), (row[1], "velocity", "velocities", "/s"))
        for ax, quantity, title, unit in panels:
            linear_ax = None
            for k, s in enumerate(art.dofs):  # one colour per DOF across both y axes
                style = dict(label=s.name.rsplit("/", 1)[-1], color=f"C{k % 10}")
                if s.angular:
                    ax.plot(s.times, getattr(s, quantity), **style)
                else:
                    linear_ax = linear_ax or ax.twinx()
                    linear_ax.plot(s.times, getattr(s, quantity), "--", **style)
            ax.set_title(f"{art.root_link}: joint {title}")
            ax.set_xlabel("time (s)")
            ax.set_ylabel(f"deg{unit}")
            handles, labels = ax.get_legend_handles_labels()
            if linear_ax is not None:
                linear_ax.set_ylabel(f"{length}{unit} (dashed)")
                more = linear_ax.get_legend_handles_labels()
                handles, labels = handles + more[0], labels + more[1]
            ax.legend(handles, labels, fontsize="small", loc="best")
            ax.grid(True, alpha=0.3)
    fig.tight_layout()
    try:
        write_atomically(target, lambda tmp: fig.savefig(tmp, dpi=100, format="png"))
    finally:
        plt.close(fig)
    return target
