"""Stage 2: the facelets of one candidate puzzle, with colour samples ready for classification.

Re-runs the patch finder on the candidate's neighbourhood with a threshold window sized to the
sticker size stage 1 measured (so segmentation adapts to distance), keeps patches of plausible
size, and samples each facelet's colour on its inner part (away from the dark gap, where blur
and the rounded sticker corners mix in black). Glare shows up as a large brightness spread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.edge_snap import snap_to_edges
from judgecam.vision.locate import PuzzleRegion
from judgecam.vision.quads import Patch, find_patches

logger = logging.getLogger(__name__)

#: Fraction of the facelet (about its centre) whose pixels are sampled for colour.
SAMPLE_SCALE = 0.6


@dataclass(frozen=True, eq=False)
class Facelet:
    """One segmented facelet: polygon in pixels, colour sample and confidence."""

    corners_px: NDArray[np.float64]  # (K, 2) clockwise on screen
    mean_bgr: NDArray[np.float64]  # (3,)
    spread: float  # mean standard deviation of L, a, b inside the sample area (CIELAB units)
    pixel_count: int
    confidence: float

    @property
    def center_px(self) -> NDArray[np.float64]:
        # The mean over the corners, without np.mean's Python overhead (same sum and division).
        return np.asarray(np.add.reduce(self.corners_px, axis=0) / len(self.corners_px), np.float64)

    @property
    def size_px(self) -> float:
        return float(np.sqrt(abs(cv2.contourArea(self.corners_px.astype(np.float32)))))


@dataclass(frozen=True, eq=False)
class FaceletSegmentation:
    """Stage 2 result for one candidate region."""

    region: PuzzleRegion
    facelets: tuple[Facelet, ...]
    confidence: float


def lab_samples(
    image: NDArray[np.uint8], masks: Sequence[NDArray[np.uint8]]
) -> tuple[NDArray[np.float32], list[NDArray[np.uint8]]]:
    """CIELAB (of BGR / 255, in float) of the pixels in any of `masks`, as one image row, and
    each mask over that row.

    Masked statistics on them equal those on the whole image converted: OpenCV converts each
    pixel on its own and sums the masked pixels in order. Only the masked pixels are converted.
    """
    union = masks[0] if len(masks) == 1 else np.bitwise_or.reduce(np.asarray(masks))
    index = np.flatnonzero(union)
    pixels = image.reshape(-1, 3).take(index, axis=0).reshape(1, -1, 3)
    lab = np.asarray(
        cv2.cvtColor(pixels.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab), dtype=np.float32
    )
    return lab, [mask.reshape(-1).take(index).reshape(1, -1) for mask in masks]


def sample_color(
    image: NDArray[np.uint8], corners: NDArray[np.float64]
) -> tuple[NDArray[np.float64], float, int]:
    """Mean BGR, CIELAB spread and pixel count inside the central part of a polygon."""
    center = np.add.reduce(corners, axis=0) / len(corners)  # = corners.mean(axis=0)
    inner = center + (corners - center) * SAMPLE_SCALE
    x, y, w, h = cv2.boundingRect(inner.astype(np.float32))
    height, width = image.shape[:2]
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(width, x + w + 1), min(height, y + h + 1)
    if x1 <= x0 or y1 <= y0:
        return np.zeros(3), 0.0, 0
    crop = image[y0:y1, x0:x1]
    mask = np.zeros(crop.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.rint(inner - [x0, y0]).astype(np.int32)], 255)
    count = int(cv2.countNonZero(mask))
    if count == 0:
        return np.asarray(crop.reshape(-1, 3).mean(axis=0), np.float64), 0.0, int(crop.size // 3)
    # cv2.mean gives the same mean as cv2.meanStdDev, without the deviation not used here.
    mean = cv2.mean(crop, mask=mask)[:3]
    # Spread in CIELAB units, what colour classification compares colour differences with.
    lab, (lab_mask,) = lab_samples(crop, [mask])
    _, lab_std = cv2.meanStdDev(lab, mask=lab_mask)
    # np.add.reduce / size is np.mean without its Python overhead (the same sum and division).
    spread = float(np.add.reduce(lab_std, axis=None) / lab_std.size)
    return np.asarray(mean, np.float64).reshape(3), spread, count


def _apart(
    centers: NDArray[np.float64],
    sizes: NDArray[np.float64],
    other_centers: NDArray[np.float64],
    other_sizes: NDArray[np.float64],
) -> NDArray[np.bool_]:
    """Per patch (centres (P, 2), sizes (P,)): whether its centre is more than 0.35 sizes (the
    smaller) from every other patch's (Q, 2), (Q,)."""
    offsets_x = other_centers[None, :, 0] - centers[:, None, 0]
    offsets_y = other_centers[None, :, 1] - centers[:, None, 1]
    gaps = np.sqrt(offsets_x * offsets_x + offsets_y * offsets_y)
    return np.asarray(np.all(gaps > 0.35 * np.minimum(sizes[:, None], other_sizes[None]), axis=1))


def _add_missed(kept: list[Patch], missed: Sequence[Patch]) -> None:
    """Append (in place) each of `missed` apart from every patch in `kept` and from every
    earlier one appended (`_apart`): all against `kept` at once, then the few that pass one
    by one against those appended before them."""
    if not missed:
        return
    centers = np.array([patch.center for patch in missed])
    sizes = np.array([patch.size for patch in missed])
    kept_centers = np.array([patch.center for patch in kept]).reshape(-1, 2)
    kept_sizes = np.array([patch.size for patch in kept])
    added: list[int] = []
    for index in np.flatnonzero(_apart(centers, sizes, kept_centers, kept_sizes)).tolist():
        if _apart(
            centers[index : index + 1], sizes[index : index + 1], centers[added], sizes[added]
        )[0]:
            added.append(index)
    kept.extend(missed[index] for index in added)


#: Outlines with this many corners are moved onto the image's edges (`edge_snap`): a Pyraminx's
#: triangles. A tip's angle rests on one or two of them, close to its axis, and the uneven
#: shrinking of thresholded outlines was most of its error (corpus layer|tip pairs: p95 4.8
#: -> 3.4 degrees). On cubes it moved verdicts both ways with no net gain, so their outlines
#: stay as thresholded (docs/vision.md, session 35).
EDGE_SNAPPED_SIDES = (3,)
#: Stage 2 looks this many stickers around stage 1's region.
WINDOW_PAD_STICKERS = 1.5


def window(region: PuzzleRegion, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The part of a frame of `shape` stage 2 looks in, (x0, y0, x1, y1): `region`'s box
    padded by WINDOW_PAD_STICKERS stickers, within the frame."""
    height, width = shape[:2]
    x, y, w, h = region.bbox
    pad = round(WINDOW_PAD_STICKERS * region.sticker_px)
    return max(0, x - pad), max(0, y - pad), min(width, x + w + pad), min(height, y + h + pad)


def segment_facelets(
    image: NDArray[np.uint8],
    region: PuzzleRegion,
    *,
    sides: int = 4,
    method: str = "both",
    value: NDArray[np.uint8] | None = None,
) -> FaceletSegmentation:
    """Stage 2: facelets in and around `region`, each with a colour sample (`value`: the
    frame's `brightness`, if the caller has it already: its crop is the crop's)."""
    sticker = region.sticker_px
    x0, y0, x1, y1 = window(region, image.shape)
    crop = image[y0:y1, x0:x1]
    block = round(2.5 * sticker) | 1
    patches = find_patches(
        crop,
        sides=sides,
        block=block,
        min_area=max(30.0, 0.15 * sticker**2),
        max_area_fraction=1.0,
        size_range=(0.4 * sticker, 2.5 * sticker),
        method=method,
        value=None if value is None else value[y0:y1, x0:x1],
    )
    offset = np.array([x0, y0], dtype=np.float64)
    kept: list[Patch] = [
        Patch(corners=patch.corners + offset, area=patch.area, fill=patch.fill) for patch in patches
    ]
    # Stage 1 patches the local pass missed (its threshold window is tuned to the sticker size,
    # which can merge a sticker with a bright bevel) are kept as stage 1 outlined them.
    _add_missed(kept, region.patches)
    if sides in EDGE_SNAPPED_SIDES:
        outlines = snap_to_edges(image, [patch.corners for patch in kept])
        kept = [
            Patch(corners=outline, area=patch.area, fill=patch.fill)
            for outline, patch in zip(outlines, kept, strict=True)
        ]
    facelets = []
    for patch in kept:
        mean, spread, count = sample_color(image, patch.corners)
        shape_score = min(max(1.0 - abs(patch.fill - 1.0) * 3.0, 0.0), 1.0)
        facelets.append(
            Facelet(
                corners_px=patch.corners,
                mean_bgr=mean,
                spread=spread,
                pixel_count=count,
                confidence=shape_score,
            )
        )
    confidence = region.confidence
    return FaceletSegmentation(region=region, facelets=tuple(facelets), confidence=confidence)
