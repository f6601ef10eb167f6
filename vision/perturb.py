"""Images changed the way a camera or a venue changes them, to measure what was never tuned on.

`evaluate --perturb KIND` judges the corpus with every view passed through one of these (the
truth unchanged): a camera's fixed white balance under warm or cool light, underexposure, low
contrast, heavy JPEG compression, sensor noise.
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
}


def perturbed(image: Image, kind: str, name: str = "") -> Image:
    """`image` (BGR) changed by the perturbation `kind` (a key of PERTURBATIONS)."""
    if kind not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(PERTURBATIONS)}")
    return PERTURBATIONS[kind](image, name)
