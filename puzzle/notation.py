"""Move notation (KCA Art. 15, WCA Article 12) to `Move`s and back.

Cubes: face turns R L U D F B with ' (counter-clockwise) and 2 (half turn; "2'" is accepted as a
half turn too); outer-block turns Rw, 3Rw', 2Fw2 (n omitted means 2, n at most the cube size,
n equal to the size is a rotation); rotations x y z and [r] [l] [u] [d] [f] [b] with ' and 2
(written [f'] as in KCA Art. 15 or [f]'). On odd cubes the middle slices M (as L), E (as D) and
S (as F) are also read: they are not WCA notation, but handy to set up test states.
Pyraminx: layer turns U L R B and tip turns u l r b, with ' (120 degrees each; WCA 12a, KCA 15.3).
Every move can also be written in the generic form `<axis:part+part>+k` (k signed steps,
right-handed about the axis), which `str(move)` uses when the notation has no name for it.

Tokens are separated by whitespace, as scramble programs print them (newlines are fine).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from judgecam.puzzle.geometry import PuzzleSpec
from judgecam.puzzle.moves import Move, normalize_steps, turns_per_cycle
from judgecam.puzzle.registry import get_puzzle

logger = logging.getLogger(__name__)


class NotationError(ValueError):
    """A move string that is not valid notation; says which token and where (0-based offset)."""

    def __init__(self, token: str, position: int, reason: str) -> None:
        self.token = token
        self.position = position
        self.reason = reason
        super().__init__(f"bad move {token!r} at position {position}: {reason}")


#: Face letter -> (axis, True if the face is at the positive end of the axis).
CUBE_FACE_AXES: dict[str, tuple[str, bool]] = {
    "R": ("x", True),
    "L": ("x", False),
    "U": ("y", True),
    "D": ("y", False),
    "F": ("z", True),
    "B": ("z", False),
}
#: Rotation name -> (axis, the sign of its clockwise quarter turn in right-handed steps).
CUBE_ROTATIONS: dict[str, tuple[str, int]] = {
    "x": ("x", -1),
    "y": ("y", -1),
    "z": ("z", -1),
    "[r]": ("x", -1),
    "[l]": ("x", 1),
    "[u]": ("y", -1),
    "[d]": ("y", 1),
    "[f]": ("z", -1),
    "[b]": ("z", 1),
}
#: 3x3x3 (odd cube) middle slices: axis and the sign of the clockwise turn (M as L, E as D, S as F).
CUBE_SLICES: dict[str, tuple[str, int]] = {"M": ("x", 1), "E": ("y", 1), "S": ("z", -1)}

_CUBE_FACE_TURN = re.compile(r"^(?:(\d+)?([RLUDFB])w|([RLUDFB]))(2'|2|')?$")
_CUBE_ROTATION = re.compile(r"^(?:([xyz])|\[([rludfb])(2'|2|')?\])(2'|2|')?$")
_CUBE_SLICE = re.compile(r"^([MES])(2'|2|')?$")
_PYRAMINX_TURN = re.compile(r"^([ULRBulrb])(')?$")
_GENERIC = re.compile(r"^<([^:<>\s]+):([^<>\s]+)>([+-]\d+)$")


def parse_moves(text: str, puzzle: str | PuzzleSpec) -> list[Move]:
    """The moves written in `text` for `puzzle` (NotationError naming the bad token)."""
    spec = puzzle if isinstance(puzzle, PuzzleSpec) else get_puzzle(puzzle)
    moves = []
    for match in re.finditer(r"\S+", text):
        moves.append(parse_move(match.group(), spec, match.start()))
    return moves


def parse_move(token: str, spec: PuzzleSpec, position: int = 0) -> Move:
    """One move token; `position` is its character offset, for the error message."""
    generic = _GENERIC.match(token)
    if generic:
        return _parse_generic(token, generic, spec, position)
    if spec.name == "pyram":
        return _parse_pyraminx(token, spec, position)
    return _parse_cube(token, spec, position)


def _suffix_steps(suffix: str | None) -> int:
    """Clockwise quarter turns meant by a suffix: none 1, ' -1, 2 (or 2') 2."""
    return {None: 1, "": 1, "'": -1, "2": 2, "2'": 2}[suffix]


def _parse_cube(token: str, spec: PuzzleSpec, position: int) -> Move:
    layers = len(spec.axis("x").part_names)
    turn = _CUBE_FACE_TURN.match(token)
    if turn:
        depth_text, wide_face, plain_face, suffix = turn.groups()
        face = wide_face or plain_face
        depth = 1 if plain_face else int(depth_text) if depth_text else 2
        if wide_face and not 2 <= depth <= layers:
            raise NotationError(
                token, position, f"a {layers}x{layers}x{layers} block turn takes 2..{layers} layers"
            )
        axis, positive = CUBE_FACE_AXES[face]
        parts = tuple(range(layers - depth, layers)) if positive else tuple(range(depth))
        clockwise = -1 if positive else 1
        return Move(spec.name, axis, parts, clockwise * _suffix_steps(suffix))
    rotation = _CUBE_ROTATION.match(token)
    if rotation:
        letter, bracketed, inner_suffix, outer_suffix = rotation.groups()
        if bracketed and inner_suffix and outer_suffix:
            raise NotationError(token, position, "two suffixes on one rotation")
        if letter and inner_suffix:
            raise NotationError(token, position, "not a rotation")
        axis, clockwise = CUBE_ROTATIONS[letter or f"[{bracketed}]"]
        steps = _suffix_steps(inner_suffix or outer_suffix)
        return Move(spec.name, axis, tuple(range(layers)), clockwise * steps)
    middle = _CUBE_SLICE.match(token)
    if middle and layers % 2 == 1 and layers > 1:
        letter, suffix = middle.groups()
        axis, clockwise = CUBE_SLICES[letter]
        return Move(spec.name, axis, (layers // 2,), clockwise * _suffix_steps(suffix))
    raise NotationError(token, position, f"not a {spec.title} move (e.g. R U' F2 Rw 3Fw2 x [u])")


def _parse_pyraminx(token: str, spec: PuzzleSpec, position: int) -> Move:
    turn = _PYRAMINX_TURN.match(token)
    if not turn:
        raise NotationError(
            token, position, "not a Pyraminx move (U L R B, tips u l r b, each with or without ')"
        )
    letter, prime = turn.groups()
    parts = (2,) if letter.islower() else (1, 2)
    return Move(spec.name, letter.upper(), parts, 1 if prime else -1)


def _parse_generic(token: str, match: re.Match[str], spec: PuzzleSpec, position: int) -> Move:
    axis_name, part_text, amount_text = match.groups()
    try:
        axis = spec.axis(axis_name)
    except KeyError:
        raise NotationError(token, position, f"{spec.title} has no axis {axis_name!r}") from None
    names = part_text.split("+")
    unknown = [name for name in names if name not in axis.part_names]
    if unknown:
        raise NotationError(
            token, position, f"axis {axis_name} has parts {', '.join(axis.part_names)}"
        )
    parts = tuple(sorted(axis.part_names.index(name) for name in names))
    if list(parts) != list(range(parts[0], parts[-1] + 1)):
        raise NotationError(token, position, "the turning parts must be adjacent")
    return Move(spec.name, axis_name, parts, int(amount_text))


def format_move(move: Move) -> str:
    """The notation of one move: its WCA/KCA name if it has one, else the generic form."""
    spec = get_puzzle(move.puzzle)
    axis = spec.axis(move.axis)
    count = len(axis.part_names)
    cycle = turns_per_cycle(move.puzzle, move.axis)
    if normalize_steps(move.amount, cycle) == 0:
        return _generic(move)
    if spec.name == "pyram":
        if move.parts in ((1, 2), (2,)):
            letter = move.axis if move.parts == (1, 2) else move.axis.lower()
            clockwise = normalize_steps(-move.amount, cycle)
            return letter + {1: "", -1: "'"}[clockwise] if clockwise else _generic(move)
        return _generic(move)
    low, high = axis.part_names[0], axis.part_names[-1]
    if move.is_rotation:
        return move.axis + _cube_suffix(-move.amount, cycle)
    depth = len(move.parts)
    if move.parts[-1] == count - 1:
        face, clockwise = high, -move.amount
    elif move.parts[0] == 0:
        face, clockwise = low, move.amount
    elif count % 2 == 1 and move.parts == (count // 2,):
        letter = next(name for name, (ax, _) in CUBE_SLICES.items() if ax == move.axis)
        return letter + _cube_suffix(CUBE_SLICES[letter][1] * move.amount, cycle)
    else:
        return _generic(move)
    prefix = "" if depth == 1 else ("" if depth == 2 else str(depth))
    wide = "" if depth == 1 else "w"
    return f"{prefix}{face}{wide}{_cube_suffix(clockwise, cycle)}"


def _cube_suffix(clockwise_steps: int, cycle: int) -> str:
    return {1: "", -1: "'", 2: "2"}[normalize_steps(clockwise_steps, cycle)]


def _generic(move: Move) -> str:
    axis = get_puzzle(move.puzzle).axis(move.axis)
    names = "+".join(axis.part_names[i] for i in move.parts)
    return f"<{move.axis}:{names}>{move.amount:+d}"


def format_moves(moves: Sequence[Move]) -> str:
    """A move sequence as one notation string."""
    return " ".join(str(move) for move in moves)
