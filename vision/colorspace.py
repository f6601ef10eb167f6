"""Colour spaces for judging colours: CIELAB from BGR, and the CIEDE2000 colour difference.

Every colour decision in judgecam (classifying facelets, learning and checking colour schemes)
uses these two functions, so that "how different are two colours" means one thing everywhere.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import ArrayLike, NDArray


def bgr_to_lab(bgr: ArrayLike) -> NDArray[np.float64]:
    """CIELAB (D65; L in 0..100, a and b roughly -128..127) of sRGB colours given as BGR.

    Parameters
    ----------
    bgr : array of shape (..., 3)
        uint8 values in 0..255, or floats in 0..255 (means of pixels, for example).
    """
    values = np.asarray(bgr, dtype=np.float32)
    shape = values.shape
    if shape[-1] != 3:
        raise ValueError(f"expected colours with 3 channels (BGR), got shape {shape}")
    flat = np.clip(values.reshape(-1, 1, 3) / 255.0, 0.0, 1.0).astype(np.float32)
    lab = cv2.cvtColor(flat, cv2.COLOR_BGR2Lab)
    return lab.reshape(shape).astype(np.float64)


def lab_to_bgr(lab: ArrayLike) -> NDArray[np.uint8]:
    """sRGB colours as BGR uint8 for CIELAB values (clipped to the sRGB gamut)."""
    values = np.asarray(lab, dtype=np.float32)
    shape = values.shape
    bgr = cv2.cvtColor(values.reshape(-1, 1, 3), cv2.COLOR_Lab2BGR)
    return np.clip(np.rint(bgr * 255.0), 0, 255).astype(np.uint8).reshape(shape)


def ciede2000(lab1: ArrayLike, lab2: ArrayLike) -> NDArray[np.float64]:
    """CIEDE2000 colour difference between CIELAB colours, broadcast over leading axes.

    Notes
    -----
    kL = kC = kH = 1. About 1 is a just-noticeable difference; colours of a puzzle's faces are
    typically 20 or more apart.

    References
    ----------
    G. Sharma, W. Wu, E. N. Dalal, "The CIEDE2000 color-difference formula: implementation
    notes, supplementary test data, and mathematical observations", Color Research and
    Application 30(1), 2005.
    """
    a = np.asarray(lab1, dtype=np.float64)
    b = np.asarray(lab2, dtype=np.float64)
    l1, a1, b1 = a[..., 0], a[..., 1], a[..., 2]
    l2, a2, b2 = b[..., 0], b[..., 1], b[..., 2]
    # Every term is computed once (the published formula repeats some), in the same operations
    # on the same values: the result is the same to the last bit, with fewer array operations.
    c_mean7 = ((np.hypot(a1, b1) + np.hypot(a2, b2)) / 2.0) ** 7
    gain = 1.0 + 0.5 * (1.0 - np.sqrt(c_mean7 / (c_mean7 + 25.0**7)))  # 1 + G
    a1p = gain * a1
    a2p = gain * a2
    c1p = np.hypot(a1p, b1)
    c2p = np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360.0
    c_product = c1p * c2p
    achromatic = c_product == 0.0

    dhp = h2p - h1p
    dhp = np.where(dhp > 180.0, dhp - 360.0, dhp)
    dhp = np.where(dhp < -180.0, dhp + 360.0, dhp)
    dhp = np.where(achromatic, 0.0, dhp)
    dhp_big = 2.0 * np.sqrt(c_product) * np.sin(np.radians(dhp / 2.0))

    cp_mean = (c1p + c2p) / 2.0
    hsum = h1p + h2p
    half = hsum / 2.0
    hp_mean = np.where(
        np.abs(h1p - h2p) <= 180.0,
        half,
        np.where(hsum < 360.0, half + 180.0, half - 180.0),
    )
    hp_mean = np.where(achromatic, hsum, hp_mean)

    t = (
        1.0
        - 0.17 * np.cos(np.radians(hp_mean - 30.0))
        + 0.24 * np.cos(np.radians(2.0 * hp_mean))
        + 0.32 * np.cos(np.radians(3.0 * hp_mean + 6.0))
        - 0.20 * np.cos(np.radians(4.0 * hp_mean - 63.0))
    )
    d_theta = 30.0 * np.exp(-(((hp_mean - 275.0) / 25.0) ** 2))
    cp_mean7 = cp_mean**7
    r_c = 2.0 * np.sqrt(cp_mean7 / (cp_mean7 + 25.0**7))
    lightness2 = ((l1 + l2) / 2.0 - 50.0) ** 2
    s_l = 1.0 + 0.015 * lightness2 / np.sqrt(20.0 + lightness2)
    s_c = 1.0 + 0.045 * cp_mean
    s_h = 1.0 + 0.015 * cp_mean * t
    r_t = -np.sin(np.radians(2.0 * d_theta)) * r_c

    tl = (l2 - l1) / s_l
    tc = (c2p - c1p) / s_c
    th = dhp_big / s_h
    return np.sqrt(tl**2 + tc**2 + th**2 + r_t * tc * th)
