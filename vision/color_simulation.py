"""Simulated colour readings for testing colour classification: scheme colours seen under a
light, an exposure, per-facelet shading and noise, as a camera with fixed white balance
reports them. Not used by `judgecam check`; tests and accuracy studies build inputs with it.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from judgecam.calibration.scheme import ColorScheme, SchemeColor, builtin_scheme
from judgecam.puzzle.moves import all_single_moves
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.state import State
from judgecam.vision.color_model import FaceletSample
from judgecam.vision.color_naming import lab_to_linear_rgb, linear_rgb_to_lab
from judgecam.vision.colorspace import bgr_to_lab

logger = logging.getLogger(__name__)


def srgb_to_linear(rgb: tuple[int, int, int]) -> NDArray[np.float64]:
    """Linear RGB (0..1) of an sRGB colour (0..255)."""
    value = np.asarray(rgb, dtype=np.float64) / 255.0
    return np.where(value <= 0.04045, value / 12.92, ((value + 0.055) / 1.055) ** 2.4)


#: Light colours as a camera with daylight white balance records them (blackbody sRGB values,
#: Mitchell Charity's table): 3000 K is a warm lamp, 6500 K daylight.
LIGHTS: dict[str, NDArray[np.float64]] = {
    "3000K": srgb_to_linear((255, 180, 107)),
    "6500K": srgb_to_linear((255, 249, 253)),
}


def scheme_from_rgb(puzzle: str, colors: dict[str, tuple[int, int, int]]) -> ColorScheme:
    """A calibrated-looking scheme with the standard faces and the given sRGB colours."""
    base = builtin_scheme(puzzle)
    entries = []
    for color in base.colors:
        red, green, blue = colors[color.name]
        lab = bgr_to_lab(np.array([blue, green, red], dtype=np.float64))
        entries.append(
            SchemeColor(
                color.name,
                (float(lab[0]), float(lab[1]), float(lab[2])),
                (3.0, 3.0, 3.0),
                color.face,
            )
        )
    return ColorScheme("test", puzzle, tuple(entries), base.opposites, "test light")


def scramble(puzzle: str, rng: np.random.Generator, moves: int = 25) -> State:
    """The solved puzzle after `moves` random single moves."""
    options = all_single_moves(puzzle)
    state = get_puzzle(puzzle).solved_state()
    return state.apply([options[int(i)] for i in rng.integers(len(options), size=moves)])


def observe(
    state: State,
    scheme: ColorScheme,
    light: NDArray[np.float64],
    exposure: float,
    noise: float,
    rng: np.random.Generator,
    shading: float = 0.15,
) -> list[FaceletSample]:
    """What a camera with fixed white balance reports: von Kries light, exposure, per-facelet
    shading (uniform +-shading) and CIELAB noise (normal, `noise` per axis)."""
    lab = {color.name: np.array(color.lab) for color in scheme.colors}
    truth = np.array([lab[name] for name in state.colors])
    rgb = lab_to_linear_rgb(truth) * (light / light.max()) * exposure
    rgb *= rng.uniform(1 - shading, 1 + shading, size=(len(rgb), 1))
    seen = linear_rgb_to_lab(rgb) + rng.normal(0.0, noise, size=truth.shape)
    return [FaceletSample((float(a), float(b), float(c))) for a, b, c in seen]
