"""The scene `Model`: every articulation, free body and joint between them in one set of flat tables.

Trees (articulations and free bodies, each a one-link floating tree) are index ranges of links, DOFs and
generalized velocities (the `articulation_start` pattern); islands are trees joined by joints outside
the trees, solved together; the constraint-row table lists every row the solver visits, in order, with
its kind and source (as MuJoCo's efc_type / efc_id). One kernel call steps the whole scene in every world.
Columns of the tables are named in usdart.core.layout. Immutable after build: what users change between
steps lives in the Control (usdart.core.state).

Generalized velocities of tree t are v_start..v_end: a floating root's [v_com; omega] (world) first,
then its DOFs; `v_parent` is the expanded parent array used by the tree-sparse mass matrix
(usdart.core.kernels.tree_factor), `v_h` where each velocity's row of it starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from . import layout as L
from .articulation_model import ArticulationModel, axis_drives, axis_limits, cone_limited
from .frames import pose_matrix
from .shapes import Shapes, no_shapes


class Trees(NamedTuple):
    tree: np.ndarray  # (n_trees, TREE_COLUMNS) int64: T_*
    island: np.ndarray  # (n_islands, ISLAND_COLUMNS) int64: I_*
    island_trees: np.ndarray  # (n_trees,) int64: trees by island; island i owns island_trees[I_TREE0:I_TREE1]
    v_parent: np.ndarray  # (n_v,) int64: expanded parent (global velocity index, -1 at a tree's first)
    v_h: np.ndarray  # (n_v + 1,) int64: start of each velocity's row in the sparse mass matrix
    v_dof: np.ndarray  # (n_v,) int64: DOF of a velocity, -1 for a floating root's six


class Links(NamedTuple):
    link: np.ndarray  # (n_links, LINK_COLUMNS) int64: L_* (parent is a global link index, -1 for roots)
    link_rot: np.ndarray  # (n_links, LINK_ROT_COUNT, 3, 3): joint frames, joint rotation terms, inertias
    link_vec: np.ndarray  # (n_links, LINK_VEC_COUNT, 3): joint frame origins, slide axis, COM, first moment
    link_par: np.ndarray  # (n_links, LINK_PAR_COLUMNS) float: LP_*


class Dofs(NamedTuple):
    dof: np.ndarray  # (n_dofs, DOF_COLUMNS) int64: D_*
    dof_par: np.ndarray  # (n_dofs, DOF_PAR_COLUMNS) float: DP_*


class Couplings(NamedTuple):
    row: np.ndarray  # (n_rows, ROW_COLUMNS) int64: R_*, in solver order
    mimic: np.ndarray  # (n_mimic, 2) int64: follower DOF, leader DOF
    mimic_par: np.ndarray  # (n_mimic, 4): MP_*
    tendon_start: np.ndarray  # (n_fixed + 1,) int64: axes of fixed tendon t are tendon_start[t]:[t+1]
    tendon_dof: np.ndarray  # (n_axes,) int64
    tendon_axis: np.ndarray  # (n_axes, 2): gearing, force coefficient
    tendon_par: np.ndarray  # (n_fixed, 7): TP_*
    spatial_start: np.ndarray  # (n_sub + 1,) int64: attachment points of spatial sub-tendon s (root -> leaf)
    spatial_link: np.ndarray  # (n_points,) int64: global link of each point
    spatial_point: np.ndarray  # (n_points, 3) in the link frame
    spatial_gearing: np.ndarray  # (n_points,)
    spatial_par: np.ndarray  # (n_sub, 7): TP_*; rest length measured at build where unauthored
    joint_link: np.ndarray  # (n_joints, 2) int64: global link of body0 / body1 side, -1 for the world
    joint_frame: np.ndarray  # (n_joints, 2, 4, 4): joint frame in that link's frame (or the world)
    joint_sides: np.ndarray  # (n_joints,) int64: which sides move (usdart.core.kernels.couplings)
    joint_limit: np.ndarray  # (n_joints, 6, 2): [lower, upper] of each free axis its ROW_JOINT_LIMIT rows hold
    joint_drive: np.ndarray  # (n_joints, 6, JD_COLUMNS): JD_* of each free axis its ROW_JOINT_DRIVE rows drive
    joint_par: np.ndarray  # (n_joints, JP_COLUMNS): JP_* (break force and torque; a distance joint's lengths)


class Model(NamedTuple):
    trees: Trees
    links: Links
    dofs: Dofs
    couplings: Couplings
    shapes: Shapes  # collision shapes (usdart.core.shapes; set by the scene after the trees are numbered)
    gravity: np.ndarray  # (3,) world, m/s^2
    n_response: int  # floats of row responses per world
    n_jacobian: int  # floats of row Jacobians per world
    max_tree_velocities: int


@dataclass
class ConstraintJoint:
    """A joint solved as constraint rows rather than a tree joint (a loop-closing joint, a joint between
    trees or to the world): its frames, locked axes and the (tree, local link) of each side (-1: world)."""

    path: str
    frame0: np.ndarray  # 4x4
    frame1: np.ndarray
    locked: np.ndarray  # (6,) bool: [x, y, z, rotX, rotY, rotZ] of the joint frame
    side0: tuple[int, int]
    side1: tuple[int, int]
    limits: np.ndarray = field(default_factory=lambda: np.array([[-np.inf, np.inf]] * 6))  # (6, 2) [lower, upper]
    # of its limited free axes (articulation_model.axis_limits; +-inf: none)
    drives: np.ndarray = field(default_factory=lambda: np.zeros((6, L.JD_COLUMNS)))  # (6, JD_COLUMNS) drives of
    # its free axes (articulation_model.axis_drives; zeros: none)
    cone: bool = False  # its rotY / rotZ limits are a spherical joint's cone (articulation_model.cone_limited)
    swings: bool = False  # its rotY / rotZ limits are a D6's swing pyramid (measured on the swing, LIMIT_SWING)
    par: np.ndarray = field(default_factory=lambda: joint_parameters())  # (JP_COLUMNS,) JP_*

    @property
    def distance(self) -> bool:
        """A distance joint (rows on its frames' distance, JP_MIN_DISTANCE ..; no axes): joint_parameters
        gives every one PhysX's tolerance, no other joint (as the kernels' solver.distance_joint reads it)."""
        return bool(self.par[L.JP_DISTANCE_TOLERANCE] > 0.0)


DISTANCE_TOLERANCE = 0.025  # m: PhysX's distance joint tolerance, 0.025 of its length scale (1 m in any units)


def joint_parameters(break_force=np.inf, break_torque=np.inf, distance=None) -> np.ndarray:
    """A joint's JP_* row: its break force and torque (SI; inf: unbreakable) and, for a distance joint
    (usdart.core.description.JointDesc), its minimum and maximum, PhysX's tolerance and its spring."""
    out = np.zeros(L.JP_COLUMNS)
    out[L.JP_BREAK_FORCE], out[L.JP_BREAK_TORQUE] = break_force, break_torque
    out[L.JP_MIN_DISTANCE], out[L.JP_MAX_DISTANCE] = -np.inf, np.inf
    if distance is not None:
        out[L.JP_MIN_DISTANCE], out[L.JP_MAX_DISTANCE] = distance.min_distance, distance.max_distance
        out[L.JP_DISTANCE_TOLERANCE] = DISTANCE_TOLERANCE
        if distance.spring is not None:
            out[L.JP_SPRING] = 1.0
            out[L.JP_SPRING_STIFFNESS], out[L.JP_SPRING_DAMPING] = distance.spring
    return out


def _islands(n_trees: int, joints: list[ConstraintJoint]) -> list[list[int]]:
    parent = list(range(n_trees))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for j in joints:
        trees = {s[0] for s in (j.side0, j.side1) if s[0] >= 0}
        if len(trees) == 2:
            a, b = (find(t) for t in trees)
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for t in range(n_trees):
        groups.setdefault(find(t), []).append(t)
    return sorted(groups.values())


def build_model(trees: list[ArticulationModel], cross_joints: list[ConstraintJoint], gravity) -> Model:
    """Concatenate the trees' arrays, number generalized velocities, and lay out the row table.

    Loop joints inside a tree (ArticulationModel.loop_*) become joint rows with both sides on that
    tree; `cross_joints` join different trees (or a tree and the world through a free body).
    """
    T = len(trees)
    link_start = np.concatenate([[0], np.cumsum([m.n_links for m in trees])]).astype(np.int64)
    dof_start = np.concatenate([[0], np.cumsum([m.n_dofs for m in trees])]).astype(np.int64)
    v_start = np.concatenate([[0], np.cumsum([m.n_root + m.n_dofs for m in trees])]).astype(np.int64)
    N, D, V = int(link_start[-1]), int(dof_start[-1]), int(v_start[-1])

    tree = np.zeros((T, L.TREE_COLUMNS), np.int64)
    link = np.zeros((N, L.LINK_COLUMNS), np.int64)
    link_rot = np.zeros((N, L.LINK_ROT_COUNT, 3, 3))
    link_vec = np.zeros((N, L.LINK_VEC_COUNT, 3))
    link_par = np.zeros((N, L.LINK_PAR_COLUMNS))
    dof = np.zeros((D, L.DOF_COLUMNS), np.int64)
    dof_par = np.zeros((D, L.DOF_PAR_COLUMNS))
    v_parent = np.full(V, -1, np.int64)
    v_dof = np.full(V, -1, np.int64)
    for t, m in enumerate(trees):
        l0, d0, v0 = link_start[t], dof_start[t], v_start[t]
        n, nd, nr = m.n_links, m.n_dofs, m.n_root
        tree[t] = [l0, l0 + n, d0, d0 + nd, v0, v0 + nr + nd, nr, 0, int(m.kinematic), int(m.free_body)]
        links = slice(l0, l0 + n)
        link[links, L.L_PARENT] = np.where(m.parent >= 0, m.parent + l0, -1)
        link[links, L.L_JOINT] = m.joint_type
        link[links, L.L_DOF0] = m.dof_start[:-1] + d0
        link[links, L.L_DOF1] = m.dof_start[1:] + d0
        link[links, L.L_TREE] = t
        for column, values in (
            (L.PARENT_FRAME_ROT, m.parent_frame_rot),
            (L.CHILD_FRAME_ROT, m.child_frame_rot),
            (L.REST_ROT, m.rest_rot),
            (L.REVOLUTE_OUTER, m.revolute_outer),
            (L.REVOLUTE_CROSS, m.revolute_cross),
            (L.INERTIA_COM, m.inertia_com),
            (L.INERTIA_ORIGIN, m.inertia_origin),
        ):
            link_rot[links, column] = values
        for column, values in (
            (L.PARENT_FRAME_POS, m.parent_frame_pos),
            (L.CHILD_FRAME_POS, m.child_frame_pos),
            (L.PRISMATIC_AXIS, m.prismatic_axis),
            (L.COM, m.com),
            (L.FIRST_MOMENT, m.first_moment),
        ):
            link_vec[links, column] = values
        for column, values in (
            (L.LP_MASS, m.mass),
            (L.LP_LINEAR_DAMPING, m.link_linear_damping),
            (L.LP_ANGULAR_DAMPING, m.link_angular_damping),
            (L.LP_MAX_LINEAR_VELOCITY, m.link_max_linear_velocity),
            (L.LP_MAX_ANGULAR_VELOCITY, m.link_max_angular_velocity),
            (L.LP_GRAVITY, m.link_gravity),
            (L.LP_CFM_SCALE, m.link_cfm_scale),
            (L.LP_GYROSCOPIC, m.link_gyroscopic),
        ):
            link_par[links, column] = values
        dofs = slice(d0, d0 + nd)
        dof[dofs, L.D_LINK] = m.dof_link + l0
        dof[dofs, L.D_V] = v0 + nr + np.arange(nd)
        dof[dofs, L.D_DRIVE] = m.drive_mode
        dof[dofs, L.D_WRAPS] = m.dof_wraps
        dof_par[dofs, L.DP_AXIS : L.DP_AXIS + 3] = m.dof_axis
        dof_par[dofs, L.DP_MOTION : L.DP_MOTION + 6] = m.motion
        for column, values in (
            (L.DP_ARMATURE, m.armature),
            (L.DP_LOWER, m.dof_lower),
            (L.DP_UPPER, m.dof_upper),
            (L.DP_MAX_VELOCITY, m.max_joint_velocity),
            (L.DP_SCALING_CAP, m.scaling_cap),
            (L.DP_DAMPING, m.passive_damping),
            (L.DP_STIFFNESS, m.drive_stiffness),
            (L.DP_DRIVE_DAMPING, m.drive_damping),
            (L.DP_MAX_FORCE, m.drive_max_force),
            (L.DP_ENVELOPE, m.envelope_on),
            (L.DP_ENVELOPE_MAX_VELOCITY, m.envelope_max_velocity),
            (L.DP_ENVELOPE_RESISTANCE, m.envelope_resistance),
            (L.DP_ENVELOPE_GRADIENT, m.envelope_gradient),
            (L.DP_STATIC_FRICTION, m.friction_static),
            (L.DP_DYNAMIC_FRICTION, m.friction_dynamic),
            (L.DP_VISCOUS_FRICTION, m.friction_viscous),
        ):
            dof_par[dofs, column] = values
        # expanded parent array: the root's six velocities are a chain, then each DOF follows the previous
        # DOF of its joint or the last DOF of the nearest ancestor that moves
        for a in range(1, nr):
            v_parent[v0 + a] = v0 + a - 1
        last_v = np.full(n, v0 + nr - 1 if nr else -1, np.int64)  # last velocity moving each link
        for i in range(1, n):
            last = last_v[m.parent[i]]
            for k in range(m.dof_start[i], m.dof_start[i + 1]):
                v_parent[v0 + nr + k] = last
                v_dof[v0 + nr + k] = d0 + k
                last = v0 + nr + k
            last_v[i] = last
    depth = np.zeros(V, np.int64)
    for g in range(V):
        depth[g] = 1 + (depth[v_parent[g]] if v_parent[g] >= 0 else 0)
    v_h = np.concatenate([[0], np.cumsum(depth)]).astype(np.int64)

    joints = _internal_joints(trees) + list(cross_joints)
    islands = _islands(T, cross_joints)
    rows, joint_sides, island_rows, n_response, n_jacobian = _row_table(trees, tree, joints, islands, dof_start)
    island = np.zeros((len(islands), L.ISLAND_COLUMNS), np.int64)
    island_trees = np.array([t for members in islands for t in members], np.int64)
    start = 0
    for i, members in enumerate(islands):
        tree[members, L.T_ISLAND] = i
        island[i, L.I_TREE0], island[i, L.I_TREE1] = start, start + len(members)
        start += len(members)
        dynamic = [trees[t] for t in members if not trees[t].kinematic]  # (PhysX counts dynamic bodies only)
        island[i, L.I_POSITION_ITERATIONS] = max((m.position_iterations for m in dynamic), default=1)
        island[i, L.I_VELOCITY_ITERATIONS] = max((m.velocity_iterations for m in dynamic), default=0)
        island[i, L.I_ROW0], island[i, L.I_ROW1] = island_rows[i]

    couplings = Couplings(
        row=rows,
        **_mimic_table(trees, dof_start),
        **_fixed_tendon_table(trees, dof_start),
        **_spatial_table(trees, link_start),
        joint_link=np.array([[_global(s, link_start) for s in (j.side0, j.side1)] for j in joints], np.int64).reshape(
            len(joints), 2
        ),
        joint_frame=np.array([[j.frame0, j.frame1] for j in joints], float).reshape(len(joints), 2, 4, 4),
        joint_sides=np.array(joint_sides, np.int64),
        joint_limit=np.array([j.limits for j in joints], float).reshape(len(joints), 6, 2),
        joint_drive=np.array([j.drives for j in joints], float).reshape(len(joints), 6, L.JD_COLUMNS),
        joint_par=np.array([j.par for j in joints], float).reshape(len(joints), L.JP_COLUMNS),
    )
    return Model(
        Trees(tree, island, island_trees, v_parent, v_h, v_dof),
        Links(link, link_rot, link_vec, link_par),
        Dofs(dof, dof_par),
        couplings,
        no_shapes(),
        np.asarray(gravity, float).copy(),
        n_response,
        n_jacobian,
        int(max((m.n_root + m.n_dofs for m in trees), default=0)),
    )


def batch_model(model: Model, worlds: int) -> Model:
    """The model with a leading world axis on every float table (every world starts with the same
    parameters; usdart.core.kernels.world.world_model slices one world back out). Integer tables, the
    structure every world shares, stay as they are."""

    def batched(value):
        if isinstance(value, tuple):
            return type(value)(*(batched(v) for v in value))
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return np.repeat(value[None], worlds, axis=0)
        return value

    return batched(model)


def parameter_tables(model: Model) -> list[np.ndarray]:
    """The model's float tables in a fixed order (of a batched model: each with its world axis)."""
    if isinstance(model, np.ndarray):
        return [model] if model.dtype.kind == "f" else []
    if isinstance(model, tuple):
        return [table for value in model for table in parameter_tables(value)]
    return []


def structure_difference(a: Model, b: Model, prefix: str = "model") -> str | None:
    """Where two models differ in structure (an integer table, a table's shape, a count), or None when
    they differ at most in their float parameters: then one batched model can hold both as two worlds."""
    if isinstance(a, tuple):
        for name, x, y in zip(a._fields, a, b):
            found = structure_difference(x, y, f"{prefix}.{name}")
            if found:
                return found
        return None
    if isinstance(a, np.ndarray):
        if a.shape != b.shape:
            return f"{prefix} has shape {b.shape}, not {a.shape}"
        if a.dtype.kind != "f" and not np.array_equal(a, b):
            return f"{prefix} differs"
        return None
    return None if a == b else f"{prefix} is {b}, not {a}"


def closed_trees(model: Model) -> np.ndarray:
    """Per tree, whether only internal forces join its links: a floating tree of several links that no
    joint ties to the world or to another tree (its momentum changes only by gravity and link forces)."""
    tree = model.trees.tree
    closed = (tree[:, L.T_ROOT] == 6) & (tree[:, L.T_LINK1] - tree[:, L.T_LINK0] > 1)
    link_tree = model.links.link[:, L.L_TREE]
    for sides, links in zip(model.couplings.joint_sides, model.couplings.joint_link):
        if sides != 0:  # a joint between two trees or to the world
            for link in links:
                if link >= 0:
                    closed[link_tree[link]] = False
    return closed


def _global(side, link_start) -> int:
    t, local = side
    return -1 if t < 0 else int(link_start[t] + local)


def _internal_joints(trees: list[ArticulationModel]) -> list[ConstraintJoint]:
    out = []
    for t, m in enumerate(trees):
        for i in range(len(m.loop_links)):
            sides = [(-1, -1) if m.loop_links[i, s] < 0 else (t, int(m.loop_links[i, s])) for s in range(2)]
            par = joint_parameters(*m.loop_break[i])
            frames = m.loop_frames[i]
            out.append(ConstraintJoint(f"{t}:{i}", frames[0], frames[1], m.loop_locked[i], *sides, par=par))
    return out


def constraint_joint(desc, side0, side1, locked) -> ConstraintJoint:
    """A ConstraintJoint from an imported JointDesc, with the limits and drives of its free axes."""
    return ConstraintJoint(
        desc.path,
        pose_matrix(desc.frame0),
        pose_matrix(desc.frame1),
        np.asarray(locked, bool),
        side0,
        side1,
        axis_limits(desc),
        axis_drives(desc),
        cone_limited(desc),
        desc.kind == "d6",
        joint_parameters(desc.break_force, desc.break_torque, desc if desc.kind == "distance" else None),
    )


def _row_table(trees, tree, joints, islands, dof_start):
    """Rows in solver order, island by island: per tree its spatial tendons, fixed tendons, mimic joints and
    loop joints, then per DOF drive, friction, limit, velocity limit; then the joints between the
    island's trees. Each row gets its response (and Jacobian) storage."""
    rows = []
    sizes = {"resp": 0, "jac": 0}

    def take(key, n):
        off = sizes[key]
        sizes[key] += n
        return off

    spatial_base = np.concatenate([[0], np.cumsum([len(m.spatial_params) for m in trees])]).astype(int)
    fixed_base = np.concatenate([[0], np.cumsum([len(m.tendon_params) for m in trees])]).astype(int)
    mimic_base = np.concatenate([[0], np.cumsum([len(m.mimic_follower) for m in trees])]).astype(int)
    joint_sides = []
    for j in joints:
        t0, t1 = j.side0[0], j.side1[0]
        joint_sides.append(0 if t0 == t1 else (1 if t0 >= 0 and t1 >= 0 else (2 if t0 >= 0 else 3)))
    by_tree: dict[int, list[int]] = {}
    between: dict[int, list[int]] = {}
    for e, j in enumerate(joints):
        t0, t1 = j.side0[0], j.side1[0]
        if joint_sides[e] == 0 or t1 < 0 or t0 < 0:
            by_tree.setdefault(t0 if t0 >= 0 else t1, []).append(e)
        else:
            between.setdefault(min(t0, t1), []).append(e)  # both trees are in one island

    def joint_rows(e):
        j = joints[e]
        sides = joint_sides[e]
        t0 = j.side0[0] if sides != 3 else j.side1[0]
        t1 = j.side1[0] if sides == 1 else -1
        nv0 = int(tree[t0, L.T_V1] - tree[t0, L.T_V0])
        nv1 = int(tree[t1, L.T_V1] - tree[t1, L.T_V0]) if t1 >= 0 else 0

        def add(kind, code):
            rows.append(
                [kind, e, code, t0, t1, take("resp", nv0), take("resp", nv1) if t1 >= 0 else -1, take("jac", nv0 + nv1)]
            )

        if j.distance:  # PhysX's: a row per bound, or one where both are one length
            low, high = j.par[L.JP_MIN_DISTANCE], j.par[L.JP_MAX_DISTANCE]
            if np.isfinite(low) and low == high:
                add(L.ROW_JOINT_LIMIT, L.LIMIT_DISTANCE + 12)
            for side, bound in enumerate((low, high)):
                if np.isfinite(bound) and low != high:
                    add(L.ROW_JOINT_LIMIT, L.LIMIT_DISTANCE + 6 * side)
            return
        # a joint's rows, each kind angular axes first (PhysX's order): its drives, its limits' sides, then its
        # locked axes
        drives, limits = j.drives, j.limits
        for axis in (3, 4, 5, 0, 1, 2):
            if drives[axis, L.JD_STIFFNESS] != 0.0 or drives[axis, L.JD_DAMPING] != 0.0:
                add(L.ROW_JOINT_DRIVE, (L.DRIVE_SWING if j.swings and axis >= 4 else 0) + axis)
        if j.cone:
            add(L.ROW_JOINT_LIMIT, L.LIMIT_CONE)
        for axis in (3, 4, 5, 0, 1, 2):
            for side in range(2):
                if np.isfinite(limits[axis, side]) and not (j.cone and axis >= 4):
                    swing = j.swings and axis >= 4
                    add(L.ROW_JOINT_LIMIT, (L.LIMIT_SWING if swing else 0) + axis + 6 * side)
        for axis in (3, 4, 5, 0, 1, 2):
            if j.locked[axis]:
                add(L.ROW_JOINT, axis)

    island_rows = []
    for members in islands:
        first = len(rows)
        for t in members:
            m = trees[t]
            nv = m.n_root + m.n_dofs
            for s in range(len(m.spatial_params)):
                rows.append(
                    [L.ROW_SPATIAL_TENDON, spatial_base[t] + s, 0, t, -1, take("resp", nv), -1, take("jac", nv)]
                )
            for s in range(len(m.tendon_params)):
                rows.append([L.ROW_FIXED_TENDON, fixed_base[t] + s, 0, t, -1, take("resp", nv), -1, take("jac", nv)])
            for s in range(len(m.mimic_follower)):
                rows.append([L.ROW_MIMIC, mimic_base[t] + s, 0, t, -1, take("resp", nv), -1, take("jac", nv)])
            for e in by_tree.get(t, []):
                joint_rows(e)
            for k in range(m.n_dofs):
                kinds = []
                if m.drive_mode[k] != L.DRIVE_NONE and m.drive_max_force[k] > 0:
                    kinds.append(L.ROW_DRIVE)
                if m.friction_static[k] != 0 or m.friction_viscous[k] != 0:
                    kinds.append(L.ROW_FRICTION)
                if np.isfinite(m.dof_lower[k]) or np.isfinite(m.dof_upper[k]):
                    kinds.append(L.ROW_LIMIT)
                if np.isfinite(m.max_joint_velocity[k]):
                    kinds.append(L.ROW_VELOCITY_LIMIT)
                if kinds:
                    column = take("resp", nv)
                    for n, kind in enumerate(kinds):
                        rows.append([kind, dof_start[t] + k, int(n == 0), t, -1, column, -1, -1])
        for t in members:
            for e in between.get(t, []):
                joint_rows(e)
        island_rows.append((first, len(rows)))
    table = np.array(rows, np.int64).reshape(len(rows), L.ROW_COLUMNS)
    return table, joint_sides, island_rows, sizes["resp"], sizes["jac"]


def _mimic_table(trees, dof_start) -> dict:
    pairs = [
        [dof_start[t] + f, dof_start[t] + l]
        for t, m in enumerate(trees)
        for f, l in zip(m.mimic_follower, m.mimic_leader)
    ]
    par = [
        [g, o, fr, z]
        for m in trees
        for g, o, fr, z in zip(m.mimic_gearing, m.mimic_offset, m.mimic_frequency, m.mimic_damping_ratio)
    ]
    return dict(mimic=np.array(pairs, np.int64).reshape(-1, 2), mimic_par=np.array(par, float).reshape(-1, 4))


def _fixed_tendon_table(trees, dof_start) -> dict:
    starts, dofs, axes, params = [0], [], [], []
    for t, m in enumerate(trees):
        for s in range(len(m.tendon_params)):
            for e in range(m.tendon_start[s], m.tendon_start[s + 1]):
                dofs.append(dof_start[t] + m.tendon_dof[e])
                axes.append([m.tendon_gearing[e], m.tendon_force_coefficient[e]])
            starts.append(len(dofs))
            params.append(m.tendon_params[s])
    return dict(
        tendon_start=np.array(starts, np.int64),
        tendon_dof=np.array(dofs, np.int64),
        tendon_axis=np.array(axes, float).reshape(-1, 2),
        tendon_par=np.array(params, float).reshape(-1, 7),
    )


def _spatial_table(trees, link_start) -> dict:
    starts, links, points, gearings, params = [0], [], [], [], []
    for t, m in enumerate(trees):
        for s in range(len(m.spatial_params)):
            for p in range(m.spatial_start[s], m.spatial_start[s + 1]):
                links.append(link_start[t] + m.spatial_link[p])
                points.append(m.spatial_point[p])
                gearings.append(m.spatial_gearing[p])
            starts.append(len(links))
            params.append(m.spatial_params[s])
    return dict(
        spatial_start=np.array(starts, np.int64),
        spatial_link=np.array(links, np.int64),
        spatial_point=np.array(points, float).reshape(-1, 3),
        spatial_gearing=np.array(gearings, float),
        spatial_par=np.array(params, float).reshape(-1, 7),
    )
