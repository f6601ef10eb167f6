"""The review pages: find attempts, step through their frames, record the chief judge's decision.

Only files that an attempt's own record vouches for are served (a whitelist, so no path can
reach outside the store). Decisions are appended as new records; nothing is edited.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from flask import (
    Blueprint,
    abort,
    flash,
    redirect,
    render_template,
    request,
    send_file,
    url_for,
)

from judgecam.device.evidence import EvidenceError, Record
from judgecam.device.evidence_files import safe_name
from judgecam.device.review_reasons import recorded_reasons
from judgecam.device.webapp import evidence_store

logger = logging.getLogger(__name__)

review = Blueprint("review", __name__)

#: What the chief judge can decide (Art. 14 special situations, Art. 16.8 penalties).
DECISIONS = ("solved", "+2", "DNF", "extra attempt")
FILTERS = ("competition", "competitor", "event", "round")


@review.get("/")
def index() -> str:
    store = evidence_store()
    filters = {name: request.args.get(name, "").strip() for name in FILTERS}
    round_value = int(filters["round"]) if filters["round"].isdigit() else None
    attempts = store.find(
        competition=filters["competition"] or None,
        competitor_id=filters["competitor"] or None,
        event=filters["event"] or None,
        round=round_value,
    )
    choices = {
        "competition": store.index.distinct("competition"),
        "event": store.index.distinct("event"),
        "round": store.index.distinct("round"),
        "competitor": store.index.distinct("competitor_id"),
    }
    return render_template("index.html", attempts=attempts, filters=filters, choices=choices)


def _attempt_or_404(attempt_id: str) -> Record:
    try:
        safe_name(attempt_id, what="attempt id")
    except EvidenceError:
        abort(404)
    record = evidence_store().attempt_record(attempt_id)
    if record is None:
        abort(404)
    return record


@review.get("/attempt/<attempt_id>")
def attempt(attempt_id: str) -> str:
    store = evidence_store()
    store.refresh()
    record = _attempt_or_404(attempt_id)
    result: Mapping[str, Any] = record.content.get("result") or {}
    frames = _viewer_frames(attempt_id, record)
    return render_template(
        "attempt.html",
        record=record,
        info=record.content["info"],
        result=result,
        why=recorded_reasons(result),
        measurements=list(_flatten(result.get("measurements") or {})),
        confidences=list(_flatten(result.get("confidences") or {})),
        details=json.dumps(
            {
                k: v
                for k, v in result.items()
                if k not in ("verdict", "reasons", "review_because", "measurements", "confidences")
            },
            indent=1,
            sort_keys=True,
            ensure_ascii=False,
        ),
        frames=frames,
        cameras=sorted({frame["camera"] for frame in frames}),
        decisions=store.decisions(attempt_id),
        choices=DECISIONS,
        other_files=sorted(
            name
            for name in _file_names(attempt_id, record)
            if not name.startswith(("clip/", "verdict/", "overlay/"))
        ),
    )


@review.get("/attempt/<attempt_id>/file/<path:name>")
def attempt_file(attempt_id: str, name: str) -> Any:
    path = evidence_store().attempt_file(attempt_id, name)
    if path is None:
        abort(404)
    return send_file(path, max_age=3600, download_name=path.name)


@review.post("/attempt/<attempt_id>/decision")
def decide(attempt_id: str) -> Any:
    _attempt_or_404(attempt_id)
    decision = request.form.get("decision", "")
    by = request.form.get("by", "").strip()
    note = request.form.get("note", "").strip()
    if decision not in DECISIONS:
        abort(400, f"unknown decision {decision!r}")
    if not by:
        flash("Enter the name of the judge who decides.", "error")
        return redirect(url_for("review.attempt", attempt_id=attempt_id))
    try:
        record = evidence_store().append_decision(attempt_id, decision, by, note)
    except EvidenceError as error:
        flash(str(error), "error")
    else:
        flash(f"Decision “{decision}” recorded (record #{record.seq}).", "ok")
    return redirect(url_for("review.attempt", attempt_id=attempt_id) + "#decision")


def _file_names(attempt_id: str, record: Record) -> Iterator[str]:
    prefix = f"attempts/{attempt_id}/"
    return (path[len(prefix) :] for path in record.files if path.startswith(prefix))


def _viewer_frames(attempt_id: str, record: Record) -> list[dict[str, Any]]:
    """The frames for the viewer script, with URLs and times relative to the trigger."""

    def url(name: str | None) -> str | None:
        if not name:
            return None
        return url_for("review.attempt_file", attempt_id=attempt_id, name=name)

    frames = [f for f in record.content.get("frames", []) if f.get("clip") or f.get("verdict")]
    trigger = _trigger_ns(record, frames)
    return [
        {
            "camera": frame["camera"],
            "timestamp_ns": frame["timestamp_ns"],
            "offset_ms": (frame["timestamp_ns"] - trigger) / 1e6,
            "image": url(frame.get("verdict") or frame.get("clip")),
            "lossless": bool(frame.get("verdict")),
            "overlay": url(frame.get("overlay")),
        }
        for frame in frames
    ]


def _trigger_ns(record: Record, frames: list[Mapping[str, Any]]) -> int:
    times = (record.content.get("result") or {}).get("times") or {}
    if isinstance(times, Mapping) and isinstance(times.get("trigger_ns"), int):
        return int(times["trigger_ns"])
    verdicts = [f["timestamp_ns"] for f in frames if f.get("verdict")]
    if verdicts:
        return min(verdicts)
    return frames[0]["timestamp_ns"] if frames else 0


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Nested measurements as ("a.b", "1.23") rows for a table."""
    if isinstance(value, Mapping):
        for key in sorted(value):
            yield from _flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, float):
        yield prefix, f"{value:.4g}"
    elif isinstance(value, list) and len(value) > 8:
        yield prefix, json.dumps(value[:8])[:-1] + ", …]"
    else:
        yield prefix, json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
