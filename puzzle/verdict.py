"""The verdict on an observation: solved, +2, DNF or review (KCA Art. 10, 13; WCA 10e, 10f, 5b5).

Order of the rules:
1. Damage (Art. 10.2, WCA 5b5): two or more missing facelets, or every facelet of a piece with
   several coloured faces missing, is DNF. One missing facelet is judged as if it had the right
   colour: it is filled in like an unseen facelet, from the pieces around it.
2. Unseen facelets: every legal colouring that agrees with what was seen is judged
   (`judgecam.puzzle.completion`); if they do not all give the same verdict: review.
3. A colouring that no turning of the puzzle can reach (a twisted corner, a flipped edge, two
   pieces swapped, wrong sticker counts): review, naming what is wrong ("not solved: ...").
4. Moves from solved: the colours give 0, 1 or 2+ (`moves_from_solved`); a pair whose residual is
   beyond the limit (only possible where the limit is under half a step) adds one move.
5. Angles: a pair whose residual plus its uncertainty could reach past half a step might snap the
   other way; both snaps are judged (the cut turned one step further) and only if they differ is
   the verdict review, naming the pairs that decide it. So a DNF puzzle stays DNF whatever an
   uncertain angle does. Where the limit is under half a step, a residual that could be on
   either side of the limit is judged both ways too. A pair missing from the observation was not
   measured: any angle (both snaps are judged), unless a crossing cut stands clearly askew,
   which holds it in line (`judgecam.puzzle.locking`); two crossing cuts both askew: review.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from judgecam.puzzle.completion import (
    canonical,
    complete,
    near_solved_completions,
)
from judgecam.puzzle.counting import MoveCount, moves_from_solved
from judgecam.puzzle.geometry import Pair, PuzzleSpec
from judgecam.puzzle.locking import PLAY_DEG, PairAngle, contradiction, holders
from judgecam.puzzle.moves import move_permutation
from judgecam.puzzle.observation import MISSING, UNKNOWN, Observation, PairObservation
from judgecam.puzzle.reachability import check_reachable
from judgecam.puzzle.state import State

logger = logging.getLogger(__name__)

SOLVED, PLUS_TWO, DNF, REVIEW = "solved", "+2", "DNF", "review"
VERDICT_BY_COUNT = {0: SOLVED, 1: PLUS_TWO, 2: DNF}

#: More uncertain pairs than this are not combined exhaustively: review.
MAX_UNCERTAIN_PAIRS = 6


@dataclass(frozen=True)
class PairVerdict:
    """One pair as judged: its residual, the angle from solved and whether it is beyond the limit.

    `angle_from_solved_deg` is step * k + residual for the pair that carries the single move when
    the puzzle is one move from solved (k its relative rotation in steps), else the residual.
    """

    label: str
    axis: str
    parts: tuple[int, int]
    residual_deg: float
    uncertainty_deg: float
    limit_deg: float
    angle_from_solved_deg: float
    beyond_limit: bool


@dataclass(frozen=True)
class Verdict:
    """The decision on one observation, with the moves from solved and readable reasons."""

    verdict: str
    moves_from_solved: int | None
    reasons: tuple[str, ...]
    pairs: tuple[PairVerdict, ...]
    #: True when the colours are no legal state of the puzzle (a twisted corner, wrong counts,
    #: no legal filling of the unseen facelets): the verdict is then review.
    unreachable: bool = False
    #: When unseen facelets make it review: the verdicts their legal fillings give (sorted).
    possible: tuple[str, ...] = ()
    #: For a review: the reasons that make it one (the rest of `reasons` are notes, such as
    #: unseen facelets that the visible pieces imply); empty otherwise.
    review_because: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "verdict": self.verdict,
            "moves_from_solved": self.moves_from_solved,
            "unreachable": self.unreachable,
            "reasons": list(self.reasons),
            "review_because": list(self.review_because),
            "pairs": [
                {
                    "label": p.label,
                    "axis": p.axis,
                    "parts": list(p.parts),
                    "residual_deg": p.residual_deg,
                    "uncertainty_deg": p.uncertainty_deg,
                    "limit_deg": p.limit_deg,
                    "angle_from_solved_deg": p.angle_from_solved_deg,
                    "beyond_limit": p.beyond_limit,
                }
                for p in self.pairs
            ],
        }


@dataclass(frozen=True)
class _Measured:
    """A pair with its residual and uncertainty (unmeasured pairs: a whole step, any angle)."""

    pair: Pair
    residual: float
    uncertainty: float
    measured: bool = True
    #: For an unmeasured pair held in line by a crossing askew pair: that pair's label.
    held_by: str = ""

    def describe(self) -> str:
        if not self.measured:
            return f"the {self.pair.label} angle was not measured"
        return f"the {self.pair.label} angle {self.residual:+.1f}±{self.uncertainty:.1f} degrees"


@dataclass(frozen=True)
class _Outcome:
    """The judgement of one complete colouring."""

    verdict: str
    count: int | None
    reasons: tuple[str, ...]
    move_count: MoveCount | None
    unreachable: bool = False


def lightens_only(verdict: str, without: Sequence[str]) -> bool:
    """Whether evidence that gives `verdict`, and without which the unseen facelets give the
    verdicts `without`, only rules out the harsher penalty: +2 with it, +2 or DNF without it.

    Were such evidence wrong, a DNF would be called +2; it can neither pass an unsolved puzzle
    nor penalise a solved one, the two errors a judge cannot accept.
    """
    return verdict == PLUS_TWO and set(without) == {PLUS_TWO, DNF}


def holds_without(verdict: str, without: Verdict) -> bool:
    """Whether `verdict` stands when some readings are taken as unseen (`without`, the verdict
    then): it is the same, or those readings only rule out the harsher penalty
    (`lightens_only`). What every vision check that asks "does this rest on those readings?"
    decides by."""
    return without.verdict == verdict or lightens_only(verdict, without.possible)


def judge_unseen(spec: PuzzleSpec, observation: Observation, facelets: Iterable[int]) -> Verdict:
    """The verdict on `observation` with `facelets` read as unseen: every legal colouring of
    them is then considered, so the result holds whatever colours they really have (how the
    vision checks ask whether a verdict rests on some readings)."""
    labels = list(observation.facelets)
    for index in facelets:
        labels[int(index)] = UNKNOWN
    return judge(spec, Observation(observation.puzzle, tuple(labels), observation.pairs))


def judge(spec: PuzzleSpec, observation: Observation) -> Verdict:
    """The verdict on `observation` of a puzzle of type `spec` (see the module docstring)."""
    if observation.puzzle != spec.name:
        raise ValueError(f"a {observation.puzzle} observation cannot be judged as {spec.name}")
    measured = _measured_pairs(spec, observation.pairs)
    labels = observation.facelets
    reasons: list[str] = []

    damage = _damage(spec, labels)
    if damage is not None:
        return Verdict(DNF, None, (damage,), _pair_verdicts(measured, None))
    askew = contradiction(spec, [_angle(m) for m in measured if m.measured])
    if askew is not None:
        first, second = askew
        crossed = (
            f"{first.pair.label} ({first.residual_deg:+.1f} degrees) and {second.pair.label} "
            f"({second.residual_deg:+.1f} degrees) cross and are both askew, which no intact "
            "puzzle can show: a piece out of place, or a misread angle",
        )
        return Verdict(
            REVIEW, None, crossed, _pair_verdicts(measured, None), review_because=crossed
        )
    for holder in measured:
        if held := [m.pair.label for m in measured if m.held_by == holder.pair.label]:
            reasons.append(
                f"{', '.join(held)} not measured: held in line by {holder.pair.label} "
                f"({holder.residual:+.1f} degrees), which crosses "
                + ("them" if len(held) > 1 else "it")
            )
    missing = [i for i, label in enumerate(labels) if label == MISSING] if MISSING in labels else []
    if missing:
        reasons.append(
            f"one missing facelet ({_facelet_name(spec, missing[0])}) is judged as if it had "
            "the right colour (Art. 10.2, WCA 5b5)"
        )

    if UNKNOWN in labels or missing:
        verdict = _judge_unseen(spec, labels, measured, reasons)
        if missing and UNKNOWN in labels and verdict.verdict in (SOLVED, PLUS_TWO):
            return _damage_unconfirmed(verdict, labels.count(UNKNOWN))
        return verdict

    outcome = _judge_coloring(spec, tuple(labels), measured)
    return Verdict(
        outcome.verdict,
        outcome.count,
        (*reasons, *outcome.reasons),
        _pair_verdicts(measured, outcome.move_count),
        unreachable=outcome.unreachable,
        review_because=outcome.reasons if outcome.verdict == REVIEW else (),
    )


def _damage_unconfirmed(verdict: Verdict, unseen: int) -> Verdict:
    """`verdict` (solved or +2) with a facelet seen missing and `unseen` facelets unseen, sent
    to a judge: the one part off that Art. 10.2 allows is used up, so one more off among the
    unseen facelets (the face on the mat) would make it DNF, and no camera can tell."""
    because = (
        f"a sticker is off (Art. 10.2 allows one) and {unseen} facelet(s) are not seen: "
        "one more off there would make it DNF; a judge checks the puzzle",
    )
    return Verdict(
        REVIEW,
        None,
        (*verdict.reasons, *because),
        verdict.pairs,
        possible=tuple(sorted({verdict.verdict, DNF})),
        review_because=because,
    )


def _judge_unseen(
    spec: PuzzleSpec, labels: Sequence[str], measured: Sequence[_Measured], reasons: list[str]
) -> Verdict:
    """Judge every legal filling of the unseen facelets; one verdict only if they all agree.

    The fillings at most one move from solved are found exhaustively (a table lookup); the
    piece-matching search then only has to show whether any other legal filling exists.
    """
    unseen = [i for i, label in enumerate(labels) if label == UNKNOWN]
    hidden = f"{len(unseen)} facelet(s) not seen" if unseen else "the missing facelet"
    near = _near_solved_under_snaps(spec, labels, measured)
    near_keys = {canonical(c) for c in near}
    found = complete(spec.name, labels, max_colorings=len(near) + 1)
    extras = [c for c in found.colorings if canonical(c) not in near_keys]
    candidates = [*near, *extras]
    no_pairs = _pair_verdicts(measured, None)
    if not candidates:
        if found.out_of_nodes:
            because: tuple[str, ...] = (f"{hidden}: too little seen to tell",)
            return Verdict(REVIEW, None, (*reasons, *because), no_pairs, review_because=because)
        # The pruned search skips the twists and flips it rules out; name them for the judge.
        explained = complete(spec.name, labels, max_colorings=0, prune=False)
        detail = explained.failures[:3] or ("the visible colours fit no legal puzzle",)
        because = ("no legal puzzle shows the visible colours:", *detail)
        return Verdict(
            REVIEW, None, (*reasons, *because), no_pairs, unreachable=True, review_because=because
        )
    outcomes = [_judge_coloring(spec, coloring, measured) for coloring in candidates]
    verdicts = sorted({o.verdict for o in outcomes})
    counts = {o.count for o in outcomes}
    count = counts.pop() if len(counts) == 1 else None
    if len(verdicts) > 1:
        because = (f"{hidden}: they could change the result ({' or '.join(verdicts)})",)
        return Verdict(
            REVIEW,
            count,
            (*reasons, *because),
            no_pairs,
            possible=tuple(verdicts),
            review_because=because,
        )
    if found.out_of_nodes and not extras:
        because = (f"{hidden}: too many legal puzzles fit what was seen",)
        return Verdict(REVIEW, None, (*reasons, *because), no_pairs, review_because=because)
    first = outcomes[0]
    if len(candidates) == 1:
        implied = (
            f"{hidden}: the visible pieces imply their colours (their stickers are taken to be on)"
            if unseen
            else f"{hidden}: the visible pieces imply its colour"
        )
    else:
        implied = f"{hidden}: every legal filling gives the same verdict"
    move_count = first.move_count if len(candidates) == 1 else None
    # Every filling gives the same verdict; if that is review (angles near a limit), the
    # fillings' reasons are why.
    outcome_reasons = tuple(dict.fromkeys(r for o in outcomes for r in o.reasons))
    return Verdict(
        first.verdict,
        count,
        (*reasons, implied, *outcome_reasons),
        _pair_verdicts(measured, move_count),
        review_because=outcome_reasons if first.verdict == REVIEW else (),
    )


def _near_solved_under_snaps(
    spec: PuzzleSpec, labels: Sequence[str], measured: Sequence[_Measured]
) -> list[tuple[str, ...]]:
    """Every filling at most one move from solved, as seen or once a pair that may snap the
    other way is turned that step (`_snap_options`), in the observation's frame.

    A layer near half a step can have its colours read one step off the truth. The fillings
    the table lookup finds for the colours as read are then two moves away, while the same
    colours turned back by that step are one: without them only arbitrary fillings are judged,
    and each of those stays two moves away under either snap (seed 5678 c0037: a +2 with a layer
    at 44.7 degrees, read DNF).
    """
    found = list(near_solved_completions(spec.name, labels))
    keys = {canonical(c) for c in found}
    for m in measured:
        for steps, _beyond_limit in _snap_options(m):
            if not steps:
                continue
            turned = _turn_cut(spec, tuple(labels), m.pair, steps)
            for coloring in near_solved_completions(spec.name, turned):
                back = _turn_cut(spec, coloring, m.pair, -steps)
                if canonical(back) not in keys:
                    keys.add(canonical(back))
                    found.append(back)
    return found


def _judge_coloring(
    spec: PuzzleSpec, colors: tuple[str, ...], measured: Sequence[_Measured]
) -> _Outcome:
    """Verdict for one complete colouring, with the pair angles and their uncertainties."""
    state = State(spec.name, colors)
    unreachable = check_reachable(state)
    if unreachable:
        return _Outcome(REVIEW, None, tuple(unreachable), None, unreachable=True)
    base = moves_from_solved(state)

    options = [_snap_options(m) for m in measured]
    uncertain = [i for i, opts in enumerate(options) if len(opts) > 1]
    certain_extra = sum(opts[0][1] for opts in options if len(opts) == 1)
    nominal_count = min(2, base.count + sum(_beyond(m) for m in measured))
    nominal = VERDICT_BY_COUNT[nominal_count]
    if not uncertain:
        return _Outcome(nominal, nominal_count, (), base)
    if len(uncertain) > MAX_UNCERTAIN_PAIRS:
        labels = ", ".join(measured[i].pair.label for i in uncertain)
        return _Outcome(REVIEW, None, (f"too many uncertain angles ({labels})",), base)
    nominal_choice = tuple((0, bool(_beyond(measured[i]))) for i in uncertain)
    verdict_of: dict[tuple[tuple[int, bool], ...], str] = {}
    for choice in itertools.product(*(options[i] for i in uncertain)):
        turned = colors
        extra = certain_extra
        for index, (steps, beyond) in zip(uncertain, choice, strict=True):
            if steps:
                turned = _turn_cut(spec, turned, measured[index].pair, steps)
            extra += beyond
        count = (
            base.count if turned is colors else moves_from_solved(State(spec.name, turned)).count
        )
        verdict_of[choice] = VERDICT_BY_COUNT[min(2, count + extra)]
    verdicts = {nominal, *verdict_of.values()}
    if len(verdicts) == 1:
        return _Outcome(nominal, nominal_count, (), base)
    # Name the pairs that change the verdict on their own; if only combinations do, name all.
    deciding = [
        index
        for position, index in enumerate(uncertain)
        if _changes_alone(position, nominal_choice, verdict_of, nominal)
    ] or uncertain
    reasons = tuple(
        f"{measured[i].describe()}: it could be on either side of the "
        f"{measured[i].pair.limit_deg:g} degree limit"
        for i in deciding
    )
    return _Outcome(
        REVIEW,
        None,
        (*reasons, f"the angles could change the result ({' or '.join(sorted(verdicts))})"),
        base,
    )


def _changes_alone(
    position: int,
    nominal_choice: tuple[tuple[int, bool], ...],
    verdict_of: dict[tuple[tuple[int, bool], ...], str],
    nominal: str,
) -> bool:
    """True if changing only the uncertain pair at `position` can change the verdict."""
    for choice, verdict in verdict_of.items():
        others_nominal = all(
            option == usual
            for k, (option, usual) in enumerate(zip(choice, nominal_choice, strict=True))
            if k != position
        )
        if others_nominal and verdict != nominal:
            return True
    return False


def _snap_options(m: _Measured) -> tuple[tuple[int, bool], ...]:
    """What the true angle may be: (steps beyond the snapped position, beyond the limit?).

    The true angle lies in residual ± uncertainty; the part of that interval that snaps `steps`
    further has its own residual range, and each range may be within or beyond the limit.
    """
    step, limit = m.pair.step_deg, m.pair.limit_deg
    half = step / 2
    options: list[tuple[int, bool]] = []
    for steps in (0, 1, -1):
        low = max(m.residual - m.uncertainty, steps * step - half) - steps * step
        high = min(m.residual + m.uncertainty, steps * step + half) - steps * step
        if low > high or (steps and low == high and abs(low) == half):
            continue
        if low <= limit and high >= -limit:
            options.append((steps, False))
        if low < -limit or high > limit:
            options.append((steps, True))
    return tuple(options)


def _beyond(m: _Measured) -> int:
    """1 if the measured residual is beyond the limit (possible where limit < step / 2)."""
    return int(abs(m.residual) > m.pair.limit_deg)


def _turn_cut(spec: PuzzleSpec, colors: tuple[str, ...], pair: Pair, steps: int) -> tuple[str, ...]:
    """The colours with the parts above the pair's cut turned `steps` further (right-handed)."""
    count = len(spec.axis(pair.axis).part_names)
    perm = move_permutation(spec.name, pair.axis, tuple(range(pair.parts[1], count)), steps)
    return tuple(colors[i] for i in perm)


def _measured_pairs(spec: PuzzleSpec, observed: Sequence[PairObservation]) -> tuple[_Measured, ...]:
    """Every pair of the puzzle: as measured; held in line (0 +- PLAY_DEG) if unmeasured but
    crossed by a pair measured askew; else unmeasured (any angle: a whole step)."""
    by_key = {(p.axis, tuple(p.parts)): p for p in observed}
    angles = [
        PairAngle(pair, seen.angle_deg, seen.uncertainty_deg)
        for pair in spec.pairs()
        if (seen := by_key.get((pair.axis, pair.parts))) is not None
    ]
    result = []
    for pair in spec.pairs():
        seen = by_key.get((pair.axis, pair.parts))
        if seen is not None:
            result.append(_Measured(pair, seen.angle_deg, seen.uncertainty_deg))
        elif holding := holders(spec, pair, angles):
            result.append(
                _Measured(pair, 0.0, PLAY_DEG, measured=False, held_by=holding[0].pair.label)
            )
        else:
            result.append(_Measured(pair, 0.0, pair.step_deg, measured=False))
    return tuple(result)


def _angle(m: _Measured) -> PairAngle:
    return PairAngle(m.pair, m.residual, m.uncertainty)


def _pair_verdicts(
    measured: Sequence[_Measured], move_count: MoveCount | None
) -> tuple[PairVerdict, ...]:
    verdicts = []
    for m in measured:
        angle = m.residual
        if move_count is not None and move_count.count == 1 and move_count.pair == m.pair:
            angle = move_count.steps * m.pair.step_deg + m.residual
        verdicts.append(
            PairVerdict(
                label=m.pair.label,
                axis=m.pair.axis,
                parts=m.pair.parts,
                residual_deg=m.residual,
                uncertainty_deg=m.uncertainty,
                limit_deg=m.pair.limit_deg,
                angle_from_solved_deg=angle,
                beyond_limit=abs(angle) > m.pair.limit_deg,
            )
        )
    return tuple(verdicts)


def _damage(spec: PuzzleSpec, labels: Sequence[str]) -> str | None:
    """The DNF reason for damage (Art. 10.2, WCA 5b5), or None."""
    if MISSING not in labels:
        return None
    missing = {i for i, label in enumerate(labels) if label == MISSING}
    for piece in spec.pieces:
        if len(piece.facelets) > 1 and set(piece.facelets) <= missing:
            names = "/".join(spec.facelets[i].face for i in piece.facelets)
            return (
                f"DNF: a whole {piece.kind} ({names}) is missing: a part with more than one "
                "coloured face (Art. 10.2, WCA 5b5)"
            )
    if len(missing) >= 2:
        names = ", ".join(_facelet_name(spec, i) for i in sorted(missing))
        return (
            f"DNF: {len(missing)} facelets missing ({names}); only one missing part of one "
            "coloured face is allowed (Art. 10.2, WCA 5b5)"
        )
    return None


def _facelet_name(spec: PuzzleSpec, index: int) -> str:
    """Readable facelet name: face and position on it, e.g. "U5" (1-based, reading order)."""
    facelet = spec.facelets[index]
    first = next(f.index for f in spec.facelets if f.face == facelet.face)
    return f"{facelet.face}{index - first + 1}"
