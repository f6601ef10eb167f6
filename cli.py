"""The `judgecam` command line: one console command, a subcommand per job.

Each subcommand lives beside the code it drives, in a module that exposes

    def register(subparsers: argparse._SubParsersAction) -> None

and sets `func(args) -> int` as the parser default. Modules are imported when the command line
is built; keep their top-level imports light (import heavy modules inside `func`).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from judgecam import __version__

#: Modules that register subcommands, in the order `judgecam --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "judgecam.puzzle.cli",
    "judgecam.calibration.cli",
    "judgecam.vision.colors_cli",
    "judgecam.vision.check_cli",
    "judgecam.device.evidence_cli",
    "judgecam.device.station_cli",
    "judgecam.render.cli",
)


class UsageError(Exception):
    """Unusable input (missing file, bad notation, unknown puzzle): exit 2 with one line."""


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="judgecam",
        description="A camera judge for twisty puzzles: solved, +2, DNF or review.",
    )
    parser.add_argument("--version", action="version", version=f"judgecam {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; return its exit status (2 with a one-line message on bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except UsageError as error:
        print(f"judgecam {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"judgecam {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`judgecam check ... --json | head`): not our error. Point stdout
        # at /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
