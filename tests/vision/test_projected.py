"""Facelets sampled where the fitted model projects them (`vision/projected.py`), and how the
fusion treats such samples where views disagree."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np
import pytest

from judgecam.vision.camera import Intrinsics
from judgecam.vision.fuse import _consistent
from judgecam.vision.geometry import GeometryFit
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import ViewResult, analyse_view
from judgecam.vision.projected import (
    MIN_FACING,
    _render,
    _unrenderable_facelets,
    project_facelets,
)
from judgecam.vision.synthetic import (
    DEFAULT_SCHEME_BGR,
    SyntheticView,
    Turn,
    default_camera,
    render_view,
)

EYE = (210.0, 190.0, 230.0)
#: Skin, as a hand or a finger over the puzzle would show it (BGR).
SKIN_BGR = (120, 160, 215)


def _camera() -> Intrinsics:
    return Intrinsics(default_camera(1280, 720), np.zeros(5))


@pytest.fixture(scope="module")
def turned_slice() -> tuple[SyntheticView, np.ndarray, ViewResult]:
    """A 3x3x3 with its middle slice turned 30 degrees and random sticker colours (so that a
    colour read at the wrong facelet shows)."""
    model = puzzle_model("333")
    palette = np.array(list(DEFAULT_SCHEME_BGR.values()), np.uint8)
    colors = palette[np.random.default_rng(3).integers(0, len(palette), model.facelet_count)]
    view = render_view(model, colors, EYE, turn=Turn(0, (0.0, 30.0, 0.0)), seed=1)
    result = analyse_view(view.image, model, _camera(), "turned")
    assert result.found and result.fit is not None
    return view, colors, result


def _true_facelet(view: SyntheticView, center: np.ndarray, sticker_px: float) -> int | None:
    """The facing facelet whose true centre is within a quarter sticker of `center`."""
    gaps = np.linalg.norm(view.centers_px - center, axis=1)
    gaps[~view.visible] = np.inf
    nearest = int(np.argmin(gaps))
    return nearest if gaps[nearest] < 0.25 * sticker_px else None


def test_undetected_facelets_of_a_turned_slice_are_sampled_from_the_fit(turned_slice) -> None:
    view, colors, result = turned_slice
    assert result.fit is not None and result.segmentation is not None
    model = puzzle_model("333")
    fit = result.fit
    axis = model.axes[fit.active_axis]
    turned = [
        part for part, angle in enumerate(fit.part_angles[fit.active_axis]) if angle is not None
    ]
    np.testing.assert_allclose(
        sorted(abs(a.angle_deg) for a in fit.part_angles[fit.active_axis] if a is not None),
        [0.0, 0.0, 30.0],
        atol=1.5,
    )
    slice_part = max(turned, key=lambda p: abs(fit.part_angles[fit.active_axis][p].angle_deg))
    # Stage 2 missing stickers (shadow, grazing view): keep three detections of each part (what
    # says the fit is tight there) and unplace the rest.
    placed = np.nonzero(fit.assignment >= 0)[0]
    dropped = []
    for part in range(len(axis.part_names)):
        mine = [d for d in placed if axis.facelet_part[fit.assignment[d]] == part]
        dropped.extend(mine[3:])
    on_slice = [d for d in dropped if axis.facelet_part[fit.assignment[d]] == slice_part]
    assert on_slice
    assignment = fit.assignment.copy()
    assignment[dropped] = -1
    partial = replace(fit, assignment=assignment)
    samples = project_facelets(view.image, result.segmentation.facelets, partial, model, _camera())
    sampled = {s.facelet for s in samples}
    # What stage 2 "missed" and faces the camera squarely enough comes back, the slice's
    # facelets included.
    _, _, facing, _ = _render(
        partial, model, _camera(), np.zeros(2), view.image.shape[:2], partial.active_axis
    )
    squarely = {int(fit.assignment[d]) for d in dropped if facing[fit.assignment[d]] >= MIN_FACING}
    assert len(squarely) >= 8
    assert len(squarely & sampled) >= 0.8 * len(squarely)
    assert {int(fit.assignment[d]) for d in on_slice} & sampled
    sticker = float(np.median([f.size_px for f in result.segmentation.facelets]))
    for sample in samples:
        truth = _true_facelet(view, sample.sample.center_px, sticker)
        assert truth is not None, sample.facelet
        np.testing.assert_allclose(sample.sample.mean_bgr, colors[truth], atol=25)


def test_facelets_half_hidden_under_the_turned_slice_are_not_sampled(turned_slice) -> None:
    view, _, result = turned_slice
    assert result.segmentation is not None
    sticker = float(np.median([f.size_px for f in result.segmentation.facelets]))
    for sample in result.projected:
        assert sample.own_fraction >= 0.7
        assert _true_facelet(view, sample.sample.center_px, sticker) is not None


@pytest.mark.parametrize("cover", ["whole", "half"])
def test_a_hand_over_a_facelet_leaves_it_unknown(cover: str) -> None:
    model = puzzle_model("333")
    palette = np.array(list(DEFAULT_SCHEME_BGR.values()), np.uint8)
    colors = palette[np.random.default_rng(7).integers(0, len(palette), model.facelet_count)]
    view = render_view(model, colors, EYE, seed=2)
    clean = analyse_view(view.image, model, _camera(), "clean")
    assert clean.fit is not None and clean.segmentation is not None
    sticker = float(np.median([f.size_px for f in clean.segmentation.facelets]))
    # A finger across one facing facelet near the middle of the view.
    facing = np.nonzero(view.visible)[0]
    middle = np.median(view.centers_px[facing], axis=0)
    target = int(facing[np.argmin(np.linalg.norm(view.centers_px[facing] - middle, axis=1))])
    center = view.centers_px[target]
    image = view.image.copy()
    if cover == "whole":
        # Covers the cell and its border: uniform skin, no sticker edge left.
        axes = (int(0.9 * sticker), int(2.5 * sticker))
        cv2.ellipse(image, (int(center[0]), int(center[1])), axes, 30, 0, 360, SKIN_BGR, -1)
    else:
        # A fingertip over half of the sticker, with a shaded edge.
        tip = (int(center[0] + 0.1 * sticker), int(center[1] + 1.5 * sticker))
        cv2.ellipse(image, tip, (int(0.5 * sticker), int(1.6 * sticker)), 0, 0, 360, SKIN_BGR, -1)
        cv2.ellipse(
            image, tip, (int(0.5 * sticker), int(1.6 * sticker)), 0, 0, 360, (60, 80, 110), 3
        )
    image = np.asarray(cv2.GaussianBlur(image, (0, 0), 0.8), dtype=np.uint8)
    occluded = analyse_view(image, model, _camera(), cover)
    assert occluded.fit is not None and occluded.found
    for detection in np.nonzero(occluded.fit.assignment >= 0)[0]:
        facelet = occluded.segmentation.facelets[detection]  # type: ignore[union-attr]
        assert _true_facelet(view, facelet.center_px, sticker) != target
    for sample in occluded.projected:
        truth = _true_facelet(view, sample.sample.center_px, sticker)
        assert truth != target, "the occluded facelet was given a colour"
        np.testing.assert_allclose(sample.sample.mean_bgr, colors[truth], atol=25)


def _sample(lab: tuple[float, float, float], weight: float, projected: bool):
    return (np.array(lab), weight, 1.0, projected)


def test_fusion_prefers_a_detected_sticker_over_a_projected_sample() -> None:
    detected = _sample((40.0, 10.0, -45.0), 800.0, False)  # blue
    projected = _sample((80.0, -1.0, 0.0), 300.0, True)  # grey
    assert _consistent([detected, projected]) == [detected]


def test_fusion_reads_a_glare_washed_sample_as_the_saturated_one() -> None:
    glare = _sample((99.5, -1.0, 2.0), 900.0, False)  # blown out to white
    green = _sample((56.0, -51.0, 36.0), 400.0, False)
    kept = _consistent([glare, green])
    assert kept is not None and len(kept) == 1 and kept[0] is green


def test_fusion_leaves_real_disagreements_unseen() -> None:
    red = _sample((45.0, 62.0, 45.0), 700.0, False)
    blue = _sample((40.0, 10.0, -45.0), 700.0, False)
    assert _consistent([red, blue]) is None
    # A white sticker under normal light is not glare: white against yellow stays unseen.
    white = _sample((88.0, 0.0, 2.0), 700.0, False)
    yellow = _sample((90.0, -8.0, 80.0), 700.0, False)
    assert _consistent([white, yellow]) is None


def test_an_unmeasured_layer_of_another_axis_is_in_line_when_the_active_axis_is_turned(
    fit_with: Callable[..., GeometryFit],
) -> None:
    model = puzzle_model("333")
    # U turned 20 degrees on y; x's M slice unmeasured: it cannot stand askew across a turned U.
    fit = fit_with("333", 1, {(1, 2): 20.0, (0, 1): None})
    assert _unrenderable_facelets(fit, model, 1) == set()
    # With y in line, the unmeasured M may be turned: y cannot be rendered, x can (M swept).
    in_line = fit_with("333", 1, {(0, 1): None})
    assert _unrenderable_facelets(in_line, model, 1) is None
    assert _unrenderable_facelets(in_line, model, 0) == set()
    # A turned layer of another axis (beyond a few degrees) is not the rendered puzzle.
    crossing = fit_with("333", 1, {(1, 2): 20.0, (0, 0): 15.0})
    assert _unrenderable_facelets(crossing, model, 1) is None


def test_a_free_pyraminx_tip_of_another_axis_only_loses_its_own_facelets(
    fit_with: Callable[..., GeometryFit],
) -> None:
    model = puzzle_model("pyram")
    tip = model.axes[2].part_names.index("tip")
    fit = fit_with("pyram", 0, {(2, tip): 40.0})
    excluded = _unrenderable_facelets(fit, model, 0)
    expected = set(np.nonzero(model.axes[2].facelet_part == tip)[0].tolist())
    assert excluded == expected and len(expected) == 3


def test_a_sample_with_a_sheen_gives_way_to_the_saturated_view() -> None:
    # The same green sticker: saturated in one view, lighter and washed towards white in the
    # other (same hue, so the views do not contradict): the saturated sample is kept.
    green = (np.array([67.6, -60.1, 45.8]), 900.0, 2.0, False)
    sheened = (np.array([94.5, -14.6, 17.2]), 1500.0, 2.0, False)
    assert [s[0].tolist() for s in _consistent([sheened, green]) or []] == [green[0].tolist()]
    # Two readings of a white sticker both stay.
    white = (np.array([96.7, -1.1, 8.0]), 900.0, 2.0, False)
    other_white = (np.array([97.7, -1.5, 8.6]), 900.0, 2.0, False)
    assert len(_consistent([white, other_white]) or []) == 2


def test_with_three_views_an_agreeing_majority_outvotes_one() -> None:
    red = (np.array([45.0, 60.0, 45.0]), 900.0, 2.0, False)
    red_again = (np.array([48.0, 58.0, 47.0]), 800.0, 2.0, False)
    blue = (np.array([35.0, 15.0, -55.0]), 1200.0, 2.0, False)  # a hand? another sticker?
    kept = _consistent([blue, red, red_again]) or []
    assert sorted(s[1] for s in kept) == [800.0, 900.0]
    # Two views against each other stay a contradiction.
    assert _consistent([blue, red]) is None
