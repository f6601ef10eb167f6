"""`check` on another renderer's images: accuracy where nothing was tuned.

`python -m judgecam.vision.evaluate_synthetic N --seed S [--rig-poses] [--cameras 3] [--hard]`
judges N captures drawn by `vision/synthetic.py` (flat colours, a black body, no lamps, no
texture: unlike the corpus renderer in every way but the puzzle's geometry) and counts right
verdicts, reviews and wrong ones. Each capture is a 2x2x2 or a 3x3x3 (alternately), solved, one
move away or scrambled by 2-5 moves, one outer layer of a random axis out of line by up to 44
degrees (within the limit: whole turns are in the moves), seen by cameras spaced evenly around
it at 25-50 degrees of elevation and a random distance and yaw. `--hard` blurs more, lays a
light gradient over each view and a colour cast over the capture. The truth is the rules
engine's verdict on the exact state and angles.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle.observation import Observation, PairObservation
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.verdict import judge
from judgecam.vision.camera import Intrinsics
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import check
from judgecam.vision.synthetic import DEFAULT_SCHEME_BGR, Turn, render_view

FACES = "URFDLB"


@dataclass(frozen=True)
class SyntheticCapture:
    """One drawn capture and its truth."""

    puzzle: str
    moves: str
    turn: Turn
    truth: str
    images: tuple[NDArray[np.uint8], ...]
    intrinsics: tuple[Intrinsics, ...]
    world_from_camera: tuple[NDArray[np.float64], ...]


@dataclass(frozen=True)
class SyntheticScore:
    """A capture's truth and verdict."""

    index: int
    puzzle: str
    moves: str
    turn: Turn
    truth: str
    verdict: str
    review_because: tuple[str, ...]

    @property
    def outcome(self) -> str:
        """right, review or wrong."""
        if self.verdict == self.truth:
            return "right"
        return "review" if self.verdict == "review" else "wrong"


def _moves(rng: np.random.Generator) -> str:
    """Solved (40 %), one move (30 %) or 2-5 moves, never one face twice in a row."""
    kind = rng.choice(3, p=[0.4, 0.3, 0.3])
    count = 0 if kind == 0 else 1 if kind == 1 else int(rng.integers(2, 6))
    moves: list[str] = []
    while len(moves) < count:
        face = FACES[int(rng.integers(6))]
        if moves and moves[-1][0] == face:
            continue
        moves.append(face + ("", "'", "2")[int(rng.integers(3))])
    return " ".join(moves)


def _truth(puzzle: str, colors: tuple[str, ...], turn: Turn) -> str:
    """The rules engine's verdict on the exact state and layer angles."""
    model = puzzle_model(puzzle)
    pairs = []
    for index, axis in enumerate(model.axes):
        for lower, upper in axis.pairs:
            angle = turn.part_angles[upper] - turn.part_angles[lower] if index == turn.axis else 0.0
            pairs.append(PairObservation(axis.name, (lower, upper), angle, 0.0))
    return judge(get_puzzle(puzzle), Observation(puzzle, colors, tuple(pairs))).verdict


def draw_capture(
    index: int, rng: np.random.Generator, cameras: int = 3, hard: bool = False
) -> SyntheticCapture:
    """The `index`-th capture of a run (its puzzle alternates; everything else from `rng`)."""
    puzzle = ("222", "333")[index % 2]
    spec, model = get_puzzle(puzzle), puzzle_model(puzzle)
    face_color = dict(spec.default_colors)
    bgr = {face_color[face]: DEFAULT_SCHEME_BGR[face] for face in face_color}
    moves = _moves(rng)
    state = spec.solved_state().apply(moves) if moves else spec.solved_state()
    colors = np.array([bgr[color] for color in state.colors], dtype=np.uint8)
    axis = int(rng.integers(len(model.axes)))
    parts = len(model.axes[axis].part_names)
    angles = [0.0] * parts
    limit = 25.0 if rng.random() < 0.6 else 44.0
    angles[0 if rng.random() < 0.5 else parts - 1] = float(rng.uniform(-limit, limit))
    turn = Turn(axis, tuple(angles))
    cast = rng.uniform(0.85, 1.15, 3) if hard else np.ones(3)
    yaw = rng.uniform(0.0, 360.0)
    images, intrinsics, poses = [], [], []
    for camera in range(cameras):
        azimuth = np.deg2rad(yaw + 360.0 / cameras * camera + rng.uniform(-10.0, 10.0))
        elevation = np.deg2rad(rng.uniform(25.0, 50.0))
        distance = rng.uniform(260.0, 420.0) * spec.edge_mm / 57.0
        eye = (
            distance * np.cos(elevation) * np.cos(azimuth),
            distance * np.sin(elevation),
            distance * np.cos(elevation) * np.sin(azimuth),
        )
        background = tuple(int(v) for v in rng.integers(60, 200, 3))
        view = render_view(
            model,
            colors,
            eye,
            turn=turn,
            background=(background[0], background[1], background[2]),
            blur_sigma=1.5 if hard else 0.8,
            seed=int(rng.integers(1 << 30)),
        )
        image = view.image
        if hard:
            height, width = image.shape[:2]
            slope_x, slope_y = rng.uniform(-1.0, 1.0, 2)
            rows, columns = np.mgrid[0:height, 0:width]
            across = slope_x * (columns / width - 0.5) + slope_y * (rows / height - 0.5)
            light = 0.9 + 0.6 * across
            image = np.clip(image * light[..., None] * cast, 0, 255).astype(np.uint8)
        camera_from_world = np.eye(4)
        camera_from_world[:3, :3] = cv2.Rodrigues(view.rvec)[0]
        camera_from_world[:3, 3] = view.tvec
        images.append(image)
        intrinsics.append(Intrinsics(view.camera_matrix, np.zeros(5)))
        poses.append(np.asarray(np.linalg.inv(camera_from_world), dtype=np.float64))
    return SyntheticCapture(
        puzzle,
        moves,
        turn,
        _truth(puzzle, state.colors, turn),
        tuple(images),
        tuple(intrinsics),
        tuple(poses),
    )


def evaluate_synthetic(
    count: int, seed: int, rig_poses: bool = False, cameras: int = 3, hard: bool = False
) -> list[SyntheticScore]:
    """Draw and judge `count` captures (the same ones for the same seed, cameras and hard)."""
    rng = np.random.default_rng(seed)
    scores = []
    for index in range(count):
        capture = draw_capture(index, rng, cameras, hard)
        result = check(
            [(f"cam{k}", image) for k, image in enumerate(capture.images)],
            capture.puzzle,
            capture.intrinsics,
            world_from_camera=capture.world_from_camera if rig_poses else None,
        )
        scores.append(
            SyntheticScore(
                index,
                capture.puzzle,
                capture.moves,
                capture.turn,
                capture.truth,
                result.verdict,
                result.review_because,
            )
        )
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judgecam.vision.evaluate_synthetic", description=__doc__
    )
    parser.add_argument("count", type=int, help="captures to draw and judge")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rig-poses", action="store_true", help="align views by camera poses")
    parser.add_argument("--cameras", type=int, default=3)
    parser.add_argument("--hard", action="store_true", help="blur, uneven light, a colour cast")
    parser.add_argument("--details", action="store_true", help="one line per capture")
    args = parser.parse_args(argv)
    if args.count < 1 or args.cameras < 1:
        parser.error("count and --cameras must be at least 1")
    logging.basicConfig(level=logging.WARNING)
    scores = evaluate_synthetic(args.count, args.seed, args.rig_poses, args.cameras, args.hard)
    if args.details:
        for s in scores:
            angle = max(s.turn.part_angles, key=abs)
            print(
                f"s{s.index:03d} {s.puzzle} moves={s.moves or '-':18s} "
                f"turn=axis{s.turn.axis} {angle:+6.1f} truth={s.truth:6s} got={s.verdict:6s} "
                f"{s.outcome} {'; '.join(s.review_because)[:160]}"
            )
    tally = Counter(s.outcome for s in scores)
    wrong = [f"s{s.index:03d} {s.truth}->{s.verdict}" for s in scores if s.outcome == "wrong"]
    print(
        f"captures: {len(scores)}  right: {tally['right']}  review: {tally['review']}  "
        f"wrong: {tally['wrong']} {wrong}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
