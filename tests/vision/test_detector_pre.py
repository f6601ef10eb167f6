"""Learned-detector pre-processing: letterbox and crop windows map frame pixels exactly."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from judgecam.vision.detector_pre import (
    INPUT_SIZE,
    PAD_VALUE,
    crop_transform,
    letterbox_transform,
    to_tensor,
    warp_input,
)


def _dot_frame(width: int, height: int, x: float, y: float, radius: int) -> np.ndarray:
    frame = np.full((height, width, 3), PAD_VALUE, np.uint8)  # so the padding adds nothing
    cv2.circle(
        frame,
        (round(x * 16), round(y * 16)),
        radius * 16,
        (255, 255, 255),
        -1,
        cv2.LINE_AA,
        shift=4,
    )
    return frame


def _bright_centroid(window: np.ndarray) -> np.ndarray:
    gray = np.clip(window[:, :, 1].astype(np.float64) - PAD_VALUE, 0.0, None)
    ys, xs = np.mgrid[: gray.shape[0], : gray.shape[1]]
    return np.array([(xs * gray).sum(), (ys * gray).sum()]) / gray.sum()


def test_letterbox_fits_the_frame_centred() -> None:
    transform = letterbox_transform(1280, 720)
    corners = transform.to_input(np.array([[0.0, 0.0], [1280.0, 720.0]]))
    np.testing.assert_allclose(corners, [[0.0, 56.0], [256.0, 200.0]])


def test_to_frame_inverts_to_input() -> None:
    transform = crop_transform(700.5, 300.25, 333.0)
    points = np.array([[10.0, 20.0], [700.5, 300.25], [1000.0, -5.0]])
    np.testing.assert_allclose(transform.to_frame(transform.to_input(points)), points, atol=1e-9)
    np.testing.assert_allclose(transform.to_input(np.array([700.5, 300.25])), [128.0, 128.0])


@pytest.mark.parametrize(
    ("side", "radius"),
    [(200.0, 12), (600.0, 30), (1536.0, 60)],  # scale 1.28, 0.43 (one pyramid level), 0.17 (three)
)
def test_warp_puts_a_dot_where_the_transform_says(side: float, radius: int) -> None:
    x, y = 810.3, 402.7
    frame = _dot_frame(1536, 864, x, y, radius)
    transform = crop_transform(760.0, 430.0, side)
    window = warp_input(frame, transform)
    assert window.shape == (INPUT_SIZE, INPUT_SIZE, 3)
    expected = transform.to_input(np.array([x, y]))
    np.testing.assert_allclose(_bright_centroid(window), expected, atol=0.15)


def test_outside_the_frame_is_padding() -> None:
    frame = np.zeros((100, 200, 3), np.uint8)
    window = warp_input(frame, letterbox_transform(200, 100))
    assert window[5, 128, 0] == PAD_VALUE
    assert window[128, 128, 0] == 0


def test_tensor_is_rgb_chw_in_unit_range() -> None:
    window = np.zeros((INPUT_SIZE, INPUT_SIZE, 3), np.uint8)
    window[..., 0] = 255  # blue in BGR
    tensor = to_tensor(window)
    assert tensor.shape == (1, 3, INPUT_SIZE, INPUT_SIZE)
    assert tensor.dtype == np.float32
    np.testing.assert_array_equal(tensor[0, :, 0, 0], [0.0, 0.0, 1.0])


def test_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="positive"):
        letterbox_transform(0, 10)
    with pytest.raises(ValueError, match="positive"):
        crop_transform(0, 0, -1)
    with pytest.raises(ValueError, match="BGR"):
        warp_input(np.zeros((10, 10), np.uint8), letterbox_transform(10, 10))
