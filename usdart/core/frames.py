"""Rigid-transform helpers for the importer (numpy, column-vector convention, quaternions wxyz).

USD matrices are row-vector (p_world = p_local * M); everything here converts them once into
rotation + translation (+ scale), so the rest of the importer uses x_parent = R @ x + t.
"""

from __future__ import annotations

import numpy as np

from .description import Pose


def quat_to_matrix(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(m) -> np.ndarray:
    """Rotation matrix -> unit quaternion (w >= 0), numerically robust branch choice."""
    m = np.asarray(m, dtype=float)
    tr = np.trace(m)
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[0] < 0 else q


def quat_multiply(a, b) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def decompose(usd_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-vector Gf.Matrix4d -> (R 3x3, t, per-axis scale), with shear folded into the nearest rotation."""
    m = np.array(usd_matrix, dtype=float).reshape(4, 4)
    linear = m[:3, :3].T  # column convention: x_world = linear @ x_local + t
    t = m[3, :3].copy()
    scale = np.linalg.norm(linear, axis=0)
    u, _, vt = np.linalg.svd(linear / np.where(scale > 0, scale, 1.0))
    rot = u @ vt
    if np.linalg.det(rot) < 0:  # a mirroring scale: keep a proper rotation, put the sign in the scale
        rot[:, 2] *= -1
        scale[2] *= -1
    return rot, t, scale


def homogeneous(rot, t) -> np.ndarray:
    h = np.eye(4)
    h[:3, :3] = rot
    h[:3, 3] = t
    return h


def pose_matrix(pose: Pose) -> np.ndarray:
    return homogeneous(quat_to_matrix(pose.orientation), pose.position)


def usd_to_column(usd_matrix) -> np.ndarray:
    """Row-vector USD matrix -> 4x4 column-convention homogeneous matrix (scale kept)."""
    return np.array(usd_matrix, dtype=float).reshape(4, 4).T
