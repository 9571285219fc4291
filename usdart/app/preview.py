"""`usdart preview`: a video (.mp4) or animated GIF of a stage's motion, for a user without usdview.

The motion comes from the file alone: world transforms from UsdGeom.XformCache at each frame's time code,
so the video shows what any USD reader sees (a `usdart simulate` output, or any animated stage).

What is drawn: colliders (CollisionAPI gprims, whatever their purpose or visibility: they are what the
physics sees), and for a rigid body without colliders its visible default/render-purpose gprims. A stage
with neither draws its visible default/render gprims. Shapes: Cube, Sphere, Capsule, Cylinder, Cone (and
their `_1` two-radius forms) as faceted solids, Mesh as its faces (big ones as the convex hull of their
points), Plane as a patch with a grid around the rest of the geometry (not infinite), where it is at the
first frame. Each rigid body has one colour; static geometry is grey.

Frames: at the time samples of the drawn prims' transforms (regularly spaced at their median spacing, so
the video plays in real time), or every 1 / `fps` seconds; never more than `max_frames` (every k-th
frame, the frame rate divided by k, so the video still plays in real time) and, in a GIF, never faster
than GIF_MAX_FPS. The camera is fixed for the whole video: a view from a fixed elevation and azimuth of
the box around all the geometry over the whole animation, equal scale on every axis. `Camera` and
`project` give the pixel where a world point is drawn (tests use them to find a link in the frames).

matplotlib and imageio (imageio-ffmpeg for .mp4) are the optional `plot` extra. The file is written to a
temporary file beside the target and renamed over it, so a failed run leaves the old file (or none).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np
from pxr import Usd, UsdGeom, UsdPhysics

from ..errors import UsdartError

FORMATS = (".mp4", ".gif")
DEFAULT_SIZE = (640, 480)
DEFAULT_MAX_FRAMES = 300
GIF_MAX_FPS = 50.0  # browsers play GIF frame delays under 20 ms as 100 ms
ELEVATION, AZIMUTH = 22.0, -60.0  # degrees: above the ground, looking along +x +y (matplotlib's default side)
FOCAL_LENGTH = 2.5  # matplotlib's perspective: about 44 degrees of field of view, little distortion
FILL = (0.92, 0.82)  # fraction of the image width and height the box around the geometry takes
SEGMENTS = 16  # facets around a round shape
RINGS = 4  # bands per quarter circle of a sphere or capsule cap
FIT_FRAMES = 40  # frames whose geometry the camera frames (all frames bound the box)
MESH_FACES = 600  # meshes with more faces are drawn as the convex hull of their points
BACKGROUND = (1.0, 1.0, 1.0)
STATIC = (0.62, 0.62, 0.64)
PALETTE = [  # matplotlib's tab10 without its grey
    (0.122, 0.467, 0.706),
    (1.000, 0.498, 0.055),
    (0.173, 0.627, 0.173),
    (0.839, 0.153, 0.157),
    (0.580, 0.404, 0.741),
    (0.549, 0.337, 0.294),
    (0.890, 0.467, 0.761),
    (0.737, 0.741, 0.133),
    (0.090, 0.745, 0.812),
]
_AXIS = {"X": 0, "Y": 1, "Z": 2}
_EXTRA = "usdart preview needs the plot extra: pip install 'usdart[plot]'"


@dataclass(frozen=True, eq=False)
class Camera:
    """The fixed view of a preview: world point -> pixel of its frames (`project`).

    `world_to_plot` turns the stage's up axis into matplotlib's z; `projection` is matplotlib's 4x4
    perspective matrix of those plot coordinates; `to_display` its 3x3 affine from projected coordinates
    to display pixels (origin bottom left). Pixels of the frames count rows from the top."""

    world_to_plot: np.ndarray
    projection: np.ndarray
    to_display: np.ndarray
    size: tuple[int, int]  # width, height in pixels
    elevation: float = ELEVATION
    azimuth: float = AZIMUTH

    def project(self, points) -> np.ndarray:
        return project(points, self)


def project(points, camera: Camera) -> np.ndarray:
    """Pixel coordinates (x: column from the left, y: row from the top; (N, 2) floats) where the world
    points (N, 3) (or one point) are drawn in the frames rendered with `camera`."""
    p = np.asarray(points, dtype=float).reshape(-1, 3) @ camera.world_to_plot.T
    h = camera.projection @ np.vstack([p.T, np.ones(len(p))])
    xy = np.vstack([h[0] / h[3], h[1] / h[3], np.ones(len(p))])
    display = camera.to_display @ xy
    return np.column_stack([display[0], camera.size[1] - display[1]])


@dataclass
class _Shape:
    """One drawn gprim: its faces in its own frame (quads; a triangle repeats its last corner)."""

    prim: Usd.Prim
    faces: np.ndarray  # (F, 4, 3)
    color: tuple[float, float, float]
    visual: bool  # follows visibility (colliders are drawn whatever it is)
    plane: tuple[int, float, float] | None = None  # a Plane: (normal axis, width, length; inf: a collider)
    matrices: list[np.ndarray] = field(default_factory=list)  # per frame, 4x4, row vectors (USD's convention)


def render_preview(
    stage_path: str,
    output: str,
    fps: float | None = None,
    size: tuple[int, int] = DEFAULT_SIZE,
    max_frames: int | None = None,
) -> dict:
    """Draw the animated stage `stage_path` into `output` (.mp4 or .gif) and return a summary: output,
    frames, fps, size, seconds, the time code of every frame, shapes drawn and the `camera`.

    `fps`: frames per second of stage time (default: the stage's own time samples); `size`: (width,
    height) in pixels, rounded up to even numbers for .mp4 (H.264 in yuv420p needs them); `max_frames`
    (default DEFAULT_MAX_FRAMES): longer animations keep every k-th frame."""
    ext = os.path.splitext(os.fspath(output))[1].lower()
    if ext not in FORMATS:
        raise UsdartError(f"{output}: unknown video format {ext or '(no extension)'!r}; use .mp4 or .gif")
    width, height = _check_size(size, even=ext == ".mp4")
    if fps is not None and not (math.isfinite(fps) and fps > 0):
        raise UsdartError(f"fps must be a positive number of frames per second, got {fps}")
    limit = DEFAULT_MAX_FRAMES if max_frames is None else max_frames
    if isinstance(limit, bool) or int(limit) != limit or limit < 1:
        raise UsdartError(f"max_frames must be a positive integer, got {max_frames}")
    mpl = _plot_modules(ext)
    from ..usd.importer.stage_settings import open_stage, stage_file
    from .output_files import refuse_input_layer, writable_target, write_atomically

    target = writable_target(output)
    stage = open_stage(stage_path)
    refuse_input_layer(target, stage)
    name = stage_file(stage)
    shapes = _drawables(stage)
    if not any(s.plane is None for s in shapes):
        bare = [str(p.GetPath()) for p in stage.Traverse() if p.HasAPI(UsdPhysics.RigidBodyAPI)]
        hint = f"; rigid bodies without gprims: {', '.join(bare[:3])}{' ...' * (len(bare) > 3)}" if bare else ""
        raise UsdartError(
            f"{name}: nothing to draw (no colliders, no gprims of rigid bodies, no default/render gprims "
            f"other than planes){hint}"
        )
    codes, video_fps, start, tcps = _frame_codes(stage, name, shapes, fps, int(limit), gif=ext == ".gif")
    visible = _transforms(shapes, codes)
    rotation = np.array(_up_rotation(stage))
    lo, hi, points = _bounds(shapes, rotation, name)
    renderer = _Renderer(mpl, shapes, visible, rotation, lo, hi, points, (width, height), name)
    try:
        labels = [f"t = {(c - start) / tcps:.3f} s" for c in codes]
        write_atomically(target, lambda tmp: _write(mpl, tmp, ext, video_fps, renderer.frames(labels), len(labels)))
        camera = renderer.camera
    finally:
        renderer.close()
    return {
        "output": target,
        "frames": len(codes),
        "fps": video_fps,
        "size": (width, height),
        "seconds": (codes[-1] - codes[0]) / tcps,
        "time_codes": list(codes),
        "shapes": sum(s.plane is None for s in shapes),
        "camera": camera,
    }


def parse_size(text: str) -> tuple[int, int]:
    """(width, height) from "WIDTHxHEIGHT" (the command line's --size)."""
    width, sep, height = str(text).lower().partition("x")
    if not (sep and width.strip().isdigit() and height.strip().isdigit()):
        raise UsdartError(f"size must be WIDTHxHEIGHT in pixels (e.g. 640x480), got {text!r}")
    return int(width), int(height)


def _check_size(size, even: bool) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in size)
        ok = all(int(v) == v for v in size)
    except (TypeError, ValueError):
        ok = False
    if not ok or not (16 <= width <= 8192 and 16 <= height <= 8192):
        raise UsdartError(f"size must be two whole numbers of pixels from 16 to 8192 (width, height), got {size}")
    return (width + width % 2, height + height % 2) if even else (width, height)


def _plot_modules(ext: str) -> dict:
    """The optional modules, or the error that says which extra installs them."""
    try:
        import imageio.v2 as imageio_v2
        import imageio.v3 as imageio_v3
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from mpl_toolkits.mplot3d import Axes3D  # noqa: F401  (registers the 3d projection)
        from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

        if ext == ".mp4":
            import imageio_ffmpeg  # noqa: F401
    except ImportError:
        raise UsdartError(_EXTRA) from None
    return dict(
        Figure=Figure,
        Canvas=FigureCanvasAgg,
        Poly=Poly3DCollection,
        Lines=Line3DCollection,
        v2=imageio_v2,
        v3=imageio_v3,
    )


# ---- what to draw ----------------------------------------------------------------------------------------
def _drawables(stage: Usd.Stage) -> list[_Shape]:
    """The shapes the module docstring describes, in traversal order."""
    body_of: dict = {}

    def body(prim):
        path = prim.GetPath()
        if path not in body_of:
            if prim.IsPseudoRoot():
                body_of[path] = None
            elif prim.HasAPI(UsdPhysics.RigidBodyAPI):
                body_of[path] = path
            else:
                body_of[path] = body(prim.GetParent())
        return body_of[path]

    colliders, visuals, loose = [], {}, []
    for prim in Usd.PrimRange.Stage(stage, Usd.TraverseInstanceProxies()):
        if not prim.IsA(UsdGeom.Gprim):
            continue
        owner = body(prim)
        if prim.HasAPI(UsdPhysics.CollisionAPI) and _collision_enabled(prim):
            colliders.append((prim, owner))
        elif owner is not None:
            visuals.setdefault(owner, []).append(prim)
        else:
            loose.append(prim)
    chosen = [(p, b, False) for p, b in colliders]
    with_colliders = {b for _, b in colliders}
    for owner, prims in visuals.items():
        if owner not in with_colliders:
            chosen += [(p, owner, True) for p in prims if _rendered(p)]
    if not colliders and not visuals:
        chosen = [(p, None, True) for p in loose if _rendered(p)]
    bodies = sorted({b for _, b, _ in chosen if b is not None})
    colors = {b: PALETTE[i % len(PALETTE)] for i, b in enumerate(bodies)}
    shapes = []
    for prim, owner, visual in chosen:
        faces, plane = _local_faces(prim, collider=not visual)
        if faces is not None and (len(faces) or plane):
            shapes.append(_Shape(prim, faces, colors.get(owner, STATIC), visual, plane))
    return shapes


def _collision_enabled(prim) -> bool:
    attr = UsdPhysics.CollisionAPI(prim).GetCollisionEnabledAttr()
    return bool(attr.Get()) if attr and attr.HasAuthoredValue() else True


def _rendered(prim) -> bool:
    """A default- or render-purpose gprim (guides and proxies are for tools, not the picture)."""
    purpose = UsdGeom.Imageable(prim).ComputePurpose()
    return purpose in (UsdGeom.Tokens.default_, UsdGeom.Tokens.render)


def _get(prim, name, default):
    """An attribute's value: its default, else its first time sample (shapes are drawn at one size)."""
    attr = prim.GetAttribute(name)
    value = attr.Get(Usd.TimeCode.EarliestTime()) if attr else None
    return default if value is None else value


def _radii(prim, two_radius_type, default: float) -> tuple[float, float]:
    """(bottom, top) radius of a capsule or cylinder, of its one-radius or two-radius (`_1`) schema."""
    if prim.IsA(two_radius_type):
        return float(_get(prim, "radiusBottom", default)), float(_get(prim, "radiusTop", default))
    radius = float(_get(prim, "radius", default))
    return radius, radius


def _local_faces(prim, collider: bool):
    """(faces (F, 4, 3) in the gprim's frame, plane info or None); (None, None) for a type not drawn."""
    axis = str(_get(prim, "axis", "Z"))
    axis = _AXIS.get(axis, 2)
    if prim.IsA(UsdGeom.Cube):
        return _box(float(_get(prim, "size", 2.0))), None
    if prim.IsA(UsdGeom.Sphere):
        r = float(_get(prim, "radius", 1.0))
        return _lathe(_arc(r, 0.0, -math.pi / 2, math.pi / 2, 2 * RINGS), 2), None
    if prim.IsA(UsdGeom.Capsule) or prim.IsA(UsdGeom.Capsule_1):
        h = float(_get(prim, "height", 1.0))
        bottom, top = _radii(prim, UsdGeom.Capsule_1, 0.5)
        profile = _arc(bottom, -h / 2, -math.pi / 2, 0.0, RINGS) + _arc(top, h / 2, 0.0, math.pi / 2, RINGS)
        return _lathe(profile, axis), None
    if prim.IsA(UsdGeom.Cylinder) or prim.IsA(UsdGeom.Cylinder_1):
        h = float(_get(prim, "height", 2.0))
        bottom, top = _radii(prim, UsdGeom.Cylinder_1, 1.0)
        return _lathe([(0.0, -h / 2), (bottom, -h / 2), (top, h / 2), (0.0, h / 2)], axis), None
    if prim.IsA(UsdGeom.Cone):
        h, r = float(_get(prim, "height", 2.0)), float(_get(prim, "radius", 1.0))
        return _lathe([(0.0, -h / 2), (r, -h / 2), (0.0, h / 2)], axis), None
    if prim.IsA(UsdGeom.Plane):
        size = (math.inf, math.inf) if collider else (float(_get(prim, "width", 2.0)), float(_get(prim, "length", 2.0)))
        return np.zeros((0, 4, 3)), (axis, *size)
    if prim.IsA(UsdGeom.Mesh):
        return _mesh(prim), None
    return None, None


def _box(size: float) -> np.ndarray:
    c = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * size / 2
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return c[np.array(quads)]


def _arc(r: float, center: float, a0: float, a1: float, n: int) -> list[tuple[float, float]]:
    """(radius, height) points of a meridian from angle a0 to a1 (radians from the equator)."""
    return [(r * math.cos(a), center + r * math.sin(a)) for a in np.linspace(a0, a1, n + 1)]


def _lathe(profile, axis: int) -> np.ndarray:
    """Quads of the surface of revolution of a (radius, height) profile around the local `axis`."""
    prof = np.asarray(profile, float)
    angle = np.linspace(0.0, 2 * math.pi, SEGMENTS, endpoint=False)
    rings = np.stack(
        [prof[:, :1] * np.cos(angle), prof[:, :1] * np.sin(angle), np.repeat(prof[:, 1:], SEGMENTS, axis=1)], -1
    )
    a, d = rings[:-1], rings[1:]
    b, c = np.roll(a, -1, axis=1), np.roll(d, -1, axis=1)
    quads = np.stack([a, b, c, d], axis=2).reshape(-1, 4, 3)
    keep = np.ptp(quads, axis=1).max(axis=1) > 0  # a zero-radius band draws nothing
    return np.roll(quads[keep], axis - 2, axis=2)  # height along `axis`, right-handed (cyclic)


def _mesh(prim) -> np.ndarray:
    """A mesh's faces (fan-triangulated beyond quads); beyond MESH_FACES the hull of its points, or (flat
    meshes) every k-th face."""
    mesh = UsdGeom.Mesh(prim)
    first = Usd.TimeCode.EarliestTime()
    points = np.asarray(mesh.GetPointsAttr().Get(first) or [], float).reshape(-1, 3)
    counts = np.asarray(mesh.GetFaceVertexCountsAttr().Get(first) or [], int)
    indices = np.asarray(mesh.GetFaceVertexIndicesAttr().Get(first) or [], int)
    if len(points) == 0 or not np.all(np.isfinite(points)):
        return np.zeros((0, 4, 3))
    if len(counts) > MESH_FACES or len(counts) == 0:
        hull = _hull_faces(points)
        if hull is not None:
            return hull
    if counts.sum() != len(indices) or len(indices) == 0 or indices.min() < 0 or indices.max() >= len(points):
        return np.zeros((0, 4, 3))  # malformed topology: the importer reports it
    quads, start = [], 0
    step = max(1, math.ceil(len(counts) / MESH_FACES))
    for k, n in enumerate(counts):
        face = indices[start : start + n]
        start += n
        if n < 3 or k % step:
            continue
        if n <= 4:
            quads.append(np.concatenate([face, face[-1:].repeat(4 - n)]))
        else:
            quads += [np.array([face[0], face[i], face[i + 1], face[i + 1]]) for i in range(1, n - 1)]
    return points[np.array(quads)] if quads else np.zeros((0, 4, 3))


def _hull_faces(points: np.ndarray) -> np.ndarray | None:
    """Triangles of the convex hull of the points (of a subset when the hull is too fine), None if flat."""
    from ..usd.importer.shape_mass import convex_hull

    try:
        vertices, triangles = convex_hull(points)
        if len(triangles) > MESH_FACES:
            vertices, triangles = convex_hull(vertices[:: math.ceil(len(triangles) / MESH_FACES)])
    except ValueError:
        return None
    return vertices[np.concatenate([triangles, triangles[:, -1:]], axis=1)]


# ---- when and where --------------------------------------------------------------------------------------
def _frame_codes(stage, name, shapes, fps, limit: int, gif: bool):
    """(time codes of the frames, video frames per second, time code of t = 0, time codes per second)."""
    tcps = float(stage.GetTimeCodesPerSecond())
    if not (math.isfinite(tcps) and tcps > 0):
        raise UsdartError(f"{name}: timeCodesPerSecond = {tcps:g}; it must be a positive number")
    layer = stage.GetRootLayer()
    samples = sorted(_sample_codes(shapes))
    if layer.HasStartTimeCode() and layer.HasEndTimeCode() and stage.GetEndTimeCode() >= stage.GetStartTimeCode():
        first, last = stage.GetStartTimeCode(), stage.GetEndTimeCode()
        samples = [c for c in samples if first - 1e-9 <= c <= last + 1e-9]
    start = float(stage.GetStartTimeCode()) if layer.HasStartTimeCode() else (samples[0] if samples else 0.0)
    if len(samples) < 2:
        code = samples[0] if samples else start
        return [code], min(fps or tcps, GIF_MAX_FPS) if gif else (fps or tcps), start, tcps
    first, last = samples[0], samples[-1]
    step = tcps / fps if fps else float(np.median(np.diff(samples)))
    count = int(math.floor((last - first) / step + 1e-9)) + 1
    stride = max(math.ceil(count / limit), math.ceil(tcps / step / GIF_MAX_FPS - 1e-9) if gif else 1)
    step *= stride
    count = int(math.floor((last - first) / step + 1e-9)) + 1
    return [first + i * step for i in range(count)], tcps / step, start, tcps


def _sample_codes(shapes) -> set[float]:
    """Time codes of the samples of the transforms of the drawn prims and their ancestors."""
    seen, codes = set(), set()
    for shape in shapes:
        prim = shape.prim
        while prim and not prim.IsPseudoRoot() and prim.GetPath() not in seen:
            seen.add(prim.GetPath())
            if prim.IsA(UsdGeom.Xformable):
                for op in UsdGeom.Xformable(prim).GetOrderedXformOps():
                    codes.update(op.GetAttr().GetTimeSamples())
            prim = prim.GetParent()
    return codes


def _transforms(shapes, codes) -> list[np.ndarray]:
    """Fill each shape's world matrices per frame; per frame, which shapes are visible."""
    visible = []
    for code in codes:
        time = Usd.TimeCode(code)
        cache = UsdGeom.XformCache(time)
        seen = np.ones(len(shapes), bool)
        for i, shape in enumerate(shapes):
            shape.matrices.append(np.array(cache.GetLocalToWorldTransform(shape.prim)))
            if shape.visual:
                seen[i] = UsdGeom.Imageable(shape.prim).ComputeVisibility(time) != UsdGeom.Tokens.invisible
        visible.append(seen)
    return visible


def _world(faces: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    return faces @ matrix[:3, :3] + matrix[3, :3]


def _up_rotation(stage) -> list[list[float]]:
    """World -> plot coordinates: matplotlib's vertical is z; a Y-up stage is turned (cyclically) to it."""
    if UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y:
        return [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def _bounds(shapes, rotation: np.ndarray, name: str):
    """(low corner, high corner, points): the box (plot coordinates) around every non-plane shape over all
    frames, no side thinner than 5% of the longest (a flat or one-point scene still gets a view), and the
    shapes' corners at up to FIT_FRAMES frames, which the camera frames."""
    lo, hi, points = np.full(3, np.inf), np.full(3, -np.inf), []
    for shape in shapes:
        if shape.plane is not None or not len(shape.faces):
            continue
        corners = np.unique(shape.faces.reshape(-1, 3), axis=0)
        every = max(1, math.ceil(len(shape.matrices) / FIT_FRAMES))
        for k, m in enumerate(shape.matrices):
            p = _world(corners, m) @ rotation.T
            lo, hi = np.minimum(lo, p.min(axis=0)), np.maximum(hi, p.max(axis=0))
            if k % every == 0 or k == len(shape.matrices) - 1:
                points.append(p)
    if not np.all(np.isfinite(lo) & np.isfinite(hi)):
        raise UsdartError(f"{name}: the geometry has no finite extent (infinite or NaN transforms or points)")
    span = max(float((hi - lo).max()), 1e-9)
    pad = np.maximum(0.05 * span - (hi - lo), 0.0) / 2
    return lo - pad, hi + pad, np.concatenate(points)


# ---- drawing ---------------------------------------------------------------------------------------------
class _Renderer:
    """One figure for all frames: the shapes are one Poly3DCollection whose faces and colours change per
    frame (matplotlib sorts its faces by depth), drawn over the floors (planes, or a faint reference grid
    at the bottom of the box when the stage has none)."""

    def __init__(self, mpl, shapes, visible, rotation, lo, hi, points, size, name):
        self.shapes, self.visible = [s for s in shapes if s.plane is None], visible
        self.rotation = np.array(rotation)
        self.index = [i for i, s in enumerate(shapes) if s.plane is None]
        width, height = size
        dpi = 100
        self.fig = mpl["Figure"](figsize=((width + 0.01) / dpi, (height + 0.01) / dpi), dpi=dpi, facecolor=BACKGROUND)
        self.canvas = mpl["Canvas"](self.fig)
        ax = self.ax = self.fig.add_axes((0, 0, 1, 1), projection="3d", computed_zorder=False)
        ax.set_axis_off()
        ax.set_facecolor(BACKGROUND)
        ax.view_init(elev=ELEVATION, azim=AZIMUTH)
        ax.set_proj_type("persp", focal_length=FOCAL_LENGTH)
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_zlim(lo[2], hi[2])
        for shape in shapes:
            if shape.plane is not None:
                self._floor(mpl, shape, lo, hi)
        if not any(s.plane is not None for s in shapes):
            self._reference_grid(mpl, lo, hi)
        self.poly = mpl["Poly"](np.zeros((0, 4, 3)), zorder=2, linewidths=0.4, clip_on=False)
        ax.add_collection3d(self.poly, autolim=False)
        self.label = self.fig.text(0.02, 0.97, "", va="top", fontsize=12, family="monospace")
        self.fig.text(0.02, 0.02, os.path.basename(name), fontsize=8, color=(0.45, 0.45, 0.45))
        self.camera = self._fit(lo, hi, points, (width, height))
        view = np.array(
            [
                math.cos(math.radians(ELEVATION)) * math.cos(math.radians(AZIMUTH)),
                math.cos(math.radians(ELEVATION)) * math.sin(math.radians(AZIMUTH)),
                math.sin(math.radians(ELEVATION)),
            ]
        )
        light = view + np.array([0.0, 0.0, 0.8]) + 0.4 * np.cross([0.0, 0.0, 1.0], view)
        self.light = light / np.linalg.norm(light)

    def _fit(self, lo, hi, points, size) -> Camera:
        """Zoom so the geometry (`points`, plot coordinates) fills FILL of the image, then shift the axes so
        it is centred; the camera that results."""
        zoom, shift, centred = 1.0, np.zeros(2), False
        for attempt in range(8):
            self.ax.set_box_aspect(hi - lo, zoom=zoom)
            self.ax.set_position((shift[0], shift[1], 1, 1))
            self.canvas.draw()
            camera = Camera(np.eye(3), self.ax.get_proj(), self.ax.transData.get_affine().get_matrix().copy(), size)
            px = project(points, camera)
            low, high = px.min(axis=0), px.max(axis=0)
            extent = np.maximum(high - low, 1e-9)
            scale = min(FILL[0] * size[0] / extent[0], FILL[1] * size[1] / extent[1])
            if abs(scale - 1) > 0.01 and attempt < 5:  # zoom first (about the axes' centre), then centre
                zoom *= scale
                continue
            off = np.array(size) / 2 - (low + high) / 2  # pixels, y down
            if centred or np.all(np.abs(off) < 1.0):
                break
            shift += np.array([off[0] / size[0], -off[1] / size[1]])
            centred = True
        return Camera(self.rotation, camera.projection, camera.to_display, size)

    def _floor(self, mpl, shape, lo, hi) -> None:
        """A Plane: a light patch with a grid over the box's footprint (a margin around it), within the
        plane's own width and length unless it is a collider (a collider plane is infinite)."""
        axis, width, length = shape.plane
        m = shape.matrices[0]
        u_axis, v_axis = [(1, 2), (2, 0), (0, 1)][axis]  # the plane's width and length directions
        origin = m[3, :3] @ self.rotation.T
        u = m[u_axis, :3] @ self.rotation.T
        v = m[v_axis, :3] @ self.rotation.T
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        ranges = []
        for direction, extent in ((u, width), (v, length)):
            scale = float(direction @ direction) or 1.0
            s = (corners - origin) @ direction / scale
            margin = 0.25 * max(float((hi - lo).max()) / math.sqrt(scale), 1e-9)
            a, b = s.min() - margin, s.max() + margin
            half = extent / 2
            ranges.append((max(a, -half), min(b, half)))
        (u0, u1), (v0, v1) = ranges
        if u1 <= u0 or v1 <= v0:
            return
        patch = np.array([origin + u * a + v * b for a, b in ((u0, v0), (u1, v0), (u1, v1), (u0, v1))])
        floor = mpl["Poly"]([patch], facecolors=[(0.85, 0.85, 0.82, 0.6)], edgecolors="none", zorder=0, clip_on=False)
        self.ax.add_collection3d(floor, autolim=False)
        self._grid(mpl, origin, u, v, (u0, u1), (v0, v1), color=(0.6, 0.6, 0.6), width=0.6)

    def _reference_grid(self, mpl, lo, hi) -> None:
        """No plane: a faint grid under the geometry, so the motion has something to be seen against."""
        margin = 0.15 * float((hi - lo).max())
        origin = np.array([0.0, 0.0, 0.0 if lo[2] <= 0.0 <= hi[2] else lo[2]])  # the ground when in view
        u, v = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
        ranges = (lo[0] - margin, hi[0] + margin), (lo[1] - margin, hi[1] + margin)
        self._grid(mpl, origin, u, v, *ranges, color=(0.82, 0.82, 0.82), width=0.5)

    def _grid(self, mpl, origin, u, v, ur, vr, color, width) -> None:
        spacing = _nice(max(ur[1] - ur[0], vr[1] - vr[0]) * math.sqrt(max(u @ u, v @ v)) / 10)
        su, sv = spacing / math.sqrt(u @ u), spacing / math.sqrt(v @ v)
        lines = [
            (origin + u * a + v * vr[0], origin + u * a + v * vr[1])
            for a in np.arange(math.ceil(ur[0] / su), math.floor(ur[1] / su) + 1) * su
        ]
        lines += [
            (origin + u * ur[0] + v * b, origin + u * ur[1] + v * b)
            for b in np.arange(math.ceil(vr[0] / sv), math.floor(vr[1] / sv) + 1) * sv
        ]
        self.ax.add_collection3d(
            mpl["Lines"](lines, colors=[color], linewidths=width, zorder=1, clip_on=False), autolim=False
        )

    def frames(self, labels):
        """The frames as (height, width, 3) uint8 arrays, one per label."""
        colors = [np.tile(shape.color, (len(shape.faces), 1)) for shape in self.shapes]
        for k, label in enumerate(labels):
            shown = [j for j, i in enumerate(self.index) if self.visible[k][i]]
            faces = (
                np.concatenate(
                    [np.zeros((0, 4, 3))] + [_world(self.shapes[j].faces, self.shapes[j].matrices[k]) for j in shown]
                )
                @ self.rotation.T
            )
            base = np.concatenate([np.zeros((0, 3))] + [colors[j] for j in shown])
            normal = np.cross(faces[:, 2] - faces[:, 0], faces[:, 3] - faces[:, 1])
            normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-300)
            shade = np.clip(base * (0.4 + 0.6 * np.abs(normal @ self.light))[:, None], 0.0, 1.0)
            self.poly.set_verts(faces)
            self.poly.set_facecolor(shade)
            self.poly.set_edgecolor(shade * 0.9)
            self.label.set_text(label)
            self.canvas.draw()
            frame = np.asarray(self.canvas.buffer_rgba())
            if frame.shape[:2] != (self.camera.size[1], self.camera.size[0]):
                raise RuntimeError(f"rendered {frame.shape[1]}x{frame.shape[0]} pixels, not {self.camera.size}")
            yield frame[:, :, :3].copy()

    def close(self) -> None:
        self.fig.clear()


def _nice(x: float) -> float:
    """1, 2 or 5 times a power of ten, near x."""
    if not (math.isfinite(x) and x > 0):
        return 1.0
    power = 10.0 ** math.floor(math.log10(x))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= x / 1.5)


def _write(mpl, tmp: str, ext: str, fps: float, frames, count: int) -> None:
    """Stream `count` frames into a GIF (Pillow, 256 colours per frame, looping) or an H.264 MP4 (ffmpeg,
    yuv420p, moov atom first so browsers start playing before the end arrives)."""
    if ext == ".gif":
        # GIF delays are whole centiseconds: frames end at their times rounded to 10 ms (30 fps: 30, 40,
        # 30 ms...), so the GIF keeps real time
        ends = np.round(np.arange(1, count + 1) * 100.0 / fps) * 10
        durations = [int(d) for d in np.maximum(np.diff(ends, prepend=0.0), 20)]
        with mpl["v3"].imopen(tmp, "w", plugin="pillow", extension=".gif") as file:
            for frame in frames:
                file.write(frame, is_batch=False, bits=8, duration=durations if count > 1 else durations[0], loop=0)
        return
    writer = mpl["v2"].get_writer(
        tmp,
        format="FFMPEG",
        mode="I",
        fps=fps,
        codec="libx264",
        pixelformat="yuv420p",
        macro_block_size=2,
        quality=8,
        ffmpeg_log_level="error",
        output_params=["-movflags", "+faststart"],
    )
    try:
        for frame in frames:
            writer.append_data(frame)
    finally:
        writer.close()
