"""`Model`: an articulation description flattened into numpy arrays for the numba kernels.

Arrays are in low-level (BFS) link order and low-level DOF order. A Model is immutable after build and
shared by any number of worlds (Pinocchio's Model/Data and MuJoCo's mjModel/mjData split); everything
that changes lives in `usdart.state`.

Kinematics. The pose of link i in its parent's frame is
    X_parent_child(q) = F_parent[i] * J_i(q) * inverse(F_child[i])
where F_parent / F_child are the joint frames in the parent / child link frames (link frame = body prim
frame, scale removed) and J_i(q) moves the child joint frame relative to the parent one: a rotation
about the axis (revolute), a quaternion (spherical, 2-3 rotational DOFs), or a translation (prismatic).

Velocities. A joint's DOF velocities are the components of the child's motion relative to the parent
along the joint axes, expressed in the child joint frame (PhysX's constant motion subspace), so the
spatial motion columns `motion` are constant in the child link frame. A floating root moves with the
generalized velocity [v_com (world), omega (world)]: PhysX's root velocity, whose layout (linear first,
then angular) the generalized arrays (6 + n) keep.

Inertia. Each link's inertia is kept about the link frame origin as (mass, first moment m*c, rotational
inertia about the origin): ten numbers that move between frames without 6x6 products.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .importer.description import ANGULAR_AXES, ArticulationDesc, Pose
from .importer.frames import quat_to_matrix

JOINT_FIXED, JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_SPHERICAL, JOINT_FREE = 0, 1, 2, 3, 4
_UNIT = {"X": 0, "Y": 1, "Z": 2}


class Model(NamedTuple):
    """Constant arrays of one articulation (a NamedTuple so numba kernels take it as one argument)."""

    n_links: int
    n_dofs: int
    n_root: int  # generalized root DOFs: 6 for a floating base, 0 for a fixed one
    parent: np.ndarray  # (n_links,) int64, -1 for the root
    joint_type: np.ndarray  # (n_links,) int64, JOINT_*; the root is FIXED or FREE
    dof_start: np.ndarray  # (n_links + 1,) int64: DOFs of link i are dof_start[i]:dof_start[i+1]
    dof_link: np.ndarray  # (n_dofs,) int64: link moved by each DOF
    dof_axis: np.ndarray  # (n_dofs, 3) unit axis in the joint frame
    dof_angular: np.ndarray  # (n_dofs,) bool
    motion: np.ndarray  # (n_dofs, 6) motion columns [omega; v] in child link coordinates, at its origin
    parent_frame_rot: np.ndarray  # (n_links, 3, 3) joint frame in the parent link frame
    parent_frame_pos: np.ndarray  # (n_links, 3)
    child_frame_rot: np.ndarray  # (n_links, 3, 3) joint frame in the child link frame
    child_frame_pos: np.ndarray  # (n_links, 3)
    rest_rot: np.ndarray  # (n_links, 3, 3) F_parent.R @ F_child.R^T: child rotation in parent at q = 0
    revolute_outer: np.ndarray  # (n_links, 3, 3) (F_p.R a)(F_c.R a)^T: the part of rest_rot along the axis
    revolute_cross: np.ndarray  # (n_links, 3, 3) F_p.R [a]x F_c.R^T: so R(q) = outer + cos q (rest - outer) + sin q cross
    prismatic_axis: np.ndarray  # (n_links, 3) F_p.R a: slide direction in the parent link frame
    mass: np.ndarray  # (n_links,)
    com: np.ndarray  # (n_links, 3) in the link frame
    inertia_com: np.ndarray  # (n_links, 3, 3) about the COM, link axes
    first_moment: np.ndarray  # (n_links, 3) mass * com
    inertia_origin: np.ndarray  # (n_links, 3, 3) about the link frame origin, link axes
    armature: np.ndarray  # (n_dofs,)
    gravity: np.ndarray  # (3,) world frame, m/s^2


def _frame(pose: Pose | None):
    if pose is None:
        return np.zeros(3), np.eye(3)
    return np.asarray(pose.position, float), quat_to_matrix(pose.orientation)


def _skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def build_model(desc: ArticulationDesc, gravity) -> Model:
    """Flatten an imported articulation (links in BFS order, joints oriented parent -> child)."""
    n = len(desc.links)
    dofs = desc.dofs
    nd = len(dofs)
    joint_type = np.zeros(n, np.int64)
    joint_type[0] = JOINT_FIXED if desc.fixed_base else JOINT_FREE
    dof_start = np.zeros(n + 1, np.int64)
    pf_pos, pf_rot = np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1))
    cf_pos, cf_rot = np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1))
    for i, joint in enumerate(desc.joints):
        count = len(joint.dofs) if joint is not None else 0
        dof_start[i + 1] = dof_start[i] + count
        if joint is None:
            continue
        pf_pos[i], pf_rot[i] = _frame(joint.frame0)
        cf_pos[i], cf_rot[i] = _frame(joint.frame1)
        if count == 0:
            joint_type[i] = JOINT_FIXED
        elif joint.dofs[0].axis in ANGULAR_AXES:
            joint_type[i] = JOINT_REVOLUTE if count == 1 else JOINT_SPHERICAL
        else:
            joint_type[i] = JOINT_PRISMATIC

    axis = np.zeros((nd, 3))
    for k, d in enumerate(dofs):
        axis[k, _UNIT[d.axis[-1]]] = 1.0
    dof_link = np.repeat(np.arange(n), np.diff(dof_start))
    angular = np.array([d.angular for d in dofs], bool)
    motion = np.zeros((nd, 6))
    for k in range(nd):
        i = dof_link[k]
        u = cf_rot[i] @ axis[k]
        if angular[k]:
            motion[k, :3] = u
            motion[k, 3:] = np.cross(cf_pos[i], u)
        else:
            motion[k, 3:] = u

    rest = pf_rot @ np.transpose(cf_rot, (0, 2, 1))
    outer, cross, slide = np.zeros((n, 3, 3)), np.zeros((n, 3, 3)), np.zeros((n, 3))
    for i in range(1, n):
        if joint_type[i] in (JOINT_REVOLUTE, JOINT_PRISMATIC):
            a = axis[dof_start[i]]
            outer[i] = np.outer(pf_rot[i] @ a, cf_rot[i] @ a)
            cross[i] = pf_rot[i] @ _skew(a) @ cf_rot[i].T
            slide[i] = pf_rot[i] @ a

    mass = np.array([b.mass if b else 0.0 for b in desc.bodies], float)
    com = np.array([b.com if b else np.zeros(3) for b in desc.bodies], float).reshape(n, 3)
    inertia = np.array([b.inertia if b else np.zeros((3, 3)) for b in desc.bodies], float).reshape(n, 3, 3)
    first = mass[:, None] * com
    com_sq = np.sum(com * com, axis=1)
    origin = inertia + mass[:, None, None] * (com_sq[:, None, None] * np.eye(3) - com[:, :, None] * com[:, None, :])
    return Model(
        n_links=n, n_dofs=nd, n_root=0 if desc.fixed_base else 6,
        parent=np.array(desc.link_parents, np.int64), joint_type=joint_type, dof_start=dof_start,
        dof_link=dof_link.astype(np.int64), dof_axis=axis, dof_angular=angular, motion=motion,
        parent_frame_rot=pf_rot, parent_frame_pos=pf_pos, child_frame_rot=cf_rot, child_frame_pos=cf_pos,
        rest_rot=rest, revolute_outer=outer, revolute_cross=cross, prismatic_axis=slide,
        mass=mass, com=com, inertia_com=inertia, first_moment=first, inertia_origin=origin,
        armature=np.array([d.armature for d in dofs], float), gravity=np.asarray(gravity, float).copy(),
    )


def structure_key(model: Model) -> tuple:
    """What two articulations must share for a cache of one to fit the other."""
    return (model.n_links, model.n_dofs, model.n_root, tuple(model.parent), tuple(model.joint_type),
            tuple(model.dof_start), tuple(map(tuple, model.dof_axis)))
