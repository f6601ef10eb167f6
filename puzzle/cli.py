"""`judgecam state` and `judgecam verdict`: the rules engine from the command line."""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

logger = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `state` and `verdict` subcommands."""
    state = subparsers.add_parser(
        "state",
        help="apply moves to a solved puzzle; print the net and the moves from solved",
        description=(
            "Apply a move sequence (KCA Art. 15 / WCA 12a notation, e.g. \"R U R' U'\") to a "
            "solved puzzle and print the state as a net with its moves from solved (OBTM, "
            "rotations free, any colour scheme): 0 solved, 1 +2, 2 (two or more) DNF."
        ),
    )
    state.add_argument("moves", nargs="?", default="", help="the moves, e.g. \"R U R' U'\"")
    state.add_argument("--puzzle", default="333", help="222, 333 or pyram (default 333)")
    state.add_argument("--json", action="store_true", help="print JSON instead of text")
    state.set_defaults(func=run_state)

    verdict = subparsers.add_parser(
        "verdict",
        help="judge an observation file: solved, +2, DNF or review",
        description=(
            "Judge an observation (JSON; format: puzzle/observation.schema.json): facelet "
            "colours and pair angles as the cameras saw them."
        ),
    )
    verdict.add_argument("--observation", required=True, help="observation JSON file")
    verdict.add_argument("--json", action="store_true", help="print JSON instead of text")
    verdict.set_defaults(func=run_verdict)


def run_state(args: argparse.Namespace) -> int:
    """Print the state after the moves and its moves from solved."""
    from judgecam.cli import UsageError
    from judgecam.puzzle import NotationError, UnknownPuzzleError, get_puzzle, moves_from_solved

    try:
        spec = get_puzzle(args.puzzle)
        state = spec.solved_state().apply(args.moves)
    except (UnknownPuzzleError, NotationError) as error:
        raise UsageError(str(error)) from None
    count = moves_from_solved(state)
    verdict = {0: "solved", 1: "+2", 2: "DNF"}[count.count]
    if args.json:
        result: dict[str, Any] = {
            "puzzle": spec.name,
            "moves": args.moves.split(),
            "moves_from_solved": count.count,
            "verdict": verdict,
            "move": str(count.move) if count.move else None,
            "pair": count.pair.label if count.pair else None,
            "facelets": list(state.colors),
        }
        print(json.dumps(result, indent=2))
        return 0
    print(f"{spec.title} after: {args.moves.strip() or '(no moves)'}")
    print(state.net())
    detail = f" ({count.move} on {count.pair.label})" if count.move and count.pair else ""
    plural = "s" if count.count != 1 else ""
    more = " or more" if count.count == 2 else ""
    print(f"moves from solved: {count.count}{more} move{plural}{detail} -> {verdict}")
    return 0


def run_verdict(args: argparse.Namespace) -> int:
    """Judge an observation file and print the verdict."""
    from judgecam.cli import UsageError
    from judgecam.puzzle import get_puzzle
    from judgecam.puzzle.observation import ObservationError, load_observation
    from judgecam.puzzle.verdict import judge

    try:
        observation = load_observation(args.observation)
    except ObservationError as error:
        raise UsageError(str(error)) from None
    spec = get_puzzle(observation.puzzle)
    verdict = judge(spec, observation)
    if args.json:
        print(json.dumps({"puzzle": spec.name, **verdict.to_dict()}, indent=2))
        return 0
    count = "unknown" if verdict.moves_from_solved is None else str(verdict.moves_from_solved)
    print(f"{spec.title}: {verdict.verdict} (moves from solved: {count})")
    for reason in verdict.reasons:
        print(f"  - {reason}")
    for pair in verdict.pairs:
        flag = "  BEYOND LIMIT" if pair.beyond_limit else ""
        print(
            f"  {pair.label:14} {pair.angle_from_solved_deg:+7.1f} deg "
            f"(±{pair.uncertainty_deg:.1f}, limit {pair.limit_deg:g}){flag}"
        )
    return 0
