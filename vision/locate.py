"""Stage 1: find where puzzles are in a frame, and whether the frame is usable at all.

A puzzle shows up as a tight cluster of similar-sized sticker-like patches; clutter gives
isolated patches or patches of very different sizes. Patches are linked when they are about one
sticker pitch apart and of similar size; each linked group of a few patches is a candidate
region. A frame too dark to judge, or one without colour (a camera in grey-scale or infrared
mode), is refused here; `edge_width` measures blur for the pipeline,
which also checks that the fitted puzzle lies inside the frame, so that later stages never
guess on an unusable image.

A learned detector can replace `find_puzzles` as long as it returns a `PuzzleSearch`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.quads import Patch, brightness, find_patches
from judgecam.vision.stats import median

logger = logging.getLogger(__name__)

#: Below this mean brightness (0..255) a frame is too dark to judge.
MIN_MEAN_BRIGHTNESS = 25.0
#: A pixel shows colour when its channels differ by more than this (0..255): a grey-scale frame
#: stored as BGR has all three equal, and its JPEG stays within a step or two.
GREY_CHANNEL_SPREAD = 4
#: A frame with colour in fewer than this fraction of its pixels is taken as grey-scale: a grey
#: frame has none (even as JPEG quality 30), every corpus view and real photo 3 % or more, also
#: darkened, flattened or under any other `perturb` kind; a puzzle's own stickers fill more.
MIN_COLOUR_FRACTION = 1e-3
#: Fewest linked patches that make a puzzle candidate (a 2x2x2 face shows 4).
MIN_PATCHES = 3
#: Stage 1 looks at a copy of the frame this wide (pixels): enough for stickers, and fast.
SEARCH_WIDTH = 640


@dataclass(frozen=True, eq=False)
class PuzzleRegion:
    """One candidate puzzle: its patches, outline and how sure we are that it is a puzzle."""

    patches: tuple[Patch, ...]
    outline_px: NDArray[np.float64]  # (P, 2) convex hull of the patches
    sticker_px: float  # median patch edge length, pixels
    touches_border: bool
    confidence: float

    @property
    def bbox(self) -> tuple[int, int, int, int]:
        x, y, w, h = cv2.boundingRect(self.outline_px.astype(np.float32))
        return int(x), int(y), int(w), int(h)


@dataclass(frozen=True, eq=False)
class PuzzleSearch:
    """Stage 1 result: candidate regions (most likely first) and frame-level problems."""

    candidates: tuple[PuzzleRegion, ...]
    mean_brightness: float
    problems: tuple[str, ...]  # reasons the frame cannot be judged, empty if usable

    @property
    def usable(self) -> bool:
        return not self.problems


def _link_groups(patches: tuple[Patch, ...]) -> list[list[int]]:
    """Connected groups of patches about one pitch apart and of similar size."""
    count = len(patches)
    if count == 0:
        return []
    centers = np.array([patch.center for patch in patches])
    sizes = np.array([patch.size for patch in patches])
    distance = np.linalg.norm(centers[:, None, :] - centers[None, :, :], axis=2)
    larger = np.maximum(sizes[:, None], sizes[None, :])
    ratio = larger / np.minimum(sizes[:, None], sizes[None, :])
    # Neighbours are one pitch apart (about 1.2 sticker sizes), diagonal ones 1.7; a face seen
    # at a grazing angle has stickers up to ~3 times smaller than a face seen square on.
    linked = (distance < 2.0 * larger) & (ratio < 3.0)
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(linked, 1)), strict=True):
        parent[root(int(i))] = root(int(j))
    groups: dict[int, list[int]] = {}
    for i in range(count):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values(), key=len, reverse=True)


def _region(patches: tuple[Patch, ...], shape: tuple[int, int]) -> PuzzleRegion:
    corners = np.concatenate([patch.corners for patch in patches]).astype(np.float32)
    hull = cv2.convexHull(corners).reshape(-1, 2).astype(np.float64)
    sizes = np.array([patch.size for patch in patches])
    sticker = median(sizes)
    height, width = shape
    margin = 0.5 * sticker
    touches = bool(
        hull[:, 0].min() < margin
        or hull[:, 1].min() < margin
        or hull[:, 0].max() > width - 1 - margin
        or hull[:, 1].max() > height - 1 - margin
    )
    regularity = float(np.clip(1.0 - np.std(sizes) / max(sticker, 1e-6), 0.0, 1.0))
    confidence = float(np.clip(len(patches) / 9.0, 0.0, 1.0) * (0.5 + 0.5 * regularity))
    return PuzzleRegion(
        patches=patches,
        outline_px=hull,
        sticker_px=sticker,
        touches_border=touches,
        confidence=confidence,
    )


#: A region whose area-weighted sticker size is this many times its median one holds patches of
#: two scales: small clutter linked to a puzzle seen close up (a cube held in a robot).
SCALE_MISMATCH = 1.3


def close_up_region(region: PuzzleRegion) -> PuzzleRegion | None:
    """The region again with the sticker size its largest patches show, if that differs.

    The median patch size is the right scale when most linked patches are the puzzle's; beside
    a puzzle seen close up, many small clutter patches pull the median down until stage 2 keeps
    no sticker of the puzzle. The area-weighted median is the size of the patches that cover
    most of the region. None when the two agree.
    """
    sizes = np.sort(np.array([patch.size for patch in region.patches]))
    cumulative = np.cumsum(sizes**2)
    weighted = float(sizes[int(np.searchsorted(cumulative, 0.5 * cumulative[-1]))])
    if weighted < SCALE_MISMATCH * region.sticker_px:
        return None
    return replace(region, sticker_px=weighted)


def find_puzzles(
    image: NDArray[np.uint8],
    *,
    sides: int = 4,
    value: NDArray[np.uint8] | None = None,
    search_width: int = SEARCH_WIDTH,
    method: str = "edges",
) -> PuzzleSearch:
    """Stage 1: candidate puzzle regions in a BGR frame, most patches first (`value`: the
    frame's `brightness`, if the caller has it already), looked for on a copy at most
    `search_width` pixels wide, its patches found by `method` (`quads.find_patches`)."""
    if image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
        raise ValueError(f"expected a BGR image of shape (H, W, 3), got {image.shape}")
    if value is None:
        value = brightness(image)
    # The sum of 8-bit values is exact in either summation order: the same mean as numpy's.
    mean_brightness = float(cv2.sumElems(value)[0] / value.size)
    problems: list[str] = []
    if mean_brightness < MIN_MEAN_BRIGHTNESS:
        problems.append(f"image too dark (mean brightness {mean_brightness:.0f} of 255)")
        return PuzzleSearch((), mean_brightness, tuple(problems))
    factor = min(1.0, search_width / image.shape[1])
    small = (
        image
        if factor == 1.0
        else np.asarray(
            cv2.resize(image, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA), np.uint8
        )
    )
    patches = tuple(
        Patch(corners=patch.corners / factor, area=patch.area / factor**2, fill=patch.fill)
        for patch in find_patches(small, sides=sides, min_area=30.0, refine=False, method=method)
    )
    groups = [group for group in _link_groups(patches) if len(group) >= MIN_PATCHES]
    regions = [
        _region(tuple(patches[i] for i in group), (image.shape[0], image.shape[1]))
        for group in groups
    ]
    regions.sort(key=lambda region: (len(region.patches), region.confidence), reverse=True)
    # Every few pixels of a copy searched wider than SEARCH_WIDTH: a fraction, as well counted.
    stride = max(1, -(-small.shape[1] // SEARCH_WIDTH))
    if regions and colour_fraction(small[::stride, ::stride]) < MIN_COLOUR_FRACTION:
        # Shapes like a puzzle's, but no colours to read them by: a camera in mono mode.
        problems.append("image has no colour (a grey-scale frame: is the camera in mono mode?)")
        return PuzzleSearch((), mean_brightness, tuple(problems))
    if not regions:
        problems.append("no puzzle found (no group of sticker-like patches)")
    return PuzzleSearch(tuple(regions), mean_brightness, tuple(problems))


def colour_fraction(image: NDArray[np.uint8]) -> float:
    """Fraction of a BGR image's pixels whose channels differ by more than
    GREY_CHANNEL_SPREAD: about 0 for a grey-scale frame, whatever its brightness."""
    blue, green, red = cv2.split(np.ascontiguousarray(image))
    spread = cv2.subtract(cv2.max(cv2.max(blue, green), red), cv2.min(cv2.min(blue, green), red))
    return float(np.count_nonzero(np.asarray(spread) > GREY_CHANNEL_SPREAD)) / max(spread.size, 1)


def edge_width(image: NDArray[np.uint8], outlines: list[NDArray[np.float64]]) -> float | None:
    """Median 20-80 % width (pixels) of the brightness step across the outlines' sides.

    Each side is probed at its middle along its normal, from inside the facelet to beyond its
    gap; the step from the facelet's own brightness to the gap's (darker or brighter) is
    measured where it is steep. None if no side has enough contrast to measure.
    """
    height, width = image.shape[:2]
    sizes = [float(np.sqrt(abs(cv2.contourArea(c.astype(np.float32))))) for c in outlines]
    kept = [(corners, size) for corners, size in zip(outlines, sizes, strict=True) if size >= 6]
    if not kept:
        return None
    # Every outline's side middles and outward normals at once where all have as many corners
    # (stage 2's facelets do): the same sums and products, per element, as one at a time.
    groups = [kept] if len({len(corners) for corners, _ in kept}) == 1 else [[k] for k in kept]
    middles, normals = [], []
    for group in groups:
        corners = np.stack([c for c, _ in group])  # (N, K, 2)
        count = corners.shape[1]
        center = np.add.reduce(corners, axis=1) / count  # = corners.mean(axis=1)
        middle = (corners + corners[:, np.arange(1, count + 1) % count]) / 2.0
        normal = middle - center[:, None]
        length = np.sqrt(normal[..., 0] * normal[..., 0] + normal[..., 1] * normal[..., 1])
        normal /= np.maximum(length, 1e-6)[..., None]
        middles.append(middle.reshape(-1, 2))
        normals.append(normal.reshape(-1, 2))
    middle_all = np.concatenate(middles)
    normal_all = np.concatenate(normals)
    size_all = np.concatenate([np.full(len(corners), size) for corners, size in kept])
    fractions = np.linspace(-0.3, 0.3, 31)  # of the facelet size, along the outward normal
    steps = fractions[None, :] * size_all[:, None]  # (sides, samples) in pixels
    points = middle_all[:, None, :] + steps[..., None] * normal_all[:, None, :]
    xs = np.clip(np.rint(points[..., 0]).astype(int), 0, width - 1)
    ys = np.clip(np.rint(points[..., 1]).astype(int), 0, height - 1)
    # Brightness (max of B, G, R) only where the profiles sample it, not over the whole frame.
    profiles = image[ys, xs].max(axis=-1).astype(np.float64)
    inside = np.median(profiles[:, fractions < -0.15], axis=1)
    beyond = profiles[:, (fractions > 0) & (fractions < 0.15)]
    extreme = beyond[np.arange(len(beyond)), np.argmax(np.abs(beyond - inside[:, None]), axis=1)]
    contrast = extreme - inside
    usable = np.abs(contrast) >= 25.0
    if not np.any(usable):
        return None
    scaled = (profiles[usable] - inside[usable, None]) / contrast[usable, None]
    outward = fractions > -0.15
    low = np.argmax(outward[None, :] & (scaled >= 0.2), axis=1)
    high = np.argmax(outward[None, :] & (scaled >= 0.8), axis=1)
    valid = (high >= low) & np.any(outward[None, :] & (scaled >= 0.8), axis=1)
    if not np.any(valid):
        return None
    widths = (fractions[high] - fractions[low]) * size_all[usable]
    return median(widths[valid])
