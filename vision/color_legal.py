"""The cheapest legal colouring: piece labelling that a real, turned puzzle can show.

Matching pieces to slots (`color_pieces`) keeps every piece once, but not the invariants of
turning: corner twists sum to zero, edge flips too, and corner and edge permutations have equal
parity. Real robot data does break them (two red/orange facelets read the wrong way round make
"two pieces swapped"). When the best labelling is illegal, this module tries the smallest
corrections (swap two pieces of a kind, or turn one piece in its slot), cheapest first, and
keeps the first legal one. Legality itself is the domain's (`judgecam.puzzle.reachability`).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from judgecam.vision.color_pieces import PieceModel, orientation_costs

logger = logging.getLogger(__name__)

#: Single corrections combined in pairs when no single one is legal (the cheapest this many).
PAIRED_CORRECTIONS = 20

#: A correction: (kind index, slot, piece, turn) entries that replace the best choice.
_Change = tuple[tuple[int, int, int, int], ...]


@dataclass(frozen=True)
class LegalLabelling:
    """Cluster per facelet (every facelet, seen or not) of the cheapest legal labelling found.

    `cost_increase` is its cost over the best (possibly illegal) labelling: 0 if that was legal.
    `runner_up_increase` is the increase of the next legal correction (None if none was
    found); `changed` lists the facelets the correction relabelled; `legal` is False if no
    correction was legal (the best labelling is returned).
    """

    cluster: NDArray[np.intp]
    cost_increase: float
    runner_up_increase: float | None
    changed: NDArray[np.intp]
    legal: bool


@dataclass(frozen=True)
class _KindChoice:
    costs: NDArray[np.float64]  # [s, q, r]
    pieces: NDArray[np.intp]  # piece per slot
    turns: NDArray[np.intp]  # turn per slot


def _labelling(
    model: PieceModel, arrangement: NDArray[np.intp], choices: list[_KindChoice], change: _Change
) -> NDArray[np.intp]:
    cluster = np.full(len(model.face_of_facelet), -1, dtype=np.intp)
    for facelet, face in model.centres.items():
        cluster[facelet] = arrangement[face]
    for kind_index, (kind, choice) in enumerate(zip(model.kinds, choices, strict=True)):
        pieces, turns = choice.pieces.copy(), choice.turns.copy()
        for changed_kind, slot, piece, turn in change:
            if changed_kind == kind_index:
                pieces[slot], turns[slot] = piece, turn
        size = kind.slots.shape[1]
        positions = np.arange(size)
        shown = kind.identities[pieces[:, None], (positions[None, :] + turns[:, None]) % size]
        cluster[kind.slots] = arrangement[shown]
    return cluster


def _corrections(choices: list[_KindChoice]) -> list[tuple[float, _Change]]:
    """Every single swap of two pieces and every turn of one piece, with its cost increase."""
    found: list[tuple[float, _Change]] = []
    for kind_index, choice in enumerate(choices):
        costs, pieces, turns = choice.costs, choice.pieces, choice.turns
        current = costs[np.arange(len(pieces)), pieces, turns]
        for a, b in itertools.combinations(range(len(pieces)), 2):
            turn_a = int(costs[a, pieces[b]].argmin())
            turn_b = int(costs[b, pieces[a]].argmin())
            delta = (
                costs[a, pieces[b], turn_a] + costs[b, pieces[a], turn_b] - current[a] - current[b]
            )
            change = (
                (kind_index, a, int(pieces[b]), turn_a),
                (kind_index, b, int(pieces[a]), turn_b),
            )
            found.append((float(delta), change))
        for slot in range(len(pieces)):
            for turn in range(costs.shape[2]):
                if turn != turns[slot]:
                    delta = costs[slot, pieces[slot], turn] - current[slot]
                    found.append((float(delta), ((kind_index, slot, int(pieces[slot]), turn),)))
    found.sort(key=lambda item: item[0])
    return found


def legal_labelling(
    model: PieceModel,
    facelet_costs: NDArray[np.float64],
    arrangement: NDArray[np.intp],
    is_legal: Callable[[NDArray[np.intp]], bool],
) -> LegalLabelling:
    """The best piece labelling, corrected to the cheapest legal one if it is not legal.

    `is_legal` gets a cluster index per facelet and says whether a turned puzzle can show it.
    """
    face_costs = facelet_costs[:, arrangement]
    choices = []
    for kind in model.kinds:
        costs = orientation_costs(kind, face_costs)
        rows, pieces = linear_sum_assignment(costs.min(axis=-1))
        pieces = pieces.astype(np.intp)
        choices.append(_KindChoice(costs, pieces, costs[rows, pieces].argmin(axis=-1)))
    best = _labelling(model, arrangement, choices, ())
    if is_legal(best):
        return LegalLabelling(best, 0.0, None, np.empty(0, dtype=np.intp), True)

    singles = _corrections(choices)
    legal: list[tuple[float, NDArray[np.intp]]] = []
    for delta, change in singles:
        labelling = _labelling(model, arrangement, choices, change)
        if is_legal(labelling):
            legal.append((delta, labelling))
            if len(legal) == 2:
                break
    if not legal:
        top = singles[:PAIRED_CORRECTIONS]
        pairs = sorted(
            (
                (first[0] + second[0], first[1] + second[1])
                for first, second in itertools.combinations(top, 2)
                if not {c[:2] for c in first[1]} & {c[:2] for c in second[1]}
            ),
            key=lambda item: item[0],
        )
        for delta, change in pairs:
            labelling = _labelling(model, arrangement, choices, change)
            if is_legal(labelling):
                legal.append((delta, labelling))
                if len(legal) == 2:
                    break
    if not legal:
        logger.debug("no legal correction of the best labelling found")
        return LegalLabelling(best, 0.0, None, np.empty(0, dtype=np.intp), False)
    delta, labelling = legal[0]
    runner_up = legal[1][0] if len(legal) > 1 else None
    changed = np.flatnonzero(labelling != best).astype(np.intp)
    logger.debug("legal correction: +%.2f, facelets %s", delta, changed)
    return LegalLabelling(labelling, delta, runner_up, changed, True)
