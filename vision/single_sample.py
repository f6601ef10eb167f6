"""A penalty that one unconfirmed sample decides goes to a judge.

A facelet no view outlined a sticker for is sampled where the fitted model projects its cell
(`projected.project_facelets`). Seen so by one view only, nothing confirms that the cell held
the sticker: an object in front of the puzzle can cover it with a colour of the puzzle. On
seed 5151 rig3 c0013 (a +2) a blue cup's rim covered a red facelet's cell; its colour passed as a
sticker's, and that one blue reading made the cube DNF. The odd-facelet check
(`pipeline._decisive_facelet`) does not look at one-move states, whose turned layer makes a
dozen facelets odd. So each such facelet is judged unseen in turn; if one alone changes a
penalty (beyond ruling out the harsher one, `lightens_only`), review.

Solved readings are left alone, as in `slanted`: a misread that makes an unsolved puzzle look
solved must give exactly the colour the solved state needs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.fuse import Fusion, ViewEvidence
from judgecam.vision.model import PuzzleModel
from judgecam.vision.slanted import penalty_without, read_in_penalty, sample_sources

#: More unconfirmed facelets than this are judged unseen together, not one by one (each try is
#: a judgement): stricter, and rare.
MAX_TRIED = 16


def unconfirmed_facelets(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    permutations: Sequence[NDArray[np.int64] | None],
) -> tuple[int, ...]:
    """Fused facelets sampled by exactly one view, as a projected cell (no sticker outlined)."""
    sources = sample_sources(model, views, permutations)
    unconfirmed = ~sources.outlined & (sources.projected_views == 1)
    return tuple(int(i) for i in np.nonzero(unconfirmed)[0])


def single_sample_decides(
    model: PuzzleModel, fusion: Fusion, views: Sequence[ViewEvidence | None]
) -> str | None:
    """A reason for review if leaving one unconfirmed facelet unseen changes a penalty."""
    read = read_in_penalty(fusion, unconfirmed_facelets(model, views, fusion.permutations))
    verdict, labels = fusion.verdict.verdict, fusion.observation.facelets
    if len(read) > MAX_TRIED:
        without = penalty_without(model, fusion, read)
        if without is None:
            return None
        return (
            f"the {verdict} rests on {len(read)} facelets that single cameras saw without a "
            f"sticker outline ({without} without them)"
        )
    for index in read:
        without = penalty_without(model, fusion, [index])
        if without is not None:
            face = model.face_names[int(model.facelet_face[index])]
            return (
                f"the {verdict} rests on one {labels[index]} facelet on face {face} that a single "
                f"camera saw without a sticker outline ({without} without it)"
            )
    return None
