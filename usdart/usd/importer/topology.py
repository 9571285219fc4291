"""From bodies, joints and ArticulationRootAPI prims to articulation trees (the PhysX rules).

Root API placement:
- on a joint that attaches a body to the world: fixed base at that body;
- on a rigid body: floating base at that body, unless a non-excluded joint connects its component to
  the world: then fixed base at the world-attached body (with a warning when that is another body);
- on any other prim (Xform, Scope, ...): one articulation per connected component of the bodies below
  it (components follow non-excluded joints anywhere on the stage); fixed base at the world-attached
  body when the component has a world joint, else the body of minimal eccentricity, ties broken by
  the smallest prim path.
When several world joints touch a component, the root joint is the one carrying the API, else a fixed
joint, else the smallest path; the others close loops. A world joint with DOFs keeps them: the root is
then a static anchor link named after that joint, with the joint as the first tree joint.
Several API prims claiming one component (nested or duplicate APIs) give one articulation and a
warning; the most specific placement wins (joint, then body, then ancestor; then smallest path).

A tree takes its joints depth first from the root, each body's joints in prim-path order, as PhysX does
(measured on ovphysx: in an undeclared cycle the joint that reaches a body already in the tree closes the
loop; between two bodies joined twice, the smaller path is the tree joint). Links are then numbered breadth
first, a link's children in the prim-path order of their joints (measured: not the stage order of either).
Joints left out of the tree (excluded ones, undeclared cycles, extra world joints, distance joints) become
loop constraints; undeclared cycles are reported with the joints' paths.
Kinematic bodies cannot be links (PhysX): joints to them are always solved as constraints.

Two links joined by several single-DOF joints whose motions are independent (as NVIDIA's MJCF converter
writes a MuJoCo body with several hinges) are composed in authored order, as MuJoCo composes a body's
joints: massless links named after the joints stand between them, each at rest in the child's frame, so the
pair moves by all its DOFs (PhysX keeps one tree joint and closes loops with the others, which lock the
pair). Repeated or dependent motions (two joints about one axis) and groups with other joints keep PhysX's
rule.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

import networkx as nx
import numpy as np
from pxr import Sdf

from ...core.description import ArticulationDesc, BodyDesc, JointDesc
from ...core.frames import quat_to_matrix
from ...errors import PhysicsImportError
from .movability import RELATIVE_ZERO, RESOLVED, check_articulation_can_move

_API_ON_JOINT, _API_ON_BODY, _API_ON_ANCESTOR = 0, 1, 2


class Topology:
    def __init__(
        self,
        bodies: dict[str, BodyDesc],
        joints: dict[str, JointDesc],
        warnings: list[str],
        authored_order: Callable[[list[str]], list[str]] = sorted,
    ):
        self.bodies = bodies
        self.joints = joints
        self.warnings = warnings
        self.authored_order = authored_order
        self.links_ok = {p for p, b in bodies.items() if not b.kinematic}
        self.graph = nx.MultiGraph()
        self.graph.add_nodes_from(self.links_ok)
        self.world_joints: dict[str, list[str]] = defaultdict(list)
        self.constraint_joints: set[str] = set()  # never tree joints: excluded, distance, to kinematic bodies
        self.ignored_joints: set[str] = set()
        for joint in joints.values():
            self._add_joint(joint)
        self.composed = self._composed_groups()  # the first joint -> the pair's joints in authored order
        self.composed_pairs: set[tuple[str, str]] = set()  # body pairs joined through massless links
        self.component_of = {}
        for comp in nx.connected_components(self.graph):
            frozen = frozenset(comp)
            for n in comp:
                self.component_of[n] = frozen

    def node(self, body: str | None) -> str | None:
        return body if body in self.links_ok else None

    def _add_joint(self, joint: JointDesc) -> None:
        a, b = self.node(joint.body0), self.node(joint.body1)
        if a is None and b is None:
            if joint.body0 in self.bodies or joint.body1 in self.bodies:
                self.constraint_joints.add(joint.path)  # between kinematic bodies / the world
            else:
                self.warnings.append(f"{joint.path}: joint connects no simulated body; ignored")
                self.ignored_joints.add(joint.path)
            return
        if a == b:
            self.warnings.append(f"{joint.path}: joint connects {a} to itself; ignored")
            self.ignored_joints.add(joint.path)
            return
        kinematic_side = any(x is not None and x not in self.links_ok for x in (joint.body0, joint.body1))
        if joint.excluded or joint.kind == "distance" or kinematic_side:
            self.constraint_joints.add(joint.path)
            return
        if a is None or b is None:
            self.world_joints[a or b].append(joint.path)
        else:
            self.graph.add_edge(a, b, key=joint.path)

    def _composed_groups(self) -> dict[str, list[str]]:
        """Link pairs joined by several one-DOF joints of independent motions (module docstring), by their
        first joint in authored order."""
        groups = defaultdict(list)
        for a, b, key in self.graph.edges(keys=True):
            groups[min(a, b), max(a, b)].append(key)
        out = {}
        for (_, b), paths in sorted(groups.items()):
            joints = [self.joints[p] for p in paths]
            if len(joints) < 2 or not all(len(j.dofs) == 1 for j in joints):
                continue
            motions = np.array([_motion_in_child(j if j.body1 == b else j.swapped()) for j in joints])
            singular = np.linalg.svd(motions, compute_uv=False)
            if len(joints) > 6 or singular[-1] <= 1e-9 * max(singular[0], 1.0):
                continue
            ordered = list(self.authored_order(paths))
            out[ordered[0]] = ordered
        return out

    def _composed_chain(self, parent: str, child: str, paths: list[str]) -> tuple[list[str], list[JointDesc]]:
        """Links and inbound joints from `parent` to `child` through the pair's joints in order: a massless link
        after every joint but the last, named after that joint and at rest in the child's frame, so each later
        joint's frame in it is its frame in the child."""
        oriented = [j if j.body0 == parent else j.swapped() for j in (self.joints[p] for p in paths)]
        names = [j.path for j in oriented[:-1]] + [child]
        self.warnings.append(
            f"{child}: {len(paths)} joints from {parent} ({', '.join(paths)}) composed in authored order, one DOF "
            "each through massless links, as MuJoCo composes a body's joints (PhysX keeps "
            f"{min(paths, key=Sdf.Path)} in the tree and locks the pair with the others as loop joints)"
        )
        chain, previous = [], parent
        for k, (joint, name) in enumerate(zip(oriented, names)):
            chain.append(replace(joint, body0=previous, body1=name, frame0=joint.frame0 if k == 0 else joint.frame1))
            previous = name
        self.composed_pairs.add((min(parent, child), max(parent, child)))
        return names, chain

    # ---- root API resolution -------------------------------------------------------------------------------
    def claims(self, api_paths: list[str]) -> list[tuple]:
        """(priority, api path, component, requested root body, root joint) for every root API prim."""
        out = []
        for api in api_paths:
            if api in self.joints:
                joint = self.joints[api]
                a, b = self.node(joint.body0), self.node(joint.body1)
                if (a is None) == (b is None) or joint.excluded:
                    raise PhysicsImportError(
                        api,
                        "ArticulationRootAPI is on a joint that does not attach a body to "
                        "the world (put it on the world joint, the root body or an ancestor)",
                    )
                body = a or b
                out.append((_API_ON_JOINT, api, self.component_of[body], body, api))
            elif api in self.bodies:
                if api not in self.links_ok:
                    raise PhysicsImportError(
                        api, "ArticulationRootAPI is on a kinematic body; articulation links cannot be kinematic"
                    )
                out.append((_API_ON_BODY, api, self.component_of[api], api, None))
            else:
                prefix = api.rstrip("/") + "/"
                below = sorted(b for b in self.links_ok if b.startswith(prefix) or b == api)
                if not below:
                    raise PhysicsImportError(api, "ArticulationRootAPI is on a prim with no rigid bodies below it")
                seen = []
                for b in below:
                    if self.component_of[b] not in seen:
                        seen.append(self.component_of[b])
                out.extend((_API_ON_ANCESTOR, api, comp, None, None) for comp in seen)
        return sorted(out, key=lambda c: (c[0], c[1]))

    def build(self, api_paths: list[str]) -> tuple[list[ArticulationDesc], set[str]]:
        claimed: dict[frozenset, str] = {}
        articulations = []
        for _, api, comp, body, root_joint in self.claims(api_paths):
            if comp in claimed:
                self.warnings.append(
                    f"{api}: ArticulationRootAPI also covers the articulation already created from "
                    f"{claimed[comp]} (nested or duplicate root API); ignored"
                )
                continue
            claimed[comp] = api
            articulations.append(self._articulation(api, comp, body, root_joint))
        in_trees = {j.path for art in articulations for j in art.joints if j is not None}
        return articulations, in_trees

    # ---- one articulation -----------------------------------------------------------------------------------
    def _articulation(self, api: str, comp: frozenset, requested: str | None, root_joint: str | None):
        world = sorted((j, b) for b in comp for j in self.world_joints.get(b, []))
        if root_joint is None and world:
            root_joint = self._pick_root_joint(world, requested)
        if root_joint is not None:
            joint = self.joints[root_joint]
            root_body = self.node(joint.body0) or self.node(joint.body1)
            if requested is not None and requested != root_body and api == requested:
                self.warnings.append(
                    f"{api}: articulation is fixed to the world by {root_joint}, so its root link is "
                    f"{root_body}, not the body carrying ArticulationRootAPI"
                )
        elif requested is not None:
            root_body = requested
        else:
            root_body = self._centre(comp)
        links, parents, inbound, loops, composed = self._spanning_tree(root_body, comp)
        extra_world = [j for j, _ in world if j != root_joint]
        if extra_world:
            self.warnings.append(
                f"{api}: world joints {', '.join(extra_world)} close loops with the root joint "
                f"{root_joint}; they are solved as loop constraints"
            )
        joints = [None] + inbound
        bodies = [self.bodies.get(p) for p in links]  # None for the massless links of composed joints
        fixed_base = root_joint is not None
        if root_joint is not None and self.joints[root_joint].dofs:
            # a world joint with DOFs: static anchor link, then the joint as the first tree joint
            joint = self.joints[root_joint]
            oriented = joint if joint.body0 is None else joint.swapped()
            links = [root_joint] + links
            parents = [-1] + [0] + [p + 1 for p in parents[1:]]
            bodies = [None] + bodies
            joints = [None, oriented] + inbound
        art = ArticulationDesc(
            api_prim=api,
            root_link=links[0],
            fixed_base=fixed_base,
            links=links,
            link_parents=parents,
            bodies=bodies,
            joints=joints,
            root_joint=root_joint,
            composed_links=composed,
        )
        art.loop_joints = sorted(set(loops + extra_world + self._constraints_touching(comp)))
        check_articulation_can_move(art)
        return art

    def _pick_root_joint(self, world: list[tuple[str, str]], requested: str | None) -> str:
        def rank(item):
            path, body = item
            return (requested is not None and body != requested, self.joints[path].kind != "fixed", path)

        return min(world, key=rank)[0]

    def _centre(self, comp: frozenset) -> str:
        """Minimal eccentricity, ties broken by the smallest prim path."""
        if len(comp) == 1:
            return next(iter(comp))
        simple = nx.Graph(self.graph.subgraph(comp))
        ecc = nx.eccentricity(simple)
        best = min(ecc.values())
        return min(n for n, e in ecc.items() if e == best)

    def _spanning_tree(self, root: str, comp: frozenset):
        """The tree PhysX builds: joints taken depth first from the root, a body's joints in prim-path order
        (measured on ovphysx: the joint that reaches an already visited body closes the loop); links then
        numbered breadth first, a link's children in the prim-path order of their joints. A composed pair
        is one edge (its first joint), its massless links numbered just before its child."""
        folded = {p for paths in self.composed.values() for p in paths[1:]}
        tree_edges, visited = set(), {root}

        def edges(u):
            return iter(sorted((e for e in self.graph.edges(u, keys=True) if e[2] not in folded), key=_joint_path))

        stack = [edges(root)]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                continue
            _, v, key = step
            if v not in visited:
                visited.add(v)
                tree_edges.add(key)
                stack.append(edges(v))
        links, parents, inbound, composed = [root], [-1], [], {}
        index = {root: 0}
        queue = [root]
        while queue:
            u = queue.pop(0)
            for _, v, key in edges(u):
                if key not in tree_edges or v in index:
                    continue
                if key in self.composed:
                    names, joints = self._composed_chain(u, v, self.composed[key])
                    tree_edges.update(self.composed[key])
                    composed.update((name, v) for name in names[:-1])
                else:
                    joint = self.joints[key]
                    names, joints = [v], [joint if joint.body0 == u else joint.swapped()]
                parents.append(index[u])
                for name in names:
                    if name != names[0]:
                        parents.append(len(links) - 1)
                    index[name] = len(links)
                    links.append(name)
                inbound.extend(joints)
                queue.append(v)
        cycle = sorted({k for _, _, k in self.graph.subgraph(comp).edges(keys=True)} - tree_edges)
        if cycle:
            self.warnings.append(
                f"{root}: undeclared kinematic loop; joints {', '.join(cycle)} are not excluded from "
                "the articulation and are solved as loop constraints (set "
                "physics:excludeFromArticulation = true on one joint per loop)"
            )
        return links, parents, inbound, cycle, composed

    def _constraints_touching(self, comp: frozenset) -> list[str]:
        return [p for p in self.constraint_joints if self.joints[p].body0 in comp or self.joints[p].body1 in comp]


def _joint_path(edge) -> Sdf.Path:
    return Sdf.Path(edge[2])


def _motion_in_child(joint: JointDesc) -> np.ndarray:
    """A one-DOF joint's motion [angular; linear] in its child's frame: a turn about the axis through the
    frame's origin, or a slide along it."""
    frame = joint.frame1
    axis = quat_to_matrix(frame.orientation)[:, "XYZ".index(joint.dofs[0].axis[-1])]
    if joint.dofs[0].angular:
        return np.concatenate([axis, np.cross(np.asarray(frame.position, float), axis)])
    return np.concatenate([np.zeros(3), axis])


def check_free_body(body: BodyDesc) -> None:
    """A free body needs mass and an inertia that is positive about every axis (it may turn about any), and
    large enough for float64 to keep next to its mass where it is (movability.RESOLVED)."""
    moments = np.linalg.eigvalsh(0.5 * (body.inertia + body.inertia.T))
    listed = ", ".join(f"{m:g}" for m in moments)
    if body.mass <= 0 or moments.min() <= RELATIVE_ZERO * max(moments.max(), 0.0):
        raise PhysicsImportError(
            body.path,
            f"rigid body has zero mass or no inertia about some axis (mass {body.mass:g} kg, principal moments "
            f"{listed} kg m^2; author physics:mass and physics:diagonalInertia, or give it a collider)",
        )
    rotation = quat_to_matrix(body.pose.orientation)
    distance = float(np.linalg.norm(body.pose.position + rotation @ body.com))
    if moments.min() < RESOLVED * body.mass * max(distance * distance, 1.0):
        raise PhysicsImportError(
            body.path,
            f"rigid body's inertia is too small to simulate next to its mass (mass {body.mass:g} kg, principal "
            f"moments {listed} kg m^2, {distance:g} m from the world origin, about which the solver holds it: "
            "a radius of gyration under 1e-7 of that distance or of 1 m); author a physical "
            "physics:diagonalInertia or a larger collider",
        )
