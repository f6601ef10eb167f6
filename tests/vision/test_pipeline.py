"""`check` end to end on synthetic frames: unusable frames give review with a reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from judgecam.puzzle.observation import UNKNOWN, Observation, PairObservation
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.verdict import judge
from judgecam.vision.camera import Intrinsics
from judgecam.vision.color_model import ColorClassification, ColorCluster
from judgecam.vision.color_naming import ARRANGEMENT_DOUBT
from judgecam.vision.fuse import Fusion
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import (
    CheckResult,
    _arrangement_doubt,
    _colors_otherwise_sound,
    _too_close,
    _verdict_without,
    analyse_view,
    check,
)
from judgecam.vision.synthetic import Turn, default_camera, render_view, solved_colors

EYE = (210.0, 190.0, 230.0)


@pytest.fixture(scope="module")
def cube_view():
    model = puzzle_model("333")
    return render_view(model, solved_colors(model), EYE, turn=Turn(1, (0.0, 0.0, 10.0)), seed=5)


def _camera(width: int = 1280, height: int = 720) -> Intrinsics:
    return Intrinsics(default_camera(width, height), np.zeros(5))


def test_clean_view_is_found_without_problems(cube_view) -> None:
    view = analyse_view(cube_view.image, puzzle_model("333"), _camera(), "clean")
    assert view.found
    assert view.problems == ()
    assert {stage for stage, _ in view.timings_ms} >= {"find", "segment", "geometry"}


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        ("empty", lambda image: np.full_like(image, 150), "no puzzle"),
        ("dark", lambda image: (image * 0.05).astype(np.uint8), "too dark"),
        ("blurred", lambda image: cv2.GaussianBlur(image, (0, 0), 9), "blur"),
        (
            "grey-scale",
            lambda image: cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR),
            "image has no colour",
        ),
        (
            "cut",
            lambda image: np.ascontiguousarray(np.roll(image, 560, axis=1)),
            "outside the frame",
        ),
        (
            "two puzzles",
            lambda image: np.hstack([image[:, 320:960], image[:, 320:960]]),
            "more than one puzzle",
        ),
    ],
)
def test_unusable_frames_give_review_with_a_reason(cube_view, name, make, expected) -> None:
    image = make(cube_view.image)
    result = check([(name, image)], "333", [_camera(image.shape[1], image.shape[0])])
    assert result.verdict == "review"
    assert result.moves_from_solved is None
    assert any(expected in reason for reason in result.reasons), result.reasons


def test_tiny_and_odd_images_do_not_crash() -> None:
    for image in (np.zeros((8, 8, 3), np.uint8), np.full((50, 3000, 3), 255, np.uint8)):
        result = check([("odd", image)], "222", [_camera(image.shape[1], image.shape[0])])
        assert result.verdict == "review"


def test_a_cube_is_not_taken_for_a_pyraminx(cube_view) -> None:
    result = check([("view", cube_view.image)], "pyram", [_camera()])
    assert result.verdict == "review"
    assert result.views[0].found is False


def test_bare_body_where_stickers_came_off_is_missing(cube_view) -> None:
    model = puzzle_model("333")
    colors = solved_colors(model)
    eye = np.array(EYE)
    facing = [
        i
        for i in range(model.facelet_count)
        if np.dot(model.facelet_normals[i], eye - model.facelet_centers[i]) > 0
    ]
    off = [facing[0], facing[10]]
    colors[off] = (18, 18, 18)  # the body colour the synthetic renderer uses
    rendered = render_view(model, colors, EYE, seed=5)
    view = analyse_view(rendered.image, model, _camera(), "damaged")
    assert view.found
    assert len(view.missing) == 2
    intact = analyse_view(
        render_view(model, solved_colors(model), EYE, seed=5).image, model, _camera()
    )
    assert intact.missing == ()


def _fusion(colors: tuple[str, ...], reasons: tuple[str, ...] = ()) -> Fusion:
    """A fusion of a fully seen 3x3x3 (only what the verdict checks read is meaningful)."""
    pairs = tuple(
        PairObservation(axis, parts, 0.0, 0.5) for axis in "xyz" for parts in ((0, 1), (1, 2))
    )
    observation = Observation("333", colors, pairs)
    count = len(colors)
    classification = ColorClassification(
        "333", colors, (1.0,) * count, (), reasons, (1.0, 1.0, 1.0)
    )
    verdict = judge(get_puzzle("333"), observation)
    return Fusion(observation, verdict, classification, (), (), (), (), False)


def test_uncertain_facelets_are_judged_by_whether_they_can_change_the_verdict() -> None:
    state = get_puzzle("333").solved_state().apply("R")
    fusion = _fusion(state.colors)
    assert fusion.verdict.verdict == "+2"
    # One facelet: its piece's other stickers fix its colour.
    assert _verdict_without(fusion, [0]) == "+2"
    # The whole D face and the lower rows of every side: two hidden edges could be flipped.
    hidden = [i for i in range(54) if i // 9 == 3 or (i // 9 != 0 and i % 9 >= 6)]
    assert _verdict_without(fusion, hidden) == "review"


def test_a_penalty_in_colours_that_fit_the_scheme_badly_is_flagged() -> None:
    state = get_puzzle("333").solved_state().apply("R")
    doubt = f"{ARRANGEMENT_DOUBT} (mean CIEDE2000 23.3 vs 14.3): a non-standard scheme?"
    assert _arrangement_doubt(_fusion(state.colors, (doubt,)))
    assert not _colors_otherwise_sound(_fusion(state.colors, (doubt,)))
    listed = "low colour confidence: U1 white (or green? confidence 0.11)"
    assert not _arrangement_doubt(_fusion(state.colors, (listed,)))
    assert _colors_otherwise_sound(_fusion(state.colors, (listed,)))


def test_a_timer_beside_the_cube_is_not_a_second_puzzle() -> None:
    """A Stackmat timer's pads next to the cube (rendered, with ground truth): the region around
    them took in stickers of the cube and fitted them as "another puzzle", which threw the view
    away. The view must be read, and read right."""
    import json
    from pathlib import Path

    from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth

    folder = Path(__file__).parent / "data"
    truth = json.loads((folder / "timer-beside-cube.json").read_text(encoding="utf-8"))
    view_truth = truth["views"][0]
    image = cv2.imread(str(folder / view_truth["image"]), cv2.IMREAD_COLOR)
    model = puzzle_model(truth["puzzle"])
    view = analyse_view(image, model, intrinsics_from_truth(view_truth), view_truth["image"])
    assert view.problems == ()
    assert view.found
    score = evaluate_view(view, view_truth, truth, model)
    assert score.placed >= 15
    assert score.placed_right == score.placed
    assert score.angle_errors and max(abs(error) for error in score.angle_errors) < 3.0


def _analysed_views(corpus_dir: Path, capture: str) -> tuple[list[Any], dict[str, Any]]:
    """Stages 1-3 on every view of a corpus capture (true intrinsics), and its truth."""
    import json

    from judgecam.vision.evaluate import intrinsics_from_truth

    truth = json.loads((corpus_dir / f"{capture}.json").read_text(encoding="utf-8"))
    views = [
        analyse_view(
            cv2.imread(str(corpus_dir / view["image"])),
            puzzle_model(truth["puzzle"]),
            intrinsics_from_truth(view),
            view["image"],
        )
        for view in truth["views"]
    ]
    return views, truth


def _take_as_loose(monkeypatch: pytest.MonkeyPatch, view: Any) -> None:
    """Make the pipeline find `view`'s fit loose, its pose not confirmed by a rig (so that the
    view is left out)."""
    from judgecam.vision import pipeline

    loose = pipeline._loose_fit
    monkeypatch.setattr(
        pipeline,
        "_loose_fit",
        lambda fit, segmentation: (
            "the puzzle fits loosely (test)"
            if segmentation is view.segmentation
            else loose(fit, segmentation)
        ),
    )
    monkeypatch.setattr(pipeline, "_agrees_with_rig", lambda *args: False)


def test_a_view_left_out_as_a_loose_fit_cannot_leave_a_penalty_on_one_face(
    corpus_dir, monkeypatch
) -> None:
    """c0008 (a DNF): its first camera's reading is DNF, but with one face's colours unseen the
    rest allows solved, so that camera alone gives review. When the second camera's fit is
    loose, that view is left out and the first one's DNF rests on that face's colours: review,
    with why."""

    from judgecam.vision import pipeline

    views, truth = _analysed_views(corpus_dir, "c0008")
    assert truth["verdict"] == "DNF"
    alone = pipeline.judge_views(views[:1], "333")
    assert alone.verdict == "review"
    assert alone.fusion is not None and alone.fusion.verdict.verdict == "DNF"
    resting = [reason for reason in alone.reasons if "rests on face" in reason]
    assert len(resting) == 1, alone.reasons
    _take_as_loose(monkeypatch, views[1])
    both = pipeline.judge_views(views, "333")
    assert both.verdict == "review"
    assert any("view left out" in reason for reason in both.reasons)
    assert any(resting[0].split("rests on")[1] in reason for reason in both.reasons), both.reasons


def test_a_penalty_no_one_face_decides_stands_with_a_view_left_out(
    corpus_dir: Path, monkeypatch
) -> None:
    """c0188 (a DNF) with its second camera's fit taken as loose (session 8's sticker size left
    it out so; the stickers' size read off the image fits it now): that view is left out, and
    the first camera's DNF survives any one face taken as unseen: DNF, saying which view was
    left out (its own fit; the rig then places it where the first camera puts the puzzle, and
    it still counts as a view lost)."""
    from judgecam.vision import pipeline

    views, truth = _analysed_views(corpus_dir, "c0188")
    _take_as_loose(monkeypatch, views[1])
    result = pipeline.judge_views(
        views,
        "333",
        world_from_camera=[np.asarray(view["world_from_camera"]) for view in truth["views"]],
    )
    assert truth["verdict"] == "DNF"
    assert result.verdict == "DNF", result.reasons
    assert any(
        "c0188_cam1.jpg" in reason and ("view left out" in reason or "placed where" in reason)
        for reason in result.reasons
    )


def _seen(colors: tuple[str, ...], faces: str) -> tuple[str, ...]:
    """`colors` with only the facelets of `faces` (3x3x3 face letters, URFDLB order) seen."""
    return tuple(c if "URFDLB"[i // 9] in faces else UNKNOWN for i, c in enumerate(colors))


def test_a_penalty_that_rests_on_one_face_is_found() -> None:
    """c0006 at half resolution: a reflection over one face read as colours (three orange
    facelets green at 0.98 or more) made a solved cube DNF. Here U and F are seen, and only F's
    colours show the two turns (U D): with F unseen, U allows a solved puzzle, so
    `_face_decides` names F whether or not a camera was lost."""
    from judgecam.vision.pipeline import _face_decides

    fusion = _fusion(_seen(get_puzzle("333").solved_state().apply("U D").colors, "UF"))
    assert fusion.verdict.verdict == "DNF"
    for view_lost in (False, True):
        reason = _face_decides(puzzle_model("333"), fusion, view_lost)
        assert reason is not None and "face F" in reason and "reflection" in reason


def test_a_penalty_that_is_a_penalty_without_any_face_needs_a_lost_camera_to_be_doubted() -> None:
    """U F seen on U and F: DNF, and with U unseen +2 or DNF, never solved. With both cameras
    the other views cross-check the colours and the DNF stands; with a camera lost it rests
    on U's colours alone and goes to a judge."""
    from judgecam.vision.pipeline import _face_decides

    fusion = _fusion(_seen(get_puzzle("333").solved_state().apply("U F").colors, "UF"))
    assert fusion.verdict.verdict == "DNF"
    assert _face_decides(puzzle_model("333"), fusion, view_lost=False) is None
    reason = _face_decides(puzzle_model("333"), fusion, view_lost=True)
    assert reason is not None and "face U" in reason and "camera gave nothing usable" in reason


def test_a_penalty_that_no_one_face_decides_is_left_alone() -> None:
    """A scramble is DNF with any one face unseen; a single R turn is +2 with any one face
    unseen, or +2 or DNF (which neither passes nor penalises a solved cube)."""
    from judgecam.vision.pipeline import _face_decides

    model = puzzle_model("333")
    scrambled = _fusion(get_puzzle("333").solved_state().apply("R U F' L2 D B").colors)
    assert scrambled.verdict.verdict == "DNF"
    assert _face_decides(model, scrambled, view_lost=True) is None
    one_move = _fusion(get_puzzle("333").solved_state().apply("R").colors)
    assert one_move.verdict.verdict == "+2"
    assert _face_decides(model, one_move, view_lost=True) is None


def test_the_only_facelet_seen_on_a_face_can_decide_the_verdict() -> None:
    """c0132 at 1.5x the corpus's resolution: a solved cube whose L face showed one facelet,
    orange read as red (0.91), next to the one red facelet seen on R: DNF on that reading
    alone. A facelet no other facelet of its face confirms is tried as unseen too."""
    from judgecam.vision.pipeline import _decisive_facelet

    colors = get_puzzle("333").solved_state().colors
    seen = {*range(9), 9, 18, 19, 20, 44, 45, 46, 47, 51, 53}
    labels = [color if index in seen else UNKNOWN for index, color in enumerate(colors)]
    labels[44] = colors[9]  # the L facelet read as R's colour
    fusion = _fusion(tuple(labels))
    assert fusion.verdict.verdict == "DNF"
    reason = _decisive_facelet(puzzle_model("333"), fusion)
    assert reason is not None and reason.startswith("one facelet decides the verdict")


def _check_capture(corpus_dir: Path, capture: str) -> tuple[CheckResult, dict[str, Any]]:
    """`check` on one corpus capture, with its views' true intrinsics and rig poses."""
    from .conftest import _judge_capture

    return _judge_capture(corpus_dir, capture)


def test_a_facelet_that_only_tells_plus_two_from_dnf_is_not_sent_to_a_judge(
    corpus_dir: Path,
) -> None:
    """c0028, a Pyraminx one move from solved: each of four facelets of the turned pieces alone
    rules out a second move (without it: +2 or DNF). Such a reading neither penalises a solved
    puzzle nor passes an unsolved one: +2, as the truth says."""
    result, truth = _check_capture(corpus_dir, "c0028")
    assert truth["verdict"] == "+2"
    assert result.verdict == "+2", result.reasons
    assert result.moves_from_solved == 1


def test_a_facelet_that_alone_penalises_a_solved_puzzle_still_goes_to_a_judge(
    corpus_dir: Path,
) -> None:
    """c0139, a Pyraminx one move from solved: the +2 rests on one green facelet on face L, and
    without it the unseen facelets leave the verdict open: review, not +2. (Read right here;
    the rule is for a misread one: until the stickers' size was read off the image, c0138, a
    solved 3x3x3, read one blue facelet green in both cameras and was held back so from DNF.)"""
    result, truth = _check_capture(corpus_dir, "c0139")
    assert truth["verdict"] == "+2"
    assert result.verdict == "review"
    assert any(reason.startswith("one facelet decides the verdict") for reason in result.reasons)


def test_a_solved_2x2_whose_reds_and_oranges_one_wide_colour_held_is_confirmed(
    corpus_dir: Path,
) -> None:
    """c0066, a solved 2x2x2 with a layer turned 33 degrees and the bottom unseen: its two
    reds and two oranges, in the shade of the turned layer, were read as one colour of four and
    named white (review: "the colours fit the scheme badly"). Their hues and chromaticities
    make them two colours: solved, as the truth."""
    result, truth = _check_capture(corpus_dir, "c0066")
    assert truth["verdict"] == "solved"
    assert result.verdict == "solved", result.reasons


@pytest.mark.parametrize("capture", ["c0199", "c0043", "c0124", "c0202"])
def test_views_sharing_little_are_put_together_without_rig_poses(
    corpus_dir: Path, capture: str
) -> None:
    """Captures one move from solved, judged without rig poses, whose two views share little.
    c0199 (Pyraminx): its views show different faces pointing up most, and keeping only
    alignments that map one view's top face onto the other's left out the true one (+2 was read
    DNF); Pyraminx views are aligned on their colours, their pairs and the face they lie on
    (`fuse.bottom_face`), which alone tells c0043's alignments apart. c0124 and c0202 (2x2x2, no
    facelet shared): the alignments giving DNF put the colours in a mirrored arrangement of the
    scheme, which no such puzzle has. All four +2; c0043 has a sticker off, which since session
    31 leaves it to a judge, as "+2 if the sticker is there": the alignment still reads +2."""
    import json

    from judgecam.vision.evaluate import intrinsics_from_truth

    truth = json.loads((corpus_dir / f"{capture}.json").read_text(encoding="utf-8"))
    result = check(
        [(view["image"], cv2.imread(str(corpus_dir / view["image"]))) for view in truth["views"]],
        truth["puzzle"],
        [intrinsics_from_truth(view) for view in truth["views"]],
    )
    assert truth["verdict"] == "+2"
    if truth["missing_facelets"]:
        assert result.verdict == "review", result.reasons
        assert any("+2 if their stickers are there" in reason for reason in result.reasons)
    else:
        assert result.verdict == "+2", result.reasons


def test_views_whose_overlap_disagrees_under_every_alignment_are_not_put_together(
    corpus_dir: Path,
) -> None:
    """c0015, a solved 3x3x3 judged without rig poses: a lamp's reflection washes out one
    camera's view, and under every alignment the two views' overlap disagrees more than it
    agrees. The best of them read DNF; the colours cannot say how the views fit: review."""
    import json

    from judgecam.vision.evaluate import intrinsics_from_truth

    truth = json.loads((corpus_dir / "c0015.json").read_text(encoding="utf-8"))
    result = check(
        [(view["image"], cv2.imread(str(corpus_dir / view["image"]))) for view in truth["views"]],
        "333",
        [intrinsics_from_truth(view) for view in truth["views"]],
    )
    assert truth["verdict"] == "solved"
    assert result.verdict == "review"
    assert any("under every alignment" in reason for reason in result.reasons), result.reasons


def test_glare_that_decides_under_an_alignment_as_good_sends_the_verdict_to_a_judge(
    corpus_dir: Path, monkeypatch
) -> None:
    """Without rig poses the views are aligned by their overlap; where several alignments fit
    about as well, glare deciding the verdict under any of them leaves the verdict open (seed
    3131 c0049, a +2 read DNF: glare decided under the true alignment, not the chosen one).
    c0050 (a 2x2x2 DNF, read right) has three such alignments; glare is made to decide under
    another one. (c0024, a solved 2x2x2, had two until session 25 read its side faces seen at a
    slant; c0007, a Pyraminx, had three until the face it lies on told them apart.)"""
    import json

    from judgecam.vision import pipeline
    from judgecam.vision.evaluate import intrinsics_from_truth

    truth = json.loads((corpus_dir / "c0050.json").read_text(encoding="utf-8"))
    images = [(v["image"], cv2.imread(str(corpus_dir / v["image"]))) for v in truth["views"]]
    intrinsics = [intrinsics_from_truth(v) for v in truth["views"]]
    plain = check(images, truth["puzzle"], intrinsics)
    assert truth["verdict"] == "DNF" and plain.verdict == "DNF"
    assert plain.fusion is not None and plain.fusion.alternatives
    chosen = plain.fusion.observation.facelets
    monkeypatch.setattr(
        pipeline,
        "glare_decides",
        lambda model, fusion, views: (
            None if fusion.observation.facelets == chosen else "glare on face(s) U (test)"
        ),
    )
    doubted = check(images, truth["puzzle"], intrinsics)
    assert doubted.verdict == "review"
    assert any(r.startswith("under another alignment") for r in doubted.reasons), doubted.reasons


@pytest.mark.parametrize(
    ("capture", "image", "kept"),
    [("c0018", "c0018_cam0.jpg", True), ("c0135", "c0135_top.jpg", False)],
)
def test_stickers_set_aside_on_unmeasured_parts_still_count_for_the_pose(
    corpus_dir: Path, capture: str, image: str, kept: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """c0018 cam0 places 6 stickers (half the patches around it: a turned layer leaves the
    parts across it unmeasured and their stickers set aside), but its pose explains 92 % of
    them: the view is used, every sticker placed right. c0135's top view of a Pyraminx explains
    too few that way: still left out. (Until session 35 its pose was wrong, one of five stickers
    placed right; with the triangles' outlines moved onto their edges it places its six right,
    but the patches it explains stay under the bar, so a view this sparse is still not used.)
    Since session 41 c0018 cam0 is read whole (`cut_off`: the window cut its puzzle off, 11
    placed over all of it); that is turned off here, to test the fit in the first window."""
    from judgecam.vision import pipeline
    from judgecam.vision.evaluate import evaluate_view

    monkeypatch.setattr(pipeline, "extends", lambda model, first, second: False)
    views, truth = _analysed_views(corpus_dir, capture)
    index = [view["image"] for view in truth["views"]].index(image)
    view = views[index]
    assert view.fit is not None and view.segmentation is not None
    assert view.fit.inlier_fraction < pipeline.MIN_FIT_INLIERS
    loose = pipeline._loose_fit(view.fit, view.segmentation)
    score = evaluate_view(view, truth["views"][index], truth, puzzle_model(truth["puzzle"]))
    if kept:
        assert loose is None
        assert score.placed >= 6 and score.placed_right == score.placed
    else:
        assert loose is not None and "sticker-like patches" in loose
        assert view.fit.pose_inlier_fraction < pipeline.MIN_POSE_INLIERS


def test_views_that_see_one_place_in_different_colours_go_to_a_judge(repo_root: Path) -> None:
    """A 2x2x2 one move from solved (R2, a layer at 41 degrees), three cameras, rendered with
    seed 2468 (`tests/vision/data/seed2468-rig3-c0031`). Without rig poses one view is put on
    the others turned by a symmetry: six facelets contradicted, nine more misplaced, and the
    reading was DNF. Views put together by their overlap that contradict each other on more
    facelets than one piece shows go to a judge; with the rig's poses the same images read +2,
    as the truth."""
    import json

    from judgecam.vision.evaluate import intrinsics_from_truth

    folder = repo_root / "tests" / "vision" / "data" / "seed2468-rig3-c0031"
    truth = json.loads((folder / "c0031.json").read_text(encoding="utf-8"))
    images = [(view["image"], cv2.imread(str(folder / view["image"]))) for view in truth["views"]]
    intrinsics = [intrinsics_from_truth(view) for view in truth["views"]]
    assert truth["verdict"] == "+2"
    plain = check(images, truth["puzzle"], intrinsics)
    assert plain.verdict == "review"
    assert any("contradict each other on 6 facelets" in r for r in plain.reasons), plain.reasons
    posed = check(
        images,
        truth["puzzle"],
        intrinsics,
        world_from_camera=[np.asarray(view["world_from_camera"]) for view in truth["views"]],
    )
    assert posed.verdict == "+2", posed.reasons


@pytest.mark.parametrize(
    ("capture", "image"), [("c0194", "c0194_top.jpg"), ("c0017", "c0017_cam0.jpg")]
)
def test_a_puzzle_stage_1_saw_a_corner_of_is_looked_at_whole(
    corpus_dir: Path, capture: str, image: str
) -> None:
    """Stage 1 outlined part of a Pyraminx, stage 2 looked 1.5 stickers around it and the fit
    was loose; the view was left out. A loose fit still says
    where the puzzle is: stage 2 looks again over its whole silhouette, and that fit is used
    when it is tight. (Until session 35 the case was c0158's top view; with the triangles'
    outlines moved onto their edges its first fit changed and its second look no longer
    helps, while c0194's top view and c0017's cam0, left out before, are now read this way.)"""
    from judgecam.vision.evaluate import evaluate_view
    from judgecam.vision.pipeline import _loose_fit

    views, truth = _analysed_views(corpus_dir, capture)
    index = [view["image"] for view in truth["views"]].index(image)
    view = views[index]
    assert view.fit is not None and view.segmentation is not None
    assert _loose_fit(view.fit, view.segmentation) is None
    score = evaluate_view(view, truth["views"][index], truth, puzzle_model(truth["puzzle"]))
    assert score.placed >= 13
    assert score.placed_right == score.placed
    assert score.angle_errors and max(abs(error) for error in score.angle_errors) < 2.5
    assert all(score.covered)


def test_a_view_stage_1_finds_nothing_in_at_half_size_is_searched_at_full_size(
    corpus_dir: Path,
) -> None:
    """Corpus c0061 cam0 (a Pyraminx, thin gaps between its stickers): on stage 1's 640-pixel
    copy the gaps merge, the few stickers it outlines fit nothing ("no puzzle found"). Where
    nothing fits, stage 1 looks again at the frame's own resolution; the view is then read,
    and right."""
    from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth
    from judgecam.vision.locate import find_puzzles
    from judgecam.vision.pipeline import _fit_regions, _Frame

    (view, _), truth = _analysed_views(corpus_dir, "c0061")
    image = cv2.imread(str(corpus_dir / truth["views"][0]["image"]))
    model = puzzle_model(truth["puzzle"])
    intrinsics = intrinsics_from_truth(truth["views"][0])
    half_size = find_puzzles(image, sides=3)  # the 640-pixel search alone
    frame = _Frame(image, None, model, intrinsics, {"segment": 0.0, "geometry": 0.0})
    assert _fit_regions(frame, half_size)[0] is None
    assert view.found and view.problems == ()
    score = evaluate_view(view, truth["views"][0], truth, model)
    assert score.placed >= 8
    assert score.placed_right == score.placed


def test_a_puzzle_small_in_a_large_frame_is_searched_at_larger_sizes(corpus_dir: Path) -> None:
    """Corpus c0000 cam0 in the middle of a frame twice as wide and high (a larger sensor
    behind the same lens): the puzzle has the same pixels, but stage 1's 640-pixel copy
    shrinks it 4x, its stickers' gaps vanish and nothing fits. Stage 1 looks again at 1280
    and 2560 pixels; the view is read as in its own frame."""
    import json

    from judgecam.vision.evaluate import evaluate_view, in_larger_frame, intrinsics_from_truth
    from judgecam.vision.locate import find_puzzles
    from judgecam.vision.pipeline import _fit_regions, _Frame

    truth = json.loads((corpus_dir / "c0000.json").read_text(encoding="utf-8"))
    view_truth = truth["views"][0]
    image = cv2.imread(str(corpus_dir / view_truth["image"]))
    large, shifted = in_larger_frame(image, view_truth, 2.0)
    model = puzzle_model(truth["puzzle"])
    intrinsics = intrinsics_from_truth(shifted)
    frame = _Frame(large, None, model, intrinsics, {"segment": 0.0, "geometry": 0.0})
    assert _fit_regions(frame, find_puzzles(large))[0] is None
    view = analyse_view(large, model, intrinsics, "large")
    assert view.found and view.problems == ()
    score = evaluate_view(view, shifted, truth, model)
    own = evaluate_view(
        analyse_view(image, model, intrinsics_from_truth(view_truth)), view_truth, truth, model
    )
    assert score.placed >= own.placed - 2
    assert score.placed_right == score.placed


def test_a_view_whose_colour_edges_break_up_is_found_by_brightness(repo_root: Path) -> None:
    """A Pyraminx under a dim warm lamp, three cameras, rendered with seed 5353 and never tuned
    on (`tests/vision/data/seed5353-rig3-c0010`). Camera 1 sees one face of nine triangles
    plainly, but the sensor's noise draws colour edges inside them: stage 1's edge search
    finds no group of patches at any width, and the view was lost ("no puzzle found"). Where
    colour edges find nothing that fits, stage 1 looks for patches brighter than their gaps;
    the view is then read, every facelet where the truth has it, and the capture (a +2, a tip
    turned) is judged +2 with the rig's poses instead of review."""
    import json

    from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth
    from judgecam.vision.locate import find_puzzles

    folder = repo_root / "tests" / "vision" / "data" / "seed5353-rig3-c0010"
    truth = json.loads((folder / "c0010.json").read_text(encoding="utf-8"))
    model = puzzle_model(truth["puzzle"])
    view_truth = truth["views"][1]
    image = cv2.imread(str(folder / view_truth["image"]))
    for width in (640, 1280):
        assert not find_puzzles(image, sides=3, search_width=width).candidates
    assert find_puzzles(image, sides=3, method="brightness").candidates
    view = analyse_view(image, model, intrinsics_from_truth(view_truth), view_truth["image"])
    assert view.found and view.problems == ()
    score = evaluate_view(view, view_truth, truth, model)
    assert score.placed >= 9
    assert score.placed_right == score.placed

    images = [(v["image"], cv2.imread(str(folder / v["image"]))) for v in truth["views"]]
    result = check(
        images,
        truth["puzzle"],
        [intrinsics_from_truth(v) for v in truth["views"]],
        world_from_camera=[np.asarray(v["world_from_camera"]) for v in truth["views"]],
    )
    assert truth["verdict"] == "+2"
    assert result.verdict == "+2", result.reasons


def test_a_penalty_read_on_the_one_face_seen_is_doubted_with_a_pair_unmeasured() -> None:
    """A render never seen before (seed 3141 c0006): a solved cube from one top camera, its top
    face in two lights, read in two colours: DNF, the other 45 facelets unseen and the y layers
    unmeasured. Without the top face's readings a solved puzzle fits what is left, but the
    rules engine calls that filling review (a pair unmeasured), not solved; `_face_decides`
    must still name the face."""
    from judgecam.vision.pipeline import _face_decides

    labels = [UNKNOWN] * 54
    labels[:9] = ["red", "orange", "orange", "red", "orange", "orange", "red", "red", "red"]
    pairs = tuple(
        PairObservation(axis, parts, 0.0, 0.5) for axis in "xz" for parts in ((0, 1), (1, 2))
    )
    observation = Observation("333", tuple(labels), pairs)
    verdict = judge(get_puzzle("333"), observation)
    assert verdict.verdict == "DNF"
    classification = ColorClassification("333", tuple(labels), (1.0,) * 54, (), (), (1.0,) * 3)
    fusion = Fusion(observation, verdict, classification, (), (), (), (), False)
    reason = _face_decides(puzzle_model("333"), fusion, view_lost=False)
    assert reason is not None and "face U" in reason


def test_stage_1_looks_again_at_doubled_widths_up_to_a_limit(monkeypatch) -> None:
    """Where nothing fits, stage 1 searches again at 1280, 2560 pixels..., never wider than
    MAX_SEARCH_WIDTH (a 12-megapixel frame searched at its own width costs half a second);
    then the same widths again with patches found by brightness instead of colour edges."""
    from judgecam.vision import pipeline

    searches: list[tuple[str, int]] = []
    search = pipeline.find_puzzles

    def spy(image, **kwargs):
        width = kwargs.get("search_width", pipeline.SEARCH_WIDTH)
        searches.append((kwargs.get("method", "edges"), width))
        return search(image, **kwargs)

    monkeypatch.setattr(pipeline, "find_puzzles", spy)
    empty = np.full((1500, 5000, 3), 90, np.uint8)
    view = analyse_view(empty, puzzle_model("333"), _camera(5000, 1500), "empty")
    assert not view.found
    assert pipeline.MAX_SEARCH_WIDTH == 2560
    assert searches == [
        (method, w) for method in ("edges", "brightness") for w in (640, 1280, 2560)
    ]
    searches.clear()
    small = np.full((360, 700, 3), 90, np.uint8)
    analyse_view(small, puzzle_model("333"), _camera(700, 360), "small")
    assert searches == [("edges", 640), ("edges", 700), ("brightness", 640), ("brightness", 700)]
    searches.clear()
    narrow = np.full((360, 480, 3), 90, np.uint8)
    analyse_view(narrow, puzzle_model("333"), _camera(480, 360), "narrow")
    assert searches == [("edges", 640), ("brightness", 640)]


def test_a_fit_too_loose_to_use_is_looked_for_again_at_larger_widths(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Corpus c0158, a Pyraminx DNF under a warm lamp seen by one camera from above: on stage
    1's 640-pixel copy the gaps between its triangles merge, and what it outlines is a corner
    of the puzzle and fragments, of which 41 % fit; the view was left out. A fit that loose is
    looked for again as if nothing fitted: at 1280 pixels the triangles it outlines all fit,
    each where the truth has it. (Since session 41 a tight fit of 7 stickers over the 640-pixel
    search's window is read whole at once, `cut_off`; that is turned off here to keep the
    search at larger widths tested.)"""
    from judgecam.vision import pipeline
    from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth
    from judgecam.vision.locate import find_puzzles
    from judgecam.vision.pipeline import _fit_regions, _Frame, _loose_fit

    monkeypatch.setattr(pipeline, "extends", lambda model, first, second: False)
    (view,), truth = _analysed_views(corpus_dir, "c0158")
    view_truth = truth["views"][0]
    image = cv2.imread(str(corpus_dir / view_truth["image"]))
    model = puzzle_model(truth["puzzle"])
    frame = _Frame(
        image, None, model, intrinsics_from_truth(view_truth), {"segment": 0.0, "geometry": 0.0}
    )
    first = _fit_regions(frame, find_puzzles(image, sides=3))[0]
    assert first is not None and _loose_fit(first[1], first[0]) is not None
    assert view.found and view.problems == ()
    assert view.fit is not None and view.segmentation is not None
    assert _loose_fit(view.fit, view.segmentation) is None
    score = evaluate_view(view, view_truth, truth, model)
    assert score.placed >= 6
    assert score.placed_right == score.placed


def test_a_pyraminx_face_outlined_as_parallelograms_is_read_as_its_triangles(
    corpus_dir: Path,
) -> None:
    """Corpus c0158's top view sees the yellow face at a slant: the gaps across the tilt are too
    thin for the thresholds to cut, and each pair of yellow triangles outlines one
    parallelogram, no triangle. Split along the diagonal where the faint gap shows, the face is
    outlined, 21 triangles are placed (6 before), every one where the truth has it, and the DNF
    (two tip and layer turns) is read with the camera's pose instead of a review for 30 facelets
    unseen."""
    from judgecam.vision.evaluate import evaluate_view
    from judgecam.vision.pipeline import judge_views

    (view,), truth = _analysed_views(corpus_dir, "c0158")
    score = evaluate_view(view, truth["views"][0], truth, puzzle_model(truth["puzzle"]))
    assert score.placed >= 18
    assert score.placed_right == score.placed
    pose = np.asarray(truth["views"][0]["world_from_camera"], dtype=np.float64)
    result = judge_views([view], truth["puzzle"], None, None, [pose])
    assert truth["verdict"] == "DNF"
    assert result.verdict == "DNF", result.reasons


def test_a_solved_pyraminx_whose_loose_view_is_read_at_full_size_is_confirmed(
    corpus_dir: Path,
) -> None:
    """Corpus c0180, a solved Pyraminx on two cameras: camera 1's 640-pixel search fits 10
    patches loosely and the view was left out, so 25 facelets went unseen (review). Searched
    again, at 1536 pixels (its frame's width) it fits tightly; with the rig's poses every
    facelet read is right and the puzzle is confirmed solved."""
    from judgecam.vision.pipeline import judge_views

    views, truth = _analysed_views(corpus_dir, "c0180")
    poses = [np.asarray(view["world_from_camera"], dtype=np.float64) for view in truth["views"]]
    result = judge_views(views, truth["puzzle"], None, None, poses)
    assert truth["verdict"] == "solved"
    assert result.verdict == "solved", result.reasons


@pytest.mark.parametrize(("perturbation", "expected"), [(None, "+2"), ("warm", "review")])
def test_a_red_a_reflection_pales_in_one_view_is_not_read_white_over_the_other(
    corpus_dir: Path, perturbation: str | None, expected: str
) -> None:
    """Corpus c0176, a 2x2x2 one move from solved, a lamp's panel mirrored into cam0. Once
    cam1's loose 640-pixel fit is looked for again and it is read at 1280 pixels, a red
    sticker cam0 outlined pale under the reflection (L 90, chroma 34 under a warm cast) met
    the red cam1 sampled where its fit projects the cell; the outline won, the red was read
    white and, under the warm cast, the +2 read DNF. A pale outline no longer overrules a
    projected colour: the facelet is left unseen. The plain corpus view is judged +2, as the
    truth; under the warm cast a judge looks."""
    from judgecam.vision.pipeline import judge_views

    from .test_each_view_alone import _judged

    truth, views, poses = _judged(corpus_dir, "c0176", perturbation)
    result = judge_views(views, truth["puzzle"], None, None, poses)
    assert truth["verdict"] == "+2"
    assert result.verdict == expected, result.reasons


def test_a_loose_view_whose_pose_agrees_with_the_rig_is_used(
    repo_root: Path, loose_fits_kept: None
) -> None:
    """A 3x3x3 one move from solved, three cameras, rendered with seed 2718
    (`tests/vision/data/seed2718-rig3-c0031`). Camera 1's fit at 640 pixels is loose
    (corner error 13 % of a sticker) yet places all its 20 stickers right; left out, the other
    two views left the capture to a judge. With the rig's poses its body rotation, carried into
    the world, is within 3 degrees of the tight views' (up to the cube's symmetry): it is used,
    and the reading is +2, the truth. Tilted 5 degrees away, the same view is left out again.
    (Looked for again at larger widths, as `analyse_view` now does, it fits tightly.)"""
    import json

    from judgecam.vision.camera import rotation_matrix
    from judgecam.vision.evaluate import intrinsics_from_truth

    folder = repo_root / "tests" / "vision" / "data" / "seed2718-rig3-c0031"
    truth = json.loads((folder / "c0031.json").read_text(encoding="utf-8"))
    images = [(view["image"], cv2.imread(str(folder / view["image"]))) for view in truth["views"]]
    intrinsics = [intrinsics_from_truth(view) for view in truth["views"]]
    poses = [np.asarray(view["world_from_camera"], dtype=np.float64) for view in truth["views"]]
    assert truth["verdict"] == "+2"
    posed = check(images, truth["puzzle"], intrinsics, world_from_camera=poses)
    assert posed.verdict == "+2", posed.reasons
    assert any("c0031_cam1.jpg" in r and "pose agrees" in r for r in posed.reasons)
    tilted = [pose.copy() for pose in poses]
    tilted[1][:3, :3] = tilted[1][:3, :3] @ rotation_matrix(np.radians([5.0, 0.0, 0.0]))
    moved = check(images, truth["puzzle"], intrinsics, world_from_camera=tilted)
    assert any("c0031_cam1.jpg" in r and "view left out" in r for r in moved.reasons)
    assert moved.verdict == "review"


def test_a_loose_view_the_rig_agrees_with_is_left_out_when_too_few_patches_fit(
    repo_root: Path, monkeypatch: pytest.MonkeyPatch, loose_fits_kept: None
) -> None:
    """The rig's pose agreement vouches for a fit whose corners miss, not for one that leaves
    too many patches unexplained: which patch is which facelet is then in doubt (seed 3434 rig2
    `--hands` c0001 cam0: 59 % of its patches fitting a pose within 3 degrees of the rig's, 4
    stickers placed wrong, a +2 read DNF). seed2718-rig3-c0031's camera 1, taken as such a fit,
    is left out with the rig's poses; its own fit is not used, and it is placed where the other
    two cameras put the puzzle instead (`rig_placed`): 17 stickers on their cells, the +2."""
    from judgecam.vision import pipeline

    views, truth = _analysed_views(
        repo_root / "tests" / "vision" / "data" / "seed2718-rig3-c0031", "c0031"
    )
    poses = [np.asarray(view["world_from_camera"], dtype=np.float64) for view in truth["views"]]
    admitted = pipeline.judge_views(views, truth["puzzle"], world_from_camera=poses)
    assert any("c0031_cam1.jpg" in r and "pose agrees" in r for r in admitted.reasons)
    monkeypatch.setattr(pipeline, "_few_patches_fit", lambda fit: fit is views[1].fit)
    doubted = pipeline.judge_views(views, truth["puzzle"], world_from_camera=poses)
    assert doubted.views[1].rig_placed and doubted.views[1].fit is not views[1].fit
    assert any("c0031_cam1.jpg: placed where the other cameras" in r for r in doubted.reasons)
    assert doubted.verdict == truth["verdict"] == "+2"


def test_a_white_sticker_is_not_taken_for_glare_between_views_put_together_by_colour(
    corpus_dir: Path,
) -> None:
    """Corpus c0085 (a +2) in frames twice as wide and high, as plain `check`: one view places
    8 of its 26 stickers wrong, and two facelets are read white (L 84-90) by one view and green
    by the other. Taking the white for glare over green (as between views a calibrated rig puts
    together) read the +2 as DNF; views put together by their colours leave them unseen."""
    import json

    from judgecam.vision.evaluate import in_larger_frame, intrinsics_from_truth

    truth = json.loads((corpus_dir / "c0085.json").read_text(encoding="utf-8"))
    images, intrinsics = [], []
    for view in truth["views"]:
        image, placed = in_larger_frame(cv2.imread(str(corpus_dir / view["image"])), view, 2.0)
        images.append((placed["image"], image))
        intrinsics.append(intrinsics_from_truth(placed))
    assert truth["verdict"] == "+2"
    result = check(images, truth["puzzle"], intrinsics)
    assert result.verdict in ("+2", "review"), result.reasons


def test_a_rig_judges_a_layer_turned_33_degrees_that_one_view_takes_for_the_body() -> None:
    """A +2 (R2) with one layer 33 degrees out of line, three calibrated cameras around it
    (drawn by the synthetic renderer, not the corpus's). One camera's fit takes the turned
    layer for its body, 33 degrees from the others': the rig must still put its stickers with
    theirs (left to the colours, they were put together wrong: red and white read alike)."""
    from judgecam.vision.synthetic import DEFAULT_SCHEME_BGR

    spec = get_puzzle("333")
    model = puzzle_model("333")
    face_color = dict(spec.default_colors)
    bgr = {face_color[face]: DEFAULT_SCHEME_BGR[face] for face in face_color}
    colors = np.array([bgr[c] for c in spec.solved_state().apply("R2").colors], np.uint8)
    turn = Turn(2, (0.0, 0.0, -33.0))
    eyes = [(-91.3, 154.9, -207.6), (299.9, 184.1, 3.0), (-180.4, 148.4, 237.9)]
    views = [render_view(model, colors, eye, turn=turn, seed=k) for k, eye in enumerate(eyes)]
    poses = []
    for view in views:
        camera_from_world = np.eye(4)
        camera_from_world[:3, :3] = cv2.Rodrigues(view.rvec)[0]
        camera_from_world[:3, 3] = view.tvec
        poses.append(np.linalg.inv(camera_from_world))
    result = check(
        [(f"cam{k}", view.image) for k, view in enumerate(views)],
        "333",
        [_camera()] * 3,
        world_from_camera=poses,
    )
    assert result.verdict == "+2", result.reasons


def _cluster(name: str, spread: float) -> ColorCluster:
    return ColorCluster(name, None, None, (40.0, 30.0, 20.0), spread, 4, 5.0)


def test_colours_under_ten_apart_are_told_apart_only_when_both_are_tight() -> None:
    """Two colours 10 or more apart (CIEDE2000) are told apart; closer ones only when the gap
    is at least four times the sum of their spreads, and never under 5."""
    red, orange = _cluster("red", 0.2), _cluster("orange", 0.1)
    assert not _too_close(12.0, _cluster("red", 6.0), _cluster("orange", 6.0))
    assert not _too_close(9.8, red, orange)
    # One orange read into a face of four reds, 9.8 away, moves red's spread to about 4.2.
    assert _too_close(9.8, _cluster("red", 4.2), orange)
    assert _too_close(9.8, _cluster("red", 1.3), _cluster("orange", 1.3))
    assert _too_close(4.9, _cluster("red", 0.1), _cluster("orange", 0.1))


def test_a_dim_solved_cube_with_red_and_orange_close_but_tight_is_judged(
    repo_root: Path, judge_capture: Any
) -> None:
    """The corpus's c0162 plan on the three-camera rig (`tests/vision/data/seed2026-rig3-c0162`):
    a solved 2x2x2 in a dim light, every sticker at L* 16-22 but yellow. Red and orange lie 9.8
    apart, under the 10 that once sent any capture to a judge, but each is one face of four
    stickers within 0.3 of their mean: the colours are told apart, and it is judged solved."""
    from judgecam.vision.colorspace import ciede2000

    folder = repo_root / "tests" / "vision" / "data" / "seed2026-rig3-c0162"
    result, truth = judge_capture(folder, "c0162")
    assert truth["verdict"] == "solved"
    assert result.fusion is not None and result.fusion.colors is not None
    colors = result.fusion.colors
    red, orange = colors.cluster("red"), colors.cluster("orange")
    assert float(ciede2000(red.lab, orange.lab)) < 10.0
    assert red.count == orange.count == 4
    assert result.verdict == "solved", result.reasons


def test_views_that_disagree_only_on_a_tip_are_judged_on_both_readings(corpus_dir: Path) -> None:
    """c0071, a Pyraminx DNF: its two cameras put the B tip 13.2 and 5.4 degrees from its
    layer, both in line. A tip is one piece, so neither reading moves another sticker: the
    verdict is judged over both, and says which pair the views disagreed on."""
    from judgecam.vision.pipeline import judge_views

    views, truth = _analysed_views(corpus_dir, "c0071")
    poses = [np.asarray(view["world_from_camera"], dtype=np.float64) for view in truth["views"]]
    result = judge_views(views, "pyram", None, None, poses)
    assert truth["verdict"] == "DNF" and result.verdict == "DNF"
    assert any(reason.startswith("views disagree on pair B[1, 2]") for reason in result.reasons)
    assert result.fusion is not None
    (tip,) = [p for p in result.fusion.pairs if (p.axis, p.parts) == ("B", (1, 2))]
    assert not tip.consistent and not tip.snapped_apart
    assert (
        tip.angle_deg - tip.uncertainty_deg < -13.2 and tip.angle_deg + tip.uncertainty_deg > -5.4
    )


def test_views_that_disagree_on_a_layer_still_go_to_a_judge() -> None:
    from judgecam.vision.fuse import FusedPair
    from judgecam.vision.pipeline import _only_a_tip_disputed

    pyraminx = puzzle_model("pyram")
    assert _only_a_tip_disputed(pyraminx, FusedPair("B", (1, 2), -9.0, 6.0, 2, False))
    # A layer carries other pieces' stickers; snapped apart, the tip's own are a step apart.
    assert not _only_a_tip_disputed(pyraminx, FusedPair("B", (0, 1), -9.0, 6.0, 2, False))
    assert not _only_a_tip_disputed(pyraminx, FusedPair("B", (1, 2), 59.0, 2.0, 2, False, True))
    cube = puzzle_model("333")
    assert not _only_a_tip_disputed(cube, FusedPair("y", (1, 2), -26.0, 23.0, 2, False))
