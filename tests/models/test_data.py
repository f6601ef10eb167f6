"""Training targets: what the data code renders is what the run-time decoder reads back."""

from __future__ import annotations

import numpy as np
import pytest

from judgecam.models.data import (
    ViewTruth,
    apply_matrix,
    make_sample,
    render_targets,
    sample_matrix,
)
from judgecam.vision.detector_post import OUTPUT_CHANNELS, decode, sort_clockwise
from judgecam.vision.detector_pre import warp_affine

SIZE = 128


def _quad(center: tuple[float, float], half: float, angle: float = 0.3) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    return np.asarray(corners @ np.array([[c, s], [-s, c]]) + np.array(center))


def _maps(heatmap: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    return np.concatenate([heatmap[None], offsets]).astype(np.float32)


@pytest.mark.parametrize("sides", [3, 4])
def test_targets_decode_back_to_the_facelets(sides: int) -> None:
    polygons = [_quad((30.3, 41.7), 9.0), _quad((70.9, 52.2), 10.0, 0.1)]
    if sides == 3:
        polygons = [p[:3] for p in polygons]
    centers = np.array([p.mean(axis=0) for p in polygons])
    heatmap, weight, offsets, mask = render_targets(centers, polygons, np.array([True, True]), SIZE)
    assert heatmap.shape == (SIZE // 4, SIZE // 4) and offsets.shape == (
        OUTPUT_CHANNELS - 1,
        32,
        32,
    )
    np.testing.assert_array_equal(weight, 1.0)
    keypoints = decode(_maps(heatmap, offsets), sides=sides)
    order = np.argsort(keypoints.centers[:, 0])
    np.testing.assert_allclose(keypoints.centers[order], centers, atol=0.05)
    for found, truth in zip(keypoints.polygons[order], polygons, strict=True):
        np.testing.assert_allclose(found, sort_clockwise(truth), atol=1e-4)
    assert mask.sum() == 2 * 9 * 2 * sides  # 3x3 cells per facelet, 2 values per corner


def test_unclear_facelets_are_ignored_not_negative() -> None:
    polygons = [_quad((30.0, 30.0), 9.0), _quad((90.0, 90.0), 9.0)]
    centers = np.array([p.mean(axis=0) for p in polygons])
    heatmap, weight, _, mask = render_targets(centers, polygons, np.array([True, False]), SIZE)
    assert heatmap[7, 7] > 0.8 and heatmap[22, 22] < 1e-3
    assert weight[22, 22] == 0.0 and weight[7, 7] == 1.0 and weight[0, 31] == 1.0
    assert mask[:, 20:25, 20:25].sum() == 0.0


def test_sample_targets_sit_on_the_warped_facelets() -> None:
    frame = np.full((480, 640, 3), 60, np.uint8)
    polygon = _quad((320.0, 240.0), 20.0)
    view = ViewTruth(
        image_path=__import__("pathlib").Path("unused.jpg"),
        puzzle="333",
        centers=polygon.mean(axis=0)[None],
        polygons=(polygon,),
        positive=np.array([True]),
    )
    rng = np.random.default_rng(5)
    for _ in range(5):
        matrix = sample_matrix(rng, view, 640, 480, SIZE)
        marked = frame.copy()
        marked[238:243, 318:323] = 255
        window = warp_affine(marked, matrix, SIZE)
        expected = apply_matrix(matrix, np.array([320.0, 240.0]))
        bright = np.argwhere(window[:, :, 0] > 150)
        if len(bright):
            np.testing.assert_allclose(bright.mean(axis=0)[::-1], expected, atol=1.0)
    sample = make_sample(rng, frame, view, SIZE)
    assert sample.image.shape == (3, SIZE, SIZE) and sample.image.dtype == np.float32
    assert sample.heatmap.shape == (SIZE // 4, SIZE // 4)
