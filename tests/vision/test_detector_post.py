"""Learned-detector post-processing: heatmap peaks, sub-cell refinement, polygons, grouping."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgecam.vision.detector_post import (
    OFFSET_SCALE,
    OUTPUT_CHANNELS,
    QUAD_CHANNELS,
    Keypoints,
    cell_to_input,
    decode,
    drop_weak,
    find_peaks,
    input_to_cell,
    main_cluster,
    polygon_sizes,
    refine_peaks,
    sort_clockwise,
)


def _gaussian(
    shape: tuple[int, int], x: float, y: float, sigma: float = 1.2, peak: float = 1.0
) -> np.ndarray:
    rows, cols = np.mgrid[: shape[0], : shape[1]]
    return (peak * np.exp(-((cols - x) ** 2 + (rows - y) ** 2) / (2 * sigma**2))).astype(np.float32)


def test_peaks_strongest_first_and_thresholded() -> None:
    heat = np.maximum(_gaussian((32, 32), 5, 6, peak=0.6), _gaussian((32, 32), 20, 25, peak=0.9))
    heat = np.maximum(heat, _gaussian((32, 32), 28, 3, peak=0.2))  # below threshold
    np.testing.assert_array_equal(find_peaks(heat), [[25, 20], [6, 5]])


def test_a_plateau_gives_one_peak() -> None:
    heat = np.zeros((10, 10), np.float32)
    heat[4:6, 4:6] = 0.8
    assert len(find_peaks(heat)) == 1


@settings(max_examples=40, deadline=None)
@given(st.floats(-0.49, 0.49), st.floats(-0.49, 0.49), st.floats(0.8, 2.5))
def test_refinement_recovers_a_gaussian_centre(dx: float, dy: float, sigma: float) -> None:
    x, y = 12 + dx, 9 + dy
    heat = _gaussian((24, 24), x, y, sigma)
    peaks = find_peaks(heat)
    np.testing.assert_allclose(refine_peaks(heat, peaks)[0], [x, y], atol=1e-6)


def test_cells_and_input_pixels_round_trip() -> None:
    points = np.array([[0.0, 0.0], [17.25, 63.5]])
    np.testing.assert_allclose(cell_to_input(input_to_cell(points)), points)
    np.testing.assert_allclose(cell_to_input(np.array([0.0, 0.0])), [1.5, 1.5])


def test_sort_clockwise_on_screen() -> None:
    square = np.array([[0.0, 0.0], [10.0, 10.0], [10.0, 0.0], [0.0, 10.0]])
    ordered = sort_clockwise(square)
    # y points down: clockwise on screen is a positive shoelace sum
    x, y = ordered[:, 0], ordered[:, 1]
    assert np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0
    assert {tuple(p) for p in ordered} == {tuple(p) for p in square}


def test_decode_reads_polygon_offsets_at_the_peak() -> None:
    output = np.zeros((OUTPUT_CHANNELS, 16, 16), np.float32)
    output[0] = _gaussian((16, 16), 7.3, 4.8)
    polygon = np.array([[20.0, 10.0], [40.0, 12.0], [38.0, 30.0], [19.0, 28.0]])
    anchor = cell_to_input(np.array([7.0, 5.0]))
    output[QUAD_CHANNELS, 5, 7] = ((polygon - anchor) / OFFSET_SCALE).reshape(-1)
    keypoints = decode(output, sides=4)
    assert len(keypoints) == 1
    np.testing.assert_allclose(keypoints.centers[0], cell_to_input(np.array([7.3, 4.8])), atol=1e-4)
    np.testing.assert_allclose(keypoints.polygons[0], sort_clockwise(polygon), atol=1e-4)
    np.testing.assert_allclose(keypoints.scores, [output[0, 5, 7]])


def test_decode_nothing_and_bad_shapes() -> None:
    empty = decode(np.zeros((OUTPUT_CHANNELS, 8, 8), np.float32), sides=3)
    assert len(empty) == 0 and empty.polygons.shape == (0, 3, 2)
    with pytest.raises(ValueError, match="output of shape"):
        decode(np.zeros((3, 8, 8), np.float32))
    with pytest.raises(ValueError, match="3 or 4"):
        decode(np.zeros((OUTPUT_CHANNELS, 8, 8), np.float32), sides=5)


def _squares(centers: np.ndarray, half: float) -> np.ndarray:
    offsets = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    return centers[:, None, :] + offsets[None]


def test_polygon_sizes_are_square_roots_of_areas() -> None:
    np.testing.assert_allclose(polygon_sizes(_squares(np.zeros((2, 2)), 5.0)), [10.0, 10.0])


def test_main_cluster_keeps_the_puzzle_not_the_stray_patches() -> None:
    grid = np.array([[100.0 + 12 * i, 50.0 + 12 * j] for i in range(3) for j in range(3)])
    strays = np.array([[300.0, 300.0], [330.0, 300.0]])
    centers = np.concatenate([grid, strays])
    keypoints = Keypoints(centers, np.full(len(centers), 0.8), _squares(centers, 5.0))
    kept = main_cluster(keypoints)
    np.testing.assert_array_equal(kept.centers, grid)


def test_drop_weak_keeps_peaks_near_the_best() -> None:
    centers = np.array([[10.0, 10.0], [20.0, 10.0], [30.0, 10.0]])
    keypoints = Keypoints(centers, np.array([0.9, 0.46, 0.44]), _squares(centers, 4.0))
    np.testing.assert_array_equal(drop_weak(keypoints).scores, [0.9, 0.46])
    empty = Keypoints(np.zeros((0, 2)), np.zeros(0), np.zeros((0, 4, 2)))
    assert len(drop_weak(empty)) == 0
