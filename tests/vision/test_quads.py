"""Sticker-like patch finding on images built in code."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from judgecam.vision.quads import brightness, find_patches


def _board(
    corners_list: list[np.ndarray], background: int = 20, color=(40, 180, 230)
) -> np.ndarray:
    image = np.full((240, 320, 3), background, np.uint8)
    for corners in corners_list:
        cv2.fillPoly(image, [np.rint(corners * 16).astype(np.int32)], color, cv2.LINE_AA, 4)
    return image


def _square(cx: float, cy: float, half: float, angle_deg: float) -> np.ndarray:
    t = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    base = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    return base @ rot.T + [cx, cy]


@pytest.mark.parametrize("method", ["edges", "brightness", "both"])
@pytest.mark.parametrize("angle", [0.0, 17.0, 40.0])
def test_finds_rotated_squares_with_subpixel_corners(method: str, angle: float) -> None:
    squares = [_square(80.3, 90.7, 22.0, angle), _square(200.6, 120.2, 25.0, angle + 5)]
    patches = find_patches(_board(squares), method=method)
    assert len(patches) == 2
    for square in squares:
        patch = min(patches, key=lambda p: float(np.linalg.norm(p.center - square.mean(axis=0))))
        np.testing.assert_allclose(patch.center, square.mean(axis=0), atol=0.5)
        # Same corners up to the starting corner (both are clockwise on screen) and up to a
        # uniform inset: the edge method sits two to three pixels inside the outline (Canny
        # edge plus its dilation), the same on every side.
        rolled = min(
            (np.roll(patch.corners, -k, axis=0) for k in range(4)),
            key=lambda c: float(np.abs(c - square).max()),
        )
        center = square.mean(axis=0)
        inset = np.sqrt(
            abs(cv2.contourArea(rolled.astype(np.float32)))
            / cv2.contourArea(square.astype(np.float32))
        )
        assert 0.85 < inset <= 1.02
        np.testing.assert_allclose(rolled, center + inset * (square - center), atol=1.0)
        # The sides keep their directions: what the angle measurement relies on.
        sides = np.roll(rolled, -1, axis=0) - rolled
        expected = np.roll(square, -1, axis=0) - square
        cosines = np.sum(sides * expected, axis=1) / (
            np.linalg.norm(sides, axis=1) * np.linalg.norm(expected, axis=1)
        )
        np.testing.assert_array_less(np.degrees(np.arccos(np.clip(cosines, -1, 1))), 2.0)


def test_triangles_when_asked_for_three_sides() -> None:
    triangle = np.array([[60.0, 60.0], [100.0, 130.0], [30.0, 140.0]])
    patches = find_patches(_board([triangle]), sides=3)
    assert len(patches) == 1
    np.testing.assert_allclose(patches[0].center, triangle.mean(axis=0), atol=1.0)
    assert find_patches(_board([triangle]), sides=4) == ()


def test_non_convex_shapes_are_not_patches() -> None:
    image = np.full((200, 200, 3), 20, np.uint8)
    cv2.fillPoly(
        image,
        [np.array([[20, 20], [180, 20], [180, 180], [100, 60], [20, 180]], np.int32)],
        (200, 200, 200),
    )
    assert find_patches(image) == ()


def test_uniform_and_noise_images_have_no_patches() -> None:
    rng = np.random.default_rng(1)
    assert find_patches(np.full((120, 160, 3), 128, np.uint8)) == ()
    noise = rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)
    assert len(find_patches(noise)) <= 2


def test_brightness_is_the_channel_maximum() -> None:
    image = np.array([[[10, 200, 30], [90, 5, 60]]], np.uint8)
    np.testing.assert_array_equal(brightness(image), [[200, 90]])


def _triangle_pair(squash: float) -> tuple[np.ndarray, np.ndarray]:
    """Two equilateral triangles (side 60 px) sharing an edge, seen squashed by `squash` across
    that edge and turned 20 degrees: (the parallelogram's corners, the shared edge's ends)."""
    side, height = 60.0, 60.0 * np.sqrt(3) / 2
    corners = np.array([[0.0, 0.0], [side / 2, -height], [side, 0.0], [side / 2, height]])
    corners[:, 1] *= squash
    t = np.deg2rad(20.0)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    corners = (corners - [side / 2, 0.0]) @ rot.T + [160.0, 120.0]
    return corners, corners[[0, 2]]


def _pair_board(corners: np.ndarray, gap: np.ndarray | None) -> np.ndarray:
    """Black body, one bright parallelogram, and across it, if `gap`, a faint one-pixel line
    (25 % darker than the sticker): a gap too thin for the threshold to cut."""
    image = _board([corners], background=20, color=(40, 200, 220))
    if gap is not None:
        ends = np.rint(gap * 16).astype(np.int32)
        cv2.line(image, tuple(ends[0]), tuple(ends[1]), (30, 150, 165), 1, cv2.LINE_AA, 4)
    return image


@pytest.mark.parametrize("squash", [1.0, 0.4])
def test_a_parallelogram_with_a_faint_diagonal_gap_is_two_triangles(squash: float) -> None:
    corners, gap = _triangle_pair(squash)
    patches = find_patches(_pair_board(corners, gap), sides=3, method="brightness")
    expected = [corners[[0, 1, 2]].mean(axis=0), corners[[0, 2, 3]].mean(axis=0)]
    assert len(patches) == 2
    # At 0.4 the shared edge is the longer diagonal on screen: the split follows the gap.
    found = sorted((p.center for p in patches), key=lambda c: float(c[1]))
    np.testing.assert_allclose(found, sorted(expected, key=lambda c: float(c[1])), atol=1.5)
    # Each triangle's corners are the parallelogram's, refined on its outline: within a pixel
    # and a half of the truth's (the threshold's outline sits a pixel or so inside the edge).
    for patch in patches:
        truth = min(
            (corners[[0, 1, 2]], corners[[0, 2, 3]]),
            key=lambda t: float(np.linalg.norm(t.mean(axis=0) - patch.center)),
        )
        assert patch.corners.shape == (3, 2)
        worst = min(
            float(np.abs(np.roll(patch.corners, k, axis=0) - ordered).max())
            for k in range(3)
            for ordered in (truth, truth[::-1])
        )
        assert worst < 2.0


def test_a_parallelogram_without_a_gap_is_no_triangle() -> None:
    corners, _ = _triangle_pair(1.0)
    assert find_patches(_pair_board(corners, None), sides=3, method="brightness") == ()
    # A cube's sticker is a parallelogram too: looked for as quads it is one patch.
    assert len(find_patches(_pair_board(corners, None), sides=4, method="brightness")) == 1
