"""States and moves against real data (rubiks-color-resolver's known cube states)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecam.puzzle import State, check_reachable, get_puzzle, moves_from_solved, parse_moves


def _known_states(shared_data: Path) -> dict[str, str]:
    states: dict[str, str] = {}
    for name in ("color-samples/expected.json", "face-photos/derived-labels.json"):
        states.update(json.loads((shared_data / name).read_text(encoding="utf-8")))
    return states


def test_known_pattern_from_its_algorithm(shared_data: Path) -> None:
    """Tetris, L R F B U' D' L' R', gives exactly the Kociemba string the robot recorded."""
    expected = _known_states(shared_data)["3x3x3-tetris"]
    solved = get_puzzle("333").solved_state({face: face for face in "URFDLB"})
    assert "".join(solved.apply("L R F B U' D' L' R'").colors) == expected
    # Turning every face the other way gives another pattern: the comparison can fail.
    assert "".join(solved.apply("L' R' F' B' U D L R").colors) != expected


def test_real_cube_states_are_legal(shared_data: Path) -> None:
    """Every real scrambled cube the robot read is a reachable state (facelet order, invariants)."""
    states = _known_states(shared_data)
    assert len(states) >= 15
    for name, letters in states.items():
        puzzle = "222" if name.startswith("2x2x2") else "333"
        state = State(puzzle, tuple(letters))
        assert check_reachable(state) == [], name
        expected = 0 if "solved" in name else 2
        assert moves_from_solved(state).count == expected, name
        # One corner twisted in place makes it illegal.
        twisted = list(letters)
        twisted[8], twisted[9], twisted[20] = letters[9], letters[20], letters[8]
        if puzzle == "222":
            twisted = list(letters)
            twisted[3], twisted[4], twisted[9] = letters[4], letters[9], letters[3]
        assert check_reachable(State(puzzle, tuple(twisted))), name


def test_net_and_apply() -> None:
    state = get_puzzle("333").solved_state().apply("R")
    assert state.net().splitlines()[0] == "       W W G"
    assert get_puzzle("pyram").solved_state().net().startswith("F:     G")
    assert str(get_puzzle("222").solved_state()).splitlines()[2] == "O O G G R R B B"
    with pytest.raises(ValueError, match="has 54 facelets"):
        State("333", ("white",) * 53)
    with pytest.raises(ValueError, match="cannot act"):
        state.apply(parse_moves("R", "222"))
    assert State("3x3x3", state.colors).puzzle == "333"
