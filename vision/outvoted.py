"""A camera that measures a pair unlike the others, outvoted or giving itself away: left out.

Two views measuring one pair differently read at least one of them wrong, and `pipeline._judge`
sends such captures to a judge. With three or more cameras the others can say which: a fit that
takes a layer turned about 45 degrees for the neighbouring aligned position (the cube's other
alias) puts that layer's stickers on the wrong cells too, so such a view is wrong as a whole.
On the sets measured (four rig3 captures, five disagreements, seeds 8888 and 4242 at 0.75x and
1.5x) the two views that agreed were right every time and the odd one wrong, by 24 to 45
degrees. The odd view is left out only when every disagreement names it, and the others agree
among themselves on every pair it disagrees on; otherwise the capture stays a review.

A view can also give itself away: one that measures two crossing cuts both askew
(`puzzle.locking.contradiction`), which no intact puzzle shows, misfitted one of them. When
the views it disagrees with measure the pair alike and each of them is free of such a
contradiction, it is the odd one even with a single other view (rig3 c0068: camera 2 measured
the R cut 23.1 degrees out while the U cut stood at -40.6, as camera 0 saw it, with R in line).
"""

from __future__ import annotations

from collections.abc import Sequence

from judgecam.puzzle.locking import contradiction
from judgecam.puzzle.registry import get_puzzle
from judgecam.vision.fuse import (
    MAX_VIEW_DISAGREEMENT_DEG,
    Fusion,
    ViewEvidence,
    locking_angles,
    view_pairs,
)
from judgecam.vision.geometry import GeometryFit, _wrap
from judgecam.vision.model import PuzzleModel

#: Fewest other views that must agree with one another against the odd one.
MIN_AGREEING_VIEWS = 2


def _odd_one(values: dict[int, float], step: float) -> int | None:
    """The view whose angle differs from every other's by more than the views may disagree,
    while the others (at least MIN_AGREEING_VIEWS) agree among themselves; or None."""
    for odd in values:
        others = [value for index, value in values.items() if index != odd]
        if len(others) >= MIN_AGREEING_VIEWS and _apart_from_agreeing(values[odd], others, step):
            return odd
    return None


def _apart_from_agreeing(angle: float, others: list[float], step: float) -> bool:
    """Whether `others` (at least one) agree among themselves within the views' allowed
    disagreement and `angle` lies further than that from every one of them."""
    agree = all(
        abs(_wrap(first - second, step)) <= MAX_VIEW_DISAGREEMENT_DEG
        for first in others
        for second in others
    )
    apart = all(abs(_wrap(angle - other, step)) > MAX_VIEW_DISAGREEMENT_DEG for other in others)
    return bool(others) and agree and apart


def self_contradicting(model: PuzzleModel, fit: GeometryFit) -> bool:
    """Whether a view's own pair angles put two crossing cuts both askew (no intact puzzle
    shows that: the view misfitted one of them)."""
    return contradiction(get_puzzle(model.name), locking_angles(model, fit)) is not None


def _given_away(values: dict[int, float], step: float, contradicting: set[int]) -> int | None:
    """The one view measuring a pair whose own angles contradict each other (`contradicting`),
    when every other view measuring the pair (at least one) is free of that, they agree with one
    another, and it stands apart from them; or None."""
    suspects = [index for index in values if index in contradicting]
    if len(suspects) != 1:
        return None
    odd = suspects[0]
    others = [value for index, value in values.items() if index != odd]
    return odd if _apart_from_agreeing(values[odd], others, step) else None


def outvoted_view(
    model: PuzzleModel, views: Sequence[ViewEvidence | None], fusion: Fusion
) -> tuple[int, str] | None:
    """The view to leave out, with why, when the other views outvote it on every pair the views
    disagree on; None when no pair is disagreed on or the disagreement has no single odd view."""
    disputed = [pair for pair in fusion.pairs if not pair.consistent]
    if not disputed or not fusion.rotations:
        return None
    angles = {
        key: {index: pair.angle_deg for index, pair in readings.items()}
        for key, readings in view_pairs(model, views, fusion.rotations).items()
    }
    contradicting = {
        index
        for index, view in enumerate(views)
        if view is not None and self_contradicting(model, view.fit)
    }
    odd_views = set()
    details = []
    for pair in disputed:
        axis = next(a for a in model.axes if a.name == pair.axis)
        values = angles.get((pair.axis, pair.parts), {})
        odd = _odd_one(values, axis.step_deg)
        given_away = odd is None
        if given_away:
            odd = _given_away(values, axis.step_deg, contradicting)
        if odd is None:
            return None
        odd_views.add(odd)
        others = ", ".join(f"{v:+.1f}" for i, v in sorted(values.items()) if i != odd)
        details.append(
            f"{pair.axis}{list(pair.parts)} {values[odd]:+.1f} degrees against the other "
            f"views' {others}" + (" (it also puts two crossing cuts askew)" if given_away else "")
        )
    if len(odd_views) != 1:
        return None
    return odd_views.pop(), "outvoted on " + "; ".join(details)
