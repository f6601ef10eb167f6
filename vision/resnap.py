"""Views that snap a pair a step apart at the limit, relabelled to the most certain view's snap.

A layer turned about half a step (a cube's 45 degrees, a Pyraminx's 60) is snapped by each
view to its own nearest position: one view reads it at +44.7 degrees with its stickers on the
cells of the aligned layer, another at -45.3 with them a step on. Both saw the layer in the same
place; only the labels differ, and facelets a step apart cannot be fused, so such captures went
to a judge however the pair was judged (corpus c0005, a DNF: -44.9 and +44.0 from its cameras,
on the wrong side of each other by 1 degree).

Relabelling a view's stickers on one side of the pair by that step, as stage 3 does within a
view (`geometry._snap_pairs_consistently`), makes the views describe one puzzle. Which side a
view moved is not known (a 2x2x2's two layers are alike), so each side is tried and the
relabelling kept only where the views' colours contradict each other on no more facelets than
before and the pair is then snapped alike; otherwise nothing changes. The rules engine then
judges the pair at the limit from both sides, as for one view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.fuse import Fusion, ViewEvidence, stated_uncertainty, view_pairs
from judgecam.vision.geometry import GeometryFit, PartAngle
from judgecam.vision.model import AxisModel, PuzzleModel, rotation_about

Fuse = Callable[[Sequence[ViewEvidence | None]], Fusion]


def _relabelled(
    model: PuzzleModel,
    view: ViewEvidence,
    axis: AxisModel,
    parts: Sequence[int],
    steps: int,
    pair_names: tuple[str, str],
) -> ViewEvidence:
    """The view with the stickers on `parts` of `axis` (the pair `pair_names`'s lower or upper
    side, to its end) put on the cells `steps` steps round, their part angles moved to match,
    so that the pair reads `steps` steps less: the same puzzle, labelled as a view that
    snapped the pair the other way would label it."""
    moved = np.isin(axis.facelet_part, list(parts))
    sign = 1 if parts[0] > 0 else -1  # the upper side turns the pair up, the lower side down
    permutation = model.facelet_permutation(
        rotation_about(axis.direction, sign * steps * axis.step_deg)
    )

    def label(facelet: int) -> int:
        return int(permutation[facelet]) if facelet >= 0 and moved[facelet] else facelet

    fit: GeometryFit = view.fit
    axis_index = next(i for i, a in enumerate(model.axes) if a.name == axis.name)
    part_angles = [list(angles) for angles in fit.part_angles]
    if axis_index < len(part_angles):
        for part in parts:
            angle = part_angles[axis_index][part] if part < len(part_angles[axis_index]) else None
            if isinstance(angle, PartAngle):
                delta = sign * steps * axis.step_deg
                part_angles[axis_index][part] = replace(angle, angle_deg=angle.angle_deg - delta)
    pairs = tuple(
        replace(pair, angle_deg=pair.angle_deg - steps * axis.step_deg)
        if pair.axis == axis.name and pair.parts == pair_names
        else pair
        for pair in fit.pairs
    )
    relabelled_fit = replace(
        fit,
        assignment=np.array([label(int(f)) for f in fit.assignment], dtype=np.int64),
        part_angles=tuple(tuple(angles) for angles in part_angles),
        pairs=pairs,
    )
    return ViewEvidence(
        view.facelets,
        relabelled_fit,
        tuple(label(f) for f in view.missing),
        tuple(replace(p, facelet=label(p.facelet)) for p in view.projected),
        tuple(label(f) for f in view.bare),
    )


def _steps_apart(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    rotations: Sequence[NDArray[np.float64] | None],
    key: tuple[str, tuple[int, int]],
) -> dict[int, tuple[int, str, tuple[str, str]]]:
    """Per view measuring the fused pair `key`: how many steps its reading is from the most
    certain view's, and the pair's axis and part names in its own frame (only views steps
    apart)."""
    readings = [
        (stated_uncertainty(pair.sigma_deg), index, pair.angle_deg, pair.axis, pair.parts)
        for index, pair in view_pairs(model, views, rotations).get(key, {}).items()
    ]
    if len(readings) < 2:
        return {}
    step = next(a for a in model.axes if a.name == key[0]).step_deg
    anchor = min(readings)[2]
    apart = {}
    for _, index, angle, axis_name, names in readings:
        steps = int(np.round((angle - anchor) / step))
        if steps != 0:
            apart[index] = (steps, axis_name, names)
    return apart


def resnapped_views(
    model: PuzzleModel, views: Sequence[ViewEvidence | None], fusion: Fusion, fuse: Fuse
) -> tuple[list[ViewEvidence | None], Fusion, str] | None:
    """The views relabelled so that no pair is snapped a step apart, their fusion and a note
    saying which; None if no pair is, or no relabelling leaves the views agreeing."""
    apart_pairs = [pair for pair in fusion.pairs if pair.snapped_apart]
    if len(apart_pairs) != 1 or not fusion.rotations:
        return None  # one pair at a time: two (a slice and its layer) need the slice moved
    (pair,) = apart_pairs
    key = (pair.axis, pair.parts)
    apart = _steps_apart(model, views, fusion.rotations, key)
    if not apart:
        return None
    best: tuple[int, list[ViewEvidence | None], Fusion] | None = None
    for side in ("lower", "upper"):
        relabelled = list(views)
        for index, (steps, axis_name, names) in apart.items():
            view = views[index]
            assert view is not None
            axis, (low, high) = model.axis_and_parts(axis_name, names)
            parts = range(0, low + 1) if side == "lower" else range(high, len(axis.part_names))
            relabelled[index] = _relabelled(model, view, axis, list(parts), steps, names)
        again = fuse(relabelled)
        if any(p.snapped_apart for p in again.pairs) or again.contradicted > fusion.contradicted:
            continue
        if best is None or again.contradicted < best[0]:
            best = (again.contradicted, relabelled, again)
        elif again.contradicted == best[0]:
            return None  # both sides agree as well: the colours cannot say which moved
    if best is None:
        return None
    note = (
        f"pair {pair.axis}{list(pair.parts)} at the snapping boundary: the views that snap it "
        "a step apart from the most certain one are read with its stickers relabelled by that step"
    )
    return best[1], best[2], note
