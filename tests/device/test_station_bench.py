"""Benchmarks: frames per second the loop sustains per camera at 1280x720 (analysis at 320x180),
and the time from the timer's stop to the verdict."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from judgecam.device.evidence import EvidenceStore
from judgecam.device.session_synth import CodedJudge, coded_view, hand_frame, noisy
from judgecam.device.source_replay import downscale
from judgecam.device.sources import Frame
from judgecam.device.station import AttemptMeta, JudgeDecision, Station, StationSettings
from judgecam.device.triggers import TriggerEvent

MS = 1_000_000
FPS = 30
PERIOD_NS = 1_000_000_000 // FPS
HD = (1280, 720)


class NullWriter:
    attempt_id = "bench"

    def add_frame(self, *args: Any, **kwargs: Any) -> None:
        pass

    def add_overlay(self, *args: Any) -> None:
        pass

    def commit(self, result: Any) -> NullWriter:
        return self


class NullStore:
    def begin_attempt(self, info: Any) -> NullWriter:
        return NullWriter()

    def append_decision(self, *args: Any) -> None:
        pass


@functools.cache
def _images() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """10 turning images then 2 at rest (HD, with their analysis copies), made once."""
    rng = np.random.default_rng(0)
    hands = [hand_frame(coded_view("DNF", HD), k / 9, rng) for k in range(10)]
    rest = [noisy(coded_view("+2", HD), 2.0, rng) for _ in range(2)]
    return tuple((image, downscale(image, 320)) for image in hands + rest)


def attempt_frames(cameras: Sequence[str]) -> list[Frame]:
    """One attempt at 30 fps per camera: 10 turning frames, then 20 at rest (HD + analysis)."""
    images = _images()
    frames = []
    for k in range(30):
        for camera in cameras:
            image, analysis = images[k] if k < 10 else images[10 + k % 2]
            frames.append(Frame(camera, k, k * PERIOD_NS, image, analysis))
    return frames


def run_attempt(frames: Sequence[Frame], cameras: Sequence[str], store: Any) -> Station:
    station = Station(CodedJudge(), store, StationSettings(still_frames=5), cameras=cameras)
    station.queue_attempt(AttemptMeta("2026BENC01", "333", 1, 1))
    trigger_ns = 8 * PERIOD_NS + PERIOD_NS // 2
    triggered = False
    for frame in frames:
        if not triggered and frame.timestamp_ns > trigger_ns:
            station.on_trigger(TriggerEvent(trigger_ns, "stackmat", 9_999))
            triggered = True
        station.on_frame(frame)
    station.on_decision(JudgeDecision("confirm"))
    return station


@pytest.mark.parametrize("cameras", [("cam0",), ("cam0", "cam1", "cam2")])
def test_loop_frames_per_second_per_camera_720p(benchmark: Any, cameras: tuple[str, ...]) -> None:
    frames = attempt_frames(cameras)
    station = benchmark(run_attempt, frames, cameras, NullStore())
    (outcome,) = station.outcomes
    assert outcome.camera_verdict == "+2" and outcome.final_verdict == "+2"
    if benchmark.stats is not None:
        per_camera_fps = 30 / benchmark.stats.stats.mean
        benchmark.extra_info["frames_per_second_per_camera"] = round(per_camera_fps, 1)


def test_attempt_with_evidence_hand_off_720p(benchmark: Any, tmp_path: Path) -> None:
    """The same attempt, committed to a real evidence store (JPEG clip + PNG verdict frame)."""
    frames = attempt_frames(("cam0",))
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        station = benchmark.pedantic(run_attempt, (frames, ("cam0",), store), rounds=3)
        (outcome,) = station.outcomes
        # 2 frames of the ring before the stop, 3 after it at 4 Hz, the verdict frame among them.
        assert outcome.attempt_id is not None and outcome.frames_saved == 5


def test_trigger_to_verdict_with_the_puzzle_at_rest(benchmark: Any) -> None:
    """Processing time from the trigger to the verdict when the puzzle is already still: the
    frames it takes to call it at rest (5 at 30 fps = 167 ms of stream time) plus judging."""
    rng = np.random.default_rng(1)
    rest = [noisy(coded_view("solved", HD), 2.0, rng) for _ in range(2)]
    still = [
        Frame("cam0", k, k * PERIOD_NS, rest[k % 2], downscale(rest[k % 2], 320)) for k in range(12)
    ]

    def stop_to_verdict() -> tuple[Station, int]:
        station = Station(CodedJudge(), None, StationSettings(still_frames=5))
        for frame in still[:6]:  # at rest before the stop
            station.on_frame(frame)
        station.on_trigger(TriggerEvent(still[5].timestamp_ns + 1, "stackmat", 7_777))
        fed = 0
        for frame in still[6:]:
            station.on_frame(frame)
            fed += 1
            if station.status()["verdict"] is not None:
                break
        return station, fed

    station, fed = benchmark(stop_to_verdict)
    assert fed == 1  # already at rest: judged on the first frame after the stop
    assert station.status()["verdict"] == "solved"


def test_trigger_to_verdict_with_vision(benchmark: Any, corpus_dir: Path) -> None:
    """The same with the real judgecam.vision on a rendered two-camera capture (1536x864)."""
    manifest_path = corpus_dir / "manifest.json"
    if not manifest_path.exists():
        pytest.skip("the rendered corpus is not in tests/images")
    from judgecam.device.station_judge import CameraCalibration, VisionJudge

    manifest = json.loads(manifest_path.read_text())
    capture = next(c for c in manifest["captures"] if c["rig"] == "rig2" and c["puzzle"] == "333")
    truth = json.loads((corpus_dir / capture["truth"]).read_text())
    images, calibrations, poses = {}, {}, {}
    for view in truth["views"]:
        poses[view["camera"]] = np.array(view["world_from_camera"])
        images[view["camera"]] = cv2.imread(str(corpus_dir / view["image"]), cv2.IMREAD_COLOR)
        calibrations[view["camera"]] = CameraCalibration(
            np.array(view["camera_matrix"]),
            np.array(view["dist_coeffs"]),
            tuple(view["image_size"]),
        )
    judge = VisionJudge(calibrations, poses=poses)  # a calibrated station: rig poses known
    frames = [
        Frame(camera, k, k * PERIOD_NS, image, downscale(image, 320))
        for k in range(8)
        for camera, image in sorted(images.items())
    ]

    def stop_to_verdict() -> Station:
        station = Station(judge, None, StationSettings(still_frames=3), cameras=sorted(images))
        for frame in frames[:8]:
            station.on_frame(frame)
        station.on_trigger(TriggerEvent(frames[7].timestamp_ns + 1, "stackmat", 7_777))
        for frame in frames[8:]:
            station.on_frame(frame)
            if station.status()["verdict"] is not None:
                break
        return station

    station = benchmark.pedantic(stop_to_verdict, rounds=2)
    status = station.status()
    assert status["verdict"] in ("solved", "+2", "DNF", "review")
    # The station handed vision exactly the views of one moment, one per camera.
    from judgecam.vision.pipeline import check

    direct = check(
        [(c, images[c]) for c in sorted(images)],
        "333",
        [judge._intrinsics(f) for f in frames[8:10]],
        world_from_camera=[poses[c] for c in sorted(images)],
    )
    assert status["verdict"] == direct.verdict
    benchmark.extra_info["ground_truth"] = capture["verdict"]
    benchmark.extra_info["vision_verdict"] = status["verdict"]
