"""Groups of articulations and free bodies joined by joints, stepped together (usdart.kernels.group).

A joint whose two bodies belong to different members (two articulations, or an articulation and a
free body, or two free bodies) cannot be a loop row inside one articulation; the members it joins are
solved together, and never sleep (a member falling asleep alone would freeze its side of the joint).
Members not joined to any other step on their own.
"""
from __future__ import annotations

import numpy as np

from .articulation import Articulation
from .importer.description import JointDesc
from .importer.frames import pose_matrix
from .kernels.group import step_group
from .model import locked_axes


class CoupledGroup:
    """Members (Articulation objects) and the joints between them, with the solver's scratch arrays."""

    def __init__(self, members: list[Articulation], joints: list[tuple[JointDesc, tuple, tuple]], worlds: int):
        self.members = members
        self.joint_paths = [j.path for j, _, _ in joints]
        n = len(joints)
        self.joint_art = np.array([[a for a, _ in sides] for _, *sides in joints], np.int64).reshape(n, 2)
        self.joint_link = np.array([[link for _, link in sides] for _, *sides in joints], np.int64).reshape(n, 2)
        self.joint_frame = np.array([[pose_matrix(j.frame0), pose_matrix(j.frame1)] for j, _, _ in joints],
                                    float).reshape(n, 2, 4, 4)
        self.joint_locked = np.array([locked_axes(j) for j, _, _ in joints], bool).reshape(n, 6)
        nv = max(m.model.n_root + m.model.n_dofs for m in members)
        self._boxes = [tuple(getattr(m, name) for m in members)
                       for name in ("_model_box", "_state_box", "_stage_box", "_control_box", "_work_box")]
        self._scratch = (np.zeros((worlds, 2, 6, nv)), np.zeros((worlds, 2, 4, 4)), np.zeros((worlds, 6 * n, 2, nv)),
                         np.zeros((worlds, 6 * n, 2, nv)), np.zeros((worlds, 6 * n)), np.zeros((worlds, 6 * n)),
                         np.zeros((worlds, 3)))

    def step(self, dt: float, steps: int, rk4: bool) -> None:
        step_group(*self._boxes, self.joint_art, self.joint_link, self.joint_frame, self.joint_locked, *self._scratch,
                   float(dt), int(steps), rk4)


def coupled_groups(members: list[Articulation], joints: list[JointDesc], worlds: int) -> list[CoupledGroup]:
    """Union the members joined by `joints` (bodies unknown to every member are ignored)."""
    where = {}
    for i, member in enumerate(members):
        for k, link in enumerate(member.desc.links):
            where[link] = (i, k)
    parent = list(range(len(members)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    crossing = []
    for joint in joints:
        sides = [(-1, -1) if b is None else where.get(b) for b in joint.bodies()]
        if None in sides or joint.kind == "distance":
            continue
        members_joined = {a for a, _ in sides if a >= 0}
        if len(members_joined) < 2:
            continue  # to the world or inside one articulation: the articulation's own loop rows
        a, b = (find(m) for m in members_joined)
        parent[a] = b
        crossing.append((joint, sides))
    groups = {}
    for joint, sides in crossing:
        groups.setdefault(find(sides[0][0]), []).append((joint, sides))
    out = []
    for root, group_joints in groups.items():
        ids = [i for i in range(len(members)) if find(i) == root]
        local = {i: n for n, i in enumerate(ids)}
        rows = [(j, (local.get(a, -1), k), (local.get(b, -1), l)) for j, ((a, k), (b, l)) in group_joints]
        out.append(CoupledGroup([members[i] for i in ids], rows, worlds))
    return out
