"""Colours for rendering: sRGB transfer, light colour from a colour temperature, colour schemes.

Rendering happens in linear light; the scheme colours are nominal sRGB (what a well exposed,
white-balanced photo of the sticker shows) so they can be compared with classified colours.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

logger = logging.getLogger(__name__)

#: XYZ (D65) to linear sRGB (IEC 61966-2-1).
_XYZ_TO_LINEAR_SRGB = np.array(
    [
        [3.2404542, -1.5371385, -0.4985314],
        [-0.9692660, 1.8760108, 0.0415560],
        [0.0556434, -0.2040259, 1.0572252],
    ]
)


def srgb_to_linear(srgb: ArrayLike) -> NDArray[np.float64]:
    """Linear light in 0..1 from sRGB-encoded values in 0..1."""
    c = np.asarray(srgb, dtype=np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(linear: ArrayLike) -> NDArray[np.float64]:
    """sRGB-encoded values in 0..1 from linear light (clipped to 0..1 first)."""
    c = np.clip(np.asarray(linear, dtype=np.float64), 0.0, 1.0)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1.0 / 2.4) - 0.055)


def blackbody_rgb(kelvin: float) -> NDArray[np.float64]:
    """Linear sRGB colour of a Planckian radiator, normalised to luminance Y = 1.

    Uses the cubic-spline fit of the Planckian locus in CIE 1931 xy (Kim et al., US patent
    7,024,034; valid 1667..25000 K), which is accurate well within what a light bulb varies.
    """
    t = float(np.clip(kelvin, 1667.0, 25000.0))
    if t <= 4000.0:
        x = -0.2661239e9 / t**3 - 0.2343589e6 / t**2 + 0.8776956e3 / t + 0.179910
    else:
        x = -3.0258469e9 / t**3 + 2.1070379e6 / t**2 + 0.2226347e3 / t + 0.240390
    if t <= 2222.0:
        y = -1.1063814 * x**3 - 1.34811020 * x**2 + 2.18555832 * x - 0.20219683
    elif t <= 4000.0:
        y = -0.9549476 * x**3 - 1.37418593 * x**2 + 2.09137015 * x - 0.16748867
    else:
        y = 3.0817580 * x**3 - 5.87338670 * x**2 + 3.75112997 * x - 0.37001483
    xyz = np.array([x / y, 1.0, (1.0 - x - y) / y])
    rgb = _XYZ_TO_LINEAR_SRGB @ xyz
    return np.asarray(np.clip(rgb, 0.0, None), dtype=np.float64)


@dataclass(frozen=True)
class ColorScheme:
    """A named set of puzzle colours: face name -> colour name, colour name -> nominal sRGB."""

    name: str
    face_colors: dict[str, str]
    srgb: dict[str, tuple[int, int, int]]

    def albedo(self, color_name: str) -> NDArray[np.float64]:
        """Linear diffuse albedo of a sticker of this colour (nominal sRGB is a white-balanced
        photo of it, so albedo = linearised sRGB, scaled below 1 like real pigments)."""
        return 0.86 * srgb_to_linear(np.asarray(self.srgb[color_name], dtype=np.float64) / 255.0)


_CUBE_FACES = ("U", "D", "F", "B", "R", "L")
_PYRAMINX_FACES = ("F", "L", "R", "D")

_WCA_CUBE = {
    "white": (235, 236, 232),
    "yellow": (245, 215, 20),
    "green": (20, 170, 70),
    "blue": (20, 80, 200),
    "red": (200, 25, 30),
    "orange": (255, 110, 15),
}
_PASTEL = {
    "cream": (238, 232, 215),
    "lemon": (246, 232, 120),
    "mint": (130, 215, 160),
    "sky": (120, 170, 235),
    "rose": (235, 120, 135),
    "peach": (250, 170, 110),
}
_FLUORESCENT = {
    "white": (240, 242, 240),
    "neon-yellow": (225, 250, 30),
    "neon-green": (40, 240, 80),
    "neon-blue": (20, 150, 255),
    "neon-pink": (255, 40, 150),
    "neon-orange": (255, 120, 10),
}
_HALF_BRIGHT = {
    "white": (215, 215, 210),
    "yellow": (215, 190, 35),
    "green": (35, 140, 70),
    "blue": (35, 70, 160),
    "red": (165, 35, 40),
    "orange": (220, 110, 40),
}


def _cube_scheme(name: str, palette: dict[str, tuple[int, int, int]]) -> ColorScheme:
    names = list(palette)  # order: U, D, F, B, R, L (white/yellow, green/blue, red/orange)
    return ColorScheme(name, dict(zip(_CUBE_FACES, names, strict=True)), dict(palette))


CUBE_SCHEMES: dict[str, ColorScheme] = {
    "wca": _cube_scheme("wca", _WCA_CUBE),
    "pastel": _cube_scheme("pastel", _PASTEL),
    "fluorescent": _cube_scheme("fluorescent", _FLUORESCENT),
    "half-bright": _cube_scheme("half-bright", _HALF_BRIGHT),
}

PYRAMINX_SCHEMES: dict[str, ColorScheme] = {
    "wca": ColorScheme(
        "wca",
        {"F": "green", "L": "red", "R": "blue", "D": "yellow"},
        {k: _WCA_CUBE[k] for k in ("green", "red", "blue", "yellow")},
    ),
    "pastel": ColorScheme(
        "pastel",
        {"F": "mint", "L": "rose", "R": "sky", "D": "lemon"},
        {k: _PASTEL[k] for k in ("mint", "rose", "sky", "lemon")},
    ),
    "fluorescent": ColorScheme(
        "fluorescent",
        {"F": "neon-green", "L": "neon-pink", "R": "neon-blue", "D": "neon-yellow"},
        {k: _FLUORESCENT[k] for k in ("neon-green", "neon-pink", "neon-blue", "neon-yellow")},
    ),
}


def scheme_for(puzzle: str, name: str) -> ColorScheme:
    """The colour scheme `name` for a puzzle family ('pyram' or a cube)."""
    table = PYRAMINX_SCHEMES if puzzle == "pyram" else CUBE_SCHEMES
    if name not in table:
        raise KeyError(f"no colour scheme {name!r} for {puzzle}; known: {sorted(table)}")
    return table[name]
