"""Geometry of the built-in puzzles: counts, frame, facelet order, pieces and axes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgecam.puzzle import UnknownPuzzleError, get_puzzle
from judgecam.puzzle.cubes import build_cube
from judgecam.puzzle.geometry import cross, dot, norm, sub

PUZZLES = ("222", "333", "pyram")


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("333", "333"),
        ("3x3x3", "333"),
        ("3X3X3", "333"),
        ("222", "222"),
        ("2x2x2", "222"),
        ("pyram", "pyram"),
        ("Pyraminx", "pyram"),
    ],
)
def test_names_and_aliases(name: str, canonical: str) -> None:
    assert get_puzzle(name).name == canonical
    assert get_puzzle(name) is get_puzzle(canonical)


def test_unknown_puzzle_lists_known_names() -> None:
    with pytest.raises(UnknownPuzzleError, match=r"444.*222.*333.*pyram"):
        get_puzzle("444")
    assert issubclass(UnknownPuzzleError, ValueError)


@pytest.mark.parametrize(
    ("name", "facelets", "pieces", "edge", "kinds"),
    [
        ("222", 24, 8, 50.0, {"corner": 8}),
        ("333", 54, 26, 57.0, {"corner": 8, "edge": 12, "center": 6}),
        ("pyram", 36, 14, 98.0, {"tip": 4, "center": 4, "edge": 6}),
    ],
)
def test_counts(name: str, facelets: int, pieces: int, edge: float, kinds: dict[str, int]) -> None:
    spec = get_puzzle(name)
    assert len(spec.facelets) == facelets
    assert len(spec.pieces) == pieces
    assert spec.edge_mm == edge
    counted: dict[str, int] = {}
    for piece in spec.pieces:
        counted[piece.kind] = counted.get(piece.kind, 0) + 1
    assert counted == kinds
    assert [f.index for f in spec.facelets] == list(range(facelets))
    assert sorted(i for p in spec.pieces for i in p.facelets) == list(range(facelets))
    for piece in spec.pieces:
        assert all(spec.facelets[i].piece == piece.index for i in piece.facelets)


@pytest.mark.parametrize("name", PUZZLES)
def test_facelets_lie_on_their_face_and_corners_turn_counter_clockwise(name: str) -> None:
    spec = get_puzzle(name)
    faces = {face.name: face for face in spec.faces}
    for face in spec.faces:
        assert norm(face.normal) == pytest.approx(1.0)
    for facelet in spec.facelets:
        face = faces[facelet.face]
        assert facelet.normal == face.normal
        for point in (facelet.center, *facelet.corners):
            assert dot(sub(point, face.center), face.normal) == pytest.approx(0.0, abs=1e-6)
        a, b, c = facelet.corners[:3]
        assert dot(cross(sub(b, a), sub(c, a)), face.normal) > 0
        np.testing.assert_allclose(facelet.center, np.mean(facelet.corners, axis=0), atol=1e-6)


def test_cube_frame_and_reading_order() -> None:
    spec = get_puzzle("333")
    assert [f.name for f in spec.faces] == ["U", "R", "F", "D", "L", "B"]
    np.testing.assert_allclose(spec.face("R").normal, (1, 0, 0))
    np.testing.assert_allclose(spec.face("U").center, (0, 28.5, 0))
    # U is read with B at the top: its first facelet is at the back left, its last front right.
    np.testing.assert_allclose(spec.facelets[0].center, (-19, 28.5, -19))
    np.testing.assert_allclose(spec.facelets[8].center, (19, 28.5, 19))
    # R with U at the top, F on the left; D with F at the top.
    np.testing.assert_allclose(spec.facelets[9].center, (28.5, 19, 19))
    np.testing.assert_allclose(spec.facelets[27].center, (-19, -28.5, 19))
    # B seen from behind: its first facelet is at the top right seen from the front (x > 0).
    np.testing.assert_allclose(spec.facelets[45].center, (19, 19, -28.5))


def test_pyraminx_frame() -> None:
    spec = get_puzzle("pyram")
    assert [f.name for f in spec.faces] == ["F", "L", "R", "D"]
    np.testing.assert_allclose(spec.face("D").normal, (0, -1, 0), atol=1e-9)
    assert spec.face("F").normal[2] > 0.9
    height = 98 * math.sqrt(6) / 3
    assert spec.axis("U").direction == pytest.approx((0, 1, 0))
    # The tip facelets of U are the first of F, L and R; the first piece is the U tip.
    assert spec.pieces[0].kind == "tip"
    assert spec.pieces[0].facelets == (0, 9, 18)
    assert spec.face("D").center[1] == pytest.approx(-height / 4)


@pytest.mark.parametrize("name", PUZZLES)
def test_pieces_move_as_units(name: str) -> None:
    """All facelets of a piece lie in the same part of every axis."""
    spec = get_puzzle(name)
    for axis in spec.axes:
        for piece in spec.pieces:
            parts = {axis.part_of(spec.facelets[i].center) for i in piece.facelets}
            assert parts == {axis.part_of(piece.center)}


@pytest.mark.parametrize(
    ("name", "axis", "parts", "labels"),
    [
        ("333", "x", ("L", "M", "R"), ["x:L|M", "x:M|R"]),
        ("333", "y", ("D", "E", "U"), ["y:D|E", "y:E|U"]),
        ("222", "z", ("B", "F"), ["z:B|F"]),
        ("pyram", "U", ("base", "layer", "tip"), ["U:base|layer", "U:layer|tip"]),
    ],
)
def test_axes_and_pairs(name: str, axis: str, parts: tuple[str, ...], labels: list[str]) -> None:
    spec = get_puzzle(name)
    found = spec.axis(axis)
    assert found.part_names == parts
    assert [p.label for p in found.pairs()] == labels
    assert len(found.cuts) == len(parts) - 1
    assert list(found.cuts) == sorted(found.cuts)
    step, limit = (120.0, 60.0) if name == "pyram" else (90.0, 45.0)
    assert (found.step_deg, found.limit_deg) == (step, limit)
    assert len(spec.pairs()) == sum(len(a.part_names) - 1 for a in spec.axes)


def test_part_of() -> None:
    x = get_puzzle("333").axis("x")
    assert [x.part_of((d, 0.0, 0.0)) for d in (-20.0, 0.0, 20.0)] == [0, 1, 2]


def test_solved_state_default_scheme() -> None:
    state = get_puzzle("333").solved_state()
    assert state.colors[0] == "white" and state.colors[18] == "green"
    assert get_puzzle("pyram").solved_state().face_colors()["D"] == ("yellow",) * 9
    custom = get_puzzle("222").solved_state({f: f for f in "URFDLB"})
    assert custom.colors[:4] == ("U",) * 4
    with pytest.raises(ValueError, match="no colour"):
        get_puzzle("222").solved_state({"U": "white"})


@pytest.mark.parametrize(
    ("layers", "names", "kinds"),
    [
        (4, ("L", "2L", "2R", "R"), {"corner": 8, "edge": 24, "center": 24}),
        (5, ("L", "2L", "M", "2R", "R"), {"corner": 8, "edge": 36, "center": 54}),
    ],
)
def test_bigger_cubes_are_data(layers: int, names: tuple[str, ...], kinds: dict[str, int]) -> None:
    """4x4x4 and up come from the same builder (not registered until their rules are)."""
    spec = build_cube(f"{layers}{layers}{layers}", "cube", layers, 62.0)
    assert spec.axis("x").part_names == names
    assert len(spec.facelets) == 6 * layers * layers
    counted: dict[str, int] = {}
    for piece in spec.pieces:
        counted[piece.kind] = counted.get(piece.kind, 0) + 1
    assert counted == kinds
