"""A view that measures a pair unlike all the others agreeing is left out (`outvoted`)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from judgecam.vision.evaluate import intrinsics_from_truth
from judgecam.vision.model import puzzle_model
from judgecam.vision.outvoted import _odd_one
from judgecam.vision.pipeline import analyse_view, judge_views


def test_the_odd_view_is_the_one_all_others_agree_against() -> None:
    # Three rig3 views of a layer at -43 degrees, one taking it for aligned (seed 8888 c0018).
    assert _odd_one({0: -0.7, 1: -42.7, 2: -43.0}, 90.0) == 0
    # Angles wrap at half a step: 44 and -44 are 2 degrees apart on a cube.
    assert _odd_one({0: 44.0, 1: -44.0, 2: 0.5}, 90.0) == 2
    # Two views: no majority.
    assert _odd_one({0: -0.7, 1: -42.7}, 90.0) is None
    # No two agree: nobody is outvoted.
    assert _odd_one({0: 0.0, 1: 20.0, 2: 40.0}, 90.0) is None
    # The others must agree among themselves, not just differ from the odd one.
    assert _odd_one({0: 0.0, 1: 30.0, 2: 40.0, 3: 25.0}, 90.0) is None


def test_a_view_outvoted_by_two_that_agree_is_left_out(corpus_dir: Path) -> None:
    """c0201 (solved, a layer at 43.2 degrees): cam0 takes the layer for aligned (+5.8), cam1
    measures +43.5; with cam1's image given twice (a third camera that agrees with it), cam0 is
    left out as outvoted and the pair is no longer disputed."""
    truth = json.loads((corpus_dir / "c0201.json").read_text(encoding="utf-8"))
    model = puzzle_model(truth["puzzle"])
    order = [0, 1, 1]
    views = [
        analyse_view(
            cv2.imread(str(corpus_dir / truth["views"][i]["image"])),
            model,
            intrinsics_from_truth(truth["views"][i]),
            f"{truth['views'][i]['image']}#{n}",
        )
        for n, i in enumerate(order)
    ]
    poses = [np.asarray(truth["views"][i]["world_from_camera"]) for i in order]
    two = judge_views(views[:2], truth["puzzle"], world_from_camera=poses[:2])
    assert any("views disagree" in reason for reason in two.reasons), two.reasons
    three = judge_views(views, truth["puzzle"], world_from_camera=poses)
    outvoted = [reason for reason in three.reasons if "outvoted" in reason]
    assert len(outvoted) == 1 and outvoted[0].startswith("c0201_cam0.jpg#0: outvoted on")
    assert outvoted[0].endswith("; view left out")
    assert not any("views disagree" in reason for reason in three.reasons), three.reasons
    assert three.fusion is not None and all(pair.consistent for pair in three.fusion.pairs)
