"""Solver groups of one world's step: islands (trees joined by joints) joined this step by contacts, and one
Gauss-Seidel pass over a group's rows (`group_pass`).

PhysX solves an island of bodies that touch as one: every row of it with the island's largest iteration
counts. Here a group is a set of model islands whose trees touch through a contact between two moving
sides; a group's root is its smallest island, `nxt` chains its islands from the root, and its contact points
are order[start[root]:start[root + 1]], by shape pair (a pair's points together, in the order its manifold gave
them), so a group is solved alike whatever else the scene holds.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import CC_POINTS, I_ROW0, I_ROW1, S_TREE, T_ISLAND
from .contacts import PARTNER_MOVING, PARTNER_STATIC_BODY, PARTNER_STATIC_LINK, contact_sweep
from .rows import LIMIT_ERP
from .solver import PGS_JOINT_ERP, sweep, tgs_sweep


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _root(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def solver_groups(tree, shape, contact_pair, count, only_island, parent, nxt, start, order, scratch):
    """Group the islands of one world by this step's contacts (see the module docstring). With only_island
    >= 0 (stepping one articulation) nothing joins and contacts with trees of other islands are left out.
    scratch: (2 n_contacts + n_shapes + 1) int64."""
    n_islands = parent.shape[0]
    for i in range(n_islands):
        parent[i] = i
        start[i] = 0
    start[n_islands] = 0
    n = count[CC_POINTS]
    for k in range(n):
        ta, tb = shape[contact_pair[k, 0], S_TREE], shape[contact_pair[k, 1], S_TREE]
        if ta >= 0 and tb >= 0 and only_island < 0:
            a, b = _root(parent, tree[ta, T_ISLAND]), _root(parent, tree[tb, T_ISLAND])
            if a != b:  # the smaller island becomes the root
                parent[max(a, b)] = min(a, b)
    for i in range(n_islands):
        parent[i] = _root(parent, i)
        nxt[i] = -1
    for i in range(n_islands - 1, -1, -1):  # chain each group's islands in order after its root
        r = parent[i]
        if r != i:
            nxt[i] = nxt[r]
            nxt[r] = i
    # the points by shape pair (two stable counting sorts: by B's shape, then by A's), then by group (stable)
    by_pair, spare, tally = scratch[:n], scratch[n : 2 * n], scratch[2 * n :]
    for k in range(n):
        spare[k] = k
    for side in (1, 0):
        counting_sort(contact_pair, side, spare, by_pair, tally, n)
        for k in range(n):
            spare[k] = by_pair[k]
    for i in range(n):
        k = spare[i]
        island = _contact_island(tree, shape, contact_pair, k, only_island)
        if island >= 0:
            start[parent[island] + 1] += 1
    for i in range(n_islands):
        start[i + 1] += start[i]
    for i in range(n):
        k = spare[i]
        island = _contact_island(tree, shape, contact_pair, k, only_island)
        if island >= 0:
            r = parent[island]
            order[start[r]] = k
            start[r] += 1
    for i in range(n_islands, 0, -1):
        start[i] = start[i - 1]
    start[0] = 0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def counting_sort(contact_pair, side, source, out, tally, n):
    """out[:n] = source[:n] stably sorted by contact_pair[k, side] (a shape index below len(tally) - 1)."""
    for s in range(tally.shape[0]):
        tally[s] = 0
    for i in range(n):
        tally[contact_pair[source[i], side] + 1] += 1
    for s in range(tally.shape[0] - 1):
        tally[s + 1] += tally[s]
    for i in range(n):
        k = source[i]
        out[tally[contact_pair[k, side]]] = k
        tally[contact_pair[k, side]] += 1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _contact_island(tree, shape, contact_pair, k, only_island):
    """The island of contact point k's moving side (A's when both move); -1 when it is left out."""
    ta, tb = shape[contact_pair[k, 0], S_TREE], shape[contact_pair[k, 1], S_TREE]
    island = tree[ta, T_ISLAND] if ta >= 0 else tree[tb, T_ISLAND]
    if only_island >= 0:
        for t in (ta, tb):
            if t >= 0 and tree[t, T_ISLAND] != only_island:
                return -1
    return island


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def group_pass(
    trees,
    dofs,
    couplings,
    nxt,
    root,
    n,
    dt,
    it,
    tgs_pass,
    span,
    friction,
    r0,
    r1,
    joint_force,
    row_value,
    resp,
    jac,
    crow,
    cval,
    storage,
    gvel,
    moved,
):
    """One pass over solver group `root`, in PhysX's order: contacts between moving bodies, then free bodies'
    contacts with static or kinematic shapes (PhysX's partitions put a body's static constraints after its
    others), then each island's rows (DOF rows, couplings, joints), then articulation links' contacts with
    static or kinematic shapes (PhysX solves those inside the articulation, after its joints' rows) (contact
    rows r0..r1-1); iteration `it` of n position iterations (PGS: h = dt; TGS: a substep of dt / n or a
    velocity iteration; span as solver.sweep's). Returns the largest velocity change."""
    tree, island = trees.tree, trees.island
    velocity_iteration = it >= n
    elapsed = min(it, n) * dt / n if tgs_pass else 0.0
    largest = 0.0
    for partner in (PARTNER_MOVING, PARTNER_STATIC_BODY):
        change = contact_sweep(
            tree, crow, cval, storage, r0, r1, np.int64(partner), tgs_pass, velocity_iteration, friction, elapsed,
            gvel, moved,
        )  # fmt: skip
        largest = max(largest, change)
    k = root
    while k >= 0:
        if tgs_pass:
            change = tgs_sweep(
                trees, dofs, couplings, k, n, dt, span, it, joint_force, row_value, resp, jac, gvel, moved
            )
        else:
            change = sweep(
                trees, dofs, couplings, island[k, I_ROW0], island[k, I_ROW1], dt, dt, LIMIT_ERP, PGS_JOINT_ERP,
                0.0, 0.0, 0.0, it, n, joint_force, row_value, resp, jac, gvel, moved,
            )  # fmt: skip
        largest = max(largest, change)
        k = nxt[k]
    change = contact_sweep(
        tree, crow, cval, storage, r0, r1, np.int64(PARTNER_STATIC_LINK), tgs_pass, velocity_iteration, friction,
        elapsed, gvel, moved,
    )  # fmt: skip
    return max(largest, change)
