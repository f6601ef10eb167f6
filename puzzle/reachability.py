"""Is a colouring a legal state of its puzzle? Pieces, orientations and parities (222/333/Pyraminx).

The colour scheme is never assumed: it is read from the puzzle itself (3x3x3: the centres;
2x2x2: the corner in the D-B-L slot, with opposite colours found as the colours that never share
a corner; Pyraminx: each axial centre misses exactly the colour of the face opposite its vertex).
With that scheme every piece slot must hold one piece of the scheme, each piece exactly once, and
turned so that its colours run round it in the scheme's order (a mirror image is impossible).
Then the invariants of outer-block turns must hold:
- cube corners: the twists add up to 0 mod 3 (reference facelet: the one on U or D);
- 3x3x3 edges: the flips add up to 0 mod 2 (reference: U/D facelet, else F/B), and the corner and
  edge permutations have the same parity;
- Pyraminx edges: an even permutation and an even number of flips (reference facelets found from
  the geometry so that no layer turn changes the flip parity); tips and axial centres turn freely.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from judgecam.puzzle.geometry import PuzzleSpec, cross, dot
from judgecam.puzzle.moves import move_permutation
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.state import State

logger = logging.getLogger(__name__)

#: Face order used to name cube slots (UFR, DBL, FR, ...).
CUBE_NAME_ORDER = "UDFBRL"


@dataclass(frozen=True)
class Slot:
    """A piece slot with its facelets in a fixed cyclic order, the reference facelet first."""

    piece: int
    kind: str
    name: str
    facelets: tuple[int, ...]


#: Pieces that never leave their slot (they only turn in it): cube centres, a Pyraminx's
#: axial centres and tips.
FIXED_KINDS = ("center", "tip")


@cache
def slots(puzzle: str) -> tuple[Slot, ...]:
    """Every piece slot of `puzzle` with facelets in cyclic order, reference facelet first."""
    spec = get_puzzle(puzzle)
    result = []
    flip_reference = _pyraminx_edge_references(spec) if spec.name == "pyram" else {}
    for piece in spec.pieces:
        ordered = _cyclic_order(spec, piece.facelets)
        faces = [spec.facelets[i].face for i in ordered]
        if spec.name == "pyram":
            reference = flip_reference.get(piece.index, ordered[0])
            vertices = _pyraminx_vertices_of(spec, piece.facelets)
            name = vertices
        else:
            reference = next(
                i for rank in ("UD", "FB", "RL") for i in ordered if spec.facelets[i].face in rank
            )
            name = "".join(sorted(faces, key=CUBE_NAME_ORDER.index))
        start = ordered.index(reference)
        result.append(Slot(piece.index, piece.kind, name, ordered[start:] + ordered[:start]))
    return tuple(result)


def _cyclic_order(spec: PuzzleSpec, facelets: tuple[int, ...]) -> tuple[int, ...]:
    """Facelets of one piece ordered clockwise seen from outside (any start)."""
    if len(facelets) < 3:
        return tuple(facelets)
    a, b, c = facelets
    normals = [spec.facelets[i].normal for i in (a, b, c)]
    handed = dot(normals[0], cross(normals[1], normals[2]))
    return (a, b, c) if handed < 0 else (a, c, b)


def _pyraminx_vertices_of(spec: PuzzleSpec, facelets: tuple[int, ...]) -> str:
    """The vertex names whose layer holds these facelets ("U", "UL", ...)."""
    names = []
    for axis in spec.axes:
        if all(axis.part_of(spec.facelets[i].center) >= 1 for i in facelets):
            names.append(axis.name)
    return "".join(names)


def _pyraminx_edge_references(spec: PuzzleSpec) -> dict[int, int]:
    """Reference facelets for the Pyraminx edges such that every layer turn flips an even number.

    Found by trying the 2**6 choices; such a choice exists (edge flips are always even).
    """
    edges = [p for p in spec.pieces if p.kind == "edge"]
    turns = [move_permutation(spec.name, axis.name, (1, 2), 1) for axis in spec.axes]
    for choice in itertools.product((0, 1), repeat=len(edges)):
        reference = {e.facelets[c] for e, c in zip(edges, choice, strict=True)}
        if all(
            sum(1 for new, old in enumerate(perm) if (old in reference) != (new in reference)) % 4
            == 0
            for perm in turns
        ):
            return {e.index: e.facelets[c] for e, c in zip(edges, choice, strict=True)}
    raise RuntimeError("no consistent edge reference for the Pyraminx")


def scheme_solved(puzzle: str, scheme: Mapping[str, str]) -> tuple[str, ...]:
    """The solved colours of `puzzle` under a face -> colour scheme."""
    spec = get_puzzle(puzzle)
    return tuple(scheme[f.face] for f in spec.facelets)


def derive_scheme(state: State) -> tuple[dict[str, str] | None, list[str]]:
    """The colour scheme the puzzle itself implies (face -> colour), or None and the reasons."""
    spec = get_puzzle(state.puzzle)
    colors = state.colors
    if spec.name == "pyram":
        return _pyraminx_scheme(spec, colors)
    layers = len(spec.axis("x").part_names)
    if layers % 2 == 1:
        scheme = {}
        for slot in slots(spec.name):
            if slot.kind == "center":
                scheme[spec.facelets[slot.facelets[0]].face] = colors[slot.facelets[0]]
        if len(set(scheme.values())) != len(spec.faces):
            shown = ", ".join(f"{face} {color}" for face, color in scheme.items())
            return None, [f"the centres do not show {len(spec.faces)} different colours ({shown})"]
        return scheme, []
    return _even_cube_scheme(spec, colors)


def _even_cube_scheme(
    spec: PuzzleSpec, colors: Sequence[str], anchor: str = "DBL"
) -> tuple[dict[str, str] | None, list[str]]:
    """The scheme in which the corner in slot `anchor` is solved where it is."""
    corner_colors = [
        [colors[i] for i in slot.facelets] for slot in slots(spec.name) if slot.kind == "corner"
    ]
    anchor_slot = next(s for s in slots(spec.name) if s.name == anchor)
    scheme = {spec.facelets[i].face: colors[i] for i in anchor_slot.facelets}
    if len(set(scheme.values())) != 3:
        shown = _listing(scheme.values())
        return None, [f"the corner at {anchor} shows {shown}: not three colours"]
    opposite_face = {"D": "U", "B": "F", "L": "R", "U": "D", "F": "B", "R": "L"}
    everything = {c for corner in corner_colors for c in corner}
    for face, color in list(scheme.items()):
        apart = [
            other
            for other in everything - set(scheme.values())
            if not any(color in corner and other in corner for corner in corner_colors)
        ]
        if len(apart) != 1:
            return None, [f"no single colour is opposite {color} (never on a corner with it)"]
        scheme[opposite_face[face]] = apart[0]
    if len(set(scheme.values())) != 6:
        return None, ["the corners do not show six colours in opposite pairs"]
    return scheme, []


def _pyraminx_scheme(
    spec: PuzzleSpec, colors: Sequence[str]
) -> tuple[dict[str, str] | None, list[str]]:
    everything = set(colors)
    if len(everything) != len(spec.faces):
        return None, [f"{len(everything)} colours instead of {len(spec.faces)}"]
    scheme = {}
    opposite_face = {"U": "D", "L": "R", "R": "L", "B": "F"}
    for slot in slots(spec.name):
        if slot.kind != "center":
            continue
        shown = {colors[i] for i in slot.facelets}
        vertex = slot.name
        lacking = everything - shown
        if len(shown) != 3 or len(lacking) != 1:
            return None, [f"the centre at {slot.name} shows {_listing(shown)}: not three colours"]
        scheme[opposite_face[vertex]] = lacking.pop()
    if len(set(scheme.values())) != len(spec.faces):
        return None, ["the axial centres do not agree on one colour per face"]
    return scheme, []


def _listing(colors: object) -> str:
    return "/".join(str(c) for c in colors)  # type: ignore[attr-defined]


def check_reachable(state: State) -> list[str]:
    """Why this colouring cannot be reached by turning the puzzle ([] if it can).

    Every reason is one readable sentence; a twisted corner is reported as
    "not solved: a twisted corner at UFR".
    """
    return list(_unreachable_reasons(state))


#: Colourings whose answer `_unreachable_reasons` keeps: the colour classifier asks about
#: the same labelling again for every correction and candidate that leaves it unchanged.
REACHABLE_CACHE_SIZE = 4096


@lru_cache(maxsize=REACHABLE_CACHE_SIZE)
def _unreachable_reasons(state: State) -> tuple[str, ...]:
    """`check_reachable`, remembered (a state is immutable, and the answer depends on it alone)."""
    return tuple(_reasons_for(state))


def _reasons_for(state: State) -> list[str]:
    """Why `state` cannot be reached by turning ([] if it can): `check_reachable`'s work."""
    spec = get_puzzle(state.puzzle)
    reasons = _count_reasons(spec, state.colors)
    if reasons:
        return reasons
    if spec.name in ("222",):
        return _check_even_cube(spec, state.colors)
    scheme, reasons = derive_scheme(state)
    if scheme is None:
        return reasons
    return check_against_scheme(spec.name, state.colors, scheme)


def _check_even_cube(spec: PuzzleSpec, colors: Sequence[str]) -> list[str]:
    """Try each corner as the one that is right; report the most specific reasons.

    Without centres nothing says which corner is right: a single twisted corner makes every
    other corner look twisted if it is taken as the reference.
    """
    best: list[str] | None = None
    for slot in slots(spec.name):
        if slot.kind != "corner":
            continue
        scheme, reasons = _even_cube_scheme(spec, colors, slot.name)
        if scheme is not None:
            reasons = check_against_scheme(spec.name, colors, scheme)
        if not reasons:
            return []
        if best is None or _specificity(reasons) > _specificity(best):
            best = reasons
    return best or []


def _specificity(reasons: Sequence[str]) -> tuple[int, int]:
    """Prefer fewer reasons, then reasons that name a place ("at UFR")."""
    return (-len(reasons), sum(" at " in r for r in reasons))


def _count_reasons(spec: PuzzleSpec, colors: Sequence[str]) -> list[str]:
    per_face = len(spec.facelets) // len(spec.faces)
    counts = Counter(colors)
    wrong = {c: n for c, n in counts.items() if n != per_face}
    if len(counts) == len(spec.faces) and not wrong:
        return []
    shown = ", ".join(f"{c} x{n}" for c, n in sorted(counts.items()))
    return [f"wrong sticker counts: {len(spec.faces)} colours x{per_face} expected, found {shown}"]


def check_against_scheme(
    puzzle: str, colors: Sequence[str], scheme: Mapping[str, str]
) -> list[str]:
    """Reasons why `colors` is not reachable from the solved puzzle coloured by `scheme`."""
    spec = get_puzzle(puzzle)
    table = slots(puzzle)
    lookup = _piece_lookup(spec.name, tuple(sorted(scheme.items())))
    placed_fast: dict[int, tuple[int, int]] = {}
    for slot in table:
        hit = lookup.get((slot.kind, tuple(colors[i] for i in slot.facelets)))
        if hit is None or hit[0] in placed_fast or _left_its_slot(slot, hit[0]):
            break
        placed_fast[hit[0]] = (slot.piece, hit[1])
    else:  # every slot holds a distinct piece of the scheme: only the invariants remain
        placed_by_slot = {slot: (origin, k) for origin, (slot, k) in placed_fast.items()}
        if spec.name == "pyram":
            return _pyraminx_invariants(table, placed_by_slot)
        return _cube_invariants(table, placed_by_slot)
    solved = scheme_solved(puzzle, scheme)
    home: dict[tuple[str, frozenset[str]], Slot] = {}
    for slot in table:
        home[(slot.kind, frozenset(solved[i] for i in slot.facelets))] = slot
    reasons: list[str] = []
    placed: dict[int, tuple[int, int]] = {}  # slot piece -> (home piece, orientation)
    seen: dict[int, str] = {}
    for slot in table:
        shown = tuple(colors[i] for i in slot.facelets)
        origin = home.get((slot.kind, frozenset(shown)))
        if origin is None:
            reasons.append(
                f"the {_kind_word(slot)} at {slot.name} shows {_listing(shown)}, "
                f"which no {_kind_word(slot)} of this puzzle has"
            )
            continue
        if _left_its_slot(slot, origin.piece):
            reasons.append(
                f"the {_kind_word(slot)} at {slot.name} shows {_listing(shown)}, the colours of "
                f"the {_kind_word(origin)} at {origin.name} (a {_kind_word(slot)} only turns in "
                "place: a reassembled puzzle)"
            )
            continue
        wanted = tuple(solved[i] for i in origin.facelets)
        orientation = _rotation_between(shown, wanted)
        if orientation is None:
            reasons.append(
                f"the {_kind_word(slot)} at {slot.name} shows {_listing(shown)} "
                "in mirror-image order (a re-stickered or reassembled piece)"
            )
            continue
        if origin.piece in seen:
            reasons.append(
                f"the {_kind_word(slot)} {_listing(wanted)} appears twice "
                f"(at {seen[origin.piece]} and {slot.name})"
            )
            continue
        seen[origin.piece] = slot.name
        placed[slot.piece] = (origin.piece, orientation)
    if reasons:
        return reasons
    if spec.name == "pyram":
        return _pyraminx_invariants(table, placed)
    return _cube_invariants(table, placed)


@lru_cache(maxsize=1024)
def _piece_lookup(
    puzzle: str, scheme: tuple[tuple[str, str], ...]
) -> dict[tuple[str, tuple[str, ...]], tuple[int, int]]:
    """(kind, colours shown in a slot's cyclic order) -> (home piece, orientation)."""
    solved = scheme_solved(puzzle, dict(scheme))
    lookup: dict[tuple[str, tuple[str, ...]], tuple[int, int]] = {}
    for home in slots(puzzle):
        wanted = tuple(solved[i] for i in home.facelets)
        for k in range(len(wanted)):
            shown = wanted[-k:] + wanted[:-k] if k else wanted
            lookup[(home.kind, shown)] = (home.piece, k)
    return lookup


def _left_its_slot(slot: Slot, piece: int) -> bool:
    """Whether `slot` holds another slot's piece of a kind that only turns in place."""
    return slot.kind in FIXED_KINDS and piece != slot.piece


def _kind_word(slot: Slot) -> str:
    return "centre" if slot.kind == "center" else slot.kind


def _rotation_between(shown: tuple[str, ...], wanted: tuple[str, ...]) -> int | None:
    """k such that the piece's reference colour wanted[0] sits at shown[k] in cyclic order."""
    for k in range(len(shown)):
        if shown[k:] + shown[:k] == wanted:
            return k
    return None


def orientation_moduli(puzzle: str) -> dict[str, int]:
    """Piece kind -> n where the orientations of that kind must add up to 0 mod n.

    The orientation parts of `_cube_invariants` and `_pyraminx_invariants`, for searches that
    prune with them (`judgecam.puzzle.completion`): keep the three in step.
    """
    if get_puzzle(puzzle).name == "pyram":
        return {"edge": 2}
    return {"corner": 3, "edge": 2}


def _cube_invariants(table: Sequence[Slot], placed: Mapping[int, tuple[int, int]]) -> list[str]:
    reasons = []
    corners = [s for s in table if s.kind == "corner"]
    twists = {s.name: placed[s.piece][1] for s in corners}
    twist_sum = sum(twists.values()) % 3
    if twist_sum:
        twisted = [name for name, twist in twists.items() if twist]
        direction = "clockwise" if twist_sum == 1 else "counter-clockwise"
        where = f" at {twisted[0]}" if len(twisted) == 1 else ""
        reasons.append(
            f"not solved: a twisted corner{where} (the corner twists add up to one "
            f"{direction} twist; no turn of the puzzle does that)"
        )
    edges = [s for s in table if s.kind == "edge"]
    if edges:
        flips = {s.name: placed[s.piece][1] for s in edges}
        if sum(flips.values()) % 2:
            flipped = [name for name, flip in flips.items() if flip]
            where = f" at {flipped[0]}" if len(flipped) == 1 else ""
            reasons.append(f"not solved: a flipped edge{where} (an odd number of edge flips)")
        corner_parity = _parity([placed[s.piece][0] for s in corners])
        edge_parity = _parity([placed[s.piece][0] for s in edges])
        if corner_parity != edge_parity:
            reasons.append(
                "not solved: two pieces swapped (corner and edge permutations differ in parity)"
            )
    return reasons


def _pyraminx_invariants(table: Sequence[Slot], placed: Mapping[int, tuple[int, int]]) -> list[str]:
    reasons = []
    edges = [s for s in table if s.kind == "edge"]
    flips = {s.name: placed[s.piece][1] for s in edges}
    if sum(flips.values()) % 2:
        flipped = [name for name, flip in flips.items() if flip]
        where = f" at {flipped[0]}" if len(flipped) == 1 else ""
        reasons.append(f"not solved: a flipped edge{where} (an odd number of edge flips)")
    if _parity([placed[s.piece][0] for s in edges]):
        reasons.append("not solved: two edges swapped (an odd edge permutation)")
    return reasons


def _parity(sequence: Sequence[int]) -> int:
    """0 for an even permutation of the values in `sequence`, 1 for odd."""
    order = sorted(sequence)
    position = {value: i for i, value in enumerate(order)}
    perm = [position[v] for v in sequence]
    parity = 0
    seen = [False] * len(perm)
    for start in range(len(perm)):
        length = 0
        i = start
        while not seen[i]:
            seen[i] = True
            i = perm[i]
            length += 1
        if length:
            parity ^= (length - 1) & 1
    return parity
