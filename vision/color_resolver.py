"""Sticker colours in rubiks-color-resolver's JSON format, mapped to judgecam's facelets.

The format (dwalton76/rubiks-color-resolver) maps square numbers "1".."6N²" to mean [R, G, B].
Squares go face by face in the order U, L, F, R, B, D, each face row by row as seen from
outside (U with B at the top, D with F at the top, side faces with U at the top). judgecam's
facelets use the same reading of each face but Kociemba's face order U, R, F, D, L, B; the
mapping below is built from the puzzle's own facelet list, face by face.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgecam.puzzle.registry import get_puzzle
from judgecam.vision.color_model import FaceletSample

logger = logging.getLogger(__name__)

#: Face order of rubiks-color-resolver's square numbers.
RESOLVER_FACE_ORDER: tuple[str, ...] = ("U", "L", "F", "R", "B", "D")


class ResolverFormatError(ValueError):
    """A file or mapping that is not valid rubiks-color-resolver input for the puzzle."""


def resolver_square_to_facelet(puzzle: str) -> tuple[int, ...]:
    """Facelet index of each resolver square: element s-1 is square s's facelet index."""
    spec = get_puzzle(puzzle)
    by_face: dict[str, list[int]] = {}
    for facelet in spec.facelets:
        by_face.setdefault(facelet.face, []).append(facelet.index)
    if set(by_face) != set(RESOLVER_FACE_ORDER):
        raise ResolverFormatError(f"{spec.name} is not a cube; the resolver format is for cubes")
    return tuple(index for face in RESOLVER_FACE_ORDER for index in by_face[face])


def samples_from_resolver(
    squares: Mapping[str, Any], puzzle: str
) -> tuple[FaceletSample | None, ...]:
    """Facelet samples (judgecam order) from a resolver mapping; absent squares are unseen."""
    mapping = resolver_square_to_facelet(puzzle)
    known = {str(number) for number in range(1, len(mapping) + 1)}
    unknown = sorted(set(squares) - known, key=str)
    if unknown:
        raise ResolverFormatError(
            f"square {unknown[0]!r} is not a square of a {puzzle} (expected 1..{len(mapping)})"
        )
    samples: list[FaceletSample | None] = [None] * len(mapping)
    for key, value in squares.items():
        samples[mapping[int(key) - 1]] = FaceletSample.from_rgb(_rgb(key, value))
    return tuple(samples)


def _rgb(key: str, value: Any) -> tuple[float, float, float]:
    if not (
        isinstance(value, list | tuple)
        and len(value) == 3
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        and all(math.isfinite(v) and 0 <= v <= 255 for v in value)
    ):
        raise ResolverFormatError(f"square {key}: expected [R, G, B] in 0..255, got {value!r}")
    return (float(value[0]), float(value[1]), float(value[2]))


def load_resolver_file(path: str | Path, puzzle: str) -> tuple[FaceletSample | None, ...]:
    """Samples from a resolver JSON file (ResolverFormatError with one line if unusable)."""
    file = Path(path)
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResolverFormatError(f"{file}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ResolverFormatError(f"{file}: cannot read: {error}") from None
    except json.JSONDecodeError as error:
        raise ResolverFormatError(f"{file}: not valid JSON: {error}") from None
    if not isinstance(document, dict) or not document:
        raise ResolverFormatError(f"{file}: expected an object of square number -> [R, G, B]")
    try:
        return samples_from_resolver(document, puzzle)
    except ResolverFormatError as error:
        raise ResolverFormatError(f"{file}: {error}") from None
