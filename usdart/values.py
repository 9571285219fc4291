"""Checks on arrays users hand to the API: the right size, finite, a usable rotation; errors say where."""

from __future__ import annotations

import numpy as np

from .errors import UsdartError


def vector(values, size: int, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size != size:
        raise UsdartError(f"{what}: expected {size} values, got {arr.size}")
    return arr


def finite_vector(values, size: int, where: str, what: str) -> np.ndarray:
    arr = vector(values, size, f"{where}: {what}")
    if not np.all(np.isfinite(arr)):
        raise UsdartError(f"{where}: {what} contains NaN or infinite values")
    return arr


def unit_quaternion(q, where: str) -> np.ndarray:
    q = np.asarray(q, float)
    norm = float(np.linalg.norm(q))
    if not np.isfinite(norm) or norm < 1e-12:
        raise UsdartError(f"{where}: root orientation {q.tolist()} is not a rotation (zero or non-finite quaternion)")
    return q / norm
