"""The judge station: trigger -> capture window -> at rest -> verdict -> decision -> evidence.

`Station` is the loop's brain and holds no thread, camera or clock of its own: it is fed
events (`on_frame`, `on_trigger`, `on_decision`, `on_camera_lost`, ...), so the live loop and a
replayed session drive the very same code (`station_loop.run_loop` feeds it for both).

An attempt's life:

1. A trigger opens it: the scorecard data is taken (`AttemptMeta`), the evidence store opens an
   attempt (so even a crash leaves a trace of it), and the ring buffer's last seconds become the
   start of its capture window.
2. Frames keep flowing into the window; when every camera has seen no motion for a few frames
   the views of that moment are judged, and the verdict is shown. Live, the judge runs in a
   worker thread (`StationSettings.judge_in_background`) so frames keep being read and
   watched; a verdict on views the puzzle has since moved from is dropped and judged again.
3. If the puzzle moves again before the judge decides, the verdict is withdrawn and the puzzle
   is judged again once it is at rest (both verdicts are kept).
4. The judge confirms or overrides; the attempt is committed with its frames, its verdicts and
   what happened to it (camera losses, re-judging), and the decision is appended to the log.

An attempt is never dropped: a new trigger, a lost camera or the end of the session commit the
attempt in progress with what was captured, judged on the best views there are.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np

from judgecam.device.capture import CaptureWindow, FrameRing, MotionDetector, RestTracker
from judgecam.device.sources import CameraSettings, Frame, group_by_time
from judgecam.device.station_record import commit, result_json
from judgecam.device.station_types import (
    VERDICTS,
    AttemptInProgress,
    AttemptMeta,
    AttemptOutcome,
    EvidenceSink,
    Judge,
    JudgeDecision,
    Judgement,
    JudgeResult,
    PendingJudgement,
    StationSettings,
    meta_json,
)
from judgecam.device.triggers import TriggerEvent

logger = logging.getLogger(__name__)

__all__ = [
    "VERDICTS",
    "AttemptMeta",
    "AttemptOutcome",
    "EvidenceSink",
    "Judge",
    "JudgeDecision",
    "JudgeResult",
    "Judgement",
    "Station",
    "StationSettings",
]


# ------------------------------------------------------------------------------ the station
class Station:
    """The station's state machine; see the module docstring."""

    def __init__(
        self,
        judge: Judge,
        evidence: EvidenceSink | None,
        settings: StationSettings | None = None,
        cameras: Sequence[str] = ("cam0",),
        camera_settings: Mapping[str, CameraSettings] | None = None,
        motion: MotionDetector | None = None,
        attempt_info: Callable[..., Any] | None = None,
        keep_outcomes: int = 50,
    ) -> None:
        self.judge = judge
        self.evidence = evidence
        self.settings = settings = settings or StationSettings()
        self.motion = motion or MotionDetector()
        self.rest = RestTracker(settings.still_frames)
        self._camera_settings = dict(camera_settings or {})
        self._rings = {c: self._new_ring() for c in cameras}
        self._active_cameras = set(cameras)
        self._latest: dict[str, Frame] = {}
        self._attempt: AttemptInProgress | None = None
        self._meta_queue: deque[AttemptMeta] = deque()
        self._next_attempt_number = 1
        self._attempt_info = attempt_info or _evidence_attempt_info
        self.outcomes: deque[AttemptOutcome] = deque(maxlen=keep_outcomes)
        self.messages: dict[str, str] = {}  # camera / "evidence" -> problem shown on screen
        self.lock = threading.RLock()  # the web page reads while the loop writes
        self.frames_seen = 0
        self._now_ns = 0
        self._executor = (
            ThreadPoolExecutor(1, thread_name_prefix="judge")
            if settings.judge_in_background
            else None
        )

    def _new_ring(self) -> FrameRing:
        s = self.settings
        frames = int(s.pre_s * s.evidence_rate_hz) + 2
        return FrameRing(s.pre_s, s.evidence_rate_hz, max_frames=frames)

    # ----------------------------------------------------------------------- scorecards
    def queue_attempt(self, meta: AttemptMeta) -> None:
        """The scorecard of the next attempt (typed on the page, scanned, or recorded)."""
        with self.lock:
            self._meta_queue.append(meta)

    def _take_meta(self) -> AttemptMeta:
        if self._meta_queue:
            meta = self._meta_queue.popleft()
        else:  # nobody entered a scorecard: keep the attempt anyway, findable by time
            meta = AttemptMeta("unassigned", "333", 1, self._next_attempt_number)
            logger.warning("no scorecard entered for this attempt: recorded as %s", meta)
        self._next_attempt_number = meta.attempt + 1
        return meta

    # --------------------------------------------------------------------------- events
    def on_frame(self, frame: Frame) -> None:
        """A new frame from a camera."""
        with self.lock:
            self._now_ns = max(self._now_ns, frame.timestamp_ns)
            self.frames_seen += 1
            ring = self._rings.setdefault(frame.camera, self._new_ring())
            ring.add(frame)
            self._latest[frame.camera] = frame
            if frame.camera not in self._active_cameras:
                self._active_cameras.add(frame.camera)
                self.messages.pop(frame.camera, None)
            sample = self.motion.update(frame)
            self.rest.update(sample)
            attempt = self._attempt
            if attempt is None:
                return
            attempt.window.offer(frame)
            if attempt.judging is not None:
                attempt.judging.moved |= sample.moving
                self._collect(attempt)
            if attempt.current is not None and sample.moving:
                self._withdraw(attempt, f"puzzle moved after the verdict (camera {frame.camera})")
            if attempt.current is None:
                self._maybe_judge(attempt, frame.timestamp_ns)
            self._check_timeouts(attempt, frame.timestamp_ns)

    def on_trigger(self, event: TriggerEvent) -> None:
        """The attempt is over (timer stopped / key pressed): open its capture window."""
        with self.lock:
            self._now_ns = max(self._now_ns, event.timestamp_ns)
            if self._attempt is not None:
                self._attempt.incidents.append("a new trigger came before the judge's decision")
                self._finish(self._attempt)
            meta = self._take_meta()
            before_ns = event.timestamp_ns - int(self.settings.pre_s * 1e9)
            before = [f for ring in self._rings.values() for f in ring.since(before_ns)]
            window = CaptureWindow(
                event.timestamp_ns,
                before,
                self.settings.post_s,
                self.settings.evidence_rate_hz,
                self.settings.max_window_frames,
            )
            writer = self._begin_evidence(meta)
            self._attempt = AttemptInProgress(meta, event, window, writer, time.time_ns())
            logger.info(
                "attempt %s r%d a%d of %s: trigger from %s (timer %s ms)",
                meta.event,
                meta.round,
                meta.attempt,
                meta.competitor_id,
                event.source,
                event.displayed_time_ms,
            )

    def on_decision(self, decision: JudgeDecision) -> None:
        """The judge confirmed or overrode a verdict."""
        with self.lock:
            attempt = self._attempt
            if attempt is not None and decision.attempt in (None, attempt.meta):
                if attempt.current is None:
                    attempt.pending_decision = decision  # applied once there is a verdict
                    return
                self._finish(attempt, decision)
                return
            self._late_decision(decision)

    def on_camera_lost(self, camera: str, reason: str) -> None:
        """A camera stopped delivering: say so, and keep the attempt in progress."""
        with self.lock:
            message = f"camera {camera} lost: {reason} — reconnecting"
            if self.messages.get(camera) != message:
                logger.error(message)
            self.messages[camera] = message
            self._active_cameras.discard(camera)
            self.rest.forget(camera)
            self.motion.forget(camera)
            attempt = self._attempt
            if attempt is None:
                return
            attempt.incidents.append(f"camera {camera} lost during the attempt: {reason}")
            if not self._active_cameras:
                # No camera left: judge on what was captured and commit now, so the attempt
                # survives whatever happens next; a later decision is appended to it.
                if attempt.current is None and attempt.judging is None:
                    self._judge_now(
                        attempt, self._now_ns, "camera lost before the puzzle was at rest"
                    )
                self._finish(attempt)

    def on_camera_back(self, camera: str) -> None:
        """A lost camera delivers again."""
        with self.lock:
            if self.messages.pop(camera, None) is not None:
                logger.warning("camera %s is back", camera)

    def tick(self, now_ns: int) -> None:
        """Time passes without frames (all cameras lost, live): apply the timeouts."""
        with self.lock:
            self._now_ns = max(self._now_ns, now_ns)
            if self._attempt is not None:
                self._collect(self._attempt)
            if self._attempt is not None:
                self._check_timeouts(self._attempt, now_ns)

    def close(self) -> None:
        """End of the session: commit the attempt in progress."""
        with self.lock:
            if self._attempt is not None:
                self._attempt.incidents.append("the session ended before the judge's decision")
                self._finish(self._attempt)
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    # -------------------------------------------------------------------------- judging
    def _maybe_judge(self, attempt: AttemptInProgress, now_ns: int) -> None:
        if attempt.judging is not None:
            return
        # Every camera must have a frame from after the stop (cameras deliver in turn), and
        # the puzzle must be at rest in all of them.
        latest = [self._latest.get(c) for c in self._active_cameras]
        if any(f is None or f.timestamp_ns <= attempt.trigger.timestamp_ns for f in latest):
            return
        if self.rest.at_rest(self._active_cameras):
            self._judge_now(attempt, now_ns)

    def _views_at(self, now_ns: int) -> tuple[Frame, ...]:
        tolerance = int(self.settings.group_tolerance_s * 1e9)
        latest = {c: [f] for c, f in self._latest.items() if c in self._active_cameras}
        if not latest:  # every camera gone: the last frames there are
            latest = {c: [f] for c, f in self._latest.items()}
            tolerance = 1 << 62
        newest = max((fs[0].timestamp_ns for fs in latest.values()), default=now_ns)
        return group_by_time(latest, newest, tolerance)

    def _judge_now(
        self, attempt: AttemptInProgress, now_ns: int, forced_reason: str | None = None
    ) -> None:
        views = tuple(
            v for v in self._views_at(now_ns) if v.timestamp_ns > attempt.trigger.timestamp_ns
        )
        if not views:
            result = JudgeResult("review", ("no frame was captured after the timer stopped",))
            self._apply(attempt, result, views, now_ns, 0.0, forced_reason)
            return
        if self._executor is not None and forced_reason is None:
            future = self._executor.submit(self.judge.judge, views, attempt.meta.event)
            attempt.judging = PendingJudgement(future, views, now_ns, time.perf_counter())
            return
        started = time.perf_counter()
        try:
            # Judging takes a while (vision: a second or more on a Pi): let the page read
            # the status meanwhile. Only the loop's thread changes the station.
            with self._lock_released():
                result = self.judge.judge(views, attempt.meta.event)
        except Exception as error:  # a judging bug must never lose the attempt
            result = _failed(error)
        self._apply(attempt, result, views, now_ns, time.perf_counter() - started, forced_reason)

    def _collect(self, attempt: AttemptInProgress, wait: bool = False) -> None:
        """Take in a background judgement once it is done (or now, with `wait`)."""
        pending = attempt.judging
        if pending is None or not (wait or pending.future.done()):
            return
        attempt.judging = None
        try:
            result = pending.future.result()
        except Exception as error:
            result = _failed(error)
        if pending.moved and not wait:
            attempt.incidents.append("the puzzle moved while it was being judged; judged again")
            return  # judged again once at rest
        latency = time.perf_counter() - pending.started
        self._apply(attempt, result, pending.views, pending.at_ns, latency, None)

    def _apply(
        self,
        attempt: AttemptInProgress,
        result: JudgeResult,
        views: tuple[Frame, ...],
        at_ns: int,
        latency: float,
        forced_reason: str | None,
    ) -> None:
        """Show a verdict and keep it (with the frames it was given) for the evidence."""
        if forced_reason is not None and result.verdict != "review":
            result = replace(
                result,
                verdict="review",
                reasons=(forced_reason, *result.reasons),
                review_because=(forced_reason,),
            )
        elif forced_reason is not None:
            result = replace(
                result,
                reasons=(forced_reason, *result.reasons),
                review_because=(forced_reason, *result.review_because),
            )
        judgement = Judgement(result, views, at_ns, latency)
        if len(attempt.judgements) < self.settings.max_judgements:
            attempt.window.mark_verdict(views)
        else:  # a puzzle touched again and again: keep the first verdict and the latest ones
            del attempt.judgements[1]
        attempt.judgements.append(judgement)
        attempt.current = judgement
        logger.info("verdict %s (%s)", result.verdict, "; ".join(result.reasons) or "no remarks")
        if attempt.pending_decision is not None:
            decision, attempt.pending_decision = attempt.pending_decision, None
            self._finish(attempt, decision)

    @contextlib.contextmanager
    def _lock_released(self) -> Iterator[None]:
        self.lock.release()
        try:
            yield
        finally:
            self.lock.acquire()

    def _withdraw(self, attempt: AttemptInProgress, why: str) -> None:
        attempt.incidents.append(why + "; judged again once at rest")
        attempt.current = None
        logger.warning(why)

    def _check_timeouts(self, attempt: AttemptInProgress, now_ns: int) -> None:
        elapsed_s = (now_ns - attempt.trigger.timestamp_ns) / 1e9
        waiting = attempt.current is None and attempt.judging is None
        if waiting and elapsed_s > self.settings.settle_timeout_s:
            reason = (
                f"the puzzle was not at rest {self.settings.settle_timeout_s:.0f} s after the stop"
            )
            self._judge_now(attempt, now_ns, reason)
        elif attempt.current is not None and elapsed_s > self.settings.decision_timeout_s:
            attempt.incidents.append("no decision from the judge in time")
            self._finish(attempt)

    # ------------------------------------------------------------------------- evidence
    def _begin_evidence(self, meta: AttemptMeta) -> Any:
        if self.evidence is None:
            return None
        try:
            info = self._attempt_info(
                competition=self.settings.competition,
                competitor_id=meta.competitor_id,
                event=meta.event,
                round=meta.round,
                attempt=meta.attempt,
                station=self.settings.station,
            )
            writer = self.evidence.begin_attempt(info)
        except Exception as error:  # disk full, bad scorecard: judge anyway, say so loudly
            self.messages["evidence"] = f"EVIDENCE NOT SAVED: {error}"
            logger.error("evidence for %s cannot be written: %s", meta, error)
            return None
        self.messages.pop("evidence", None)
        return writer

    def _finish(self, attempt: AttemptInProgress, decision: JudgeDecision | None = None) -> None:
        """Commit an attempt (judging it first if it never was) and record the decision."""
        self._attempt = None
        if attempt.judging is not None:
            attempt.pending_decision, pending = None, attempt.pending_decision
            self._collect(attempt, wait=True)  # the views judged are better than none
            decision = decision or pending
        if attempt.current is None and not attempt.judgements:
            self._judge_now(attempt, self._now_ns, "judged when the attempt was closed early")
            attempt.pending_decision = None
        current = attempt.current or attempt.judgements[-1]
        camera_verdict = current.result.verdict
        final = (
            camera_verdict
            if decision is None
            else (camera_verdict if decision.decision == "confirm" else decision.verdict)
        )
        result = result_json(
            attempt, current, decision, final, self.settings, self._camera_settings
        )
        attempt_id, saved, error = commit(attempt, current, result)
        if error is not None:
            self.messages["evidence"] = f"EVIDENCE NOT SAVED: {error}"
        if attempt_id is not None and decision is not None:
            self._append_decision(attempt_id, decision, camera_verdict)
        latency = current.at_ns - attempt.trigger.timestamp_ns
        outcome = AttemptOutcome(
            meta=attempt.meta,
            attempt_id=attempt_id,
            trigger=attempt.trigger,
            camera_verdict=camera_verdict,
            final_verdict=final if decision is not None else None,
            decision=decision,
            reasons=current.result.reasons,
            incidents=tuple(attempt.incidents),
            judgements=len(attempt.judgements),
            frames_saved=saved,
            trigger_to_verdict_ns=latency,
            review_because=current.result.review_because,
        )
        self.outcomes.append(outcome)

    def _append_decision(
        self, attempt_id: str, decision: JudgeDecision, camera_verdict: str
    ) -> None:
        assert self.evidence is not None
        try:
            self.evidence.append_decision(
                attempt_id, decision.label(camera_verdict), decision.by, decision.note
            )
        except Exception as error:
            self.messages["evidence"] = f"DECISION NOT SAVED: {error}"
            logger.exception("recording the decision on %s failed", attempt_id)

    def _late_decision(self, decision: JudgeDecision) -> None:
        """A decision for an attempt already committed (after a camera loss, or a late click)."""
        wanted = decision.attempt
        for index in range(len(self.outcomes) - 1, -1, -1):
            outcome = self.outcomes[index]
            if wanted is not None and outcome.meta != wanted:
                continue
            if outcome.decision is not None:
                break
            camera_verdict = outcome.camera_verdict or "review"
            final = camera_verdict if decision.decision == "confirm" else decision.verdict
            if outcome.attempt_id is not None and self.evidence is not None:
                self._append_decision(outcome.attempt_id, decision, camera_verdict)
            self.outcomes[index] = replace(outcome, decision=decision, final_verdict=final)
            return
        logger.warning("a decision with no attempt waiting for one was ignored: %s", decision)

    # ----------------------------------------------------------------------- the screen
    def status(self) -> dict[str, Any]:
        """A JSON-ready snapshot for the station page."""
        with self.lock:
            attempt = self._attempt
            state = "waiting"
            verdict = None
            reasons: list[str] = []
            because: list[str] = []
            meta = None
            if attempt is not None:
                meta = attempt.meta
                state = "settling" if attempt.current is None else "verdict"
                if attempt.judging is not None:
                    state = "judging"
                if attempt.current is not None:
                    verdict = attempt.current.result.verdict
                    reasons = list(attempt.current.result.reasons)
                    because = list(attempt.current.result.review_because)
            last = self.outcomes[-1] if self.outcomes else None
            return {
                "state": state,
                "attempt": None if meta is None else meta_json(meta),
                "verdict": verdict,
                "reasons": reasons,
                "review_because": because,  # which of `reasons` made it a review
                "incidents": [] if attempt is None else list(attempt.incidents),
                "timer_ms": None if attempt is None else attempt.trigger.displayed_time_ms,
                "cameras": sorted(self._rings),
                "active_cameras": sorted(self._active_cameras),
                "messages": dict(self.messages),
                "frames_seen": self.frames_seen,
                "next_attempt": None if not self._meta_queue else meta_json(self._meta_queue[0]),
                "last": None
                if last is None
                else {
                    "attempt": meta_json(last.meta),
                    "attempt_id": last.attempt_id,
                    "verdict": last.camera_verdict,
                    "final_verdict": last.final_verdict,
                    "decided": last.decision is not None,
                },
            }

    def live_view(self, camera: str) -> np.ndarray | None:
        """The latest analysis frame of a camera with the current verdict's drawing over it."""
        with self.lock:
            frame = self._latest.get(camera)
            attempt = self._attempt
            overlay = None
            if attempt is not None and attempt.current is not None:
                overlay = attempt.current.result.overlays.get(camera)
        if frame is None:
            return None
        view = frame.analysis_image()
        if overlay is not None:
            import cv2

            drawn = cv2.resize(
                overlay[:, :, :3], (view.shape[1], view.shape[0]), interpolation=cv2.INTER_AREA
            )
            view = cv2.addWeighted(view, 0.4, drawn, 0.6, 0.0)
        return view


def _failed(error: Exception) -> JudgeResult:
    logger.error("the judge failed", exc_info=error)
    return JudgeResult("review", (f"the judge failed: {type(error).__name__}: {error}",))


def _evidence_attempt_info(**fields: Any) -> Any:
    """The evidence store's AttemptInfo (imported here: the store is optional for the loop)."""
    from judgecam.device.evidence import AttemptInfo

    return AttemptInfo(**fields)
