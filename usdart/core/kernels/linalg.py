"""Dense Cholesky for small symmetric positive definite blocks (the floating root of ABA; in place)."""

from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def cholesky(A, n):
    """Overwrite the lower triangle of A[:n, :n] with its Cholesky factor L (A = L L^T)."""
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        d = d**0.5
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def cholesky_solve(L, n, b, x):
    """x = A^-1 b with L from `cholesky` (x may alias b)."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]
