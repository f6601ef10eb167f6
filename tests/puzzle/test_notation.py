"""Notation: parsing, printing and errors (KCA Art. 15, WCA 12a)."""

from __future__ import annotations

import pytest

from judgecam.puzzle import Move, NotationError, format_moves, get_puzzle, parse_moves
from judgecam.puzzle.moves import all_single_moves


@pytest.mark.parametrize(
    ("text", "axis", "parts", "amount"),
    [
        ("R", "x", (2,), -1),
        ("R'", "x", (2,), 1),
        ("R2", "x", (2,), 2),
        ("R2'", "x", (2,), 2),
        ("L", "x", (0,), 1),
        ("U", "y", (2,), -1),
        ("D'", "y", (0,), -1),
        ("F", "z", (2,), -1),
        ("B", "z", (0,), 1),
        ("Rw", "x", (1, 2), -1),
        ("2Rw", "x", (1, 2), -1),
        ("3Rw'", "x", (0, 1, 2), 1),
        ("2Fw2", "z", (1, 2), 2),
        ("Lw'", "x", (0, 1), -1),
        ("x", "x", (0, 1, 2), -1),
        ("y'", "y", (0, 1, 2), 1),
        ("z2", "z", (0, 1, 2), 2),
        ("[r]", "x", (0, 1, 2), -1),
        ("[l]", "x", (0, 1, 2), 1),
        ("[f']", "z", (0, 1, 2), 1),
        ("[b2]", "z", (0, 1, 2), 2),
        ("[u]'", "y", (0, 1, 2), 1),
        ("[d]", "y", (0, 1, 2), 1),
        ("M", "x", (1,), 1),
        ("E'", "y", (1,), -1),
        ("S", "z", (1,), -1),
        ("<x:M>+1", "x", (1,), 1),
    ],
)
def test_cube_moves(text: str, axis: str, parts: tuple[int, ...], amount: int) -> None:
    (move,) = parse_moves(text, "333")
    assert (move.axis, move.parts, move.amount) == (axis, parts, amount)


@pytest.mark.parametrize(
    ("text", "parts", "amount"),
    [("U", (1, 2), -1), ("U'", (1, 2), 1), ("u", (2,), -1), ("b'", (2,), 1)],
)
def test_pyraminx_moves(text: str, parts: tuple[int, ...], amount: int) -> None:
    (move,) = parse_moves(text, "pyram")
    assert (move.axis, move.parts, move.amount) == (text[0].upper(), parts, amount)


def test_scramble_as_printed() -> None:
    text = "  R U' F2\nD  B2 L'\n  Rw 3Fw2 \n"
    moves = parse_moves(text, "333")
    # 3Fw2 turns all three layers of a 3x3x3: it is the rotation z2.
    assert format_moves(moves) == "R U' F2 D B2 L' Rw z2"


@pytest.mark.parametrize("name", ["222", "333", "pyram"])
def test_every_move_round_trips_through_its_notation(name: str) -> None:
    for move in all_single_moves(name):
        (again,) = parse_moves(str(move), name)
        assert (again.axis, again.parts, again.normalized_amount) == (
            move.axis,
            move.parts,
            move.normalized_amount,
        ), str(move)


def test_printed_names() -> None:
    assert str(Move("333", "x", (2,), 1)) == "R'"
    assert str(Move("333", "x", (0, 1), -2)) == "Lw2"
    assert str(Move("333", "y", (0, 1, 2), -1)) == "y"
    assert str(Move("222", "x", (0, 1), -1)) == "x"
    assert str(Move("pyram", "L", (2,), 1)) == "l'"
    assert str(Move("pyram", "L", (0,), 1)) == "<L:base>+1"


@pytest.mark.parametrize(
    ("puzzle", "text", "token", "position"),
    [
        ("333", "R U X", "X", 4),
        ("333", "R  U2 Q'", "Q'", 6),
        ("333", "R\nF 4Rw", "4Rw", 4),
        ("333", "r", "r", 0),
        ("333", "R3", "R3", 0),
        ("222", "M", "M", 0),
        ("pyram", "U R2", "R2", 2),
        ("pyram", "U F", "F", 2),
        ("333", "<q:M>+1", "<q:M>+1", 0),
        ("333", "<x:Q>+1", "<x:Q>+1", 0),
        ("333", "<x:L+R>+1", "<x:L+R>+1", 0),
    ],
)
def test_bad_notation_names_token_and_position(
    puzzle: str, text: str, token: str, position: int
) -> None:
    with pytest.raises(NotationError) as caught:
        parse_moves(text, puzzle)
    assert caught.value.token == token
    assert caught.value.position == position
    assert repr(token) in str(caught.value)
    assert f"position {position}" in str(caught.value)


def test_parse_accepts_spec_and_alias() -> None:
    assert parse_moves("R", get_puzzle("333")) == parse_moves("R", "3x3x3")
    assert parse_moves("", "333") == []
