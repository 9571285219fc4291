"""Checks on arrays users hand to the API: the right size, finite, a usable rotation; errors say where.

They run on every call of the articulation's compute functions, so they are written for small arrays
(numpy's method calls, not its module-level wrappers, which cost a few microseconds each)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .errors import UsdartError


@njit(cache=True, nogil=True)
def _finite_floats(values):
    for i in range(values.shape[0]):
        if not math.isfinite(values[i]):
            return False
    return True


def all_finite(arr: np.ndarray) -> bool:
    """True when every entry of a float array is finite. A float64 vector (the compute functions' inputs and
    results) goes through one compiled loop: 0.2 us, where numpy's isfinite(...).all() takes about 1 us."""
    if arr.ndim == 1 and arr.dtype == np.float64:
        return _finite_floats(arr)
    return bool(np.isfinite(arr).all())


def vector(values, size: int, what: str, where: str = "") -> np.ndarray:
    """`values` as a flat float array of `size` entries; else an error "<where>: <what>: ..." (the message is
    built only then: this runs on every compute call)."""
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size != size:
        raise UsdartError(f"{f'{where}: ' if where else ''}{what}: expected {size} values, got {arr.size}")
    return arr


def finite_vector(values, size: int, where: str, what: str) -> np.ndarray:
    arr = vector(values, size, what, where)
    if not all_finite(arr):
        raise UsdartError(f"{where}: {what} contains NaN or infinite values")
    return arr


def quaternion_norms(quats: np.ndarray) -> np.ndarray:
    """|q| of each quaternion (last axis); one formula for single and batched callers, so a view and an
    articulation's cache normalise a rotation to the same bits."""
    with np.errstate(over="ignore"):  # absurd components give inf, which the callers refuse
        return np.sqrt((quats * quats).sum(axis=-1))


def unit_quaternion(q, where: str) -> np.ndarray:
    q = np.asarray(q, float)
    norm = float(quaternion_norms(q))
    if not math.isfinite(norm) or norm < 1e-12:
        raise UsdartError(f"{where}: root orientation {q.tolist()} is not a rotation (zero or non-finite quaternion)")
    return q / norm
