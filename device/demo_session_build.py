"""Build the bundled demo session (`device/demo_session/`) from the rendered corpus.

    python -m judgecam.device.demo_session_build [--corpus tests/images] [--out DIR]

Four attempts at a two-camera station, from renders with known ground truth: a solved 3x3x3,
one at +2, one DNF and one with the puzzle partly hidden (what vision should send to review).
Each attempt is the turning (a hand over the puzzle), the timer stop, the puzzle at rest and
the judge's recorded confirmation (`judgecam.device.session_synth`). Images are scaled to 3/4
(1152x648 or 960x540) so the session stays small enough to ship (under 3 MB).

Every corpus capture was rendered with its own rig (camera positions and lenses differ), so the
session records, per camera, the first attempt's intrinsics and pose (the truth's
`world_from_camera`) and a recalibration before each later attempt, as a station whose cameras
were moved and calibrated again between attempts would.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2

from judgecam.device.session import (
    CameraIntrinsics,
    Pose,
    Recalibration,
    Session,
    write_session,
)
from judgecam.device.session_synth import SynthAttempt, SynthTiming, build_session

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "demo_session"
DEFAULT_CORPUS = HERE.parent / "tests" / "images"
SCALE = 0.75  # at 1/2, vision left views out as loose fits far more often than at 3/4
TIMING = SynthTiming(
    fps=10.0,
    idle_frames=1,
    turning_frames=4,
    trigger_after=2,
    rest_frames=8,
    decision_after_rest=7,
    noise_sigma=0.0,
)
CAMERAS = ("cam0", "cam1")


def choose_captures(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """In manifest order, the first two-camera 3x3x3 capture of each verdict (solved, +2, DNF),
    then the first one tagged "occluded" (what vision should send to review).

    The rule reads only the manifest's puzzle, rig, verdict and tags, never vision's answer."""
    captures = [
        c
        for c in manifest["captures"]
        if c["puzzle"] == "333" and c["rig"] == "rig2" and len(c["views"]) == 2
    ]
    chosen: list[Mapping[str, Any]] = []
    for verdict in ("solved", "+2", "DNF"):
        chosen.append(next(c for c in captures if c["verdict"] == verdict and c not in chosen))
    chosen.append(next(c for c in captures if "occluded" in c["tags"] and c not in chosen))
    return chosen


def _camera_views(
    corpus: Path, capture: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The capture's images (scaled) and its truth's view records, by camera."""
    truth = json.loads((corpus / capture["truth"]).read_text())
    images, views = {}, {}
    for view in truth["views"]:
        image = cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR)
        if image is None:
            raise FileNotFoundError(corpus / view["image"])
        images[view["camera"]] = cv2.resize(
            image, None, fx=SCALE, fy=SCALE, interpolation=cv2.INTER_AREA
        )
        views[view["camera"]] = view
    return images, views


def _intrinsics(view: Mapping[str, Any]) -> CameraIntrinsics:
    """A truth view's intrinsics (for the rendered size; the judge scales them to the frame)."""
    return CameraIntrinsics(
        tuple(tuple(float(v) for v in row) for row in view["camera_matrix"]),
        tuple(float(v) for v in view["dist_coeffs"]),
        (int(view["image_size"][0]), int(view["image_size"][1])),
    )


def _pose(view: Mapping[str, Any]) -> Pose:
    """A truth view's 4x4 world-from-camera (the world is the mat, mm, OpenCV camera axes)."""
    return tuple(tuple(float(v) for v in row) for row in view["world_from_camera"])


def _recalibration_times(session: Session) -> list[int]:
    """For each attempt after the first: its first frame after the previous attempt ended."""
    frames = sorted({f.timestamp_ns for frames in session.cameras.values() for f in frames})
    times = []
    for previous in session.attempts[:-1]:
        end = previous.trigger.timestamp_ns
        if previous.decision is not None:
            end = max(end, previous.decision.timestamp_ns)
        times.append(next(t for t in frames if t > end))
    return times


def build_demo(corpus: Path = DEFAULT_CORPUS, out: Path = DEFAULT_OUT) -> Session:
    """(Re)build the demo session from the corpus; returns it."""
    manifest = json.loads((corpus / "manifest.json").read_text())
    captures = choose_captures(manifest)
    attempts: list[SynthAttempt] = []
    rigs: list[dict[str, Any]] = []
    for number, capture in enumerate(captures, start=1):
        images, views = _camera_views(corpus, capture)
        rigs.append(views)
        attempts.append(
            SynthAttempt(
                final_views={c: images[c] for c in CAMERAS},
                competitor_id=f"2026DEMO{number:02d}",
                event="333",
                round=1,
                attempt=number,
                expected_verdict=str(capture["verdict"]),
                displayed_time_ms=8_000 + 1_237 * number,
            )
        )
    if out.exists():
        shutil.rmtree(out)
    session = build_session(
        out,
        attempts,
        TIMING,
        competition="judgecam Demo Open 2026",
        station="demo-table",
        image_format=".jpg",
        jpeg_quality=85,
        seed=2026,
    )
    times = _recalibration_times(session)
    session = dataclasses.replace(
        session,
        intrinsics={camera: _intrinsics(rigs[0][camera]) for camera in CAMERAS},
        poses={camera: _pose(rigs[0][camera]) for camera in CAMERAS},
        recalibrations={
            camera: tuple(
                Recalibration(at_ns, _intrinsics(rig[camera]), _pose(rig[camera]))
                for at_ns, rig in zip(times, rigs[1:], strict=True)
            )
            for camera in CAMERAS
        },
    )
    write_session(session)
    (out / "SOURCES.txt").write_text(
        "Built by `python -m judgecam.device.demo_session_build` from the rendered corpus in\n"
        "tests/images (captures " + ", ".join(str(c["id"]) for c in captures) + ").\n"
        "Each camera's intrinsics and pose per attempt come from that capture's truth file.\n",
        encoding="utf-8",
    )
    return session


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    session = build_demo(args.corpus, args.out)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(
        f"demo session: {len(session.attempts)} attempts, "
        f"{sum(len(f) for f in session.cameras.values())} frames, {size / 1e6:.1f} MB in {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
