"""Build recorded sessions from still views: hands turning the puzzle, the stop, the puzzle at rest.

The demo session and the replay tests need recordings with a known answer. Each attempt is
made from views of the puzzle as it will lie when judged (for the demo, rendered images of the
corpus with their ground truth) and, optionally, views of it while it is still being turned:

    turning (a "hand" moves over the puzzle, the view shifts) -> timer stops (trigger, while the
    hands are leaving) -> at rest (the final views, with fresh sensor noise each frame) ->
    the judge's recorded decision

so a station that judged before the puzzle was at rest would see the wrong views.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from judgecam.device.session import (
    RecordedAttempt,
    RecordedDecision,
    RecordedFrame,
    RecordedTrigger,
    Session,
    write_session,
)
from judgecam.device.sources import Frame
from judgecam.device.station import JudgeResult

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SynthAttempt:
    """One attempt to synthesise: camera name -> final view (BGR), and what to record."""

    final_views: dict[str, np.ndarray]
    competitor_id: str
    event: str = "333"
    round: int = 1
    attempt: int = 1
    turning_views: dict[str, np.ndarray] | None = None  # the puzzle before its last move
    expected_verdict: str | None = None
    decision: str | None = "confirm"  # "confirm", "override" or None (no decision recorded)
    override_verdict: str | None = None
    displayed_time_ms: int | None = None


@dataclass(frozen=True)
class SynthTiming:
    """Frame counts of each phase of an attempt (at `fps`)."""

    fps: float = 10.0
    idle_frames: int = 3
    turning_frames: int = 6
    trigger_after: int = 4  # the trigger comes this many turning frames in
    rest_frames: int = 10
    decision_after_rest: int = 8  # the judge decides this many frames into the rest
    noise_sigma: float = 2.0


def hand_frame(view: np.ndarray, phase: float, rng: np.random.Generator) -> np.ndarray:
    """A view with a skin-coloured "hand" over part of it and a small shake (phase in 0..1)."""
    height, width = view.shape[:2]
    shift = np.array(
        [[1, 0, 3.0 * np.sin(7 * phase)], [0, 1, 2.0 * np.cos(5 * phase)]], dtype=np.float32
    )
    frame = cv2.warpAffine(view, shift, (width, height), borderMode=cv2.BORDER_REPLICATE)
    centre = (int(width * (0.25 + 0.5 * phase)), int(height * (0.55 + 0.2 * np.sin(3 * phase))))
    axes = (max(2, width // 6), max(2, height // 5))
    cv2.ellipse(frame, centre, axes, 30.0 * phase, 0, 360, (90, 130, 190), -1)
    return noisy(frame, 2.0, rng)


def noisy(view: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """The view with Gaussian sensor noise."""
    noise = rng.normal(0.0, sigma, view.shape)
    return np.clip(view.astype(np.float64) + noise, 0, 255).astype(np.uint8)


#: Colours painted on synthetic views to stand for a verdict (BGR), see `CodedJudge`.
VERDICT_CODES: dict[str, tuple[int, int, int]] = {
    "solved": (40, 190, 40),
    "+2": (30, 210, 230),
    "DNF": (40, 40, 200),
    "review": (200, 90, 30),
}


def coded_view(verdict: str, size: tuple[int, int] = (320, 240)) -> np.ndarray:
    """A synthetic view whose "puzzle" (a square in the middle) is painted in a verdict's code."""
    width, height = size
    view = np.full((height, width, 3), 70, np.uint8)
    view[:, : width // 2] = 95  # some structure on the table
    x0, y0 = width * 3 // 8, height * 3 // 8
    view[y0 : height - y0, x0 : width - x0] = VERDICT_CODES[verdict]
    return view


class CodedJudge:
    """A stand-in judge for tests and benchmarks of the loop (not of vision): reads the verdict
    painted by `coded_view` from the centre of the first view. A station that judged too early
    (while a hand or an earlier state was in view) would read a different code."""

    def __init__(self, work_s: float = 0.0) -> None:
        self.calls = 0
        self.work_s = work_s

    def judge(self, views: Sequence[Frame], event: str = "333") -> JudgeResult:
        self.calls += 1
        image = views[0].image
        height, width = image.shape[:2]
        patch = image[height // 2 - 4 : height // 2 + 4, width // 2 - 4 : width // 2 + 4]
        colour = patch.reshape(-1, 3).mean(axis=0)
        distances = {v: float(np.abs(colour - VERDICT_CODES[v]).sum()) for v in VERDICT_CODES}
        verdict = min(distances, key=lambda v: distances[v])
        if distances[verdict] > 60:
            return JudgeResult("review", (f"no verdict code at the centre ({colour.round()})",))
        reasons = () if verdict != "review" else ("coded review",)
        return JudgeResult(verdict, reasons, {"colour": [round(float(c), 1) for c in colour]})


def build_session(
    root: Path,
    attempts: Sequence[SynthAttempt],
    timing: SynthTiming = SynthTiming(),
    competition: str = "Demo Open",
    station: str = "demo-table",
    image_format: str = ".jpg",
    jpeg_quality: int = 90,
    seed: int = 0,
    losses: Sequence[tuple[str, int]] = (),
) -> Session:
    """Write the frames and session.json of a synthetic session into `root`."""
    from judgecam.device.session import CameraLoss

    rng = np.random.default_rng(seed)
    period_ns = round(1e9 / timing.fps)
    cameras = sorted(attempts[0].final_views)
    recorded: dict[str, list[RecordedFrame]] = {c: [] for c in cameras}
    for camera in cameras:
        (root / camera).mkdir(parents=True, exist_ok=True)
    recorded_attempts = []
    tick = 0
    idle_views = {c: np.full_like(attempts[0].final_views[c], 60) for c in cameras}
    written_views: list[dict[str, np.ndarray]] = []  # keeps arrays alive: ids stay unique

    written: dict[tuple[str, int], str] = {}
    params = [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality] if image_format == ".jpg" else []

    def emit(views: dict[str, np.ndarray], reuse: bool = False) -> int:
        """One frame per camera; with `reuse`, a view written before (the same array, kept
        alive by the caller) points to its earlier file."""
        nonlocal tick
        stamp = tick * period_ns
        for camera in cameras:
            key = (camera, id(views[camera]))
            name = written.get(key) if reuse else None
            if name is None:
                name = f"{camera}/{tick:06d}{image_format}"
                cv2.imwrite(str(root / name), views[camera], params)
                if reuse:
                    written[key] = name
            recorded[camera].append(RecordedFrame(name, stamp))
        tick += 1
        return stamp

    def still(views: dict[str, np.ndarray]) -> int:
        # Without noise every still frame is the same image: one file serves them all.
        if timing.noise_sigma <= 0:
            return emit(views, reuse=True)
        return emit({c: noisy(v, timing.noise_sigma, rng) for c, v in views.items()})

    for attempt in attempts:
        for _ in range(timing.idle_frames):
            still(idle_views)
        turning = attempt.turning_views or attempt.final_views
        trigger_ns = 0
        for k in range(timing.turning_frames):
            phase = k / max(1, timing.turning_frames - 1)
            stamp = emit({c: hand_frame(turning[c], phase, rng) for c in cameras})
            if k == timing.trigger_after:
                trigger_ns = stamp + period_ns // 2
        decision_ns = 0
        for k in range(timing.rest_frames):
            stamp = still(attempt.final_views)
            if k == timing.decision_after_rest:
                decision_ns = stamp + period_ns // 2
        decision = None
        if attempt.decision is not None:
            decision = RecordedDecision(
                decision_ns, attempt.decision, "demo judge", attempt.override_verdict
            )
        recorded_attempts.append(
            RecordedAttempt(
                attempt.competitor_id,
                attempt.event,
                attempt.round,
                attempt.attempt,
                RecordedTrigger(trigger_ns, "stackmat", attempt.displayed_time_ms),
                decision,
                attempt.expected_verdict,
            )
        )
        idle_views = attempt.final_views
        written_views.append(idle_views)
    session = Session(
        root=root,
        competition=competition,
        station=station,
        cameras={c: tuple(frames) for c, frames in recorded.items()},
        attempts=tuple(recorded_attempts),
        camera_losses=tuple(CameraLoss(c, t) for c, t in losses),
    )
    write_session(session)
    return session
