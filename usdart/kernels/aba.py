"""Articulated-body algorithm: forward dynamics in O(n), armature included (PhysX computeJointAcceleration)."""
from __future__ import annotations

from numba import njit

from .kinematics import link_velocities, root_generalized_acceleration, world_dynamics_frames
from .linalg import cholesky, cholesky_solve
from .rnea import subtract_world_wrench
from .spatial import force_cross_add, inertia_times_motion, motion_cross_add, rigid_to_matrix


@njit(cache=True, _nrt=False)
def invert_spd(A, n, out):
    """out[:n, :n] = inverse of the symmetric positive definite n x n block of A (n <= 3), by cofactors."""
    if n == 1:
        out[0, 0] = 1.0 / A[0, 0]
    elif n == 2:
        det = A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]
        out[0, 0], out[1, 1] = A[1, 1] / det, A[0, 0] / det
        out[0, 1], out[1, 0] = -A[0, 1] / det, -A[1, 0] / det
    else:
        c00 = A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]
        c01 = A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]
        c02 = A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]
        det = A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02
        out[0, 0], out[1, 0], out[2, 0] = c00 / det, c01 / det, c02 / det
        out[0, 1] = (A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]) / det
        out[1, 1] = (A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]) / det
        out[2, 1] = (A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]) / det
        out[0, 2] = (A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]) / det
        out[1, 2] = (A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]) / det
        out[2, 2] = (A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]) / det


@njit(cache=True, _nrt=False)
def aba(m, st, ws, w, tau, wrench, gravity, use_wrench, out):
    """out[w] = generalized accelerations [root nudot (floating); qdd] under joint forces tau[w],
    gravity and optional link wrenches (world, at COMs). Needs link_poses for world w.

    World axes throughout, so articulated inertias add up the tree without transforms. Gravity is an
    upward base acceleration: pass 3 yields a' = a - g, and the root adds g back.
    """
    n, nr = m.n_links, m.n_root
    world_dynamics_frames(m, ws, w)
    link_velocities(m, st, ws, w, 1.0)
    vj, tmp = ws.vec6[w, 0], ws.vec6[w, 1]
    # pass 1: velocity-product accelerations c_i (kept in ws.acc), rigid inertias, bias forces
    for i in range(n):
        vi, ci, pi = ws.vel[w, i], ws.acc[w, i], ws.art_bias[w, i]
        mass, moment, inertia = ws.body_mass[w, i], ws.body_moment[w, i], ws.body_inertia[w, i]
        for a in range(6):
            ci[a] = 0.0
            pi[a] = 0.0
        if i > 0:
            for a in range(6):
                vj[a] = 0.0
            for k in range(m.dof_start[i], m.dof_start[i + 1]):
                for a in range(6):
                    vj[a] += ws.motion[w, k, a] * st.qd[w, k]
            motion_cross_add(vi, vj, ci)
        rigid_to_matrix(mass, moment, inertia, ws.art_inertia[w, i])
        inertia_times_motion(mass, moment, inertia, vi, tmp)
        force_cross_add(vi, tmp, pi)
        if use_wrench:
            subtract_world_wrench(m, ws, w, i, wrench[w, i], pi)

    # pass 2: articulated inertias from the leaves in
    for i in range(n - 1, 0, -1):
        IA, pA, ci = ws.art_inertia[w, i], ws.art_bias[w, i], ws.acc[w, i]
        lo, hi = m.dof_start[i], m.dof_start[i + 1]
        nd = hi - lo
        if nd > 0:
            Dinv, D = ws.dof_inv[w, i], ws.mat6[w]
            for k in range(lo, hi):
                U = ws.dof_u[w, k]
                acc = tau[w, k]
                for a in range(6):
                    u = 0.0
                    for b in range(6):
                        u += IA[a, b] * ws.motion[w, k, b]
                    U[a] = u
                    acc -= ws.motion[w, k, a] * pA[a]
                ws.dof_bias[w, k] = acc
            for k in range(lo, hi):
                for l in range(lo, hi):
                    acc = m.armature[k] if k == l else 0.0
                    for a in range(6):
                        acc += ws.motion[w, k, a] * ws.dof_u[w, l, a]
                    D[k - lo, l - lo] = acc
            invert_spd(D, nd, Dinv)
            # IA -= U Dinv U^T ;  pA += U Dinv u
            for k in range(nd):
                for l in range(nd):
                    dkl = Dinv[k, l]
                    ul = ws.dof_bias[w, lo + l]
                    for a in range(6):
                        uak = ws.dof_u[w, lo + k, a] * dkl
                        pA[a] += uak * ul
                        for b in range(6):
                            IA[a, b] -= uak * ws.dof_u[w, lo + l, b]
        p = m.parent[i]
        IAp, pAp = ws.art_inertia[w, p], ws.art_bias[w, p]
        for a in range(6):  # pA + IA c, then everything to the parent (same frame: a plain sum)
            acc = pA[a]
            for b in range(6):
                acc += IA[a, b] * ci[b]
                IAp[a, b] += IA[a, b]
            pAp[a] += acc

    # pass 3: accelerations from the root out (a' = a - g)
    a0 = ws.acc[w, 0]
    if nr == 6:
        A = ws.mat6[w]
        for a in range(6):
            tmp[a] = -ws.art_bias[w, 0, a]
            for b in range(6):
                A[a, b] = ws.art_inertia[w, 0, a, b]
        cholesky(A, 6)
        cholesky_solve(A, 6, tmp, a0)
    else:
        for a in range(6):
            a0[a] = 0.0
        for a in range(3):
            a0[3 + a] = -gravity[a]
    for i in range(1, n):
        ai, ap = ws.acc[w, i], ws.acc[w, m.parent[i]]
        for a in range(6):  # ws.acc holds c_i: a'_i = a'_parent + c_i
            ai[a] += ap[a]
        lo, hi = m.dof_start[i], m.dof_start[i + 1]
        for k in range(lo, hi):  # u - U^T a'
            acc = ws.dof_bias[w, k]
            for a in range(6):
                acc -= ws.dof_u[w, k, a] * ai[a]
            vj[k - lo] = acc
        for k in range(lo, hi):
            acc = 0.0
            for l in range(lo, hi):
                acc += ws.dof_inv[w, i, k - lo, l - lo] * vj[l - lo]
            out[w, nr + k] = acc
            for a in range(6):
                ai[a] += ws.motion[w, k, a] * acc
    if nr == 6:
        for a in range(3):
            a0[3 + a] += gravity[a]
        root_generalized_acceleration(m, ws, w, st.root_vel[w], a0, out[w], 0)
