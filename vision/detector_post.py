"""Post-processing for the learned detector: output maps -> facelet keypoints with confidences.

The model outputs, at a quarter of the input resolution, a facelet-centre heatmap and, per
cell, the offsets from the cell to the corners of the facelet centred there (one set of
channels for quadrilateral facelets, one for the Pyraminx's triangles). Peaks of the heatmap are
facelets; a parabola through the log-heatmap gives each peak's sub-cell position. These layouts
and constants are shared with the training code (`judgecam.models`), which renders the targets.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)

#: Input pixels per output cell.
STRIDE = 4
#: Input-pixel coordinate of cell 0's centre (cell j covers input pixels 4j .. 4j+3).
CELL_CENTER = (STRIDE - 1) / 2.0
#: Corner offsets are stored divided by this many input pixels (keeps the regression ~unit).
OFFSET_SCALE = 16.0
#: Output channels: heatmap, 4 quad corners (x, y), 3 triangle corners (x, y).
HEATMAP_CHANNEL = 0
QUAD_CHANNELS = slice(1, 9)
TRIANGLE_CHANNELS = slice(9, 15)
OUTPUT_CHANNELS = 15
#: Heatmap peaks below this are not facelets.
PEAK_THRESHOLD = 0.3
#: Facelets of a group scoring below this fraction of its best are dropped (on real photos
#: clutter peaks at 0.3-0.75 next to facelets at 0.85-0.95).
MIN_RELATIVE_SCORE = 0.5
#: At most this many peaks per window (a 3x3x3 shows 27 facelets at most).
MAX_PEAKS = 64


@dataclass(frozen=True, eq=False)
class Keypoints:
    """Facelets found in one model input (input-pixel coordinates)."""

    centers: NDArray[np.float64]  # (N, 2) x, y
    scores: NDArray[np.float64]  # (N,) heatmap peak values, 0..1
    polygons: NDArray[np.float64]  # (N, K, 2) corners, clockwise on screen

    def __len__(self) -> int:
        return int(self.centers.shape[0])

    def subset(self, keep: NDArray[np.bool_] | NDArray[np.int64]) -> Keypoints:
        return Keypoints(self.centers[keep], self.scores[keep], self.polygons[keep])


def cell_to_input(cells: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cell coordinates (col, row as x, y; may be fractional) to input pixels."""
    return np.asarray(np.asarray(cells, np.float64) * STRIDE + CELL_CENTER, np.float64)


def input_to_cell(points: NDArray[np.float64]) -> NDArray[np.float64]:
    """Input-pixel coordinates to (fractional) cell coordinates."""
    return np.asarray((np.asarray(points, np.float64) - CELL_CENTER) / STRIDE, np.float64)


def find_peaks(
    heatmap: NDArray[np.float32], threshold: float = PEAK_THRESHOLD, limit: int = MAX_PEAKS
) -> NDArray[np.int64]:
    """(N, 2) integer (row, col) of 3x3 local maxima above `threshold`, strongest first."""
    if heatmap.ndim != 2:
        raise ValueError(f"expected a 2-D heatmap, got shape {heatmap.shape}")
    values = np.asarray(heatmap, np.float32)
    dilated = cv2.dilate(values, np.ones((3, 3), np.uint8))
    rows, cols = np.nonzero((values >= dilated) & (values > threshold))
    order = np.argsort(-values[rows, cols], kind="stable")[: 4 * limit]
    peaks = np.stack([rows[order], cols[order]], axis=1).astype(np.int64)
    # Plateaus give several equal maxima side by side: keep the first of each touching group.
    kept = np.zeros((0, 2), np.int64)
    for peak in peaks:
        if len(kept) and np.any(np.abs(kept - peak).max(axis=1) <= 1):
            continue
        kept = np.vstack([kept, peak[None]])
        if len(kept) == limit:
            break
    return kept


def refine_peaks(heatmap: NDArray[np.float32], peaks: NDArray[np.int64]) -> NDArray[np.float64]:
    """Sub-cell (x, y) of each peak: vertex of a parabola through the log-heatmap along each
    axis (exact for a Gaussian blob), clamped to half a cell."""
    values = np.log(np.clip(np.pad(np.asarray(heatmap, np.float64), 1, mode="edge"), 1e-6, 1.0))
    rows, cols = peaks[:, 0] + 1, peaks[:, 1] + 1
    here = values[rows, cols]
    result = peaks[:, ::-1].astype(np.float64)
    for axis, (before, after) in enumerate(
        (
            (values[rows, cols - 1], values[rows, cols + 1]),
            (values[rows - 1, cols], values[rows + 1, cols]),
        )
    ):
        curvature = before - 2.0 * here + after
        safe = np.where(curvature < -1e-9, curvature, -1.0)
        shift = np.where(curvature < -1e-9, 0.5 * (before - after) / safe, 0.0)
        result[:, axis] += np.clip(shift, -0.5, 0.5)
    return result


def sort_clockwise(polygons: NDArray[np.float64]) -> NDArray[np.float64]:
    """Corners (..., K, 2) ordered by angle about their mean: clockwise on screen (y down)."""
    polygons = np.asarray(polygons, np.float64)
    center = polygons.mean(axis=-2, keepdims=True)
    angles = np.arctan2(polygons[..., 1] - center[..., 1], polygons[..., 0] - center[..., 0])
    order = np.argsort(angles, axis=-1, kind="stable")
    return np.asarray(np.take_along_axis(polygons, order[..., None], axis=-2), np.float64)


def decode(
    output: NDArray[np.float32], sides: int = 4, threshold: float = PEAK_THRESHOLD
) -> Keypoints:
    """Keypoints in input pixels from one model output of shape (OUTPUT_CHANNELS, h, w)."""
    if output.ndim != 3 or output.shape[0] != OUTPUT_CHANNELS:
        raise ValueError(f"expected output of shape ({OUTPUT_CHANNELS}, h, w), got {output.shape}")
    if sides not in (3, 4):
        raise ValueError(f"facelets have 3 or 4 corners, not {sides}")
    heatmap = output[HEATMAP_CHANNEL]
    peaks = find_peaks(heatmap, threshold)
    if len(peaks) == 0:
        return Keypoints(np.zeros((0, 2)), np.zeros(0), np.zeros((0, sides, 2)))
    cells = refine_peaks(heatmap, peaks)
    centers = cell_to_input(cells)
    channels = output[QUAD_CHANNELS if sides == 4 else TRIANGLE_CHANNELS]
    offsets = channels[:, peaks[:, 0], peaks[:, 1]].T.reshape(len(peaks), sides, 2)
    anchors = cell_to_input(peaks[:, ::-1].astype(np.float64))
    polygons = np.stack(
        [
            sort_clockwise(anchor + offset * OFFSET_SCALE)
            for anchor, offset in zip(anchors, offsets, strict=True)
        ]
    )
    scores = heatmap[peaks[:, 0], peaks[:, 1]].astype(np.float64)
    return Keypoints(centers, scores, polygons)


def polygon_sizes(polygons: NDArray[np.float64]) -> NDArray[np.float64]:
    """Square root of each polygon's area (N,), a facelet's size in pixels."""
    x, y = polygons[..., 0], polygons[..., 1]
    area = 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y, axis=-1))
    return np.asarray(np.sqrt(area), np.float64)


def main_cluster(keypoints: Keypoints, link: float = 2.2) -> Keypoints:
    """The group of facelets that make up one puzzle: keypoints linked when closer than `link`
    facelet sizes, the group with the largest total score."""
    count = len(keypoints)
    if count <= 1:
        return keypoints
    sizes = np.maximum(polygon_sizes(keypoints.polygons), 1.0)
    gap = np.linalg.norm(keypoints.centers[:, None] - keypoints.centers[None], axis=2)
    linked = gap < link * np.maximum(sizes[:, None], sizes[None, :])
    labels = np.full(count, -1)
    for start in range(count):
        if labels[start] >= 0:
            continue
        labels[start] = start
        stack = [start]
        while stack:
            node = stack.pop()
            for other in np.nonzero(linked[node] & (labels < 0))[0]:
                labels[other] = start
                stack.append(int(other))
    groups = np.unique(labels)
    totals = [keypoints.scores[labels == g].sum() for g in groups]
    best = groups[int(np.argmax(totals))]
    return keypoints.subset(labels == best)


def drop_weak(keypoints: Keypoints, relative: float = MIN_RELATIVE_SCORE) -> Keypoints:
    """The keypoints scoring at least `relative` times the best one."""
    if len(keypoints) == 0:
        return keypoints
    return keypoints.subset(keypoints.scores >= relative * float(keypoints.scores.max()))
