"""Stickers that are not there: facelets the fit says face the camera, where the image is body.

A sticker (or a centre cap) that came off leaves the bare plastic of the body: inside the
facelet's cell the image is as dark as the gaps between stickers. That matters to the verdict
(two missing stickers are DNF, KCA Art. 10.2), and an undetected sticker must not be mistaken
for it, so a facelet is called missing only where every condition holds: the cube is nearly
aligned (no turned part can hide it), it faces the camera squarely, it lies inside the frame,
no detection was placed on it, and its inside is about as dark as the gaps around the stickers
that were seen, and grey. A dark grey patch detected where the sticker was (bare plastic
against a bright background forms a patch too) counts as missing as well.
"""

from __future__ import annotations

import logging

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import Intrinsics, project, rotation_matrix
from judgecam.vision.geometry import GeometryFit
from judgecam.vision.model import PuzzleModel
from judgecam.vision.quads import brightness
from judgecam.vision.segment import Facelet

logger = logging.getLogger(__name__)

#: Facelets are only checked when every part is within this angle of aligned (degrees).
MAX_PART_ANGLE_DEG = 8.0
#: ... and when they face the camera at least this squarely (cosine).
MIN_FACING = 0.35
#: A facelet's inside darker than gap + this fraction of (sticker - gap) brightness is bare body.
DARKNESS_FRACTION = 0.2
#: Only a tight fit is trusted to say where a sticker should be: most patches placed, and a
#: corner reprojection error (RMS) below this fraction of a sticker.
MIN_INLIER_FRACTION = 0.85
MAX_REPROJECTION = 0.08
#: The gap between stickers: the darkest GAP_PERCENTILE % of the band between a cell's outline
#: and the cell scaled by GAP_BAND about its centre, from at least MIN_GAP_PIXELS pixels.
GAP_BAND = 0.85
GAP_PERCENTILE = 10.0
MIN_GAP_PIXELS = 8
#: Bare body is grey: max - min of B, G, R below this (0..255) on average.
MAX_CHROMA = 30.0
#: Fewest seen stickers needed to know what a sticker and a gap look like here.
MIN_REFERENCE_STICKERS = 6


def _polygon_mask(
    shape: tuple[int, ...], polygon: NDArray[np.float64]
) -> tuple[tuple[slice, slice], NDArray[np.uint8]] | None:
    """The box (rows, columns) around a polygon in an image of `shape` and the polygon's mask
    in it; None if the box is not well inside the image or the mask is empty."""
    x, y, w, h = cv2.boundingRect(polygon.astype(np.float32))
    height, width = shape[:2]
    if x < 0 or y < 0 or x + w >= width or y + h >= height or w < 2 or h < 2:
        return None
    mask = np.zeros((h + 1, w + 1), np.uint8)
    cv2.fillPoly(mask, [np.rint(polygon - [x, y]).astype(np.int32)], 255)
    if not np.any(mask):
        return None
    return (slice(y, y + h + 1), slice(x, x + w + 1)), mask


def _polygon_mean(value: NDArray[np.uint8], polygon: NDArray[np.float64]) -> float | None:
    """Mean of a one-channel image inside a polygon (None: see `_polygon_mask`)."""
    found = _polygon_mask(value.shape, polygon)
    if found is None:
        return None
    box, mask = found
    return float(cv2.mean(value[box], mask=mask)[0])


def _gap_level(
    value: NDArray[np.uint8], cell: NDArray[np.float64], core: NDArray[np.float64]
) -> float | None:
    """The brightness of the gap around a sticker: the darkest `GAP_PERCENTILE` of the band
    between a cell's outline and its `core` (None: see `_polygon_mask`, or too few pixels).

    Where the sticker's edge falls in the band varies with the sticker's size and the view;
    its mean mixed the sticker in (corpus c0184 under a warm cast: gaps measured at 82 where
    they are 37, so blue stickers greyed by the cast at 67 passed for bare body: DNF)."""
    found = _polygon_mask(value.shape, cell)
    if found is None:
        return None
    box, outer = found
    inner = np.zeros_like(outer)
    cv2.fillPoly(inner, [np.rint(core - [box[1].start, box[0].start]).astype(np.int32)], 255)
    band = value[box][(outer > 0) & (inner == 0)]
    if band.size < MIN_GAP_PIXELS:
        return None
    return float(np.percentile(band, GAP_PERCENTILE))


def _polygon_chroma(image: NDArray[np.uint8], polygon: NDArray[np.float64]) -> float | None:
    """Mean `_chroma` of a BGR image inside a polygon (None: see `_polygon_mask`), computed on
    the polygon's box only: the same values as on the whole frame's (a few boxes per view,
    where the whole frame's chroma cost 2-4 ms)."""
    found = _polygon_mask(image.shape, polygon)
    if found is None:
        return None
    box, mask = found
    return float(cv2.mean(_chroma(image[box]), mask=mask)[0])


def _chroma(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Per-pixel max(B, G, R) - min(B, G, R): 0 on greys, high on saturated colours."""
    blue, green, red = cv2.split(image)
    high = cv2.max(cv2.max(blue, green), red)
    low = cv2.min(cv2.min(blue, green), red)
    return np.asarray(cv2.subtract(high, low), dtype=np.uint8)


def missing_facelets(
    image: NDArray[np.uint8],
    facelets: tuple[Facelet, ...],
    fit: GeometryFit,
    model: PuzzleModel,
    intrinsics: Intrinsics,
    value: NDArray[np.uint8] | None = None,
) -> tuple[int, ...]:
    """Model facelets (the fit's frame) that show bare body where a sticker should be
    (`value`: the frame's `brightness`, if the caller has it already)."""
    if not fit.found:
        return ()
    for angles in fit.part_angles:
        # An unmeasured part may be turned (a slice under its neighbours): no judgement.
        if any(a is None or abs(a.angle_deg) > MAX_PART_ANGLE_DEG for a in angles):
            return ()
    placed = fit.assignment[fit.assignment >= 0]
    if len(placed) < MIN_REFERENCE_STICKERS or fit.inlier_fraction < MIN_INLIER_FRACTION:
        return ()
    sizes = [facelets[d].size_px for d in np.nonzero(fit.assignment >= 0)[0]]
    if fit.reprojection_px > MAX_REPROJECTION * float(np.median(sizes)):
        return ()  # a loose fit may put a cell on a gap or a hidden part: no judgement
    if value is None:
        value = brightness(image)
    rotation = rotation_matrix(fit.rvec)
    camera = intrinsics.camera_matrix
    centers = model.facelet_centers
    cells = model.facelet_corners

    def pixels(points: NDArray[np.float64]) -> NDArray[np.float64]:
        return intrinsics.distort(project(points, rotation, fit.tvec, camera))

    inner = []
    gaps = []
    for index in placed:
        center = centers[index][None, :]
        inside = _polygon_mean(value, pixels(center + (cells[index] - center) * 0.5))
        core = pixels(center + (cells[index] - center) * GAP_BAND)
        gap = _gap_level(value, pixels(cells[index]), core)
        if inside is not None:
            inner.append(inside)
        if gap is not None:
            gaps.append(gap)
    if len(inner) < MIN_REFERENCE_STICKERS or not gaps:
        return ()
    sticker_level = float(np.percentile(inner, 25))
    gap_level = float(np.median(gaps))
    if sticker_level - gap_level < 30.0:
        return ()  # stickers and body look alike here (stickerless, or too dark): no judgement
    threshold = gap_level + DARKNESS_FRACTION * (sticker_level - gap_level)
    in_camera = centers @ rotation.T + fit.tvec
    normals = model.facelet_normals @ rotation.T
    facing = -np.einsum("ij,ij->i", normals, in_camera) / np.linalg.norm(in_camera, axis=1)
    found = []
    for index in np.nonzero(facing > MIN_FACING)[0]:
        center = centers[index][None, :]
        polygon = pixels(center + (cells[index] - center) * 0.5)
        inside = _polygon_mean(value, polygon)
        colour = _polygon_chroma(image, polygon)
        # Bare plastic is dark AND grey; a dark but coloured sticker in shadow is not missing.
        if inside is not None and colour is not None and inside < threshold and colour < MAX_CHROMA:
            found.append(int(index))
    if found:
        logger.debug("missing facelets %s (inside < %.0f)", found, threshold)
    return tuple(found)
