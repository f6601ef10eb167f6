"""Synthetic attempts for trying the review page and for tests (`judgecam evidence demo DIR`).

The frames are drawn, not captured: a 3x3 face whose colours are known, a frame counter, and an
overlay (BGRA) that outlines the stickers — enough to see that stepping, overlays and decisions
work, with nothing pretending to be a real measurement.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgecam.device.evidence import AttemptInfo, EvidenceStore, Record

logger = logging.getLogger(__name__)

FACE_COLOURS_BGR = (
    (255, 255, 255),
    (0, 213, 255),
    (0, 88, 255),
    (60, 180, 0),
    (173, 70, 0),
    (30, 30, 200),
)


@dataclass(frozen=True)
class DemoShape:
    width: int = 640
    height: int = 360
    frames_per_camera: int = 12
    cameras: tuple[str, ...] = ("cam0", "cam1")
    verdict_index: int = 8


def draw_frame(shape: DemoShape, camera_index: int, frame_index: int) -> np.ndarray:
    """A BGR frame: a 3x3 face drifting slightly, with the frame number written on it."""
    import cv2

    image = np.full((shape.height, shape.width, 3), 40, np.uint8)
    cell = max(4, min(shape.width, shape.height) // 6)
    left = shape.width // 2 - 3 * cell // 2 + (frame_index % 5) - 2
    top = shape.height // 2 - 3 * cell // 2
    for row in range(3):
        for column in range(3):
            colour = FACE_COLOURS_BGR[(row * 3 + column + camera_index) % 6]
            x, y = left + column * cell, top + row * cell
            cv2.rectangle(image, (x + 2, y + 2), (x + cell - 3, y + cell - 3), colour, -1)
    if shape.height >= 60:
        cv2.putText(
            image,
            f"cam{camera_index} #{frame_index}",
            (10, shape.height - 14),
            cv2.FONT_HERSHEY_SIMPLEX,
            shape.height / 600,
            (230, 230, 230),
            1,
            cv2.LINE_AA,
        )
    return image


def draw_overlay(shape: DemoShape, frame_index: int) -> np.ndarray:
    """A transparent BGRA overlay outlining the face and marking its centre."""
    import cv2

    overlay = np.zeros((shape.height, shape.width, 4), np.uint8)
    cell = max(4, min(shape.width, shape.height) // 6)
    left = shape.width // 2 - 3 * cell // 2 + (frame_index % 5) - 2
    top = shape.height // 2 - 3 * cell // 2
    cv2.rectangle(overlay, (left, top), (left + 3 * cell, top + 3 * cell), (0, 255, 0, 255), 2)
    centre = (left + 3 * cell // 2, top + 3 * cell // 2)
    cv2.drawMarker(overlay, centre, (0, 0, 255, 255), cv2.MARKER_CROSS, cell // 2, 2)
    return overlay


def demo_result(verdict: str, attempt: int) -> dict[str, Any]:
    misalignment = 3.5 + 20.0 * (verdict == "+2")
    return {
        "verdict": verdict,
        "reasons": [
            f"largest face misalignment {misalignment:.1f}° "
            f"({'over' if verdict == '+2' else 'within'} the 45°/5° limits)",
            "all 6 faces one colour each",
        ],
        "measurements": {
            "misalignment_deg": misalignment,
            "faces_seen": 6,
            "timer_stop_ms": 11234 + attempt,
        },
        "confidences": {"colours": 0.97, "misalignment": 0.9},
        "times": {"timer_stopped_utc": "demo"},
        "model_hashes": {"facelets.onnx": "0" * 64},
        "calibration_hash": "1" * 64,
        "camera_settings": {"exposure_us": 8000, "gain": 1.0},
        "demo": True,
    }


def write_demo_attempt(
    store: EvidenceStore,
    info: AttemptInfo,
    shape: DemoShape,
    *,
    verdict: str = "solved",
    overlays: bool = True,
) -> Record:
    """One synthetic attempt with every kind of file a real one has."""
    base_ns = 1_700_000_000_000_000_000 + 10**9 * 3600 * info.round + 10**9 * info.attempt
    with store.begin_attempt(info) as writer:
        for camera_index, camera in enumerate(shape.cameras):
            for frame_index in range(shape.frames_per_camera):
                stamp = base_ns + frame_index * 33_333_333
                writer.add_frame(
                    camera,
                    stamp,
                    draw_frame(shape, camera_index, frame_index),
                    verdict_frame=frame_index == shape.verdict_index,
                )
                if overlays and frame_index >= shape.verdict_index - 2:
                    writer.add_overlay(camera, stamp, draw_overlay(shape, frame_index))
        writer.add_file("notes.txt", f"demo attempt {info.attempt}\n".encode())
        return writer.commit(demo_result(verdict, info.attempt))


def fill_demo_store(
    store: EvidenceStore,
    competitors: Sequence[str],
    *,
    event: str = "333",
    rounds: int = 1,
    attempts: int = 2,
    shape: DemoShape = DemoShape(),
    competition: str = "DemoOpen2026",
) -> list[Record]:
    records = []
    for round_number in range(1, rounds + 1):
        for competitor in competitors:
            for attempt in range(1, attempts + 1):
                verdict = "+2" if (attempt + len(competitor)) % 3 == 0 else "solved"
                info = AttemptInfo(competition, competitor, event, round_number, attempt)
                records.append(write_demo_attempt(store, info, shape, verdict=verdict))
    return records
