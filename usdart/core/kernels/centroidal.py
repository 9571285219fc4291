"""Centroidal momentum: h_G = [P; L about the articulation COM G] = A nu.

A DOF's column is the momentum its unit velocity gives the subtree it moves (composite inertia times
the motion column); the root's columns use the whole articulation's inertia. Momenta about the world
origin O become centroidal with L_G = L_O - G x P. The bias dA/dt nu is the RNEA root force at zero
acceleration and without gravity, moved the same way (usdart.core.kernels.entry).
"""

from __future__ import annotations

from numba import njit

from ..layout import D_LINK, D_V
from .kinematics import root_spatial
from .spatial import inertia_times_motion


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def about_com(comp_mass, comp_moment, l0, F):
    """The spatial momentum F (at the origin) as [P; L_G], G the tree's COM."""
    mass, h = comp_mass[l0], comp_moment[l0]
    g0, g1, g2 = h[0] / mass, h[1] / mass, h[2] / mass
    return (
        F[3],
        F[4],
        F[5],
        F[0] - (g1 * F[5] - g2 * F[4]),
        F[1] - (g2 * F[3] - g0 * F[5]),
        F[2] - (g0 * F[4] - g1 * F[3]),
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def set_column(A, col, values):
    for a in range(6):
        A[a, col] = values[a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def centroidal_matrix(dof, l0, d0, d1, v0, c, motion, comp_mass, comp_moment, comp_inertia, scratch, A):
    """A (6 x (6 + n)) of a floating tree; needs world_frames and composite_inertias."""
    F, g, s = scratch[0], scratch[1], scratch[2]
    for k in range(d0, d1):
        i = dof[k, D_LINK]
        inertia_times_motion(comp_mass[i], comp_moment[i], comp_inertia[i], motion[k], F)
        set_column(A, dof[k, D_V] - v0, about_com(comp_mass, comp_moment, l0, F))
    for col in range(6):
        for a in range(6):
            g[a] = 1.0 if a == col else 0.0
        root_spatial(c, g, s)
        inertia_times_motion(comp_mass[l0], comp_moment[l0], comp_inertia[l0], s, F)
        set_column(A, col, about_com(comp_mass, comp_moment, l0, F))
