"""The station's data: verdicts, the Judge protocol, scorecards, decisions, settings, outcomes.

Kept apart from the state machine (`judgecam.device.station`) so the page, the CLI, the loop
and the evidence record can use them without the machinery.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from judgecam.device.capture import CaptureWindow
from judgecam.device.sources import Frame
from judgecam.device.triggers import TriggerEvent

logger = logging.getLogger(__name__)

VERDICTS = ("solved", "+2", "DNF", "review")


@dataclass(frozen=True)
class JudgeResult:
    """A verdict on the views of one moment, with the reasons a judge should read."""

    verdict: str
    reasons: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    overlays: Mapping[str, np.ndarray] = field(default_factory=dict)  # camera -> drawn view
    #: For a review: which of `reasons` made it one (the others are notes); may be empty.
    review_because: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, not {self.verdict!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "review_because": list(self.review_because),
            "details": dict(self.details),
        }


class Judge(Protocol):
    """Anything that judges the views (one frame per camera) of one moment.

    `event` is the attempt's event id from the scorecard ("333", "222", "pyram", ...): it says
    which puzzle to expect."""

    def judge(self, views: Sequence[Frame], event: str) -> JudgeResult: ...


# --------------------------------------------------------------------------- station data
@dataclass(frozen=True)
class AttemptMeta:
    """The scorecard: who, which event, round and attempt."""

    competitor_id: str
    event: str
    round: int
    attempt: int


@dataclass(frozen=True)
class JudgeDecision:
    """The judge's answer to a verdict: "confirm" it, or "override" it with `verdict`.

    `attempt` names the attempt the decision is for (None: the attempt on screen)."""

    decision: str
    by: str = "judge"
    verdict: str | None = None
    note: str = ""
    timestamp_ns: int = 0
    attempt: AttemptMeta | None = None

    def __post_init__(self) -> None:
        if self.decision not in ("confirm", "override"):
            raise ValueError(f"decision must be confirm or override, not {self.decision!r}")
        if self.decision == "override" and self.verdict not in VERDICTS:
            raise ValueError(f"an override needs a verdict in {VERDICTS}")

    def label(self, camera_verdict: str) -> str:
        """The decision as recorded in the evidence log, e.g. "confirm solved", "override DNF"."""
        return (
            f"confirm {camera_verdict}"
            if self.decision == "confirm"
            else f"override {self.verdict}"
        )


@dataclass(frozen=True)
class StationSettings:
    """How the station captures and judges (the calibration's station config feeds these)."""

    competition: str = "Unnamed competition"
    station: str = "station-1"
    pre_s: float = 2.0  # ring buffer kept before the trigger
    post_s: float = 3.0  # frames kept after it
    evidence_rate_hz: float = 4.0  # full-resolution frames kept per second and camera
    max_window_frames: int = 90
    still_frames: int = 5  # consecutive motionless frames that make "at rest"
    group_tolerance_s: float = 0.05  # frames of several cameras this close are one moment
    settle_timeout_s: float = 15.0  # judge anyway (as review) if never at rest by then
    decision_timeout_s: float = 600.0  # commit without a decision after this long
    max_judgements: int = 8  # re-judgings kept per attempt (bounded memory)
    # Live: judge in a worker thread so frames keep flowing (and motion is watched) while
    # vision works; replays judge in the loop's thread, which makes them deterministic.
    judge_in_background: bool = False


@dataclass(frozen=True)
class Judgement:
    """One verdict given during an attempt, on the views of one moment."""

    result: JudgeResult
    views: tuple[Frame, ...]
    at_ns: int
    latency_s: float  # processing time of the judge call


@dataclass(frozen=True)
class AttemptOutcome:
    """What became of an attempt (kept for the page, the CLI summary and the tests)."""

    meta: AttemptMeta
    attempt_id: str | None  # None when the evidence could not be written
    trigger: TriggerEvent
    camera_verdict: str | None
    final_verdict: str | None
    decision: JudgeDecision | None
    reasons: tuple[str, ...]
    incidents: tuple[str, ...]
    judgements: int
    frames_saved: int
    trigger_to_verdict_ns: int | None  # station-clock time from the trigger to the verdict
    review_because: tuple[str, ...] = ()  # which of `reasons` made the camera say review


class EvidenceSink(Protocol):
    """The part of `judgecam.device.evidence.EvidenceStore` the station uses."""

    def begin_attempt(self, info: Any) -> Any: ...

    def append_decision(self, attempt_id: str, decision: str, by: str, note: str = "") -> Any: ...


@dataclass
class AttemptInProgress:
    """The station's working state of the attempt being judged (mutable, never shared)."""

    meta: AttemptMeta
    trigger: TriggerEvent
    window: CaptureWindow
    writer: Any
    started_wall_ns: int
    judgements: list[Judgement] = field(default_factory=list)
    current: Judgement | None = None  # the verdict on screen (None while settling)
    incidents: list[str] = field(default_factory=list)
    pending_decision: JudgeDecision | None = None
    judging: PendingJudgement | None = None  # a judgement running in the background


@dataclass
class PendingJudgement:
    """Views handed to the judge's worker thread, and whether the puzzle moved since."""

    future: Future[JudgeResult]
    views: tuple[Frame, ...]
    at_ns: int
    started: float  # perf_counter when submitted
    moved: bool = False


def meta_json(meta: AttemptMeta) -> dict[str, Any]:
    """A scorecard as JSON (the page's and the evidence's form)."""
    return {
        "competitor_id": meta.competitor_id,
        "event": meta.event,
        "round": meta.round,
        "attempt": meta.attempt,
    }
