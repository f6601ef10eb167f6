"""Camera models (intrinsics, OpenCV distortion) and their placement around the puzzle.

Conventions: world frame in mm, the mat surface is z = 0 with +z up. A camera pose is
world-from-camera with OpenCV camera axes (x right, y down, z forward). Intrinsics and
distortion use OpenCV's model (k1, k2, p1, p2, k3), so `cv2.projectPoints` reproduces the
rendered image exactly.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CameraModel:
    """A physical camera module at one output resolution."""

    name: str
    width: int
    height: int
    focal_px: float  # nominal fx = fy at this resolution


#: Raspberry Pi Camera Module 3 (IMX708, 4608x2592, ~66 deg horizontal FOV), scaled output modes.
PI_CAM3_720 = CameraModel("picam3-1280x720", 1280, 720, 640.0 / math.tan(math.radians(33.0)))
PI_CAM3_864 = CameraModel("picam3-1536x864", 1536, 864, 768.0 / math.tan(math.radians(33.0)))
#: Raspberry Pi HQ camera (IMX477, 1/2.3", 6.287x4.712 mm, 4056x3040) with the 6 mm CS lens.
#: 1332x990 is the 2x2-binned cropped mode (3.1 um pixels); 1280x960 is the full sensor scaled.
HQ_6MM_1332 = CameraModel("hq6mm-1332x990", 1332, 990, 6.0 / 0.00310)
HQ_6MM_1280 = CameraModel("hq6mm-1280x960", 1280, 960, 6.0 / (6.287 / 1280))

CAMERA_MODELS: dict[str, CameraModel] = {
    m.name: m for m in (PI_CAM3_720, PI_CAM3_864, HQ_6MM_1332, HQ_6MM_1280)
}


def at_resolution(model: CameraModel, factor: float) -> CameraModel:
    """The same camera (field of view, optics) in an output mode `factor` times as wide and
    high, as a Pi camera's other sensor modes or another USB camera setting give."""
    if factor == 1.0:
        return model
    width, height = round(model.width * factor), round(model.height * factor)
    family = model.name.rsplit("-", 1)[0]
    return CameraModel(f"{family}-{width}x{height}", width, height, model.focal_px * factor)


@dataclass(frozen=True)
class Camera:
    """One placed camera: intrinsics K, OpenCV distortion and world-from-camera pose."""

    name: str
    model: str
    width: int
    height: int
    camera_matrix: NDArray[np.float64]  # 3x3
    dist_coeffs: NDArray[np.float64]  # (5,) k1 k2 p1 p2 k3
    world_from_camera: NDArray[np.float64]  # 4x4, OpenCV camera axes

    @property
    def camera_from_world(self) -> NDArray[np.float64]:
        return np.asarray(np.linalg.inv(self.world_from_camera), np.float64)

    @property
    def position(self) -> NDArray[np.float64]:
        return self.world_from_camera[:3, 3].copy()

    def project(self, points_world: NDArray[np.float64]) -> NDArray[np.float64]:
        """Pixel coordinates (N, 2) of world points through the full distortion model."""
        import cv2

        pts = np.asarray(points_world, dtype=np.float64).reshape(-1, 3)
        cw = self.camera_from_world
        rvec, _ = cv2.Rodrigues(cw[:3, :3])
        px, _ = cv2.projectPoints(pts, rvec, cw[:3, 3], self.camera_matrix, self.dist_coeffs)
        return np.asarray(px.reshape(-1, 2), dtype=np.float64)

    def depth(self, points_world: NDArray[np.float64]) -> NDArray[np.float64]:
        """Distance along the optical axis (mm) of world points; negative = behind."""
        pts = np.asarray(points_world, dtype=np.float64).reshape(-1, 3)
        cw = self.camera_from_world
        return np.asarray(pts @ cw[2, :3] + cw[2, 3], dtype=np.float64)


def look_at(eye: NDArray[np.float64], target: NDArray[np.float64], roll_deg: float = 0.0):
    """World-from-camera (OpenCV axes) for a camera at `eye` looking at `target`, world +z up."""
    eye = np.asarray(eye, dtype=np.float64)
    forward = np.asarray(target, dtype=np.float64) - eye
    forward /= np.linalg.norm(forward)
    up = np.array([0.0, 0.0, 1.0])
    if abs(forward @ up) > 0.999:  # looking straight down: pick +y as the image "up"
        up = np.array([0.0, 1.0, 0.0])
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    if roll_deg:
        a = math.radians(roll_deg)
        right, down = (
            math.cos(a) * right + math.sin(a) * down,
            -math.sin(a) * right + math.cos(a) * down,
        )
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = right, down, forward, eye
    return pose


def make_camera(
    name: str,
    model: CameraModel,
    eye: NDArray[np.float64],
    target: NDArray[np.float64],
    rng: np.random.Generator,
    roll_deg: float = 0.0,
) -> Camera:
    """A camera of `model` at `eye` looking at `target`, with slightly varied intrinsics and mild
    lens distortion like a factory unit (focal +-2 %, principal point +-1 %, |k1| <= 0.05)."""
    f = model.focal_px * rng.uniform(0.98, 1.02)
    cx = (model.width - 1) / 2.0 + rng.uniform(-0.01, 0.01) * model.width
    cy = (model.height - 1) / 2.0 + rng.uniform(-0.01, 0.01) * model.height
    k = np.array([[f, 0.0, cx], [0.0, f * rng.uniform(0.998, 1.002), cy], [0.0, 0.0, 1.0]])
    dist = np.array(
        [
            rng.uniform(-0.05, 0.05),
            rng.uniform(-0.03, 0.03),
            rng.uniform(-0.001, 0.001),
            rng.uniform(-0.001, 0.001),
            rng.uniform(-0.01, 0.01),
        ]
    )
    return Camera(
        name=name,
        model=model.name,
        width=model.width,
        height=model.height,
        camera_matrix=k,
        dist_coeffs=dist,
        world_from_camera=look_at(eye, target, roll_deg),
    )


def spherical_eye(
    target: NDArray[np.float64], distance: float, azimuth_deg: float, elevation_deg: float
) -> NDArray[np.float64]:
    """A point `distance` mm from `target` at the given azimuth (about +z) and elevation."""
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    offset = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    return np.asarray(target, dtype=np.float64) + distance * offset


def gl_projection(
    fx: float, fy: float, cx: float, cy: float, width: int, height: int, near: float, far: float
) -> NDArray[np.float64]:
    """OpenGL projection for a pinhole with OpenCV intrinsics (pixel centres at integers), for a
    GL camera looking down -z with +y up; the rendered image must be flipped vertically."""
    cxg, cyg = cx + 0.5, cy + 0.5  # GL pixel centres sit at +0.5
    return np.array(
        [
            [2 * fx / width, 0.0, 1 - 2 * cxg / width, 0.0],
            [0.0, 2 * fy / height, 2 * cyg / height - 1, 0.0],
            [0.0, 0.0, -(far + near) / (far - near), -2 * far * near / (far - near)],
            [0.0, 0.0, -1.0, 0.0],
        ]
    )


#: OpenCV camera axes (x right, y down, z forward) to OpenGL camera axes (x right, y up, z back).
CV_TO_GL = np.diag([1.0, -1.0, -1.0, 1.0])
