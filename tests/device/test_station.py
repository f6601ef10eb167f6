"""The station loop end to end on replayed sessions: trigger -> window -> verdict -> evidence.

The judge here is `CodedJudge` (reads a verdict colour painted on synthetic views), so these
tests check the loop, not vision: which frames get judged, when, and what is handed off. The
views while the puzzle is being turned carry a different code than the final ones, so judging
before the puzzle is at rest gives a wrong verdict and fails the tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgecam.device.evidence import EvidenceStore
from judgecam.device.session_synth import (
    CodedJudge,
    SynthAttempt,
    SynthTiming,
    build_session,
    coded_view,
    hand_frame,
    noisy,
)
from judgecam.device.sources import CameraLost, CameraSettings, Frame
from judgecam.device.station import (
    AttemptMeta,
    JudgeDecision,
    JudgeResult,
    Station,
    StationSettings,
)
from judgecam.device.station_loop import CameraFeed, replay_inputs, run_loop
from judgecam.device.triggers import TriggerEvent

MS = 1_000_000
NEXT = {"solved": "DNF", "+2": "solved", "DNF": "+2", "review": "solved"}


def attempt(
    verdict: str, number: int, cameras: Sequence[str] = ("cam0",), **kw: Any
) -> SynthAttempt:
    return SynthAttempt(
        final_views={c: coded_view(verdict) for c in cameras},
        turning_views={c: coded_view(NEXT[verdict]) for c in cameras},
        competitor_id=f"2026TEST{number:02d}",
        attempt=number,
        expected_verdict=verdict,
        displayed_time_ms=9_000 + number,
        **kw,
    )


def replay(session_dir: Path, store: Any, judge: Any = None, **settings: Any) -> Station:
    from judgecam.device.session import load_session

    session = load_session(session_dir)
    station = Station(
        judge or CodedJudge(),
        store,
        StationSettings(competition="Test Open", station="t1", **settings),
        cameras=sorted(session.cameras),
    )
    feeds, triggers, decisions = replay_inputs(session_dir, station)
    run_loop(station, feeds, triggers, decisions)
    return station


def test_solved_plus2_dnf_review_are_judged_and_handed_off(tmp_path: Path) -> None:
    verdicts = ["solved", "+2", "DNF", "review"]
    build_session(tmp_path / "s", [attempt(v, i + 1) for i, v in enumerate(verdicts)])
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        station = replay(tmp_path / "s", store)
        outcomes = list(station.outcomes)
        assert [o.camera_verdict for o in outcomes] == verdicts
        assert [o.final_verdict for o in outcomes] == verdicts  # the judge confirmed each
        for number, outcome in enumerate(outcomes, start=1):
            assert outcome.incidents == ()
            assert outcome.judgements == 1
            assert outcome.attempt_id is not None
            record = store.attempt_record(outcome.attempt_id)
            assert record is not None and record.content["status"] == "committed"
            info = record.content["info"]
            assert (info["competitor_id"], info["attempt"], info["competition"]) == (
                f"2026TEST{number:02d}",
                number,
                "Test Open",
            )
            result = record.content["result"]
            assert result["verdict"] == verdicts[number - 1]
            assert result["trigger"]["displayed_time_ms"] == 9_000 + number
            frames = record.content["frames"]
            verdict_frames = [f for f in frames if f["verdict"]]
            assert len(verdict_frames) == 1  # the judged view, kept losslessly
            # The window holds frames from before the stop (the turning) and after it.
            stamps = [f["timestamp_ns"] for f in frames]
            assert min(stamps) < result["trigger"]["timestamp_ns"] < max(stamps)
            assert verdict_frames[0]["timestamp_ns"] == result["judged_at_ns"]
            decisions = store.decisions(outcome.attempt_id)
            assert [d.content["decision"] for d in decisions] == [f"confirm {verdicts[number - 1]}"]
            assert decisions[0].content["by"] == "demo judge"


def test_verdict_waits_for_rest_and_latency_is_measured(tmp_path: Path) -> None:
    timing = SynthTiming(fps=10.0, turning_frames=6, trigger_after=2, rest_frames=12)
    build_session(tmp_path / "s", [attempt("solved", 1)], timing)
    station = replay(tmp_path / "s", None, still_frames=5)
    (outcome,) = station.outcomes
    assert outcome.camera_verdict == "solved"
    # Trigger half a frame after turning frame 2; turning ends 3 frames later, the first rest
    # frame still differs from the last hand frame, then 5 still frames: 0.85 s after the stop.
    assert outcome.trigger_to_verdict_ns == 850 * MS


def test_judge_override_is_recorded(tmp_path: Path) -> None:
    build_session(tmp_path / "s", [attempt("+2", 1, decision="override", override_verdict="DNF")])
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        (outcome,) = replay(tmp_path / "s", store).outcomes
        assert (outcome.camera_verdict, outcome.final_verdict) == ("+2", "DNF")
        assert outcome.attempt_id is not None
        record = store.attempt_record(outcome.attempt_id)
        assert record is not None
        assert record.content["result"]["decision"]["verdict"] == "DNF"
        assert [d.content["decision"] for d in store.decisions(outcome.attempt_id)] == [
            "override DNF"
        ]


def test_camera_vanishing_mid_attempt_is_reported_and_the_attempt_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    timing = SynthTiming(idle_frames=3, turning_frames=6, trigger_after=2, rest_frames=10)
    # The only camera vanishes 2 frames into the rest (before "at rest"), never to return;
    # the judge's recorded decision comes later and is appended to the kept attempt.
    loss_ns = (3 + 6 + 2) * 100 * MS
    build_session(tmp_path / "s", [attempt("solved", 1)], timing, losses=[("cam0", loss_ns)])
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        station = replay(tmp_path / "s", store)
        (outcome,) = station.outcomes
        assert outcome.camera_verdict == "review"
        assert outcome.reasons[0] == "camera lost before the puzzle was at rest"
        assert any("camera cam0 lost" in i for i in outcome.incidents)
        assert outcome.attempt_id is not None
        record = store.attempt_record(outcome.attempt_id)
        assert record is not None and record.content["status"] == "committed"
        assert len(record.content["frames"]) >= 4  # what was captured is kept
        assert any("camera cam0 lost" in i for i in record.content["result"]["incidents"])
        assert [d.content["decision"] for d in store.decisions(outcome.attempt_id)] == [
            "confirm review"
        ]
    assert "camera cam0 lost" in station.messages["cam0"]
    assert "reconnect attempt 3" in caplog.text and "giving up" in caplog.text


def test_one_of_two_cameras_lost_the_other_still_judges(tmp_path: Path) -> None:
    timing = SynthTiming(idle_frames=2, turning_frames=5, trigger_after=2, rest_frames=10)
    loss_ns = 8 * 100 * MS  # during the turning, after the trigger
    session = [attempt("DNF", 1, cameras=("east", "west")), attempt("solved", 2, ("east", "west"))]
    build_session(tmp_path / "s", session, timing, losses=[("west", loss_ns)])
    station = replay(tmp_path / "s", None)
    first, second = station.outcomes
    assert first.camera_verdict == "DNF"
    assert any("camera west lost" in i for i in first.incidents)
    assert second.camera_verdict == "solved" and second.incidents == ()


class ScriptedSource:
    """A camera that shows given images, and can fail for a while (unplugged, replugged)."""

    def __init__(self, name: str, images: Sequence[np.ndarray], fail_at: set[int] = frozenset()):
        self._name, self._images, self._fail_at = name, list(images), set(fail_at)
        self.position = 0
        self.opened = 0

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> ScriptedSource:
        self.opened += 1
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def read(self) -> Frame | None:
        if self.position >= len(self._images):
            return None
        index = self.position
        self.position += 1
        if index in self._fail_at:
            raise CameraLost(f"{self._name}: USB disconnect")
        return Frame(self._name, index, index * 100 * MS, self._images[index])

    def settings(self) -> CameraSettings:
        return CameraSettings("scripted", self._name, (320, 240))


def frames_of(*phases: tuple[str, str, int], seed: int = 0) -> list[np.ndarray]:
    """Images for phases of (kind "hand"/"still", verdict code, frame count)."""
    rng = np.random.default_rng(seed)
    images = []
    for kind, verdict, count in phases:
        for k in range(count):
            view = coded_view(verdict)
            images.append(
                hand_frame(view, k / max(1, count - 1), rng)
                if kind == "hand"
                else noisy(view, 2.0, rng)
            )
    return images


class Recorder:
    """A trigger / decision source that releases scripted events at frame times."""

    def __init__(self, events: Sequence[tuple[int, Any]]) -> None:
        self.events = sorted(events, key=lambda e: e[0])

    def poll(self, now_ns: int) -> list[Any]:
        due = [e for t, e in self.events if t <= now_ns]
        self.events = [(t, e) for t, e in self.events if t > now_ns]
        return due

    def close(self) -> None:
        pass


def test_puzzle_touched_before_the_decision_is_judged_again() -> None:
    images = frames_of(
        ("hand", "DNF", 5), ("still", "+2", 8), ("hand", "+2", 4), ("still", "solved", 8)
    )
    trigger = TriggerEvent(250 * MS, "stackmat", 12_000)
    decision = JudgeDecision("confirm", timestamp_ns=2_450 * MS)
    station = Station(CodedJudge(), None, StationSettings(still_frames=4))
    run_loop(
        station,
        [CameraFeed(ScriptedSource("cam0", images))],
        [Recorder([(trigger.timestamp_ns, trigger)])],
        [Recorder([(decision.timestamp_ns, decision)])],
    )
    (outcome,) = station.outcomes
    assert outcome.judgements == 2
    assert outcome.camera_verdict == "solved"  # the verdict on screen when the judge confirmed
    assert outcome.final_verdict == "solved"
    assert any("puzzle moved after the verdict" in i for i in outcome.incidents)


def test_camera_reconnects_and_the_message_clears(caplog: pytest.LogCaptureFixture) -> None:
    images = frames_of(("still", "solved", 12))
    source = ScriptedSource("cam0", images, fail_at={3})
    station = Station(CodedJudge(), None, StationSettings())
    feed = CameraFeed(source, retry_interval_s=0.0, max_retries=5)
    seen_message: list[str] = []

    class Watch:
        def poll(self, now_ns: int) -> list[Any]:
            if "cam0" in station.messages:
                seen_message.append(station.messages["cam0"])
            return []

    run_loop(station, [feed], [], [Watch()])
    assert seen_message and "USB disconnect" in seen_message[0]
    assert "cam0" not in station.messages
    assert source.opened == 2
    assert "camera cam0 is back" in caplog.text
    assert station.frames_seen == 11


def test_decision_before_the_verdict_is_applied_once_judged() -> None:
    images = frames_of(("hand", "DNF", 4), ("still", "+2", 10))
    trigger = TriggerEvent(150 * MS, "keyboard")
    early = JudgeDecision("override", verdict="DNF", timestamp_ns=200 * MS)
    station = Station(CodedJudge(), None, StationSettings(still_frames=4))
    run_loop(
        station,
        [CameraFeed(ScriptedSource("cam0", images))],
        [Recorder([(trigger.timestamp_ns, trigger)])],
        [Recorder([(early.timestamp_ns, early)])],
    )
    (outcome,) = station.outcomes
    assert (outcome.camera_verdict, outcome.final_verdict) == ("+2", "DNF")


class ExplodingJudge:
    def judge(self, views: Sequence[Frame], event: str) -> JudgeResult:
        raise RuntimeError("model file missing")


def test_a_failing_judge_gives_review_and_keeps_the_attempt(tmp_path: Path) -> None:
    build_session(tmp_path / "s", [attempt("solved", 1)])
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        (outcome,) = replay(tmp_path / "s", store, judge=ExplodingJudge()).outcomes
        assert outcome.camera_verdict == "review"
        assert "the judge failed: RuntimeError: model file missing" in outcome.reasons
        assert outcome.attempt_id is not None


class BrokenStore:
    """An evidence store whose disk fails on commit for the first attempt."""

    def __init__(self) -> None:
        self.committed: list[dict[str, Any]] = []
        self.aborted: list[str] = []
        self.fail_next = True

    def begin_attempt(self, info: Any) -> Any:
        store = self

        class Writer:
            attempt_id = f"id-{info.attempt}"

            def add_frame(self, *args: Any, **kwargs: Any) -> None:
                pass

            def add_overlay(self, *args: Any) -> None:
                pass

            def commit(self, result: dict[str, Any]) -> Any:
                if store.fail_next:
                    store.fail_next = False
                    raise OSError(28, "No space left on device")
                store.committed.append(result)
                return type("Record", (), {"attempt_id": self.attempt_id})()

            def abort(self, reason: str) -> None:
                store.aborted.append(reason)

        return Writer()

    def append_decision(self, attempt_id: str, decision: str, by: str, note: str = "") -> None:
        pass


def test_evidence_failure_is_shown_and_the_station_goes_on(tmp_path: Path) -> None:
    build_session(tmp_path / "s", [attempt("solved", 1), attempt("DNF", 2)])
    store = BrokenStore()
    station = replay(
        tmp_path / "s",
        store,
    )
    first, second = station.outcomes
    assert first.attempt_id is None and first.camera_verdict == "solved"
    assert "No space left" in store.aborted[0]
    assert second.attempt_id == "id-2" and store.committed[0]["verdict"] == "DNF"


def test_new_trigger_before_a_decision_commits_the_previous_attempt(tmp_path: Path) -> None:
    build_session(tmp_path / "s", [attempt("solved", 1, decision=None), attempt("+2", 2)])
    first, second = replay(tmp_path / "s", None).outcomes
    assert first.final_verdict is None and first.camera_verdict == "solved"
    assert "a new trigger came before the judge's decision" in first.incidents
    assert second.final_verdict == "+2"


def test_never_at_rest_is_judged_as_review_after_the_timeout() -> None:
    images = frames_of(("hand", "solved", 40))
    trigger = TriggerEvent(100 * MS, "keyboard")
    station = Station(CodedJudge(), None, StationSettings(settle_timeout_s=2.0))
    run_loop(
        station,
        [CameraFeed(ScriptedSource("cam0", images))],
        [Recorder([(trigger.timestamp_ns, trigger)])],
        [],
    )
    (outcome,) = station.outcomes
    assert outcome.camera_verdict == "review"
    assert outcome.reasons[0] == "the puzzle was not at rest 2 s after the stop"


def test_views_of_several_cameras_are_grouped_by_time() -> None:
    class Spy(CodedJudge):
        views: tuple[Frame, ...] = ()

        def judge(self, views: Sequence[Frame], event: str = "333") -> JudgeResult:
            Spy.views = tuple(views)
            return super().judge(views, event)

    # Already at rest when the timer stops; the stop falls between rounds of frames, so when
    # camera a delivers its first frame after it, b's latest is still from before: the station
    # waits for b's next frame and judges the two frames of that one moment.
    a = ScriptedSource("a", frames_of(("still", "solved", 10)))
    b = ScriptedSource("b", frames_of(("still", "solved", 10), seed=1))
    trigger = TriggerEvent(350 * MS, "keyboard")
    station = Station(Spy(), None, StationSettings(still_frames=3), cameras=["a", "b"])
    run_loop(
        station, [CameraFeed(a), CameraFeed(b)], [Recorder([(trigger.timestamp_ns, trigger)])], []
    )
    assert [(v.camera, v.timestamp_ns) for v in Spy.views] == [("a", 400 * MS), ("b", 400 * MS)]
    assert station.outcomes[0].camera_verdict == "solved"
    assert station.outcomes[0].trigger_to_verdict_ns == 50 * MS


def test_status_for_the_page() -> None:
    station = Station(CodedJudge(), None, StationSettings(still_frames=2))
    station.queue_attempt(AttemptMeta("2026ABCD01", "222", 2, 3))
    assert station.status()["next_attempt"] == {
        "competitor_id": "2026ABCD01",
        "event": "222",
        "round": 2,
        "attempt": 3,
    }
    images = frames_of(("still", "+2", 5))
    station.on_frame(Frame("cam0", 0, 0, images[0]))
    station.on_trigger(TriggerEvent(50 * MS, "keyboard", 8_123))
    assert station.status()["state"] == "settling"
    for i in range(1, 5):
        station.on_frame(Frame("cam0", i, i * 100 * MS, images[i]))
    status = station.status()
    assert (status["state"], status["verdict"], status["timer_ms"]) == ("verdict", "+2", 8_123)
    assert status["attempt"]["competitor_id"] == "2026ABCD01"
    view = station.live_view("cam0")
    assert view is not None and view.shape == images[4].shape
    assert station.live_view("nope") is None


class GateJudge(CodedJudge):
    """A judge that works in the background and finishes only when the test says so."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.started = threading.Event()

    def judge(self, views: Sequence[Frame], event: str = "333") -> JudgeResult:
        self.started.set()
        assert self.gate.wait(10), "the test never released the judge"
        self.gate.clear()
        return super().judge(views, event)


def test_background_judging_keeps_frames_flowing_and_rejudges_if_moved() -> None:
    judge = GateJudge()
    station = Station(judge, None, StationSettings(still_frames=2, judge_in_background=True))
    images = frames_of(("still", "+2", 6), ("hand", "+2", 3), ("still", "solved", 6))
    fed = 0

    def feed_until(index: int) -> None:
        nonlocal fed
        while fed <= index:
            station.on_frame(Frame("cam0", fed, fed * 100 * MS, images[fed]))
            fed += 1

    def finish_judging() -> None:
        judge.gate.set()
        deadline = time.monotonic() + 10
        while station.status()["state"] == "judging" and time.monotonic() < deadline:
            station.tick(fed * 100 * MS)  # takes in the worker's result once it is done
            time.sleep(0.01)

    feed_until(0)
    station.on_trigger(TriggerEvent(50 * MS, "stackmat", 6_543))
    feed_until(3)  # at rest after 2 still frames: handed to the worker
    assert station.status()["state"] == "judging"
    assert judge.started.wait(5)
    feed_until(8)  # the puzzle is touched while vision works: frames still flow
    finish_judging()  # the verdict (+2) on views from before the touch is dropped
    status = station.status()
    assert (status["state"], status["verdict"]) == ("settling", None)
    assert "the puzzle moved while it was being judged; judged again" in status["incidents"]
    feed_until(11)  # at rest again: judged again
    assert station.status()["state"] == "judging"
    finish_judging()
    assert station.status()["verdict"] == "solved"
    station.on_decision(JudgeDecision("confirm"))
    station.close()
    (outcome,) = station.outcomes
    assert (outcome.camera_verdict, outcome.judgements, judge.calls) == ("solved", 1, 2)


def test_background_judgement_in_flight_is_kept_when_the_attempt_closes() -> None:
    judge = GateJudge()
    station = Station(judge, None, StationSettings(still_frames=2, judge_in_background=True))
    images = frames_of(("still", "DNF", 5))
    station.on_frame(Frame("cam0", 0, 0, images[0]))
    station.on_trigger(TriggerEvent(50 * MS, "keyboard"))
    for i in range(1, 4):
        station.on_frame(Frame("cam0", i, i * 100 * MS, images[i]))
    assert station.status()["state"] == "judging"
    station.on_decision(JudgeDecision("override", verdict="+2"))  # before the verdict: held
    judge.gate.set()
    station.close()  # waits for the worker, then commits with the held decision
    (outcome,) = station.outcomes
    assert (outcome.camera_verdict, outcome.final_verdict) == ("DNF", "+2")
