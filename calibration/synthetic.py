"""Synthetic board photographs with known intrinsics, distortion and pose.

Calibration is only trustworthy if it recovers numbers it was given: these functions draw a
board as a camera with a known model would see it, so tests can compare what OpenCV recovers
with the truth.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.calibration.boards import BoardSpec, render_board
from judgecam.calibration.camera import CameraModel

logger = logging.getLogger(__name__)

#: Supersampling factor: each output pixel averages this many samples per axis, so board
#: edges are anti-aliased like a real lens and sensor would blur them.
SUPERSAMPLE = 2


@dataclass(frozen=True, eq=False)
class RayGrid:
    """Normalised camera rays (x/z, y/z) through each supersampled pixel of a distorted image."""

    rays: NDArray[np.float32]  # (H * s, W * s, 2)
    model: CameraModel


@functools.lru_cache(maxsize=8)
def _board_texture(spec: BoardSpec, pixels_per_mm: float, margin_mm: float) -> NDArray[np.uint8]:
    """render_board, cached: views of one board share a few texture resolutions."""
    return render_board(spec, pixels_per_mm, margin_mm)


def ray_grid(model: CameraModel) -> RayGrid:
    """Undistort every (supersampled) pixel once per camera; views then only need a homography."""
    width, height = model.image_size
    s = SUPERSAMPLE
    ys, xs = np.mgrid[0 : height * s, 0 : width * s].astype(np.float64)
    # Supersample k of pixel i sits at i - 0.5 + (k + 0.5) / s in pixel-centre coordinates.
    pixels = np.stack([(xs + 0.5) / s - 0.5, (ys + 0.5) / s - 0.5], axis=-1).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10)
    # R = P = identity: normalised coordinates out.
    rays = cv2.undistortPointsIter(
        pixels, model.camera_matrix, model.dist_coeffs, np.eye(3), np.eye(3), criteria
    )
    return RayGrid(np.asarray(rays).reshape(height * s, width * s, 2).astype(np.float32), model)


def board_pose_looking_at(
    spec: BoardSpec,
    model: CameraModel,
    *,
    centre_px: tuple[float, float],
    distance_mm: float,
    tilt_deg: tuple[float, float, float],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(rvec, tvec) placing the board's centre on pixel `centre_px` at `distance_mm` depth,
    rotated by `tilt_deg` (rotation vector in degrees) from facing the camera squarely."""
    rvec = np.radians(np.asarray(tilt_deg, dtype=np.float64))
    rotation, _ = cv2.Rodrigues(rvec)
    width_mm, height_mm = spec.size_mm
    board_centre = np.array([width_mm / 2, height_mm / 2, 0.0])
    fx, fy = model.fx, model.fy
    cx, cy = model.principal_point
    camera_point = np.array(
        [
            (centre_px[0] - cx) / fx * distance_mm,
            (centre_px[1] - cy) / fy * distance_mm,
            distance_mm,
        ]
    )
    tvec = camera_point - rotation @ board_centre
    return rvec, tvec


def photograph_board(
    spec: BoardSpec,
    grid: RayGrid,
    rvec: NDArray[np.float64],
    tvec: NDArray[np.float64],
    *,
    noise_std: float = 2.0,
    blur_sigma: float = 0.7,
    seed: int = 0,
    background: int = 120,
) -> NDArray[np.uint8]:
    """A grey (H, W) uint8 photograph of the board seen by `grid.model` at pose (rvec, tvec).

    Each supersampled ray is intersected with the board plane (z = 0 in board coordinates),
    the board texture is sampled there, then the image is averaged down, blurred and given
    Gaussian noise.
    """
    width, height = grid.model.image_size
    # About two texture pixels per supersample at the board's distance: enough for linear
    # interpolation to look like an area average.
    scale = 2.0 * SUPERSAMPLE * grid.model.fx / max(float(np.asarray(tvec).reshape(3)[2]), 1.0)
    pixels_per_mm = float(2 ** np.ceil(np.log2(max(scale, 1.0))))
    margin_mm = 10.0
    texture = _board_texture(spec, pixels_per_mm, margin_mm)
    rotation, _ = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64))
    # Plane z=0: normalised (x, y, 1) ~ [r1 r2 t] (X, Y, 1).
    plane_to_rays = np.column_stack([rotation[:, 0], rotation[:, 1], np.asarray(tvec).reshape(3)])
    rays_to_plane = np.linalg.inv(plane_to_rays)
    # Board millimetres of each ray, straight to texture pixels: one 3x3 projective map.
    mm_to_texture = np.array(
        [
            [pixels_per_mm, 0.0, margin_mm * pixels_per_mm - 0.5],
            [0.0, pixels_per_mm, margin_mm * pixels_per_mm - 0.5],
            [0.0, 0.0, 1.0],
        ]
    )
    rays_to_texture = mm_to_texture @ rays_to_plane
    map_xy = cv2.perspectiveTransform(grid.rays, rays_to_texture)
    # Rays that meet the board's plane behind the camera see no board.
    behind = (grid.rays @ rays_to_plane[2, :2].astype(np.float32)) + np.float32(
        rays_to_plane[2, 2]
    ) <= 0
    map_xy[behind] = -1e6
    sampled = cv2.remap(
        texture,
        map_xy[..., 0],
        map_xy[..., 1],
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=background,
    )
    small = cv2.resize(sampled, (width, height), interpolation=cv2.INTER_AREA)
    image = np.asarray(small, dtype=np.float64)
    if blur_sigma > 0:
        image = np.asarray(cv2.GaussianBlur(image, (0, 0), blur_sigma), dtype=np.float64)
    rng = np.random.default_rng(seed)
    image += rng.normal(0.0, noise_std, image.shape)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)
