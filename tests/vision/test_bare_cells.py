"""A solved or +2 reading that holds only if the stickers are on cells that look bare goes to a
judge (`vision/bare_cells.py`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from judgecam.puzzle import get_puzzle
from judgecam.puzzle.observation import MISSING, UNKNOWN, Observation, PairObservation
from judgecam.puzzle.verdict import judge
from judgecam.vision.bare_cells import bare_decides, bare_unseen
from judgecam.vision.fuse import Fusion, ViewEvidence
from judgecam.vision.model import puzzle_model

MODEL = puzzle_model("333")
SPEC = get_puzzle("333")
PAIRS = tuple(
    PairObservation(axis, parts, 0.0, 0.5) for axis in "xyz" for parts in ((0, 1), (1, 2))
)


def _fusion(colors: list[str], views: int = 1) -> Fusion:
    observation = Observation("333", tuple(colors), PAIRS)
    identity = tuple(np.arange(MODEL.facelet_count) for _ in range(views))
    return Fusion(observation, judge(SPEC, observation), None, identity, (), (), (), False)


def _view(bare: tuple[int, ...]) -> ViewEvidence:
    fit = SimpleNamespace(assignment=np.zeros(0, dtype=np.int64))
    return ViewEvidence((), fit, (), (), bare)  # type: ignore[arg-type]


def test_a_solved_reading_resting_on_bare_looking_cells_goes_to_a_judge() -> None:
    # Corpus c0087: one sticker seen off squarely (missing), another cell seen at a slant
    # looking like bare plastic and read by no camera; everything else solved. Since session
    # 31 the rules engine sends a sticker off with any facelet unseen to a judge itself (one
    # more off there would be DNF), so the bare cell is not needed for that.
    colors = list(SPEC.solved_state().colors)
    colors[52], colors[34] = MISSING, UNKNOWN
    fusion = _fusion(colors)
    assert fusion.verdict.verdict == "review"
    assert "a sticker is off" in fusion.verdict.review_because[0]
    assert bare_unseen(fusion, [_view((34,))]) == (34,)
    assert bare_decides(fusion, [_view((34,))]) is None  # a review already
    # No sticker seen off, two cells in view that look bare: solved only if they are stickered.
    colors[52] = SPEC.solved_state().colors[52]
    colors[35] = UNKNOWN
    fusion = _fusion(colors)
    assert fusion.verdict.verdict == "solved"
    reason = bare_decides(fusion, [_view((34, 35))])
    assert reason is not None and "solved if their stickers are there, DNF if not" in reason


def test_bare_looking_cells_that_do_not_change_the_verdict_or_that_a_view_read_are_left() -> None:
    colors = list(SPEC.solved_state().colors)
    colors[34] = UNKNOWN
    # One cell that may be bare: one sticker off is still solved.
    assert bare_decides(_fusion(colors), [_view((34,))]) is None
    # Read by another view (its label is a colour): the sticker is there.
    colors[52] = MISSING
    read = list(colors)
    read[34] = SPEC.solved_state().colors[34]
    assert bare_decides(_fusion(read, 2), [_view((34,)), _view(())]) is None
    # A DNF stays a DNF whatever stickers are off.
    turned = list(SPEC.solved_state().apply("R U").colors)
    turned[34] = UNKNOWN
    fusion = _fusion(turned)
    assert fusion.verdict.verdict == "DNF"
    assert bare_decides(fusion, [_view((34, 35))]) is None


def test_a_plus_two_with_two_bare_looking_cells_goes_to_a_judge() -> None:
    colors = list(SPEC.solved_state().apply("R").colors)
    colors[27] = colors[28] = UNKNOWN  # two D facelets (D1, D2) the R turn does not touch
    fusion = _fusion(colors)
    assert fusion.verdict.verdict == "+2"
    reason = bare_decides(fusion, [_view((27, 28))])
    assert reason is not None and reason.startswith("2 facelet cell(s)") and "DNF if not" in reason


def test_two_stickers_off_in_plain_sight_of_a_dim_view_go_to_a_judge(
    repo_root, judge_capture
) -> None:
    """The corpus's c0195 plan rendered on the three-camera rig (`render corpus --seed 2026
    --rig rig3`; `tests/vision/data/seed2026-rig3-c0195`): a solved Pyraminx in a dim room with
    two stickers off on face L (truth facelets 10 and 11: DNF). Camera 1 sees them squarely as
    black cells (L* 8, chroma 1), but its border bands take the pastel reds' colour, so the
    body median (L* 17, red) lies only 17.5 from the stickers and the view-wide bare test
    refused to judge: the capture was read solved. Now a grey cell far darker than every
    sticker placed on its face is bare too, and the capture goes to a judge."""
    import cv2

    from judgecam.vision.evaluate import _alignment, intrinsics_from_truth
    from judgecam.vision.pipeline import analyse_view

    folder = repo_root / "tests" / "vision" / "data" / "seed2026-rig3-c0195"
    result, truth = judge_capture(folder, "c0195")
    assert truth["verdict"] == "DNF" and truth["missing_facelets"] == [10, 11]
    model = puzzle_model(truth["puzzle"])
    seen = truth["views"][1]
    image = cv2.imread(str(folder / seen["image"]))
    view = analyse_view(image, model, intrinsics_from_truth(seen), seen["image"])
    alignment = _alignment([(view, seen, np.arange(model.facelet_count))], model)
    assert alignment is not None
    to_truth = alignment[1]
    assert sorted(int(to_truth[f]) for f in view.bare) == [10, 11]
    assert result.verdict == "review"
    assert any("look like bare plastic" in reason for reason in result.reasons)


def test_a_sticker_off_beside_dark_blues_keeps_a_dnf_from_being_read_plus_two(
    repo_root, judge_capture
) -> None:
    """Seed 6262 rig3 c0008 (`tests/vision/data/seed6262-rig3-c0008`, never tuned on): a
    2x2x2 one turn from solved with two stickers off, so DNF. One of them (truth facelet 13)
    is in view of camera 2 as a grey cell at L* 7.5 on a face whose darkest sticker is a blue at
    L* 18 (a third of its luminance); the other faces no camera. It was read +2, the cells filled
    in as stickered. Now the cell is bare, and with it off the reading is no longer +2."""
    folder = repo_root / "tests" / "vision" / "data" / "seed6262-rig3-c0008"
    result, truth = judge_capture(folder, "c0008")
    assert truth["verdict"] == "DNF" and sorted(truth["missing_facelets"]) == [4, 13]
    assert result.verdict == "review", result.reasons
    assert any("look like bare plastic" in reason for reason in result.reasons)
