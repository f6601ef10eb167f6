"""Sticker outlines moved onto the image's edges: sub-pixel corners free of threshold bias.

Stage 2 outlines a sticker from a thresholded mask. Its sides sit inside the real edge by an
amount that depends on the contrast on each side (a dark gap, a bright bevel, glare, a shadow),
so the corners, where two sides meet, move by different amounts; where a highlight cut the
mask short, a whole side lies a third of the sticker inside. A Pyraminx tip's angle is measured
from one or two small triangles close to its axis, and there those uneven shifts were most of
the error: with the renderer's own outlines the corpus tips' p95 error is 1.5 degrees instead
of 4.8. Here every side is searched across its normal for the edge, where the colour departs
fastest from the sticker's own (sub-pixel, from the peak of that rise); a line through those
edge points replaces the side, and the corners are where the lines cross. A side whose edge is
not clear keeps its line; an outline that would not be a plausible version of the old one (a
corner moved far, the area changed a lot, grown over a neighbouring outline) stays as it was.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

#: Points searched along each side, between these fractions of its length (the rounded
#: corners bend the outline near the ends).
SIDE_SAMPLES = 9
SIDE_SPAN = (0.2, 0.8)
#: Samples across a side, from INWARD_FRACTION of the side's length inside the outline to
#: OUTWARD_FRACTION outside it (each at least MIN_SEARCH_PX, at most its MAX_*_PX pixels).
ACROSS_SAMPLES = 41
INWARD_FRACTION = 0.15
MAX_INWARD_PX = 8.0
#: Outwards the search goes further: a thresholded outline lies inside the edge, by up to a
#: third of a side where a bevel's highlight or a shadow cut it short.
OUTWARD_FRACTION = 0.35
MAX_OUTWARD_PX = 16.0
MIN_SEARCH_PX = 2.5
#: Inwards the search reaches at most this fraction of the way from a side to the outline's
#: centre (a thin sliver's other side must stay out of reach).
INNER_REACH = 0.5
#: The innermost part of the profiles (this fraction of the samples) gives the sticker's own
#: colour (their median over the whole outline).
OWN_COLOUR_SAMPLES = 0.25
#: The edge is the first rise, going outwards, of at least this fraction of the profile's
#: strongest (a bright bevel beyond the dark gap rises too, further out) ...
FIRST_RISE = 0.5
#: ... and it counts when the colour changes by at least this much (BGR distance) over that
#: whole rise (however blurred): below, the side borders something of about its own colour.
MIN_STEP = 12.0
#: A side is moved only when this many of its points found an edge ...
MIN_EDGE_POINTS = 4
#: ... the line through them refitted without those further than this (pixels) from it.
MAX_LINE_RESIDUAL_PX = 1.0
#: No corner may move more than this fraction of the outline's longest side, and the area
#: must stay within these ratios of the old one's.
MAX_CORNER_SHIFT = 0.5
AREA_RATIO_RANGE = (0.5, 3.0)
#: `cv2.remap` takes maps under 32767 pixels on a side: the samples go in rows this long.
REMAP_WIDTH = 4096


def snap_to_edges(image: NDArray[np.uint8], outlines: list[FloatArray]) -> list[FloatArray]:
    """Each outline (K, 2) of a BGR image's stickers, all with the same K, with its sides
    moved onto the image's edges (those that stay implausible are returned unchanged)."""
    if not outlines:
        return []
    corners = np.stack(outlines).astype(np.float64)  # (P, K, 2)
    count, sides = corners.shape[:2]
    vectors = np.roll(corners, -1, axis=1) - corners
    lengths = np.linalg.norm(vectors, axis=2)  # (P, K)
    directions = vectors / np.maximum(lengths, 1e-9)[..., None]
    normals = np.stack([directions[..., 1], -directions[..., 0]], axis=2)
    centres = corners.mean(axis=1)
    midpoints = corners + vectors / 2.0
    # Outward normals, whichever way round the outline goes.
    outward = np.sum((midpoints - centres[:, None]) * normals, axis=2) < 0
    normals[outward] *= -1.0
    depth = np.sum((corners - centres[:, None]) * normals, axis=2)  # side to centre, > 0
    inward = np.minimum(
        np.clip(INWARD_FRACTION * lengths, MIN_SEARCH_PX, MAX_INWARD_PX), INNER_REACH * depth
    )
    outward_reach = np.clip(OUTWARD_FRACTION * lengths, MIN_SEARCH_PX, MAX_OUTWARD_PX)
    # Offsets across each side (P, K, A), negative inwards; points along it (P, K, S, 2).
    across = -inward[..., None] + (inward + outward_reach)[..., None] * np.linspace(
        0.0, 1.0, ACROSS_SAMPLES
    )
    along = (
        corners[:, :, None] + vectors[:, :, None] * np.linspace(*SIDE_SPAN, SIDE_SAMPLES)[:, None]
    )
    points = along[:, :, :, None] + across[:, :, None, :, None] * normals[:, :, None, None]
    samples = _sample(image, points.reshape(-1, 2)).reshape(
        count, sides, SIDE_SAMPLES, ACROSS_SAMPLES, -1
    )
    innermost = samples[:, :, :, : round(OWN_COLOUR_SAMPLES * ACROSS_SAMPLES)]
    own = np.median(innermost.reshape(count, -1, samples.shape[-1]), axis=1)
    difference = samples - own[:, None, None, None]
    # (P, K, S, A); summed by channel (a reduction over a last axis of 3 is slow in numpy).
    departure = np.sqrt(sum(difference[..., channel] ** 2 for channel in range(samples.shape[4])))
    at = _edge_positions(departure)  # (P, K, S) in samples, NaN where no edge
    spacing = (inward + outward_reach) / (ACROSS_SAMPLES - 1)
    offset = -inward[..., None] + spacing[..., None] * at
    edge_points = along + offset[..., None] * normals[:, :, None]
    moved = _moved_outlines(corners, edge_points, midpoints, directions)
    return [
        moved[index] if keep else corners[index]
        for index, keep in enumerate(_plausible(corners, centres, moved, lengths))
    ]


def _sample(image: NDArray[np.uint8], points: FloatArray) -> NDArray[np.float32]:
    """Bilinear samples (N, channels) of the image at points (N, 2); only the part of the
    frame they cover is converted to floats."""
    count = len(points)
    height, width = image.shape[:2]
    xs, ys = points[:, 0], points[:, 1]  # (a reduction along axis 0 of (N, 2) is slow)
    x0 = min(max(int(np.floor(xs.min())) - 1, 0), width - 1)
    y0 = min(max(int(np.floor(ys.min())) - 1, 0), height - 1)
    x1 = min(max(int(np.ceil(xs.max())) + 2, x0 + 1), width)
    y1 = min(max(int(np.ceil(ys.max())) + 2, y0 + 1), height)
    crop = np.asarray(image[y0:y1, x0:x1], np.float32)
    rows = -(-count // REMAP_WIDTH)
    padded = np.zeros((rows * REMAP_WIDTH, 2), np.float32)
    padded[:count] = points - [x0, y0]
    grid = padded.reshape(rows, REMAP_WIDTH, 2)
    sampled = cv2.remap(
        crop, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.asarray(sampled, np.float32).reshape(rows * REMAP_WIDTH, -1)[:count]


def _edge_positions(departure: FloatArray) -> FloatArray:
    """Per profile of the colour's departure from the sticker's (.., A), the sub-sample
    position of the edge (`FIRST_RISE`, `MIN_STEP`), NaN where none is clear."""
    shape = departure.shape[:-1]
    profiles = departure.reshape(-1, departure.shape[-1])
    # Smoothed across the side ([1, 2, 1] / 4: symmetric, so the edge does not move), so that
    # the image's noise does not break a blurred edge's rise into pieces.
    profiles = np.concatenate(
        [
            profiles[:, :1],
            (profiles[:, :-2] + 2.0 * profiles[:, 1:-1] + profiles[:, 2:]) / 4.0,
            profiles[:, -1:],
        ],
        axis=1,
    )
    rise = np.diff(profiles, axis=1)  # rise[i] lies between samples i and i + 1
    steps = rise.shape[1]
    rows = np.arange(len(rise))
    first = np.argmax(rise >= FIRST_RISE * rise.max(axis=1, keepdims=True), axis=1)
    index = np.arange(steps)
    # Up that first rise to its top (a blurred edge spans several samples): the first sample
    # from there on whose next rise is no larger.
    following = np.concatenate([rise[:, 1:], np.full((len(rise), 1), -np.inf)], axis=1)
    top = (index >= first[:, None]) & (following <= rise)
    peak = np.where(top, index, steps - 1).min(axis=1)
    centre = rise[rows, peak]
    before = rise[rows, np.maximum(peak - 1, 0)]
    after = rise[rows, np.minimum(peak + 1, steps - 1)]
    curvature = before - 2.0 * centre + after
    vertex = np.divide(
        0.5 * (before - after), curvature, out=np.zeros_like(centre), where=curvature < 0
    )
    position = peak + 0.5 + np.clip(vertex, -0.5, 0.5)
    # The whole rise the peak is on, however blurred: out to either side while it rises.
    flat = rise <= 0
    start = np.where(flat & (index < peak[:, None]), index, -1).max(axis=1) + 1
    end = np.where(flat & (index > peak[:, None]), index, steps).min(axis=1) - 1
    step = profiles[rows, end + 1] - profiles[rows, start]
    clear = (peak > 0) & (peak < steps - 1) & (step >= MIN_STEP)
    return np.where(clear, position, np.nan).reshape(shape)


def _moved_outlines(
    corners: FloatArray, edge_points: FloatArray, midpoints: FloatArray, directions: FloatArray
) -> FloatArray:
    """Corners (P, K, 2) where the lines through each side's edge points cross; a side with
    too few keeps its own line (its midpoint, its direction), an outline where no side found
    its edge keeps its corners (NaN where two lines are parallel)."""
    centre, direction, found = _side_lines(edge_points)
    centre = np.where(found[..., None], centre, midpoints)
    direction = np.where(found[..., None], direction, directions)
    # Corner k is where side k - 1 meets side k.
    (x1, y1), (u1, v1) = (
        np.moveaxis(np.roll(centre, 1, axis=1), 2, 0),
        np.moveaxis(np.roll(direction, 1, axis=1), 2, 0),
    )
    (x2, y2), (u2, v2) = np.moveaxis(centre, 2, 0), np.moveaxis(direction, 2, 0)
    determinant = v1 * u2 - u1 * v2
    parallel = np.abs(determinant) < 1e-6
    along = np.divide(
        (y2 - y1) * u2 - (x2 - x1) * v2,
        determinant,
        out=np.full_like(determinant, np.nan),
        where=~parallel,
    )
    moved = np.stack([x1 + along * u1, y1 + along * v1], axis=2)
    unchanged = ~found.any(axis=1)
    moved[unchanged] = corners[unchanged]
    return moved


def _side_lines(points: FloatArray) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """Per side (P, K) of edge points (P, K, S, 2; NaN where none): the total least squares
    line's centre and unit direction, refitted once without the points further than
    MAX_LINE_RESIDUAL_PX from the first fit, and whether there were MIN_EDGE_POINTS both
    times (the closed form of `quads._side_line`, for every side at once)."""
    valid = np.all(np.isfinite(points), axis=3)
    filled = np.where(valid[..., None], points, 0.0)
    found = np.ones(valid.shape[:2], bool)
    for refit in (False, True):
        count = valid.sum(axis=2)
        found &= count >= MIN_EDGE_POINTS
        weight = valid / np.maximum(count, 1)[..., None]
        centre = np.einsum("pks,pksc->pkc", weight, filled)
        dx, dy = np.moveaxis((filled - centre[:, :, None]) * valid[..., None], 3, 0)
        angle = 0.5 * np.arctan2(
            2.0 * np.sum(dx * dy, axis=2), np.sum(dx * dx, axis=2) - np.sum(dy * dy, axis=2)
        )
        direction = np.stack([np.cos(angle), np.sin(angle)], axis=2)
        if not refit:
            residual = np.abs(dx * direction[..., 1:2] - dy * direction[..., 0:1])
            valid = valid & (residual <= MAX_LINE_RESIDUAL_PX)
    return centre, direction, found


def _plausible(
    corners: FloatArray, centres: FloatArray, moved: FloatArray, lengths: FloatArray
) -> NDArray[np.bool_]:
    """Per outline, whether its moved version (`_moved_outlines`) may replace it: it did
    move, no corner went further than MAX_CORNER_SHIFT of the longest side, the area stayed
    within AREA_RATIO_RANGE, it is convex the same way round and holds the old centre, and
    it did not grow over another outline's centre (the edge found was beyond that one)."""
    finite = np.all(np.isfinite(moved), axis=(1, 2))
    moved = np.where(finite[:, None, None], moved, corners)
    changed = np.any(moved != corners, axis=(1, 2))
    shift = np.linalg.norm(moved - corners, axis=2).max(axis=1)
    near = shift <= MAX_CORNER_SHIFT * lengths.max(axis=1)
    old_area, new_area = _area(corners), _area(moved)
    ratio = np.divide(new_area, old_area, out=np.zeros_like(old_area), where=old_area != 0)
    sized = (AREA_RATIO_RANGE[0] <= ratio) & (ratio <= AREA_RATIO_RANGE[1])
    edges = np.roll(moved, -1, axis=1) - moved
    turns = (
        edges[..., 0] * np.roll(edges, -1, axis=1)[..., 1]
        - edges[..., 1] * np.roll(edges, -1, axis=1)[..., 0]
    )
    convex = np.all(turns * np.sign(old_area)[:, None] > 0, axis=1)
    inside = _inside(moved, centres, np.sign(old_area))  # (P outlines, P centres)
    own_centre = np.diagonal(inside)
    others = inside & ~np.eye(len(corners), dtype=bool)
    return finite & changed & near & sized & convex & own_centre & ~others.any(axis=1)


def _area(outlines: FloatArray) -> FloatArray:
    """Signed areas (shoelace) of outlines (P, K, 2)."""
    x, y = outlines[..., 0], outlines[..., 1]
    return 0.5 * np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1)


def _inside(outlines: FloatArray, points: FloatArray, orientation: FloatArray) -> NDArray[np.bool_]:
    """(P, N): whether each point lies inside (or on) each convex outline, whose corners go
    round the way `orientation` (the sign of its area) says."""
    edges = np.roll(outlines, -1, axis=1) - outlines  # (P, K, 2)
    relative = points[None, :, None, :] - outlines[:, None, :, :]  # (P, N, K, 2)
    cross = edges[:, None, :, 0] * relative[..., 1] - edges[:, None, :, 1] * relative[..., 0]
    return np.all(cross * orientation[:, None, None] >= 0, axis=2)
