"""Penalties that rest on stickers whose outline does not match their cell go to a judge.

Stage 3 places a sticker on the cell whose projected centre it sits near, at about the cell's
size (`geometry._drop_doubtful_placements`). A sticker of a layer turned about 40 degrees that
juts over the next layer can pass those tests on a cell it does not belong to: corpus c0204
cam0, a solved 3x3x3 whose E slice stands at 41.6 degrees, places one E sticker (rose) on a D
cell 0.23 of a sticker from its centre, at 1.42 times its size. Its outline's corners, though,
are 0.30 of its size from the cell's, three times the next worst sticker's in that view: a
sticker seen edge-on at another tilt than its cell's has another shape. With the outlines moved
onto their edges (a variant not kept, session 36) a second such sticker in the other view made
the reading DNF. So no penalty rests on such stickers alone: the verdict is judged with them
unseen, and if it changes (beyond ruling out the harsher penalty, `lightens_only`), review.

Solved readings are left alone, as in `slanted.py`: a misplaced sticker makes an unsolved
puzzle look solved only if it has exactly the colour the cell needs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.fuse import Fusion, ViewEvidence
from judgecam.vision.model import PuzzleModel
from judgecam.vision.slanted import penalty_rests_on

#: A placed sticker whose outline's corners lie further from its cell's than this fraction of
#: its size (RMS) is placed loosely. A right placement is tight at 0.15 (`geometry`'s
#: TIGHT_STICKER_ERROR); a sticker cut by a turned layer's overhang is the rest up to here.
LOOSE_PLACEMENT = 0.25


def loosely_placed_facelets(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    permutations: Sequence[NDArray[np.int64] | None],
) -> tuple[int, ...]:
    """Fused facelets some view placed a sticker on and every such view placed it loosely."""
    loose = np.zeros(model.facelet_count, dtype=bool)
    tight = np.zeros(model.facelet_count, dtype=bool)
    for view, permutation in zip(views, permutations, strict=True):
        if view is None or permutation is None:
            continue
        errors = view.fit.placement_errors
        measured = len(errors) == len(view.fit.assignment)
        for detection, facelet in enumerate(view.fit.assignment):
            if facelet < 0:
                continue
            target = int(permutation[facelet])
            if measured and errors[detection] > LOOSE_PLACEMENT:
                loose[target] = True
            else:
                tight[target] = True
    return tuple(int(i) for i in np.nonzero(loose & ~tight)[0])


def loose_placement_decides(
    model: PuzzleModel, fusion: Fusion, views: Sequence[ViewEvidence | None]
) -> str | None:
    """A reason for review if a penalty does not hold with the loosely placed stickers taken
    as unseen (unless they only rule out the harsher penalty)."""
    loose = loosely_placed_facelets(model, views, fusion.permutations)
    rests = penalty_rests_on(model, fusion, loose)
    if rests is None:
        return None
    return (
        f"the {fusion.verdict.verdict} rests on {rests[0]} sticker(s) whose outline does not "
        f"match the cell it was placed on (a turned layer's sticker over another?): {rests[1]} "
        "without them"
    )
