"""Piece constraints for colours: the piece model, piece matching and legal corrections."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from judgecam.puzzle.moves import all_single_moves
from judgecam.puzzle.registry import get_puzzle
from judgecam.vision.color_legal import legal_labelling
from judgecam.vision.color_pieces import (
    TIE_TOLERANCE,
    arrangement_piece_costs,
    assign_pieces,
    best_arrangement,
    orientation_costs,
    piece_model,
)


@pytest.mark.parametrize(
    ("puzzle", "rotations", "arrangements", "kinds"),
    [
        ("222", 24, 30, {"corner": (8, 3)}),
        ("333", 24, 30, {"corner": (8, 3), "edge": (12, 2)}),
        ("pyram", 12, 2, {"center": (4, 3), "edge": (6, 2), "tip": (4, 3)}),
    ],
)
def test_piece_model_counts(
    puzzle: str, rotations: int, arrangements: int, kinds: dict[str, tuple[int, int]]
) -> None:
    model = piece_model(puzzle)
    # Rotation groups: 24 for a cube, 12 for a tetrahedron; arrangements of n colours on the
    # faces up to rotation: 6!/24 = 30 and 4!/12 = 2 (the two mirror images).
    assert len(model.rotations) == rotations
    assert len(model.arrangements) == arrangements
    assert {kind.kind: kind.slots.shape for kind in model.kinds} == kinds
    assert model.is_rotation(np.arange(len(model.faces)))


def test_a_mirror_is_not_a_rotation() -> None:
    model = piece_model("333")
    faces = model.faces
    swap_left_right = np.array([faces.index({"R": "L", "L": "R"}.get(f, f)) for f in faces])
    assert not model.is_rotation(swap_left_right)
    swap_and_flip = np.array(
        [faces.index({"R": "L", "L": "R", "U": "D", "D": "U"}.get(f, f)) for f in faces]
    )
    assert model.is_rotation(swap_and_flip)  # z2


@pytest.mark.parametrize("puzzle", ["222", "333", "pyram"])
def test_moves_keep_every_piece_a_cyclic_turn_of_a_solved_piece(puzzle: str) -> None:
    """The cyclic order from facelet normals is what turning preserves: after any moves every
    slot shows some solved piece's faces turned, never mirrored."""
    model = piece_model(puzzle)
    spec = get_puzzle(puzzle)
    moves = all_single_moves(puzzle)
    rng = np.random.default_rng(0)
    face_index = {name: i for i, name in enumerate(model.faces)}
    solved = spec.solved_state({face: face for face in model.faces})
    state = solved.apply([moves[int(i)] for i in rng.integers(len(moves), size=40)])
    faces = np.array([face_index[c] for c in state.colors])
    for kind in model.kinds:
        turns = {
            tuple(np.roll(identity, -shift)) for identity in kind.identities for shift in range(3)
        }
        for slot in kind.slots:
            assert tuple(faces[slot]) in turns


def _costs_for(labels: np.ndarray, clusters: int, noise: float = 0.0) -> np.ndarray:
    costs = np.full((len(labels), clusters), 25.0)
    costs[np.arange(len(labels)), labels] = noise
    return costs


def test_pieces_recover_a_scramble_from_clean_costs() -> None:
    model = piece_model("333")
    state = get_puzzle("333").solved_state({f: f for f in model.faces}).apply("R U F' L2 D B'")
    labels = np.array([model.faces.index(c) for c in state.colors])
    costs = _costs_for(labels, 6)
    arrangement = best_arrangement(model, costs, model.arrangements)
    result = assign_pieces(model, costs, arrangement)
    covered = result.cluster >= 0
    np.testing.assert_array_equal(result.cluster[covered], labels[covered])
    # Clean costs: every facelet's colour is worth at least one whole wrong facelet (25).
    assert np.nanmin(result.margin) >= 25.0


def test_piece_constraints_overrule_a_facelet_that_looks_like_a_missing_colour() -> None:
    """Facelet 0 alone looks more like cluster 5 than its own; its corner cannot show that."""
    model = piece_model("333")
    state = get_puzzle("333").solved_state({f: f for f in model.faces})
    labels = np.array([model.faces.index(c) for c in state.colors])
    costs = _costs_for(labels, 6)
    costs[0] = 25.0
    costs[0, 5] = 20.0  # nearer to B than to its own U, by a little
    costs[0, labels[0]] = 21.0
    result = assign_pieces(model, costs, np.arange(6))
    assert result.cluster[0] == labels[0]
    assert result.margin[0] > 40.0  # the corner would have to become another piece


def test_illegal_best_labelling_is_corrected_with_the_cheapest_swap() -> None:
    model = piece_model("333")
    spec = get_puzzle("333")
    state = spec.solved_state({f: f for f in model.faces}).apply("R U R' U'")
    labels = np.array([model.faces.index(c) for c in state.colors])
    # Make the data prefer a single swap of two edges' stickers (an impossible cube), slightly.
    edge = next(kind for kind in model.kinds if kind.kind == "edge")
    first = edge.slots[0]
    second = next(s for s in edge.slots if not set(labels[s]) & set(labels[first]))
    costs = _costs_for(labels, 6, noise=0.0)
    swapped = labels.copy()
    swapped[first], swapped[second] = labels[second], labels[first]
    costs[first, swapped[first]] = -1.0
    costs[second, swapped[second]] = -1.0
    from judgecam.puzzle.reachability import check_reachable
    from judgecam.puzzle.state import State

    def is_legal(clusters: np.ndarray) -> bool:
        return not check_reachable(State("333", tuple(f"c{k}" for k in clusters)))

    assert not is_legal(swapped)
    result = legal_labelling(model, costs, np.arange(6), is_legal)
    assert result.legal
    np.testing.assert_array_equal(result.cluster, labels)
    assert result.cost_increase == pytest.approx(4.0)  # four facelets back from -1 to 0
    assert set(result.changed.tolist()) == set(first.tolist()) | set(second.tolist())


def test_arrangements_the_seen_pieces_leave_tied_are_decided_by_the_preference() -> None:
    """A Pyraminx seen on its F face only: which way round the other colours go is not in
    view, so both arrangement classes fit the pieces equally and `prefer` decides."""
    model = piece_model("pyram")
    state = get_puzzle("pyram").solved_state({f: f for f in model.faces})
    labels = np.array([model.faces.index(c) for c in state.colors])
    costs = _costs_for(labels, 4)
    unseen = np.array([facelet.face != "F" for facelet in get_puzzle("pyram").facelets])
    costs[unseen] = 0.0  # an unseen facelet costs nothing in any colour
    first, second = model.arrangements
    seen_all = _costs_for(labels, 4)
    for wanted in (first, second):

        def prefer(arrangements: np.ndarray, wanted: np.ndarray = wanted) -> np.ndarray:
            return np.any(arrangements != wanted, axis=1).astype(float)

        chosen = best_arrangement(model, costs, model.arrangements, prefer)
        np.testing.assert_array_equal(chosen, wanted)
        # With the whole puzzle in view the pieces decide, whatever the preference.
        chosen = best_arrangement(model, seen_all, model.arrangements, prefer)
        np.testing.assert_array_equal(chosen, first)


def _random_costs(rng: np.random.Generator, count: int, clusters: int) -> np.ndarray:
    """Facelet costs like the classifier's: some unseen rows (zero), some absent columns."""
    costs = rng.random((count, clusters)) * rng.choice([1.0, 1e-3, 1e6], size=(count, clusters))
    costs[rng.random(count) < 0.4] = 0.0
    return costs


@pytest.mark.parametrize("puzzle", ["222", "333", "pyram"])
def test_arrangement_piece_costs_are_the_orientation_costs(puzzle: str) -> None:
    # The looked-up costs must be bit for bit the ones summed per arrangement.
    model = piece_model(puzzle)
    rng = np.random.default_rng(5)
    faces = len(model.faces)
    permutations = np.array(list(itertools.permutations(range(faces))), dtype=np.intp)
    for size in (1, 6, len(permutations)):
        arrangements = permutations[rng.choice(len(permutations), size, replace=False)]
        costs = _random_costs(rng, len(model.face_of_facelet), faces)
        face_costs = costs[:, arrangements].transpose(1, 0, 2)
        for kind in model.kinds:
            expected = orientation_costs(kind, face_costs).min(axis=-1)
            assert np.array_equal(arrangement_piece_costs(kind, costs, arrangements), expected)


@pytest.mark.parametrize("puzzle", ["222", "333", "pyram"])
def test_best_arrangement_is_the_exhaustive_choice(puzzle: str) -> None:
    # The branch and bound must choose what solving every arrangement chooses, ties included.
    model = piece_model(puzzle)
    rng = np.random.default_rng(11)
    for _ in range(10):
        costs = _random_costs(rng, len(model.face_of_facelet), len(model.faces))
        totals = np.zeros(len(model.arrangements))
        for kind in model.kinds:
            matrices = orientation_costs(kind, costs[:, model.arrangements].transpose(1, 0, 2))
            for index, matrix in enumerate(matrices.min(axis=-1)):
                rows, cols = linear_sum_assignment(matrix)
                totals[index] += float(matrix[rows, cols].sum())
        lowest = float(totals.min())
        tied = np.nonzero(totals <= lowest + TIE_TOLERANCE * max(1.0, abs(lowest)))[0]
        scores = rng.random(len(model.arrangements))
        expected = model.arrangements[tied[int(np.argmin(scores[tied]))]]

        def prefer(rows: np.ndarray, scores: np.ndarray = scores) -> np.ndarray:
            return np.array([scores[_row_index(model.arrangements, row)] for row in rows])

        chosen = best_arrangement(model, costs, model.arrangements, prefer)
        assert np.array_equal(chosen, expected)
        assert np.array_equal(
            best_arrangement(model, costs, model.arrangements),
            model.arrangements[int(np.argmin(totals))],
        )


def _row_index(rows: np.ndarray, row: np.ndarray) -> int:
    return int(np.flatnonzero(np.all(rows == row, axis=1))[0])
