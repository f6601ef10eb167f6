"""A tight fit of a puzzle stage 2's window cut off, looked at whole (`vision/cut_off.py`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision.camera import rotation_matrix
from judgecam.vision.cut_off import MAX_BODY_TURN_DEG, extends
from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth
from judgecam.vision.geometry import fit_geometry
from judgecam.vision.locate import find_puzzles
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import _whole_puzzle_region, analyse_view, judge_views
from judgecam.vision.segment import segment_facelets, window

CAPTURE = "c0009"  # a solved Pyraminx, its U tip turned 20 degrees, seen by one top camera


def _top_view(corpus: Path):
    truth = json.loads((corpus / f"{CAPTURE}.json").read_text(encoding="utf-8"))
    view_truth = truth["views"][0]
    image = cv2.imread(str(corpus / view_truth["image"]), cv2.IMREAD_COLOR)
    return truth, view_truth, image, intrinsics_from_truth(view_truth)


@pytest.fixture(scope="module")
def first_and_grown(corpus_dir: Path):
    """Stage 1's region of the top view, its tight fit, and the fit over the grown window."""
    _, _, image, intrinsics = _top_view(corpus_dir)
    model = puzzle_model("pyram")
    region = find_puzzles(image, sides=3).candidates[0]
    segmentation = segment_facelets(image, region, sides=3)
    first = fit_geometry(segmentation.facelets, model, intrinsics)
    grown = _whole_puzzle_region(region, segmentation, first, model, intrinsics, image.shape)
    assert grown is not None, "the fitted silhouette reaches past stage 2's window"
    x0, _, _, _ = window(region, image.shape)
    assert x0 > window(grown, image.shape)[0] + region.sticker_px
    second = fit_geometry(segment_facelets(image, grown, sides=3).facelets, model, intrinsics)
    return model, first, second


def test_the_fit_over_the_whole_silhouette_extends_the_cut_off_one(first_and_grown) -> None:
    model, first, second = first_and_grown
    assert np.sum(second.assignment >= 0) >= np.sum(first.assignment >= 0) + 4
    assert extends(model, first, second)
    # Fewer placements, or the same ones, do not extend a fit.
    assert not extends(model, second, first)
    assert not extends(model, first, first)


def test_a_fit_that_moves_the_body_or_a_pair_does_not_extend_it(first_and_grown) -> None:
    model, first, second = first_and_grown
    turn = cv2.Rodrigues(np.array([0.0, 0.0, np.radians(2 * MAX_BODY_TURN_DEG)]))[0]
    turned = cv2.Rodrigues(turn @ rotation_matrix(second.rvec))[0].reshape(3)
    assert not extends(model, first, replace(second, rvec=turned))
    assert not extends(model, first, replace(second, tvec=second.tvec * 1.05))
    # A pair both measure, read 20 degrees apart (more patches fitting a layer elsewhere).
    measured = {(p.axis, p.parts) for p in first.pairs}
    index = next(i for i, p in enumerate(second.pairs) if (p.axis, p.parts) in measured)
    moved = replace(second.pairs[index], angle_deg=second.pairs[index].angle_deg + 20.0)
    pairs = (*second.pairs[:index], moved, *second.pairs[index + 1 :])
    assert not extends(model, first, replace(second, pairs=pairs))


def test_a_top_view_whose_window_missed_a_face_is_read_whole(corpus_dir: Path) -> None:
    """c0009's top view: stage 2's window ended a sticker short of the green face, the B axis
    went unmeasured and the capture to a judge. Read whole: every placement right, the B
    axis measured to within a degree of the truth, solved as the truth says."""
    truth, view_truth, image, intrinsics = _top_view(corpus_dir)
    model = puzzle_model("pyram")
    view = analyse_view(image, model, intrinsics, view_truth["image"])
    score = evaluate_view(view, view_truth, truth, model)
    assert score.placed >= 21
    assert score.placed_right == score.placed
    assert len(score.angle_errors) == 8  # every pair (6 with the window cut off)
    assert max(abs(error) for error in score.angle_errors) < 1.5
    result = judge_views([view], "pyram")
    assert truth["verdict"] == "solved"
    assert result.verdict == "solved", result.reasons
