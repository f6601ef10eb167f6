"""Training samples for the learned facelet detector, from rendered captures and their truth.

Each sample is a randomly placed square window of one rendered view (sometimes the whole frame
letterboxed, as in the detector's first pass; usually a crop around the puzzle at a random zoom,
rotation and mirror, as in its second pass) with heavy photometric randomisation and distractor
shapes the renderer does not make, plus its targets: a facelet-centre heatmap, corner offsets
around each centre and a weight map that ignores half-hidden and grazing facelets.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.detector_post import (
    OFFSET_SCALE,
    OUTPUT_CHANNELS,
    QUAD_CHANNELS,
    STRIDE,
    TRIANGLE_CHANNELS,
    cell_to_input,
    input_to_cell,
    sort_clockwise,
)
from judgecam.vision.detector_pre import INPUT_SIZE, warp_affine

logger = logging.getLogger(__name__)

#: A facelet is a positive target if at least this fraction of it is unoccluded ...
MIN_VISIBILITY = 0.6
#: ... and its area is at least this fraction of the largest facelet area in the view.
MIN_AREA_FRACTION = 0.25
#: Fraction of samples that are the whole frame letterboxed (the detector's first pass).
LETTERBOX_FRACTION = 0.25
#: Puzzle extent in input pixels for puzzle crops (log-uniform); the detector's second pass
#: shows it at about 190 pixels (see `judgecam.vision.detector_onnx`).
EXTENT_PIXELS = (35.0, 230.0)


@dataclass(frozen=True, eq=False)
class ViewTruth:
    """One rendered view: image file and every facelet the renderer says is visible."""

    image_path: Path
    puzzle: str
    centers: NDArray[np.float64]  # (F, 2) frame pixels
    polygons: tuple[NDArray[np.float64], ...]  # each (K, 2)
    positive: NDArray[np.bool_]  # (F,) clear targets; the others are ignored

    @property
    def sides(self) -> int:
        return 3 if self.puzzle == "pyram" else 4


def load_views(root: Path, capture_ids: list[str] | None = None) -> list[ViewTruth]:
    """Every view of the captures `capture_ids` (default: every truth file) in `root`."""
    if capture_ids is None:
        files = sorted(p for p in root.glob("*.json") if p.name != "manifest.json")
    else:
        files = [root / f"{capture_id}.json" for capture_id in capture_ids]
    views: list[ViewTruth] = []
    for path in files:
        truth = json.loads(path.read_text())
        for view in truth["views"]:
            views.append(view_truth(root, truth["puzzle"], view))
    return views


def view_truth(root: Path, puzzle: str, view: dict[str, object]) -> ViewTruth:
    """A `ViewTruth` from one view record of a capture's truth file."""
    facelets = view["facelets"]
    assert isinstance(facelets, list)
    centers = np.array([f["center_px"] for f in facelets], np.float64).reshape(-1, 2)
    polygons = tuple(np.array(f["polygon_px"], np.float64) for f in facelets)
    areas = np.array([abs(cv2.contourArea(p.astype(np.float32))) for p in polygons])
    largest = float(areas.max()) if len(areas) else 0.0
    positive = np.array(
        [
            f["visibility"] >= MIN_VISIBILITY
            and not f.get("missing", False)
            and area >= MIN_AREA_FRACTION * largest
            for f, area in zip(facelets, areas, strict=True)
        ],
        bool,
    )
    return ViewTruth(root / str(view["image"]), puzzle, centers, polygons, positive)


def sample_matrix(
    rng: np.random.Generator, view: ViewTruth, width: int, height: int, size: int
) -> NDArray[np.float64]:
    """A random 2x3 frame -> window matrix: letterbox-like, or a zoomed, rotated, mirrored crop.

    The zoom is drawn in input pixels per frame pixel, not relative to the window, so the
    (smaller, faster) training windows show facelets at the sizes the run-time input does.
    """
    letterbox = len(view.centers) == 0 or rng.random() < LETTERBOX_FRACTION
    if letterbox:  # the first pass: the whole frame shrunk into the input
        scale = INPUT_SIZE / max(width, height) * float(rng.uniform(0.85, 1.2))
        angle = float(rng.normal(0, 4.0))
        mirror = False
        if len(view.centers) == 0:
            center = np.array([rng.uniform(0, width), rng.uniform(0, height)])
            if rng.random() < 0.5:  # empty mats: zoomed-in crops too
                scale *= float(rng.uniform(1.5, 6.0))
        else:
            points = np.concatenate(view.polygons)
            reach = size / scale * 0.4
            center = (points.min(axis=0) + points.max(axis=0)) / 2.0 + rng.uniform(-reach, reach, 2)
    else:  # the second pass: a crop around the puzzle
        points = np.concatenate(view.polygons)
        low, high = points.min(axis=0), points.max(axis=0)
        extent = float(max(high - low))
        scale = math.exp(rng.uniform(*np.log(EXTENT_PIXELS))) / max(extent, 1.0)
        center = (low + high) / 2.0 + rng.uniform(-0.2, 0.2, 2) * size / scale
        angle = float(rng.normal(0, 20.0)) if rng.random() < 0.8 else float(rng.uniform(-180, 180))
        mirror = bool(rng.random() < 0.5)
    cos, sin = math.cos(math.radians(angle)) * scale, math.sin(math.radians(angle)) * scale
    linear = np.array([[cos, -sin], [sin, cos]])
    if mirror:
        linear = linear @ np.diag([-1.0, 1.0])
    offset = np.array([size / 2.0, size / 2.0]) - linear @ center
    return np.concatenate([linear, offset[:, None]], axis=1)


def apply_matrix(matrix: NDArray[np.float64], points: NDArray[np.float64]) -> NDArray[np.float64]:
    """2x3 affine applied to points (..., 2)."""
    return np.asarray(points @ matrix[:, :2].T + matrix[:, 2], np.float64)


def photometric(rng: np.random.Generator, window: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Colour, exposure, blur, noise and JPEG randomisation beyond what the renderer samples."""
    image = window.astype(np.float32)
    if rng.random() < 0.3:
        image = image[:, :, rng.permutation(3)]
    if rng.random() < 0.4:
        hsv = cv2.cvtColor(np.clip(image, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + int(rng.integers(0, 180))) % 180).astype(
            np.uint8
        )
        saturation = hsv[..., 1].astype(np.float32) * float(rng.uniform(0.5, 1.3))
        hsv[..., 1] = np.clip(saturation, 0, 255).astype(np.uint8)
        image = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR).astype(np.float32)
    if rng.random() < 0.1:
        gray = cv2.cvtColor(np.clip(image, 0, 255).astype(np.uint8), cv2.COLOR_BGR2GRAY)
        image = np.repeat(gray[:, :, None], 3, axis=2).astype(np.float32)
    image *= np.float32(rng.uniform(0.45, 1.5)) * rng.uniform(0.9, 1.1, 3).astype(np.float32)
    mean = image.mean()
    image = (image - mean) * np.float32(rng.uniform(0.7, 1.3)) + mean
    image = 255.0 * (np.clip(image, 0, 255) / 255.0) ** np.float32(rng.uniform(0.7, 1.5))
    if rng.random() < 0.3:
        image = cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.3, 1.6)))
    if rng.random() < 0.5:
        image = image + rng.normal(0, rng.uniform(1, 9), image.shape).astype(np.float32)
    result = np.clip(image, 0, 255).astype(np.uint8)
    if rng.random() < 0.4:
        quality = int(rng.integers(30, 95))
        ok, encoded = cv2.imencode(".jpg", result, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            result = np.asarray(cv2.imdecode(encoded, cv2.IMREAD_COLOR), np.uint8)
    return result


def add_distractors(
    rng: np.random.Generator,
    window: NDArray[np.uint8],
    keep_out: NDArray[np.float64],
    facelet_px: float,
) -> NDArray[np.uint8]:
    """Coloured squares, bars and blobs away from the puzzle (`keep_out`: its hull in window
    pixels): isolated sticker-like patches must not count as facelets."""
    size = window.shape[0]
    result = window.copy()
    hull = cv2.convexHull(keep_out.astype(np.float32)) if len(keep_out) >= 3 else None
    for _ in range(int(rng.integers(1, 7))):
        center = rng.uniform(0, size, 2)
        if (
            hull is not None
            and cv2.pointPolygonTest(hull, (float(center[0]), float(center[1])), True)
            > -1.2 * facelet_px
        ):
            continue
        color = tuple(int(c) for c in rng.integers(0, 256, 3))
        extent = facelet_px * float(rng.uniform(0.5, 2.5))
        kind = rng.random()
        if kind < 0.5:
            box = (
                (float(center[0]), float(center[1])),
                (extent, extent * float(rng.uniform(0.6, 1.6))),
                float(rng.uniform(0, 90)),
            )
            corners = cv2.boxPoints(box).astype(np.int32)
            cv2.fillConvexPoly(result, corners, color, lineType=cv2.LINE_AA)
        elif kind < 0.8:
            axes = (max(1, int(extent / 2)), max(1, int(extent * rng.uniform(0.3, 1.0) / 2)))
            cv2.ellipse(
                result,
                (int(center[0]), int(center[1])),
                axes,
                float(rng.uniform(0, 180)),
                0,
                360,
                color,
                -1,
                cv2.LINE_AA,
            )
        else:
            end = center + rng.normal(0, 3 * extent, 2)
            cv2.line(
                result,
                (int(center[0]), int(center[1])),
                (int(end[0]), int(end[1])),
                color,
                max(1, int(extent / 4)),
                cv2.LINE_AA,
            )
    return result


def render_targets(
    centers: NDArray[np.float64],
    polygons: list[NDArray[np.float64]],
    positive: NDArray[np.bool_],
    size: int,
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
    """Targets for one window (input-pixel coordinates in, (size/STRIDE)^2 maps out).

    Returns the heatmap (h, w), its loss weight (h, w: 0 around ignored facelets), the corner
    offsets (OUTPUT_CHANNELS - 1, h, w) and their mask (same shape).
    """
    cells = size // STRIDE
    heatmap = np.zeros((cells, cells), np.float32)
    weight = np.ones((cells, cells), np.float32)
    offsets = np.zeros((OUTPUT_CHANNELS - 1, cells, cells), np.float32)
    mask = np.zeros_like(offsets)
    nearest = np.full((cells, cells), np.inf)
    grid_x, grid_y = np.meshgrid(
        np.arange(cells, dtype=np.float64), np.arange(cells, dtype=np.float64)
    )
    sizes = [math.sqrt(abs(cv2.contourArea(p.astype(np.float32)))) for p in polygons]
    for center, polygon, clear, facelet_size in zip(
        centers, polygons, positive, sizes, strict=True
    ):
        cell = input_to_cell(center)
        sigma = float(np.clip(facelet_size / STRIDE / 5.0, 0.7, 2.5))
        distance2 = (grid_x - cell[0]) ** 2 + (grid_y - cell[1]) ** 2
        if not clear:
            weight[distance2 < (2.0 * sigma + 1.0) ** 2] = 0.0
            continue
        np.maximum(heatmap, np.exp(-distance2 / (2 * sigma**2)).astype(np.float32), out=heatmap)
        sides = len(polygon)
        channels = QUAD_CHANNELS if sides == 4 else TRIANGLE_CHANNELS
        first = channels.start - 1
        corners = sort_clockwise(polygon)
        col0, row0 = round(float(cell[0])), round(float(cell[1]))
        for row in range(row0 - 1, row0 + 2):
            for col in range(col0 - 1, col0 + 2):
                if not (0 <= row < cells and 0 <= col < cells):
                    continue
                if distance2[row, col] >= nearest[row, col]:
                    continue
                nearest[row, col] = distance2[row, col]
                anchor = cell_to_input(np.array([col, row], np.float64))
                values = ((corners - anchor) / OFFSET_SCALE).reshape(-1)
                mask[:, row, col] = 0.0
                offsets[first : first + 2 * sides, row, col] = values
                mask[first : first + 2 * sides, row, col] = 1.0
    # A clear facelet's peak overrides an ignore zone of a neighbour.
    weight = np.maximum(weight, (heatmap > 0.5).astype(np.float32))
    return heatmap, weight, offsets, mask


@dataclass(frozen=True, eq=False)
class Sample:
    """One training example (input RGB float CHW, targets)."""

    image: NDArray[np.float32]
    heatmap: NDArray[np.float32]
    weight: NDArray[np.float32]
    offsets: NDArray[np.float32]
    mask: NDArray[np.float32]


def make_sample(
    rng: np.random.Generator, frame: NDArray[np.uint8], view: ViewTruth, size: int
) -> Sample:
    """A random window of `frame` with its targets."""
    height, width = frame.shape[:2]
    matrix = sample_matrix(rng, view, width, height, size)
    window = warp_affine(frame, matrix, size)
    centers = apply_matrix(matrix, view.centers) if len(view.centers) else np.zeros((0, 2))
    polygons = [apply_matrix(matrix, p) for p in view.polygons]
    inside = np.array(
        [bool(np.all((c > -STRIDE) & (c < size + STRIDE))) for c in centers], bool
    ).reshape(-1)
    if rng.random() < 0.5:
        facelet_px = (
            float(
                np.median([math.sqrt(abs(cv2.contourArea(p.astype(np.float32)))) for p in polygons])
            )
            if polygons
            else float(rng.uniform(6, 40))
        )
        keep_out = np.concatenate(polygons) if polygons else np.zeros((0, 2))
        window = add_distractors(rng, window, keep_out, max(facelet_px, 4.0))
    window = photometric(rng, window)
    keep = [i for i in range(len(centers)) if inside[i]]
    heatmap, weight, offsets, mask = render_targets(
        centers[keep] if keep else np.zeros((0, 2)),
        [polygons[i] for i in keep],
        view.positive[keep] if keep else np.zeros(0, bool),
        size,
    )
    rgb = window[:, :, ::-1].astype(np.float32) / 255.0
    return Sample(np.ascontiguousarray(rgb.transpose(2, 0, 1)), heatmap, weight, offsets, mask)
