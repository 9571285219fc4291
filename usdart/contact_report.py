"""`Contacts`: the contact points of a scene's last step, read from the solver's workspace.

The step finds the points at its start (usdart.core.kernels.collide) and solves their rows in it
(usdart.core.kernels.contacts); this module pairs each point with its shapes and bodies and the impulses
its rows accumulated, as PhysX's contact reports give them (impulses over the step, in N s).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .core import layout as L
from .core.description import ColliderDesc
from .core.engine import Engine


class Contacts(NamedTuple):
    """n contact points. Each joins shape0 (side A) and shape1 (side B): the normal points from B toward A,
    the point lies on B's surface, separation is the signed distance (negative: overlap) at the step start.
    Impulses are what the step's solve applied to A (B gets the opposite): along the normal (>= 0) and the
    friction impulse in world axes (friction acts at a patch's anchor points, up to two per shape pair)."""

    shape0: list[str]  # collider prim paths
    shape1: list[str]
    body0: list[str | None]  # rigid body (articulation link or free body) paths; None for static shapes
    body1: list[str | None]
    point: np.ndarray  # (n, 3) m, world
    normal: np.ndarray  # (n, 3)
    separation: np.ndarray  # (n,) m
    normal_impulse: np.ndarray  # (n,) N s
    friction_impulse: np.ndarray  # (n, 3) N s
    dropped: int  # points found beyond the scene's room for them (not solved)


def contact_impulses(engine: Engine, world: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The last step's contact points of a world: (shape pairs (n, 2), their workspace geometry rows (CG_*),
    normal impulses on side A (n,), friction impulses on side A (n, 3), N s)."""
    work = engine.work
    count = work.contact_count[world]
    n = int(count[L.CC_POINTS])
    normal_impulse = np.zeros(n)
    friction_impulse = np.zeros((n, 3))
    rows = work.contact_row[world, : int(count[L.CC_ROWS])]
    values = work.contact_value[world, : len(rows)]
    for r, row in enumerate(rows):
        k = int(row[L.CR_CONTACT])
        if row[L.CR_KIND] == L.CR_NORMAL:
            normal_impulse[k] = values[r, L.CV_LAMBDA]
        else:
            friction_impulse[k] += values[r, L.CV_LAMBDA] * values[r, L.CV_DIRECTION : L.CV_DIRECTION + 3]
    return work.contact_pair[world, :n], work.contact[world, :n], normal_impulse, friction_impulse


def contact_report(engine: Engine, colliders: list[ColliderDesc], world: int) -> Contacts:
    """The last step's contacts of a world; colliders: the model's shapes' (usdart.core.shapes.shape_colliders)."""
    pair, geometry, normal_impulse, friction_impulse = contact_impulses(engine, world)
    count = engine.work.contact_count[world]
    names = [c.path for c in colliders]
    bodies = [c.body for c in colliders]
    return Contacts(
        shape0=[names[a] for a in pair[:, 0]],
        shape1=[names[b] for b in pair[:, 1]],
        body0=[bodies[a] for a in pair[:, 0]],
        body1=[bodies[b] for b in pair[:, 1]],
        point=geometry[:, L.CG_POINT : L.CG_POINT + 3].copy(),
        normal=geometry[:, L.CG_NORMAL : L.CG_NORMAL + 3].copy(),
        separation=geometry[:, L.CG_SEPARATION].copy(),
        normal_impulse=normal_impulse,
        friction_impulse=friction_impulse,
        dropped=int(count[L.CC_DROPPED]),
    )
