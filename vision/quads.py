"""Find sticker-like convex polygons (quads, triangles) in an image.

Stickers and stickerless tiles are bright, convex, flat-coloured patches separated by darker
gaps (the black body or the thin grooves between tiles). A local threshold on brightness
(pixel brighter than its neighbourhood's mean minus a margin) separates patches from gaps at any
exposure; each connected patch that is well approximated by a convex polygon with the puzzle's
number of corners is a candidate. The polygon corners are refined by fitting straight lines to
the patch outline, which is what makes the angle measurement sub-pixel.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)

FloatPoint = NDArray[np.float64]

#: Least area / convex hull area of a patch: triangles lose more to their acute corners.
MIN_SOLIDITY: dict[int, float] = {3: 0.78, 4: 0.85}
#: Canny hysteresis thresholds (L2 gradient of the 3x3-smoothed 8-bit image). Sticker outlines
#: against the body or a groove are steps of 50+ levels; these only need to be below that and
#: above sensor noise.
EDGE_LOW = 20.0
EDGE_HIGH = 60.0
#: Two triangles of one colour side by side whose gap is too thin to show outline one
#: parallelogram: a Pyraminx face seen at a slant narrows the gaps that run across its tilt
#: (corpus c0158's top view: its yellow face outlined as parallelograms, not one triangle).
#: A four-cornered outline looked for as triangles, whose opposite sides are parallel and of one
#: length within PAIR_SIDE_TOLERANCE (of the longer), is split into its two triangles along the
#: diagonal where the gap still shows: darker by PAIR_GAP_CONTRAST (a fraction of its brightness)
#: than the other diagonal, which crosses the two triangles' insides (and the gap only at the
#: middle, which is not looked at). A parallelogram of one sticker shows no such diagonal.
PAIR_SIDE_TOLERANCE = 0.2
PAIR_GAP_CONTRAST = 0.1
#: Along a diagonal, the gap is looked for at these fractions of its length (the middle, where
#: both diagonals cross, and the corners, where the outline rounds, left out), each point the
#: darkest within PAIR_GAP_REACH pixels across the diagonal (a rough corner is a pixel or two
#: off, and the gap may be one pixel wide).
PAIR_GAP_FRACTIONS = (0.15, 0.22, 0.29, 0.36, 0.64, 0.71, 0.78, 0.85)
PAIR_GAP_REACH = 2


@dataclass(frozen=True, eq=False)
class Patch:
    """A convex bright patch: polygon corners (K, 2) in pixels, ordered clockwise on screen."""

    corners: NDArray[np.float64]
    area: float  # pixels
    fill: float  # contour area / polygon area (1 for a clean sticker)
    center: NDArray[np.float64] = field(init=False)

    def __post_init__(self) -> None:
        # np.add.reduce / count is corners.mean(axis=0) without np.mean's Python overhead.
        center = np.add.reduce(self.corners, axis=0) / len(self.corners)
        object.__setattr__(self, "center", np.asarray(center, dtype=np.float64))

    @property
    def size(self) -> float:
        """Square root of the area: the patch's typical edge length in pixels."""
        return float(np.sqrt(self.area))


#: A one-pixel-high, three-wide kernel: on an image's rows read as B, G, R, B, G, R, ... bytes,
#: a dilation anchored at its left end takes each byte's maximum with the next two.
_CHANNEL_MAX_KERNEL = np.ones((1, 3), np.uint8)


def brightness(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Per-pixel max(B, G, R): high on every sticker colour, low on the black body.

    Read as one channel of 3 * width bytes a row, a 1x3 dilation anchored at the left puts
    max(B, G, R) at each pixel's first byte; those bytes are taken out. One pass over the frame
    instead of a split into three planes and two maxima (a quarter of the time at 1280x720).
    """
    height, width = image.shape[:2]
    rows = np.ascontiguousarray(image).reshape(height, width * 3)
    spread = cv2.dilate(rows, _CHANNEL_MAX_KERNEL, anchor=(0, 0), borderType=cv2.BORDER_REPLICATE)
    return np.asarray(cv2.extractChannel(spread.reshape(height, width, 3), 0), dtype=np.uint8)


def patch_mask(value: NDArray[np.uint8], block: int, margin: float) -> NDArray[np.uint8]:
    """Pixels not darker than their neighbourhood mean by more than `margin` (255 = patch)."""
    block = max(3, block | 1)
    mask = cv2.adaptiveThreshold(
        value, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, float(margin)
    )
    # A one-pixel opening removes speckle so that thin gaps stay gaps.
    kernel = np.ones((3, 3), np.uint8)
    return np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel), dtype=np.uint8)


def _polygon_from_hull(hull: NDArray[np.float32], sides: int) -> NDArray[np.float32] | None:
    """Approximate a convex hull by a polygon with exactly `sides` corners, if one fits."""
    perimeter = cv2.arcLength(hull, True)
    for fraction in (0.02, 0.04, 0.06, 0.09, 0.12):
        polygon = cv2.approxPolyDP(hull, fraction * perimeter, True)
        if len(polygon) == sides:
            return np.asarray(polygon.reshape(-1, 2), dtype=np.float32)
        if len(polygon) < sides:
            return None
    return None


def _refine_corners(
    polygon: NDArray[np.float32], outline: NDArray[np.float32]
) -> NDArray[np.float64]:
    """Intersect straight lines fitted to the outline points nearest each polygon side (the
    rough corners where that fails, see `_refined_corners`)."""
    refined = _refined_corners(polygon, outline)
    return polygon.astype(np.float64) if refined is None else refined


def _refined_corners(
    polygon: NDArray[np.float32], outline: NDArray[np.float32]
) -> NDArray[np.float64] | None:
    """`_refine_corners`, or None where it fails: a side too short or with too few outline
    points, two sides parallel, or a refined corner far from its rough one."""
    starts = polygon.astype(np.float64)
    lines = _outline_side_lines(starts, outline)
    if lines is None:
        return None
    corners = []
    for side in range(len(starts)):
        corner = _intersection(lines[side - 1], lines[side])
        if corner is None:
            return None
        corners.append(corner)
    refined = np.array(corners, dtype=np.float64)
    # The refined corners must stay close to the rough ones.
    following = np.arange(1, len(starts) + 1) % len(starts)
    vectors = starts[following] - starts
    lengths = np.sqrt(vectors[:, 0] * vectors[:, 0] + vectors[:, 1] * vectors[:, 1])
    if np.abs(refined - starts).max() > 0.25 * lengths.min():
        return None
    return refined


_Line = tuple[float, float, float, float]  # a point (x, y) on it and its unit direction (u, v)


def _outline_side_lines(
    starts: NDArray[np.float64], outline: NDArray[np.float32]
) -> list[_Line] | None:
    """A straight line fitted to the outline points nearest each side of the polygon `starts`
    (side k from corner k to k + 1); None if a side is too short or has too few points."""
    sides = len(starts)
    following = np.arange(1, sides + 1) % sides
    vectors = starts[following] - starts
    lengths = np.sqrt(vectors[:, 0] * vectors[:, 0] + vectors[:, 1] * vectors[:, 1])
    if lengths.min() < 2:
        return None
    points = outline.astype(np.float64)
    # Position along and distance from every side's line, for every outline point (one
    # coordinate at a time: contiguous (n, K) arrays instead of strided (n, K, 2) ones).
    direction_x, direction_y = vectors[:, 0] / lengths, vectors[:, 1] / lengths
    relative_x = points[:, :1] - starts[:, 0]
    relative_y = points[:, 1:] - starts[:, 1]
    along = (relative_x * direction_x + relative_y * direction_y) / lengths
    across = np.abs(relative_x * direction_y - relative_y * direction_x)
    outside = np.maximum(-along, 0.0) + np.maximum(along - 1, 0.0)
    owner = np.argmin(across + outside * lengths, axis=1)
    # Ignore points near the corners, where rounded sticker corners bend the outline.
    chosen = (owner[:, None] == np.arange(sides)) & (along > 0.15) & (along < 0.85)
    selected = [points[chosen[:, side]] for side in range(sides)]
    if min(len(points_of_side) for points_of_side in selected) < 4:
        return None
    return [_side_line(points_of_side) for points_of_side in selected]


def _intersection(first: _Line, second: _Line) -> tuple[float, float] | None:
    """Where two lines cross; None if they are (nearly) parallel."""
    (x1, y1, u1, v1), (x2, y2, u2, v2) = first, second
    determinant = u1 * (-v2) - v1 * (-u2)
    if abs(determinant) < 1e-6:
        return None
    s = ((x2 - x1) * (-v2) - (y2 - y1) * (-u2)) / determinant
    return x1 + s * u1, y1 + s * v1


def _side_line(selected: NDArray[np.float64]) -> tuple[float, float, float, float]:
    """Centre (x, y) and unit direction (u, v) of the total least squares line through points:
    the principal direction of the points (closed form)."""
    centre = np.add.reduce(selected, axis=0) / len(selected)  # = selected.mean(axis=0)
    dx, dy = (selected - centre).T
    angle = 0.5 * np.arctan2(2.0 * float(dx @ dy), float(dx @ dx) - float(dy @ dy))
    return float(centre[0]), float(centre[1]), float(np.cos(angle)), float(np.sin(angle))


def find_patches(
    image: NDArray[np.uint8],
    *,
    sides: int = 4,
    block: int | None = None,
    margin: float = 6.0,
    min_area: float = 80.0,
    max_area_fraction: float = 0.05,
    refine: bool = True,
    method: str = "both",
    size_range: tuple[float, float] | None = None,
    value: NDArray[np.uint8] | None = None,
) -> tuple[Patch, ...]:
    """Every convex bright patch with `sides` corners in a BGR image.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), uint8 BGR
    sides : 4 for cube stickers, 3 for Pyraminx stickers.
    block : neighbourhood size (pixels) of the local threshold; about two sticker widths works.
        Defaults to 1/12 of the shorter image side.
    refine : fit lines to the outline for sub-pixel corners (skip for a quick first look).
    method : "edges" (regions enclosed by colour edges), "brightness" (patches brighter than
        their surroundings) or "both" (the union, one patch per sticker).
    size_range : keep only patches whose size (square root of area) lies in this range.
    value : `brightness(image)`, if the caller has it already (it is not computed again).
    """
    height, width = image.shape[:2]
    if block is None:
        block = max(15, min(height, width) // 12)
    masks = []
    if method in ("edges", "both"):
        edges = canny_edges(image)
        masks.append(edge_regions(image, edges=edges))
    if method in ("brightness", "both"):
        if value is None:
            value = brightness(image)
        smooth = np.asarray(cv2.GaussianBlur(value, (3, 3), 0), dtype=np.uint8)
        masks.append(patch_mask(smooth, block, margin))
    max_area = max_area_fraction * height * width
    rough: list[_Rough] = []
    pairs: list[_Rough] = []
    for mask in masks:
        # The outlines as they come (int32 arrays): hundreds a mask, most of them too short.
        contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
        outlines = cast("Sequence[NDArray[np.int32]]", contours)
        rough.extend(_rough_polygons(outlines, sides, min_area, max_area, size_range, pairs))
    if pairs:
        if value is None:
            value = brightness(image)
        for pair in pairs:
            rough.extend(_split_pair(pair, value, refine, min_area))
    kept = _deduplicate(rough)
    patches = []
    for candidate in kept:
        corners = (
            _refine_corners(candidate.polygon, candidate.outline)
            if refine
            else candidate.polygon.astype(np.float64)
        )
        patches.append(Patch(corners=_clockwise(corners), area=candidate.area, fill=candidate.fill))
    logger.debug("found %d patches with %d sides", len(patches), sides)
    return tuple(patches)


@dataclass(frozen=True, eq=False)
class _Rough:
    """A polygon before corner refinement, with the outline it came from."""

    polygon: NDArray[np.float32]
    outline: NDArray[np.float32]
    area: float
    fill: float


def canny_edges(
    image: NDArray[np.uint8], low: float = EDGE_LOW, high: float = EDGE_HIGH
) -> NDArray[np.uint8]:
    """Canny edges (255) of the 3x3-smoothed BGR image (strongest channel gradient)."""
    smooth = cv2.GaussianBlur(image, (3, 3), 0)
    return np.asarray(cv2.Canny(smooth, low, high, L2gradient=True), dtype=np.uint8)


def edge_regions(
    image: NDArray[np.uint8], thickness: int = 3, edges: NDArray[np.uint8] | None = None
) -> NDArray[np.uint8]:
    """Pixels not on a colour edge (255): regions enclosed by Canny edges of the BGR image.

    Sticker outlines are strong colour edges whether the gap around them is dark (a black body),
    bright (a glossy bevel catching the light) or just another colour (stickerless tiles). The
    edges are thickened to `thickness` pixels so that small breaks in them are closed.
    """
    if edges is None:
        edges = canny_edges(image)
    thick = cv2.dilate(edges, np.ones((thickness, thickness), np.uint8))
    return np.asarray(cv2.bitwise_not(thick), dtype=np.uint8)


def _deduplicate(candidates: list[_Rough]) -> list[_Rough]:
    """Keep one polygon per sticker when several masks found it (the one closest to a polygon)."""
    if not candidates:
        return []
    order = sorted(
        range(len(candidates)),
        key=lambda i: abs(candidates[i].fill - 1.0),
    )
    polygons = [candidates[i].polygon for i in order]
    centers = np.array([np.add.reduce(polygon, axis=0) / len(polygon) for polygon in polygons])
    sizes = np.sqrt(np.array([candidates[i].area for i in order]))
    # Every pair at once (row k, column j: polygon j seen from polygon k), then the greedy pass
    # in plain Python.
    offset_x = centers[None, :, 0] - centers[:, None, 0]
    offset_y = centers[None, :, 1] - centers[:, None, 1]
    gaps = np.sqrt(offset_x * offset_x + offset_y * offset_y)
    close = (gaps <= 0.35 * np.minimum(sizes[None, :], sizes[:, None])).tolist()
    kept: list[int] = []
    for k, near in enumerate(close):
        if not any(near[j] for j in kept):
            kept.append(k)
    return [candidates[order[k]] for k in kept]


def _rough_polygons(
    contours: Sequence[NDArray[np.int32]],
    sides: int,
    min_area: float,
    max_area: float,
    size_range: tuple[float, float] | None = None,
    pairs: list[_Rough] | None = None,
) -> list[_Rough]:
    """Outlines approximated by convex polygons of `sides` corners, of an area in range and a
    size (square root of area) in `size_range`, checked before the hull: the hull of a long
    outline (a large blob of the wrong size) costs the most. Looking for triangles, outlines
    that are parallelograms instead go to `pairs` (see PAIR_SIDE_TOLERANCE)."""
    found = []
    # A closed outline of n pixel steps (each at most sqrt(2) long) encloses at most
    # n^2 / (2 pi) pixels (the isoperimetric inequality): shorter ones are too small to measure.
    shortest = max(3 * sides, int(np.ceil(np.sqrt(2.0 * np.pi * min_area))) - 1)
    for contour in contours:
        if len(contour) < shortest:
            continue
        area = cv2.contourArea(contour)
        if area < min_area or area > max_area:
            continue
        if size_range is not None and not size_range[0] <= math.sqrt(area) <= size_range[1]:
            continue
        hull = cv2.convexHull(contour)
        hull_area = cv2.contourArea(hull)
        if hull_area <= 0 or area / hull_area < MIN_SOLIDITY.get(sides, 0.85):
            continue
        filled = _filled_polygon(hull, sides, area)
        if filled is None:
            if sides == 3 and pairs is not None:
                pair = _parallelogram(hull, contour, area, area / hull_area)
                if pair is not None:
                    pairs.append(pair)
            continue
        polygon, fill = filled
        sides_px = polygon[np.arange(1, sides + 1) % sides] - polygon
        edges = np.sqrt(sides_px[:, 0] * sides_px[:, 0] + sides_px[:, 1] * sides_px[:, 1])
        if edges.min() < 0.2 * edges.max():
            continue
        outline = contour.reshape(-1, 2).astype(np.float32)
        found.append(_Rough(polygon, outline, float(area), float(fill)))
    return found


def _filled_polygon(
    hull: NDArray[Any], sides: int, area: float
) -> tuple[NDArray[np.float32], float] | None:
    """The hull's best polygon of `sides` corners and how the outline's `area` fills it; None
    if there is none or the fill is outside 0.8-1.25 (the outline is another shape)."""
    polygon = _polygon_from_hull(hull.astype(np.float32), sides)
    polygon_area = 0.0 if polygon is None else cv2.contourArea(polygon)
    if polygon is None or polygon_area <= 0 or not 0.8 <= area / polygon_area <= 1.25:
        return None
    return polygon, area / polygon_area


def _parallelogram(
    hull: NDArray[Any], contour: NDArray[Any], area: float, solidity: float
) -> _Rough | None:
    """The outline as a parallelogram (see PAIR_SIDE_TOLERANCE), or None if it is none."""
    if solidity < MIN_SOLIDITY[4]:
        return None
    filled = _filled_polygon(hull, 4, area)
    if filled is None:
        return None
    polygon, fill = filled
    sides = polygon[[1, 2, 3, 0]].astype(np.float64) - polygon
    lengths = np.hypot(sides[:, 0], sides[:, 1])
    for first, second in ((0, 2), (1, 3)):
        # Opposite sides of a parallelogram are one vector, walked the other way.
        gap = np.hypot(*(sides[first] + sides[second]))
        if gap > PAIR_SIDE_TOLERANCE * max(lengths[first], lengths[second]):
            return None
    outline = contour.reshape(-1, 2).astype(np.float32)
    return _Rough(polygon, outline, float(area), float(fill))


def _diagonal_darkness(value: NDArray[np.uint8], start: FloatPoint, end: FloatPoint) -> float:
    """Median brightness along a diagonal at PAIR_GAP_FRACTIONS, each point the darkest within
    PAIR_GAP_REACH pixels across it."""
    direction = end - start
    across = np.array([-direction[1], direction[0]]) / max(float(np.hypot(*direction)), 1e-9)
    offsets = np.arange(-PAIR_GAP_REACH, PAIR_GAP_REACH + 1, dtype=np.float64)
    fractions = np.asarray(PAIR_GAP_FRACTIONS)
    points = (
        start + fractions[:, None, None] * direction + offsets[None, :, None] * across
    )  # (fractions, offsets, 2)
    height, width = value.shape
    x = np.clip(np.rint(points[..., 0]), 0, width - 1).astype(np.intp)
    y = np.clip(np.rint(points[..., 1]), 0, height - 1).astype(np.intp)
    return float(np.median(value[y, x].min(axis=1)))


def _split_pair(
    pair: _Rough, value: NDArray[np.uint8], refine: bool, min_area: float
) -> list[_Rough]:
    """A parallelogram's two triangles, split along the diagonal where their gap shows (see
    PAIR_GAP_CONTRAST); none if no gap shows, or the triangles would be too small.

    With `refine`, their corners are the parallelogram's refined on its outline, and none are
    given where that fails: the rough corners of a cut-off or bent outline put a tip 5.9
    degrees off at 3.9, one sticker's corners fitting it tightly (corpus c0017 cam0)."""
    if pair.area / 2 < min_area:
        return []
    corners = pair.polygon.astype(np.float64)
    if refine:
        refined = _refined_corners(pair.polygon, pair.outline)
        if refined is None:
            return []
        corners = refined
    first = _diagonal_darkness(value, corners[0], corners[2])
    second = _diagonal_darkness(value, corners[1], corners[3])
    gap, (a, b, c, d) = (first, (0, 1, 2, 3)) if first <= second else (second, (1, 2, 3, 0))
    if gap > (1.0 - PAIR_GAP_CONTRAST) * max(first, second):
        return []
    empty = np.empty((0, 2), np.float32)
    return [
        _Rough(corners[[a, b, c]].astype(np.float32), empty, pair.area / 2, pair.fill),
        _Rough(corners[[a, c, d]].astype(np.float32), empty, pair.area / 2, pair.fill),
    ]


def _clockwise(corners: NDArray[np.float64]) -> NDArray[np.float64]:
    """Corners ordered clockwise on screen (image y points down), starting anywhere."""
    x, y = corners[:, 0], corners[:, 1]
    following = np.arange(1, len(corners) + 1) % len(corners)
    signed = float(np.sum(x * y[following] - x[following] * y))
    return corners if signed > 0 else corners[::-1].copy()
