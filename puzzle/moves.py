"""Moves as geometry: a contiguous block of parts turned about one axis by whole steps.

A move acts on facelets by geometry: each facelet in the turning parts is carried to the position
its centre rotates to, and the facelet found there receives its colour. So a new puzzle needs
only its geometry, never a hand-written permutation table.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle.geometry import rotate
from judgecam.puzzle.registry import get_puzzle

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Move:
    """Turn `parts` (contiguous part indices on `axis`) by `amount` steps, right-handed.

    `amount` is in steps of the axis (90 or 120 degrees), right-handed about the axis direction:
    R on a cube is `Move("333", "x", (2,), -1)`, the rotation x is the same on parts (0, 1, 2).
    The amount is stored reduced to (-cycle/2, cycle/2] (cubes -1, 1, 2; Pyraminx -1, 1).
    `str(move)` gives the notation (KCA Art. 15 / WCA 12a where one exists).
    """

    puzzle: str
    axis: str
    parts: tuple[int, ...]
    amount: int

    def __post_init__(self) -> None:
        spec = get_puzzle(self.puzzle)
        object.__setattr__(self, "puzzle", spec.name)
        object.__setattr__(self, "parts", tuple(self.parts))
        cycle = round(360.0 / spec.axis(self.axis).step_deg)
        object.__setattr__(self, "amount", normalize_steps(int(self.amount), cycle))
        count = len(spec.axis(self.axis).part_names)
        if not self.parts or list(self.parts) != list(range(self.parts[0], self.parts[-1] + 1)):
            raise ValueError(f"parts must be contiguous and non-empty, got {self.parts}")
        if self.parts[0] < 0 or self.parts[-1] >= count:
            raise ValueError(f"axis {self.axis} of {self.puzzle} has parts 0..{count - 1}")

    @property
    def is_rotation(self) -> bool:
        """True if every part turns: the whole puzzle rotates (never counts as a move)."""
        return len(self.parts) == len(get_puzzle(self.puzzle).axis(self.axis).part_names)

    @property
    def cycle(self) -> int:
        """Steps in a full turn on this move's axis (4 on cubes, 3 on a Pyraminx)."""
        return turns_per_cycle(self.puzzle, self.axis)

    @property
    def normalized_amount(self) -> int:
        """The amount reduced to (-cycle/2, cycle/2]: -1, 1, 2 on cubes; -1, 1 on a Pyraminx."""
        return normalize_steps(self.amount, self.cycle)

    def inverse(self) -> Move:
        """The move that undoes this one."""
        return Move(self.puzzle, self.axis, self.parts, -self.amount)

    def __str__(self) -> str:
        from judgecam.puzzle.notation import format_move

        return format_move(self)


def normalize_steps(amount: int, cycle: int) -> int:
    """`amount` modulo `cycle`, in the range (-cycle/2, cycle/2]."""
    reduced = amount % cycle
    return reduced - cycle if reduced > cycle // 2 else reduced


def turns_per_cycle(puzzle: str, axis: str) -> int:
    """Number of steps in a full turn about `axis`."""
    return round(360.0 / get_puzzle(puzzle).axis(axis).step_deg)


@cache
def facelet_parts(puzzle: str, axis: str) -> tuple[int, ...]:
    """The part index of every facelet along `axis`, in the solved geometry."""
    spec = get_puzzle(puzzle)
    along = spec.axis(axis)
    return tuple(along.part_of(facelet.center) for facelet in spec.facelets)


@cache
def move_permutation(
    puzzle: str, axis: str, parts: tuple[int, ...], amount: int
) -> NDArray[np.intp]:
    """Index array `perm` with new_colors = old_colors[perm] after the move.

    Read-only; computed once per distinct move from the geometry.
    """
    spec = get_puzzle(puzzle)
    along = spec.axis(axis)
    steps = amount % turns_per_cycle(puzzle, axis)
    centers = np.array([facelet.center for facelet in spec.facelets], dtype=np.float64)
    where = facelet_parts(puzzle, axis)
    perm = np.arange(len(spec.facelets), dtype=np.intp)
    tolerance = 1e-6 * spec.edge_mm
    for facelet in spec.facelets:
        if where[facelet.index] not in parts:
            continue
        target = np.array(rotate(facelet.center, along.direction, steps * along.step_deg))
        distances = np.linalg.norm(centers - target, axis=1)
        destination = int(np.argmin(distances))
        if distances[destination] > tolerance:
            raise RuntimeError(
                f"{puzzle}: facelet {facelet.index} turned about {axis} lands on no facelet"
            )
        perm[destination] = facelet.index
    if len(set(perm.tolist())) != len(perm):
        raise RuntimeError(f"{puzzle}: the move {axis}{parts}{amount} is not a permutation")
    perm.setflags(write=False)
    return perm


def all_single_moves(puzzle: str) -> tuple[Move, ...]:
    """Every move of one contiguous block of parts on every axis, every non-zero amount."""
    spec = get_puzzle(puzzle)
    moves = []
    for axis in spec.axes:
        count = len(axis.part_names)
        cycle = turns_per_cycle(puzzle, axis.name)
        for first in range(count):
            for last in range(first, count):
                for amount in range(1, cycle):
                    moves.append(
                        Move(
                            puzzle,
                            axis.name,
                            tuple(range(first, last + 1)),
                            normalize_steps(amount, cycle),
                        )
                    )
    return tuple(moves)
