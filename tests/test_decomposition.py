"""convexDecomposition mesh colliders: convex pieces (usdart.usd.importer.decomposition) for contacts and mass.

The truth is the solid itself: a U-shaped channel is three boxes, so its pieces, its mass and where a ball
rests in it are known in closed form. PhysX's V-HACD pieces stand proud of the surface by about a voxel and a
half (its default 500,000 voxels over the channel's bounds: about 6 mm each; measured 9.1 mm at the channel's
floor), so real PhysX is checked within two voxels."""

from __future__ import annotations

import numpy as np
import pytest
from contact_stages import collider, contact_stage, dynamic_body, ground, mesh_collider, save, u_channel
from physx_runner import run_physx_bodies, run_usdart_bodies

import usdart
from usdart.errors import PhysicsImportError
from usdart.usd.importer import decomposition

BALL = 0.05  # radius, m
FLOOR = 0.1  # the channel's inside floor, m above its base
RIM = 0.3
DENSITY = 1000.0  # kg/m^3: PhysX's default where neither mass nor density is authored
VOXEL = (0.6 * 0.6 * 0.3 / 500_000) ** (1 / 3)  # V-HACD's voxel edge at PhysX's default resolution


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Each test decomposes into its own empty cache folder, in memory and on disk."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(decomposition, "_memory", {})


def channel_with_ball(tmp_path, dynamic, ball_x=0.0, name="channel.usda"):
    """A ball dropped from 0.5 m into a U channel: static, or a dynamic 2 kg cup standing on a plane."""
    stage = contact_stage("TGS")
    if dynamic:
        ground(stage)
        dynamic_body(stage, "/World/cup", mass=2.0)
        u_channel(stage, "/World/cup/geom")
    else:
        u_channel(stage, "/World/channel")
    dynamic_body(stage, "/World/ball", pos=(ball_x, 0.1, 0.5), mass=0.1)
    collider(stage, "/World/ball/geom", "sphere", BALL)
    return save(stage, tmp_path / name)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static channel", "cup on a plane"])
def test_a_ball_dropped_into_a_decomposed_channel_rests_on_its_floor_as_in_physx(tmp_path, dynamic):
    """usdart's ball rests on the inside floor at exactly floor + radius (one hull of the mesh would hold it
    on the rim, 0.35 m: usdart did that before, PhysX does it for convexHull); the cup stands on the plane.
    PhysX's ball rests in the channel too, within two voxels of that height (measured 0.1591 m)."""
    path = channel_with_ball(tmp_path, dynamic)
    bodies = ["/World/ball", "/World/cup"] if dynamic else ["/World/ball"]
    ours = run_usdart_bodies(path, 1 / 60, 90, bodies)[-1]
    assert abs(ours[0, 2] - (FLOOR + BALL)) < 1e-4
    if dynamic:
        assert np.abs(ours[1, :3]).max() < 1e-4  # the cup's base on the plane, where it stood
    pytest.importorskip("ovphysx")
    theirs = run_physx_bodies(path, 1 / 60, 90, bodies, solver="TGS")["pose"][-1]
    assert abs(theirs[0, 2] - ours[0, 2]) < 2 * VOXEL, f"PhysX's ball at {theirs[0, 2]:.4f} m"


def box_solid(low, high):
    """(mass, COM, inertia about the COM) of a solid box at DENSITY."""
    size = np.subtract(high, low)
    mass = DENSITY * size.prod()
    return mass, 0.5 * np.add(low, high), mass / 12 * np.diag(np.sum(size**2) - size**2)


def test_a_decomposed_cup_weighs_what_its_solid_weighs(tmp_path):
    """With no mass authored, the cup's mass, centre of mass and inertia are the U solid's (three boxes:
    60 kg), as PhysX sums its pieces (V-HACD's pieces, 1.5 voxels proud: measured 67.4 kg; with shrinkWrap
    61.5 kg, and 59.0 kg at ten times the voxels). One hull of the mesh would weigh 108 kg."""
    stage = contact_stage("TGS")
    dynamic_body(stage, "/World/cup").RemoveProperty("physics:mass")
    u_channel(stage, "/World/cup/geom")
    body = usdart.load(save(stage, tmp_path / "cup.usda")).description.bodies["/World/cup"]
    parts = [box_solid((-0.3, -0.3, 0.0), (0.3, 0.3, FLOOR))]
    parts += [box_solid((-0.3, -0.3, FLOOR), (-0.2, 0.3, RIM)), box_solid((0.2, -0.3, FLOOR), (0.3, 0.3, RIM))]
    mass = sum(m for m, _, _ in parts)
    com = sum(m * c for m, c, _ in parts) / mass
    inertia = sum(i + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com)) for m, c, i in parts)
    # CoACD's pieces are the boxes to some 1e-5 of their size (measured 3.9e-5 in mass, 5e-5 in inertia)
    assert body.mass == pytest.approx(mass, rel=1e-3)  # 60 kg
    assert np.abs(body.com - com).max() < 1e-5
    assert np.abs(body.inertia - inertia).max() < 1e-3 * np.abs(inertia).max()


def torus(stage, path, limits=None, radius=0.3, tube=0.1, around=32, across=16):
    """A closed torus mesh about Z (outward faces) with convexDecomposition; `limits` (maxConvexHulls,
    hullVertexLimit) authored on PhysxConvexDecompositionCollisionAPI when given."""
    points, faces = [], []
    for i in range(around):
        a = 2 * np.pi * i / around
        for j in range(across):
            b = 2 * np.pi * j / across
            r = radius + tube * np.cos(b)
            points.append((r * np.cos(a), r * np.sin(a), tube * np.sin(b)))
    for i in range(around):
        for j in range(across):
            k, right, up = i * across + j, (i + 1) % around * across + j, i * across + (j + 1) % across
            faces.append([k, right, (i + 1) % around * across + (j + 1) % across, up])
    prim = mesh_collider(stage, path, points, faces, "convexDecomposition")
    if limits is not None:
        from pxr import Sdf

        prim.AddAppliedSchema("PhysxConvexDecompositionCollisionAPI")
        prim.CreateAttribute("physxConvexDecompositionCollision:maxConvexHulls", Sdf.ValueTypeNames.Int).Set(limits[0])
        prim.CreateAttribute("physxConvexDecompositionCollision:hullVertexLimit", Sdf.ValueTypeNames.Int).Set(limits[1])
    return prim


@pytest.mark.parametrize("limits", [None, (4, 16)], ids=["PhysX's defaults", "4 hulls of 16 vertices"])
def test_a_decomposition_keeps_physx_limits_on_pieces_and_vertices(tmp_path, limits):
    """maxConvexHulls and hullVertexLimit (PhysxConvexDecompositionCollisionAPI; 32 and 64 unauthored) bound
    the pieces a torus becomes, and each piece collides as a convex shape named by the mesh prim."""
    stage = contact_stage("TGS")
    torus(stage, "/World/ring", limits)
    scene = usdart.load(save(stage, tmp_path / "ring.usda"))
    pieces = [c for c in scene.description.colliders if c.path == "/World/ring"]
    most_hulls, most_vertices = limits or (32, 64)
    assert 2 <= len(pieces) <= most_hulls  # a ring is not one convex shape
    assert all(c.shape == "convex" and 4 <= len(c.hull) <= most_vertices for c in pieces)


def test_decomposed_pieces_are_read_back_from_the_cache_folder(tmp_path, monkeypatch):
    """A second process (memory cleared) reads the pieces from the disk cache without decomposing again and
    gets the same colliders; a changed mesh is decomposed anew."""
    import coacd

    path = channel_with_ball(tmp_path, dynamic=False)
    first = usdart.load(path).description.colliders
    assert len(list((tmp_path / "cache" / "usdart" / "decompositions").glob("*.npz"))) == 1
    monkeypatch.setattr(decomposition, "_memory", {})
    calls = []
    monkeypatch.setattr(coacd, "run_coacd", lambda *a, **k: calls.append(1) or [])
    again = usdart.load(path).description.colliders
    assert not calls
    assert [c.path for c in again] == [c.path for c in first]
    for a, b in zip(first, again):
        assert np.array_equal(a.hull, b.hull) and np.array_equal(a.pose.position, b.pose.position)
    stage = contact_stage("TGS")
    u_channel(stage, "/World/channel", floor=0.05)
    usdart.load(save(stage, tmp_path / "other.usda"))
    assert calls  # another mesh: decomposed (here by the stub, which finds no pieces: the mesh's hull collides)


def test_an_unwritable_cache_folder_only_costs_time(tmp_path, monkeypatch):
    """A cache folder that cannot be created (a file in its place) leaves the load as it is, with no
    temporary file left behind."""
    (tmp_path / "cache").write_text("not a folder")
    path = channel_with_ball(tmp_path, dynamic=False)
    pieces = [c for c in usdart.load(path).description.colliders if c.path == "/World/channel"]
    assert len(pieces) == 3  # the floor and the two walls
    assert (tmp_path / "cache").read_text() == "not a folder"


def test_a_flat_or_broken_decomposition_mesh_is_reported_by_its_prim(tmp_path):
    """A flat mesh has nothing to decompose: a warning names it and it does not collide; indices past its
    points are an import error naming it (exit code 2 from the CLI)."""
    stage = contact_stage("TGS")
    square = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    mesh_collider(stage, "/World/flat", square, [[0, 1, 2, 3]], "convexDecomposition")
    scene = usdart.load(save(stage, tmp_path / "flat.usda"))
    assert not scene.description.colliders
    assert any(w.startswith("/World/flat:") and "does not collide" in w for w in scene.description.warnings)
    stage = contact_stage("TGS")
    u_channel(stage, "/World/channel").GetAttribute("faceVertexIndices").Set([0, 1, 99] * 20)
    with pytest.raises(PhysicsImportError, match="/World/channel"):
        usdart.load(save(stage, tmp_path / "broken.usda"))


def test_the_import_report_says_which_decomposition_settings_shape_the_pieces(tmp_path):
    """`usdart inspect --report`: the approximation and the two limits (which the test above sees bound the
    pieces) are used; V-HACD's voxel settings are ignored, with the reason."""
    import json

    from click.testing import CliRunner
    from pxr import Sdf

    from usdart.app.cli import main
    from usdart.usd.import_report import VHACD_REASON

    stage = contact_stage("TGS")
    ring = torus(stage, "/World/ring", (4, 16))
    ring.CreateAttribute("physxConvexDecompositionCollision:shrinkWrap", Sdf.ValueTypeNames.Bool).Set(True)
    result = CliRunner().invoke(main, ["inspect", save(stage, tmp_path / "ring.usda"), "--report", "--json"])
    assert result.exit_code == 0, result.output
    (entry,) = [e for e in json.loads(result.output)["import_report"] if e["prim"] == "/World/ring"]
    fate = {a["name"]: (a["status"], a["reason"]) for a in entry["attributes"]}
    limits = [f"physxConvexDecompositionCollision:{name}" for name in ("maxConvexHulls", "hullVertexLimit")]
    for name in ["physics:approximation", *limits]:
        assert fate[name] == ("used", "")
    assert fate["physxConvexDecompositionCollision:shrinkWrap"] == ("ignored", VHACD_REASON)


def test_a_damaged_cache_file_is_made_again(tmp_path, monkeypatch):
    """A cache file cut short, or holding pieces that are not pieces (NaN), is decomposed again and replaced:
    the channel still collides as its three boxes."""
    path = channel_with_ball(tmp_path, dynamic=False)
    usdart.load(path)
    (cached,) = (tmp_path / "cache" / "usdart" / "decompositions").glob("*.npz")
    for damage in (cached.read_bytes()[:40], None):
        if damage is None:
            np.savez(cached, vertices=np.full((12, 3), np.nan), counts=np.array([4, 4, 4]))
        else:
            cached.write_bytes(damage)
        monkeypatch.setattr(decomposition, "_memory", {})
        pieces = [c for c in usdart.load(path).description.colliders if c.path == "/World/channel"]
        assert len(pieces) == 3 and all(np.all(np.isfinite(c.hull)) for c in pieces)
        with np.load(cached) as data:
            assert np.all(np.isfinite(data["vertices"]))  # replaced
