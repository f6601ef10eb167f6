"""Outlines moved onto the image's edges: on images drawn in code and on a corpus view."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from judgecam.vision.edge_snap import snap_to_edges
from judgecam.vision.evaluate import intrinsics_from_truth
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import analyse_view


def _drawn(
    polygons: list[np.ndarray],
    color=(40, 200, 230),
    background: int = 25,
    size: tuple[int, int] = (320, 240),
) -> np.ndarray:
    """A dark frame with the polygons filled, their edges at sub-pixel positions: drawn eight
    times larger and averaged down (pixel centres at integer coordinates)."""
    scale = 8
    large = np.full((size[1] * scale, size[0] * scale, 3), background, np.uint8)
    for polygon in polygons:
        corners = (polygon * scale + (scale - 1) / 2) * 16
        cv2.fillPoly(large, [np.rint(corners).astype(np.int32)], color, cv2.LINE_8, 4)
    return np.asarray(cv2.resize(large, size, interpolation=cv2.INTER_AREA), np.uint8)


def _triangle(cx: float, cy: float, radius: float, angle_deg: float) -> np.ndarray:
    angles = np.deg2rad(angle_deg + np.array([90.0, 210.0, 330.0]))
    return np.stack([cx + radius * np.cos(angles), cy + radius * np.sin(angles)], axis=1)


def _side_moved(polygon: np.ndarray, side: int, inwards_px: float) -> np.ndarray:
    """The outline with one side's line moved inwards (its two corners slide along the
    neighbouring sides), as a threshold cut short by a highlight leaves it."""
    corners = polygon.copy()
    count = len(polygon)
    start, end = polygon[side], polygon[(side + 1) % count]
    direction = (end - start) / np.linalg.norm(end - start)
    normal = np.array([direction[1], -direction[0]])
    if np.dot(polygon.mean(axis=0) - start, normal) < 0:
        normal = -normal
    for corner, neighbour in ((side, side - 1), ((side + 1) % count, (side + 2) % count)):
        along = polygon[neighbour] - polygon[corner]
        step = inwards_px / float(np.dot(along / np.linalg.norm(along), normal))
        corners[corner] = polygon[corner] + along / np.linalg.norm(along) * step
    return corners


def test_uneven_insets_are_undone_to_a_fraction_of_a_pixel() -> None:
    truth = _triangle(160.3, 118.6, 40.0, 7.0)
    outline = _side_moved(_side_moved(truth, 0, 3.0), 1, 1.0)  # side 2 already on its edge
    assert np.abs(outline - truth).max() > 3.0
    (snapped,) = snap_to_edges(_drawn([truth]), [outline])
    np.testing.assert_allclose(snapped, truth, atol=0.6)


def test_a_side_cut_well_short_is_found() -> None:
    # A highlight along one side cut the threshold mask 9 pixels short (of a 78 pixel side).
    truth = _triangle(150.0, 120.0, 45.0, -20.0)
    outline = _side_moved(truth, 2, 9.0)
    (snapped,) = snap_to_edges(_drawn([truth]), [outline])
    np.testing.assert_allclose(snapped, truth, atol=0.6)


def test_squares_many_at_once() -> None:
    # More samples than cv2.remap takes in one row (its maps stay under 32767 on a side).
    half = np.array([[-14.0, -14.0], [14.0, -14.0], [14.0, 14.0], [-14.0, 14.0]])
    squares = [
        np.array([22.3 + 38.5 * column, 22.6 + 38.2 * row]) + half
        for row in range(16)
        for column in range(24)
    ]
    outlines = [_side_moved(square, index % 4, 2.0) for index, square in enumerate(squares)]
    assert len(squares) * 4 * 9 * 41 > 32767
    snapped = snap_to_edges(_drawn(squares, size=(940, 620)), outlines)
    for square, outline in zip(squares, snapped, strict=True):
        np.testing.assert_allclose(outline, square, atol=0.6)


def test_an_edge_that_cannot_be_seen_leaves_the_outline_as_it_was() -> None:
    truth = _triangle(160.0, 120.0, 40.0, 0.0)
    outline = _side_moved(truth, 0, 3.0)
    flat = np.full((240, 320, 3), 120, np.uint8)  # no edge anywhere
    (snapped,) = snap_to_edges(flat, [outline])
    np.testing.assert_array_equal(snapped, outline)


def test_an_outline_does_not_grow_over_another() -> None:
    # A sticker outlined 8 pixels short on its right, where a small patch (glare, a logo) was
    # outlined apart: moving that side onto the sticker's edge would swallow the patch, so the
    # outline stays (which of the two is the sticker is not for this stage to decide).
    sticker = np.array([[100.0, 60.0], [160.0, 60.0], [160.0, 120.0], [100.0, 120.0]])
    short = sticker + np.array([[0.0, 0.0], [-8.0, 0.0], [-8.0, 0.0], [0.0, 0.0]])
    patch = np.array([[154.0, 88.0], [157.0, 88.0], [157.0, 91.0], [154.0, 91.0]])
    image = _drawn([sticker])
    np.testing.assert_array_equal(snap_to_edges(image, [short, patch])[0], short)
    # Alone, the same outline is moved onto the edge.
    np.testing.assert_allclose(snap_to_edges(image, [short])[0], sticker, atol=0.6)


def test_corpus_pyraminx_outlines_lie_on_the_rendered_stickers(corpus_dir: Path) -> None:
    """Stage 2's triangles on a corpus view against the renderer's sticker polygons: their
    sides within a pixel (median 0.62, p75 1.14; the thresholded ones 3.56 and 4.52)."""
    truth = json.loads((corpus_dir / "c0153.json").read_text())
    view = truth["views"][0]
    image = cv2.imread(str(corpus_dir / view["image"]))
    result = analyse_view(image, puzzle_model("pyram"), intrinsics_from_truth(view), view["image"])
    assert result.segmentation is not None
    stickers = [f for f in view["facelets"] if f["visibility"] > 0.95]
    centres = np.array([f["center_px"] for f in stickers])
    offsets = []
    for facelet in result.segmentation.facelets:
        gaps = np.linalg.norm(centres - facelet.center_px, axis=1)
        if gaps.min() > 0.3 * facelet.size_px:
            continue
        polygon = np.array(stickers[int(np.argmin(gaps))]["polygon_px"])
        for start, end in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
            direction = (end - start) / np.linalg.norm(end - start)
            normal = np.array([direction[1], -direction[0]])
            # The detected corner pair nearest this side: its midpoint's distance to it.
            midpoints = (facelet.corners_px + np.roll(facelet.corners_px, -1, axis=0)) / 2
            nearest = midpoints[np.argmin(np.linalg.norm(midpoints - (start + end) / 2, axis=1))]
            offsets.append(abs(float(np.dot(nearest - start, normal))))
    assert len(offsets) >= 27  # nine or more stickers
    assert np.median(offsets) < 1.0
    assert np.percentile(offsets, 75) < 1.5
