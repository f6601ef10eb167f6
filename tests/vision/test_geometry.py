"""Stage 3 on synthetic views with known answers: facelet placement and pair angles."""

from __future__ import annotations

import json
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from judgecam.vision.camera import Intrinsics, project, rotation_matrix
from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth
from judgecam.vision.fuse import _map_pair, stated_uncertainty
from judgecam.vision.geometry import (
    PartAngle,
    _drop_unmeasured_placements,
    _facing,
    _image_fraction,
    _pairs,
    _references,
    _snap_pairs_consistently,
    _sticker_corners,
    fit_geometry,
)
from judgecam.vision.locate import find_puzzles
from judgecam.vision.model import puzzle_model, rotation_about
from judgecam.vision.pipeline import analyse_view
from judgecam.vision.segment import Facelet, segment_facelets
from judgecam.vision.synthetic import Turn, look_at, render_view, solved_colors


def _truth_alignment(model, fit, facelets, view):
    """Best symmetry taking the fit's frame onto the rendering frame, and its agreement."""
    visible = np.nonzero(view.visible)[0]
    truth = []
    for facelet in facelets:
        gaps = np.linalg.norm(view.centers_px[visible] - facelet.center_px, axis=1)
        truth.append(int(visible[np.argmin(gaps)]) if gaps.min() < 0.5 * facelet.size_px else -1)
    truth = np.array(truth)
    assigned = fit.assignment >= 0
    best = max(
        model.symmetries,
        key=lambda r: int(
            np.sum(model.facelet_permutation(r)[fit.assignment[assigned]] == truth[assigned])
        ),
    )
    right = int(
        np.sum(model.facelet_permutation(best)[fit.assignment[assigned]] == truth[assigned])
    )
    return best, right, int(assigned.sum())


CASES = [
    # puzzle, eye (mm), axis, part angles (deg)
    ("333", (210.0, 190.0, 230.0), 1, (0.0, 0.0, 20.0)),
    ("333", (-230.0, 200.0, 180.0), 0, (-33.0, 0.0, 0.0)),
    ("333", (200.0, 220.0, -210.0), 2, (0.0, 12.0, 0.0)),
    ("333", (220.0, 180.0, 220.0), 1, (0.0, 0.0, 0.0)),
    ("222", (190.0, 200.0, 210.0), 1, (0.0, -25.0)),
    ("222", (-200.0, 210.0, -190.0), 2, (8.0, 0.0)),
]


@pytest.mark.parametrize(("puzzle", "eye", "axis", "angles"), CASES)
def test_fit_places_facelets_and_measures_pairs(puzzle, eye, axis, angles) -> None:
    model = puzzle_model(puzzle)
    view = render_view(model, solved_colors(model), eye, turn=Turn(axis, angles), seed=3)
    search = find_puzzles(view.image)
    assert search.usable and len(search.candidates) >= 1
    segmentation = segment_facelets(view.image, search.candidates[0])
    fit = fit_geometry(segmentation.facelets, model, Intrinsics(view.camera_matrix, np.zeros(5)))
    assert fit.found
    rotation, right, assigned = _truth_alignment(model, fit, segmentation.facelets, view)
    assert assigned >= 0.55 * int(view.visible.sum())
    assert right == assigned
    truth_axis = model.axes[axis]
    measured = 0
    for pair in fit.pairs:
        fit_axis = next(a for a in model.axes if a.name == pair.axis)
        parts = (fit_axis.part_names.index(pair.parts[0]), fit_axis.part_names.index(pair.parts[1]))
        name, truth_parts = _map_pair(model, rotation, pair.axis, parts)
        expected = 0.0
        if name == truth_axis.name:
            expected = angles[truth_parts[1]] - angles[truth_parts[0]]
        error = (pair.angle_deg - expected + 45.0) % 90.0 - 45.0
        assert abs(error) <= stated_uncertainty(pair.sigma_deg), (pair, expected)
        assert abs(error) < 2.0, (pair, expected)
        measured += 1
    assert measured >= len(model.axes) * (len(truth_axis.part_names) - 1) - 2


def test_too_few_patches_is_not_a_puzzle() -> None:
    model = puzzle_model("333")
    fit = fit_geometry((), model, Intrinsics(np.eye(3) * 500 + np.diag([0, 0, -499]), np.zeros(5)))
    assert not fit.found
    assert fit.problems


def test_symmetries_and_rotation_helper() -> None:
    assert len(puzzle_model("333").symmetries) == 24
    assert len(puzzle_model("222").symmetries) == 24
    np.testing.assert_allclose(
        rotation_about(np.array([0.0, 0.0, 1.0]), 90.0) @ [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        atol=1e-12,
    )


def test_rotation_about_matches_opencv_rodrigues() -> None:
    """The scalar Rodrigues formula (written out for speed) against OpenCV's, unnormalised axes."""
    import cv2

    rng = np.random.default_rng(4)
    for _ in range(20):
        axis = rng.normal(size=3) * 3.0
        angle = float(rng.uniform(-200.0, 200.0))
        expected, _ = cv2.Rodrigues(axis / np.linalg.norm(axis) * np.deg2rad(angle))
        np.testing.assert_allclose(rotation_about(axis, angle), expected, atol=1e-12)


def test_parts_snapped_apart_are_resnapped_so_each_pair_keeps_its_colours() -> None:
    """Two parts at +23 and -22.5 degrees from the body each snap to 0, but they are 45.5
    degrees apart: the pair is reported as +44.5 (within half a step), so the lower part's
    facelets must be the ones a quarter turn on."""
    model = puzzle_model("333")
    axis = model.axes[1]  # y: D, E, U
    angles: list[PartAngle | None] = [
        PartAngle(23.0, 0.3, 8),
        PartAngle(-22.5, 0.3, 8),
        PartAngle(-22.5, 0.3, 9),
    ]
    d_facelets = np.nonzero(axis.facelet_part == 0)[0][:4]
    e_facelets = np.nonzero(axis.facelet_part == 1)[0][:4]
    assignment = np.concatenate([d_facelets, e_facelets, [-1]]).astype(np.int64)
    before = assignment.copy()
    _snap_pairs_consistently(model, axis, angles, assignment)
    quarter = model.facelet_permutation(rotation_about(axis.direction, 90.0))
    np.testing.assert_array_equal(assignment[:4], quarter[before[:4]])
    np.testing.assert_array_equal(assignment[4:], before[4:])
    assert angles[0] is not None and angles[0].angle_deg == pytest.approx(-67.0)
    unmeasured: list[PartAngle | None] = [None, None, None]
    pair = next(p for p in _pairs(model, [unmeasured, angles, unmeasured]) if p.parts == ("D", "E"))
    assert pair.angle_deg == pytest.approx(44.5)
    # Parts within half a step of each other are left alone.
    calm: list[PartAngle | None] = [
        PartAngle(10.0, 0.3, 8),
        PartAngle(-20.0, 0.3, 8),
        PartAngle(0.0, 0.3, 9),
    ]
    untouched = before.copy()
    _snap_pairs_consistently(model, axis, calm, untouched)
    np.testing.assert_array_equal(untouched, before)


def test_the_reference_part_stays_within_half_a_step_of_the_body() -> None:
    """A re-snapped part (67.5 = -22.5 + a step) orients the other axes' measurement as -22.5
    does: the same shape, and the other axes keep their names."""
    model = puzzle_model("333")
    problem = SimpleNamespace(model=model)
    angles: list[PartAngle | None] = [PartAngle(67.5, 0.3, 9), PartAngle(23.0, 0.3, 8), None]
    assignment = np.array([-1], dtype=np.int64)
    first, second = _references(problem, 1, angles, assignment)  # type: ignore[arg-type]
    assert first.angle_deg == pytest.approx(-22.5)
    # The other axes are judged on the facelets of the parts in line with it: part 0 only.
    np.testing.assert_array_equal(first.eligible, model.axes[1].facelet_part == 0)
    # The other group (part 1, at 23 degrees) is the second candidate.
    assert second.angle_deg == pytest.approx(23.0)
    np.testing.assert_array_equal(second.eligible, model.axes[1].facelet_part == 1)


def _square_facelet(center: tuple[float, float], size: float) -> Facelet:
    x, y = center
    half = size / 2.0
    corners = np.array(
        [[x - half, y - half], [x + half, y - half], [x + half, y + half], [x - half, y + half]]
    )
    return Facelet(corners, np.array([200.0, 200.0, 200.0]), 1.0, int(size * size), 1.0)


def test_clutter_of_another_size_does_not_count_against_the_fit() -> None:
    """A robot or a timer beside the puzzle has sticker-like patches of other sizes: they must
    not make a good fit look loose (real photos in `test_real_photos.py`); unexplained patches
    of the stickers' own size still do."""
    model = puzzle_model("333")
    view = render_view(model, solved_colors(model), (210.0, 190.0, 230.0), seed=3)
    segmentation = segment_facelets(view.image, find_puzzles(view.image).candidates[0])
    intrinsics = Intrinsics(view.camera_matrix, np.zeros(5))
    clean = fit_geometry(segmentation.facelets, model, intrinsics)
    sticker = float(np.median([f.size_px for f in segmentation.facelets]))
    corners = [(30.0 + 40.0 * k, 30.0) for k in range(8)]  # far from the puzzle, top left
    small = tuple(_square_facelet(c, 0.3 * sticker) for c in corners)
    cluttered = fit_geometry(segmentation.facelets + small, model, intrinsics)
    assert cluttered.found and clean.found
    assert cluttered.inlier_fraction == pytest.approx(clean.inlier_fraction)
    # The same placement, up to the puzzle's symmetry (a solved cube fits in any of its frames).
    placed = cluttered.assignment[: len(segmentation.facelets)]
    assert np.all((placed >= 0) == (clean.assignment >= 0))
    assert any(
        np.array_equal(
            model.facelet_permutation(rotation)[placed[placed >= 0]],
            clean.assignment[clean.assignment >= 0],
        )
        for rotation in model.symmetries
    )
    spaced = [(60.0 + 1.5 * sticker * k, 60.0) for k in range(8)]
    alike = tuple(_square_facelet(c, sticker) for c in spaced)
    unexplained = fit_geometry(segmentation.facelets + alike, model, intrinsics)
    assert unexplained.inlier_fraction < 0.8 * clean.inlier_fraction


def test_a_clearly_shown_part_that_mostly_does_not_match_places_none_of_its_stickers() -> None:
    """c0046 at 0.75x: a layer turned 43 degrees, unmeasured in one view, whose one outlined
    sticker matched the aligned layer's cell and read yellow where the cell is blue (a +2 read
    DNF). A part that shows clearly but mostly does not match may be turned: none of its
    stickers is placed. A part that shows little keeps what matched."""
    model = puzzle_model("333")
    eye = np.array([210.0, 190.0, 230.0])
    rvec, tvec = look_at(eye, np.zeros(3), np.array([0.0, 1.0, 0.0]))
    problem = SimpleNamespace(model=model)
    rotation = rotation_matrix(rvec)
    measured = [PartAngle(0.0, 0.3, 8), PartAngle(0.2, 0.3, 8), PartAngle(-0.1, 0.3, 8)]
    y_axis = model.axes[1]
    up = y_axis.part_names.index("U")
    top = np.nonzero((y_axis.facelet_part == up) & (model.facelet_face == 0))[0]
    others = np.nonzero(y_axis.facelet_part != up)[0][:3]
    assignment = np.concatenate([top[:1], others, [-1]]).astype(np.int64)
    unmeasured_top: list[PartAngle | None] = [*measured]
    unmeasured_top[up] = None
    x_active = 0
    angles = [measured, unmeasured_top, measured]
    dropped = _drop_unmeasured_placements(problem, rotation, tvec, x_active, angles, assignment)
    np.testing.assert_array_equal(dropped[:1], [-1])  # 1 of its ~15 clear cells matched
    np.testing.assert_array_equal(dropped[1:], assignment[1:])
    kept = _drop_unmeasured_placements(
        problem, rotation, tvec, x_active, [measured, measured, measured], assignment
    )
    np.testing.assert_array_equal(kept, assignment)
    # Most of the part's clear cells matched: its stickers stay placed even unmeasured.
    covered = np.nonzero(y_axis.facelet_part == up)[0]
    mostly = np.concatenate([covered, others]).astype(np.int64)
    assert np.array_equal(
        _drop_unmeasured_placements(problem, rotation, tvec, x_active, angles, mostly), mostly
    )


def _shown_stickers(
    puzzle: str, eye: tuple[float, float, float], fraction: float
) -> tuple[np.ndarray, np.ndarray]:
    """Projected corners (N, K, 2) and sizes (px) of the stickers of `puzzle`, `fraction` of
    their cells, that face a camera at `eye` looking at the puzzle's centre."""
    model = puzzle_model(puzzle)
    rvec, tvec = look_at(np.array(eye), np.zeros(3), np.array([0.0, 1.0, 0.0]))
    rotation = rotation_matrix(rvec)
    matrix = np.array([[1000.0, 0.0, 640.0], [0.0, 1000.0, 360.0], [0.0, 0.0, 1.0]])
    shown = _facing(model.facelet_normals, model.facelet_centers, rotation, tvec)
    corners = project(_sticker_corners(model, fraction)[shown], rotation, tvec, matrix)
    sizes = np.sqrt([abs(cv2.contourArea(c.astype(np.float32))) for c in corners])
    return corners, sizes


@pytest.mark.parametrize("eye", [(0.0, 60.0, 320.0), (250.0, 150.0, 200.0), (-80.0, -260.0, 240.0)])
@pytest.mark.parametrize("fraction", [0.62, 0.76, 0.9])
def test_sticker_fraction_is_read_from_neighbouring_triangles(eye, fraction) -> None:
    """Pyraminx: the stickers' size relative to their cells is read off the image (where the
    lines from neighbouring triangles' centres through their corners meet), from any view; a
    too large guess put single-triangle poses too far away (turned-layer views not found)."""
    corners, sizes = _shown_stickers("pyram", eye, fraction)
    seen = _image_fraction(corners, corners.mean(axis=1), sizes)
    assert seen == pytest.approx(fraction, abs=0.02)
    # Triangles too far apart to be neighbours tell nothing.
    assert _image_fraction(corners[:1], corners[:1].mean(axis=1), sizes[:1]) is None


@pytest.mark.parametrize("puzzle", ["333", "222"])
@pytest.mark.parametrize("eye", [(0.0, 60.0, 320.0), (250.0, 150.0, 200.0), (-80.0, -260.0, 240.0)])
@pytest.mark.parametrize("fraction", [0.72, 0.8, 0.9])
def test_sticker_fraction_is_read_from_neighbouring_squares(puzzle, eye, fraction) -> None:
    """Cubes: the lines from two neighbouring squares' centres through the corners of their
    shared side meet at the shared cell corners, as with triangles (detected stickers are
    about 0.78 of the cell against the starting guess's 0.86)."""
    corners, sizes = _shown_stickers(puzzle, eye, fraction)
    seen = _image_fraction(corners, corners.mean(axis=1), sizes)
    assert seen == pytest.approx(fraction, abs=0.02)


@pytest.mark.parametrize(
    ("capture", "camera", "turned_deg", "placed"),
    [
        ("c0026", "cam1", 32.3, 17),  # y:E|U turned 32.3 degrees
        ("c0140", "cam0", 42.9, 22),  # x:L|M turned 42.9 degrees
    ],
)
def test_the_turned_axis_is_chosen_by_the_stickers_it_places_tightly(
    corpus_dir, capture: str, camera: str, turned_deg: float, placed: int
) -> None:
    """Corpus views with a layer turned 30-45 degrees: an axis left in line placed the turned
    layer's stickers loosely, each between two cells, and the median error of the rest hid them
    (c0026 cam1: 14 placed at 4.97 px against 17 at 2.73 px with the turned axis). The axis that
    places the most stickers within 0.15 of their size is taken; its fit measures the turn."""
    truth = json.loads((corpus_dir / f"{capture}.json").read_text())
    view = next(v for v in truth["views"] if v["camera"] == camera)
    image = cv2.imread(str(corpus_dir / view["image"]))
    model = puzzle_model(truth["puzzle"])
    result = analyse_view(image, model, intrinsics_from_truth(view), view["image"])
    fit = result.fit
    assert fit is not None and fit.found and result.segmentation is not None
    assert int((fit.assignment >= 0).sum()) >= placed
    sizes = [
        f.size_px
        for f, a in zip(result.segmentation.facelets, fit.assignment, strict=True)
        if a >= 0
    ]
    assert fit.reprojection_px <= 0.1 * float(np.median(sizes))
    # Every placed sticker lies on a sticker of the truth, and the turn is measured.
    true_centers = np.array([f["center_px"] for f in view["facelets"]])
    for facelet, assigned in zip(result.segmentation.facelets, fit.assignment, strict=True):
        if assigned >= 0:
            gaps = np.linalg.norm(true_centers - facelet.center_px, axis=1)
            assert gaps.min() < 0.3 * facelet.size_px
    assert any(abs(abs(pair.angle_deg) - turned_deg) < 2.0 for pair in fit.pairs)


def _scored_view(corpus_dir, capture: str, index: int):
    """Stages 1-3 on one corpus view, scored against its truth (`evaluate_view`)."""
    truth = json.loads((corpus_dir / f"{capture}.json").read_text())
    view = truth["views"][index]
    image = cv2.imread(str(corpus_dir / view["image"]))
    model = puzzle_model(truth["puzzle"])
    result = analyse_view(image, model, intrinsics_from_truth(view), view["image"])
    assert result.fit is not None and result.fit.found
    return evaluate_view(result, view, truth, model)


def test_other_axes_are_judged_only_on_the_facelets_they_were_measured_on(corpus_dir) -> None:
    """c0137 cam1: a stickerless 3x3x3, one layer turned 19.6 degrees, a side face in shade
    whose stickers are barely outlined. The other axes are measured only on the stickers in
    line with the active axis's best-seen part; their parts were nevertheless expected to
    match half of every clear cell of the whole puzzle (the shaded face's included), were left
    unmeasured, and their stickers unplaced: 3 of 13 left, "no puzzle found". Only cells on
    the parts they were measured on count now."""
    score = _scored_view(corpus_dir, "c0137", 1)
    assert score.placed >= 12
    assert score.placed_right == score.placed
    assert score.angle_errors and max(abs(e) for e in score.angle_errors) < 1.5


def test_the_other_axes_are_measured_on_the_group_of_parts_that_shows_them(corpus_dir) -> None:
    """c0072 cam1: a Pyraminx whose U layer and tip are turned 36 degrees together. The turned
    group carries the most stickers seen, so the other axes were measured on it alone; but
    their tips lie on the U base, and the L and R tips went unmeasured ("could be on either
    side of the 60 degree limit": review for a solved puzzle). Each group in line is tried;
    the one on which the other axes measure the most pairs is kept."""
    score = _scored_view(corpus_dir, "c0072", 1)
    assert score.placed_right == score.placed >= 12
    # The turn (37.4 against 35.9) and both pairs of two other axes: 6 pairs, 3 before. The
    # other axes' base|layer pairs rest on two stickers each and are off by 4.5 and 5.0
    # degrees (3.6 and 3.1 before session 35's outlines on the edges), inside their stated
    # uncertainties (10.7 and 8.0).
    assert len(score.angle_errors) >= 6
    assert max(abs(e) for e in score.angle_errors) < 5.5
    assert all(score.covered)


def test_the_number_of_body_poses_does_not_depend_on_the_last_solver_call(
    corpus_dir, monkeypatch
) -> None:
    """`_body_poses(count=2)` returned as many poses as the last perspective-3-point call had
    solutions (the solver's count took the parameter's name): 2 for squares (IPPE always gives
    two), 0 to 4 for triangles, and none at all when a Pyraminx's last seed had no solution,
    which left the view with "facelets do not fit the puzzle's shape"."""
    from judgecam.vision import geometry

    truth = json.loads((corpus_dir / "c0072.json").read_text())
    view = truth["views"][1]
    image = cv2.imread(str(corpus_dir / view["image"]))
    model = puzzle_model(truth["puzzle"])
    search = find_puzzles(image, sides=3)
    segmentation = segment_facelets(image, search.candidates[0], sides=3)
    intrinsics = intrinsics_from_truth(view)
    calls: list[int] = []
    solve = cv2.solveP3P

    def counting(*args, **kwargs):
        calls.append(1)
        return solve(*args, **kwargs)

    monkeypatch.setattr(geometry.cv2, "solveP3P", counting)
    assert fit_geometry(segmentation.facelets, model, intrinsics).found
    last = len(calls)
    calls.clear()

    def last_without_solution(*args, **kwargs):
        calls.append(1)
        found = solve(*args, **kwargs)
        return (0, (), ()) if len(calls) == last else found

    monkeypatch.setattr(geometry.cv2, "solveP3P", last_without_solution)
    fit = fit_geometry(segmentation.facelets, model, intrinsics)
    assert len(calls) == last
    assert fit.found, fit.problems


@pytest.mark.parametrize(("puzzle", "eye", "axis", "angles"), CASES[:3] + CASES[4:5])
def test_a_reference_group_measures_no_more_than_the_skip_bound(
    monkeypatch, puzzle, eye, axis, angles
) -> None:
    """`_measure_other_axes` stops a reference group that cannot beat the best so far by the
    bound `_most_measured`; that is safe only if no group ever measures more than it."""
    import judgecam.vision.geometry as geometry

    model = puzzle_model(puzzle)
    view = render_view(model, solved_colors(model), eye, turn=Turn(axis, angles), seed=3)
    segmentation = segment_facelets(view.image, find_puzzles(view.image).candidates[0])
    measure = geometry._measure_other_axes
    groups: list[tuple[tuple[int, int], tuple[int, int]]] = []

    def recorded(problem, rotation, translation, active_axis, reference, to_beat=None):
        measured = measure(problem, rotation, translation, active_axis, reference)
        assert measured is not None  # nothing to beat: measured in full
        others = [a for a in range(len(model.axes)) if a != active_axis]
        bound = geometry._most_measured(model, others, len(reference.pool))
        groups.append((geometry._measured_well(measured), bound))
        return measure(problem, rotation, translation, active_axis, reference, to_beat)

    monkeypatch.setattr(geometry, "_measure_other_axes", recorded)
    fit = fit_geometry(segmentation.facelets, model, Intrinsics(view.camera_matrix, np.zeros(5)))
    assert fit.found and groups
    assert max(facelets for (_, facelets), _ in groups) > 0
    for (pairs, facelets), (most_pairs, most_facelets) in groups:
        assert pairs <= most_pairs and facelets <= most_facelets


@pytest.mark.parametrize(
    ("capture", "view_index", "worst_error"), [("c0115", 1, 12.5), ("c0118", 0, 6.0)]
)
def test_a_part_whose_stickers_are_all_unplaced_is_not_measured(
    corpus_dir, capture: str, view_index: int, worst_error: float
) -> None:
    """c0115 cam1 (a Pyraminx, a layer turned 58.5 degrees) measured a tip at -15.6 degrees on
    its one sticker, which the checks after the fit then unplaced as doubtful: the tip is
    aligned. c0118's top view measured a layer 30 degrees off on a base none of whose stickers
    stayed placed. An angle on stickers the fit does not keep is not reported: every pair left
    has a placed sticker on both of its parts. The worst pair left in c0115 cam1 is another
    tip, measured at 0.1 degrees on a sticker outlined where the truth has it, truly -11.9:
    not this check's to catch."""
    truth = json.loads((corpus_dir / f"{capture}.json").read_text(encoding="utf-8"))
    view_truth = truth["views"][view_index]
    model = puzzle_model(truth["puzzle"])
    image = cv2.imread(str(corpus_dir / view_truth["image"]))
    view = analyse_view(image, model, intrinsics_from_truth(view_truth), view_truth["image"])
    assert view.fit is not None and view.fit.found
    placed = view.fit.assignment[view.fit.assignment >= 0]
    for pair in view.fit.pairs:
        axis, parts = model.axis_and_parts(pair.axis, pair.parts)
        assert all(np.any(axis.facelet_part[placed] == part) for part in parts), pair
    score = evaluate_view(view, view_truth, truth, model)
    assert score.angle_errors and max(abs(e) for e in score.angle_errors) < worst_error
