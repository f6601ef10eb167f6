"""A tip measured turned is left out of the body's second fit (`geometry._turned_tips`).

Corpus c0097 (a Pyraminx +2, two cameras) has two tips turned about 18 degrees and one at
58.6; the body fitted on every sticker leans towards them and reads them short.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision import geometry
from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import analyse_view

CAPTURE = "c0097"


def _turned_tip_errors(corpus: Path) -> list[float]:
    """Per view, the error of every layer|tip pair whose tip the truth turns 10 degrees or
    more (the error's sign towards the truth's: negative reads short)."""
    truth = json.loads((corpus / f"{CAPTURE}.json").read_text(encoding="utf-8"))
    model = puzzle_model("pyram")
    errors = []
    for view in truth["views"]:
        result = analyse_view(
            cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR),
            model,
            intrinsics_from_truth(view),
            view["image"],
        )
        assert result.fit is not None and result.fit.found
        score = evaluate_view(result, view, truth, model)
        measured = list(result.fit.pairs)  # every Pyraminx pair has a truth: one error each
        assert len(measured) == len(score.angle_errors)
        for pair, error in zip(measured, score.angle_errors, strict=True):
            true_angle = pair.angle_deg - error
            if pair.parts == ("layer", "tip") and abs(true_angle) >= 10.0:
                errors.append(float(error * np.sign(true_angle)))
    return errors


def test_turned_tips_are_read_within_two_degrees_on_average(corpus_dir: Path) -> None:
    errors = _turned_tip_errors(corpus_dir)
    assert len(errors) == 4
    assert np.mean(np.abs(errors)) < 2.0
    assert max(abs(e) for e in errors) < 3.0


def test_without_the_second_fit_they_read_short(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same views with no tip ever left out: the body leans and the tips read short."""
    monkeypatch.setattr(
        geometry, "_turned_tips", lambda model, others: np.zeros(model.facelet_count, bool)
    )
    errors = _turned_tip_errors(corpus_dir)
    assert len(errors) == 4
    assert np.mean(np.abs(errors)) > 2.0
    assert np.mean(errors) < -1.5


def test_a_cube_never_has_tips_left_out() -> None:
    model = puzzle_model("333")
    others = {
        axis: [geometry.PartAngle(30.0, 0.1, 9) for _ in model.axes[axis].part_names]
        for axis in range(1, len(model.axes))
    }
    assert not np.any(geometry._turned_tips(model, others))


def _c0118_under_jpeg30_error(corpus: Path) -> float:
    """The largest pair error in c0118's one view (a +2, its layer at -56.3 degrees) after
    JPEG quality 30, which made a tip in line look turned to the first fit (with this
    session's OpenCV; the refit that followed read the layer at +40.3)."""
    from judgecam.vision.perturb import perturbed

    truth = json.loads((corpus / "c0118.json").read_text(encoding="utf-8"))
    view = truth["views"][0]
    image = perturbed(
        cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR), "jpeg30", view["image"]
    )
    model = puzzle_model("pyram")
    result = analyse_view(image, model, intrinsics_from_truth(view), view["image"])
    score = evaluate_view(result, view, truth, model)
    assert result.fit is not None and score.angle_errors
    return max(abs(error) for error in score.angle_errors)


def test_c0118_under_jpeg30_keeps_its_layer(corpus_dir: Path) -> None:
    assert _c0118_under_jpeg30_error(corpus_dir) < 2.0


def test_a_refit_reading_the_turned_layer_otherwise_is_told_apart() -> None:
    """`_same_active_pairs` on c0118's two readings under JPEG 30: its first fit read the
    layer -55.8 degrees from its base, the refit +40.3 (the other minimum of a two-sticker
    base); a refit that moves the pair within its stated uncertainty is the same reading, one
    that loses the pair is not."""
    model = puzzle_model("pyram")

    def measured(base: float, layer: float | None, sigma: float) -> geometry._Measured:
        parts: list[list[geometry.PartAngle | None]] = [
            [None] * len(axis.part_names) for axis in model.axes
        ]
        parts[0] = [
            geometry.PartAngle(base, sigma, 2),
            None if layer is None else geometry.PartAngle(layer, 0.5, 6),
            None,
        ]
        empty = np.zeros(0, np.int64)
        group = geometry._Reference(0.0, empty, np.zeros(0, bool))
        return geometry._Measured(np.zeros(3), np.zeros(3), np.eye(3), parts, empty, group, [])

    first = measured(54.3, -1.5, 1.1)
    assert not geometry._same_active_pairs(model, first, measured(-44.6, -4.3, 5.8), 0)
    assert geometry._same_active_pairs(model, first, measured(54.9, -1.4, 1.0), 0)
    assert not geometry._same_active_pairs(model, first, measured(54.3, None, 1.0), 0)
