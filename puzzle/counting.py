"""Moves from solved, in the Outer Block Turn Metric with rotations free (WCA 10e, 12a5).

Solved means every face single-coloured, whatever colour each face has (so rotations and colour
schemes never matter). One move from solved means that one turn of the parts on one side of one
cut, by some number of steps, makes every face single-coloured. Turning one side of a cut is the
same as turning the other side the other way plus a whole-puzzle rotation, so trying one side of
every cut covers every outer-block turn (R, Rw, 3Rw, ..., U, u on a Pyraminx). Everything else is
two or more (reported as 2).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle.geometry import Pair
from judgecam.puzzle.moves import Move, move_permutation, normalize_steps, turns_per_cycle
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.state import State, face_facelets

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MoveCount:
    """0, 1 or 2 (two or more) moves from solved; for 1, the move and the pair it is on.

    `move` is a move that turns a solved puzzle into this state (up to a rotation); `steps` is
    the relative rotation of `pair` in steps, rot(parts[1]) - rot(parts[0]).
    """

    count: int
    move: Move | None = None
    pair: Pair | None = None
    steps: int = 0


@dataclass(frozen=True)
class _OneMoveTable:
    """Every one-cut fixing move of a puzzle as stacked permutations, for vectorised checks."""

    perms: NDArray[np.intp]  # (moves, facelets): candidate colours = colors[perms[m]]
    pairs: tuple[Pair, ...]
    steps: tuple[int, ...]  # the pair's relative steps in the observed state
    moves: tuple[Move, ...]  # the move from solved that this candidate undoes
    face_order: NDArray[np.intp]  # facelet indices grouped face by face
    faces: int


@cache
def _one_move_table(puzzle: str) -> _OneMoveTable:
    spec = get_puzzle(puzzle)
    perms, pairs, steps, moves = [], [], [], []
    for pair in spec.pairs():
        count = len(spec.axis(pair.axis).part_names)
        cycle = turns_per_cycle(puzzle, pair.axis)
        upper = tuple(range(pair.parts[1], count))
        lower = tuple(range(pair.parts[1]))
        for fix in range(1, cycle):
            relative = normalize_steps(-fix, cycle)  # the state's pair angle that `fix` undoes
            perms.append(move_permutation(puzzle, pair.axis, upper, fix))
            pairs.append(pair)
            steps.append(relative)
            moves.append(_named_move(puzzle, pair.axis, upper, lower, relative))
    faces = face_facelets(puzzle)
    order = np.array([i for indices in faces.values() for i in indices], dtype=np.intp)
    return _OneMoveTable(
        perms=np.stack(perms),
        pairs=tuple(pairs),
        steps=tuple(steps),
        moves=tuple(moves),
        face_order=order,
        faces=len(faces),
    )


def _named_move(
    puzzle: str, axis: str, upper: tuple[int, ...], lower: tuple[int, ...], relative: int
) -> Move:
    """The move from solved giving the pair `relative` steps: the side with a notation name.

    Prefers a named move (R over <x:M+R>), then fewer parts (R over Lw').
    """
    cycle = turns_per_cycle(puzzle, axis)
    candidates = [
        Move(puzzle, axis, upper, normalize_steps(relative, cycle)),
        Move(puzzle, axis, lower, normalize_steps(-relative, cycle)),
    ]
    return min(candidates, key=lambda m: (str(m).startswith("<"), len(m.parts)))


def color_codes(colors: tuple[str, ...]) -> NDArray[np.intp]:
    """Colour names as small integers (equal names, equal codes)."""
    codes: dict[str, int] = {}
    return np.array([codes.setdefault(c, len(codes)) for c in colors], dtype=np.intp)


def single_colored(codes: NDArray[np.intp], face_order: NDArray[np.intp], faces: int) -> bool:
    """True if every face of the coloured facelets `codes` has one colour."""
    grouped = codes[face_order].reshape(faces, -1)
    return bool(np.all(grouped == grouped[:, :1]))


def moves_from_solved(state: State) -> MoveCount:
    """0 if every face is single-coloured, 1 if one outer-block turn makes it so, else 2."""
    table = _one_move_table(get_puzzle(state.puzzle).name)
    codes = color_codes(state.colors)
    if single_colored(codes, table.face_order, table.faces):
        return MoveCount(0)
    candidates = codes[table.perms][:, table.face_order]
    candidates = candidates.reshape(len(table.perms), table.faces, -1)
    solved = np.all(candidates == candidates[:, :, :1], axis=(1, 2))
    hits = np.flatnonzero(solved)
    if hits.size == 0:
        return MoveCount(2)
    first = int(hits[0])
    return MoveCount(1, table.moves[first], table.pairs[first], table.steps[first])
