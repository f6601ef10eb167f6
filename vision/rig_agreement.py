"""Tight views of a calibrated rig that put the puzzle in different places: one fit is a cell off.

A view that outlines only some columns of a face can fit them as well one cell along as where
they are: the model's grid then lies a cell beside the puzzle, every sticker of the view on the
cell next to its own, and the fit is as tight as a right one (the corpus in frames twice as
large, `evaluate --larger-frame 2`, c0085 cam0: a +2 read DNF from eight stickers a column
off). Nothing in the view itself tells the two apart; the rig does. A camera's fit says well in
which direction the puzzle lies (the centre's pixel) and less well how far: its line of sight
to the fitted centre, seen from another calibrated camera, is a short segment (the distance
within DEPTH_RANGE) that the other view's own fitted centre must lie on. A right pair of fits
on the corpus lies within 0.41 of a sticker of it (median 0.06); c0085's fit a column off lies
1.4 stickers away. A shift along the other camera's line of sight does not show: two cameras
120 degrees apart and 35 degrees above the mat see a fit one cell up (along the mat's z) 0.7
of a sticker off, under the bar; a third camera sees it better. A rig calibrated a degree and
5 mm off moves right pairs up to 1.2 stickers apart (`evaluate --rig-error 1 5`): those go to
a judge too, and the reason says the calibration may be what is off.

With three views or more, the one apart from every other while those agree with one another
is left out (its stickers sit on the wrong cells); otherwise the capture goes to a judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import Intrinsics
from judgecam.vision.geometry import GeometryFit
from judgecam.vision.rig_placed import MAX_DEPTH_ERROR, line_of_sight

FloatArray = NDArray[np.float64]

#: Two views' fits disagree when one's fitted centre lies further than this many of its sticker
#: sizes from the other's line of sight: half-way between a right fit and one a cell (about
#: 1.2 stickers) off, above the corpus's right pairs (at most 0.41).
MAX_SIGHT_OFFSET = 0.75
#: The other camera's distance to the puzzle, as a fraction of its fitted one, that its line of
#: sight is drawn over (three times the distance error a fit may have).
DEPTH_RANGE = (1.0 - 3 * MAX_DEPTH_ERROR, 1.0 + 3 * MAX_DEPTH_ERROR)


@dataclass(frozen=True, eq=False)
class RigView:
    """What the check needs of one tight view: its fit, camera and pose, and sticker size."""

    name: str
    fit: GeometryFit
    intrinsics: Intrinsics
    world_from_camera: FloatArray
    sticker_px: float


def sight_offset(view: RigView, other: RigView) -> float:
    """How far (in `view`'s sticker sizes) `view`'s fitted puzzle centre lies from `other`'s
    line of sight to its own, both seen in `view`'s image."""
    camera_from_world = np.linalg.inv(np.asarray(view.world_from_camera, dtype=np.float64))
    origin = np.asarray(other.world_from_camera, dtype=np.float64)[:3, 3]
    direction = line_of_sight(other.fit, other.world_from_camera)
    distance = float(np.linalg.norm(other.fit.tvec))
    ends = [
        camera_from_world[:3, :3] @ (origin + fraction * distance * direction)
        + camera_from_world[:3, 3]
        for fraction in DEPTH_RANGE
    ]
    own = np.asarray(view.fit.tvec, dtype=np.float64)
    if own[2] <= 0 or any(end[2] <= 0 for end in ends):
        return float("inf")
    matrix = view.intrinsics.camera_matrix
    start, end, centre = (_pixel(point, matrix) for point in (*ends, own))
    along = end - start
    t = float(np.clip((centre - start) @ along / max(float(along @ along), 1e-12), 0.0, 1.0))
    gap = centre - (start + t * along)
    return float(np.hypot(gap[0], gap[1]) / max(view.sticker_px, 1e-6))


def _pixel(point: FloatArray, matrix: FloatArray) -> FloatArray:
    return np.asarray((matrix @ (point / point[2]))[:2], dtype=np.float64)


def _apart(first: RigView, second: RigView) -> float | None:
    """The larger offset of the two views from each other's line of sight, if above the bar."""
    offset = max(sight_offset(first, second), sight_offset(second, first))
    return offset if offset > MAX_SIGHT_OFFSET else None


def rig_disagreement(views: Sequence[RigView | None]) -> tuple[int | None, str] | None:
    """Views (None: not a tight view with a pose) whose fits put the puzzle apart: the index
    of the odd one to leave out (None if it cannot be told) and why; None if all agree."""
    present = [index for index, view in enumerate(views) if view is not None]
    apart: dict[tuple[int, int], float] = {}
    for position, first in enumerate(present):
        for second in present[position + 1 :]:
            first_view, second_view = views[first], views[second]
            assert first_view is not None and second_view is not None
            offset = _apart(first_view, second_view)
            if offset is not None:
                apart[(first, second)] = offset
    if not apart:
        return None
    for odd in present:
        others = [index for index in present if index != odd]
        named = [pair for pair in apart if odd in pair]
        if len(others) >= 2 and len(named) == len(others) == len(apart):
            view = views[odd]
            assert view is not None
            offset = min(apart[pair] for pair in named)
            return odd, (
                f"its fit puts the puzzle {offset:.1f} stickers off the other cameras' lines of "
                "sight to it (rig poses), which agree with one another: its stickers are on "
                "cells a cell or more off"
            )
    (first, second), offset = max(apart.items(), key=lambda item: item[1])
    first_view, second_view = views[first], views[second]
    assert first_view is not None and second_view is not None
    return None, (
        f"{first_view.name} and {second_view.name} put the puzzle {offset:.1f} stickers apart "
        "(each fit's centre against the other camera's line of sight to its own, rig poses): "
        "one of them placed its stickers a cell or more off, or the rig's calibration is off"
    )
