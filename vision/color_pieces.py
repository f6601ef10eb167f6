"""Piece constraints on facelet colours: every piece of the puzzle appears exactly once.

A scrambled puzzle is still a permutation of its solved pieces: a corner shows three colours of
mutually adjacent faces in one cyclic order (never the same colour twice, never two opposite
colours), each corner exists once. Labelling facelets piece by piece is therefore another
assignment problem: slots x pieces, the cost of a piece in a slot being the best of its allowed
orientations (cyclic shifts, since a puzzle is never mirrored). Costs are squared colour
distances in noise units, so totals are log-likelihoods and their differences are margins.

Everything here is derived from the puzzle's geometry (`judgecam.puzzle`): facelet normals give
each piece's cyclic order, face normals give the rotations. Nothing is specific to one puzzle.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from judgecam.puzzle.registry import get_puzzle

logger = logging.getLogger(__name__)

#: Cost standing for "not allowed" inside an assignment (finite so the solver always succeeds).
FORBIDDEN = 1e9


@dataclass(frozen=True)
class PieceKind:
    """Slots of one kind of piece: `slots[s]` facelet indices in cyclic order (outside view),
    `identities[q]` the faces of solved piece q in the same order (pieces are their slots)."""

    kind: str
    slots: NDArray[np.intp]
    identities: NDArray[np.intp]


@dataclass(frozen=True)
class PieceModel:
    """What the colour classifier needs to know about a puzzle's pieces."""

    puzzle: str
    faces: tuple[str, ...]
    face_of_facelet: NDArray[np.intp]
    centres: dict[int, int]
    kinds: tuple[PieceKind, ...]
    rotations: NDArray[np.intp]
    arrangements: NDArray[np.intp]

    @property
    def capacities(self) -> tuple[int, ...]:
        """Facelets per face (one face's worth of each colour)."""
        counts = np.bincount(self.face_of_facelet, minlength=len(self.faces))
        return tuple(int(c) for c in counts)

    def is_rotation(self, face_permutation: NDArray[np.intp]) -> bool:
        """True if mapping face f to `face_permutation[f]` is a rotation of the puzzle."""
        return bool(np.any(np.all(self.rotations == face_permutation, axis=1)))


@cache
def piece_model(puzzle_name: str) -> PieceModel:
    """The (cached) piece model of a puzzle known to `judgecam.puzzle.get_puzzle`."""
    spec = get_puzzle(puzzle_name)
    faces = tuple(face.name for face in spec.faces)
    face_index = {name: i for i, name in enumerate(faces)}
    face_of_facelet = np.array([face_index[f.face] for f in spec.facelets], dtype=np.intp)
    centres: dict[int, int] = {}
    groups: dict[tuple[str, int], list[tuple[int, ...]]] = {}
    for piece in spec.pieces:
        if len(piece.facelets) == 1:
            if piece.kind == "center":
                centres[piece.facelets[0]] = int(face_of_facelet[piece.facelets[0]])
            continue
        ordered = _cyclic_order(piece.facelets, [spec.facelets[i].normal for i in piece.facelets])
        groups.setdefault((piece.kind, len(ordered)), []).append(ordered)
    kinds = tuple(
        PieceKind(kind, np.array(slots, dtype=np.intp), face_of_facelet[np.array(slots)])
        for (kind, _), slots in sorted(groups.items())
    )
    normals = np.array([face.normal for face in spec.faces], dtype=np.float64)
    rotations = _face_rotations(normals)
    return PieceModel(
        puzzle=spec.name,
        faces=faces,
        face_of_facelet=face_of_facelet,
        centres=centres,
        kinds=kinds,
        rotations=rotations,
        arrangements=_arrangements_up_to_rotation(rotations),
    )


def _cyclic_order(
    facelets: tuple[int, ...], normals: list[tuple[float, float, float]]
) -> tuple[int, ...]:
    """Facelets of a piece ordered so that three of them turn counter-clockwise outside."""
    if len(facelets) != 3:
        return tuple(facelets)
    det = float(np.linalg.det(np.array(normals, dtype=np.float64)))
    return tuple(facelets) if det > 0 else (facelets[0], facelets[2], facelets[1])


def _face_rotations(normals: NDArray[np.float64]) -> NDArray[np.intp]:
    """Every face permutation p (face f goes to p[f]) that a proper rotation produces."""
    found = []
    for permutation in itertools.permutations(range(len(normals))):
        target = normals[list(permutation)]
        u, _, vt = np.linalg.svd(target.T @ normals)
        rotation = u @ vt
        if np.linalg.det(rotation) > 0 and np.allclose(normals @ rotation.T, target, atol=1e-6):
            found.append(permutation)
    return np.array(found, dtype=np.intp)


def _arrangements_up_to_rotation(rotations: NDArray[np.intp]) -> NDArray[np.intp]:
    """One face -> cluster arrangement per class of arrangements equal up to a rotation."""
    count = rotations.shape[1]
    seen: set[tuple[int, ...]] = set()
    classes = []
    for arrangement in itertools.permutations(range(count)):
        values = np.array(arrangement)
        orbit = {tuple(int(v) for v in values[rotation]) for rotation in rotations}
        if not orbit & seen:
            classes.append(arrangement)
        seen |= orbit
    return np.array(classes, dtype=np.intp)


@dataclass(frozen=True)
class PieceAssignment:
    """Best labelling of the facelets by whole pieces for one face -> cluster arrangement.

    `cluster[i]` is the cluster shown by facelet i (-1 where no multi-facelet piece covers it),
    `margin[i]` how much the total cost rises if facelet i must show another cluster.
    """

    arrangement: NDArray[np.intp]
    cluster: NDArray[np.intp]
    cost: float
    margin: NDArray[np.float64]


def orientation_costs(kind: PieceKind, face_costs: NDArray[np.float64]) -> NDArray[np.float64]:
    """cost[..., s, q, r]: piece q in slot s turned by r, for (..., N, F) facelet-face costs."""
    size = kind.slots.shape[1]
    shifts = (np.arange(size)[:, None] + np.arange(size)[None, :]) % size  # [r, t]
    rotated = kind.identities[:, shifts]  # [q, r, t] face shown at position t
    slot_costs = face_costs[..., kind.slots, :]  # [..., s, t, F]
    positions = np.arange(size)
    gathered = slot_costs[..., positions, rotated]  # [..., s, q, r, t]
    return gathered.sum(axis=-1)


@cache
def _turned_codes(size: int, clusters: int) -> NDArray[np.intp]:
    """codes[r, c]: the tuple of `size` clusters with code c turned by r (position t showing
    what position (r + t) % size did), as a code: the digits of c in base `clusters`, the
    first the most significant."""
    tuples = np.array(list(itertools.product(range(clusters), repeat=size)), dtype=np.intp)
    shifts = (np.arange(size)[:, None] + np.arange(size)[None, :]) % size  # [r, t]
    return np.asarray((tuples[:, shifts] @ clusters ** np.arange(size - 1, -1, -1)).T)


def arrangement_piece_costs(
    kind: PieceKind, facelet_costs: NDArray[np.float64], arrangements: NDArray[np.intp]
) -> NDArray[np.float64]:
    """cost[p, s, q]: piece q in slot s, best turned, when arrangement p puts cluster
    `arrangements[p, f]` on face f, for (N, K) facelet-cluster costs; what
    `orientation_costs(...).min(axis=-1)` gives per arrangement.

    A piece's cost depends on the arrangement only through the clusters its faces get, so the
    cost of every tuple of clusters in every slot is summed once (the same terms added in the
    same order) and looked up, rather than summed again for every arrangement and piece.
    """
    size, clusters = kind.slots.shape[1], facelet_costs.shape[1]
    slot_costs = facelet_costs[kind.slots]  # [s, t, K]
    # sums[s, c0, c1, ...]: slot s showing cluster c_t at position t, added in position order
    # like the sum over positions in `orientation_costs`.
    sums = slot_costs[:, 0]
    for t in range(1, size):
        sums = sums[..., None] + slot_costs[:, t].reshape((-1,) + (1,) * t + (clusters,))
    per_tuple = sums.reshape(len(kind.slots), -1)[:, _turned_codes(size, clusters)].min(axis=1)
    shown = arrangements[:, kind.identities]  # [p, q, t] cluster on the piece's t-th face
    codes = shown @ clusters ** np.arange(size - 1, -1, -1)  # [p, q]
    return np.ascontiguousarray(per_tuple[:, codes].transpose(1, 0, 2))


def _solve(costs: NDArray[np.float64]) -> tuple[NDArray[np.intp], float]:
    rows, cols = linear_sum_assignment(costs)
    return cols.astype(np.intp), float(costs[rows, cols].sum())


def _optimal_cost(costs: NDArray[np.float64]) -> float:
    """The optimal assignment's total alone (what `_solve` returns second)."""
    rows, cols = linear_sum_assignment(costs)
    return float(costs[rows, cols].sum())


#: Arrangements whose best piece labellings cost within this fraction of the least are tied:
#: the seen facelets cannot tell them apart (they differ only on faces no camera saw).
TIE_TOLERANCE = 1e-9
#: Relative slack on a lower bound before it rules an arrangement out: the bound and the
#: assignment sum the same non-negative costs in different orders, which can differ in the last
#: bits (a few 1e-16 relative), so a bound only counts when it clears the tie limit by more.
BOUND_SLACK = 1e-12


def _tie_limit(lowest: float) -> float:
    """Highest total still tied with the least total `lowest` (`TIE_TOLERANCE`)."""
    return lowest + TIE_TOLERANCE * max(1.0, abs(lowest))


def _beyond(bound: float, limit: float) -> bool:
    """Whether a lower bound on a total (`BOUND_SLACK` allowed for) exceeds `limit`."""
    return bound - BOUND_SLACK * max(1.0, abs(bound)) > limit


def _assignment_bounds(matrices: NDArray[np.float64]) -> NDArray[np.float64]:
    """Lower bounds on the optimal assignment cost of each of (P, S, S) cost matrices: every
    row and every column takes one entry, so neither the row minima nor the column minima can
    sum to more than the optimum."""
    return np.maximum(matrices.min(axis=2).sum(axis=1), matrices.min(axis=1).sum(axis=1))


def best_arrangement(
    model: PieceModel,
    facelet_costs: NDArray[np.float64],
    candidates: NDArray[np.intp],
    prefer: Callable[[NDArray[np.intp]], NDArray[np.float64]] | None = None,
) -> NDArray[np.intp]:
    """The arrangement (face -> cluster) among `candidates` whose best piece labelling costs
    least, for (N, K) facelet-cluster costs. Where the pieces leave several tied (the faces
    that would tell them apart are unseen: a Pyraminx seen on two faces cannot show which way
    round its other two colours go), `prefer` breaks the tie: it scores the (T, F) tied
    arrangements at once, lower is better.

    Branch and bound: arrangements are solved in order of a lower bound on their total
    (`_assignment_bounds`), and the search stops once the bound rules out a tie with the least
    total found, so the choice is the one solving every arrangement would give.
    """
    matrices = [arrangement_piece_costs(kind, facelet_costs, candidates) for kind in model.kinds]
    # remaining[k, p]: lower bound on what kinds k, k+1, ... add to arrangement p's total.
    remaining = np.zeros((len(matrices) + 1, len(candidates)))
    for kind in reversed(range(len(matrices))):
        remaining[kind] = remaining[kind + 1] + _assignment_bounds(matrices[kind])
    totals = np.full(len(candidates), np.inf)
    lowest = np.inf
    for index in np.argsort(remaining[0], kind="stable"):
        limit = _tie_limit(lowest)
        if _beyond(float(remaining[0, index]), limit):
            break  # later bounds are no lower: no later arrangement can be tied or best
        total = 0.0
        for kind, per_piece in enumerate(matrices):
            if kind and _beyond(total + float(remaining[kind, index]), limit):
                break  # the kinds solved so far rule this arrangement out
            total += _optimal_cost(per_piece[index])
        else:
            totals[index] = total
            lowest = min(lowest, total)
    tied = np.nonzero(totals <= _tie_limit(lowest))[0]
    if prefer is None or len(tied) < 2:
        return np.asarray(candidates[int(np.argmin(totals))], dtype=np.intp)
    scores = np.asarray(prefer(candidates[tied]), dtype=np.float64)
    return np.asarray(candidates[int(tied[int(np.argmin(scores))])], dtype=np.intp)


def assign_pieces(
    model: PieceModel,
    facelet_costs: NDArray[np.float64],
    arrangement: NDArray[np.intp],
    with_margins: bool = True,
) -> PieceAssignment:
    """Label facelets by whole pieces, with a margin per facelet (NaN if not `with_margins`).

    The margin of facelet i is the optimal total with every (piece, orientation) that would
    show i's chosen colour forbidden in i's slot, minus the optimal total: the evidence, from
    the facelet and from everything the piece constraints tie it to, for its colour.
    """
    face_costs = facelet_costs[:, arrangement]
    count = facelet_costs.shape[0]
    cluster = np.full(count, -1, dtype=np.intp)
    margin = np.full(count, np.nan)
    total = 0.0
    for kind in model.kinds:
        costs = orientation_costs(kind, face_costs)  # [s, q, r]
        best_turn = costs.argmin(axis=-1)
        matrix = costs.min(axis=-1)
        chosen, kind_total = _solve(matrix)
        total += kind_total
        size = kind.slots.shape[1]
        shifts = (np.arange(size)[:, None] + np.arange(size)[None, :]) % size
        shown = kind.identities[:, shifts]  # [q, r, t] face shown at position t
        faces_shown = shown[chosen, best_turn[np.arange(len(chosen)), chosen]]  # [s, t]
        cluster[kind.slots] = arrangement[faces_shown]
        if not with_margins:
            continue
        for slot in range(len(chosen)):
            for position, facelet in enumerate(kind.slots[slot]):
                same = shown[:, :, position] == faces_shown[slot, position]  # [q, r]
                allowed = np.where(same, FORBIDDEN, costs[slot]).min(axis=-1)
                alternative = matrix.copy()
                alternative[slot] = allowed
                margin[facelet] = _solve(alternative)[1] - kind_total
    return PieceAssignment(arrangement, cluster, total, margin)
