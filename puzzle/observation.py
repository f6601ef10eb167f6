"""What the cameras report about one puzzle, as data: facelet colours and pair angles.

Semantics (vision produces exactly this; see observation.schema.json):
- `facelets[i]` is the colour label of facelet i (the order of `PuzzleSpec.facelets`) with every
  part snapped to its nearest aligned position; "unknown" if no camera saw it, "missing" if the
  sticker, cap or piece is off.
- `pairs` lists, for adjacent parts on an axis, `angle_deg`: the residual misalignment of the
  pair, rot(parts[1]) - rot(parts[0]) right-handed about the axis, relative to the nearest
  aligned position, in [-step/2, +step/2]; and `uncertainty_deg` (>= 0) around it. A pair that is
  not listed was not measured: its angle could be anything (uncertainty of a whole step), so the
  verdict is review unless both ways the pair could snap give the same verdict.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgecam.puzzle.registry import UnknownPuzzleError, get_puzzle

logger = logging.getLogger(__name__)

UNKNOWN = "unknown"
MISSING = "missing"
SCHEMA_PATH = Path(__file__).with_name("observation.schema.json")


class ObservationError(ValueError):
    """An observation that does not fit its puzzle or the file format; one readable line."""


@dataclass(frozen=True)
class PairObservation:
    """The measured residual misalignment of one pair of adjacent parts."""

    axis: str
    parts: tuple[int, int]
    angle_deg: float
    uncertainty_deg: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple(self.parts))


@dataclass(frozen=True)
class Observation:
    """One observation of a puzzle: facelet colours (by facelet index) and pair residuals."""

    puzzle: str
    facelets: tuple[str, ...]
    pairs: tuple[PairObservation, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "facelets", tuple(self.facelets))
        object.__setattr__(self, "pairs", tuple(self.pairs))
        validate(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (see observation.schema.json)."""
        return {
            "puzzle": self.puzzle,
            "facelets": list(self.facelets),
            "pairs": [
                {
                    "axis": pair.axis,
                    "parts": list(pair.parts),
                    "angle_deg": pair.angle_deg,
                    "uncertainty_deg": pair.uncertainty_deg,
                }
                for pair in self.pairs
            ],
        }

    @classmethod
    def from_dict(cls, data: object) -> Observation:
        """Parse the JSON form; ObservationError says what is wrong and where."""
        if not isinstance(data, dict):
            raise ObservationError("an observation must be a JSON object")
        unknown_keys = set(data) - {"puzzle", "facelets", "pairs", "comment"}
        if unknown_keys:
            raise ObservationError(f"unknown field(s): {', '.join(sorted(unknown_keys))}")
        puzzle = data.get("puzzle")
        if not isinstance(puzzle, str):
            raise ObservationError('"puzzle" must be a puzzle name such as "333"')
        facelets = data.get("facelets")
        if not isinstance(facelets, list) or not all(isinstance(f, str) for f in facelets):
            raise ObservationError('"facelets" must be a list of colour labels (strings)')
        pairs_data = data.get("pairs", [])
        if not isinstance(pairs_data, list):
            raise ObservationError('"pairs" must be a list')
        pairs = tuple(_pair_from_dict(item, i) for i, item in enumerate(pairs_data))
        return cls(puzzle, tuple(facelets), pairs)


def _pair_from_dict(item: object, index: int) -> PairObservation:
    where = f"pairs[{index}]"
    if not isinstance(item, dict):
        raise ObservationError(f"{where} must be an object")
    extra = set(item) - {"axis", "parts", "angle_deg", "uncertainty_deg", "label"}
    if extra:
        raise ObservationError(f"{where} has unknown field(s): {', '.join(sorted(extra))}")
    axis, parts = item.get("axis"), item.get("parts")
    angle, uncertainty = item.get("angle_deg"), item.get("uncertainty_deg", 0.0)
    if not isinstance(axis, str):
        raise ObservationError(f'{where}.axis must be an axis name such as "x"')
    if (
        not isinstance(parts, list)
        or len(parts) != 2
        or not all(isinstance(p, int) and not isinstance(p, bool) for p in parts)
    ):
        raise ObservationError(f"{where}.parts must be two part indices [i, i+1]")
    return PairObservation(
        axis,
        (parts[0], parts[1]),
        _degrees(angle, f"{where}.angle_deg"),
        _degrees(uncertainty, f"{where}.uncertainty_deg"),
    )


def _degrees(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ObservationError(f"{where} must be a number (degrees)")
    return float(value)


def validate(observation: Observation) -> None:
    """Check an observation against its puzzle (ObservationError with the first problem)."""
    try:
        spec = get_puzzle(observation.puzzle)
    except UnknownPuzzleError as error:
        raise ObservationError(str(error)) from None
    object.__setattr__(observation, "puzzle", spec.name)
    if len(observation.facelets) != len(spec.facelets):
        raise ObservationError(
            f"{spec.title} has {len(spec.facelets)} facelets, "
            f"the observation lists {len(observation.facelets)}"
        )
    empty = [i for i, label in enumerate(observation.facelets) if not label.strip()]
    if empty:
        raise ObservationError(f"facelet {empty[0]} has an empty colour label")
    seen: set[tuple[str, tuple[int, int]]] = set()
    for index, pair in enumerate(observation.pairs):
        where = f"pairs[{index}]"
        try:
            axis = spec.axis(pair.axis)
        except KeyError:
            names = ", ".join(a.name for a in spec.axes)
            raise ObservationError(
                f"{where}: {spec.title} has no axis {pair.axis!r} (axes: {names})"
            ) from None
        first, second = pair.parts
        if second != first + 1 or not 0 <= first < len(axis.part_names) - 1:
            raise ObservationError(
                f"{where}: parts must be adjacent, [i, i+1] with 0 <= i < "
                f"{len(axis.part_names) - 1}, got {list(pair.parts)}"
            )
        if (pair.axis, pair.parts) in seen:
            raise ObservationError(f"{where}: pair {pair.axis} {list(pair.parts)} listed twice")
        seen.add((pair.axis, pair.parts))
        half = axis.step_deg / 2
        if not math.isfinite(pair.angle_deg) or abs(pair.angle_deg) > half + 1e-9:
            raise ObservationError(
                f"{where}: angle_deg {pair.angle_deg} is not a residual in "
                f"[-{half:g}, {half:g}] (the colours already carry whole steps)"
            )
        if not math.isfinite(pair.uncertainty_deg) or pair.uncertainty_deg < 0:
            raise ObservationError(f"{where}: uncertainty_deg must be a number >= 0")


def load_observation(path: str | Path) -> Observation:
    """Read an observation JSON file (ObservationError if it is missing or malformed)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ObservationError(f"no observation file at {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ObservationError(f"cannot read {path}: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ObservationError(
            f"{path} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    try:
        return Observation.from_dict(data)
    except ObservationError as error:
        raise ObservationError(f"{path}: {error}") from None


def save_observation(observation: Observation, path: str | Path) -> None:
    """Write an observation as pretty JSON."""
    Path(path).write_text(json.dumps(observation.to_dict(), indent=2) + "\n", encoding="utf-8")
