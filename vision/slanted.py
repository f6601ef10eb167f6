"""Penalties that rest on facelets seen only at a slant go to a judge.

A facelet no sticker outline was found for is sampled where the fitted model projects it
(`projected.project_facelets`). Seen at a slant (its normal more than ~75 degrees from the line
of sight) the cell is a sliver a few pixels wide: a pixel of fit error mixes in the gap or the
next face, and the face light stage 4 divides out may rest on little more than that sliver. On
c0015 at 0.75x (a solved cube under a lamp's reflection) two yellow and two white facelets seen
only that way, at cosines 0.14 to 0.17, were read the other way round at confidence 1.00, and
the cube read DNF. No such sample decides a penalty alone: the verdict is judged with them
unseen, and if it changes (beyond ruling out the harsher penalty, `lightens_only`), review.

Solved readings are left alone: a solved reading whose slanted facelets could be anything is
rarely decided without them (3 of 14 solved corpus readings would have gone to review, measured
with a variant that sampled more cells), and a misread that makes an unsolved puzzle look solved
must give exactly the colour the solved state needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle import get_puzzle
from judgecam.puzzle.observation import MISSING, UNKNOWN
from judgecam.puzzle.verdict import DNF, PLUS_TWO, holds_without, judge_unseen
from judgecam.vision.fuse import Fusion, ViewEvidence
from judgecam.vision.model import PuzzleModel

#: A projected sample facing the camera less squarely than this (cosine of the cell's normal and
#: the line of sight; 75.5 degrees) is seen at a slant.
SLANT_FACING = 0.25


@dataclass(frozen=True)
class SampleSources:
    """How each fused facelet was seen: outlined as a sticker by some view, the most squarely
    a view saw it as a projected cell (cosine; -1 if none did), and how many views sampled it
    so."""

    outlined: NDArray[np.bool_]
    squarest: NDArray[np.float64]
    projected_views: NDArray[np.int64]


def sample_sources(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    permutations: Sequence[NDArray[np.int64] | None],
) -> SampleSources:
    """Where the fused facelets' samples came from (views and permutations as fused)."""
    outlined = np.zeros(model.facelet_count, dtype=bool)
    squarest = np.full(model.facelet_count, -1.0)
    projected_views = np.zeros(model.facelet_count, dtype=np.int64)
    for view, permutation in zip(views, permutations, strict=True):
        if view is None or permutation is None:
            continue
        for facelet in view.fit.assignment:
            if facelet >= 0:
                outlined[int(permutation[facelet])] = True
        targets: set[int] = set()
        for sample in view.projected:
            target = int(permutation[sample.facelet])
            squarest[target] = max(squarest[target], sample.facing)
            targets.add(target)
        projected_views[list(targets)] += 1
    return SampleSources(outlined, squarest, projected_views)


def slanted_facelets(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    permutations: Sequence[NDArray[np.int64] | None],
) -> tuple[int, ...]:
    """Fused facelets whose every sample is a projected one seen at a slant (no view outlined
    their sticker, and none saw their cell at SLANT_FACING or more squarely)."""
    sources = sample_sources(model, views, permutations)
    slanted = ~sources.outlined & (sources.squarest >= 0) & (sources.squarest < SLANT_FACING)
    return tuple(int(i) for i in np.nonzero(slanted)[0])


def read_in_penalty(fusion: Fusion, facelets: Sequence[int]) -> list[int]:
    """The `facelets` given a colour, if the reading is a penalty (+2 or DNF); else none."""
    if fusion.verdict.verdict not in (PLUS_TWO, DNF):
        return []
    labels = fusion.observation.facelets
    return [index for index in facelets if labels[index] not in (UNKNOWN, MISSING)]


def penalty_without(model: PuzzleModel, fusion: Fusion, facelets: Sequence[int]) -> str | None:
    """The verdict with `facelets` (read, of a penalty reading) taken as unseen, if that
    changes the penalty (`holds_without`); else None."""
    trial = judge_unseen(get_puzzle(model.name), fusion.observation, facelets)
    return None if holds_without(fusion.verdict.verdict, trial) else trial.verdict


def penalty_rests_on(
    model: PuzzleModel, fusion: Fusion, facelets: Sequence[int]
) -> tuple[int, str] | None:
    """If a penalty reading does not hold with those of `facelets` it read taken as unseen
    (`penalty_without`): how many they are and the verdict without them; else None."""
    read = read_in_penalty(fusion, facelets)
    without = penalty_without(model, fusion, read) if read else None
    return None if without is None else (len(read), without)


def slant_decides(
    model: PuzzleModel, fusion: Fusion, views: Sequence[ViewEvidence | None]
) -> str | None:
    """A reason for review if a penalty does not hold with the facelets seen only at a slant
    taken as unseen (unless they only rule out the harsher penalty)."""
    rests = penalty_rests_on(model, fusion, slanted_facelets(model, views, fusion.permutations))
    if rests is None:
        return None
    return (
        f"the {fusion.verdict.verdict} rests on {rests[0]} facelet(s) seen only at a slant "
        f"(no sticker outlined, the cell nearly edge-on): {rests[1]} without them"
    )
