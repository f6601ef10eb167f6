"""The colouring of a puzzle: one colour name per facelet, and moves applied to it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from judgecam.puzzle.moves import Move, move_permutation
from judgecam.puzzle.registry import get_puzzle

logger = logging.getLogger(__name__)

#: One-letter abbreviations for the net printout.
COLOR_LETTERS: dict[str, str] = {
    "white": "W",
    "yellow": "Y",
    "red": "R",
    "orange": "O",
    "green": "G",
    "blue": "B",
    "unknown": "?",
    "missing": "-",
}


@dataclass(frozen=True)
class State:
    """Facelet colours of one puzzle, indexed like `PuzzleSpec.facelets`."""

    puzzle: str
    colors: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "puzzle", get_puzzle(self.puzzle).name)
        object.__setattr__(self, "colors", tuple(self.colors))
        expected = len(get_puzzle(self.puzzle).facelets)
        if len(self.colors) != expected:
            raise ValueError(f"{self.puzzle} has {expected} facelets, got {len(self.colors)}")

    def apply(self, moves: str | Sequence[Move]) -> State:
        """The state after `moves` (a notation string or Move objects), left to right."""
        if isinstance(moves, str):
            from judgecam.puzzle.notation import parse_moves

            moves = parse_moves(moves, self.puzzle)
        colors = self.colors
        for move in moves:
            if move.puzzle != self.puzzle:
                raise ValueError(f"a {move.puzzle} move cannot act on a {self.puzzle} state")
            perm = move_permutation(move.puzzle, move.axis, move.parts, move.amount)
            colors = tuple(colors[i] for i in perm)
        return State(self.puzzle, colors)

    def face_colors(self) -> dict[str, tuple[str, ...]]:
        """Face name -> the colours of its facelets in facelet order."""
        return {
            face: tuple(self.colors[i] for i in indices)
            for face, indices in face_facelets(self.puzzle).items()
        }

    def faces_single_colored(self) -> bool:
        """True if every face shows one single colour (whichever colour it is)."""
        return all(len(set(colors)) == 1 for colors in self.face_colors().values())

    def net(self) -> str:
        """A text drawing of the state, one letter per facelet (see COLOR_LETTERS)."""
        if self.puzzle == "pyram":
            return _pyraminx_net(self)
        return _cube_net(self)

    def __str__(self) -> str:
        return self.net()


@cache
def face_facelets(puzzle: str) -> dict[str, tuple[int, ...]]:
    """Face name -> indices of its facelets, in facelet order."""
    spec = get_puzzle(puzzle)
    return {
        face.name: tuple(f.index for f in spec.facelets if f.face == face.name)
        for face in spec.faces
    }


def color_letter(color: str) -> str:
    """One character for a colour name in a net."""
    return COLOR_LETTERS.get(color, color[:1].upper() or "?")


def _cube_net(state: State) -> str:
    faces = {
        face: [color_letter(c) for c in colors] for face, colors in state.face_colors().items()
    }
    size = round(len(faces["U"]) ** 0.5)

    def row(face: str, r: int) -> str:
        return " ".join(faces[face][r * size : (r + 1) * size])

    pad = " " * (2 * size + 1)
    lines = [pad + row("U", r) for r in range(size)]
    lines += [" ".join(row(face, r) for face in "LFRB") for r in range(size)]
    lines += [pad + row("D", r) for r in range(size)]
    return "\n".join(line.rstrip() for line in lines)


def _pyraminx_net(state: State) -> str:
    lines = []
    for face, colors in state.face_colors().items():
        letters = [color_letter(c) for c in colors]
        widths = (1, 3, 5) if face != "D" else (5, 3, 1)
        start = 0
        for number, width in enumerate(widths):
            text = " ".join(letters[start : start + width])
            label = f"{face}: " if number == 0 else "   "
            lines.append(label + " " * (5 - width) + text)
            start += width
    return "\n".join(lines)
