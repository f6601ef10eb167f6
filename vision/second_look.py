"""Parts one view could not measure, placed there with the angle the other views measured.

A layer whose stickers one camera cannot outline (in the shadow of a turned layer, partly under
its overhang, on a dark face) leaves its angle unmeasured in that view, and `projected` samples
nothing of a part whose angle is unknown: the camera sees those stickers, yet they stay unseen.
When the fused pairs (stage 5, from the other views) give the angle between that part and one
this view did measure, the part can be placed here too. Its facelets are then sampled as any
projected facelet is (mostly its own, facing the camera, as uniform and as set off from the
cell's border as the detected stickers), and the capture is judged again with them.

The other way round, a slice placed so between two layers this view measured may show no
sticker where the borrowed angle puts them, in plain sight on two faces (`contradicted_parts`):
the angle the other views measured is then in doubt, and the capture goes to a judge.

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
from judgecam.vision.projected import CLEAR_FACING, Projection


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


#: A borrowed angle is contradicted by a view that has at least this many of the part's cells in
#: plain sight (`projected.CLEAR_FACING`, their own), on two faces or more, and finds a sticker
#: in none of them. One face's row alone says little: a layer's row along the mat, in its
#: shadow, fails the sticker test with the angle right (corpus c0053; c0026 and c0062 darkened).
MIN_REFUSED_CELLS = 3


def contradicted_parts(
    model: PuzzleModel,
    fit: GeometryFit,
    projection: Projection,
    placed: frozenset[tuple[int, int]],
) -> list[tuple[int, int, int]]:
    """(axis, part, cells) of the parts placed by the other views' angles (`placed`) between two
    parts this view measured (`fit`, its own) where it sees `cells` >= MIN_REFUSED_CELLS of
    them plainly, on two faces or more, and none looks like a sticker.

    The other views' angle would put stickers there, in plain sight of this camera, and the
    layers on either side are seen here: that angle is wrong. Corpus c0006 through a defocused
    lens (a solved 3x3x3, its middle slice 37 degrees out): one view measured the slice at -15
    degrees, the other outlined none of its stickers and, placed at -15, saw none in six cells
    facing it; the colours read at -15 made a DNF. An outer layer is not asked: what covers it
    (a hand, its shadow, a cup in front; four right verdicts on the sets) covers it whole.
    """
    found = []
    for axis, part in sorted(placed):
        own = fit.part_angles[axis]
        if not (
            0 < part < len(own) - 1 and own[part - 1] is not None and own[part + 1] is not None
        ):
            continue
        parts = model.axes[axis].facelet_part
        refused = [facelet for facelet in projection.refused if parts[facelet] == part]
        faces = {int(model.facelet_face[facelet]) for facelet in refused}
        shown = any(
            parts[sample.facelet] == part and sample.facing >= CLEAR_FACING
            for sample in projection.samples
        )
        if len(refused) >= MIN_REFUSED_CELLS and len(faces) >= 2 and not shown:
            found.append((axis, part, len(refused)))
    return found
