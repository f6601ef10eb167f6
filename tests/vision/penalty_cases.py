"""Readings of a 3x3x3 for the tests of the checks that send a penalty to a judge."""

from __future__ import annotations

import numpy as np

from judgecam.puzzle import get_puzzle
from judgecam.puzzle.observation import Observation, PairObservation
from judgecam.puzzle.verdict import judge
from judgecam.vision.fuse import Fusion
from judgecam.vision.model import puzzle_model

MODEL = puzzle_model("333")
SPEC = get_puzzle("333")
PAIRS = tuple(
    PairObservation(axis, parts, 0.0, 0.5) for axis in "xyz" for parts in ((0, 1), (1, 2))
)


def fusion_of(colors: tuple[str, ...], views: int) -> Fusion:
    """A fusion reading `colors` with every pair in line, from `views` views in its frame."""
    observation = Observation("333", colors, PAIRS)
    identity = tuple(np.arange(MODEL.facelet_count) for _ in range(views))
    return Fusion(observation, judge(SPEC, observation), None, identity, (), (), (), False)


def turned_r() -> tuple[tuple[str, ...], list[int]]:
    """A cube one R turn from solved, and the facelets the turn changed."""
    solved = SPEC.solved_state().colors
    turned = SPEC.solved_state().apply("R").colors
    return turned, [i for i in range(len(turned)) if turned[i] != solved[i]]
