"""What the station hands to the evidence store for an attempt: its result and its frames.

`result_json` is the attempt's result record: every verdict given with its reasons and, for a
review, which of them made it one (`review_because`, also per judged moment; records written
before session 17 lack the key), the trigger, the judge's decision, what happened (camera
losses, re-judging), the cameras' locked settings. `commit` writes the capture window (the
judged views flagged, kept losslessly) and the overlays, and commits. A failure to write is
returned, not raised: the station must go on judging.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from judgecam.device.sources import CameraSettings
from judgecam.device.station_types import (
    AttemptInProgress,
    JudgeDecision,
    Judgement,
    StationSettings,
)

logger = logging.getLogger(__name__)


def result_json(
    attempt: AttemptInProgress,
    current: Judgement,
    decision: JudgeDecision | None,
    final: str | None,
    settings: StationSettings,
    cameras: Mapping[str, CameraSettings],
) -> dict[str, Any]:
    """The result record of an attempt (JSON-ready)."""
    trigger = attempt.trigger
    return {
        "verdict": current.result.verdict,
        "final_verdict": final if decision is not None else None,
        "reasons": list(current.result.reasons),
        "review_because": list(current.result.review_because),
        "judge": current.result.to_json(),
        "judged_at_ns": current.at_ns,
        "judgements": [
            {
                "at_ns": j.at_ns,
                "verdict": j.result.verdict,
                "reasons": list(j.result.reasons),
                "review_because": list(j.result.review_because),
                "views": [{"camera": v.camera, "timestamp_ns": v.timestamp_ns} for v in j.views],
                "latency_s": round(j.latency_s, 6),
            }
            for j in attempt.judgements
        ],
        "trigger": {
            "timestamp_ns": trigger.timestamp_ns,
            "source": trigger.source,
            "displayed_time_ms": trigger.displayed_time_ms,
        },
        "decision": None
        if decision is None
        else {
            "decision": decision.decision,
            "verdict": final,
            "by": decision.by,
            "note": decision.note,
        },
        "incidents": list(attempt.incidents),
        "cameras": {name: s.to_json() for name, s in cameras.items()},
        "capture": {
            "pre_s": settings.pre_s,
            "post_s": settings.post_s,
            "evidence_rate_hz": settings.evidence_rate_hz,
            "still_frames": settings.still_frames,
        },
    }


def commit(
    attempt: AttemptInProgress, current: Judgement, result: Mapping[str, Any]
) -> tuple[str | None, int, str | None]:
    """Write and commit an attempt: (attempt id or None, frames written, error or None)."""
    writer = attempt.writer
    if writer is None:
        return None, 0, None
    saved = 0
    try:
        for frame in attempt.window.frames:
            writer.add_frame(
                frame.camera,
                frame.timestamp_ns,
                frame.image,
                verdict_frame=attempt.window.is_verdict_frame(frame),
            )
            saved += 1
        for camera, overlay in current.result.overlays.items():
            view = next((v for v in current.views if v.camera == camera), None)
            if view is not None:
                writer.add_overlay(camera, view.timestamp_ns, overlay)
        record = writer.commit(result)
    except Exception as error:
        logger.exception("committing the evidence of %s failed", attempt.meta)
        try:
            writer.abort(f"station could not commit: {error}")
        except Exception:
            logger.exception("could not even record the attempt as aborted")
        return None, saved, str(error)
    attempt_id = getattr(record, "attempt_id", None) or getattr(writer, "attempt_id", None)
    return (None if attempt_id is None else str(attempt_id)), saved, None
