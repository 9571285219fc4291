"""Articulated-body algorithm of one tree: forward dynamics in O(n), armature included (PhysX
computeJointAcceleration; the RK4 stages)."""

from __future__ import annotations

from numba import njit

from ..layout import D_V, DP_ARMATURE, L_DOF0, L_DOF1, L_PARENT
from .kinematics import root_generalized_acceleration
from .linalg import cholesky, cholesky_solve
from .rnea import subtract_world_wrench
from .spatial import force_cross_add, inertia_times_motion, motion_cross_add, rigid_to_matrix


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
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


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def aba(
    link,
    dof,
    dof_par,
    link_vec,
    l0,
    l1,
    v0,
    floating,
    c,
    rot,
    pos,
    motion,
    body_mass,
    body_moment,
    body_inertia,
    qd,
    root_vel,
    tau,
    gravity,
    wrench,
    vel,
    acc,
    art_inertia,
    art_bias,
    dof_u,
    dof_inv,
    dof_bias,
    mat6,
    scratch,
    out,
):
    """out[v0:v1] = generalized accelerations [root nudot (floating); qdd] under joint forces tau (per
    DOF), gravity and link wrenches (world, at COMs; zeros for none). Needs world_frames and link velocities.

    World axes throughout, so articulated inertias add up the tree without transforms. Gravity is an
    upward base acceleration: pass 3 yields a' = a - g, and the root adds g back.
    """
    vj, tmp = scratch[0], scratch[1]
    # pass 1: velocity-product accelerations c_i (kept in acc), rigid inertias, bias forces
    for i in range(l0, l1):
        vi, ci, pi = vel[i], acc[i], art_bias[i]
        for a in range(6):
            ci[a] = 0.0
            pi[a] = 0.0
        if i > l0:
            for a in range(6):
                vj[a] = 0.0
            for k in range(link[i, L_DOF0], link[i, L_DOF1]):
                for a in range(6):
                    vj[a] += motion[k, a] * qd[k]
            motion_cross_add(vi, vj, ci)
        rigid_to_matrix(body_mass[i], body_moment[i], body_inertia[i], art_inertia[i])
        inertia_times_motion(body_mass[i], body_moment[i], body_inertia[i], vi, tmp)
        force_cross_add(vi, tmp, pi)
        subtract_world_wrench(link_vec, rot, pos, i, wrench[i], pi)

    # pass 2: articulated inertias from the leaves in
    for i in range(l1 - 1, l0, -1):
        IA, pA, ci = art_inertia[i], art_bias[i], acc[i]
        lo, hi = link[i, L_DOF0], link[i, L_DOF1]
        nd = hi - lo
        if nd > 0:
            Dinv = dof_inv[i]
            for k in range(lo, hi):
                U = dof_u[k]
                acc_ = tau[k]
                for a in range(6):
                    u = 0.0
                    for b in range(6):
                        u += IA[a, b] * motion[k, b]
                    U[a] = u
                    acc_ -= motion[k, a] * pA[a]
                dof_bias[k] = acc_
            for k in range(lo, hi):
                for l in range(lo, hi):
                    acc_ = dof_par[k, DP_ARMATURE] if k == l else 0.0
                    for a in range(6):
                        acc_ += motion[k, a] * dof_u[l, a]
                    mat6[k - lo, l - lo] = acc_
            invert_spd(mat6, nd, Dinv)
            # IA -= U Dinv U^T ;  pA += U Dinv u
            for k in range(nd):
                for l in range(nd):
                    dkl = Dinv[k, l]
                    ul = dof_bias[lo + l]
                    for a in range(6):
                        uak = dof_u[lo + k, a] * dkl
                        pA[a] += uak * ul
                        for b in range(6):
                            IA[a, b] -= uak * dof_u[lo + l, b]
        p = link[i, L_PARENT]
        IAp, pAp = art_inertia[p], art_bias[p]
        for a in range(6):  # pA + IA c, then everything to the parent (same frame: a plain sum)
            acc_ = pA[a]
            for b in range(6):
                acc_ += IA[a, b] * ci[b]
                IAp[a, b] += IA[a, b]
            pAp[a] += acc_

    # pass 3: accelerations from the root out (a' = a - g)
    a0 = acc[l0]
    if floating:
        for a in range(6):
            tmp[a] = -art_bias[l0, a]
            for b in range(6):
                mat6[a, b] = art_inertia[l0, a, b]
        cholesky(mat6, 6)
        cholesky_solve(mat6, 6, tmp, a0)
    else:
        for a in range(6):
            a0[a] = 0.0
        for a in range(3):
            a0[3 + a] = -gravity[a]
    for i in range(l0 + 1, l1):
        ai, ap = acc[i], acc[link[i, L_PARENT]]
        for a in range(6):  # acc holds c_i: a'_i = a'_parent + c_i
            ai[a] += ap[a]
        lo, hi = link[i, L_DOF0], link[i, L_DOF1]
        for k in range(lo, hi):  # u - U^T a'
            acc_ = dof_bias[k]
            for a in range(6):
                acc_ -= dof_u[k, a] * ai[a]
            vj[k - lo] = acc_
        for k in range(lo, hi):
            acc_ = 0.0
            for l in range(lo, hi):
                acc_ += dof_inv[i, k - lo, l - lo] * vj[l - lo]
            out[dof[k, D_V]] = acc_
            for a in range(6):
                ai[a] += motion[k, a] * acc_
    if floating:
        for a in range(3):
            a0[3 + a] += gravity[a]
        root_generalized_acceleration(c, root_vel, a0, out, v0)
