"""Centroidal momentum: h_G = [P; L about the articulation COM G] = A nu, and the bias dA/dt nu.

A DOF's column is the momentum its unit velocity gives the subtree it moves (composite inertia times
the motion column); the root's columns use the whole articulation's inertia. The bias is the rate of
change of momentum at zero acceleration and without gravity: the RNEA force at the root. Momenta about
the world origin O become centroidal with L_G = L_O - G x P.
"""
from __future__ import annotations

from numba import njit

from .crba import composite_inertias
from .kinematics import root_spatial, world_dynamics_frames
from .rnea import rnea
from .spatial import inertia_times_motion


@njit(cache=True, _nrt=False)
def _about_com(ws, w, F, A, col):
    """A[w, :, col] = the spatial momentum F (at the origin) as [P; L_G]."""
    mass, h = ws.comp_mass[w, 0], ws.comp_moment[w, 0]
    g0, g1, g2 = h[0] / mass, h[1] / mass, h[2] / mass
    A[w, 0, col], A[w, 1, col], A[w, 2, col] = F[3], F[4], F[5]
    A[w, 3, col] = F[0] - (g1 * F[5] - g2 * F[4])
    A[w, 4, col] = F[1] - (g2 * F[3] - g0 * F[5])
    A[w, 5, col] = F[2] - (g0 * F[4] - g1 * F[3])


@njit(cache=True, _nrt=False)
def centroidal_momentum(m, st, ws, w, qdd_zero, root_zero, wrench_zero, gravity_zero, rnea_out, A, bias):
    """A[w] (6 x (n_root + n_dofs)) and bias[w, :, 0] (6). Needs link_poses; *_zero arrays hold zeros.

    bias has shape (W, 6, 1) so both results share the column writer.
    """
    world_dynamics_frames(m, ws, w)
    composite_inertias(m, ws, w)
    nr = m.n_root
    F, g = ws.vec6[w, 0], ws.vec6[w, 1]
    for k in range(m.n_dofs):
        i = m.dof_link[k]
        inertia_times_motion(ws.comp_mass[w, i], ws.comp_moment[w, i], ws.comp_inertia[w, i], ws.motion[w, k], F)
        _about_com(ws, w, F, A, nr + k)
    if nr == 6:
        s = ws.acc[w, 0]
        for c in range(6):
            for a in range(6):
                g[a] = 1.0 if a == c else 0.0
            root_spatial(m, ws, w, g, s)
            inertia_times_motion(ws.comp_mass[w, 0], ws.comp_moment[w, 0], ws.comp_inertia[w, 0], s, F)
            _about_com(ws, w, F, A, c)
    rnea(m, st, ws, w, qdd_zero, root_zero, 0.0, wrench_zero, False, gravity_zero, 1.0, rnea_out)
    _about_com(ws, w, ws.force[w, 0], bias, 0)
