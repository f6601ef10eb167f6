"""Penalties resting on facelets seen only at a slant (`vision/slanted.py`), or on one facelet a
single camera sampled without a sticker outline (`vision/single_sample.py`), go to a judge."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from judgecam.puzzle.observation import Observation
from judgecam.puzzle.verdict import judge_unseen
from judgecam.vision.fuse import ViewEvidence
from judgecam.vision.projected import ProjectedFacelet
from judgecam.vision.segment import Facelet
from judgecam.vision.single_sample import single_sample_decides, unconfirmed_facelets
from judgecam.vision.slanted import SLANT_FACING, slant_decides, slanted_facelets

from .penalty_cases import MODEL, PAIRS, SPEC
from .penalty_cases import fusion_of as _fusion
from .penalty_cases import turned_r as _turned_r


def _view(detected: list[int], slanted: list[int], facing: float) -> ViewEvidence:
    """A view (frame = the fused frame) that outlined `detected` and sampled `slanted` where the
    fit projects them, facing the camera by `facing`."""
    sample = Facelet(np.zeros((4, 2)), np.zeros(3), 1.0, 100, 1.0)
    fit = SimpleNamespace(assignment=np.array(detected, dtype=np.int64))
    projected = tuple(ProjectedFacelet(f, sample, facing, 1.0) for f in slanted)
    return ViewEvidence((sample,) * len(detected), fit, (), projected)  # type: ignore[arg-type]


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


def _misread_turned_r() -> tuple[tuple[str, ...], tuple[str, ...], list[int]]:
    """A cube one R' turn from solved with the D face and L's bottom row unseen (+2: the visible
    pieces imply them), the same with facelet 14 (R face) misread green, which makes it DNF
    (seed 5151 rig3 c0013: a cup's rim over a red cell), and the facelets seen."""
    labels = list(SPEC.solved_state().apply("R'").colors)
    for index in [*range(27, 36), 42, 43, 44]:
        labels[index] = "unknown"
    misread = list(labels)
    misread[14] = "green"
    seen = [i for i, label in enumerate(labels) if label != "unknown"]
    return tuple(labels), tuple(misread), seen


def test_a_penalty_that_one_unconfirmed_sample_decides_goes_to_a_judge() -> None:
    truth, misread, seen = _misread_turned_r()
    assert _fusion(truth, 1).verdict.verdict == "+2"
    fusion = _fusion(misread, 1)
    assert fusion.verdict.verdict == "DNF"
    outlined = [i for i in seen if i != 14]
    view = _view(outlined, [14], 0.8)
    assert unconfirmed_facelets(MODEL, [view], fusion.permutations) == (14,)
    reason = single_sample_decides(MODEL, fusion, [view])
    assert reason is not None and "DNF rests on one green facelet on face R" in reason


def test_a_confirmed_sample_or_one_that_decides_nothing_lets_the_penalty_stand() -> None:
    truth, misread, seen = _misread_turned_r()
    outlined = [i for i in seen if i != 14]
    # Sampled by two cameras, or outlined by another one: confirmed.
    fusion = _fusion(misread, 2)
    for second in (_view([], [14], 0.8), _view([14], [], 1.0)):
        views = [_view(outlined, [14], 0.8), second]
        assert unconfirmed_facelets(MODEL, views, fusion.permutations) == ()
        assert single_sample_decides(MODEL, fusion, views) is None
    # The true reading: the +2 holds with facelet 14 unseen (the other pieces imply it).
    fusion = _fusion(truth, 1)
    assert single_sample_decides(MODEL, fusion, [_view(outlined, [14], 0.8)]) is None
    # A solved reading is left alone.
    solved = _fusion(SPEC.solved_state().colors, 1)
    rest = [i for i in range(54) if i != 14]
    assert single_sample_decides(MODEL, solved, [_view(rest, [14], 0.8)]) is None
