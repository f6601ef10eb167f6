"""Reachability: legal states pass; twisted, flipped, swapped, mis-stickered states are named."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgecam.puzzle import State, get_puzzle
from judgecam.puzzle.moves import all_single_moves
from judgecam.puzzle.reachability import Slot, check_reachable, slots

PUZZLES = ("222", "333", "pyram")


def _slot(puzzle: str, name: str, kind: str | None = None) -> Slot:
    return next(s for s in slots(puzzle) if s.name == name and (kind is None or s.kind == kind))


def _twist(state: State, name: str, kind: str | None = None) -> State:
    """Turn the piece in one slot in place (a corner twist or an edge flip)."""
    colors = list(state.colors)
    facelets = _slot(state.puzzle, name, kind).facelets
    turned = [colors[i] for i in facelets[1:] + facelets[:1]]
    for i, color in zip(facelets, turned, strict=True):
        colors[i] = color
    return State(state.puzzle, tuple(colors))


def _swap(state: State, first: str, second: str) -> State:
    """Exchange the pieces of two slots (same kind), keeping their reference facelets."""
    colors = list(state.colors)
    a, b = _slot(state.puzzle, first).facelets, _slot(state.puzzle, second).facelets
    for i, j in zip(a, b, strict=True):
        colors[i], colors[j] = colors[j], colors[i]
    return State(state.puzzle, tuple(colors))


@pytest.mark.parametrize("puzzle", PUZZLES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_scrambled_states_are_reachable(puzzle: str, data: st.DataObject) -> None:
    moves = data.draw(st.lists(st.sampled_from(all_single_moves(puzzle)), max_size=25))
    scheme = {face.name: f"c{i}" for i, face in enumerate(get_puzzle(puzzle).faces)}
    assert check_reachable(get_puzzle(puzzle).solved_state(scheme).apply(moves)) == []


@pytest.mark.parametrize(("puzzle", "corner"), [("333", "UFR"), ("222", "UFR"), ("222", "DBL")])
def test_twisted_corner_is_named(puzzle: str, corner: str) -> None:
    reasons = check_reachable(_twist(get_puzzle(puzzle).solved_state(), corner))
    assert len(reasons) == 1
    assert reasons[0].startswith(f"not solved: a twisted corner at {corner}")


def test_twisted_corner_after_moves_is_still_found() -> None:
    state = _twist(get_puzzle("333").solved_state(), "DBL").apply("R U F' x")
    assert check_reachable(state)[0].startswith("not solved: a twisted corner")


def test_flipped_edge_and_swaps_on_333() -> None:
    solved = get_puzzle("333").solved_state()
    assert check_reachable(_twist(solved, "UF"))[0].startswith("not solved: a flipped edge at UF")
    swapped = check_reachable(_swap(solved, "UF", "UR"))
    assert swapped == [
        "not solved: two pieces swapped (corner and edge permutations differ in parity)"
    ]
    # Two edge swaps together are legal (an even permutation).
    assert check_reachable(_swap(_swap(solved, "UF", "UR"), "DF", "DR")) == []


def test_pyraminx_flipped_and_swapped_edges() -> None:
    solved = get_puzzle("pyram").solved_state()
    flipped = check_reachable(_twist(solved, "UL", "edge"))
    assert flipped[0].startswith("not solved: a flipped edge at UL")
    assert check_reachable(_swap(solved, "UL", "UR"))[0].startswith("not solved: two edges swapped")
    # Tips and axial centres turn freely: a twisted tip is a legal (u-turned) state.
    assert check_reachable(_twist(solved, "U", "tip")) == []


@pytest.mark.parametrize("kind", ["tip", "center"])
def test_pyraminx_tips_and_centres_never_leave_their_vertex(kind: str) -> None:
    """Two tips (or axial centres) exchanged keep every colour count, cyclic order and edge
    invariant, but no turn moves a tip or an axial centre to another vertex."""
    colors = list(get_puzzle("pyram").solved_state().colors)
    first, second = _slot("pyram", "U", kind).facelets, _slot("pyram", "L", kind).facelets
    for i, j in zip(first, second, strict=True):
        colors[i], colors[j] = colors[j], colors[i]
    reasons = check_reachable(State("pyram", tuple(colors)))
    assert reasons
    if kind == "tip":  # the centres define the scheme, so it is the tips that moved
        assert reasons[0].startswith("the tip at U shows") and "the tip at L" in reasons[0]


def test_wrong_sticker_counts_and_centres() -> None:
    colors = list(get_puzzle("333").solved_state().colors)
    colors[0] = "green"
    assert check_reachable(State("333", tuple(colors)))[0].startswith("wrong sticker counts")
    colors = list(get_puzzle("333").solved_state().colors)
    colors[4], colors[13] = colors[13], colors[4]  # two centre caps exchanged
    reasons = check_reachable(State("333", tuple(colors)))
    assert reasons and all("which no" in r or "mirror" in r for r in reasons)


def test_mirror_image_corner() -> None:
    colors = list(get_puzzle("333").solved_state().colors)
    ufr = _slot("333", "UFR").facelets
    colors[ufr[1]], colors[ufr[2]] = colors[ufr[2]], colors[ufr[1]]
    reasons = check_reachable(State("333", tuple(colors)))
    assert any("mirror-image" in r and "UFR" in r for r in reasons)


def test_slot_names() -> None:
    names = {s.name for s in slots("333")}
    assert {"UFR", "DBL", "UF", "FR", "U", "D"} <= names
    assert len(names) == 26
    assert {s.name for s in slots("pyram") if s.kind == "edge"} == {
        "UL",
        "UR",
        "UB",
        "LR",
        "LB",
        "RB",
    }
