"""Loading: `usdart.load(path)` reads the file as it is when called."""

from __future__ import annotations

from builders import body, new_stage

import usdart


def write_ball_stage(path, height):
    stage = new_stage()
    body(stage, "/World/ball", pos=(0.0, 0.0, height))
    stage.GetRootLayer().Export(str(path))


def test_a_file_edited_after_an_earlier_load_loads_as_edited(tmp_path):
    """USD hands out a still-open layer as it was read: with the first scene alive, loading the rewritten
    file gave the first file's body at 1 m (not 2). Both scenes read their own file."""
    path = tmp_path / "edited.usda"
    write_ball_stage(path, 1.0)
    first = usdart.load(str(path))
    write_ball_stage(path, 2.0)
    second = usdart.load(str(path))
    assert first.body_transform("/World/ball")[2] == 1.0
    assert second.body_transform("/World/ball")[2] == 2.0
