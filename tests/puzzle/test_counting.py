"""Moves from solved (OBTM, rotations free, any colour scheme), checked against a brute force."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgecam.puzzle import Move, State, get_puzzle, moves_from_solved, parse_moves

PUZZLES = ("222", "333", "pyram")


def count(puzzle: str, moves: str) -> int:
    return moves_from_solved(get_puzzle(puzzle).solved_state().apply(moves)).count


@pytest.mark.parametrize(
    ("puzzle", "moves", "expected"),
    [
        ("333", "", 0),
        ("333", "R", 1),
        ("333", "Rw", 1),
        ("333", "R L'", 2),
        ("222", "R L'", 0),
        ("333", "U D'", 2),
        ("333", "x y", 0),
        ("333", "R U", 2),
        ("pyram", "u", 1),
        ("pyram", "U u'", 2),
        ("333", "M", 2),
        ("333", "E2", 2),
        ("333", "R R'", 0),
        ("333", "R2 x' L2", 2),
        ("333", "3Rw", 0),
        ("222", "Rw", 0),
        ("222", "U D", 1),  # D is U plus a rotation on a 2x2x2: U D is U2
        ("pyram", "U", 1),
        ("pyram", "U L", 2),
        ("pyram", "u l", 2),
    ],
)
def test_worked_cases(puzzle: str, moves: str, expected: int) -> None:
    assert count(puzzle, moves) == expected


def _block_moves(puzzle: str) -> list[Move]:
    """One side of every cut turned by every amount: every single move, named or not."""
    spec = get_puzzle(puzzle)
    moves = []
    for pair in spec.pairs():
        parts = len(spec.axis(pair.axis).part_names)
        cycle = round(360 / pair.step_deg)
        for side in (tuple(range(pair.parts[1], parts)), tuple(range(pair.parts[1]))):
            for amount in range(1, cycle):
                moves.append(Move(puzzle, pair.axis, side, amount))
    return moves


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_every_single_move_is_one_move(puzzle: str) -> None:
    solved = get_puzzle(puzzle).solved_state()
    for move in _block_moves(puzzle):
        result = moves_from_solved(solved.apply([move]))
        assert result.count == 1, str(move)
        assert result.pair is not None and result.pair.axis == move.axis
        assert result.move is not None
        # The reported move reproduces the state up to a rotation.
        assert moves_from_solved(solved.apply([move, result.move.inverse()])).count == 0


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_single_moves_after_a_rotation_and_under_any_scheme(puzzle: str) -> None:
    spec = get_puzzle(puzzle)
    scheme = {face.name: f"colour-{i}" for i, face in enumerate(reversed(spec.faces))}
    start = spec.solved_state(scheme).apply(_rotations(puzzle)[5])
    for move in _block_moves(puzzle):
        assert moves_from_solved(start.apply([move])).count == 1, str(move)


def test_reported_move_and_steps() -> None:
    result = moves_from_solved(get_puzzle("333").solved_state().apply("R"))
    assert str(result.move) == "R"
    assert result.pair is not None and result.pair.label == "x:M|R"
    assert result.steps == -1
    result = moves_from_solved(get_puzzle("333").solved_state().apply("Rw"))
    assert str(result.move) == "L"
    assert result.pair is not None and result.pair.label == "x:L|M"
    result = moves_from_solved(get_puzzle("pyram").solved_state().apply("b'"))
    assert str(result.move) == "b'"
    assert result.pair is not None and result.pair.label == "B:layer|tip"


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_rotations_are_free(puzzle: str) -> None:
    solved = get_puzzle(puzzle).solved_state()
    for sequence in _rotations(puzzle):
        assert count(puzzle, " ".join(str(m) for m in sequence)) == 0
        assert moves_from_solved(solved.apply(sequence)).count == 0


# --- an independent brute force: canonical colourings at depth 0 and 1 ------------------------


def _canonical(colors: tuple[str, ...]) -> tuple[int, ...]:
    """Colours renamed by order of first appearance: equal for any colour scheme."""
    names: dict[str, int] = {}
    return tuple(names.setdefault(c, len(names)) for c in colors)


@cache
def _rotations(puzzle: str) -> tuple[tuple[Move, ...], ...]:
    """Move sequences reaching every whole-puzzle orientation (BFS over rotations)."""
    spec = get_puzzle(puzzle)
    generators = [
        Move(puzzle, axis.name, tuple(range(len(axis.part_names))), 1) for axis in spec.axes[:2]
    ]
    solved = spec.solved_state()
    seen: dict[tuple[str, ...], tuple[Move, ...]] = {solved.colors: ()}
    frontier: list[tuple[tuple[Move, ...], State]] = [((), solved)]
    while frontier:
        following = []
        for sequence, state in frontier:
            for move in generators:
                new = state.apply([move])
                if new.colors not in seen:
                    seen[new.colors] = (*sequence, move)
                    following.append(((*sequence, move), new))
        frontier = following
    return tuple(seen.values())


def _notation_moves(puzzle: str) -> list[str]:
    """Every OBTM move of the notation, as text (what the brute force turns)."""
    if puzzle == "pyram":
        return [f"{v}{s}" for v in "ULRBulrb" for s in ("", "'")]
    layers = len(get_puzzle(puzzle).axis("x").part_names)
    faces = [f"{face}{w}" for face in "RLUDFB" for w in ["", *(["w"] if layers > 2 else [])]]
    return [f"{face}{s}" for face in faces for s in ("", "'", "2")]


@cache
def _depths(puzzle: str) -> tuple[frozenset[tuple[int, ...]], frozenset[tuple[int, ...]]]:
    solved = get_puzzle(puzzle).solved_state()
    oriented = [solved.apply(list(r)) for r in _rotations(puzzle)]
    depth0 = frozenset(_canonical(s.colors) for s in oriented)
    depth1 = frozenset(
        _canonical(s.apply(move).colors) for s in oriented for move in _notation_moves(puzzle)
    )
    return depth0, depth1 - depth0


def brute_force_count(state: State) -> int:
    depth0, depth1 = _depths(state.puzzle)
    key = _canonical(state.colors)
    return 0 if key in depth0 else 1 if key in depth1 else 2


def test_brute_force_sizes() -> None:
    assert len(_rotations("333")) == 24
    assert len(_rotations("222")) == 24
    assert len(_rotations("pyram")) == 12


def _token_strategy(puzzle: str) -> st.SearchStrategy[str]:
    extra = ["x", "y'", "z2", "[f]", "M", "E'"] if puzzle == "333" else []
    extra += ["x", "y", "[u2]"] if puzzle == "222" else []
    return st.sampled_from(_notation_moves(puzzle) + extra)


@pytest.mark.parametrize("puzzle", PUZZLES)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_count_agrees_with_brute_force(puzzle: str, data: st.DataObject) -> None:
    tokens = data.draw(st.lists(_token_strategy(puzzle), max_size=3))
    state = get_puzzle(puzzle).solved_state().apply(parse_moves(" ".join(tokens), puzzle))
    assert moves_from_solved(state).count == brute_force_count(state), tokens
