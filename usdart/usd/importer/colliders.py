"""Collision shapes for contacts: geometry, materials, offsets and filtering, read as PhysX reads them.

usd-core's UsdPhysics parser already finds every collider, its body (the closest ancestor-or-self rigid body;
none: static), its pose in the body frame and its size with the world scale baked in (PhysX shapes carry no
scale). This module turns those into ColliderDesc in SI units with PhysX's conventions and defaults
(reference physx_contacts.md):
- geometry: Sphere, Cube (box), Capsule, Cylinder and Cone (their axis becomes the shape's local X, as
  PxCapsuleGeometry's; cylinders and cones exact, as ovphysx's default convex-core shapes, the cone's apex
  at +X), Plane (static only; its normal becomes the local X) and Mesh as PhysX approximates it (`_mesh`:
  hulls keep their faces, coplanar triangles merged; static triangle meshes their triangles). Other
  gprims do not collide: one warning lists them;
- material: the physics-purpose binding the parser resolved, PhysxMaterialAPI's combine modes; with no
  material, the material bound to the physics scene, else PhysX's default (0.5 / 0.5 / 0, average). A
  MaterialAPI with unauthored frictions is frictionless (PhysX reads the schema's 0);
- offsets: physxCollision:restOffset (unauthored: newton:contactMargin, as ovphysx reads it, else 0) and
  contactOffset, automatic where unauthored:
  max(2 dt^2 max(|g|, 1), 0.02 x smallest extent) + max(restOffset, 0) in stage units, dt = 1 /
  timeStepsPerSecond; a plane's 0.02 x tolerancesLength (1 / metersPerUnit stage units: 2 cm in any
  unit); an authored contactOffset not above the restOffset becomes contactOffset + restOffset + 0.001
  (Kit's repair);
- filtering: collision groups (groups that list each other never collide; the scene's
  physxScene:invertCollisionGroupFilter inverts; physics:invertFilteredGroups and mergeGroup are not read,
  as PhysX does not read them), FilteredPairsAPI on colliders, bodies and articulations, and joints outside
  articulation trees whose physics:collisionEnabled is false (default).
Colliders move with their rigid body, kinematic ones included (usdart.core.kernels.kinematic); a body with
rigidBodyEnabled = false holds its colliders still at their stage pose.
"""

from __future__ import annotations

import numpy as np
from pxr import Sdf, Usd, UsdPhysics, UsdShade

from ...core.description import COMBINE_MODES, BodyDesc, ColliderDesc, MaterialDesc, Pose, SceneSettings
from ...core.frames import decompose, matrix_to_quat, quat_to_matrix
from ...errors import PhysicsImportError
from .decomposition import convex_pieces, decomposition_limits
from .shape_mass import convex_hull, mesh_triangles
from .transforms import WorldTransforms
from .usd_values import authored, read

SHAPES = {
    "SphereShape": "sphere",
    "CubeShape": "box",
    "CapsuleShape": "capsule",
    "CylinderShape": "cylinder",
    "ConeShape": "cone",
    "PlaneShape": "plane",
}
COLLIDER_TYPES = (*SHAPES, "MeshShape")
NOT_COLLIDING_YET = ("Capsule1Shape", "Cylinder1Shape", "SpherePointsShape", "CustomShape")
PLANE_CONTACT_OFFSET = 0.02  # metres: 0.02 x tolerancesLength (1 / metersPerUnit stage units)
AUTO_OFFSET_FRACTION = 0.02  # of the shape's smallest extent
HULL_VERTEX_LIMIT = 64  # PhysxConvexHullCollisionAPI's default: the most vertices PhysX cooks into a hull
OFFSET_REPAIR = 0.001  # stage units added when an authored contactOffset is not above the restOffset

# rotation taking the local X axis (a cylinder's or cone's axis, a plane's normal) to a USD axis token
_AXIS_FROM_X = {
    "X": np.eye(3),
    "Y": np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    "Z": np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
}
# a capsule's frame for the Y and Z tokens is that turned half a turn about its local Z, its local +X toward
# -Y or -Z, as PhysX sets capsule frames (the same shape; what it changes is which end's contact point comes
# first, so the solver's order: measured on ovphysx, a capsule rolling down a slope drifts along its axis
# toward its local +X end, 6 cm in 2 s in PGS)
_HALF_TURN_Z = np.diag([-1.0, -1.0, 1.0])


def _quat(gf_quat) -> np.ndarray:
    return np.array([gf_quat.GetReal(), *gf_quat.GetImaginary()], float)


def _combine_token(prim: Usd.Prim, name: str, warnings: list[str]) -> str:
    token = authored(prim, name)
    if token is None:
        return "average"
    if str(token) not in COMBINE_MODES:
        warnings.append(f"{prim.GetPath()}: {name} '{token}' is not a combine mode; PhysX keeps 'average'")
        return "average"
    return str(token)


class Colliders:
    """Reads every collider of a parsed stage; `read` returns them with the filtering they need."""

    def __init__(
        self,
        stage: Usd.Stage,
        parsed: dict,
        bodies: dict[str, BodyDesc],
        transforms: WorldTransforms,
        settings: SceneSettings,
        warnings: list[str],
    ):
        self.stage, self.parsed, self.bodies = stage, parsed, bodies
        self.transforms, self.settings, self.warnings = transforms, settings, warnings
        self.materials: dict[str, MaterialDesc] = {}
        self.default_material = self._scene_material()

    def _entries(self, type_name: str):
        paths, descs = self.parsed.get(getattr(UsdPhysics.ObjectType, type_name), ([], []))
        return list(zip((str(p) for p in paths), descs))

    # ---- materials ---------------------------------------------------------------------------------
    def _material(self, path: str) -> MaterialDesc:
        if path not in self.materials:
            prim = self.stage.GetPrimAtPath(path)
            self.materials[path] = MaterialDesc(
                static_friction=float(read(prim, "physics:staticFriction", 0.0)),
                dynamic_friction=float(read(prim, "physics:dynamicFriction", 0.0)),
                restitution=float(read(prim, "physics:restitution", 0.0)),
                friction_combine=_combine_token(prim, "physxMaterial:frictionCombineMode", self.warnings),
                restitution_combine=_combine_token(prim, "physxMaterial:restitutionCombineMode", self.warnings),
            )
            if float(read(prim, "physxMaterial:compliantContactStiffness", 0.0)) > 0.0:
                self.warnings.append(f"{path}: compliant contacts are not simulated yet; rigid contacts are used")
        return self.materials[path]

    def _scene_material(self) -> MaterialDesc:
        """The material bound to the physics scene with the physics purpose, else PhysX's default."""
        if self.settings.scene_path:
            scene = self.stage.GetPrimAtPath(self.settings.scene_path)
            bound, _ = UsdShade.MaterialBindingAPI(scene).ComputeBoundMaterial("physics")
            if bound and bound.GetPrim().HasAPI(UsdPhysics.MaterialAPI):
                return self._material(str(bound.GetPath()))
        return MaterialDesc()

    # ---- shapes ------------------------------------------------------------------------------------
    def read(self) -> list[ColliderDesc]:
        skipped = []
        out = []
        for type_name in NOT_COLLIDING_YET:
            skipped += [p for p, d in self._entries(type_name) if d.collisionEnabled]
        if skipped:
            self.warnings.append(
                f"{skipped[0]}: {len(skipped)} collider(s) of types other than Sphere, Cube, Capsule, Cylinder, "
                "Cone, Plane and Mesh (two-radius capsules and cylinders, points) do not collide yet; they still "
                "count for mass"
            )
        for type_name, shape in SHAPES.items():
            for path, desc in self._entries(type_name):
                if desc.collisionEnabled:
                    out.append(self._collider(path, desc, shape))
        for path, desc in self._entries("MeshShape"):
            if desc.collisionEnabled:
                out += self._mesh(path, desc)
        over = [
            c.path
            for c in out
            if c is not None and c.shape == "convex" and len(c.hull) > self._hull_vertex_limit(c.path)
        ]
        if over:
            self.warnings.append(
                f"{over[0]}: {len(over)} convex hull(s) with more vertices than PhysX cooks "
                "(physxConvexHullCollision:hullVertexLimit, 64 unauthored); usdart keeps every vertex, PhysX a "
                "simplified hull, so their contacts may differ slightly"
            )
        return sorted((c for c in out if c is not None), key=lambda c: c.path)

    def _hull_vertex_limit(self, path: str) -> int:
        limit = authored(self.stage.GetPrimAtPath(path), "physxConvexHullCollision:hullVertexLimit")
        return HULL_VERTEX_LIMIT if limit is None else int(limit)

    def _placement(self, path: str, desc) -> tuple[str | None, np.ndarray, np.ndarray]:
        """(body or None, rotation, position in m): in the body's frame (kinematic bodies too), or the world's
        for a static collider (a body with rigidBodyEnabled = false holds its colliders where they are)."""
        body = str(desc.rigidBody) if str(desc.rigidBody) else None
        owner = self.bodies.get(body) if body else None
        if owner is not None:
            return (
                body,
                quat_to_matrix(_quat(desc.localRot)),
                np.array(desc.localPos, float) * self.settings.meters_per_unit,
            )
        rotation, position, _ = decompose(self.transforms.matrix(self.stage.GetPrimAtPath(path)))
        return None, rotation, position * self.settings.meters_per_unit

    def _collider(self, path: str, desc, shape: str) -> ColliderDesc | None:
        body, rotation, position = self._placement(path, desc)
        if shape == "plane" and self._dynamic(body):
            self.warnings.append(f"{path}: a plane collider on a dynamic body is not supported (PhysX neither)")
            return None
        if shape == "sphere":
            size = np.array([desc.radius, 0.0, 0.0])
        elif shape == "box":
            size = np.abs(np.array(desc.halfExtents, float))
        elif shape in ("capsule", "cylinder", "cone"):
            size = np.array([desc.radius, desc.halfHeight, 0.0])
        else:
            size = np.zeros(3)
        if shape in ("capsule", "cylinder", "cone", "plane"):
            rotation = rotation @ _AXIS_FROM_X[str(desc.axis)]
        if shape == "capsule" and str(desc.axis) != "X":
            rotation = rotation @ _HALF_TURN_Z
        return self._made(path, desc, body, shape, rotation, position, size * self.settings.meters_per_unit)

    def _mesh(self, path: str, desc) -> list[ColliderDesc]:
        """A mesh collider as PhysX approximates it: boundingSphere / boundingCube as that shape around its
        scaled points (the sphere centred on their bounds), convexHull as one convex hull, convexDecomposition
        as convex pieces (`_pieces`), a triangle mesh on a dynamic body promoted to its hull as PhysX does;
        a static or kinematic mesh otherwise as a triangle mesh. Empty where it does not collide (a warning
        says why)."""
        body, rotation, position = self._placement(path, desc)
        prim = self.stage.GetPrimAtPath(path)
        authored_points = np.asarray(prim.GetAttribute("points").Get() or [], float).reshape(-1, 3)
        scale = np.asarray(desc.meshScale, float) * self.settings.meters_per_unit
        points = authored_points * scale
        if len(points) == 0 or not np.all(np.isfinite(points)):
            self.warnings.append(f"{path}: mesh collider without finite points; it does not collide")
            return []
        approximation = str(read(prim, "physics:approximation", "none")).lower()  # (read: the import report)
        low, high = points.min(axis=0), points.max(axis=0)
        centre = 0.5 * (low + high)
        moved = position + rotation @ centre
        if approximation == "boundingsphere":
            radius = np.linalg.norm(points - centre, axis=1).max()
            return self._some(self._made(path, desc, body, "sphere", rotation, moved, np.array([radius, 0.0, 0.0])))
        if approximation == "boundingcube":
            return self._some(self._made(path, desc, body, "box", rotation, moved, 0.5 * (high - low)))
        if not self._dynamic(body) and approximation in ("none", "meshsimplification", "sdf"):
            return self._some(self._triangle_mesh(path, desc, body, prim, points, centre, rotation, moved))
        if approximation == "convexdecomposition":
            return self._pieces(path, desc, body, prim, authored_points, scale, rotation, position)
        if approximation != "convexhull":
            self.warnings.append(f"{path}: a triangle mesh on a dynamic body collides as its convex hull (as in PhysX)")
        return self._some(self._convex(path, desc, body, points, rotation, position))

    @staticmethod
    def _some(collider: ColliderDesc | None) -> list[ColliderDesc]:
        return [] if collider is None else [collider]

    def _convex(self, path, desc, body, points, rotation, position, quiet=False) -> ColliderDesc | None:
        """The convex hull of `points` (m, in the shape's frame) as one collider centred on their bounds; None,
        with a warning unless `quiet`, when they span no volume."""
        low, high = points.min(axis=0), points.max(axis=0)
        centre = 0.5 * (low + high)
        try:
            hull, triangles = convex_hull(points - centre)
        except ValueError as exc:
            if not quiet:
                self.warnings.append(f"{path}: mesh collider has no convex hull ({exc}); it does not collide")
            return None
        collider = self._made(path, desc, body, "convex", rotation, position + rotation @ centre, 0.5 * (high - low))
        if collider is not None:
            collider.hull = hull
            collider.faces = hull_faces(hull, triangles)
        return collider

    def _pieces(self, path, desc, body, prim, authored_points, scale, rotation, position) -> list[ColliderDesc]:
        """convexDecomposition: a convex collider per piece (usdart.usd.importer.decomposition, on the authored
        points: PhysX cooks the unscaled mesh), each named by the mesh prim, as PhysX names every shape of a
        decomposition. A mesh without a volume does not collide; a flat piece is left out."""
        whole = self._convex(path, desc, body, authored_points * scale, rotation, position)
        if whole is None:
            return []
        counts = prim.GetAttribute("faceVertexCounts").Get() or []
        indices = prim.GetAttribute("faceVertexIndices").Get() or []
        try:
            triangles = mesh_triangles(counts, indices, len(authored_points))
        except ValueError as exc:
            raise PhysicsImportError(path, f"mesh {exc}") from exc
        if len(triangles) == 0:
            self.warnings.append(f"{path}: convexDecomposition of a mesh without faces collides as its convex hull")
            return [whole]
        pieces = convex_pieces(authored_points, triangles, *decomposition_limits(prim))
        made = [self._convex(path, desc, body, piece * scale, rotation, position, quiet=True) for piece in pieces]
        return [c for c in made if c is not None] or [whole]

    def _dynamic(self, body: str | None) -> bool:
        return body is not None and not self.bodies[body].kinematic

    def _triangle_mesh(self, path, desc, body, prim, points, centre, rotation, moved) -> ColliderDesc | None:
        """A static or kinematic mesh as PhysX's triangle mesh (none, meshSimplification unsimplified, sdf without its
        field): its polygons fanned into triangles, degenerate ones left out, sorted by their lowest x;
        vertices about the bounds' centre."""
        counts = np.asarray(prim.GetAttribute("faceVertexCounts").Get() or [], int)
        indices = np.asarray(prim.GetAttribute("faceVertexIndices").Get() or [], int)
        if counts.sum() != len(indices) or np.any(counts < 0) or np.any((indices < 0) | (indices >= len(points))):
            raise PhysicsImportError(path, "mesh faceVertexCounts and faceVertexIndices do not match its points")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
        triangles = [
            (indices[start], indices[start + k], indices[start + k + 1])
            for start, count in zip(starts, counts)
            for k in range(1, count - 1)
        ]
        vertices = points - centre
        triangles = np.array(triangles, np.int64).reshape(-1, 3)
        if len(triangles):
            a, b, c = (vertices[triangles[:, k]] for k in range(3))
            triangles = triangles[np.linalg.norm(np.cross(b - a, c - a), axis=1) > 0.0]
        if len(triangles) == 0:
            self.warnings.append(f"{path}: triangle-mesh collider has no triangles with area; it does not collide")
            return None
        triangles = triangles[np.argsort(vertices[triangles, 0].min(axis=1), kind="stable")]  # (mesh_pair's slab)
        low, high = vertices.min(axis=0), vertices.max(axis=0)
        collider = self._made(path, desc, body, "mesh", rotation, moved, 0.5 * (high - low))
        if collider is not None:
            collider.hull = vertices
            collider.faces = list(triangles)
        return collider

    def _made(self, path, desc, body, shape, rotation, position, size) -> ColliderDesc | None:
        """The ColliderDesc (size in m), or None with a warning for a shape of zero size."""
        if not (np.all(np.isfinite(size)) and np.all(np.isfinite(position)) and np.all(np.isfinite(rotation))):
            raise PhysicsImportError(path, "collider size or pose is NaN or infinite")
        if (
            shape not in ("plane", "mesh")
            and size[0] <= 0.0
            or (shape in ("box", "convex") and np.any(size <= 0.0))
            or (shape in ("cylinder", "cone") and size[1] <= 0.0)
        ):
            self.warnings.append(f"{path}: collider has zero size; it does not collide")
            return None
        mpu = self.settings.meters_per_unit
        rest, contact = self._offsets(self.stage.GetPrimAtPath(path), shape, size / mpu)
        return ColliderDesc(
            path=path,
            body=body,
            shape=shape,
            pose=Pose(position=position, orientation=matrix_to_quat(rotation)),
            size=size,
            material=self._material(str(desc.materials[0])) if desc.materials else self.default_material,
            contact_offset=contact * mpu,
            rest_offset=rest * mpu,
        )

    def _offsets(self, prim: Usd.Prim, shape: str, size_stage: np.ndarray) -> tuple[float, float]:
        """(restOffset, contactOffset) in stage units, PhysX's automatic contact offset where unauthored."""
        rest = authored(prim, "physxCollision:restOffset")
        if (rest is None or not np.isfinite(rest)) and self.settings.semantics == "physx":
            rest = authored(prim, "newton:contactMargin")  # ovphysx rests shapes at the Newton margin
        rest = 0.0 if rest is None or not np.isfinite(rest) else float(rest)
        contact = authored(prim, "physxCollision:contactOffset")
        if contact is not None and np.isfinite(contact) and contact >= 0.0:
            contact = float(contact)
            if contact <= rest:
                contact = contact + rest + OFFSET_REPAIR
            return rest, contact
        if shape == "plane":
            return rest, PLANE_CONTACT_OFFSET / self.settings.meters_per_unit + max(rest, 0.0)
        if shape in ("sphere", "capsule"):
            extent = 2 * size_stage[0]
        elif shape in ("cylinder", "cone"):
            extent = 2 * size_stage[:2].min()
        else:  # box, hull bounds
            extent = 2 * size_stage.min()
        g = np.linalg.norm(self.settings.gravity) / self.settings.meters_per_unit
        dt = self.settings.time_step
        return rest, max(2.0 * dt * dt * max(g, 1.0), AUTO_OFFSET_FRACTION * extent) + max(rest, 0.0)

    # ---- filtering -----------------------------------------------------------------------------------
    def groups(self, colliders: list[ColliderDesc]) -> tuple[list[str], set[tuple[int, int]]]:
        """Collision groups: each collider's group index (set on it) and the group pairs that never collide
        (both orders), the scene's invert flag applied."""
        entries = self._entries("CollisionGroup")
        names = [p for p, _ in entries]
        index = {p: i for i, p in enumerate(names)}
        listed = set()
        for p, d in entries:
            for other in d.filteredGroups:
                if str(other) in index:
                    listed |= {(index[p], index[str(other)]), (index[str(other)], index[p])}
        shape_groups = {p: d.collisionGroups for t in COLLIDER_TYPES for p, d in self._entries(t)}
        for c in colliders:
            member = [str(g) for g in shape_groups.get(c.path, []) if str(g) in index]
            if len(member) > 1:
                self.warnings.append(
                    f"{c.path}: in {len(member)} collision groups; PhysX uses only the first ({member[0]})"
                )
            c.group = index[member[0]] if member else -1
        if self.settings.invert_collision_group_filter:
            every = {(a, b) for a in range(len(names)) for b in range(len(names))}
            return names, every - listed
        return names, listed

    def filtered_pairs(self, colliders: list[ColliderDesc], articulation_links: dict[str, list[str]]):
        """Collider path pairs FilteredPairsAPI keeps apart (on colliders, bodies or articulation roots,
        targets expanded to the colliders in their hierarchy)."""

        def members(path: str) -> list[str]:
            if path in articulation_links:
                links = set(articulation_links[path])
                return [c.path for c in colliders if c.body in links]
            prefix = Sdf.Path(path)
            return [
                c.path
                for c in colliders
                if Sdf.Path(c.path).HasPrefix(prefix) or (c.body and Sdf.Path(c.body).HasPrefix(prefix))
            ]

        sources = []
        for t in COLLIDER_TYPES:
            sources += [([p], d.filteredCollisions) for p, d in self._entries(t)]
        for p, d in self._entries("RigidBody"):
            sources.append(([c.path for c in colliders if c.body == p], d.filteredCollisions))
        for p, d in self._entries("Articulation"):
            sources.append((members(p), d.filteredCollisions))
        pairs = set()
        for own, targets in sources:
            for target in targets:
                for a in own:
                    for b in members(str(target)):
                        if a != b:
                            pairs.add((min(a, b), max(a, b)))
        return pairs


def hull_faces(points: np.ndarray, triangles: np.ndarray) -> list[np.ndarray]:
    """The hull's faces as polygons: its outward triangles merged where they share a plane (a box's six
    quads, not twelve triangles), each polygon's vertices counter-clockwise about its outward normal, in
    the order of their first triangles. A face of a convex hull is connected, so only triangles across an
    edge are compared (linear in the triangles: a 5000-vertex hull's 10,000 triangles take milliseconds)."""
    a, b, c = points[triangles[:, 0]], points[triangles[:, 1]], points[triangles[:, 2]]
    normals = np.cross(b - a, c - a)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    offsets = np.einsum("ij,ij->i", normals, a)
    tolerance = 1e-9 * max(float(np.abs(points).max()), 1e-300)
    # each directed edge (i, j) of a triangle meets the triangle holding (j, i)
    n, count = len(points), len(triangles)
    heads = triangles.ravel()
    tails = triangles[:, [1, 2, 0]].ravel()
    owner = np.repeat(np.arange(count), 3)
    keys = heads * n + tails
    order = np.argsort(keys)
    across = order[np.searchsorted(keys, tails * n + heads, sorter=order)]
    first, second = owner, owner[across]
    flat = (np.einsum("ij,ij->i", normals[first], normals[second]) > 1.0 - 1e-9) & (
        np.abs(offsets[first] - offsets[second]) <= tolerance
    )
    root = np.arange(count)  # union-find over the coplanar neighbours, the smallest triangle as each root

    def find(t: int) -> int:
        while root[t] != t:
            root[t] = root[root[t]]
            t = root[t]
        return t

    for t, u in zip(first[flat].tolist(), second[flat].tolist()):
        rt, ru = find(t), find(u)
        if rt != ru:
            root[max(rt, ru)] = min(rt, ru)
    groups: dict[int, list[int]] = {}
    for t in range(count):
        groups.setdefault(find(t), []).append(t)
    # a lone triangle sorted by angle about its centroid from its first vertex: (third, first, second)
    faces = list(triangles[:, [2, 0, 1]].astype(np.int64))
    for t, members in groups.items():
        if len(members) == 1:
            continue
        vertices = np.unique(triangles[members])
        centre = points[vertices].mean(axis=0)
        u = points[triangles[t, 0]] - centre
        u /= np.linalg.norm(u)
        v = np.cross(normals[t], u)
        d = points[vertices] - centre
        faces[t] = vertices[np.argsort(np.arctan2(d @ v, d @ u))].astype(np.int64)
    return [faces[t] for t in groups]  # (in the order of their first triangles)


def jointed_pairs(stage: Usd.Stage, joint_paths: list[str]) -> set[tuple[str, str]]:
    """Prim pairs of joints outside articulation trees that keep physics:collisionEnabled at its default
    false: PhysX sets no collision flag on such a PxJoint, so its two actors never touch. Static bodies
    count by their prim (a collider under the target prim)."""
    pairs = set()
    for path in joint_paths:
        prim = stage.GetPrimAtPath(path)
        if read(prim, "physics:collisionEnabled", False):
            continue
        joint = UsdPhysics.Joint(prim)
        sides = [joint.GetBody0Rel().GetTargets(), joint.GetBody1Rel().GetTargets()]
        if all(sides):
            a, b = str(sides[0][0]), str(sides[1][0])
            pairs.add((min(a, b), max(a, b)))
    return pairs
