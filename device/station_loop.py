"""The station loop: cameras read in turn, triggers and decisions released, the station fed.

Live, the clock is the monotonic clock and cameras that fail are reconnected every few seconds;
replayed, the clock is the newest frame's timestamp, so a session's recorded triggers and
decisions arrive at their recorded moments and the run is deterministic.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from judgecam.device.sources import CameraLost, Frame, FrameSource
from judgecam.device.station import AttemptMeta, JudgeDecision, Station
from judgecam.device.triggers import RecordedTrigger, Trigger, TriggerEvent

logger = logging.getLogger(__name__)


class CameraFeed:
    """One camera as the loop sees it: frames, or a loss and reconnect attempts."""

    def __init__(
        self,
        source: FrameSource,
        retry_interval_s: float = 2.0,
        max_retries: int | None = None,
    ) -> None:
        self.source = source
        self.name = source.name
        self.retry_interval_ns = int(retry_interval_s * 1e9)
        self.max_retries = max_retries
        self.open = False
        self.finished = False  # a recording that ended, or a camera given up on
        self.lost_reason: str | None = None
        self.retries = 0
        self._last_try_ns: int | None = None

    def start(self) -> None:
        self.source.__enter__()
        self.open = True

    def stop(self) -> None:
        if self.open:
            try:
                self.source.__exit__(None, None, None)
            except Exception:
                logger.exception("closing camera %s failed", self.name)
            self.open = False

    def read(self, station: Station, now_ns: int) -> Frame | None:
        """The next frame, reporting losses and reconnections to the station."""
        if self.finished:
            return None
        if self.lost_reason is not None and not self._reconnect(station, now_ns):
            return None
        try:
            frame = self.source.read()
        except Exception as error:  # CameraLost, or whatever a driver raises
            self._lose(
                station, str(error) if isinstance(error, CameraLost) else repr(error), now_ns
            )
            return None
        if frame is None:
            self.finished = True
        elif self.retries:
            self.retries = 0
            station.on_camera_back(self.name)
        return frame

    def _lose(self, station: Station, reason: str, now_ns: int) -> None:
        self.lost_reason = reason
        self._last_try_ns = now_ns
        self.stop()
        station.on_camera_lost(self.name, reason)

    def _reconnect(self, station: Station, now_ns: int) -> bool:
        # Back off (up to 16 intervals) so an unplugged camera does not flood the log.
        wait_ns = self.retry_interval_ns * min(16, 2 ** max(0, self.retries - 1))
        if self._last_try_ns is not None and now_ns - self._last_try_ns < wait_ns:
            return False
        if self.max_retries is not None and self.retries >= self.max_retries:
            logger.error(
                "camera %s: giving up after %d reconnect attempts", self.name, self.retries
            )
            self.finished = True
            return False
        self.retries += 1
        self._last_try_ns = now_ns
        logger.warning("camera %s: reconnect attempt %d", self.name, self.retries)
        try:
            self.start()
        except Exception as error:
            logger.warning("camera %s: reconnect failed: %s", self.name, error)
            return False
        self.lost_reason = None
        return True


class DecisionSource(Protocol):
    """Where the judge's decisions come from (the page's buttons, or a recording)."""

    def poll(self, now_ns: int) -> list[JudgeDecision]: ...


class DecisionInbox:
    """Decisions posted from another thread (the web page), polled by the loop."""

    def __init__(self) -> None:
        self._items: deque[JudgeDecision] = deque()
        self._lock = threading.Lock()

    def post(self, decision: JudgeDecision) -> None:
        with self._lock:
            self._items.append(decision)

    def poll(self, now_ns: int) -> list[JudgeDecision]:
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items


class RecordedDecisions:
    """The judge's recorded decisions, released when the replay clock reaches them."""

    def __init__(self, decisions: Sequence[JudgeDecision]) -> None:
        self._pending = sorted(decisions, key=lambda d: d.timestamp_ns)

    def poll(self, now_ns: int) -> list[JudgeDecision]:
        due = [d for d in self._pending if d.timestamp_ns <= now_ns]
        self._pending = self._pending[len(due) :]
        return due


def run_loop(
    station: Station,
    feeds: Sequence[CameraFeed],
    triggers: Sequence[Trigger],
    decisions: Sequence[DecisionSource],
    clock: Callable[[], int] | None = None,
    stop: threading.Event | None = None,
    idle_sleep_s: float = 0.05,
    realtime: bool = False,
) -> None:
    """Feed the station until every camera has finished (replay) or `stop` is set (live).

    Cameras are read in turn (each read waits for that camera's next frame), so all cameras
    advance together. Live, `clock` is the monotonic clock; replayed, the clock is the newest
    frame's timestamp, so triggers and decisions are released at their recorded moments;
    `realtime` paces a replay at its recorded speed (for watching it on the page).
    """
    latest_ns = 0
    pace_origin: tuple[int, float] | None = None

    def now() -> int:
        return clock() if clock is not None else latest_ns

    for feed in feeds:
        try:
            feed.start()
        except Exception as error:
            feed._lose(station, str(error), now())
    try:
        while stop is None or not stop.is_set():
            got_frame = False
            for feed in feeds:
                frame = feed.read(station, now())
                if frame is None:
                    continue
                got_frame = True
                if realtime and clock is None:
                    if pace_origin is None:
                        pace_origin = (frame.timestamp_ns, time.monotonic())
                    due = pace_origin[1] + (frame.timestamp_ns - pace_origin[0]) / 1e9
                    time.sleep(max(0.0, due - time.monotonic()))
                latest_ns = max(latest_ns, frame.timestamp_ns)
                _dispatch(
                    station, triggers, decisions, frame.timestamp_ns if clock is None else now()
                )
                station.on_frame(frame)
            if all(feed.finished for feed in feeds):
                break
            if not got_frame:
                _dispatch(station, triggers, decisions, now())
                station.tick(now())
                if clock is not None:  # live: wait for the cameras (or their reconnection)
                    time.sleep(idle_sleep_s)
        # What is left of a recording: its remaining triggers and decisions.
        _dispatch(station, triggers, decisions, 1 << 62 if clock is None else now())
    finally:
        station.close()
        for feed in feeds:
            feed.stop()


def _dispatch(
    station: Station,
    triggers: Sequence[Trigger],
    decisions: Sequence[DecisionSource],
    now_ns: int,
) -> None:
    for trigger in triggers:
        for event in trigger.poll(now_ns):
            station.on_trigger(event)
    for source in decisions:
        for decision in source.poll(now_ns):
            station.on_decision(decision)


def replay_inputs(
    session_path: Path, station: Station
) -> tuple[list[CameraFeed], list[Trigger], list[DecisionSource]]:
    """Camera feeds, triggers and decisions of a recorded session; queues its scorecards."""
    from judgecam.device.session import load_session
    from judgecam.device.source_replay import open_replay

    session = load_session(session_path)
    feeds = [
        CameraFeed(open_replay(session_path, camera=name), retry_interval_s=0.0, max_retries=3)
        for name in sorted(session.cameras)
    ]
    attempts = sorted(session.attempts, key=lambda a: a.trigger.timestamp_ns)
    decisions = []
    for attempt in attempts:
        meta = AttemptMeta(attempt.competitor_id, attempt.event, attempt.round, attempt.attempt)
        station.queue_attempt(meta)
        if attempt.decision is not None:
            d = attempt.decision
            decisions.append(
                JudgeDecision(d.decision, d.by, d.verdict, d.note, d.timestamp_ns, meta)
            )
    events = [
        TriggerEvent(a.trigger.timestamp_ns, a.trigger.source, a.trigger.displayed_time_ms)
        for a in attempts
    ]
    return feeds, [RecordedTrigger(events)], [RecordedDecisions(decisions)]
