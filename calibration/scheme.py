"""Colour schemes: what each face colour of a puzzle looks like under the station's light.

A scheme stores, per colour, a robust centre and spread in CIELAB, a robust covariance in
shading coordinates (`shading_coordinates`: how lit and shaded faces of one colour vary), the
pairs of colours on opposite faces, and the light it was learnt under. `separation` checks
regulation 8.2 (every colour clearly distinguishable from every other) before a scheme is used
for judging.

All colour arithmetic goes through `judgecam.vision.colorspace`, so "how different are two
colours" means the same thing here as in the facelet classifier.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import tomli_w
from numpy.typing import ArrayLike, NDArray

from judgecam.vision.colorspace import bgr_to_lab, ciede2000

logger = logging.getLogger(__name__)

#: Puzzles a scheme can be made for (WCA event ids).
PUZZLES: tuple[str, ...] = ("222", "333", "pyram")

#: Face names of each puzzle, and which faces are opposite (a tetrahedron has none).
PUZZLE_FACES: dict[str, tuple[str, ...]] = {
    "222": ("U", "D", "F", "B", "R", "L"),
    "333": ("U", "D", "F", "B", "R", "L"),
    "pyram": ("F", "L", "R", "D"),
}
OPPOSITE_FACES: dict[str, tuple[tuple[str, str], ...]] = {
    "222": (("U", "D"), ("F", "B"), ("R", "L")),
    "333": (("U", "D"), ("F", "B"), ("R", "L")),
    "pyram": (),
}

# Regulation 8.2 thresholds. See `separation` for the reasoning.
#: Below this CIEDE2000 difference two colours are refused whatever their spreads.
DELTA_E_REFUSED = 5.0
#: Below this CIEDE2000 difference two colours get a warning.
DELTA_E_WARNING = 10.0
#: Below this many combined spreads between centres two colours are refused.
SEPARATION_REFUSED = 3.0
#: Below this many combined spreads between centres two colours get a warning.
SEPARATION_WARNING = 4.0
#: Smallest spread (robust std, CIELAB units per axis) a learnt colour may claim: sensor noise
#: and sticker texture alone give about this much, and a zero spread would make any two
#: colours look infinitely separable.
MIN_SPREAD = 1.0
#: Fewest samples per colour that `learn_scheme` accepts (a median and MAD need a few).
MIN_SAMPLES = 3
#: A learnt colour takes a free name at most this much (CIEDE2000) worse than its nearest.
_NAME_SLACK_DELTA_E = 10.0
#: MAD -> standard deviation for a normal distribution.
MAD_TO_STD = 1.4826
#: Interdecile range (q90 - q10) -> standard deviation for a normal distribution.
IDR_TO_STD = 2.5631

Status = Literal["ok", "warning", "refused"]

Covariance = tuple[
    tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]
]


class SchemeError(ValueError):
    """A scheme that cannot be used: corrupt file, missing colours, or colours too close."""


@dataclass(frozen=True)
class SchemeColor:
    """One colour of a scheme: robust centre and spread (robust std per L, a, b) in CIELAB.

    `covariance` is the robust covariance of the samples in `shading_coordinates`, learnt from
    photos; None (built-in schemes, files written before it existed) derives one from
    `spread` at the centre (`shading_covariance`).
    """

    name: str
    lab: tuple[float, float, float]
    spread: tuple[float, float, float]
    face: str | None = None
    covariance: Covariance | None = None

    def shading_covariance(self) -> NDArray[np.float64]:
        """(3, 3) covariance in shading coordinates: the learnt one, else from `spread`."""
        if self.covariance is not None:
            return np.array(self.covariance, dtype=np.float64)
        jacobian = _shading_jacobian(np.array(self.lab, dtype=np.float64))
        return np.asarray(jacobian @ np.diag(np.square(self.spread)) @ jacobian.T)


@dataclass(frozen=True)
class ColorScheme:
    """The colours of one puzzle under one light, with the pairs found on opposite faces."""

    name: str
    puzzle: str
    colors: tuple[SchemeColor, ...]
    opposites: tuple[tuple[str, str], ...]
    light: str

    @property
    def names(self) -> tuple[str, ...]:
        """Colour names in scheme order (the order `classify_colors` indexes)."""
        return tuple(color.name for color in self.colors)

    def color(self, name: str) -> SchemeColor:
        """The colour called `name` (KeyError if there is none)."""
        for color in self.colors:
            if color.name == name:
                return color
        raise KeyError(name)

    def centres(self) -> NDArray[np.float64]:
        """(K, 3) CIELAB centres in scheme order."""
        return np.array([color.lab for color in self.colors], dtype=np.float64)

    def spreads(self) -> NDArray[np.float64]:
        """(K, 3) robust standard deviations per L, a, b in scheme order."""
        return np.array([color.spread for color in self.colors], dtype=np.float64)


@dataclass(frozen=True)
class PairSeparation:
    """How far apart two colours of a scheme are (regulation 8.2).

    `delta_e` is CIEDE2000 between the centres; `separation` is how many spreads a sample must
    stray across the best boundary between the two to be confused (see `separation`);
    `spread_first`/`spread_second` are each colour's spread across that boundary, in CIEDE2000
    units, so that `delta_e` over their sum is `separation`.
    """

    first: str
    second: str
    delta_e: float
    spread_first: float
    spread_second: float
    separation: float
    status: Status

    def describe(self) -> str:
        """One line naming the pair and the numbers."""
        return (
            f"{self.first} / {self.second}: CIEDE2000 {self.delta_e:.1f} "
            f"(limits {DELTA_E_REFUSED:g} refused, {DELTA_E_WARNING:g} warning), "
            f"separation {self.separation:.1f} spreads "
            f"(limits {SEPARATION_REFUSED:g} refused, {SEPARATION_WARNING:g} warning): "
            f"{self.status}"
        )


@dataclass(frozen=True)
class ColorMatch:
    """Nearest scheme colour for each sample: indices into `scheme.colors` and distances.

    `distance` is the Mahalanobis distance to the chosen colour in shading coordinates
    (a z-score); `margin` is the next-nearest distance minus the chosen one (0 = a tie).
    """

    indices: NDArray[np.intp]
    distance: NDArray[np.float64]
    margin: NDArray[np.float64]


# ----------------------------------------------------------------------------------------
# Built-in schemes
# ----------------------------------------------------------------------------------------

#: Typical sticker colours as a camera with locked white balance sees them (sRGB), standing in
#: for a measured scheme until the station learns one. White is kept below sensor clipping.
_TYPICAL_SRGB: dict[str, tuple[int, int, int]] = {
    "white": (235, 235, 235),
    "yellow": (255, 213, 0),
    "green": (0, 155, 72),
    "blue": (0, 70, 173),
    "red": (183, 18, 52),
    "orange": (255, 88, 0),
}
#: Generous spreads (L, a, b) for the built-in schemes: uncalibrated light shifts lightness
#: more than hue, so L gets the most room.
_BUILTIN_SPREAD = (6.0, 4.0, 4.0)

#: WCA standard colour per face (WCA 9.5 / KCA Art. 9.5 orientation: white U, green F).
_STANDARD_FACES: dict[str, dict[str, str]] = {
    "333": {"U": "white", "D": "yellow", "F": "green", "B": "blue", "R": "red", "L": "orange"},
    "222": {"U": "white", "D": "yellow", "F": "green", "B": "blue", "R": "red", "L": "orange"},
    # Pyraminx: yellow at the bottom, green in front (KCA 9.5), red left, blue right.
    "pyram": {"F": "green", "L": "red", "R": "blue", "D": "yellow"},
}


def builtin_scheme(puzzle: str) -> ColorScheme:
    """The standard scheme of `puzzle` ("222", "333" or "pyram") with typical sticker colours."""
    if puzzle not in _STANDARD_FACES:
        raise SchemeError(f"no built-in scheme for puzzle {puzzle!r} (known: {', '.join(PUZZLES)})")
    faces = _STANDARD_FACES[puzzle]
    colors = []
    for face in PUZZLE_FACES[puzzle]:
        name = faces[face]
        red, green, blue = _TYPICAL_SRGB[name]
        lab = bgr_to_lab(np.array([blue, green, red], dtype=np.float64))
        colors.append(SchemeColor(name, _as_triple(lab), _BUILTIN_SPREAD, face))
    opposites = tuple((faces[a], faces[b]) for a, b in OPPOSITE_FACES[puzzle])
    return ColorScheme(
        name=f"standard {puzzle}",
        puzzle=puzzle,
        colors=tuple(colors),
        opposites=opposites,
        light="any (built in, not measured)",
    )


# ----------------------------------------------------------------------------------------
# Learning
# ----------------------------------------------------------------------------------------

#: Reference colours used only to give learnt colours readable names (sRGB). No brown: a
#: shaded orange sticker is dark orange, and calling it brown confuses the organiser.
_NAMING_PALETTE: dict[str, tuple[int, int, int]] = {
    **_TYPICAL_SRGB,
    "black": (30, 30, 30),
    "grey": (128, 128, 128),
    "pink": (255, 105, 180),
    "purple": (128, 0, 160),
    "light blue": (90, 180, 240),
    "lime": (160, 230, 40),
}
#: The palette's neutral names: told apart by lightness alone (`_neutral_names`).
_NEUTRAL_NAMES: tuple[str, ...] = ("white", "grey", "black")


def robust_centre_and_spread(
    lab: ArrayLike,
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Median and robust standard deviation per L, a, b of (N, 3) CIELAB samples.

    The spread is the larger of the MAD-based estimate (1.4826 MAD) and the interdecile one
    ((q90 - q10) / 2.563); both equal the standard deviation for normal samples. The MAD alone
    ignores any minority up to half the samples, which is right for a stray reflection but
    wrong for a whole face in shadow (a third of the samples, darker): the facelet classifier
    will meet those shaded stickers, so the spread must include them. Up to a tenth of the
    samples on either side (glare, a logo) still leaves it unchanged. Floored at `MIN_SPREAD`.
    """
    samples = np.asarray(lab, dtype=np.float64).reshape(-1, 3)
    spread = np.maximum(_robust_scales(samples), MIN_SPREAD)
    return _as_triple(np.median(samples, axis=0)), _as_triple(spread)


def shading_coordinates(lab: ArrayLike) -> NDArray[np.float64]:
    """(..., 3) CIELAB -> shading coordinates (100 ln(L+16), 100 a/(L+16), 100 b/(L+16)).

    Why: a face turned away from the lamp receives less of the same light, which scales the
    sticker's XYZ by one factor k. CIELAB's cube root then scales (L+16, a, b) together by
    k^(1/3) (exactly, above the near-black linear segment), so one colour in light and shade
    lies on a ray from (-16, 0, 0). These coordinates turn that ray into a line along the
    first axis (shading = a shift in 100 ln(L+16), percent-like) at a fixed chromaticity
    (the last two), so lit and shaded samples of one colour form one compact ellipsoid and
    colours whose rays meet in the dark stay apart.
    """
    values = np.asarray(lab, dtype=np.float64)
    base = np.maximum(values[..., 0] + 16.0, 1.0)
    return np.stack(
        [100.0 * np.log(base), 100.0 * values[..., 1] / base, 100.0 * values[..., 2] / base],
        axis=-1,
    )


def _shading_jacobian(lab: NDArray[np.float64]) -> NDArray[np.float64]:
    """d(shading coordinates) / d(L, a, b) at one CIELAB colour."""
    base = max(float(lab[0]) + 16.0, 1.0)
    return 100.0 * np.array(
        [
            [1.0 / base, 0.0, 0.0],
            [-lab[1] / base**2, 1.0 / base, 0.0],
            [-lab[2] / base**2, 0.0, 1.0 / base],
        ]
    )


def _robust_scales(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Robust std of samples along axis 0 (per column): the larger of 1.4826 MAD and the
    interdecile estimate (see `robust_centre_and_spread`)."""
    centre = np.median(values, axis=0)
    mad = np.median(np.abs(values - centre), axis=0)
    low, high = np.quantile(values, [0.1, 0.9], axis=0)
    return np.asarray(np.maximum(MAD_TO_STD * mad, (high - low) / IDR_TO_STD), np.float64)


def _robust_scale(values: NDArray[np.float64]) -> float:
    """`_robust_scales` of 1-D samples."""
    return float(_robust_scales(values))


def robust_covariance(samples: ArrayLike) -> NDArray[np.float64]:
    """Robust (3, 3) covariance of (N, 3) samples: the OGK estimator with `_robust_scale`.

    Orthogonalised Gnanadesikan-Kettenring (Maronna & Zamar 2002): pairwise covariances from
    robust scales of sums and differences, made positive semi-definite by re-estimating the
    scales along the eigenvectors. With the same scale as `robust_centre_and_spread` a face in
    shadow counts while a stray reflection does not; for normal samples it is the covariance.
    """
    data = np.asarray(samples, dtype=np.float64).reshape(-1, 3)
    scales = np.array([max(_robust_scale(data[:, k]), 1e-9) for k in range(3)])
    scaled = data / scales
    correlation = np.eye(3)
    for j in range(3):
        for k in range(j + 1, 3):
            plus = _robust_scale(scaled[:, j] + scaled[:, k])
            minus = _robust_scale(scaled[:, j] - scaled[:, k])
            correlation[j, k] = correlation[k, j] = (plus**2 - minus**2) / 4.0
    _, vectors = np.linalg.eigh(correlation)
    variances = np.array([_robust_scale(scaled @ vectors[:, k]) ** 2 for k in range(3)])
    return np.asarray(((vectors * variances) @ vectors.T) * np.outer(scales, scales))


def learn_shading_covariance(lab: ArrayLike) -> Covariance:
    """Robust covariance of CIELAB samples in `shading_coordinates`, plus sensor noise.

    The noise (`MIN_SPREAD` per CIELAB axis at the centre) keeps a colour whose samples
    happen to agree exactly, or lie on a line, from looking infinitely separable.
    """
    samples = np.asarray(lab, dtype=np.float64).reshape(-1, 3)
    jacobian = _shading_jacobian(np.median(samples, axis=0))
    covariance = robust_covariance(shading_coordinates(samples))
    covariance = covariance + MIN_SPREAD**2 * (jacobian @ jacobian.T)
    rows = [_as_triple(row) for row in (covariance + covariance.T) / 2.0]
    return (rows[0], rows[1], rows[2])


def _palette_lab() -> tuple[list[str], NDArray[np.float64]]:
    names = list(_NAMING_PALETTE)
    rgb = np.array([_NAMING_PALETTE[name] for name in names], dtype=np.float64)
    return names, bgr_to_lab(rgb[:, ::-1])


def _shading_invariant_distances(
    labs: NDArray[np.float64], references: NDArray[np.float64]
) -> NDArray[np.float64]:
    """(N, M) CIEDE2000 from each colour, lit up to each reference's lightness if darker.

    Shading scales (L+16, a, b) by one factor (`shading_coordinates`), so a colour darker
    than a reference is moved along its own shading ray until its L equals the reference's,
    then compared: what is left is chromaticity (the last two shading coordinates), in
    CIEDE2000 units at the reference's lightness. A dark yellow is then as near "yellow" as
    a lit one, and `_NAME_SLACK_DELTA_E` keeps its meaning. Shading only takes light away,
    so a colour brighter than a reference cannot be that reference in shade: it is compared
    as it is, and the lightness difference counts (a light pastel rose is "pink", not a
    "red" with the red's lightness). Neutral references all sit at zero chromaticity and
    are compared at white's lightness (`_hue_references`).
    """
    base = np.maximum(labs[:, 0] + 16.0, 1.0)[:, None]
    factor = np.maximum((references[None, :, 0] + 16.0) / base, 1.0)
    moved = np.stack(
        [
            base * factor - 16.0,
            labs[:, None, 1] * factor,
            labs[:, None, 2] * factor,
        ],
        axis=-1,
    )
    return np.asarray(ciede2000(moved, references[None, :, :]), dtype=np.float64)


def _hue_references() -> tuple[list[str], NDArray[np.float64]]:
    """Palette names and CIELAB for comparing hues: neutrals all put at white's lightness.

    Neutrals differ only in lightness, which `_neutral_names` judges. Left at black's L*,
    the black reference would draw every colour: moved along its shading ray down to L* 11,
    any colour's chroma shrinks to a few units.
    """
    names, references = _palette_lab()
    white = references[names.index("white")]
    neutral = np.array([_is_neutral(name) for name in names])
    hue = np.where(neutral[:, None], white[None, :], references)
    return names, hue


def _is_neutral(name: str) -> bool:
    return name in _NEUTRAL_NAMES


def _nearest_neutral(level: float, levels: Mapping[str, float]) -> str:
    """The neutral name whose log-lightness level is nearest to `level`."""
    return min(levels, key=lambda name: abs(levels[name] - level))


def _neutral_levels() -> dict[str, float]:
    """Palette neutrals' first shading coordinate (100 ln(L+16)) relative to white's."""
    names, references = _palette_lab()
    levels = {
        name: float(shading_coordinates(references[names.index(name)])[0])
        for name in _NEUTRAL_NAMES
    }
    return {name: level - levels["white"] for name, level in levels.items()}


def _neutral_names(labs: NDArray[np.float64], neutral: Sequence[int]) -> dict[int, str]:
    """White, grey or black for the neutral colours (indices `neutral`) of one scheme.

    Why this rule: neutral colours differ only in lightness, and lightness is what shading
    changes. Each colour's centre is a median over its own faces' lit and shaded views, so
    centres of different faces carry different shading (on the station renders a white face's
    centre is up to 1.3 times darker in L+16 than a neon green's), about as large as the whole
    white-grey step (1.57 times). So, as in lightness anchoring (Gilchrist et al. 1999, "the
    highest luminance appears white"), but among neutrals only: the lightest neutral is
    white, and other neutrals are named by their lightness relative to it, nearest in
    100 ln(L+16) (i.e. in the ratio shading changes) to the palette's grey and black relative
    to white. The lightest neutral itself can only be told apart from white if it is black:
    it is black when, relative to the scheme's brightest colour, it is nearer the palette's
    black level than its grey level (a factor of 4 in L+16, beyond what shading does). A lone
    grey sticker is therefore called "white": unavoidable without a reference white.
    """
    if not neutral:
        return {}
    levels = _neutral_levels()
    log_lightness = shading_coordinates(labs)[:, 0]
    anchor = max(neutral, key=lambda index: float(log_lightness[index]))
    below_brightest = float(log_lightness[anchor] - log_lightness.max())
    anchor_name = "black" if _nearest_neutral(below_brightest, levels) == "black" else "white"
    names = {}
    for index in neutral:
        level = float(log_lightness[index] - log_lightness[anchor]) + levels[anchor_name]
        names[index] = _nearest_neutral(level, levels)
    return names


def color_name(lab: ArrayLike) -> str:
    """A readable name ("red", "light blue", ...) for one CIELAB colour, whatever its shading.

    The hue is the nearest reference after shading is factored out
    (`_shading_invariant_distances`); a neutral colour, having no scheme to compare with, is
    named by its own lightness (nearest palette neutral in 100 ln(L+16)).
    """
    names, references = _hue_references()
    colour = np.asarray(lab, dtype=np.float64).reshape(1, 3)
    name = names[int(np.argmin(_shading_invariant_distances(colour, references)[0]))]
    if not _is_neutral(name):
        return name
    white = float(shading_coordinates(references[names.index("white")])[0])
    return _nearest_neutral(float(shading_coordinates(colour[0])[0]) - white, _neutral_levels())


def color_names(centres: ArrayLike) -> list[str]:
    """Distinct readable names for the colours of one scheme, insensitive to shading.

    A centre is a median over lit and shaded faces, often much darker than any reference
    colour, and plain CIEDE2000 then prefers a neutral (a dark yellow came out "grey"). So
    hues are compared after moving each colour along its shading ray to the reference's
    lightness (`_shading_invariant_distances`), and neutrals get white / grey / black from
    their lightness relative to each other (`_neutral_names`).

    Hue names are handed out closest pair first, each once, so a dim orange next to a red is
    "orange" rather than a second "red"; a colour whose best free name is more than
    `_NAME_SLACK_DELTA_E` worse than its nearest takes the nearest with a number ("red 2").
    Neutral is not used up: any number of colours may be neutral.
    """
    labs = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    names, references = _hue_references()
    distances = _shading_invariant_distances(labs, references)
    neutral_columns = np.array([_is_neutral(name) for name in names])
    chosen: dict[int, str] = {}
    free = np.ones(len(names), dtype=bool)
    acceptable = distances <= distances.min(axis=1, keepdims=True) + _NAME_SLACK_DELTA_E
    for _ in range(len(labs)):
        masked = np.where(free[None, :] & acceptable, distances, np.inf)
        masked[list(chosen)] = np.inf
        flat = int(np.argmin(masked))
        best_row, best_column = divmod(flat, masked.shape[1])
        if not np.isfinite(masked[best_row, best_column]):
            break
        chosen[best_row] = names[best_column]
        free[best_column] = bool(neutral_columns[best_column])
    # Hue names handed out above are unique; the rest (neutrals, colours left without an
    # acceptable free name) are numbered if their name is taken.
    readable = {index: name for index, name in chosen.items() if not _is_neutral(name)}
    for index in range(len(labs)):
        if index not in chosen:
            chosen[index] = names[int(np.argmin(distances[index]))]
    neutral = [index for index in range(len(labs)) if _is_neutral(chosen[index])]
    chosen.update(_neutral_names(labs, neutral))
    used = set(readable.values())
    for index in range(len(labs)):
        if index not in readable:
            readable[index] = _unique(chosen[index], used)
            used.add(readable[index])
    return [readable[index] for index in range(len(labs))]


def learn_scheme(
    samples: Mapping[str, ArrayLike],
    *,
    puzzle: str,
    name: str,
    light: str,
    opposites: Sequence[tuple[str, str]] | None = None,
) -> ColorScheme:
    """A scheme from CIELAB samples of a SOLVED puzzle, one group of (N, 3) samples per colour.

    Parameters
    ----------
    samples : mapping of group -> array of shape (N, 3)
        CIELAB samples (one per facelet and view is best). Groups keyed by face name ("U",
        "F", ... of `puzzle`) get that face and their opposites from the puzzle's geometry;
        other keys (cluster ids) need `opposites` given as pairs of keys.
    puzzle : "222", "333" or "pyram"
    name, light : stored with the scheme (who/what and under which light).

    Raises
    ------
    SchemeError
        Wrong number of groups, too few samples, non-finite values. The separation check is
        separate (`separation`, `check_scheme`) so callers can report all pairs.
    """
    if puzzle not in PUZZLE_FACES:
        raise SchemeError(f"unknown puzzle {puzzle!r} (known: {', '.join(PUZZLES)})")
    faces = PUZZLE_FACES[puzzle]
    if len(samples) != len(faces):
        raise SchemeError(
            f"a {puzzle} has {len(faces)} colours, got samples for {len(samples)}: "
            f"{', '.join(map(str, samples))}"
        )
    keys_are_faces = set(samples) == set(faces)
    learnt: dict[str, SchemeColor] = {}
    for key, values in samples.items():
        array = np.asarray(values, dtype=np.float64).reshape(-1, 3)
        if len(array) < MIN_SAMPLES:
            raise SchemeError(
                f"colour group {key!r} has {len(array)} samples, need at least {MIN_SAMPLES}"
            )
        if not np.all(np.isfinite(array)):
            raise SchemeError(f"colour group {key!r} has non-finite CIELAB values")
        centre, spread = robust_centre_and_spread(array)
        learnt[key] = SchemeColor(
            str(key),
            centre,
            spread,
            key if keys_are_faces else None,
            learn_shading_covariance(array),
        )
    readable = color_names([color.lab for color in learnt.values()])
    learnt = {
        key: dataclasses.replace(color, name=name)
        for (key, color), name in zip(learnt.items(), readable, strict=True)
    }

    if opposites is None:
        if not keys_are_faces and OPPOSITE_FACES[puzzle]:
            raise SchemeError("samples are not keyed by face: give the opposite pairs")
        opposites = OPPOSITE_FACES[puzzle] if keys_are_faces else ()
    pairs = []
    for first, second in opposites:
        if first not in learnt or second not in learnt:
            raise SchemeError(f"opposite pair {first!r}/{second!r} is not among the samples")
        pairs.append((learnt[first].name, learnt[second].name))
    ordered = [learnt[face] for face in faces] if keys_are_faces else list(learnt.values())
    scheme = ColorScheme(name, puzzle, tuple(ordered), tuple(pairs), light)
    logger.debug("learnt scheme %s: %s", name, scheme.names)
    return scheme


def _unique(name: str, used: set[str]) -> str:
    """`name`, or `name 2`, `name 3`, ... if already taken (pastel schemes repeat names)."""
    if name not in used:
        return name
    number = 2
    while f"{name} {number}" in used:
        number += 1
    return f"{name} {number}"


# ----------------------------------------------------------------------------------------
# Separation (regulation 8.2) and classification
# ----------------------------------------------------------------------------------------


#: Steps of the search for the best linear boundary between two colours (`_best_boundary`).
_BOUNDARY_STEPS = 101


def _best_boundary(
    first: NDArray[np.float64],
    first_cov: NDArray[np.float64],
    second: NDArray[np.float64],
    second_cov: NDArray[np.float64],
) -> tuple[float, float, float]:
    """The linear boundary that best separates two normal colours: (distance, spread, spread).

    Along a direction w the centres are w.d apart (d = second - first) and the colours have
    standard deviations sqrt(w'Sw); the best boundary maximises w.d over their sum. For two
    normals it is the misread probability Phi(-ratio) that is minimised, and the best w is
    (t S1 + (1 - t) S2)^-1 d for some t in [0, 1] (Anderson & Bahadur 1962), searched here.
    """
    offset = second - first
    best, best_ratio = (0.0, 0.0, 0.0), -math.inf
    for t in np.linspace(0.0, 1.0, _BOUNDARY_STEPS):
        direction = np.linalg.solve(t * first_cov + (1.0 - t) * second_cov, offset)
        distance = float(direction @ offset)
        spread_first = math.sqrt(max(float(direction @ first_cov @ direction), 0.0))
        spread_second = math.sqrt(max(float(direction @ second_cov @ direction), 0.0))
        ratio = distance / max(spread_first + spread_second, 1e-300)
        if ratio > best_ratio:
            best, best_ratio = (distance, spread_first, spread_second), ratio
    return best


def pair_status(delta_e: float, separation_value: float) -> Status:
    """ok / warning / refused for one pair from its CIEDE2000 distance and its separation."""
    if delta_e < DELTA_E_REFUSED or separation_value < SEPARATION_REFUSED:
        return "refused"
    if delta_e < DELTA_E_WARNING or separation_value < SEPARATION_WARNING:
        return "warning"
    return "ok"


def separation(scheme: ColorScheme) -> list[PairSeparation]:
    """Regulation 8.2 check of every pair of colours, most confusable pair first.

    Notes
    -----
    Two conditions, both from colour science rather than from any one puzzle:

    * CIEDE2000 between the centres. About 1 is a just-noticeable difference; from 3.5 to 5 an
      untrained observer sees a clear difference and above 5 two different colours
      (Mokrzycki & Tatol 2011). "Clearly distinguishable" (8.2) therefore needs at least 5;
      below 10 a warning, because the light at judging time drifts from the light at
      calibration (a few hundred kelvin moves colours by several units).
    * Separation in units of spread: with each colour a normal distribution in
      `shading_coordinates` (its `shading_covariance`), the best linear boundary between the
      two (`_best_boundary`) lies that many spreads from each centre and misreads a facelet
      with probability Phi(-separation): 3 gives 1.3e-3 per facelet (7 % chance of at least
      one misread on a 3x3x3's 54 facelets: refused), 4 gives 3e-5 (0.2 % per 3x3x3: a
      warning below that). Lit and shaded faces of one colour differ along its shading axis;
      a pair is only refused when no boundary keeps the two apart, e.g. two hues that
      overlap, or white and grey when a shaded white looks like a lit grey.

    `spread_first`/`spread_second` are reported in CIEDE2000 units: the two spreads scaled so
    that they add up to `delta_e / separation`.

    References
    ----------
    W. S. Mokrzycki, M. Tatol, "Colour difference Delta E - A survey", Machine Graphics and
    Vision 20(4), 2011. T. W. Anderson, R. R. Bahadur, "Classification into two multivariate
    normal distributions with different covariance matrices", Ann. Math. Stat. 33(2), 1962.
    """
    centres = scheme.centres()
    shading = shading_coordinates(centres)
    covariances = [color.shading_covariance() for color in scheme.colors]
    results = []
    for i in range(len(centres)):
        for j in range(i + 1, len(centres)):
            delta_e = float(ciede2000(centres[i], centres[j]))
            distance, spread_i, spread_j = _best_boundary(
                shading[i], covariances[i], shading[j], covariances[j]
            )
            value = distance / (spread_i + spread_j) if distance > 0 else 0.0
            scale = delta_e / distance if distance > 0 else 0.0
            results.append(
                PairSeparation(
                    scheme.colors[i].name,
                    scheme.colors[j].name,
                    delta_e,
                    spread_i * scale,
                    spread_j * scale,
                    value,
                    pair_status(delta_e, value),
                )
            )
    results.sort(key=lambda pair: (pair.separation, pair.delta_e))
    return results


def check_scheme(scheme: ColorScheme) -> list[PairSeparation]:
    """`separation(scheme)`, raising SchemeError naming every refused pair and its numbers."""
    pairs = separation(scheme)
    refused = [pair for pair in pairs if pair.status == "refused"]
    if refused:
        raise SchemeError(
            "colours too close to judge (regulation 8.2): "
            + "; ".join(pair.describe() for pair in refused)
        )
    return pairs


def classify_colors(scheme: ColorScheme, lab: ArrayLike) -> ColorMatch:
    """Nearest scheme colour of each (N, 3) CIELAB sample, in units of that colour's spread.

    Distances are Mahalanobis distances in `shading_coordinates` with each colour's
    `shading_covariance`, the model `separation` uses, so a scheme that passes the check is
    one these distances can tell apart.
    """
    samples = shading_coordinates(np.asarray(lab, dtype=np.float64).reshape(-1, 3))
    centres = shading_coordinates(scheme.centres())
    distance = np.empty((len(samples), len(centres)), dtype=np.float64)
    for k, color in enumerate(scheme.colors):
        offset = samples - centres[k]
        inverse = np.linalg.inv(color.shading_covariance())
        distance[:, k] = np.sqrt(np.einsum("ni,ij,nj->n", offset, inverse, offset))
    order = np.argsort(distance, axis=1)
    rows = np.arange(len(samples))
    best = distance[rows, order[:, 0]]
    second = distance[rows, order[:, 1]] if distance.shape[1] > 1 else np.full_like(best, np.inf)
    return ColorMatch(order[:, 0].astype(np.intp), best, second - best)


# ----------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------


def save_scheme(scheme: ColorScheme, path: str | Path) -> None:
    """Write `scheme` as TOML (human-readable; numbers rounded to 0.01, covariances to 0.001).

    A learnt colour also gets `covariance` (3 rows, in `shading_coordinates`); files without
    it still load (the covariance then follows from `spread`).
    """
    document: dict[str, Any] = {
        "scheme": {"name": scheme.name, "puzzle": scheme.puzzle, "light": scheme.light},
        "opposites": [list(pair) for pair in scheme.opposites],
        "colors": [
            {
                "name": color.name,
                "lab": [round(value, 2) for value in color.lab],
                "spread": [round(value, 2) for value in color.spread],
                **({"face": color.face} if color.face is not None else {}),
                **(
                    {"covariance": [[round(v, 3) for v in row] for row in color.covariance]}
                    if color.covariance is not None
                    else {}
                ),
            }
            for color in scheme.colors
        ],
    }
    Path(path).write_bytes(tomli_w.dumps(document).encode("utf-8"))


def load_scheme(path: str | Path, puzzle: str | None = None) -> ColorScheme:
    """Read a scheme written by `save_scheme`; `builtin:333` etc. name the built-in ones.

    Raises SchemeError with one clear line for a missing, corrupt or incomplete file, and for
    a scheme of another puzzle than `puzzle` (when given).
    """
    scheme = _load_scheme(path)
    if puzzle is not None and scheme.puzzle != puzzle:
        raise SchemeError(f"{path}: a scheme for {scheme.puzzle}, not for {puzzle}")
    return scheme


def _load_scheme(path: str | Path) -> ColorScheme:
    text = str(path)
    if text.startswith("builtin:"):
        return builtin_scheme(text.removeprefix("builtin:"))
    file = Path(path)
    try:
        document = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemeError(f"{file}: no such scheme file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SchemeError(f"{file}: cannot read scheme: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise SchemeError(f"{file}: not valid TOML: {error}") from None
    try:
        return _scheme_from_document(document)
    except SchemeError as error:
        raise SchemeError(f"{file}: {error}") from None


def _scheme_from_document(document: dict[str, Any]) -> ColorScheme:
    _reject_unknown(document, {"scheme", "opposites", "colors"}, "top level")
    header = document.get("scheme")
    if not isinstance(header, dict):
        raise SchemeError("missing [scheme] section")
    _reject_unknown(header, {"name", "puzzle", "light"}, "[scheme]")
    name = _required_str(header, "name", "[scheme]")
    puzzle = _required_str(header, "puzzle", "[scheme]")
    light = _required_str(header, "light", "[scheme]")
    if puzzle not in PUZZLE_FACES:
        raise SchemeError(f"[scheme] puzzle {puzzle!r} is unknown (known: {', '.join(PUZZLES)})")
    entries = document.get("colors")
    if not isinstance(entries, list) or not entries:
        raise SchemeError("missing [[colors]] entries")
    colors = []
    for number, entry in enumerate(entries, start=1):
        where = f"[[colors]] #{number}"
        if not isinstance(entry, dict):
            raise SchemeError(f"{where} is not a table")
        _reject_unknown(entry, {"name", "lab", "spread", "face", "covariance"}, where)
        face = entry.get("face")
        if face is not None and face not in PUZZLE_FACES[puzzle]:
            raise SchemeError(f"{where} face {face!r} is not a face of a {puzzle}")
        spread = _triple(entry, "spread", where)
        if min(spread) <= 0:
            raise SchemeError(f"{where} spread must be positive, got {list(spread)}")
        colors.append(
            SchemeColor(
                _required_str(entry, "name", where),
                _triple(entry, "lab", where),
                spread,
                face,
                _covariance(entry, where),
            )
        )
    expected = len(PUZZLE_FACES[puzzle])
    if len(colors) != expected:
        raise SchemeError(f"a {puzzle} scheme needs {expected} colours, the file has {len(colors)}")
    names = [color.name for color in colors]
    if len(set(names)) != len(names):
        raise SchemeError(f"colour names repeat: {', '.join(names)}")
    raw_pairs = document.get("opposites", [])
    pairs = []
    if not isinstance(raw_pairs, list):
        raise SchemeError("opposites must be a list of [colour, colour] pairs")
    for pair in raw_pairs:
        if not (isinstance(pair, list) and len(pair) == 2 and all(p in names for p in pair)):
            raise SchemeError(f"opposite pair {pair!r} must name two colours of the scheme")
        pairs.append((str(pair[0]), str(pair[1])))
    if len(pairs) != len(OPPOSITE_FACES[puzzle]):
        raise SchemeError(
            f"a {puzzle} has {len(OPPOSITE_FACES[puzzle])} opposite pairs, "
            f"the file has {len(pairs)}"
        )
    return ColorScheme(name, puzzle, tuple(colors), tuple(pairs), light)


def _reject_unknown(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise SchemeError(f"unknown key {unknown[0]!r} in {where}")


def _required_str(table: Mapping[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise SchemeError(f"{where} needs a text {key!r}")
    return value


def _triple(table: Mapping[str, Any], key: str, where: str) -> tuple[float, float, float]:
    value = table.get(key)
    if not (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        and all(math.isfinite(v) for v in value)
    ):
        raise SchemeError(f"{where} {key!r} must be three finite numbers, got {value!r}")
    return (float(value[0]), float(value[1]), float(value[2]))


def _covariance(table: Mapping[str, Any], where: str) -> Covariance | None:
    """The optional `covariance` of a colour: 3 rows of 3 numbers, symmetric, positive."""
    if "covariance" not in table:
        return None
    value = table["covariance"]
    message = f"{where} 'covariance' must be 3 rows of 3 finite numbers"
    if not (isinstance(value, list) and len(value) == 3):
        raise SchemeError(message)
    rows = [_triple({"row": row}, "row", where) for row in value]
    matrix = np.array(rows, dtype=np.float64)
    if not np.allclose(matrix, matrix.T, atol=1e-2) or np.linalg.eigvalsh(matrix).min() <= 0:
        raise SchemeError(f"{where} 'covariance' must be symmetric and positive definite")
    return (rows[0], rows[1], rows[2])


def _as_triple(values: ArrayLike) -> tuple[float, float, float]:
    array = np.asarray(values, dtype=np.float64).reshape(3)
    return (float(array[0]), float(array[1]), float(array[2]))
