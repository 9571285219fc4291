"""Can every joint of an articulation move something? Checked on the articulated-body inertias.

A DOF whose articulated inertia along its axis (S^T I^A S plus armature) is zero has no acceleration the
dynamics can compute: a prismatic joint whose child has inertia but no mass, a revolute joint whose
subtree is a point mass on the axis, a massless leaf. A floating base needs a 6x6 articulated inertia of
full rank at the root: a massless root link with one revolute child leaves a direction of the root's
motion without inertia. Both are found with one backward pass of the articulated-body algorithm, in world
coordinates at the authored pose (the body poses and joint frames the importer read), before anything is
built on them.
"""

from __future__ import annotations

import numpy as np

from ...core.description import ArticulationDesc, BodyDesc
from ...core.frames import pose_matrix, quat_to_matrix
from ...errors import PhysicsImportError

RELATIVE_ZERO = 1e-10  # an inertia this small next to the articulation's largest is none
# The solver holds a body's inertia about the world origin, where its own moments I add to m |c|^2 (c its
# centre of mass): measured, a free body's step is NaN once I / m < 1e-16 max(|c|^2, 1 m^2) (a 1 kg ball of a
# 1 nm collider 1 m up; 1e-8 kg m^2 on 1 kg 100 km out). Below this fraction (a hundred times that) it keeps
# under two digits of it; above, it is simulated.
RESOLVED = 1e-14


def check_articulation_can_move(art: ArticulationDesc) -> None:
    inertia = [_spatial_inertia(b) for b in art.bodies]
    scale = max((float(np.abs(i).max()) for i in inertia), default=0.0)
    if scale <= 0:
        raise PhysicsImportError(art.root_link, "articulation has no mass or inertia anywhere")
    zero = RELATIVE_ZERO * scale
    for i in range(len(art.links) - 1, 0, -1):
        joint = art.joints[i]
        if not joint.dofs:  # welded: the child's inertia is the parent's
            inertia[art.link_parents[i]] += inertia[i]
            continue
        s = _motion_subspace(art, i)
        d = s.T @ inertia[i] @ s + np.diag([dof.armature for dof in joint.dofs])
        if np.linalg.eigvalsh(0.5 * (d + d.T)).min() <= zero:
            raise PhysicsImportError(
                art.links[i],
                f"joint {joint.path} has nothing to move: this link and everything beyond it have no mass or "
                "inertia along its axis (author physics:mass and physics:diagonalInertia, a collider, or an "
                "armature)",
            )
        u = inertia[i] @ s
        inertia[art.link_parents[i]] += inertia[i] - u @ np.linalg.solve(d, u.T)
    if not art.fixed_base and np.linalg.eigvalsh(0.5 * (inertia[0] + inertia[0].T)).min() <= zero:
        raise PhysicsImportError(
            art.root_link,
            "floating articulation has no inertia along some direction of its root's motion (a massless root "
            "link whose joints leave it free to move alone); give the root link mass and inertia",
        )


def _spatial_inertia(body: BodyDesc | None) -> np.ndarray:
    """6x6 [angular; linear] inertia about the world origin in world axes (zero for a static anchor)."""
    if body is None:
        return np.zeros((6, 6))
    rot = quat_to_matrix(body.pose.orientation)
    c = body.pose.position + rot @ body.com
    cx = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    m = body.mass
    out = np.zeros((6, 6))
    out[:3, :3] = rot @ body.inertia @ rot.T - m * cx @ cx
    out[:3, 3:] = m * cx
    out[3:, :3] = -m * cx
    out[3:, 3:] = m * np.eye(3)
    return out


def _motion_subspace(art: ArticulationDesc, link: int) -> np.ndarray:
    """Columns [axis; p x axis] (rotation about an axis through p) or [0; axis] (translation), world."""
    joint = art.joints[link]
    body = art.bodies[link] or art.bodies[art.links.index(art.composed_links[art.links[link]])]
    frame = pose_matrix(body.pose) @ pose_matrix(joint.frame1)
    p = frame[:3, 3]
    columns = []
    for dof in joint.dofs:
        axis = frame[:3, "XYZ".index(dof.axis[-1])]
        columns.append(
            np.concatenate([axis, np.cross(p, axis)]) if dof.angular else np.concatenate([np.zeros(3), axis])
        )
    return np.array(columns).T
