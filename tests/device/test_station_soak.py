"""A competition day in half a minute: 1,000 attempts through the loop, memory measured."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgecam.device.session_synth import CodedJudge, coded_view, hand_frame, noisy
from judgecam.device.sources import CameraSettings, Frame
from judgecam.device.station import AttemptMeta, JudgeDecision, Station, StationSettings
from judgecam.device.station_loop import CameraFeed, run_loop
from judgecam.device.triggers import TriggerEvent

MS = 1_000_000
ATTEMPTS = 1_000
PERIOD_NS = 100 * MS
# Per attempt: 1 idle, 3 turning, 6 at rest = 10 frames (1 s at 10 fps).
PHASES = ("idle", "hand", "hand", "hand", "rest", "rest", "rest", "rest", "rest", "rest")
VERDICTS = ("solved", "+2", "DNF", "review")


class DayCamera:
    """A camera replaying a whole day from a handful of images (no per-frame allocation)."""

    def __init__(self, size: tuple[int, int]) -> None:
        rng = np.random.default_rng(7)
        self.rest = {v: [noisy(coded_view(v, size), 2.0, rng) for _ in range(2)] for v in VERDICTS}
        self.hands = [hand_frame(coded_view("DNF", size), k / 2, rng) for k in range(3)]
        self.frames = 0

    @property
    def name(self) -> str:
        return "cam0"

    def __enter__(self) -> DayCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def read(self) -> Frame | None:
        index = self.frames
        attempt, phase = divmod(index, len(PHASES))
        if attempt >= ATTEMPTS:
            return None
        self.frames += 1
        kind = PHASES[phase]
        if kind == "hand":
            image = self.hands[phase - 1]
        else:
            verdict = VERDICTS[(attempt - (kind == "idle")) % len(VERDICTS)]
            image = self.rest[verdict][index % 2]
        return Frame("cam0", index, index * PERIOD_NS, image, image)

    def settings(self) -> CameraSettings:
        return CameraSettings("synthetic", "cam0", (160, 120))


class Schedule:
    """Each attempt's scorecard and trigger (during the turning), or decision (late in the
    rest)."""

    def __init__(self, kind: str, station: Station) -> None:
        self.kind = kind
        self.station = station
        self.next_attempt = 0

    def poll(self, now_ns: int) -> list[Any]:
        offset = (2 * PERIOD_NS + PERIOD_NS // 2) if self.kind == "trigger" else 9 * PERIOD_NS
        due = []
        while self.next_attempt < ATTEMPTS:
            at = self.next_attempt * len(PHASES) * PERIOD_NS + offset
            if at > now_ns:
                break
            if self.kind == "trigger":
                number = self.next_attempt + 1
                self.station.queue_attempt(
                    AttemptMeta(f"2026SOAK{number % 100:02d}", "333", 1, number)
                )
                due.append(TriggerEvent(at, "stackmat", 10_000 + self.next_attempt))
            else:
                due.append(JudgeDecision("confirm", "soak judge", timestamp_ns=at))
            self.next_attempt += 1
        return due

    def close(self) -> None:
        pass


class CountingWriter:
    def __init__(self, store: CountingStore, attempt: int) -> None:
        self.store = store
        self.attempt_id = f"a{attempt}"

    def add_frame(
        self, camera: str, timestamp_ns: int, image: np.ndarray, verdict_frame: bool = False
    ) -> None:
        assert image.dtype == np.uint8 and image.ndim == 3
        self.store.frames += 1

    def add_overlay(self, *args: Any) -> None:
        pass

    def commit(self, result: dict[str, Any]) -> CountingWriter:
        self.store.commits += 1
        return self


class CountingStore:
    """An evidence sink that checks what it is given and keeps only counts."""

    def __init__(self) -> None:
        self.frames = 0
        self.commits = 0
        self.decisions = 0

    def begin_attempt(self, info: Any) -> CountingWriter:
        return CountingWriter(self, info.attempt)

    def append_decision(self, attempt_id: str, decision: str, by: str, note: str = "") -> None:
        self.decisions += 1


def rss_kib() -> int:
    status = Path("/proc/self/status")
    if not status.exists():
        return 0
    for line in status.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Sampler:
    """Samples traced memory every 100 attempts (a decision source that never decides)."""

    def __init__(self, station: Station) -> None:
        self.station = station
        self.samples: list[tuple[int, int, int]] = []  # (attempts done, traced bytes, RSS KiB)

    def poll(self, now_ns: int) -> Sequence[Any]:
        done = now_ns // (len(PHASES) * PERIOD_NS)
        if done % 100 == 0 and done and (not self.samples or self.samples[-1][0] != done):
            gc.collect()
            self.samples.append((int(done), tracemalloc.get_traced_memory()[0], rss_kib()))
        return []


@pytest.mark.slow
def test_a_thousand_attempts_in_bounded_memory() -> None:
    store = CountingStore()
    judge = CodedJudge()
    station = Station(judge, store, StationSettings(still_frames=3, competition="Soak Open"))
    sampler = Sampler(station)
    rss_before = rss_kib()
    tracemalloc.start()
    try:
        triggers, decisions = Schedule("trigger", station), Schedule("decision", station)
        run_loop(station, [CameraFeed(DayCamera((160, 120)))], [triggers], [decisions, sampler])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rss_after = rss_kib()
    assert store.commits == ATTEMPTS and store.decisions == ATTEMPTS
    assert judge.calls == ATTEMPTS  # one verdict per attempt: noise never re-triggered judging
    expected = [VERDICTS[i % 4] for i in range(ATTEMPTS)][-len(station.outcomes) :]
    assert [o.camera_verdict for o in station.outcomes] == expected
    assert all(o.incidents == () for o in station.outcomes)
    assert station.outcomes[-1].meta == AttemptMeta("2026SOAK00", "333", 1, ATTEMPTS)
    # Memory: what is traced after 200 attempts and after 1,000 differs by less than 256 KiB
    # (no per-attempt growth), and the peak stays small.
    traced = {done: size for done, size, _ in sampler.samples}
    growth = traced[max(traced)] - traced[200]
    print(
        f"\nsoak: {ATTEMPTS} attempts, {store.frames} frames saved; traced memory "
        f"{traced[200] / 1024:.0f} KiB after 200, {traced[max(traced)] / 1024:.0f} KiB after "
        f"{max(traced)} (growth {growth / 1024:.1f} KiB); peak {peak / 1024:.0f} KiB; RSS "
        f"{rss_before} -> {rss_after} KiB"
    )
    assert growth < 64 * 1024
    assert peak < 32 * 2**20
