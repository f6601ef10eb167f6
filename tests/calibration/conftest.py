"""Synthetic board photographs with known intrinsics, shared by the calibration tests."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from numpy.typing import NDArray

from judgecam.calibration.boards import BoardSpec, parse_board
from judgecam.calibration.camera import CameraModel
from judgecam.calibration.synthetic import board_pose_looking_at, photograph_board, ray_grid

#: The camera the photographs are taken with: slightly non-square pixels, principal point
#: off centre, barrel distortion like a wide lens.
TRUE_CAMERA = CameraModel(
    np.array([[600.0, 0.0, 322.0], [0.0, 606.0, 236.0], [0.0, 0.0, 1.0]]),
    np.array([-0.12, 0.05, 0.001, -0.0005, 0.0]),
    (640, 480),
    "truth",
)
#: Where the board's centre goes (pixels) and how it is tilted (degrees): the centre, the
#: four corners, the edges, and strong tilts so that focal length and distance separate.
VIEWS: tuple[tuple[tuple[float, float], tuple[float, float, float]], ...] = (
    ((320, 240), (0, 0, 0)),
    ((170, 130), (25, -20, 5)),
    ((470, 130), (25, 20, -5)),
    ((170, 350), (-25, -20, 0)),
    ((470, 350), (-25, 20, 10)),
    ((320, 120), (30, 0, 0)),
    ((320, 360), (-30, 0, 0)),
    ((150, 240), (0, 30, 0)),
    ((490, 240), (0, -30, 0)),
    ((200, 200), (15, 15, 20)),
    ((440, 280), (-15, -15, -20)),
    ((320, 240), (0, 35, 90)),
)


@dataclass(frozen=True, eq=False)
class BoardPhotos:
    spec: BoardSpec
    images: tuple[NDArray[np.uint8], ...]
    rvecs: tuple[NDArray[np.float64], ...]
    tvecs: tuple[NDArray[np.float64], ...]


def _photos(board: str, distance_mm: float) -> BoardPhotos:
    spec = parse_board(board)
    grid = ray_grid(TRUE_CAMERA)
    images, rvecs, tvecs = [], [], []
    for seed, (centre, tilt) in enumerate(VIEWS):
        rvec, tvec = board_pose_looking_at(
            spec, TRUE_CAMERA, centre_px=centre, distance_mm=distance_mm, tilt_deg=tilt
        )
        images.append(photograph_board(spec, grid, rvec, tvec, seed=seed))
        rvecs.append(rvec)
        tvecs.append(tvec)
    return BoardPhotos(spec, tuple(images), tuple(rvecs), tuple(tvecs))


@pytest.fixture(scope="session")
def true_camera() -> CameraModel:
    return TRUE_CAMERA


@pytest.fixture(scope="session")
def chessboard_photos() -> BoardPhotos:
    """12 photos of a 9x6 inner-corner, 25 mm chessboard."""
    return _photos("chessboard:9x6:25mm", 450.0)


@pytest.fixture(scope="session")
def charuco_photos() -> BoardPhotos:
    """12 photos of a 7x5 square, 40 mm ChArUco board."""
    return _photos("charuco:7x5:40mm:30mm:4X4_50", 450.0)
