"""The public `Articulation`: an imported articulation tree and its names, in low-level (BFS) order."""
from __future__ import annotations

import numpy as np

from .importer.description import ArticulationDesc


class Articulation:
    """One reduced-coordinate articulation of a `Scene`.

    Links are in low-level order (BFS from the root, parent index < child index); DOFs follow the
    links in that order and, inside a joint, PhysX's axis order (rotX, rotY, rotZ, transX, transY, transZ).
    """

    def __init__(self, desc: ArticulationDesc):
        self.desc = desc

    @property
    def root_link(self) -> str:
        return self.desc.root_link

    @property
    def fixed_base(self) -> bool:
        return self.desc.fixed_base

    @property
    def links(self) -> list[str]:
        return list(self.desc.links)

    @property
    def link_parents(self) -> np.ndarray:
        return np.array(self.desc.link_parents, dtype=np.int64)

    @property
    def joints(self) -> list[str | None]:
        """Inbound joint prim path per link (None for the root)."""
        return [j.path if j is not None else None for j in self.desc.joints]

    @property
    def dof_names(self) -> list[str]:
        return [d.name for d in self.desc.dofs]

    @property
    def dof_count(self) -> int:
        return len(self.desc.dofs)

    @property
    def loop_joints(self) -> list[str]:
        return list(self.desc.loop_joints)

    @property
    def mimic_joints(self) -> list[dict]:
        return [dict(joint=m.joint, dof=m.dof, reference_joint=m.reference_joint, reference_dof=m.reference_dof,
                     gearing=m.gearing, offset=m.offset, natural_frequency=m.natural_frequency,
                     damping_ratio=m.damping_ratio) for m in self.desc.mimic_joints]

    @property
    def link_masses(self) -> np.ndarray:
        return np.array([b.mass if b is not None else 0.0 for b in self.desc.bodies])

    @property
    def total_mass(self) -> float:
        """Mass the articulation moves: on a fixed base, the root and links welded to it are carried by the world."""
        masses = self.link_masses
        if not self.fixed_base:
            return float(masses.sum())
        static = np.zeros(len(masses), bool)
        static[0] = True
        for i in range(1, len(masses)):  # parents come before children
            static[i] = static[self.desc.link_parents[i]] and not self.desc.joints[i].dofs
        return float(masses[~static].sum())

    def link_index(self, path: str) -> int:
        return self.desc.links.index(str(path))

    def summary(self) -> dict:
        """Plain-data view (the `usdart inspect --json` entry)."""
        return dict(root_link=self.root_link, fixed_base=self.fixed_base, links=self.links,
                    link_parents=self.link_parents.tolist(), joints=self.joints, dof_names=self.dof_names,
                    dof_count=self.dof_count, loop_joints=self.loop_joints, mimic_joints=self.mimic_joints,
                    link_masses=self.link_masses.tolist(), total_mass=self.total_mass)

    def __repr__(self) -> str:
        base = "fixed" if self.fixed_base else "floating"
        return f"Articulation({self.root_link!r}, {base} base, {len(self.desc.links)} links, {self.dof_count} DOFs)"
