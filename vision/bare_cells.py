"""A verdict that holds only if the stickers are on cells that look bare goes to a judge.

`missing.missing_facelets` calls a facelet missing only where it can be sure: the cube is
nearly aligned, the cell faces the camera squarely, and its inside is dark and grey. Elsewhere
(a cell seen at a slant, a cube with a turned layer) a cell whose sample looks like the bare
body between the stickers is refused as a sticker (`projected.StickerLook.bare_body`) and left
unseen, and the rules engine fills unseen facelets in from their pieces, that is as stickered.
Two stickers off are DNF (KCA Art. 10.2, WCA 5b5), so a solved or +2 reading that would be
DNF with those cells missing rests on stickers no camera saw. Corpus c0087 has two stickers
off, one of them in view at facing 0.16 (L* 10 against a body of 22): a trial that read the
rest of that face (docs/vision.md "Session 28") called it solved.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgecam.puzzle.observation import MISSING, UNKNOWN, Observation
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.verdict import DNF, REVIEW, judge
from judgecam.vision.fuse import Fusion, ViewEvidence


def bare_unseen(fusion: Fusion, views: Sequence[ViewEvidence | None]) -> tuple[int, ...]:
    """Fused facelets no view read that some view has in sight looking like bare body."""
    labels = fusion.observation.facelets
    found: set[int] = set()
    for view, permutation in zip(views, fusion.permutations, strict=False):
        if view is None or permutation is None:
            continue
        found.update(
            target
            for facelet in view.bare
            if labels[target := int(permutation[facelet])] == UNKNOWN
        )
    return tuple(sorted(found))


def bare_decides(fusion: Fusion, views: Sequence[ViewEvidence | None]) -> str | None:
    """A reason for review if the verdict (solved or +2) changes with the bare-looking cells
    no view read taken as stickers off."""
    verdict = fusion.verdict.verdict
    if verdict in (DNF, REVIEW):
        return None  # stickers off only ever make it worse
    cells = bare_unseen(fusion, views)
    if not cells:
        return None
    observation = fusion.observation
    labels = list(observation.facelets)
    for index in cells:
        labels[index] = MISSING
    damaged = judge(
        get_puzzle(observation.puzzle),
        Observation(observation.puzzle, tuple(labels), observation.pairs),
    )
    if damaged.verdict == verdict:
        return None
    return (
        f"{len(cells)} facelet cell(s) in view look like bare plastic (a sticker off?) and no "
        f"camera read them: {verdict} if their stickers are there, {damaged.verdict} if not"
    )
