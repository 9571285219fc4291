"""Convex pieces of a mesh collider authored with `physics:approximation = "convexDecomposition"`.

PhysX cooks such a mesh into at most `physxConvexDecompositionCollision:maxConvexHulls` (32) convex meshes of
at most `:hullVertexLimit` (64) vertices each, with V-HACD: the mesh is voxelised (`:voxelResolution`) and the
voxels are split, so its pieces stand up to about a voxel and a half proud of the surface unless `:shrinkWrap`
projects them back onto it. usdart decomposes with CoACD (the `coacd` package), which cuts the mesh itself:
where the mesh is made of convex parts, its pieces are those parts exactly. Both converge to the same solid:
measured on a U-shaped channel (60 kg at PhysX's default density), PhysX's pieces weigh 67.4 kg with its
defaults, 61.5 kg with shrinkWrap, 59.0 kg with shrinkWrap at ten times the voxels; usdart's 60.0 kg.
The two limits map onto CoACD's (pieces merged down to maxConvexHulls, each decimated to hullVertexLimit);
`:errorPercentage`, `:voxelResolution`, `:minThickness` and `:shrinkWrap` tune V-HACD's voxels and are not
read.

A decomposition takes 0.5-10 s, so its pieces are kept by a hash of the mesh and the two limits: in memory
for the process (the body's mass and its colliders read the same pieces) and on disk in the user's cache
folder (`$XDG_CACHE_HOME` or `~/.cache`, `usdart/decompositions/`), as PhysX keeps its cooked meshes.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from pxr import Usd

from .usd_values import authored

MAX_CONVEX_HULLS = 32  # PhysxConvexDecompositionCollisionAPI's defaults
HULL_VERTEX_LIMIT = 64
_FORMAT = b"usdart-decomposition-1"
_memory: dict[str, list[np.ndarray]] = {}


def decomposition_limits(prim: Usd.Prim) -> tuple[int, int]:
    """(maxConvexHulls, hullVertexLimit) as authored on the mesh (PhysX's defaults where not), at least 1 and
    4: a hull needs four vertices."""
    hulls = authored(prim, "physxConvexDecompositionCollision:maxConvexHulls")
    vertices = authored(prim, "physxConvexDecompositionCollision:hullVertexLimit")
    hulls = MAX_CONVEX_HULLS if hulls is None else int(hulls)
    vertices = HULL_VERTEX_LIMIT if vertices is None else int(vertices)
    return max(hulls, 1), max(vertices, 4)


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "usdart" / "decompositions"


def convex_pieces(points: np.ndarray, triangles: np.ndarray, max_hulls: int, vertex_limit: int) -> list[np.ndarray]:
    """The vertices of each convex piece of the closed or open triangle mesh (points (n, 3), triangles (m, 3)
    indexing them), in the points' frame and units. The caller checks the points span a volume: CoACD
    answers a flat mesh with a made-up solid."""
    points = np.ascontiguousarray(points, dtype=np.float64)
    triangles = np.ascontiguousarray(triangles, dtype=np.int64)
    import coacd  # imported only by stages that decompose

    key = hashlib.sha256(
        b"".join(
            [_FORMAT, _version(), points.tobytes(), triangles.tobytes()]
            + [np.int64(v).tobytes() for v in (len(points), max_hulls, vertex_limit)]
        )
    ).hexdigest()
    if key not in _memory:
        _memory[key] = _read(key)
        if _memory[key] is None:
            coacd.set_log_level("error")
            parts = coacd.run_coacd(
                coacd.Mesh(points, triangles), max_convex_hull=max_hulls, decimate=True, max_ch_vertex=vertex_limit
            )
            _memory[key] = [np.asarray(vertices, dtype=np.float64).reshape(-1, 3) for vertices, _ in parts]
            if _memory[key]:
                _write(key, _memory[key])
    return [piece.copy() for piece in _memory[key]]


def _version() -> bytes:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("coacd").encode()
    except PackageNotFoundError:
        return b"unknown"


def _read(key: str) -> list[np.ndarray] | None:
    """The cached pieces, or None when there are none (or the file is unreadable or not pieces: they are then
    made again and the file replaced)."""
    try:
        with np.load(cache_folder() / f"{key}.npz") as data:
            vertices, counts = data["vertices"], data["counts"]
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    if vertices.ndim != 2 or vertices.shape[1] != 3 or counts.ndim != 1 or np.any(counts < 4):
        return None
    if counts.sum() != len(vertices) or not np.all(np.isfinite(vertices)):
        return None
    return np.split(vertices.astype(np.float64), np.cumsum(counts)[:-1])


def _write(key: str, pieces: list[np.ndarray]) -> None:
    """Store the pieces atomically (a temporary file renamed into place); a cache that cannot be written is
    only time lost on the next load."""
    folder = cache_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        file = tempfile.NamedTemporaryFile(dir=folder, suffix=".npz", delete=False)
    except OSError:
        return
    try:
        with file:
            np.savez(file, vertices=np.concatenate(pieces), counts=np.array([len(p) for p in pieces]))
        os.replace(file.name, folder / f"{key}.npz")
    except OSError:
        Path(file.name).unlink(missing_ok=True)
