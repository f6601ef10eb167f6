"""Images changed the way a camera or a venue changes them, to measure what was never tuned on.

`evaluate --perturb KIND` judges the corpus with every view passed through one of these (the
truth unchanged): a camera's fixed white balance under warm or cool light, underexposure, low
contrast, heavy JPEG compression, sensor noise, a lens a little out of focus, a hand's motion
blur, a cheap lens's vignetting.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import cv2
import numpy as np
from numpy.typing import NDArray

Image = NDArray[np.uint8]


def _gains(blue: float, green: float, red: float) -> Callable[[Image, str], Image]:
    def apply(image: Image, name: str) -> Image:
        return _clipped(image.astype(np.float32) * np.array([blue, green, red], np.float32))

    return apply


def _darker(image: Image, name: str) -> Image:
    """Gamma 1.8 and 0.8 of the light: an underexposed camera."""
    return _clipped(255.0 * (image.astype(np.float32) / 255.0) ** 1.8 * 0.8)


def _flat(image: Image, name: str) -> Image:
    """60 + 0.6 x: a hazy, low-contrast view."""
    return _clipped(60.0 + 0.6 * image.astype(np.float32))


def _jpeg30(image: Image, name: str) -> Image:
    """Encoded at JPEG quality 30."""
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 30])
    if not ok:
        raise ValueError(f"{name}: could not encode as JPEG")
    return np.asarray(cv2.imdecode(encoded, cv2.IMREAD_COLOR), dtype=np.uint8)


def _noise8(image: Image, name: str) -> Image:
    """Gaussian sensor noise, sigma 8 (the same for the same view name)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return _clipped(image.astype(np.float32) + rng.normal(0.0, 8.0, image.shape))


def _defocus(image: Image, name: str) -> Image:
    """Gaussian blur, sigma 1.5 pixels: a fixed-focus lens a little off at the mat's distance."""
    return np.asarray(cv2.GaussianBlur(image, (0, 0), 1.5), dtype=np.uint8)


def _motion(image: Image, name: str) -> Image:
    """A horizontal smear over 7 pixels: the puzzle set down, or the camera shaken, mid-exposure."""
    kernel = np.full((1, 7), 1.0 / 7.0, np.float32)
    return np.asarray(cv2.filter2D(image, -1, kernel), dtype=np.uint8)


def _vignette(image: Image, name: str) -> Image:
    """Light falling to 45 % at the corners (cos^4-like, quadratic in the radius)."""
    height, width = image.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    radius2 = ((xs - (width - 1) / 2) ** 2 + (ys - (height - 1) / 2) ** 2) / (
        ((width - 1) / 2) ** 2 + ((height - 1) / 2) ** 2
    )
    gain = 1.0 - 0.55 * radius2
    return _clipped(image.astype(np.float32) * gain[..., None])


def _clipped(values: NDArray[np.floating]) -> Image:
    return np.clip(values, 0, 255).astype(np.uint8)


#: Name -> the change (image, view name) -> image.
PERTURBATIONS: dict[str, Callable[[Image, str], Image]] = {
    "warm": _gains(0.72, 0.95, 1.18),  # a fixed white balance under tungsten
    "cool": _gains(1.2, 1.0, 0.8),
    "dark": _darker,
    "flat": _flat,
    "jpeg30": _jpeg30,
    "noise8": _noise8,
    "defocus": _defocus,
    "motion": _motion,
    "vignette": _vignette,
}


def perturbed(image: Image, kind: str, name: str = "") -> Image:
    """`image` (BGR) changed by the perturbation `kind` (a key of PERTURBATIONS)."""
    if kind not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(PERTURBATIONS)}")
    return PERTURBATIONS[kind](image, name)


def miscalibrated(
    world_from_camera: NDArray[np.float64], degrees: float, millimetres: float, name: str = ""
) -> NDArray[np.float64]:
    """A camera pose (4x4 world_from_camera, mm) as a rig calibration that is off might give
    it: turned by `degrees` about a random axis and moved `millimetres` in a random direction
    (seeded by `name`, so every run gives the same poses)."""
    rng = np.random.default_rng(zlib.crc32(("rig:" + name).encode()))
    axis = rng.normal(size=3)
    direction = rng.normal(size=3)
    turn, _ = cv2.Rodrigues(axis / np.linalg.norm(axis) * np.radians(degrees))
    pose = np.array(world_from_camera, dtype=np.float64)
    pose[:3, :3] = pose[:3, :3] @ turn
    pose[:3, 3] += direction / np.linalg.norm(direction) * millimetres
    return pose
