"""Helpers shared by the corpus tests: reading truth files and sampling sticker colours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.render.color import linear_to_srgb, srgb_to_linear
from judgecam.vision.colorspace import bgr_to_lab, ciede2000


def load_manifest(corpus: Path) -> dict[str, Any]:
    return json.loads((corpus / "manifest.json").read_text())


def load_truth(corpus: Path, entry: dict[str, Any]) -> dict[str, Any]:
    return json.loads((corpus / entry["truth"]).read_text())


def sample_sticker(image: NDArray[np.uint8], facelet: dict[str, Any], shrink: float = 0.4):
    """Median BGR inside the facelet polygon shrunk towards its centre (away from the edges)."""
    polygon = np.asarray(facelet["polygon_px"], np.float64)
    centre = np.asarray(facelet["center_px"], np.float64)
    inner = np.rint(centre + (polygon - centre) * shrink).astype(np.int32)
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(mask, [inner], 1)
    pixels = image[mask > 0]
    if len(pixels) == 0:
        return None
    return np.median(pixels, axis=0)


def classify_view(
    image: NDArray[np.uint8], facelets: list[dict[str, Any]], scheme: dict[str, Any]
) -> list[tuple[str, str]]:
    """(label, nearest scheme colour) for every sampled facelet of one view.

    A camera's white balance and exposure and the shading of each face are unknown, so one
    diagonal gain per channel for the view and one brightness factor per puzzle face (least
    squares in linear RGB) map the samples onto the scheme before each sample is given the
    nearest scheme colour by CIEDE2000. A polygon that misses its sticker lands on another
    colour or the black body, which those few shared factors cannot hide.
    """
    names = list(scheme["colors"])
    nominal = np.asarray([scheme["colors"][n] for n in names], np.float64)
    nominal_lab = bgr_to_lab(nominal[:, ::-1])
    samples, labels, faces = [], [], []
    for facelet in facelets:
        bgr = sample_sticker(image, facelet)
        if bgr is not None:
            samples.append(bgr[::-1])
            labels.append(facelet["color"])
            faces.append(facelet["face"])
    if not samples:
        return []
    measured = srgb_to_linear(np.asarray(samples) / 255.0)
    target = srgb_to_linear(np.asarray([scheme["colors"][c] for c in labels]) / 255.0)
    gains = (measured * target).sum(axis=0) / np.maximum((measured * measured).sum(axis=0), 1e-9)
    balanced = measured * gains
    # one exposure factor per puzzle face: a face is lit as a whole (key light, shadow, grazing)
    luminance = np.array([0.2126, 0.7152, 0.0722])
    for face in set(faces):
        rows = [i for i, f in enumerate(faces) if f == face]
        y_meas, y_target = balanced[rows] @ luminance, target[rows] @ luminance
        balanced[rows] *= (y_meas @ y_target) / max(float(y_meas @ y_meas), 1e-9)
    corrected = linear_to_srgb(balanced) * 255.0
    distances = ciede2000(bgr_to_lab(corrected[:, ::-1])[:, None, :], nominal_lab[None, :, :])
    return [
        (label, names[int(i)]) for label, i in zip(labels, distances.argmin(axis=1), strict=True)
    ]


def well_visible(facelet: dict[str, Any], min_pixels: int = 150) -> bool:
    """A facelet worth sampling: almost fully visible, big enough, a plain sticker."""
    return (
        facelet["visibility"] >= 0.9
        and facelet["pixels"] >= min_pixels
        and not facelet.get("logo")
        and not facelet.get("missing")
    )
