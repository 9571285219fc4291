"""The mass matrix in tree-sparse storage, its L^T D L factorisation and solves (Featherstone, RBDA 6.5).

Generalized velocities of a tree are numbered root first ([v_com; omega] of a floating root), then the
DOFs in low-level order. `v_parent[g]` is the previous velocity that moves g's link or an ancestor (the
expanded parent array: the root's six velocities form a chain, a joint's DOFs follow each other, the
first DOF of a joint follows the last DOF of the nearest moving ancestor). M[g, j] is non-zero only when
j is g or one of its v_parent ancestors, so row g is stored as H[v_h[g]] (diagonal) followed by its
ancestors in chain order. Factorising in place costs the sum of the squared depths (O(n) for a star,
O(n d) in general) instead of the dense O(n^3), and M = L^T D L keeps that sparsity.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def factor(v_parent, v_h, v0, v1, H):
    """Overwrite H (rows v0..v1-1) with L (strictly below the diagonal, unit diagonal implied) and D."""
    for k in range(v1 - 1, v0 - 1, -1):
        dk = H[v_h[k]]
        i = v_parent[k]
        pk = v_h[k] + 1
        while i != -1:
            a = H[pk] / dk
            p, qi = pk, v_h[i]
            j = i
            while j != -1:  # H[i, j] -= a H[k, j] for j = i and i's ancestors (k's ancestors past i)
                H[qi] -= a * H[p]
                p += 1
                qi += 1
                j = v_parent[j]
            H[pk] = a
            i = v_parent[i]
            pk += 1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def solve(v_parent, v_h, v0, v1, H, out, offset):
    """out[offset : offset + n] <- M^-1 out[offset : offset + n] with the factor from `factor` (a tree's
    vector stored at an offset: v0 for a scene-wide vector, any offset for a row's response)."""
    for i in range(v1 - 1, v0 - 1, -1):
        xi = out[offset + i - v0]
        if xi != 0.0:
            p = v_h[i] + 1
            j = v_parent[i]
            while j != -1:
                out[offset + j - v0] -= H[p] * xi
                p += 1
                j = v_parent[j]
    for i in range(v0, v1):
        out[offset + i - v0] /= H[v_h[i]]
    for i in range(v0, v1):
        p = v_h[i] + 1
        j = v_parent[i]
        acc = out[offset + i - v0]
        while j != -1:
            acc -= H[p] * out[offset + j - v0]
            p += 1
            j = v_parent[j]
        out[offset + i - v0] = acc


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def inverse_quadratic(v_parent, v_h, v0, v1, H, x):
    """x^T M^-1 x for a tree's vector x[0 : v1 - v0] (overwritten) with the factor from `factor`: half a
    solve, y^T D^-1 y with y = L^-T x."""
    for i in range(v1 - 1, v0 - 1, -1):
        xi = x[i - v0]
        if xi != 0.0:
            p = v_h[i] + 1
            j = v_parent[i]
            while j != -1:
                x[j - v0] -= H[p] * xi
                p += 1
                j = v_parent[j]
    total = 0.0
    for i in range(v0, v1):
        total += x[i - v0] * x[i - v0] / H[v_h[i]]
    return total


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def unit_response(v_parent, v_h, v0, v1, H, g, out, offset):
    """out[offset + (i - v0)] = (M^-1)[i, g] for every velocity i of the tree: the velocity change of a
    unit generalized impulse at g (a DOF row's response column)."""
    for a in range(v1 - v0):
        out[offset + a] = 0.0
    out[offset + g - v0] = 1.0
    solve(v_parent, v_h, v0, v1, H, out, offset)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def to_dense(v_parent, v_h, v0, v1, H, out):
    """out[(g - v0), (j - v0)] = M[g, j] (symmetric, dense) from the unfactored sparse storage."""
    n = v1 - v0
    for a in range(n):
        for b in range(n):
            out[a, b] = 0.0
    for g in range(v0, v1):
        p = v_h[g]
        j = g
        while j != -1:
            out[g - v0, j - v0] = H[p]
            out[j - v0, g - v0] = H[p]
            p += 1
            j = v_parent[j]
