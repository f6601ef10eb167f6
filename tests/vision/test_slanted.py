"""Penalties resting on facelets seen only at a slant go to a judge (`vision/slanted.py`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from judgecam.puzzle import get_puzzle
from judgecam.puzzle.observation import Observation, PairObservation
from judgecam.puzzle.verdict import judge, judge_unseen
from judgecam.vision.fuse import Fusion, ViewEvidence
from judgecam.vision.model import puzzle_model
from judgecam.vision.projected import ProjectedFacelet
from judgecam.vision.segment import Facelet
from judgecam.vision.slanted import SLANT_FACING, slant_decides, slanted_facelets

MODEL = puzzle_model("333")
SPEC = get_puzzle("333")
PAIRS = tuple(
    PairObservation(axis, parts, 0.0, 0.5) for axis in "xyz" for parts in ((0, 1), (1, 2))
)


def _view(detected: list[int], slanted: list[int], facing: float) -> ViewEvidence:
    """A view (frame = the fused frame) that outlined `detected` and sampled `slanted` where the
    fit projects them, facing the camera by `facing`."""
    sample = Facelet(np.zeros((4, 2)), np.zeros(3), 1.0, 100, 1.0)
    fit = SimpleNamespace(assignment=np.array(detected, dtype=np.int64))
    projected = tuple(ProjectedFacelet(f, sample, facing, 1.0) for f in slanted)
    return ViewEvidence((sample,) * len(detected), fit, (), projected)  # type: ignore[arg-type]


def _fusion(colors: tuple[str, ...], views: int) -> Fusion:
    observation = Observation("333", colors, PAIRS)
    identity = tuple(np.arange(MODEL.facelet_count) for _ in range(views))
    return Fusion(observation, judge(SPEC, observation), None, identity, (), (), (), False)


def _turned_r() -> tuple[tuple[str, ...], list[int]]:
    """A cube one R turn from solved, and the facelets the turn changed."""
    solved = SPEC.solved_state().colors
    turned = SPEC.solved_state().apply("R").colors
    return turned, [i for i in range(len(turned)) if turned[i] != solved[i]]


def test_a_penalty_that_rests_on_slanted_samples_goes_to_a_judge() -> None:
    colors, changed = _turned_r()
    rest = [i for i in range(len(colors)) if i not in changed]
    fusion = _fusion(colors, 1)
    assert fusion.verdict.verdict == "+2"
    slanted = _view(rest, changed, SLANT_FACING - 0.1)
    assert slanted_facelets(MODEL, [slanted], fusion.permutations) == tuple(changed)
    reason = slant_decides(MODEL, fusion, [slanted])
    assert reason is not None and "+2 rests on" in reason and "slant" in reason


def test_squarely_seen_or_confirmed_samples_let_the_penalty_stand() -> None:
    colors, changed = _turned_r()
    rest = [i for i in range(len(colors)) if i not in changed]
    # The same samples facing the camera squarely enough.
    fusion = _fusion(colors, 1)
    assert slant_decides(MODEL, fusion, [_view(rest, changed, SLANT_FACING + 0.05)]) is None
    # Slanted in one view, outlined in another.
    fusion = _fusion(colors, 2)
    views = [_view(rest, changed, 0.15), _view(changed, [], 1.0)]
    assert slanted_facelets(MODEL, views, fusion.permutations) == ()
    assert slant_decides(MODEL, fusion, views) is None


def test_slanted_samples_that_only_rule_out_the_harsher_penalty_do_not_matter() -> None:
    colors, changed = _turned_r()
    # Keep one changed facelet of each changed face seen squarely: no filling of the rest is
    # solved, so leaving them unseen can only make the +2 a DNF.
    kept = {i // 9: i for i in changed}
    slant = [i for i in changed if i not in kept.values()]
    trial = judge_unseen(SPEC, Observation("333", colors, PAIRS), slant)
    assert trial.possible == ("+2", "DNF")
    fusion = _fusion(colors, 1)
    rest = [i for i in range(len(colors)) if i not in slant]
    assert slant_decides(MODEL, fusion, [_view(rest, slant, 0.15)]) is None


def test_a_solved_reading_is_left_alone() -> None:
    colors = SPEC.solved_state().colors
    fusion = _fusion(colors, 1)
    assert fusion.verdict.verdict == "solved"
    some = list(range(0, 54, 5))
    rest = [i for i in range(54) if i not in some]
    assert slant_decides(MODEL, fusion, [_view(rest, some, 0.15)]) is None
