"""Showing a colour scheme: terminal swatches and a small PNG card.

An organiser checks a learnt scheme by eye before the competition: the swatch shows each
centre as the camera saw it, with a bar spanning +-2 spreads in lightness beside it.
"""

from __future__ import annotations

import logging

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.calibration.scheme import ColorScheme, PairSeparation, separation
from judgecam.vision.colorspace import lab_to_bgr

logger = logging.getLogger(__name__)

_ROW_HEIGHT = 48
_SWATCH_WIDTH = 96
_TEXT_WIDTH = 360


def scheme_text(scheme: ColorScheme, *, ansi: bool) -> str:
    """The scheme as lines of text; with `ansi`, each colour gets a 24-bit background swatch."""
    lines = [f"{scheme.name}  ({scheme.puzzle}, light: {scheme.light})"]
    for color in scheme.colors:
        blue, green, red = (int(v) for v in lab_to_bgr(np.array(color.lab)))
        swatch = f"\x1b[48;2;{red};{green};{blue}m      \x1b[0m " if ansi else ""
        face = f" face {color.face}" if color.face else ""
        lines.append(
            f"  {swatch}{color.name:<12} L {color.lab[0]:6.1f} a {color.lab[1]:6.1f} "
            f"b {color.lab[2]:6.1f}  spread {color.spread[0]:.1f}/{color.spread[1]:.1f}/"
            f"{color.spread[2]:.1f}  #{red:02x}{green:02x}{blue:02x}{face}"
        )
    if scheme.opposites:
        lines.append("  opposite: " + ", ".join(f"{a}-{b}" for a, b in scheme.opposites))
    pairs = separation(scheme)
    closest = pairs[:3]
    lines.append("  closest pairs (regulation 8.2):")
    lines += [f"    {_pair_line(pair)}" for pair in closest]
    return "\n".join(lines)


def _pair_line(pair: PairSeparation) -> str:
    return (
        f"{pair.first} / {pair.second}: CIEDE2000 {pair.delta_e:.1f}, "
        f"separation {pair.separation:.1f} spreads: {pair.status}"
    )


def scheme_card(scheme: ColorScheme) -> NDArray[np.uint8]:
    """A BGR image: one row per colour, the centre swatch and its lightness range, with labels."""
    rows = len(scheme.colors)
    card = np.full((rows * _ROW_HEIGHT, 2 * _SWATCH_WIDTH + _TEXT_WIDTH, 3), 255, dtype=np.uint8)
    for row, color in enumerate(scheme.colors):
        top = row * _ROW_HEIGHT
        centre = np.array(color.lab, dtype=np.float64)
        card[top : top + _ROW_HEIGHT, :_SWATCH_WIDTH] = lab_to_bgr(centre)
        # Lightness ramp from -2 to +2 spreads: how much the colour varied when learnt.
        offsets = np.linspace(-2.0, 2.0, _SWATCH_WIDTH)
        ramp = np.repeat(centre[None, :], _SWATCH_WIDTH, axis=0)
        ramp[:, 0] = np.clip(ramp[:, 0] + offsets * color.spread[0], 0.0, 100.0)
        card[top : top + _ROW_HEIGHT, _SWATCH_WIDTH : 2 * _SWATCH_WIDTH] = lab_to_bgr(ramp)[None]
        label = f"{color.name}" + (f" ({color.face})" if color.face else "")
        cv2.putText(
            card,
            label,
            (2 * _SWATCH_WIDTH + 8, top + 20),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.55,
            (0, 0, 0),
            1,
            cv2.LINE_AA,
        )
        numbers = f"L{color.lab[0]:.0f} a{color.lab[1]:.0f} b{color.lab[2]:.0f}"
        cv2.putText(
            card,
            numbers,
            (2 * _SWATCH_WIDTH + 8, top + 40),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.45,
            (60, 60, 60),
            1,
            cv2.LINE_AA,
        )
    return card
