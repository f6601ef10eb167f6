"""Views that snap a pair a step apart at the limit are relabelled to the most certain view's
snap where the colours agree (`vision/resnap.py`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from judgecam.vision.fuse import FusedPair, ViewEvidence
from judgecam.vision.geometry import GeometryFit, PairAngle, PartAngle
from judgecam.vision.model import rotation_about
from judgecam.vision.resnap import _moves, _relabelled, resnapped_views

from .penalty_cases import MODEL, SPEC, fusion_of, turned_r


def _fit(assignment: list[int], u_angle: float, sigma: float = 0.4) -> GeometryFit:
    """A 3x3x3 view whose y axis has D and E in line and U at `u_angle`."""
    part = PartAngle(0.0, sigma, 9)
    return GeometryFit(
        found=True,
        rvec=np.zeros(3),
        tvec=np.array([0.0, 0.0, 300.0]),
        assignment=np.array(assignment, dtype=np.int64),
        part_angles=((), (part, part, PartAngle(u_angle, sigma, 9)), ()),
        pairs=(
            PairAngle("y", ("D", "E"), 0.0, sigma, 9),
            PairAngle("y", ("E", "U"), u_angle, sigma, 9),
        ),
        active_axis=1,
        reprojection_px=0.5,
        inlier_fraction=1.0,
        confidence=1.0,
        problems=(),
    )


def _y_axis():
    return next(a for a in MODEL.axes if a.name == "y")


def test_a_relabelled_layer_moves_its_stickers_a_step_and_its_pair_by_a_step() -> None:
    axis = _y_axis()
    placed = list(range(MODEL.facelet_count))
    view = ViewEvidence((), _fit(placed, -45.3))
    upper = _relabelled(MODEL, view, axis, (0, 0, -1))
    turn = MODEL.facelet_permutation(rotation_about(axis.direction, -axis.step_deg))
    on_u = axis.facelet_part == 2
    assert np.array_equal(upper.fit.assignment[on_u], turn[np.flatnonzero(on_u)])
    assert np.array_equal(upper.fit.assignment[~on_u], np.flatnonzero(~on_u))
    pairs = {pair.parts: pair.angle_deg for pair in upper.fit.pairs}
    assert pairs[("E", "U")] == 44.7 and pairs[("D", "E")] == 0.0
    assert upper.fit.part_angles[1][2].angle_deg == 44.7
    # The other side moved instead: D and E a step the other way, the same pair angle.
    lower = _relabelled(MODEL, view, axis, (1, 1, 0))
    assert {p.parts: p.angle_deg for p in lower.fit.pairs}[("E", "U")] == 44.7
    assert lower.fit.part_angles[1][0].angle_deg == -90.0
    assert np.array_equal(lower.fit.assignment[on_u], np.flatnonzero(on_u))


def test_a_slice_relabelled_alone_moves_both_of_its_pairs() -> None:
    """A middle slice at the limit is two pairs a step apart, one each way: keeping either
    outer layer moves the slice alone; keeping the slice moves both outer layers."""
    assert _moves(3, {0: 1, 1: -1}, kept=0) == (0, 1, 0) == _moves(3, {0: 1, 1: -1}, kept=2)
    assert _moves(3, {0: 1, 1: -1}, kept=1) == (-1, 0, -1)
    assert _moves(3, {1: -1}, kept=0) == (0, 0, -1) and _moves(3, {1: -1}, kept=2) == (1, 1, 0)
    # This view reads the slice a step off the other's +44.6 / -44.8: relabelled, it agrees.
    axis = _y_axis()
    fit = replace(
        _fit(list(range(MODEL.facelet_count)), -45.2),
        pairs=(PairAngle("y", ("D", "E"), -45.4, 0.4, 9), PairAngle("y", ("E", "U"), 45.2, 0.4, 9)),
    )
    moves = _moves(3, {0: -1, 1: 1}, kept=0)
    assert moves == (0, -1, 0)
    slice_moved = _relabelled(MODEL, ViewEvidence((), fit), axis, moves)
    pairs = {pair.parts: round(pair.angle_deg, 1) for pair in slice_moved.fit.pairs}
    assert pairs == {("D", "E"): 44.6, ("E", "U"): -44.8}
    on_e = axis.facelet_part == 1
    turn = MODEL.facelet_permutation(rotation_about(axis.direction, -axis.step_deg))
    assert np.array_equal(slice_moved.fit.assignment[on_e], turn[np.flatnonzero(on_e)])
    assert np.array_equal(slice_moved.fit.assignment[~on_e], np.flatnonzero(~on_e))


def _views_at_the_limit() -> tuple[list[ViewEvidence | None], object]:
    placed = list(range(MODEL.facelet_count))
    certain = ViewEvidence((), _fit(placed, 44.7, sigma=0.2))
    other = ViewEvidence((), _fit(placed, -45.3, sigma=0.5))
    fusion = replace(
        fusion_of(SPEC.solved_state().colors, 2),
        pairs=(FusedPair("y", (1, 2), 44.9, 1.0, 2, False, True),),
        rotations=(np.eye(3), np.eye(3)),
        contradicted=6,
    )
    return [certain, other], fusion


def test_views_snapped_apart_are_relabelled_where_the_colours_then_agree() -> None:
    views, fusion = _views_at_the_limit()
    tried = []

    def fuse(some):
        tried.append(some)
        # Only the turned layer relabelled makes the colours agree.
        moved_u = not np.array_equal(some[1].fit.assignment, views[1].fit.assignment) and (
            some[1].fit.part_angles[1][0].angle_deg == 0.0
        )
        return replace(fusion, pairs=(), contradicted=0 if moved_u else 6)

    found = resnapped_views(MODEL, views, fusion, fuse)
    assert found is not None and len(tried) == 2
    relabelled, fused, note = found
    assert relabelled[0] is views[0] and fused.contradicted == 0
    assert {p.parts: p.angle_deg for p in relabelled[1].fit.pairs}[("E", "U")] == 44.7
    assert "snapping boundary" in note


def test_nothing_changes_where_the_colours_cannot_say_which_side_moved() -> None:
    views, fusion = _views_at_the_limit()
    solved = replace(fusion, pairs=(), contradicted=0)
    turned_colors, _ = turned_r()
    turned = replace(fusion_of(turned_colors, 2), pairs=(), rotations=fusion.rotations)
    # Both sides fit the colours alike and read different puzzles: which moved decides.
    sides = iter([solved, turned])
    assert resnapped_views(MODEL, views, fusion, lambda s: next(sides)) is None
    worse = replace(fusion, pairs=(), contradicted=9)
    assert resnapped_views(MODEL, views, fusion, lambda s: worse) is None
    in_line = replace(fusion, pairs=(FusedPair("y", (1, 2), 0.2, 1.0, 2),))
    assert resnapped_views(MODEL, views, in_line, lambda s: in_line) is None


def test_either_side_is_taken_where_both_read_one_puzzle() -> None:
    """Without rig poses the views' alignment absorbs a turn of the whole puzzle, so moving
    either side of the pair can fit the colours alike (corpus c0005 as plain `check`, a DNF
    either way): two readings of one puzzle, turned. Then it does not matter which moved."""
    views, fusion = _views_at_the_limit()
    turned_colors, _ = turned_r()
    quarter = next(s for s in MODEL.symmetries if np.isclose(np.trace(s), 1.0))
    moved = MODEL.facelet_permutation(quarter)
    whole_turn = [""] * len(turned_colors)
    for facelet, to in enumerate(moved):
        whole_turn[to] = turned_colors[facelet]
    readings = iter(
        [
            replace(fusion_of(turned_colors, 2), pairs=(), rotations=fusion.rotations),
            replace(fusion_of(tuple(whole_turn), 2), pairs=(), rotations=fusion.rotations),
        ]
    )
    found = resnapped_views(MODEL, views, fusion, lambda s: next(readings))
    assert found is not None and found[1].verdict.verdict == "+2"


def test_a_dnf_whose_cameras_snap_a_layer_apart_at_the_limit_is_judged(corpus_dir: Path) -> None:
    """c0005, a 3x3x3 DNF with a layer at 44.1 degrees: its cameras read it at -44.9 and +44.0.
    Relabelled, every sticker is on its true cell and the DNF is given."""
    import json

    import cv2

    from judgecam.vision.evaluate import intrinsics_from_truth, score_capture
    from judgecam.vision.pipeline import analyse_view, judge_views

    truth = json.loads((corpus_dir / "c0005.json").read_text(encoding="utf-8"))
    views = [
        analyse_view(
            cv2.imread(str(corpus_dir / v["image"])), MODEL, intrinsics_from_truth(v), v["image"]
        )
        for v in truth["views"]
    ]
    poses = [np.asarray(v["world_from_camera"], dtype=np.float64) for v in truth["views"]]
    result = judge_views(views, "333", None, None, poses)
    assert truth["verdict"] == "DNF" and result.verdict == "DNF"
    assert any("snapping boundary" in reason for reason in result.reasons)
    assert result.fusion is not None and not any(p.snapped_apart for p in result.fusion.pairs)
    # As plain `check` (no rig poses) both sides read the one puzzle, turned: the DNF too.
    as_check = judge_views(views, "333")
    assert as_check.verdict == "DNF"
    assert any("snapping boundary" in reason for reason in as_check.reasons)
    score = score_capture(result, truth, MODEL)
    assert score.assigned >= 35 and score.assigned_right == score.assigned
