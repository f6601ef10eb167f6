"""A cut standing askew holds every crossing cut in line: which cuts cross, and the verdicts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest

from judgecam.puzzle import get_puzzle
from judgecam.puzzle.geometry import Pair
from judgecam.puzzle.locking import ASKEW_DEG, PLAY_DEG, PairAngle, crossing
from judgecam.puzzle.observation import Observation, PairObservation
from judgecam.puzzle.verdict import Verdict, judge


def verdict_of(
    puzzle: str,
    moves: str = "",
    angles: Mapping[str, tuple[float, float]] | None = None,
    unmeasured: Iterable[str] = (),
) -> Verdict:
    """The verdict on the solved puzzle after `moves`, every facelet seen, pairs at 0 +- 1
    degree unless `angles` gives (residual, uncertainty), `unmeasured` left out."""
    spec = get_puzzle(puzzle)
    pairs = tuple(
        PairObservation(pair.axis, pair.parts, *(angles or {}).get(pair.label, (0.0, 1.0)))
        for pair in spec.pairs()
        if pair.label not in unmeasured
    )
    return judge(spec, Observation(puzzle, spec.solved_state().apply(moves).colors, pairs))


def _pair(puzzle: str, label: str) -> Pair:
    return next(p for p in get_puzzle(puzzle).pairs() if p.label == label)


@pytest.mark.parametrize(
    ("puzzle", "first", "second", "expected"),
    [
        ("333", "y:E|U", "x:M|R", True),  # UFR, UR, UBR lie beyond both cuts
        ("333", "y:E|U", "z:B|S", True),
        ("333", "y:E|U", "y:D|E", False),  # one axis: U and D turn together freely
        ("222", "x:L|R", "y:D|U", True),
        ("pyram", "U:base|layer", "R:base|layer", True),  # the UR edge is in both layers
        ("pyram", "U:base|layer", "R:layer|tip", False),  # a tip turns whatever layers do
        ("pyram", "U:layer|tip", "L:layer|tip", False),
    ],
)
def test_which_cuts_cross(puzzle: str, first: str, second: str, expected: bool) -> None:
    spec = get_puzzle(puzzle)
    assert crossing(spec, _pair(puzzle, first), _pair(puzzle, second)) is expected
    assert crossing(spec, _pair(puzzle, second), _pair(puzzle, first)) is expected


def test_askew_means_clearly_askew_at_the_near_end_of_the_uncertainty() -> None:
    pair = _pair("333", "y:E|U")
    assert PairAngle(pair, ASKEW_DEG + 2.0, 2.0).askew
    assert PairAngle(pair, -(ASKEW_DEG + 2.0), 2.0).askew
    assert not PairAngle(pair, ASKEW_DEG + 2.0, 2.5).askew
    assert (
        min(p.limit_deg for name in ("222", "333", "pyram") for p in get_puzzle(name).pairs())
        > PLAY_DEG
    )


def test_an_askew_layer_holds_an_unmeasured_crossing_layer_in_line() -> None:
    # A solved cube with U standing 30 degrees askew, the R cut not measured: R cannot have
    # turned while U stands askew, so it is in line and the cube solved.
    askew = {"y:E|U": (30.0, 1.0)}
    before = verdict_of("333", angles=askew, unmeasured=["x:M|R", "z:S|F"])
    assert before.verdict == "solved"
    assert any("held in line by y:E|U (+30.0 degrees)" in r for r in before.reasons)
    assert any(r.startswith("x:M|R, z:S|F not measured") for r in before.reasons)
    # Without the askew layer the unmeasured cut could be anywhere: review, as before.
    plain = verdict_of("333", unmeasured=["x:M|R"])
    assert plain.verdict == "review"


def test_an_unmeasured_pair_on_the_same_axis_is_not_held() -> None:
    result = verdict_of("333", angles={"y:E|U": (30.0, 1.0)}, unmeasured=["y:D|E"])
    assert result.verdict == "review"
    assert any("y:D|E angle was not measured" in r for r in result.reasons)


def test_a_layer_only_possibly_askew_holds_nothing() -> None:
    result = verdict_of("333", angles={"y:E|U": (20.0, 6.0)}, unmeasured=["x:M|R"])
    assert result.verdict == "review"


def test_a_pyraminx_tip_askew_holds_nothing_and_a_layer_holds_no_tip() -> None:
    tip = verdict_of("pyram", angles={"U:layer|tip": (50.0, 1.0)}, unmeasured=["R:base|layer"])
    assert tip.verdict == "review"
    layer = verdict_of("pyram", angles={"U:base|layer": (-58.0, 1.0)}, unmeasured=["R:layer|tip"])
    assert layer.verdict == "review"
    held = verdict_of(
        "pyram",
        angles={"U:base|layer": (-58.0, 1.0)},
        unmeasured=["R:base|layer", "L:base|layer", "B:base|layer"],
    )
    assert held.verdict == "solved"


def test_the_held_layer_does_not_hide_a_penalty() -> None:
    # One move from solved on the held cut's own axis stays +2: holding says only that the cut
    # is in line, the colours still say where it stands.
    result = verdict_of("333", "R", angles={"y:E|U": (30.0, 1.0)}, unmeasured=["x:M|R"])
    assert result.verdict == "+2"


def test_two_crossing_cuts_both_askew_are_a_review() -> None:
    result = verdict_of("333", angles={"y:E|U": (30.0, 1.0), "x:M|R": (-25.0, 2.0)})
    assert result.verdict == "review"
    assert "both askew" in result.reasons[0]
    # The same angles on one axis are an ordinary (if odd) puzzle: judged.
    same_axis = verdict_of("333", angles={"y:E|U": (30.0, 1.0), "y:D|E": (-25.0, 2.0)})
    assert same_axis.verdict == "solved"
