"""The pinhole camera the geometry is fitted with: intrinsics, undistortion and projection.

Detected points are undistorted once (to ideal pixel coordinates with the same camera matrix),
after which every projection is a plain pinhole product: fast to batch over many hypotheses.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class Intrinsics:
    """Camera matrix (3, 3), distortion coefficients and whether they were assumed."""

    camera_matrix: NDArray[np.float64]
    dist_coeffs: NDArray[np.float64]
    assumed: bool = False

    @classmethod
    def assumed_for(cls, width: int, height: int) -> Intrinsics:
        """Nominal Raspberry Pi Camera Module 3 intrinsics at this image size, marked assumed."""
        from judgecam.calibration.camera import default_intrinsics

        return cls.from_camera_model(default_intrinsics(width, height), assumed=True)

    @classmethod
    def from_camera_model(cls, model: Any, assumed: bool = False) -> Intrinsics:
        """From `judgecam.calibration.camera.CameraModel` (camera_matrix, dist_coeffs)."""
        return cls(
            np.asarray(model.camera_matrix, dtype=np.float64),
            np.asarray(model.dist_coeffs, dtype=np.float64).reshape(-1),
            assumed=assumed,
        )

    def undistort(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """Ideal (distortion-free) pixel coordinates of distorted pixel points (..., 2)."""
        if not np.any(self.dist_coeffs):
            return np.asarray(points, dtype=np.float64)
        shape = points.shape
        flat = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
        ideal = cv2.undistortPoints(
            flat, self.camera_matrix, self.dist_coeffs, P=self.camera_matrix
        )
        return np.asarray(ideal, dtype=np.float64).reshape(shape)

    def distort(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """Distorted pixel coordinates of ideal pixel points (..., 2), e.g. for overlays."""
        if not np.any(self.dist_coeffs):
            return np.asarray(points, dtype=np.float64)
        shape = points.shape
        matrix = self.camera_matrix
        flat = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        rays = np.column_stack(
            [
                (flat[:, 0] - matrix[0, 2]) / matrix[0, 0],
                (flat[:, 1] - matrix[1, 2]) / matrix[1, 1],
                np.ones(len(flat)),
            ]
        )
        pixels, _ = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), matrix, self.dist_coeffs)
        return np.asarray(pixels, dtype=np.float64).reshape(shape)


def rotation_matrix(rvec: NDArray[np.float64]) -> NDArray[np.float64]:
    """The 3x3 rotation matrix of a Rodrigues vector."""
    matrix, _ = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64).reshape(3, 1))
    return np.asarray(matrix, dtype=np.float64)


def rotation_angle_deg(rotation: NDArray[np.float64]) -> float:
    """The angle (degrees) of a 3x3 rotation matrix."""
    cosine = (float(np.trace(rotation)) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))


def project(
    points: NDArray[np.float64],
    rotation: NDArray[np.float64],
    translation: NDArray[np.float64],
    camera_matrix: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Ideal pixel coordinates (..., 2) of model points (..., 3) under a pose."""
    return to_pixels(points @ rotation.T + translation, camera_matrix)


def to_pixels(
    in_camera: NDArray[np.float64], camera_matrix: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Ideal pixel coordinates (..., 2) of camera-frame points (..., 3)."""
    z = np.maximum(in_camera[..., 2:3], 1e-6)
    normalised = in_camera[..., :2] / z
    return normalised * camera_matrix.diagonal()[:2] + camera_matrix[:2, 2]
