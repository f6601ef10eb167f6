"""`judgecam render corpus` and `judgecam render one`: ground-truth images from the renderer."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from judgecam.cli import UsageError

logger = logging.getLogger(__name__)

#: The camera rigs of `render.capture.RIGS` (named here to keep this module's imports light).
RIG_CHOICES = ("rig2", "rig3", "top", "oblique")
#: `--resolution-scale` bounds: a quarter of 1280x720 is stickers a few pixels wide; four
#: times is more than any Pi camera mode the station would analyse.
MIN_RESOLUTION_SCALE = 0.25
MAX_RESOLUTION_SCALE = 4.0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `render corpus` and `render one`."""
    parser = subparsers.add_parser(
        "render", help="render ground-truth images of puzzles at a judge station"
    )
    sub = parser.add_subparsers(dest="render_command", metavar="WHAT", required=True)

    corpus = sub.add_parser("corpus", help="regenerate the test corpus from a seed")
    corpus.add_argument("--seed", type=int, default=2026, help="master seed (default 2026)")
    corpus.add_argument("--out", type=Path, default=Path("tests/images"), help="output folder")
    corpus.add_argument("--count", type=int, default=210, help="number of captures (default 210)")
    corpus.add_argument("--jobs", type=int, default=1, help="parallel render processes")
    corpus.add_argument(
        "--rig", choices=RIG_CHOICES, default=None, help="every capture on this rig (default: mix)"
    )
    corpus.add_argument(
        "--hands",
        action="store_true",
        help="a hand over or beside the puzzle in every capture (an occlusion stress test)",
    )
    corpus.add_argument(
        "--resolution-scale",
        type=float,
        default=1.0,
        metavar="F",
        help="every camera in an output mode F times as wide and high (0.5: 640x360 for a "
        "1280x720 camera), the scenes unchanged: the same captures at another resolution",
    )
    corpus.set_defaults(func=run_corpus)

    one = sub.add_parser("one", help="render one capture of a given state")
    one.add_argument("--puzzle", required=True, help="333, 222 or pyram")
    one.add_argument("--moves", default="", help='notation applied from solved, e.g. "R U"')
    one.add_argument(
        "--turn",
        action="append",
        default=[],
        metavar="AXIS:PART=DEG",
        help="turn one part by DEG degrees on top of the moves, e.g. y:U=30 or U:tip=70",
    )
    one.add_argument("--style", choices=("stickered", "stickerless"), default="stickered")
    one.add_argument("--scheme", default="wca", help="wca, pastel, fluorescent, half-bright")
    one.add_argument("--rig", choices=RIG_CHOICES, default="rig2")
    one.add_argument("--clutter", default="", help="comma list of timer, cup, hand")
    one.add_argument("--logo", action="store_true", help="a logo on one centre")
    one.add_argument("--seed", type=int, default=1, help="seed for pose, lights and camera")
    one.add_argument("--id", default="one", help="file name stem of the capture")
    one.add_argument("--out", type=Path, required=True, help="output folder")
    one.set_defaults(func=run_one)


def run_corpus(args: argparse.Namespace) -> int:
    from judgecam.render.corpus import print_progress, render_corpus

    if args.count < 1 or args.jobs < 1:
        raise UsageError("--count and --jobs must be at least 1")
    if not MIN_RESOLUTION_SCALE <= args.resolution_scale <= MAX_RESOLUTION_SCALE:
        raise UsageError(
            f"--resolution-scale must be between {MIN_RESOLUTION_SCALE} and {MAX_RESOLUTION_SCALE}"
        )
    manifest = render_corpus(
        args.seed,
        args.out,
        args.count,
        args.jobs,
        print_progress,
        args.rig,
        args.hands,
        args.resolution_scale,
    )
    sys.stderr.write("\n")
    print(f"wrote {manifest['count']} captures and {args.out / 'manifest.json'}")
    return 0


def parse_turns(puzzle: str, specs: list[str]) -> dict[str, tuple[float, ...]]:
    """`AXIS:PART=DEG` strings to per-axis part angles (UsageError on anything unknown)."""
    from judgecam.puzzle import get_puzzle

    spec = get_puzzle(puzzle)
    turns: dict[str, list[float]] = {}
    for text in specs:
        try:
            where, value = text.split("=", 1)
            axis_name, part_name = where.split(":", 1)
            angle = float(value)
            axis = spec.axis(axis_name)
        except (ValueError, KeyError) as error:
            raise UsageError(f"bad --turn {text!r} ({error}); expected AXIS:PART=DEG") from None
        if part_name not in axis.part_names:
            raise UsageError(
                f"axis {axis_name} of {spec.name} has parts {', '.join(axis.part_names)}"
            )
        angles = turns.setdefault(axis.name, [0.0] * len(axis.part_names))
        angles[axis.part_names.index(part_name)] += angle
    return {a: tuple(v) for a, v in turns.items()}


def run_one(args: argparse.Namespace) -> int:
    from judgecam.puzzle import NotationError, UnknownPuzzleError, get_puzzle
    from judgecam.render.capture import CapturePlan, render_capture
    from judgecam.render.color import scheme_for
    from judgecam.render.gl import Renderer

    try:
        spec = get_puzzle(args.puzzle)
        scheme_for(spec.name, args.scheme)
    except (UnknownPuzzleError, KeyError) as error:
        raise UsageError(str(error).strip("'\"")) from None
    turns = parse_turns(spec.name, args.turn)
    clutter = tuple(c for c in args.clutter.split(",") if c)
    unknown = [c for c in clutter if c not in ("timer", "cup", "hand")]
    if unknown:
        raise UsageError(f"unknown clutter {', '.join(unknown)}; known: timer, cup, hand")
    cube_axes_off = [a for a, v in turns.items() if any(v)]
    if spec.name != "pyram" and len(cube_axes_off) > 1:
        raise UsageError("a cube can have only one axis off the grid at a time")
    plan = CapturePlan(
        capture_id=args.id,
        seed=args.seed,
        puzzle=spec.name,
        style=args.style,
        scheme=args.scheme,
        moves=args.moves,
        turns=turns,
        rig=args.rig,
        clutter=clutter,
        logo=args.logo,
    )
    renderer = Renderer()
    try:
        truth = render_capture(plan, renderer, args.out)
    except NotationError as error:
        raise UsageError(f"bad --moves: {error}") from None
    finally:
        renderer.release()
    views = ", ".join(v["image"] for v in truth["views"])
    print(f"{truth['verdict']} ({truth['moves_from_solved']} from solved): {views} in {args.out}")
    return 0
