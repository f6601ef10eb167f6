"""Second look (`judgecam.vision.second_look`): a part one view could not measure is placed
there with the angle the other views measured, and its facelets are sampled."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from judgecam.vision.evaluate import intrinsics_from_truth, truth_alignment
from judgecam.vision.fuse import FusedPair
from judgecam.vision.geometry import GeometryFit, PartAngle
from judgecam.vision.model import puzzle_model, rotation_about
from judgecam.vision.perturb import perturbed
from judgecam.vision.pipeline import analyse_view, judge_views
from judgecam.vision.projected import CLEAR_FACING, ProjectedFacelet, Projection
from judgecam.vision.second_look import MIN_REFUSED_CELLS, borrowed_angles, contradicted_parts
from judgecam.vision.segment import Facelet


def _angle(fit: GeometryFit, axis: int, part: int) -> float | None:
    value = fit.part_angles[axis][part]
    return None if value is None else value.angle_deg


def test_an_unmeasured_layer_takes_the_fused_angle_chained_along_its_axis(
    fit_with: Callable[..., GeometryFit],
) -> None:
    model = puzzle_model("333")
    # x: L measured at 1 degree, M and R not measured here; the other views measured L|M at
    # 0.5 and M|R at -30 (R turned).
    fit = fit_with("333", 0, {(0, 0): 1.0, (0, 1): None, (0, 2): None})
    pairs = [FusedPair("x", (0, 1), 0.5, 1.0, 1), FusedPair("x", (1, 2), -30.0, 1.5, 1)]
    result = borrowed_angles(model, fit, np.eye(3), pairs)
    assert result is not None
    placed_fit, placed = result
    assert placed == {(0, 1), (0, 2)}
    assert _angle(placed_fit, 0, 1) == 1.5
    assert _angle(placed_fit, 0, 2) == -28.5
    # The measured parts keep their own angles.
    assert _angle(placed_fit, 0, 0) == 1.0 and _angle(placed_fit, 1, 2) == 0.0


def test_a_view_turned_round_reads_the_pair_from_the_other_end(
    fit_with: Callable[..., GeometryFit],
) -> None:
    model = puzzle_model("333")
    # This view's model frame is the fused frame turned half round y: its x runs the other way,
    # so its parts (L, M) are the fused (M, R) and the relative angle keeps its sign.
    half_turn = rotation_about(np.array([0.0, 1.0, 0.0]), 180.0)
    fit = fit_with("333", 0, {(0, 0): None, (0, 1): 2.0, (0, 2): None})
    pairs = [FusedPair("x", (1, 2), 20.0, 1.0, 1)]
    result = borrowed_angles(model, fit, half_turn, pairs)
    assert result is not None
    placed_fit, placed = result
    assert placed == {(0, 0)}
    assert _angle(placed_fit, 0, 0) == -18.0  # L = M - (angle of M relative to L)
    assert _angle(placed_fit, 0, 2) is None  # fused L|M was not measured by anyone


def test_nothing_is_borrowed_from_pairs_the_views_disagree_on_or_nobody_measured(
    fit_with: Callable[..., GeometryFit],
) -> None:
    model = puzzle_model("222")
    fit = fit_with("222", 0, {(1, 0): None})
    assert borrowed_angles(model, fit, np.eye(3), []) is None
    disputed = [FusedPair("y", (0, 1), 10.0, 1.0, 2, consistent=False)]
    assert borrowed_angles(model, fit, np.eye(3), disputed) is None


def test_a_layer_only_one_camera_measures_is_read_in_the_other_too(corpus_dir: Path) -> None:
    """c0099: a 2x2x2 with its right half turned 43.6 degrees; cam1 outlines none of the turned
    half's stickers (dark red, in shade), cam0 measures the pair. The second look samples the
    turned half's facelets in cam1, and they read their true colours."""
    truth = json.loads((corpus_dir / "c0099.json").read_text(encoding="utf-8"))
    model = puzzle_model("222")
    views = [
        analyse_view(
            cv2.imread(str(corpus_dir / view["image"])),
            model,
            intrinsics_from_truth(view),
            view["image"],
        )
        for view in truth["views"]
    ]
    poses = [np.asarray(view["world_from_camera"]) for view in truth["views"]]
    result = judge_views(views, "222", None, None, poses)
    assert result.fusion is not None
    before = {sample.facelet for sample in views[1].projected}
    after = {sample.facelet for sample in result.views[1].projected}
    added = after - before
    assert len(added) >= 2
    assert any("placed by the other views' angles" in note for note in result.views[1].notes)
    assert not any("none is seen" in problem for problem in result.views[1].problems)
    alignment = truth_alignment(result, truth, model)
    assert alignment is not None
    permutation = alignment[1]
    view_permutation = result.fusion.permutations[1]
    assert view_permutation is not None
    labels = result.fusion.observation.facelets
    colours = truth["state_colors"]
    # The partition of colours agrees with the truth wherever the added facelets are read.
    read = [int(view_permutation[facelet]) for facelet in added]
    assert all(labels[facelet] not in ("unknown", "missing") for facelet in read)
    for first in read:
        for second in range(model.facelet_count):
            if labels[first] in ("unknown", "missing") or labels[second] in ("unknown", "missing"):
                continue
            same_truth = colours[int(permutation[first])] == colours[int(permutation[second])]
            assert (labels[first] == labels[second]) == same_truth, (first, second)


def _projected(facelet: int, facing: float) -> ProjectedFacelet:
    square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    return ProjectedFacelet(facelet, Facelet(square, np.zeros(3), 1.0, 100, 1.0), facing, 1.0)


def _fit_measuring(axes: int, measured: dict[int, list[bool]]) -> GeometryFit:
    """A fit of a 3x3x3 whose parts' angles are measured (0 degrees) where `measured` says."""
    angles = tuple(
        tuple(PartAngle(0.0, 0.5, 4) if seen else None for seen in measured.get(axis, [True] * 3))
        for axis in range(axes)
    )
    return GeometryFit(
        True, np.zeros(3), np.ones(3), np.zeros(0, np.int64), angles, (), 0, 1.0, 1.0, 1.0, ()
    )


def test_a_borrowed_slice_is_contradicted_where_the_view_sees_none_of_its_stickers() -> None:
    model = puzzle_model("333")
    axis = 1
    middle = [int(f) for f in np.nonzero(model.axes[axis].facelet_part == 1)[0]]
    by_face: dict[int, list[int]] = {}
    for facelet in middle:
        by_face.setdefault(int(model.facelet_face[facelet]), []).append(facelet)
    first, second = list(by_face.values())[:2]
    refused = frozenset([*first[:2], second[0]])  # two faces, as a camera sees a layer
    assert len(refused) == MIN_REFUSED_CELLS
    placed = frozenset({(axis, 1)})
    # The view measured the layers on either side of the slice, not the slice.
    fit = _fit_measuring(len(model.axes), {axis: [True, False, True]})
    found = contradicted_parts(model, fit, Projection((), refused), placed)
    assert found == [(axis, 1, MIN_REFUSED_CELLS)]
    # One sticker seen plainly on the slice confirms the angle; one seen at a grazing angle
    # does not; fewer cells, or one face's row alone (a row in a shadow), say nothing.
    seen = Projection((_projected(second[1], CLEAR_FACING),), refused)
    assert contradicted_parts(model, fit, seen, placed) == []
    grazing = Projection((_projected(second[1], CLEAR_FACING / 2),), refused)
    assert contradicted_parts(model, fit, grazing, placed) == [(axis, 1, MIN_REFUSED_CELLS)]
    fewer = Projection((), frozenset([first[0], second[0]]))
    assert contradicted_parts(model, fit, fewer, placed) == []
    one_row = Projection((), frozenset(first))
    assert len(first) >= MIN_REFUSED_CELLS
    assert contradicted_parts(model, fit, one_row, placed) == []
    # A neighbouring layer not seen here either: something may cover that side of the puzzle.
    covered = _fit_measuring(len(model.axes), {axis: [False, False, True]})
    assert contradicted_parts(model, covered, Projection((), refused), placed) == []
    # An outer layer is never asked (a hand or its shadow covers it whole).
    outer = [int(f) for f in np.nonzero(model.axes[axis].facelet_part == 0)[0]]
    outer_fit = _fit_measuring(len(model.axes), {axis: [False, True, True]})
    outer_refused = Projection((), frozenset(outer))
    assert contradicted_parts(model, outer_fit, outer_refused, frozenset({(axis, 0)})) == []


def test_a_borrowed_angle_no_sticker_confirms_sends_the_capture_to_a_judge(
    corpus_dir: Path,
) -> None:
    """c0006 (solved, its middle slice 37 degrees out) through a lens a little out of focus:
    cam0 measures the slice at about -15 degrees, cam1 measures the layers either side but
    outlines none of the slice's stickers and, placed at cam0's angle, finds none in the six
    cells facing it. The colours read at that angle made a DNF; now a judge looks."""
    truth = json.loads((corpus_dir / "c0006.json").read_text(encoding="utf-8"))
    assert truth["verdict"] == "solved"
    model = puzzle_model("333")
    views = [
        analyse_view(
            perturbed(cv2.imread(str(corpus_dir / view["image"])), "defocus", view["image"]),
            model,
            intrinsics_from_truth(view),
            view["image"],
        )
        for view in truth["views"]
    ]
    poses = [np.asarray(view["world_from_camera"]) for view in truth["views"]]
    result = judge_views(views, "333", None, None, poses)
    assert result.verdict == "review"
    assert any("none is seen" in reason for reason in result.review_because)
