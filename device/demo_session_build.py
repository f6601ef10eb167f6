"""Build the bundled demo session (`device/demo_session/`) from the rendered corpus.

    python -m judgecam.device.demo_session_build [--corpus tests/images] [--out DIR]

Four attempts at a two-camera station, from renders with known ground truth: a solved 3x3x3,
one at +2, one DNF and one with the puzzle partly hidden (what vision should send to review).
Each attempt is the turning (a hand over the puzzle), the timer stop, the puzzle at rest and
the judge's recorded confirmation (`judgecam.device.session_synth`). Images are halved to
768x432 so the session stays small enough to ship (about 2 MB).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2

from judgecam.device.session import CameraIntrinsics, Session, write_session
from judgecam.device.session_synth import SynthAttempt, SynthTiming, build_session

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "demo_session"
DEFAULT_CORPUS = HERE.parent / "tests" / "images"
SCALE = 0.5
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
    """The first two-camera 3x3x3 capture of each verdict, then one with the puzzle occluded."""
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
    truth = json.loads((corpus / capture["truth"]).read_text())
    images, calibration = {}, {}
    for view in truth["views"]:
        image = cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR)
        if image is None:
            raise FileNotFoundError(corpus / view["image"])
        images[view["camera"]] = cv2.resize(
            image, None, fx=SCALE, fy=SCALE, interpolation=cv2.INTER_AREA
        )
        calibration[view["camera"]] = view
    return images, calibration


def build_demo(corpus: Path = DEFAULT_CORPUS, out: Path = DEFAULT_OUT) -> Session:
    """(Re)build the demo session from the corpus; returns it."""
    manifest = json.loads((corpus / "manifest.json").read_text())
    captures = choose_captures(manifest)
    attempts: list[SynthAttempt] = []
    calibrations: dict[str, Any] = {}
    for number, capture in enumerate(captures, start=1):
        images, calibration = _camera_views(corpus, capture)
        calibrations = calibrations or calibration
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
    # One calibration per camera, as a real station has (the first capture's rig).
    intrinsics = {
        camera: CameraIntrinsics(
            tuple(tuple(float(v) for v in row) for row in view["camera_matrix"]),
            tuple(float(v) for v in view["dist_coeffs"]),
            (int(view["image_size"][0]), int(view["image_size"][1])),
        )
        for camera, view in calibrations.items()
    }
    session = Session(
        session.root,
        session.competition,
        session.station,
        session.cameras,
        session.attempts,
        session.camera_losses,
        intrinsics,
    )
    write_session(session)
    (out / "SOURCES.txt").write_text(
        "Built by `python -m judgecam.device.demo_session_build` from the rendered corpus in\n"
        "tests/images (captures " + ", ".join(str(c["id"]) for c in captures) + ").\n",
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
