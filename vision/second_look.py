"""Parts one view could not measure, placed there with the angle the other views measured.

A layer whose stickers one camera cannot outline (in the shadow of a turned layer, partly under
its overhang, on a dark face) leaves its angle unmeasured in that view, and `projected` samples
nothing of a part whose angle is unknown: the camera sees those stickers, yet they stay unseen.
When the fused pairs (stage 5, from the other views) give the angle between that part and one
this view did measure, the part can be placed here too. Its facelets are then sampled as any
projected facelet is (mostly its own, facing the camera, as uniform and as set off from the
cell's border as the detected stickers), and the capture is judged again with them.

Only pairs the views agree on are borrowed. Near the snapping boundary (a layer turned about
half a step) this is still consistent: the one view that measured the pair decided which
position the part is snapped to, and the facelets sampled here are named by that same position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.fuse import FusedPair, _map_pair
from judgecam.vision.geometry import GeometryFit, PartAngle
from judgecam.vision.model import PuzzleModel


def borrowed_angles(
    model: PuzzleModel,
    fit: GeometryFit,
    rotation: NDArray[np.float64],
    pairs: Sequence[FusedPair],
) -> tuple[GeometryFit, frozenset[tuple[int, int]]] | None:
    """`fit` with the angles of its unmeasured parts taken from the fused pairs that join them to
    a measured part (chained along an axis), and the (axis, part) indices so placed; None if no
    part could be placed. `rotation` maps this view's model frame to the fused frame."""
    fused = {(pair.axis, pair.parts): pair for pair in pairs if pair.consistent}
    angles = [list(axis_angles) for axis_angles in fit.part_angles]
    placed: set[tuple[int, int]] = set()
    for axis_index, axis in enumerate(model.axes):
        changed = True
        while changed:
            changed = False
            for lower, upper in axis.pairs:
                first, second = angles[axis_index][lower], angles[axis_index][upper]
                if (first is None) == (second is None):
                    continue
                pair = fused.get(_map_pair(model, rotation, axis.name, (lower, upper)))
                if pair is None:
                    continue
                sigma = pair.uncertainty_deg / 2.0
                if second is None and first is not None:
                    angles[axis_index][upper] = PartAngle(
                        first.angle_deg + pair.angle_deg, sigma, 0
                    )
                    placed.add((axis_index, upper))
                elif first is None and second is not None:
                    angles[axis_index][lower] = PartAngle(
                        second.angle_deg - pair.angle_deg, sigma, 0
                    )
                    placed.add((axis_index, lower))
                changed = True
    if not placed:
        return None
    return replace(fit, part_angles=tuple(tuple(a) for a in angles)), frozenset(placed)
