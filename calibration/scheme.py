"""Colour schemes: what each face colour of a puzzle looks like under the station's light.

A scheme stores, per colour, a robust centre and spread in CIELAB, the pairs of colours on
opposite faces, and the light it was learnt under. `separation` checks regulation 8.2 (every
colour clearly distinguishable from every other) before a scheme is used for judging.

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


class SchemeError(ValueError):
    """A scheme that cannot be used: corrupt file, missing colours, or colours too close."""


@dataclass(frozen=True)
class SchemeColor:
    """One colour of a scheme: robust centre and spread (robust std per L, a, b) in CIELAB."""

    name: str
    lab: tuple[float, float, float]
    spread: tuple[float, float, float]
    face: str | None = None


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

    `delta_e` is CIEDE2000 between the centres; `spread_first`/`spread_second` are each
    colour's spread towards the other, in CIEDE2000 units; `separation` is `delta_e` over
    their sum (how many spreads a sample must stray to be confused).
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

    `distance` is CIEDE2000 to the chosen centre over that colour's spread towards the sample
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
    centre = np.median(samples, axis=0)
    mad = np.median(np.abs(samples - centre), axis=0)
    low, high = np.quantile(samples, [0.1, 0.9], axis=0)
    spread = np.maximum(np.maximum(MAD_TO_STD * mad, (high - low) / IDR_TO_STD), MIN_SPREAD)
    return _as_triple(centre), _as_triple(spread)


def _palette_lab() -> tuple[list[str], NDArray[np.float64]]:
    names = list(_NAMING_PALETTE)
    rgb = np.array([_NAMING_PALETTE[name] for name in names], dtype=np.float64)
    return names, bgr_to_lab(rgb[:, ::-1])


def color_name(lab: ArrayLike) -> str:
    """A readable name ("red", "light blue", ...) for a CIELAB colour: the nearest reference."""
    names, references = _palette_lab()
    distances = ciede2000(np.asarray(lab, dtype=np.float64)[None, :], references)
    return names[int(np.argmin(distances))]


def color_names(centres: ArrayLike) -> list[str]:
    """Distinct readable names for the colours of one scheme.

    Names are handed out closest pair first, each once, so a dim orange next to a red is
    "orange" rather than a second "red"; a colour whose best free name is more than
    `_NAME_SLACK_DELTA_E` worse than its nearest takes the nearest with a number ("red 2").
    """
    labs = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    names, references = _palette_lab()
    distances = ciede2000(labs[:, None, :], references[None, :, :])
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
        free[best_column] = False
    used = set(chosen.values())
    for index in range(len(labs)):
        if index not in chosen:
            chosen[index] = _unique(names[int(np.argmin(distances[index]))], used)
            used.add(chosen[index])
    return [chosen[index] for index in range(len(labs))]


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
        learnt[key] = SchemeColor(str(key), centre, spread, key if keys_are_faces else None)
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


def _spread_towards(
    centre: NDArray[np.float64], spread: NDArray[np.float64], target: NDArray[np.float64]
) -> NDArray[np.float64]:
    """A colour's spread in the direction of `target`, in CIEDE2000 units.

    The per-axis spreads describe an axis-aligned normal distribution in CIELAB; its standard
    deviation along the unit vector u towards the target is sqrt(sum((u_i * s_i)^2)). That
    step, taken from the centre, is then measured with CIEDE2000 so that it has the same units
    as the distance between centres. Broadcasts over leading axes.
    """
    offset = target - centre
    length = np.linalg.norm(offset, axis=-1, keepdims=True)
    unit = np.divide(offset, length, out=np.zeros_like(offset), where=length > 0)
    step = np.sqrt(np.sum((unit * spread) ** 2, axis=-1, keepdims=True))
    return np.maximum(ciede2000(centre, centre + unit * step), 1e-9)


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
    * Separation in units of spread: CIEDE2000 between centres over the sum of both colours'
      spreads towards each other. With normally distributed facelet colours, a boundary that
      many spreads from each centre misreads a facelet with probability Phi(-separation): 3
      gives 1.3e-3 per facelet (7 % chance of at least one misread on a 3x3x3's 54 facelets:
      refused), 4 gives 3e-5 (0.2 % per 3x3x3: a warning below that).

    References
    ----------
    W. S. Mokrzycki, M. Tatol, "Colour difference Delta E - A survey", Machine Graphics and
    Vision 20(4), 2011.
    """
    centres = scheme.centres()
    spreads = scheme.spreads()
    results = []
    for i in range(len(centres)):
        for j in range(i + 1, len(centres)):
            delta_e = float(ciede2000(centres[i], centres[j]))
            spread_i = float(_spread_towards(centres[i], spreads[i], centres[j]))
            spread_j = float(_spread_towards(centres[j], spreads[j], centres[i]))
            value = delta_e / (spread_i + spread_j)
            results.append(
                PairSeparation(
                    scheme.colors[i].name,
                    scheme.colors[j].name,
                    delta_e,
                    spread_i,
                    spread_j,
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

    Distances are CIEDE2000 to each centre divided by the colour's spread towards the sample,
    the same measure `separation` uses, so a scheme that passes the check is one these
    distances can tell apart.
    """
    samples = np.asarray(lab, dtype=np.float64).reshape(-1, 3)
    centres = scheme.centres()[None, :, :]
    spreads = scheme.spreads()[None, :, :]
    targets = samples[:, None, :]
    delta_e = ciede2000(targets, centres)
    spread = _spread_towards(np.broadcast_to(centres, (*delta_e.shape, 3)), spreads, targets)
    distance = delta_e / spread
    order = np.argsort(distance, axis=1)
    rows = np.arange(len(samples))
    best = distance[rows, order[:, 0]]
    second = distance[rows, order[:, 1]] if distance.shape[1] > 1 else np.full_like(best, np.inf)
    return ColorMatch(order[:, 0].astype(np.intp), best, second - best)


# ----------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------


def save_scheme(scheme: ColorScheme, path: str | Path) -> None:
    """Write `scheme` as TOML (human-readable; numbers rounded to 0.01)."""
    document: dict[str, Any] = {
        "scheme": {"name": scheme.name, "puzzle": scheme.puzzle, "light": scheme.light},
        "opposites": [list(pair) for pair in scheme.opposites],
        "colors": [
            {
                "name": color.name,
                "lab": [round(value, 2) for value in color.lab],
                "spread": [round(value, 2) for value in color.spread],
                **({"face": color.face} if color.face is not None else {}),
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
        _reject_unknown(entry, {"name", "lab", "spread", "face"}, where)
        face = entry.get("face")
        if face is not None and face not in PUZZLE_FACES[puzzle]:
            raise SchemeError(f"{where} face {face!r} is not a face of a {puzzle}")
        spread = _triple(entry, "spread", where)
        if min(spread) <= 0:
            raise SchemeError(f"{where} spread must be positive, got {list(spread)}")
        colors.append(
            SchemeColor(
                _required_str(entry, "name", where), _triple(entry, "lab", where), spread, face
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


def _as_triple(values: ArrayLike) -> tuple[float, float, float]:
    array = np.asarray(values, dtype=np.float64).reshape(3)
    return (float(array[0]), float(array[1]), float(array[2]))
