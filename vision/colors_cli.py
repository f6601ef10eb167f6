"""`judgecam colors`: resolve sticker colour samples (rubiks-color-resolver's JSON) and judge.

Prints the cube in Kociemba facelet notation (faces U, R, F, D, L, B; each letter the face whose
centre, or on a 2x2x2 whose scheme colour, the sticker has) and the domain's verdict. The
samples come from an aligned cube (a robot or a scanner), so every layer angle is taken as 0.
A facelet whose colour is uncertain (confidence under 0.5) makes the verdict `review`: a judge
never guesses.

Exit status 0 for any verdict; 2 with one line for unusable input.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgecam.puzzle.verdict import Verdict
    from judgecam.vision.color_model import ColorClassification

logger = logging.getLogger(__name__)

#: Facelets below this colour confidence make the verdict `review` (a 3:1 likelihood ratio).
REVIEW_BELOW_CONFIDENCE = 0.5

#: `moves_from_solved` (0, 1, 2 meaning two or more) in words.
MOVES_FROM_SOLVED = {0: "0 moves", 1: "1 move", 2: "2 or more moves"}


def register(subparsers: Any) -> None:
    """Add `colors` to the judgecam command line."""
    parser = subparsers.add_parser(
        "colors",
        help="resolve sticker colours (rubiks-color-resolver JSON) and judge the cube",
        description=(
            "Resolve mean sticker colours given as rubiks-color-resolver JSON (square number "
            "-> [R, G, B], faces U L F R B D) and print the cube in Kociemba notation with its "
            "verdict."
        ),
    )
    parser.add_argument("--puzzle", required=True, choices=("222", "333"))
    parser.add_argument("--input", required=True, type=Path, metavar="FILE.json")
    parser.add_argument(
        "--scheme", default=None, metavar="FILE", help="a calibrated colour scheme (TOML)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run_colors)


def run_colors(args: argparse.Namespace) -> int:
    """Classify, judge and print; UsageError for unusable input."""
    from judgecam.calibration.scheme import SchemeError, load_scheme
    from judgecam.cli import UsageError
    from judgecam.vision.color_resolver import ResolverFormatError, load_resolver_file
    from judgecam.vision.colors import classify_colors

    try:
        samples = load_resolver_file(args.input, args.puzzle)
    except ResolverFormatError as error:
        raise UsageError(str(error)) from None
    scheme = None
    if args.scheme is not None:
        try:
            scheme = load_scheme(args.scheme, args.puzzle)
        except SchemeError as error:
            raise UsageError(str(error)) from None
    result = classify_colors(samples, args.puzzle, scheme)
    verdict = judge_classification(result)
    report = colors_report(result, verdict)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(_human(report))
    return 0


def kociemba(result: ColorClassification) -> str:
    """The Kociemba facelet string of a classification ('?' for unseen facelets)."""
    return "".join(letter or "?" for letter in result.face_letters())


def judge_classification(result: ColorClassification) -> Verdict:
    """The domain's verdict on the classified colours, every layer taken as aligned."""
    from judgecam.puzzle.observation import UNKNOWN, Observation, PairObservation
    from judgecam.puzzle.registry import get_puzzle
    from judgecam.puzzle.verdict import judge

    spec = get_puzzle(result.puzzle)
    labels = tuple(UNKNOWN if label is None else label for label in result.labels)
    pairs = tuple(PairObservation(pair.axis, pair.parts, 0.0, 0.0) for pair in spec.pairs())
    return judge(spec, Observation(spec.name, labels, pairs))


def colors_report(result: ColorClassification, verdict: Verdict) -> dict[str, Any]:
    """The JSON-ready report: Kociemba string, verdict, facelets and reasons."""
    uncertain = [
        i
        for i, (label, confidence) in enumerate(zip(result.labels, result.confidences, strict=True))
        if label is not None and confidence < REVIEW_BELOW_CONFIDENCE
    ]
    final = verdict.verdict
    reasons = list(result.reasons)
    if uncertain and final != "review":
        final = "review"
        reasons.append(
            f"{len(uncertain)} facelet colour(s) below confidence {REVIEW_BELOW_CONFIDENCE:g}: "
            f"the colours read give {verdict.verdict}"
        )
    reasons.extend(verdict.reasons)
    reasons.append("layer angles not measured: the cube is taken as aligned")
    return {
        "puzzle": result.puzzle,
        "kociemba": kociemba(result),
        "verdict": final,
        "moves_from_solved": verdict.moves_from_solved,
        "facelets": [
            {"index": index, "color": label, "confidence": round(confidence, 4)}
            for index, (label, confidence) in enumerate(
                zip(result.labels, result.confidences, strict=True)
            )
        ],
        "clusters": [
            {
                "name": cluster.name,
                "face": cluster.face,
                "scheme_face": cluster.scheme_face,
                "lab": [round(value, 2) for value in cluster.lab],
                "count": cluster.count,
                "delta_e_to_scheme": round(cluster.delta_e_to_scheme, 2),
            }
            for cluster in result.clusters
        ],
        "reasons": reasons,
    }


def _human(report: dict[str, Any]) -> str:
    size = len(report["kociemba"]) // 6
    faces = [report["kociemba"][i * size : (i + 1) * size] for i in range(6)]
    moves = report["moves_from_solved"]
    lines = [
        " ".join(f"{name}:{letters}" for name, letters in zip("URFDLB", faces, strict=True)),
        report["kociemba"],
        f"verdict: {report['verdict']}"
        + ("" if moves is None else f" ({MOVES_FROM_SOLVED[moves]} from solved)"),
    ]
    lines.extend(f"  - {reason}" for reason in report["reasons"])
    return "\n".join(lines)
