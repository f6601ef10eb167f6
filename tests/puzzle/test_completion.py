"""Filling in unseen facelets (`judgecam.puzzle.completion`): every filling is a puzzle that
turning can reach, and the real one is among them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgecam.puzzle import get_puzzle
from judgecam.puzzle.completion import canonical, complete, is_unseen
from judgecam.puzzle.moves import all_single_moves
from judgecam.puzzle.reachability import check_reachable
from judgecam.puzzle.state import State

#: Facelets of the faces a camera may see, per puzzle (the rest is hidden).
SEEN_FACES = {
    "pyram": {"F": ["F"], "F and L": ["F", "L"]},
    "222": {"U, F and R": ["U", "F", "R"]},
}


def _hidden(puzzle: str, colors: tuple[str, ...], seen_faces: list[str]) -> list[str]:
    spec = get_puzzle(puzzle)
    return [
        color if facelet.face in seen_faces else "unknown"
        for color, facelet in zip(colors, spec.facelets, strict=True)
    ]


@pytest.mark.parametrize(
    ("puzzle", "seen"),
    [(puzzle, seen) for puzzle, faces in SEEN_FACES.items() for seen in faces],
)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_filling_is_reachable_and_the_real_one_is_found(
    puzzle: str, seen: str, data: st.DataObject
) -> None:
    """A Pyraminx's centres and tips never leave their vertex: a filling that takes one from
    another vertex shows the scheme in mirror image, which no turning reaches."""
    moves = data.draw(st.lists(st.sampled_from(all_single_moves(puzzle)), max_size=4))
    state = get_puzzle(puzzle).solved_state().apply(moves)
    labels = _hidden(puzzle, state.colors, SEEN_FACES[puzzle][seen])
    found = complete(puzzle, labels, max_colorings=400)
    assert found.colorings
    for coloring in found.colorings:
        assert check_reachable(State(puzzle, coloring)) == [], coloring
        assert all(
            is_unseen(label) or label == color
            for label, color in zip(labels, coloring, strict=True)
        )
    if not found.truncated:
        renamed = {canonical(c) for c in found.colorings}
        assert canonical(state.colors) in renamed


def _twist_a_corner(puzzle: str, colors: tuple[str, ...]) -> tuple[str, ...]:
    """The colouring with one piece turned in place (a twisted corner / flipped edge)."""
    from judgecam.puzzle.reachability import slots

    slot = next(s for s in slots(puzzle) if s.kind in ("corner", "edge"))
    turned = list(colors)
    shown = [colors[i] for i in slot.facelets]
    for facelet, color in zip(slot.facelets, shown[1:] + shown[:1], strict=True):
        turned[facelet] = color
    return tuple(turned)


@pytest.mark.parametrize("puzzle", ["222", "333", "pyram"])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_pruning_by_twists_and_flips_loses_no_filling(puzzle: str, data: st.DataObject) -> None:
    """Trying only the orientations that close the twist or flip sum finds the same fillings,
    in the same order, as trying every orientation and checking each full colouring."""
    moves = data.draw(st.lists(st.sampled_from(all_single_moves(puzzle)), max_size=6))
    colors = get_puzzle(puzzle).solved_state().apply(moves).colors
    if data.draw(st.booleans()):
        colors = _twist_a_corner(puzzle, colors)
    hidden = data.draw(st.sets(st.integers(0, len(colors) - 1), max_size=len(colors) // 3))
    labels = ["unknown" if i in hidden else c for i, c in enumerate(colors)]
    pruned = complete(puzzle, labels, max_colorings=20, max_nodes=200_000)
    full = complete(puzzle, labels, max_colorings=20, max_nodes=200_000, prune=False)
    assert not full.out_of_nodes
    assert pruned.colorings == full.colorings
    assert pruned.truncated == full.truncated
