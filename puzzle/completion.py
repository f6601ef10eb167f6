"""Filling in unseen facelets: every legal colouring that agrees with what was seen.

Piece matching: a legal puzzle holds each of its pieces exactly once. For every colour scheme
the visible colours allow (every assignment of the seen colours, plus stand-in names for colours
nobody saw, to the faces; on a 3x3x3 the seen centres fix most of it, on a 2x2x2 a fully seen
corner fixes its three faces), each slot's candidates are the pieces of that scheme, in each
cyclic orientation, whose colours agree with the slot's visible facelets. A backtracking search
gives every slot a different piece, and each complete colouring is kept only if it passes the
reachability invariants (twists, flips, parities); the last piece of a kind is only tried in the
orientations that keep its kind's twists or flips adding up right. Typical rigs hide one face:
the bottom pieces show one or two stickers each, which leaves exactly one piece per slot, so the
search is tiny.
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
from functools import cache, lru_cache

import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle.moves import Move, all_single_moves
from judgecam.puzzle.observation import MISSING, UNKNOWN
from judgecam.puzzle.reachability import (
    FIXED_KINDS,
    Slot,
    check_against_scheme,
    orientation_moduli,
    scheme_solved,
    slots,
)
from judgecam.puzzle.registry import get_puzzle

logger = logging.getLogger(__name__)

HIDDEN_PREFIX = "unseen colour "


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
    puzzle: str,
    labels: Sequence[str],
    max_colorings: int = 64,
    max_nodes: int = 20000,
    prune: bool = True,
) -> Completions:
    """Legal full colourings that agree with every seen facelet of `labels`.

    `prune=False` also places the last piece of a kind in orientations no turn reaches, so
    that `failures` names every twist or flip that rules colourings out (slower: for messages).
    """
    return _complete(puzzle, tuple(labels), max_colorings, max_nodes, prune)


#: Searches remembered by `_complete`: stage 4 asks the same question again and again (every
#: candidate labelling that differs only where nothing was seen), and stage 5 repeats some too.
COMPLETE_CACHE_SIZE = 4096


@lru_cache(maxsize=COMPLETE_CACHE_SIZE)
def _complete(
    puzzle: str, labels: tuple[str, ...], max_colorings: int, max_nodes: int, prune: bool
) -> Completions:
    """`complete`, remembered: the search depends on its arguments alone and its result is
    immutable, so a repeated question gets the very answer the search gave the first time."""
    spec = get_puzzle(puzzle)
    seen = list(dict.fromkeys(label for label in labels if not is_unseen(label)))
    if len(seen) > len(spec.faces):
        return Completions(
            (), False, (f"{len(seen)} colours seen, the puzzle has {len(spec.faces)}",)
        )
    pool = seen + [f"{HIDDEN_PREFIX}{k + 1}" for k in range(len(spec.faces) - len(seen))]
    search = _Search(puzzle, labels, max_colorings, max_nodes, prune)
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


#: A piece a slot can hold: (home piece, its colours in the slot's order, orientation).
_Choice = tuple[int, tuple[str, ...], int]


def _group(slot: Slot) -> int | tuple[str, int]:
    """Which pieces may sit in a slot: any of its kind and size, or (cube centres never leave
    their face; a Pyraminx's axial centres and tips only turn at their own vertex) only its
    own piece: taking one from another vertex would fill in a mirror image of the scheme."""
    return slot.piece if slot.kind in FIXED_KINDS else (slot.kind, len(slot.facelets))


@cache
def _choices_by_faces(
    puzzle: str,
) -> dict[tuple[int | tuple[str, int], tuple[str | None, ...]], tuple[_Choice, ...]]:
    """(slot group, faces whose colours a slot shows, None where unseen) -> every piece in every
    orientation that agrees (its colours named by their faces), in slot order then orientation
    order. Any scheme is these with each face's name replaced by its colour (`_choices`), so
    they are built once per puzzle, not once per scheme a search tries (up to 720)."""
    solved = scheme_solved(puzzle, {face.name: face.name for face in get_puzzle(puzzle).faces})
    found: dict[tuple[int | tuple[str, int], tuple[str | None, ...]], list[_Choice]] = {}
    for home in slots(puzzle):
        wanted = tuple(solved[i] for i in home.facelets)
        for k in range(len(wanted)):
            # shown[k] holds wanted[0]: the piece's colours rotated onto the slot.
            placed = wanted[-k:] + wanted[:-k] if k else wanted
            for hidden in itertools.product((False, True), repeat=len(placed)):
                shown = tuple(None if h else c for c, h in zip(placed, hidden, strict=True))
                found.setdefault((_group(home), shown), []).append((home.piece, placed, k))
    return {key: tuple(choices) for key, choices in found.items()}


def _choices(
    puzzle: str,
    slot: Slot,
    shown: tuple[str | None, ...],
    scheme: dict[str, str],
    face_of: dict[str, str],
) -> tuple[_Choice, ...]:
    """Every piece of `scheme` (`face_of`: its colour -> face) in every orientation that agrees
    with the colours a slot shows (None where unseen), in slot order then orientation order;
    () if none."""
    if any(color is not None and color not in face_of for color in shown):
        return ()
    faces = tuple(None if color is None else face_of[color] for color in shown)
    return tuple(
        (piece, tuple(scheme[face] for face in placed), k)
        for piece, placed, k in _choices_by_faces(puzzle).get((_group(slot), faces), ())
    )


def _admits(
    wanted: tuple[tuple[int | tuple[str, int], tuple[str | None, ...]], ...],
    face_of: dict[str, str],
    table: dict[tuple[int | tuple[str, int], tuple[str | None, ...]], tuple[_Choice, ...]],
) -> bool:
    """Whether every (slot group, colours shown) of `wanted` has a piece in the scheme whose
    colour -> face map is `face_of`: `_choices` is not empty for any slot. The same test as
    building every slot's choices, without building them for a scheme that fails."""
    for group, shown in wanted:
        if any(color is not None and color not in face_of for color in shown):
            return False
        faces = tuple(None if color is None else face_of[color] for color in shown)
        if not table.get((group, faces)):
            return False
    return True


class _Search:
    """Backtracking over piece placements for one scheme at a time."""

    def __init__(
        self, puzzle: str, labels: Sequence[str], max_colorings: int, max_nodes: int, prune: bool
    ):
        self.puzzle = puzzle
        # What each slot shows does not depend on the scheme: worked out once, not per scheme.
        self.shown = [
            (slot, tuple(None if is_unseen(labels[i]) else labels[i] for i in slot.facelets))
            for slot in slots(puzzle)
        ]
        self.wanted = tuple(dict.fromkeys((_group(slot), shown) for slot, shown in self.shown))
        self.moduli = orientation_moduli(puzzle) if prune else {}
        self.orientation_sums: Counter[str] = Counter()
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
        face_of = {color: face for face, color in scheme.items()}
        if not _admits(self.wanted, face_of, _choices_by_faces(self.puzzle)):
            return  # some slot has no piece of this scheme (what most schemes tried end in)
        options: list[tuple[Slot, tuple[_Choice, ...]]] = []
        for slot, shown in self.shown:
            choices = _choices(self.puzzle, slot, shown, scheme, face_of)
            if not choices:
                return
            options.append((slot, choices))
        options.sort(key=lambda item: len(item[1]))
        # Where the last piece of a kind with an orientation invariant is placed, its
        # orientation must close the sum (the leaf check would reject every other one).
        last_depth = {slot.kind: depth for depth, (slot, _) in enumerate(options)}
        closing = {
            depth: self.moduli[kind] for kind, depth in last_depth.items() if kind in self.moduli
        }
        colors = list(self.labels)
        self.orientation_sums.clear()
        self._place(options, 0, set(), colors, scheme, closing)

    def _place(
        self,
        options: list[tuple[Slot, tuple[_Choice, ...]]],
        depth: int,
        used: set[int],
        colors: list[str],
        scheme: dict[str, str],
        closing: dict[int, int],
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
        modulus = closing.get(depth)
        sums = self.orientation_sums
        for piece, placed, orientation in choices:
            if piece in used:
                continue
            if modulus is not None and (sums[slot.kind] + orientation) % modulus:
                continue
            used.add(piece)
            sums[slot.kind] += orientation
            for facelet, color in zip(slot.facelets, placed, strict=True):
                colors[facelet] = color
            self._place(options, depth + 1, used, colors, scheme, closing)
            sums[slot.kind] -= orientation
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
