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


def test_a_solved_reading_with_one_sticker_off_and_a_bare_looking_cell_goes_to_a_judge() -> None:
    # Corpus c0087: one sticker seen off squarely (missing), another cell seen at a slant
    # looking like bare plastic and read by no camera; everything else solved.
    colors = list(SPEC.solved_state().colors)
    colors[52], colors[34] = MISSING, UNKNOWN
    fusion = _fusion(colors)
    assert fusion.verdict.verdict == "solved"  # one sticker off is solved; 34 is filled in
    assert bare_unseen(fusion, [_view((34,))]) == (34,)
    reason = bare_decides(fusion, [_view((34,))])
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
