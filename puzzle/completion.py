"""Filling in unseen facelets: every legal colouring that agrees with what was seen.

Piece matching: a legal puzzle holds each of its pieces exactly once. For every colour scheme
the visible colours allow (every assignment of the seen colours, plus stand-in names for colours
nobody saw, to the faces; on a 3x3x3 the seen centres fix most of it, on a 2x2x2 a fully seen
corner fixes its three faces), each slot's candidates are the pieces of that scheme, in each
cyclic orientation, whose colours agree with the slot's visible facelets. A backtracking search
gives every slot a different piece, and each complete colouring is kept only if it passes the
reachability invariants (twists, flips, parities). Typical rigs hide one face: the bottom pieces
show one or two stickers each, which leaves exactly one piece per slot, so the search is tiny.
A node budget stops pathological cases (almost nothing seen); the caller then says "review".

`near_solved_completions` answers the other half exactly and fast: every colouring at most one
move from solved (in any orientation, up to renaming colours) is in a small cached table, so the
fillings that would be solved or +2 are all found by one comparison; the search above then only
has to show whether some legal filling two or more moves away exists too.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle.moves import Move, all_single_moves
from judgecam.puzzle.observation import MISSING, UNKNOWN
from judgecam.puzzle.reachability import Slot, check_against_scheme, scheme_solved, slots
from judgecam.puzzle.registry import get_puzzle

logger = logging.getLogger(__name__)

HIDDEN_PREFIX = "unseen colour "
#: Pieces that stay in their own slot: cube centres, a Pyraminx's axial centres and tips.
_FIXED_KINDS = ("center", "tip")


@dataclass(frozen=True)
class Completions:
    """The legal colourings found and why other candidates failed.

    `truncated` is True when the search stopped early: it found more than `max_colorings`
    colourings (then `colorings` holds the first max_colorings + 1), or it ran out of nodes
    (`out_of_nodes`; then there may be colourings it never reached).
    """

    colorings: tuple[tuple[str, ...], ...]
    truncated: bool
    failures: tuple[str, ...]
    out_of_nodes: bool = False


def is_unseen(label: str) -> bool:
    """True for the labels that carry no colour ("unknown", "missing")."""
    return label in (UNKNOWN, MISSING)


def complete(
    puzzle: str, labels: Sequence[str], max_colorings: int = 64, max_nodes: int = 20000
) -> Completions:
    """Legal full colourings that agree with every seen facelet of `labels`."""
    spec = get_puzzle(puzzle)
    seen = list(dict.fromkeys(label for label in labels if not is_unseen(label)))
    if len(seen) > len(spec.faces):
        return Completions(
            (), False, (f"{len(seen)} colours seen, the puzzle has {len(spec.faces)}",)
        )
    pool = seen + [f"{HIDDEN_PREFIX}{k + 1}" for k in range(len(spec.faces) - len(seen))]
    search = _Search(puzzle, labels, max_colorings, max_nodes)
    for scheme in _candidate_schemes(puzzle, labels, pool):
        search.run(scheme)
        if search.stopped:
            break
    failures = Counter(search.failures)
    return Completions(
        tuple(search.found),
        search.stopped,
        tuple(reason for reason, _ in failures.most_common()),
        search.out_of_nodes,
    )


def _candidate_schemes(
    puzzle: str, labels: Sequence[str], pool: Sequence[str]
) -> Iterator[dict[str, str]]:
    """Face -> colour assignments worth trying (fixed faces first, then the rest permuted)."""
    spec = get_puzzle(puzzle)
    face_names = [face.name for face in spec.faces]
    fixed: dict[str, str] = {}
    table = slots(puzzle)
    if spec.name != "pyram" and len(spec.axis("x").part_names) % 2 == 1:
        for slot in table:
            if slot.kind == "center" and not is_unseen(labels[slot.facelets[0]]):
                fixed[spec.facelets[slot.facelets[0]].face] = labels[slot.facelets[0]]
    elif spec.name != "pyram":
        anchor = next(
            (
                s
                for s in table
                if s.kind == "corner" and not any(is_unseen(labels[i]) for i in s.facelets)
            ),
            None,
        )
        if anchor is not None:
            fixed = {spec.facelets[i].face: labels[i] for i in anchor.facelets}
    if len(set(fixed.values())) != len(fixed):
        return
    free_faces = [f for f in face_names if f not in fixed]
    free_colors = [c for c in pool if c not in fixed.values()]
    for chosen in itertools.permutations(free_colors, len(free_faces)):
        yield {**fixed, **dict(zip(free_faces, chosen, strict=True))}


class _Search:
    """Backtracking over piece placements for one scheme at a time."""

    def __init__(self, puzzle: str, labels: Sequence[str], max_colorings: int, max_nodes: int):
        self.puzzle = puzzle
        self.labels = list(labels)
        self.max_colorings = max_colorings
        self.max_nodes = max_nodes
        self.nodes = 0
        self.found: list[tuple[str, ...]] = []
        self.found_set: set[tuple[str, ...]] = set()
        self.failures: list[str] = []
        self.stopped = False
        self.out_of_nodes = False

    def run(self, scheme: dict[str, str]) -> None:
        solved = scheme_solved(self.puzzle, scheme)
        table = slots(self.puzzle)
        options: list[tuple[Slot, list[tuple[int, tuple[str, ...]]]]] = []
        for slot in table:
            shown = [self.labels[i] for i in slot.facelets]
            choices = []
            for home in table:
                if home.kind != slot.kind or len(home.facelets) != len(slot.facelets):
                    continue
                if slot.kind in _FIXED_KINDS and home is not slot:
                    # Cube centres never leave their face; a Pyraminx's axial centres and tips
                    # only turn at their own vertex (taking one from another vertex would
                    # fill in a mirror image of the scheme).
                    continue
                wanted = tuple(solved[i] for i in home.facelets)
                for k in range(len(wanted)):
                    # shown[k] holds wanted[0]: rotate the piece's colours onto the slot.
                    placed = wanted[-k:] + wanted[:-k] if k else wanted
                    if all(is_unseen(s) or s == p for s, p in zip(shown, placed, strict=True)):
                        choices.append((home.piece, placed))
            if not choices:
                return
            options.append((slot, choices))
        options.sort(key=lambda item: len(item[1]))
        colors = list(self.labels)
        self._place(options, 0, set(), colors, scheme)

    def _place(
        self,
        options: list[tuple[Slot, list[tuple[int, tuple[str, ...]]]]],
        depth: int,
        used: set[int],
        colors: list[str],
        scheme: dict[str, str],
    ) -> None:
        if self.stopped:
            return
        self.nodes += 1
        if self.nodes > self.max_nodes:
            self.stopped = self.out_of_nodes = True
            return
        if depth == len(options):
            coloring = tuple(colors)
            reasons = check_against_scheme(self.puzzle, coloring, scheme)
            if reasons:
                self.failures.extend(reasons)
            elif coloring not in self.found_set:
                self.found_set.add(coloring)
                self.found.append(coloring)
                if len(self.found) > self.max_colorings:
                    self.stopped = True
            return
        slot, choices = options[depth]
        for piece, placed in choices:
            if piece in used:
                continue
            used.add(piece)
            for facelet, color in zip(slot.facelets, placed, strict=True):
                colors[facelet] = color
            self._place(options, depth + 1, used, colors, scheme)
            used.discard(piece)
            if self.stopped:
                return


def canonical(colors: Sequence[str]) -> tuple[int, ...]:
    """Colours renamed 0, 1, ... by first appearance: equal for colourings equal up to names."""
    names: dict[str, int] = {}
    return tuple(names.setdefault(c, len(names)) for c in colors)


@cache
def _near_solved_table(puzzle: str) -> NDArray[np.intp]:
    """Every colouring 0 or 1 move from solved, in every orientation, as canonical codes."""
    spec = get_puzzle(puzzle)
    solved = spec.solved_state({face.name: face.name for face in spec.faces})
    rotations = [m for m in all_single_moves(puzzle) if m.is_rotation]
    oriented = {solved.colors: solved}
    frontier = [solved]
    while frontier:
        following = []
        for state in frontier:
            for move in rotations:
                turned = state.apply([move])
                if turned.colors not in oriented:
                    oriented[turned.colors] = turned
                    following.append(turned)
        frontier = following
    turns: list[Move] = [m for m in all_single_moves(puzzle) if not m.is_rotation]
    found = {canonical(state.colors) for state in oriented.values()}
    for state in oriented.values():
        found.update(canonical(state.apply([move]).colors) for move in turns)
    return np.array(sorted(found), dtype=np.intp)


def near_solved_completions(puzzle: str, labels: Sequence[str]) -> list[tuple[str, ...]]:
    """Every colouring at most one move from solved that agrees with the seen facelets.

    Exhaustive and fast (one vectorised comparison against a cached table), so the verdict
    knows for sure whether "solved" or "+2" is possible whatever the unseen facelets are.
    """
    table = _near_solved_table(get_puzzle(puzzle).name)
    known = [i for i, label in enumerate(labels) if not is_unseen(label)]
    known_labels = [labels[i] for i in known]
    first = {label: n for n, label in reversed(list(enumerate(known_labels)))}
    representative = np.array([first[label] for label in known_labels], dtype=np.intp)
    codes = table[:, known]
    same_where_labels_same = np.all(codes == codes[:, representative], axis=1)
    ordered = np.sort(codes, axis=1)
    distinct = 1 + np.count_nonzero(np.diff(ordered, axis=1), axis=1) if known else 0
    matches = np.flatnonzero(same_where_labels_same & (distinct == len(set(known_labels))))
    results = []
    for row in matches:
        name_of = {int(table[row, i]): labels[i] for i in known}
        results.append(
            tuple(name_of.get(int(code), f"{HIDDEN_PREFIX}{int(code) + 1}") for code in table[row])
        )
    return results
