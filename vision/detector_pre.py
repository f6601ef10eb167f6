"""Pre-processing for the learned detector: square crops of a frame mapped to the model input.

The detector runs twice per frame: once on the whole frame letterboxed into the square input
(where is the puzzle?), then on a square crop around the puzzle (where exactly is every
facelet?). Both are the same operation, an axis-aligned similarity from frame pixels to input
pixels, so one `CropTransform` describes either and maps keypoints back to the frame.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)

#: Side of the square model input, pixels.
INPUT_SIZE = 256
#: Grey used outside the frame (letterbox bars, crops past the frame edge).
PAD_VALUE = 114


@dataclass(frozen=True)
class CropTransform:
    """input = (frame - origin) * scale: a square window of the frame seen by the model."""

    origin_x: float
    origin_y: float
    scale: float  # input pixels per frame pixel
    size: int = INPUT_SIZE

    def to_frame(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """Input-pixel coordinates (..., 2) to frame-pixel coordinates."""
        origin = np.array([self.origin_x, self.origin_y])
        return np.asarray(np.asarray(points, np.float64) / self.scale + origin, np.float64)

    def to_input(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """Frame-pixel coordinates (..., 2) to input-pixel coordinates."""
        origin = np.array([self.origin_x, self.origin_y])
        return np.asarray((np.asarray(points, np.float64) - origin) * self.scale, np.float64)

    def matrix(self) -> NDArray[np.float64]:
        """The 2x3 affine frame -> input matrix (for cv2.warpAffine)."""
        return np.array(
            [
                [self.scale, 0.0, -self.origin_x * self.scale],
                [0.0, self.scale, -self.origin_y * self.scale],
            ]
        )


def letterbox_transform(width: int, height: int, size: int = INPUT_SIZE) -> CropTransform:
    """The whole frame scaled to fit the square input, centred (bars above and below)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"frame size must be positive, got {width}x{height}")
    side = float(max(width, height))
    return CropTransform(
        origin_x=(width - side) / 2.0, origin_y=(height - side) / 2.0, scale=size / side, size=size
    )


def crop_transform(
    center_x: float, center_y: float, side: float, size: int = INPUT_SIZE
) -> CropTransform:
    """A square window of `side` frame pixels centred on (center_x, center_y)."""
    if side <= 0:
        raise ValueError(f"crop side must be positive, got {side}")
    return CropTransform(
        origin_x=center_x - side / 2.0, origin_y=center_y - side / 2.0, scale=size / side, size=size
    )


def warp_input(image: NDArray[np.uint8], transform: CropTransform) -> NDArray[np.uint8]:
    """The (size, size, 3) BGR window of `image` that `transform` describes."""
    return warp_affine(image, transform.matrix(), transform.size)


def warp_affine(
    image: NDArray[np.uint8], matrix: NDArray[np.float64], size: int
) -> NDArray[np.uint8]:
    """The (size, size, 3) window `input = matrix @ [x, y, 1]` of a BGR frame (the training
    crops, which may also rotate and mirror, use this too, so they look like run-time inputs)."""
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected a BGR image of shape (H, W, 3), got {image.shape}")
    # Shrinking a lot with bilinear sampling aliases thin sticker gaps away: halve the frame
    # with a Gaussian pyramid first (fast, and pixel (2i, 2j) maps to (i, j) exactly).
    source = image
    scale = float(np.sqrt(abs(np.linalg.det(matrix[:, :2]))))
    factor = 1.0
    while scale * factor < 0.5 and min(source.shape[:2]) >= 64:
        source = np.asarray(cv2.pyrDown(source), np.uint8)
        factor *= 2.0
    scaled = np.array(matrix, np.float64)
    scaled[:, :2] *= factor
    return np.asarray(
        cv2.warpAffine(
            source,
            scaled,
            (size, size),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(PAD_VALUE, PAD_VALUE, PAD_VALUE),
        ),
        np.uint8,
    )


def to_tensor(window: NDArray[np.uint8]) -> NDArray[np.float32]:
    """A BGR uint8 window (S, S, 3) as the model's input: (1, 3, S, S) RGB float in [0, 1]."""
    rgb = window[:, :, ::-1].astype(np.float32) / 255.0
    return np.ascontiguousarray(rgb.transpose(2, 0, 1)[None])
