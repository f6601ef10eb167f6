"""A tight fit of a puzzle that stage 2's window cut off, looked at again whole.

Stage 2 looks 1.5 stickers around the patches stage 1 found on a 640-pixel copy. Stage 1 can
miss a face whose gaps are thin there (a Pyraminx from above, its faces at a slant: corpus
c0009's top view outlines the red face and half the blue one, and stage 2's window ends a
sticker short of the green face). The stickers in the window can still fit tightly, and the
fit then says where the rest of the puzzle is: its silhouette reaches past the window
(`pipeline._whole_puzzle_region`). Looked at over the whole silhouette, the same puzzle shows
more stickers, and the parts on them get measured.

More patches can also fit a puzzle differently (a rig3 render, 4242 c0028: a slice measured at
22.8 degrees over the grown window, at 0 in the first): the second fit replaces the first only
if it extends it (`extends`): it places more stickers, its body lies where the first put it,
and every pair both measure agrees within their stated uncertainties.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import rotation_matrix
from judgecam.vision.fuse import _map_pair, _wrap, nearest_symmetry, stated_uncertainty
from judgecam.vision.geometry import GeometryFit
from judgecam.vision.model import PuzzleModel

FloatArray = NDArray[np.float64]

#: The second fit must place at least this many more stickers than the first ...
MIN_MORE_PLACED = 2
#: ... with its body turned at most this far (degrees) from the first's, up to the puzzle's
#: symmetry, and its centre within this fraction of the puzzle's distance of the first's.
MAX_BODY_TURN_DEG = 3.0
MAX_CENTRE_SHIFT = 0.02


def extends(model: PuzzleModel, first: GeometryFit, second: GeometryFit) -> bool:
    """Whether `second` (a tight fit over a grown window) is `first` (a tight fit) with more
    of the same puzzle placed: more stickers, the same body pose, the same common pairs."""
    if not second.found:
        return False
    if int(np.sum(second.assignment >= 0)) < int(np.sum(first.assignment >= 0)) + MIN_MORE_PLACED:
        return False
    relative, turn = nearest_symmetry(
        model, rotation_matrix(first.rvec), rotation_matrix(second.rvec)
    )
    if turn > MAX_BODY_TURN_DEG:
        return False
    distance = float(np.linalg.norm(first.tvec))
    if float(np.linalg.norm(second.tvec - first.tvec)) > MAX_CENTRE_SHIFT * distance:
        return False
    return _pairs_agree(model, first, second, relative)


def _pairs_agree(
    model: PuzzleModel, first: GeometryFit, second: GeometryFit, relative: FloatArray
) -> bool:
    """Whether every pair both fits measure has the same angle within the two stated
    uncertainties (combined), `second`'s read in `first`'s frame (`relative`: the symmetry
    from the one to the other)."""
    theirs = {}
    for pair in second.pairs:
        parts = model.axis_and_parts(pair.axis, pair.parts)[1]
        theirs[_map_pair(model, relative, pair.axis, parts)] = pair
    for pair in first.pairs:
        axis, parts = model.axis_and_parts(pair.axis, pair.parts)
        other = theirs.get((pair.axis, parts))
        if other is None:
            continue
        gap = _wrap(other.angle_deg - pair.angle_deg, axis.step_deg)
        allowed = np.hypot(stated_uncertainty(pair.sigma_deg), stated_uncertainty(other.sigma_deg))
        if abs(gap) > allowed:
            return False
    return True
