"""The scene model's collision shapes: the colliders of a description as flat tables for the contact kernels.

Each shape sits on a link of a tree (its pose in the link frame; a kinematic body is a tree too) or is static
(its pose in world). Filtering that depends on the shapes' trees (links of one articulation, a fixed base's
root link, kinematic bodies) is decided in the kernel from the tables; filtering that names prims
(FilteredPairsAPI, joints whose collisionEnabled is false) becomes `excluded`, a sorted list of shape-pair
keys; collision groups a group-pair table.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import layout as L
from .description import COMBINE_MODES, ColliderDesc, SceneDescription
from .frames import quat_to_matrix


class Shapes(NamedTuple):
    shape: np.ndarray  # (n_shapes, SHAPE_COLUMNS) int64: S_*
    shape_par: np.ndarray  # (n_shapes, SHAPE_PAR_COLUMNS): SP_*
    shape_rot: np.ndarray  # (n_shapes, 3, 3) in the link frame (static: world)
    shape_pos: np.ndarray  # (n_shapes, 3)
    group_filter: np.ndarray  # (n_groups, n_groups) int64: 1 where the two groups never collide
    excluded: np.ndarray  # (n_excluded,) int64 sorted: a * n_shapes + b (a < b) for pairs that never collide
    settings: np.ndarray  # (CONTACT_SETTING_COUNT,): CS_*
    hull_start: np.ndarray  # (n_shapes + 1,) int64: hull or mesh s's vertices are hull_point[hull_start[s]:[s+1]]
    hull_point: np.ndarray  # (n_points, 3) in the shape's frame
    hull_faces: np.ndarray  # (n_shapes + 1,) int64: hull or mesh s's faces (a mesh's triangles) are hull_faces[s]:[s+1]
    face_start: np.ndarray  # (n_faces + 1,) int64: face f's vertices are face_vertex[face_start[f]:[f+1]]
    face_vertex: np.ndarray  # int64 indices into the shape's hull vertices, counter-clockwise about the outward normal


def no_shapes() -> Shapes:
    return Shapes(
        np.zeros((0, L.SHAPE_COLUMNS), np.int64),
        np.zeros((0, L.SHAPE_PAR_COLUMNS)),
        np.zeros((0, 3, 3)),
        np.zeros((0, 3)),
        np.zeros((1, 1), np.int64),
        np.zeros(0, np.int64),
        np.zeros(L.CONTACT_SETTING_COUNT),
        np.zeros(1, np.int64),
        np.zeros((0, 3)),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(0, np.int64),
    )


def pair_key(a: int, b: int, n: int) -> int:
    return min(a, b) * n + max(a, b)


def _bound(c: ColliderDesc) -> float:
    """Radius of a sphere about the shape's centre that holds it (inf for a plane)."""
    if c.shape == "sphere":
        return float(c.size[0])
    if c.shape == "capsule":
        return float(c.size[0] + c.size[1])
    if c.shape == "box":
        return float(np.linalg.norm(c.size))
    if c.shape in ("cylinder", "cone"):
        return float(np.hypot(c.size[0], c.size[1]))
    if c.shape in ("convex", "mesh"):
        return float(np.linalg.norm(c.hull, axis=1).max())
    return np.inf


def shape_colliders(description: SceneDescription, where: dict) -> list[ColliderDesc]:
    """The colliders that become shapes, in shape order: static ones and those on simulated bodies."""
    return [c for c in description.colliders if c.body is None or c.body in where]


def build_shapes(
    description: SceneDescription,
    colliders: list[ColliderDesc],
    where: dict[str, tuple[int, int]],
    tree_table: np.ndarray,
    self_collisions: list[bool],
    articulated: list[bool],
) -> Shapes:
    """Tables of the colliders that become shapes (shape_colliders, in that order; the description gives
    their bodies, groups and filtered pairs). `where`: body path -> (tree, global link) of every simulated
    body; tree_table: the model's (T_* columns); self_collisions: per tree, whether its links collide with
    each other (articulations: enabledSelfCollisions; a free body's one link never meets itself); articulated:
    per tree, whether it is an articulation (not a free body)."""
    n = len(colliders)
    shape = np.zeros((n, L.SHAPE_COLUMNS), np.int64)
    shape[:, [L.S_LINK, L.S_TREE]] = -1  # static until placed on a body
    par = np.zeros((n, L.SHAPE_PAR_COLUMNS))
    rot = np.zeros((n, 3, 3))
    pos = np.zeros((n, 3))
    bodies = description.bodies
    for s, c in enumerate(colliders):
        shape[s, L.S_TYPE] = L.SHAPE_NAMES.index(c.shape)
        if c.body is not None:
            t, link = where[c.body]
            shape[s, L.S_LINK] = link
            fixed_root = tree_table[t, L.T_ROOT] == 0 and link == tree_table[t, L.T_LINK0]
            shape[s, L.S_TREE] = -1 if fixed_root else t
            shape[s, L.S_SELF_COLLIDE] = int(self_collisions[t])
            shape[s, L.S_ARTICULATED] = int(articulated[t])
            shape[s, L.S_KINEMATIC] = tree_table[t, L.T_KINEMATIC]
        shape[s, L.S_GROUP] = c.group
        body = bodies.get(c.body) if c.body else None
        m = c.material
        par[s, L.SP_SIZE0 : L.SP_SIZE2 + 1] = c.size
        par[s, L.SP_CONTACT_OFFSET] = c.contact_offset
        par[s, L.SP_REST_OFFSET] = c.rest_offset
        par[s, L.SP_STATIC_FRICTION] = m.static_friction
        par[s, L.SP_DYNAMIC_FRICTION] = m.dynamic_friction
        par[s, L.SP_RESTITUTION] = m.restitution
        par[s, L.SP_FRICTION_COMBINE] = COMBINE_MODES.index(m.friction_combine)
        par[s, L.SP_RESTITUTION_COMBINE] = COMBINE_MODES.index(m.restitution_combine)
        par[s, L.SP_MAX_DEPENETRATION] = body.max_depenetration_velocity if body else np.inf
        par[s, L.SP_MAX_IMPULSE] = body.max_contact_impulse if body else np.inf
        par[s, L.SP_BOUND] = _bound(c)
        if body is not None:
            par[s, L.SP_SURFACE_LINEAR : L.SP_SURFACE_LINEAR + 3] = body.surface_velocity
            par[s, L.SP_SURFACE_ANGULAR : L.SP_SURFACE_ANGULAR + 3] = body.surface_angular_velocity
            par[s, L.SP_SURFACE_LOCAL] = float(body.surface_local)
        if c.shape == "mesh":
            x = c.hull[np.asarray(c.faces), 0]
            par[s, L.SP_TRIANGLE_WIDTH] = float((x.max(axis=1) - x.min(axis=1)).max())
        if c.shape in ("convex", "mesh"):
            low, high = c.hull.min(axis=0), c.hull.max(axis=0)
            par[s, L.SP_BOX_CENTRE : L.SP_BOX_CENTRE + 3] = 0.5 * (low + high)
            par[s, L.SP_BOX_HALF : L.SP_BOX_HALF + 3] = 0.5 * (high - low)
        rot[s] = quat_to_matrix(c.pose.orientation)
        pos[s] = c.pose.position
    groups = len(description.collision_groups)
    group_filter = np.zeros((max(groups, 1), max(groups, 1)), np.int64)
    for a, b in description.filtered_groups:
        group_filter[a, b] = 1

    index = {c.path: s for s, c in enumerate(colliders)}

    def owned(prim: str) -> list[int]:
        """Shapes of a joint's side: a body's shapes, or the static shapes at or under that prim."""
        return [
            s
            for s, c in enumerate(colliders)
            if c.body == prim or (c.body is None and (c.path == prim or c.path.startswith(prim + "/")))
        ]

    keys = {pair_key(index[a], index[b], n) for a, b in description.filtered_pairs if a in index and b in index}
    for a, b in description.jointed_pairs:
        keys |= {pair_key(i, j, n) for i in owned(a) for j in owned(b) if i != j}
    settings = np.zeros(L.CONTACT_SETTING_COUNT)
    st = description.settings
    settings[L.CS_BOUNCE_THRESHOLD] = st.bounce_threshold
    settings[L.CS_FRICTION_OFFSET_THRESHOLD] = st.friction_offset_threshold
    settings[L.CS_CORRELATION_DISTANCE] = st.friction_correlation_distance
    hulls = [c.hull if c.shape in ("convex", "mesh") else np.zeros((0, 3)) for c in colliders]
    hull_start = np.concatenate([[0], np.cumsum([len(h) for h in hulls])]).astype(np.int64)
    hull_point = np.concatenate(hulls).reshape(-1, 3) if hulls else np.zeros((0, 3))
    faces = [c.faces if c.shape in ("convex", "mesh") else [] for c in colliders]
    hull_faces = np.concatenate([[0], np.cumsum([len(f) for f in faces])]).astype(np.int64)
    every_face = [face for shape_faces in faces for face in shape_faces]
    face_start = np.concatenate([[0], np.cumsum([len(f) for f in every_face])]).astype(np.int64)
    face_vertex = np.concatenate([np.zeros(0, np.int64), *every_face]).astype(np.int64)
    keys = np.array(sorted(keys), np.int64)
    return Shapes(
        shape, par, rot, pos, group_filter, keys, settings, hull_start, hull_point, hull_faces, face_start, face_vertex
    )
