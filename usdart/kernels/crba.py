"""Composite-rigid-body algorithm in world axes: the joint-space (or 6 + n generalized) mass matrix."""
from __future__ import annotations

from numba import njit

from .kinematics import root_generalized_force, root_spatial, world_dynamics_frames
from .spatial import inertia_times_motion


@njit(cache=True, _nrt=False)
def composite_inertias(m, ws, w):
    """Inertia of each link with its subtree (world axes, origin): sums, since all share one frame."""
    for i in range(m.n_links):
        ws.comp_mass[w, i] = ws.body_mass[w, i]
        for a in range(3):
            ws.comp_moment[w, i, a] = ws.body_moment[w, i, a]
            for b in range(3):
                ws.comp_inertia[w, i, a, b] = ws.body_inertia[w, i, a, b]
    for i in range(m.n_links - 1, 0, -1):
        p = m.parent[i]
        ws.comp_mass[w, p] += ws.comp_mass[w, i]
        for a in range(3):
            ws.comp_moment[w, p, a] += ws.comp_moment[w, i, a]
            for b in range(3):
                ws.comp_inertia[w, p, a, b] += ws.comp_inertia[w, i, a, b]


@njit(cache=True, _nrt=False)
def crba(m, ws, w, with_armature, H):
    """H[w] = mass matrix (root block first when floating). Needs link_poses for world w.

    Column of DOF k (link i): F = Ic_i S_k is the momentum a unit velocity of k gives the subtree;
    its entry for any DOF j on the path to the root is S_j . F.
    """
    world_dynamics_frames(m, ws, w)
    composite_inertias(m, ws, w)
    nr = m.n_root
    nv = nr + m.n_dofs
    for a in range(nv):
        for b in range(nv):
            H[w, a, b] = 0.0
    F, g = ws.vec6[w, 0], ws.vec6[w, 1]
    for i in range(m.n_links - 1, 0, -1):
        for k in range(m.dof_start[i], m.dof_start[i + 1]):
            inertia_times_motion(ws.comp_mass[w, i], ws.comp_moment[w, i], ws.comp_inertia[w, i], ws.motion[w, k], F)
            col = nr + k
            j = i
            while j > 0:
                for kj in range(m.dof_start[j], m.dof_start[j + 1]):
                    if kj > k:
                        continue
                    acc = 0.0
                    for a in range(6):
                        acc += ws.motion[w, kj, a] * F[a]
                    H[w, nr + kj, col] = acc
                    H[w, col, nr + kj] = acc
                j = m.parent[j]
            if nr == 6:
                root_generalized_force(m, ws, w, F, g, 0)
                for a in range(6):
                    H[w, a, col] = g[a]
                    H[w, col, a] = g[a]
    if nr == 6:
        s = ws.acc[w, 0]
        for c in range(6):
            for a in range(6):
                g[a] = 1.0 if a == c else 0.0
            root_spatial(m, ws, w, g, s)
            inertia_times_motion(ws.comp_mass[w, 0], ws.comp_moment[w, 0], ws.comp_inertia[w, 0], s, F)
            root_generalized_force(m, ws, w, F, g, 0)
            for a in range(6):
                H[w, a, c] = g[a]
    if with_armature:
        for k in range(m.n_dofs):
            H[w, nr + k, nr + k] += m.armature[k]
