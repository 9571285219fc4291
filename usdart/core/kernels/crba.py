"""Composite-rigid-body algorithm in world axes: a tree's mass matrix in tree-sparse storage.

Column of DOF k (link i): F = Ic_i S_k is the momentum a unit velocity of k gives the subtree; its
entry for any velocity j on the chain to the root is S_j . F (or, for the floating root's velocities,
F as force and torque about the root COM). Storage and ordering: usdart.core.kernels.tree_factor.
"""

from __future__ import annotations

from numba import njit

from ..layout import D_V, L_DOF0, L_DOF1, L_PARENT
from .kinematics import root_generalized_force, root_spatial
from .spatial import inertia_times_motion


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def composite_inertias(link, l0, l1, body_mass, body_moment, body_inertia, comp_mass, comp_moment, comp_inertia):
    """Inertia of each link with its subtree (world axes, origin): sums, since all share one frame."""
    for i in range(l0, l1):
        comp_mass[i] = body_mass[i]
        for a in range(3):
            comp_moment[i, a] = body_moment[i, a]
            for b in range(3):
                comp_inertia[i, a, b] = body_inertia[i, a, b]
    for i in range(l1 - 1, l0, -1):
        p = link[i, L_PARENT]
        comp_mass[p] += comp_mass[i]
        for a in range(3):
            comp_moment[p, a] += comp_moment[i, a]
            for b in range(3):
                comp_inertia[p, a, b] += comp_inertia[i, a, b]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def mass_matrix(
    link, dof, v_parent, v_h, v_dof, l0, l1, v0, floating, c, motion, comp_mass, comp_moment, comp_inertia, scratch, H
):
    """H rows v0.. = the tree's mass matrix without armature (sparse storage). c: root COM (floating);
    scratch: (>= 3, 6). Needs world_frames and composite_inertias."""
    F, g, s = scratch[0], scratch[1], scratch[2]
    for i in range(l1 - 1, l0, -1):
        for k in range(link[i, L_DOF0], link[i, L_DOF1]):
            inertia_times_motion(comp_mass[i], comp_moment[i], comp_inertia[i], motion[k], F)
            if floating:
                g[0], g[1], g[2], g[3], g[4], g[5] = root_generalized_force(c, F)
            j = dof[k, D_V]
            p = v_h[j]
            while j != -1:
                kj = v_dof[j]
                if kj >= 0:
                    acc = 0.0
                    for a in range(6):
                        acc += motion[kj, a] * F[a]
                    H[p] = acc
                else:
                    H[p] = g[j - v0]
                p += 1
                j = v_parent[j]
    if floating:
        for col in range(6):
            for a in range(6):
                g[a] = 1.0 if a == col else 0.0
            root_spatial(c, g, s)
            inertia_times_motion(comp_mass[l0], comp_moment[l0], comp_inertia[l0], s, F)
            g[0], g[1], g[2], g[3], g[4], g[5] = root_generalized_force(c, F)
            p = v_h[v0 + col]
            for a in range(col, -1, -1):  # the root chain: col, col - 1, ..., 0
                H[p] = g[a]
                p += 1
