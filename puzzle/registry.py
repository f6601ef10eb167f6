"""The puzzles judgecam knows, by name: `get_puzzle("333")` and friends.

Adding a puzzle is adding a line here and, if its shape is new, a geometry builder.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache

from judgecam.puzzle.cubes import build_cube
from judgecam.puzzle.geometry import PuzzleSpec
from judgecam.puzzle.pyraminx import build_pyraminx

logger = logging.getLogger(__name__)


class UnknownPuzzleError(ValueError):
    """A puzzle name judgecam does not know; the message lists the known names."""


#: Canonical name -> builder of its spec. Physical sizes are typical speedcubes (edge in mm).
_BUILDERS: dict[str, Callable[[], PuzzleSpec]] = {
    "222": lambda: build_cube("222", "2x2x2 Cube", 2, 50.0),
    "333": lambda: build_cube("333", "3x3x3 Cube", 3, 57.0),
    "pyram": lambda: build_pyraminx("pyram", "Pyraminx", 98.0),
}

#: Readable aliases (matched case-insensitively) -> canonical name.
_ALIASES: dict[str, str] = {
    "2x2x2": "222",
    "2x2": "222",
    "3x3x3": "333",
    "3x3": "333",
    "pyraminx": "pyram",
}

PUZZLE_NAMES: tuple[str, ...] = tuple(_BUILDERS)


def canonical_name(name: str) -> str:
    """The canonical puzzle name for `name` or an alias (UnknownPuzzleError otherwise)."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _BUILDERS:
        known = ", ".join([*_BUILDERS, *_ALIASES])
        raise UnknownPuzzleError(f"unknown puzzle {name!r}; known puzzles: {known}")
    return key


@cache
def get_puzzle(name: str) -> PuzzleSpec:
    """The (cached) PuzzleSpec for a puzzle name such as "333", "3x3x3", "pyram", "Pyraminx"."""
    canonical = canonical_name(name)
    if canonical != name:
        return get_puzzle(canonical)
    logger.debug("building the geometry of %s", canonical)
    return _BUILDERS[canonical]()
