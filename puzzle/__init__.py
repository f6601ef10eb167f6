"""The puzzle domain: geometry, notation, state, limits and the verdict. Pure Python, no I/O.

Frame: centred at the origin, millimetres, right-handed, +x = R, +y = U, +z = F (WCA scrambling
orientation). See puzzle/README.md and `judgecam.puzzle.geometry` for the conventions every
other package relies on.
"""

from judgecam.puzzle.counting import MoveCount, moves_from_solved
from judgecam.puzzle.geometry import Axis, Face, Facelet, Pair, Piece, PuzzleSpec, Vec3
from judgecam.puzzle.moves import Move
from judgecam.puzzle.notation import NotationError, format_moves, parse_moves
from judgecam.puzzle.observation import (
    MISSING,
    UNKNOWN,
    Observation,
    ObservationError,
    PairObservation,
    load_observation,
    save_observation,
)
from judgecam.puzzle.reachability import check_reachable
from judgecam.puzzle.registry import PUZZLE_NAMES, UnknownPuzzleError, get_puzzle
from judgecam.puzzle.state import State
from judgecam.puzzle.verdict import PairVerdict, Verdict, judge

__all__ = [
    "MISSING",
    "PUZZLE_NAMES",
    "UNKNOWN",
    "Axis",
    "Face",
    "Facelet",
    "Move",
    "MoveCount",
    "NotationError",
    "Observation",
    "ObservationError",
    "Pair",
    "PairObservation",
    "PairVerdict",
    "Piece",
    "PuzzleSpec",
    "State",
    "UnknownPuzzleError",
    "Vec3",
    "Verdict",
    "check_reachable",
    "format_moves",
    "get_puzzle",
    "judge",
    "load_observation",
    "moves_from_solved",
    "parse_moves",
    "save_observation",
]
