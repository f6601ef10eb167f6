"""A review the rules engine did not ask for, decided where every view judged alone reads
what the fused reading reads (`pipeline._each_view_alone`)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision.evaluate import intrinsics_from_truth
from judgecam.vision.model import puzzle_model
from judgecam.vision.perturb import perturbed
from judgecam.vision.pipeline import CheckResult, _judge, analyse_view, judge_views


def _judged(corpus_dir: Path, capture: str, perturbation: str | None) -> tuple[dict, list, list]:
    truth = json.loads((corpus_dir / f"{capture}.json").read_text(encoding="utf-8"))
    model = puzzle_model(truth["puzzle"])
    views = []
    for view in truth["views"]:
        image = cv2.imread(str(corpus_dir / view["image"]))
        if perturbation is not None:
            image = perturbed(image, perturbation, view["image"])
        views.append(analyse_view(image, model, intrinsics_from_truth(view), view["image"]))
    poses = [np.asarray(view["world_from_camera"], dtype=np.float64) for view in truth["views"]]
    return truth, views, poses


def _disagreeing_pairs(result: CheckResult) -> list[tuple[str, tuple[int, int]]]:
    assert result.fusion is not None
    return [(pair.axis, pair.parts) for pair in result.fusion.pairs if not pair.consistent]


@pytest.mark.parametrize(("capture", "perturbation"), [("c0023", "defocus"), ("c0023", "motion")])
def test_a_dnf_each_view_reads_alone_is_given_though_the_views_disagree(
    corpus_dir: Path, capture: str, perturbation: str
) -> None:
    """c0023, a 3x3x3 DNF with its R layer 37.9 degrees out, blurred: one view reads the
    slice with the layer above it, the other with the layer below. Fused, the colours of the
    two labellings made a review; each view alone reads the DNF."""
    truth, views, poses = _judged(corpus_dir, capture, perturbation)
    together = _judge(tuple(views), "333", None, None, poses)
    assert together.verdict == "review" and _disagreeing_pairs(together)
    alone = [
        _judge((view,), "333", None, None, (pose,)) for view, pose in zip(views, poses, strict=True)
    ]
    assert [each.verdict for each in alone] == ["DNF", "DNF"]
    result = judge_views(views, "333", None, None, poses)
    assert truth["verdict"] == "DNF" and result.verdict == "DNF"
    assert result.moves_from_solved == 2 and result.review_because == ()
    assert any("each view judged alone read DNF" in reason for reason in result.reasons)


def test_a_dnf_whose_pooled_colours_look_alike_is_given_where_each_camera_reads_it(
    corpus_dir: Path,
) -> None:
    """c0131, a 3x3x3 DNF, darkened (gamma 1.8): pooled over both cameras, orange and red are
    too close to judge on (CIEDE2000 under 10); each camera's own colours read the DNF."""
    truth, views, poses = _judged(corpus_dir, "c0131", "dark")
    together = _judge(tuple(views), "333", None, None, poses)
    assert together.verdict == "review" and together.fusion is not None
    assert together.fusion.verdict.verdict == "DNF"
    assert any("look alike" in reason for reason in together.review_because)
    result = judge_views(views, "333", None, None, poses)
    assert truth["verdict"] == "DNF" and result.verdict == "DNF"
    assert any("look alike" in reason for reason in result.reasons)


def test_a_solved_puzzle_one_view_misfits_stays_a_review(corpus_dir: Path) -> None:
    """c0078, a solved 3x3x3 whose cam1 fits a wrong pose (1 of 15 stickers on its cell):
    fused, the colours read DNF; cam1 alone cannot decide it, so a judge looks."""
    truth, views, poses = _judged(corpus_dir, "c0078", None)
    result = judge_views(views, "333", None, None, poses)
    assert truth["verdict"] == "solved" and result.verdict == "review"
    assert _disagreeing_pairs(result)
    assert result.fusion is not None and result.fusion.verdict.verdict == "DNF"
    assert not any("judged alone" in reason for reason in result.reasons)


def test_a_review_the_rules_engine_asks_for_is_left_alone(corpus_dir: Path) -> None:
    """c0000, a solved 3x3x3 with 17 facelets no camera sees: the rules engine cannot decide,
    so no view is judged alone."""
    truth, views, poses = _judged(corpus_dir, "c0000", None)
    result = judge_views(views, "333", None, None, poses)
    assert truth["verdict"] == "solved" and result.verdict == "review"
    assert result.fusion is not None and result.fusion.verdict.verdict == "review"
    assert "fuse_and_judge" in result.timings_ms
    assert not any("judged alone" in reason for reason in result.reasons)
