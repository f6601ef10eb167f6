"""Pyraminx tips measured on the base a turned layer leaves (`geometry._tips_on_other_groups`)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision import geometry
from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth, score_capture
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import analyse_view, judge_views

CAPTURE = "c0156"  # a solved Pyraminx, one layer turned 55 degrees (limit 60), two cameras


def _views(corpus: Path):
    truth = json.loads((corpus / f"{CAPTURE}.json").read_text(encoding="utf-8"))
    model = puzzle_model("pyram")
    views = [
        analyse_view(
            cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR),
            model,
            intrinsics_from_truth(view),
            view["image"],
        )
        for view in truth["views"]
    ]
    poses = [np.asarray(view["world_from_camera"], dtype=np.float64) for view in truth["views"]]
    return truth, model, views, poses


def test_a_tip_on_the_base_is_measured_there(corpus_dir: Path) -> None:
    """cam0 measures the other axes on the turned layer, which holds none of their tips; two of
    them are measured on the base instead, and the pair it adds is within 2 degrees of the
    truth and inside its stated uncertainty."""
    truth, model, views, _ = _views(corpus_dir)
    fit = views[0].fit
    assert fit is not None and fit.active_axis >= 0
    elsewhere = [angles for angles in fit.tips_elsewhere if angles]
    assert len(elsewhere) == 2
    assert all(angles[-1] is not None for angles in elsewhere)
    added = geometry._tip_pairs(model, fit.tips_elsewhere)
    assert len(added) == 1 and added[0].parts == ("layer", "tip")
    assert (added[0].axis, added[0].parts, added[0].angle_deg) in {
        (pair.axis, pair.parts, pair.angle_deg) for pair in fit.pairs
    }
    score = evaluate_view(views[0], truth["views"][0], truth, model)
    assert len(score.angle_errors) == 4  # 3 on the turned layer's side, 1 on the base
    assert max(abs(error) for error in score.angle_errors) < 2.0
    assert all(score.covered)


def test_the_tips_measured_on_the_base_give_the_verdict(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fused over both cameras: every pair within 2 degrees of the truth and covered, solved as
    the truth says. Without the tips on the base, one tip is not measured at all: review."""
    truth, model, views, poses = _views(corpus_dir)
    assert truth["verdict"] == "solved"
    result = judge_views(views, "pyram", world_from_camera=poses)
    assert result.verdict == "solved", result.reasons
    score = score_capture(result, truth, model)
    assert len(score.angle_errors) == 7
    assert max(abs(error) for error in score.angle_errors) < 2.0
    assert all(score.covered)

    monkeypatch.setattr(
        geometry,
        "_tips_on_other_groups",
        lambda problem, *_: tuple(() for _ in problem.model.axes),
    )
    _, _, without, _ = _views(corpus_dir)
    result = judge_views(without, "pyram", world_from_camera=poses)
    assert result.verdict == "review"
    assert any("tip angle was not measured" in reason for reason in result.reasons)


def test_a_cube_has_no_tips_to_look_for(corpus_dir: Path) -> None:
    truth = json.loads((corpus_dir / "c0000.json").read_text(encoding="utf-8"))
    view = truth["views"][0]
    image = cv2.imread(str(corpus_dir / view["image"]), cv2.IMREAD_COLOR)
    fit = analyse_view(image, puzzle_model("333"), intrinsics_from_truth(view), view["image"]).fit
    assert fit is not None and fit.found
    assert fit.tips_elsewhere == ((), (), ())
