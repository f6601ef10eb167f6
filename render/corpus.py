"""The committed corpus: a deterministic plan of captures from one seed, rendered in parallel,
with a manifest listing every capture, its verdict and tags.

The plan spreads verdicts over solved, +2 and DNF, puts many misalignments within 5 degrees of
the limit on both sides, and mixes puzzles, styles, schemes, rigs, clutter, logos and damage.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from judgecam.render.capture import CapturePlan

logger = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
CUBE_FACES = "RLUDFB"
PYRAMINX_TURNS = "ULRBulrb"


def _rng(seed: int, index: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, index]))


def _capture_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index, 1]).generate_state(1)[0])


def _cube_move(rng: np.random.Generator, wide: bool = False) -> str:
    face = str(rng.choice(list(CUBE_FACES)))
    suffix = str(rng.choice(["", "'", "2"]))
    return f"{face}w{suffix}" if wide else f"{face}{suffix}"


def _pyraminx_move(rng: np.random.Generator) -> str:
    return str(rng.choice(list(PYRAMINX_TURNS))) + str(rng.choice(["", "'"]))


def _signed(rng: np.random.Generator, low: float, high: float) -> float:
    return float(rng.uniform(low, high)) * float(rng.choice([-1.0, 1.0]))


def _angle(rng: np.random.Generator, limit: float, beyond: bool, near: bool) -> float:
    """A misalignment angle: within or beyond `limit`, near it (within 5 degrees) or not."""
    if near:
        return (
            _signed(rng, limit + 0.2, limit + 5.0)
            if beyond
            else _signed(rng, limit - 5.0, limit - 0.2)
        )
    return _signed(rng, limit + 5.0, 2 * limit - 8.0) if beyond else _signed(rng, 2.0, limit - 5.0)


def _cube_turns(
    rng: np.random.Generator, layers: int, part: int, angle: float, axis: str
) -> dict[str, tuple[float, ...]]:
    angles = [0.0] * layers
    angles[part] = angle
    return {axis: tuple(angles)}


def plan_cube(
    rng: np.random.Generator, puzzle: str, intent: str, near: bool
) -> tuple[str, dict[str, tuple[float, ...]]]:
    """Moves and part angles for a cube aiming at `intent` (solved, +2, DNF)."""
    layers = 3 if puzzle == "333" else 2
    axis = str(rng.choice(["x", "y", "z"]))
    outer = int(rng.choice([0, layers - 1]))
    misalign = bool(rng.random() < (0.85 if near else 0.6))
    turns: dict[str, tuple[float, ...]] = {}
    if intent == "solved":
        moves = str(rng.choice(["", "", "", "x", "y2", "z' y"]))
        if misalign:
            part = int(rng.integers(layers))
            turns = _cube_turns(rng, layers, part, _angle(rng, 45.0, False, near), axis)
    elif intent == "+2":
        if misalign and rng.random() < 0.55:  # the one move is a misalignment past the limit
            moves = ""
            turns = _cube_turns(rng, layers, outer, _angle(rng, 45.0, True, near), axis)
        else:
            moves = _cube_move(rng, wide=puzzle == "333" and rng.random() < 0.15)
            if misalign:
                turns = _cube_turns(rng, layers, outer, _angle(rng, 45.0, False, near), axis)
    else:
        kind = rng.random()
        if kind < 0.45:
            moves = " ".join(_cube_move(rng) for _ in range(int(rng.integers(2, 21))))
            if misalign:
                turns = _cube_turns(
                    rng, layers, outer, _angle(rng, 45.0, bool(rng.random() < 0.5), near), axis
                )
        elif kind < 0.75:  # one move plus a second pair past the limit
            moves = _cube_move(rng)
            turns = _cube_turns(rng, layers, outer, _angle(rng, 45.0, True, near), axis)
        elif puzzle == "333" and kind < 0.9:  # a middle slice out: two pairs
            moves = ""
            turns = _cube_turns(rng, layers, 1, _angle(rng, 45.0, True, near), axis)
        else:  # both outer layers of one axis out, opposite ways
            moves = ""
            angles = [0.0] * layers
            angles[0] = _angle(rng, 45.0, True, near)
            angles[-1] = _angle(rng, 45.0, True, False)
            turns = {axis: tuple(angles)}
    return moves, turns


def plan_pyraminx(
    rng: np.random.Generator, intent: str, near: bool
) -> tuple[str, dict[str, tuple[float, ...]]]:
    """Moves and part angles (base, layer, tip per axis) for a Pyraminx aiming at `intent`."""
    axes = ["U", "L", "R", "B"]
    angles = {a: [0.0, 0.0, 0.0] for a in axes}
    layer_axis = str(rng.choice(axes))
    # tips: each may be a little off; one may be the interesting one
    for a in axes:
        if rng.random() < 0.3:
            angles[a][2] = _signed(rng, 2.0, 30.0)
    moves = ""
    if intent == "solved":
        if rng.random() < 0.5:
            tip_axis = str(rng.choice(axes))
            angles[tip_axis][2] = _angle(rng, 60.0, False, near)
        else:
            turn = _angle(rng, 60.0, False, near)
            angles[layer_axis][1] = angles[layer_axis][2] = turn
    elif intent == "+2":
        if rng.random() < 0.5:
            moves = _pyraminx_move(rng)
            if rng.random() < 0.5:
                turn = _angle(rng, 60.0, False, near)
                angles[layer_axis][1] += turn
                angles[layer_axis][2] += turn
        elif rng.random() < 0.5:
            tip_axis = str(rng.choice(axes))
            angles[tip_axis][2] = _angle(rng, 60.0, True, near)
        else:
            turn = _angle(rng, 60.0, True, near)
            angles[layer_axis][1] = turn
            angles[layer_axis][2] += turn
    else:
        if rng.random() < 0.5:
            moves = " ".join(_pyraminx_move(rng) for _ in range(int(rng.integers(2, 12))))
        else:
            moves = _pyraminx_move(rng)
            tip_axis = str(rng.choice(axes))
            angles[tip_axis][2] = _angle(rng, 60.0, True, near)
    return moves, {a: tuple(v) for a, v in angles.items() if any(v)}


def _with_hand(clutter: tuple[str, ...]) -> tuple[str, ...]:
    """`clutter` with a hand among it."""
    return clutter if "hand" in clutter else ("hand", *clutter)


def plan_corpus(
    seed: int,
    count: int,
    rig: str | None = None,
    hands: bool = False,
    resolution_scale: float = 1.0,
) -> list[CapturePlan]:
    """`count` capture plans from `seed` (deterministic; the i-th plan depends on seed and i
    only, so a larger corpus starts with the same captures as a smaller one). `rig` puts every
    capture in front of that camera rig instead of the planned mix, `hands` a hand over or
    beside the puzzle in every capture (an occlusion stress test), and `resolution_scale`
    every camera in an output mode that many times as wide and high; the rest of each plan is
    unchanged, so such sets can be compared on the same puzzles."""
    plans = []
    for index in range(count):
        rng = _rng(seed, index)
        capture_id = f"c{index:04d}"
        cseed = _capture_seed(seed, index)
        clutter: tuple[str, ...] = ()
        if index % 45 == 44:  # a few empty mats: the judge must say "review"
            clutter = ("timer",) if rng.random() < 0.5 else ()
            clutter = _with_hand(clutter) if hands else clutter
            plans.append(
                CapturePlan(
                    capture_id,
                    cseed,
                    "none",
                    rig=rig or "rig2",
                    clutter=clutter,
                    resolution_scale=resolution_scale,
                )
            )
            continue
        kind = rng.choice(["333", "333-stickerless", "222", "pyram"], p=[0.4, 0.15, 0.22, 0.23])
        puzzle = "333" if str(kind).startswith("333") else str(kind)
        style = "stickerless" if kind == "333-stickerless" else "stickered"
        intent = ["solved", "+2", "DNF"][index % 3]
        near = bool(rng.random() < 0.5)
        if puzzle == "pyram":
            moves, turns = plan_pyraminx(rng, intent, near)
            schemes = ["wca", "wca", "wca", "pastel", "fluorescent"]
        else:
            moves, turns = plan_cube(rng, puzzle, intent, near)
            schemes = ["wca", "wca", "wca", "pastel", "fluorescent", "half-bright"]
        roll = rng.random()
        if roll < 0.14:
            clutter = ("hand",) if rng.random() < 0.6 else ("hand", "timer")
        elif roll < 0.32:
            clutter = [("timer",), ("cup",), ("timer", "cup")][int(rng.integers(3))]
        clutter = _with_hand(clutter) if hands else clutter
        planned_rig = str(rng.choice(["rig2", "top", "oblique"], p=[0.8, 0.1, 0.1]))
        missing = 0
        damage_roll = rng.random()
        if damage_roll < 0.04:
            missing = 1
        elif damage_roll < 0.055:
            missing = 2
        plans.append(
            CapturePlan(
                capture_id=capture_id,
                seed=cseed,
                puzzle=puzzle,
                style=style,
                scheme=str(rng.choice(schemes)),
                moves=moves,
                turns=turns,
                rig=rig or planned_rig,
                clutter=clutter,
                logo=bool(puzzle == "333" and rng.random() < 0.15),
                missing=missing,
                resolution_scale=resolution_scale,
            )
        )
    return plans


_WORKER: dict[str, Any] = {}


def _worker_render(job: tuple[CapturePlan, str]) -> dict[str, Any]:
    from judgecam.render.capture import render_capture
    from judgecam.render.gl import Renderer

    plan, out = job
    if "renderer" not in _WORKER:
        _WORKER["renderer"] = Renderer()
    truth = render_capture(plan, _WORKER["renderer"], Path(out))
    return manifest_entry(truth)


def manifest_entry(truth: dict[str, Any]) -> dict[str, Any]:
    """One manifest row from a capture's truth."""
    return {
        "id": truth["id"],
        "puzzle": truth["puzzle"],
        "style": truth["style"],
        "rig": truth["rig"],
        "views": [v["image"] for v in truth["views"]],
        "verdict": truth["verdict"],
        "moves_from_solved": truth["moves_from_solved"],
        "tags": truth["tags"],
        "truth": f"{truth['id']}.json",
    }


def _run(jobs: list[tuple[CapturePlan, str]], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1:
        for job in jobs:
            yield _worker_render(job)
        return
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        yield from pool.imap_unordered(_worker_render, jobs)


def render_corpus(
    seed: int,
    out: Path,
    count: int,
    workers: int = 1,
    progress: Callable[[str], None] | None = None,
    rig: str | None = None,
    hands: bool = False,
    resolution_scale: float = 1.0,
) -> dict[str, Any]:
    """Render `count` planned captures into `out` and write the manifest; return it."""
    out.mkdir(parents=True, exist_ok=True)
    plans = plan_corpus(seed, count, rig, hands, resolution_scale)
    if workers > 1:  # one llvmpipe thread per worker: the workers already share the cores
        os.environ.setdefault("LP_NUM_THREADS", "1")
    jobs = [(plan, str(out)) for plan in plans]
    entries = []
    start = time.monotonic()
    for done, entry in enumerate(_run(jobs, workers), start=1):
        entries.append(entry)
        if progress is not None:
            elapsed = time.monotonic() - start
            eta = elapsed / done * (len(jobs) - done)
            progress(f"rendered {done}/{len(jobs)} captures ({elapsed:.0f} s, ~{eta:.0f} s left)")
    entries.sort(key=lambda e: e["id"])
    manifest = {
        "schema_version": 1,
        "generator": "judgecam render corpus",
        "seed": seed,
        "count": len(entries),
        "truth_schema": "render/truth.schema.json",
        "captures": entries,
    }
    (out / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def print_progress(line: str) -> None:
    """A single updating progress line on stderr."""
    sys.stderr.write("\r" + line + " " * 4)
    sys.stderr.flush()
