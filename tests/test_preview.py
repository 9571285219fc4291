"""`usdart preview`: the frames show the links where the simulated stage puts them, and bad input is refused.

The arm sample barely moves on its own (its drives hold it, 1 cm of sag), so the test turns its first
joint's drive target to -60 degrees (through `usdart author`): in 0.5 s the hand swings about 0.3 m.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from pxr import Gf, Usd, UsdGeom, UsdPhysics

from usdart.app.cli import main
from usdart.errors import StageError, UsdartError

pytest.importorskip("matplotlib")
iio = pytest.importorskip("imageio.v2")
from usdart.app import preview  # noqa: E402
from usdart.app.preview import parse_size, project, render_preview  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "sample_stages" / "arm_with_gripper.usda"
LINKS = ["base", "link2", "link4", "link6", "hand"]  # their colliders' centres lie inside what is drawn
DRAWN = 40  # a pixel further than this (in some channel) from the white background is drawn


@pytest.fixture(scope="module")
def turning_arm(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("preview")
    runner = CliRunner()
    turned, out = folder / "turned.usda", folder / "out.usda"
    args = ["author", "drive-target", str(SAMPLE), "/World/robot/joints/joint1", "--position", "-60", "--degrees"]
    result = runner.invoke(main, [*args, "-o", str(turned)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["simulate", str(turned), "-o", str(out), "--duration", "0.5", "-q"])
    assert result.exit_code == 0, result.output
    return out


def read_frames(path) -> np.ndarray:
    if str(path).endswith(".mp4"):
        pytest.importorskip("imageio_ffmpeg")
        with iio.get_reader(path, format="FFMPEG") as reader:
            return np.stack([np.asarray(f)[:, :, :3] for f in reader])
    return np.stack([np.asarray(f)[:, :, :3] for f in iio.mimread(path, memtest=False)])


def drawn(frame: np.ndarray, x: float, y: float, half: int = 2) -> float:
    """Fraction of the (2 half + 1)^2 window around pixel (x, y) that differs from the background."""
    col, row = int(round(x)), int(round(y))
    window = frame[row - half : row + half + 1, col - half : col + half + 1].astype(int)
    assert window.shape[:2] == (2 * half + 1, 2 * half + 1), f"({x:.0f}, {y:.0f}) is outside the frame"
    return float(np.mean(np.abs(window - 255).max(axis=2) > DRAWN))


def collider_centres(stage_path, code) -> np.ndarray:
    stage = Usd.Stage.Open(str(stage_path))
    cache = UsdGeom.XformCache(Usd.TimeCode(code))
    prims = [stage.GetPrimAtPath(f"/World/robot/{name}/collider") for name in LINKS]
    return np.array([list(cache.GetLocalToWorldTransform(p).ExtractTranslation()) for p in prims])


@pytest.mark.parametrize("ext", [".gif", ".mp4"])
def test_frames_show_the_links_where_the_stage_puts_them(turning_arm, tmp_path, ext):
    if ext == ".mp4":
        pytest.importorskip("imageio_ffmpeg")
    out = tmp_path / f"motion{ext}"
    summary = render_preview(str(turning_arm), str(out), size=(480, 360))
    frames = read_frames(out)
    codes = summary["time_codes"]
    # 0.5 s at the stage's 60 time codes per second: 31 frames; a GIF plays at most 50 fps, so every second
    assert len(codes) == summary["frames"] == len(frames) == (31 if ext == ".mp4" else 16)
    assert summary["fps"] == pytest.approx(60.0 if ext == ".mp4" else 30.0)
    assert codes[0] == 0 and codes[-1] == pytest.approx(30.0)
    assert frames.shape[1:] == (360, 480, 3)
    for frame in frames:
        assert np.ptp(frame.reshape(-1, 3), axis=0).max() > 100  # not one colour

    camera = summary["camera"]
    assert camera.size == (480, 360)
    width, height = camera.size
    pixels = {}
    for k in (0, len(codes) // 2, len(codes) - 1):
        pixels[k] = project(collider_centres(turning_arm, codes[k]), camera)
        for name, (x, y) in zip(LINKS, pixels[k]):
            where = f"{name} at t = {codes[k] / 60:.3f} s, pixel ({x:.0f}, {y:.0f})"
            assert drawn(frames[k], x, y) >= 0.8, f"{where}: not drawn"
        for x, y in ((width - 4, 3), (width - 4, height - 4)):  # corners far from the robot (no labels there)
            assert drawn(frames[k], x, y) == 0.0, f"frame {k}: background expected at ({x}, {y})"
    first, last = pixels[0], pixels[len(codes) - 1]
    hand = LINKS.index("hand")
    assert np.linalg.norm(last[hand] - first[hand]) > 40  # the hand swings across the image
    assert np.linalg.norm(last[0] - first[0]) < 0.5  # the base is fixed, and so is the camera
    # where the hand ends up was empty at the start, and where it started is empty at the end: the frames
    # follow the motion, not one pose
    assert drawn(frames[0], *last[hand]) == 0.0
    assert drawn(frames[-1], *first[hand]) == 0.0


def test_frame_rate_and_frame_limit(turning_arm, tmp_path):
    summary = render_preview(str(turning_arm), str(tmp_path / "slow.gif"), fps=20, size=(160, 120))
    assert summary["frames"] == len(read_frames(tmp_path / "slow.gif")) == 11  # 0.5 s at 20 fps
    assert summary["fps"] == pytest.approx(20.0)
    summary = render_preview(str(turning_arm), str(tmp_path / "few.gif"), size=(160, 120), max_frames=4)
    assert summary["frames"] == len(read_frames(tmp_path / "few.gif")) == 4  # every 8th of 31 frames
    assert summary["fps"] == pytest.approx(60.0 / 8)  # still real time


def test_stage_without_time_samples_renders_one_frame(tmp_path):
    summary = render_preview(str(SAMPLE), str(tmp_path / "still.gif"), size=(160, 120))
    frames = read_frames(tmp_path / "still.gif")
    assert summary["frames"] == len(frames) == 1
    assert np.ptp(frames[0].reshape(-1, 3), axis=0).max() > 100


def test_odd_sizes_become_even_for_mp4(turning_arm, tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    summary = render_preview(str(turning_arm), str(tmp_path / "odd.mp4"), size=(161, 121), max_frames=2)
    assert summary["size"] == (162, 122)
    assert read_frames(tmp_path / "odd.mp4").shape[1:3] == (122, 162)


def test_bad_input_is_refused_and_leaves_no_file(tmp_path):
    with pytest.raises(UsdartError, match=r"unknown video format '\.avi'"):
        render_preview(str(SAMPLE), str(tmp_path / "motion.avi"))
    with pytest.raises(StageError, match="no such file"):
        render_preview(str(tmp_path / "missing.usda"), str(tmp_path / "motion.gif"))
    garbage = tmp_path / "garbage.usda"
    garbage.write_text("this is not a USD file\n")
    with pytest.raises(StageError, match="cannot be read as USD"):
        render_preview(str(garbage), str(tmp_path / "motion.gif"))
    for size in [(0, 480), (640,), "640x480", (64.5, 48)]:
        with pytest.raises(UsdartError, match="size must be"):
            render_preview(str(SAMPLE), str(tmp_path / "motion.gif"), size=size)
    with pytest.raises(UsdartError, match="fps must be"):
        render_preview(str(SAMPLE), str(tmp_path / "motion.gif"), fps=0)
    with pytest.raises(UsdartError, match="max_frames must be"):
        render_preview(str(SAMPLE), str(tmp_path / "motion.gif"), max_frames=0)
    assert sorted(os.listdir(tmp_path)) == ["garbage.usda"]


def test_failures_keep_the_old_output(turning_arm, tmp_path, monkeypatch):
    """Nothing to draw (refused before writing), or a failure in the middle of writing: the old file stays
    and no temporary file is left."""
    empty = tmp_path / "empty.usda"
    stage = Usd.Stage.CreateNew(str(empty))
    UsdGeom.Xform.Define(stage, "/World")
    stage.GetRootLayer().Save()
    old = tmp_path / "motion.gif"
    old.write_bytes(b"the previous preview")
    with pytest.raises(UsdartError, match=r"empty\.usda: nothing to draw"):
        render_preview(str(empty), str(old))
    assert old.read_bytes() == b"the previous preview"

    def broken(self, labels):
        yield from list(original(self, labels[:2]))
        raise RuntimeError("the disk caught fire")

    original = preview._Renderer.frames
    monkeypatch.setattr(preview._Renderer, "frames", broken)
    for name in ("motion.gif", "motion.mp4"):
        (tmp_path / name).write_bytes(b"the previous preview")
        with pytest.raises(RuntimeError, match="caught fire"):
            render_preview(str(turning_arm), str(tmp_path / name), size=(160, 120))
        assert (tmp_path / name).read_bytes() == b"the previous preview"
    assert sorted(os.listdir(tmp_path)) == ["empty.usda", "motion.gif", "motion.mp4"]


def test_y_up_stage_scaled_cube_and_ground_plane(tmp_path):
    """A Y-up stage: a post (a cube scaled to 0.2 x 2 x 0.2) on a ground plane, a ball on top. Up in the
    stage is up in the picture, the scale is drawn, and the plane is a patch, not the whole view."""
    path = tmp_path / "post.usda"
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    ground = UsdGeom.Plane.Define(stage, "/World/ground")
    ground.CreateAxisAttr("Y")
    UsdPhysics.CollisionAPI.Apply(ground.GetPrim())
    post = UsdGeom.Cube.Define(stage, "/World/post")
    post.CreateSizeAttr(1.0)
    post.AddTranslateOp().Set(Gf.Vec3d(0, 1, 0))
    post.AddScaleOp().Set(Gf.Vec3f(0.2, 2, 0.2))
    ball = UsdGeom.Sphere.Define(stage, "/World/ball")
    ball.CreateRadiusAttr(0.15)
    ball.AddTranslateOp().Set(Gf.Vec3d(0, 2.15, 0))
    for prim in (post, ball):
        UsdPhysics.CollisionAPI.Apply(prim.GetPrim())
    loose = UsdGeom.Cube.Define(stage, "/World/decoration")  # no collider, in no body: not drawn
    loose.AddTranslateOp().Set(Gf.Vec3d(5, 0, 0))
    stage.GetRootLayer().Save()

    summary = render_preview(str(path), str(tmp_path / "post.gif"), size=(240, 320))
    frame = read_frames(tmp_path / "post.gif")[0]
    assert summary["frames"] == 1 and summary["shapes"] == 2
    camera = summary["camera"]
    points = [(0, 0.1, 0), (0, 1, 0), (0, 2.15, 0), (0, 2.27, 0), (0.5, 1, 0)]
    (bx, by), (mx, my), (tx, ty), (top_x, top_y), (ox, oy) = project(points, camera)
    assert by > my > ty > top_y  # up in the stage (+y) is up in the image (rows grow downwards)
    for x, y in ((bx, by), (mx, my), (tx, ty), (top_x, top_y)):  # the top of the ball too: the frame is
        # centred on the geometry by moving the axes, which must not clip what is drawn
        assert drawn(frame, x, y) == 1.0
    assert drawn(frame, ox, oy) == 0.0  # 0.5 from the post's axis, 0.1 thick: beside it, in the air
    assert drawn(frame, 236, 3) == 0.0  # the plane is a patch around the geometry, not the whole view


def test_missing_plot_extra_is_one_clear_error(tmp_path, monkeypatch):
    for module in ("imageio", "imageio.v2", "imageio.v3"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails, as when it is not installed
    with pytest.raises(UsdartError, match=r"usdart preview needs the plot extra: pip install 'usdart\[plot\]'"):
        render_preview(str(SAMPLE), str(tmp_path / "motion.gif"))
    assert os.listdir(tmp_path) == []


def test_parse_size():
    assert parse_size("640x480") == (640, 480)
    assert parse_size("320X200") == (320, 200)
    for bad in ("640", "640x", "x480", "-640x480", "640x480x3", "1e3x480"):
        with pytest.raises(UsdartError, match="WIDTHxHEIGHT"):
            parse_size(bad)
