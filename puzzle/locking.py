"""Layers that cannot turn: a layer standing askew holds every crossing layer in line.

Two cuts cross when pieces lie on all four sides of them: the 3x3x3's U cut (y:E|U) and R cut
(x:M|R) both have the UFR, UR and UBR pieces beyond them. Turning across one cut while the other
stands askew would tear those shared pieces apart, so a puzzle lying still with one cut clearly
askew has every crossing cut in line, within the play of its mechanism, whether or not a camera
measured it. A Pyraminx tip crosses no other cut: it turns whatever the layers do. Two crossing
cuts both measured clearly askew cannot both be right: a piece is out of place or a view misfit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from judgecam.puzzle.geometry import Pair, PuzzleSpec
from judgecam.puzzle.registry import get_puzzle

#: A cut whose angle is this far from aligned (degrees) even at the near end of its uncertainty
#: stands askew: nothing crossing it can be turned.
ASKEW_DEG = 15.0
#: How far from aligned (degrees) a cut held by a crossing askew cut may still stand (the play
#: of a mechanism): well inside every limit (45 and 60 degrees).
PLAY_DEG = 15.0


@dataclass(frozen=True)
class PairAngle:
    """A pair's measured angle (residual from aligned) and its uncertainty, in degrees."""

    pair: Pair
    residual_deg: float
    uncertainty_deg: float

    @property
    def askew(self) -> bool:
        """True if even the near end of the uncertainty is ASKEW_DEG or more from aligned."""
        return abs(self.residual_deg) - self.uncertainty_deg >= ASKEW_DEG


def crossing(spec: PuzzleSpec, first: Pair, second: Pair) -> bool:
    """Whether the two pairs' cuts cross: pieces lie on all four sides of them."""
    return (second.axis, second.parts) in _crossings(spec.name)[(first.axis, first.parts)]


_PairKey = tuple[str, tuple[int, int]]  # (axis, parts)


@cache
def _crossings(name: str) -> dict[_PairKey, frozenset[_PairKey]]:
    """For each pair of the puzzle `name`, the pairs whose cuts cross its cut."""
    spec = get_puzzle(name)
    sides = {
        (pair.axis, pair.parts): tuple(
            spec.axis(pair.axis).part_of(piece.center) >= pair.parts[1] for piece in spec.pieces
        )
        for pair in spec.pairs()
    }
    return {
        key: frozenset(
            other
            for other, other_sides in sides.items()
            if other[0] != key[0] and len(set(zip(key_sides, other_sides, strict=True))) == 4
        )
        for key, key_sides in sides.items()
    }


def holders(spec: PuzzleSpec, pair: Pair, measured: list[PairAngle]) -> list[PairAngle]:
    """The measured pairs standing askew whose cuts cross `pair`'s: they hold it in line."""
    return [m for m in measured if m.askew and crossing(spec, pair, m.pair)]


def contradiction(
    spec: PuzzleSpec, measured: list[PairAngle]
) -> tuple[PairAngle, PairAngle] | None:
    """Two crossing pairs both measured askew (which no intact puzzle can show), or None."""
    askew = [m for m in measured if m.askew]
    for index, first in enumerate(askew):
        for second in askew[index + 1 :]:
            if crossing(spec, first.pair, second.pair):
                return first, second
    return None
