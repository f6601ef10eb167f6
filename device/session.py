"""The recorded-session format: what a station saw and heard, to be replayed through the loop.

A session is a folder::

    session.json
    cam0/000000.jpg, cam0/000001.jpg, ...     (one folder per camera, any image format)
    cam1/...

``session.json`` (format "judgecam-session", version 1)::

    {
      "format": "judgecam-session", "version": 1,
      "competition": "Demo Open 2026", "station": "table-1",
      "cameras": {
        "cam0": {"frames": [{"file": "cam0/000000.jpg", "timestamp_ns": 0}, ...],
                 "intrinsics": {"camera_matrix": [[...], [...], [...]],
                                "dist_coeffs": [k1, k2, p1, p2, k3], "image_size": [w, h]},
                 "pose": [[r, r, r, tx], [r, r, r, ty], [r, r, r, tz], [0, 0, 0, 1]],
                 "recalibrations": [{"timestamp_ns": 13000000000,
                                     "intrinsics": {...}, "pose": [[...], ...]}]}
      },
      "attempts": [
        {"competitor_id": "2026DEMO01", "event": "333", "round": 1, "attempt": 1,
         "trigger": {"timestamp_ns": 2000000000, "source": "stackmat",
                     "displayed_time_ms": 9870},
         "decision": {"timestamp_ns": 4500000000, "decision": "confirm", "by": "judge"},
         "expected_verdict": "solved"}
      ],
      "camera_losses": [{"camera": "cam0", "timestamp_ns": 9000000000}]
    }

Timestamps are nanoseconds on one clock shared by frames, triggers and decisions. A decision
is "confirm" (the judge accepts the camera's verdict) or "override" with the judge's own
"verdict". ``expected_verdict`` is the ground truth when the session was built from rendered
images with known state (tests compare against it; the station never reads it).
``intrinsics`` (optional) is the camera's calibration for the recorded image size.
``pose`` (optional) is the camera's 4x4 world-from-camera transform: the world is the mat
(millimetres), the camera axes are OpenCV's (x right, y down, z forward), as
``judgecam calibrate rig`` writes a station camera's ``pose``. Its rotation part must be
orthonormal (within `POSE_TOLERANCE`) and its last row 0 0 0 1; vision uses it to align the
views of a symmetric puzzle exactly instead of by colours.
``recalibrations`` (optional, in time order) says the camera was moved and calibrated again:
from ``timestamp_ns`` on, its intrinsics and pose are the ones given there (a missing one is
unknown from then on). Sessions built from renders, where every capture has its own rig, use
it before each attempt.
``camera_losses`` (optional) makes a camera vanish at that moment when replayed, to exercise
loss handling.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

SESSION_FORMAT = "judgecam-session"
SESSION_VERSION = 1
SESSION_FILE = "session.json"
VERDICTS = ("solved", "+2", "DNF", "review")
#: Largest deviation from a rigid transform accepted in a pose (as for station configs).
POSE_TOLERANCE = 1e-3

#: A 4x4 world-from-camera transform, row by row.
Pose = tuple[tuple[float, ...], ...]


class SessionError(ValueError):
    """A session folder that cannot be replayed (missing file, bad JSON, wrong format)."""


@dataclass(frozen=True)
class RecordedFrame:
    """One frame of a recording: its image file (relative to the session) and timestamp."""

    file: str
    timestamp_ns: int


@dataclass(frozen=True)
class RecordedTrigger:
    """The moment the timer stopped (or the judge pressed the key)."""

    timestamp_ns: int
    source: str = "keyboard"
    displayed_time_ms: int | None = None


@dataclass(frozen=True)
class RecordedDecision:
    """What the judge did with the verdict: "confirm", or "override" with a verdict."""

    timestamp_ns: int
    decision: str
    by: str = "judge"
    verdict: str | None = None
    note: str = ""


@dataclass(frozen=True)
class RecordedAttempt:
    """One attempt of a session: scorecard data, its trigger and the judge's decision."""

    competitor_id: str
    event: str
    round: int
    attempt: int
    trigger: RecordedTrigger
    decision: RecordedDecision | None = None
    expected_verdict: str | None = None


@dataclass(frozen=True)
class CameraIntrinsics:
    """A recorded camera's pinhole calibration (for images of `image_size`, width x height)."""

    camera_matrix: tuple[tuple[float, ...], ...]
    dist_coeffs: tuple[float, ...]
    image_size: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "camera_matrix": [list(row) for row in self.camera_matrix],
            "dist_coeffs": list(self.dist_coeffs),
            "image_size": list(self.image_size),
        }


@dataclass(frozen=True)
class Recalibration:
    """From `timestamp_ns` on, a camera's intrinsics and pose (None: unknown from then on)."""

    timestamp_ns: int
    intrinsics: CameraIntrinsics | None = None
    pose: Pose | None = None

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"timestamp_ns": self.timestamp_ns}
        if self.intrinsics is not None:
            document["intrinsics"] = self.intrinsics.to_json()
        if self.pose is not None:
            document["pose"] = [list(row) for row in self.pose]
        return document


@dataclass(frozen=True)
class CameraLoss:
    """A camera that vanishes at a moment of the replay."""

    camera: str
    timestamp_ns: int


@dataclass(frozen=True)
class Session:
    """A recorded session, loaded."""

    root: Path
    competition: str
    station: str
    cameras: Mapping[str, tuple[RecordedFrame, ...]]
    attempts: tuple[RecordedAttempt, ...]
    camera_losses: tuple[CameraLoss, ...] = field(default_factory=tuple)
    intrinsics: Mapping[str, CameraIntrinsics] = field(default_factory=dict)
    poses: Mapping[str, Pose] = field(default_factory=dict)
    recalibrations: Mapping[str, tuple[Recalibration, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The session.json document."""
        return {
            "format": SESSION_FORMAT,
            "version": SESSION_VERSION,
            "competition": self.competition,
            "station": self.station,
            "cameras": {name: self._camera_json(name) for name in self.cameras},
            "attempts": [_attempt_json(attempt) for attempt in self.attempts],
            "camera_losses": [
                {"camera": loss.camera, "timestamp_ns": loss.timestamp_ns}
                for loss in self.camera_losses
            ],
        }

    def _camera_json(self, name: str) -> dict[str, Any]:
        document: dict[str, Any] = {"frames": [_frame_json(frame) for frame in self.cameras[name]]}
        if name in self.intrinsics:
            document["intrinsics"] = self.intrinsics[name].to_json()
        if name in self.poses:
            document["pose"] = [list(row) for row in self.poses[name]]
        if self.recalibrations.get(name):
            document["recalibrations"] = [item.to_json() for item in self.recalibrations[name]]
        return document


def is_session(path: Path) -> bool:
    """Whether a path is a recorded-session folder."""
    return path.is_dir() and (path / SESSION_FILE).is_file()


def load_session(path: Path) -> Session:
    """Read and check a session folder; `SessionError` with one clear line if unusable."""
    document_path = path / SESSION_FILE
    try:
        document = json.loads(document_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SessionError(f"{path} is not a recorded session (no {SESSION_FILE})") from None
    except (OSError, json.JSONDecodeError) as error:
        raise SessionError(f"cannot read {document_path}: {error}") from None
    if not isinstance(document, dict) or document.get("format") != SESSION_FORMAT:
        raise SessionError(f"{document_path} is not a {SESSION_FORMAT} document")
    if document.get("version") != SESSION_VERSION:
        raise SessionError(f"{document_path}: unsupported version {document.get('version')!r}")
    try:
        cameras = {
            str(name): tuple(
                RecordedFrame(str(item["file"]), int(item["timestamp_ns"]))
                for item in camera["frames"]
            )
            for name, camera in document["cameras"].items()
        }
        intrinsics = {
            str(name): _intrinsics_from_json(camera["intrinsics"])
            for name, camera in document["cameras"].items()
            if camera.get("intrinsics") is not None
        }
        poses = {
            str(name): _pose_from_json(camera["pose"], f"camera {name}")
            for name, camera in document["cameras"].items()
            if camera.get("pose") is not None
        }
        recalibrations = {
            str(name): tuple(
                _recalibration_from_json(item, f"camera {name}")
                for item in camera["recalibrations"]
            )
            for name, camera in document["cameras"].items()
            if camera.get("recalibrations")
        }
        attempts = tuple(_attempt_from_json(item) for item in document.get("attempts", []))
        losses = tuple(
            CameraLoss(str(item["camera"]), int(item["timestamp_ns"]))
            for item in document.get("camera_losses", [])
        )
    except PoseError as error:
        raise SessionError(f"{document_path}: {error}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise SessionError(f"{document_path}: malformed entry ({error!r})") from None
    if not cameras:
        raise SessionError(f"{document_path}: no cameras")
    for name, frames in cameras.items():
        stamps = [frame.timestamp_ns for frame in frames]
        if stamps != sorted(stamps):
            raise SessionError(f"{document_path}: frames of {name} are not in time order")
    for name, changes in recalibrations.items():
        stamps = [change.timestamp_ns for change in changes]
        if stamps != sorted(stamps):
            raise SessionError(f"{document_path}: recalibrations of {name} are not in time order")
    return Session(
        root=path,
        competition=str(document.get("competition", "")),
        station=str(document.get("station", "")),
        cameras=cameras,
        attempts=attempts,
        camera_losses=losses,
        intrinsics=intrinsics,
        poses=poses,
        recalibrations=recalibrations,
    )


def write_session(session: Session) -> Path:
    """Write session.json into the session's root (images are written by the caller)."""
    session.root.mkdir(parents=True, exist_ok=True)
    path = session.root / SESSION_FILE
    path.write_text(json.dumps(session.to_json(), indent=1) + "\n", encoding="utf-8")
    return path


def triggers_of(attempts: Sequence[RecordedAttempt]) -> list[RecordedTrigger]:
    """The triggers of a session's attempts, in time order."""
    return sorted((attempt.trigger for attempt in attempts), key=lambda t: t.timestamp_ns)


def _frame_json(frame: RecordedFrame) -> dict[str, Any]:
    return {"file": frame.file, "timestamp_ns": frame.timestamp_ns}


def _attempt_json(attempt: RecordedAttempt) -> dict[str, Any]:
    trigger = attempt.trigger
    document: dict[str, Any] = {
        "competitor_id": attempt.competitor_id,
        "event": attempt.event,
        "round": attempt.round,
        "attempt": attempt.attempt,
        "trigger": {
            "timestamp_ns": trigger.timestamp_ns,
            "source": trigger.source,
            "displayed_time_ms": trigger.displayed_time_ms,
        },
    }
    if attempt.decision is not None:
        decision = attempt.decision
        document["decision"] = {
            "timestamp_ns": decision.timestamp_ns,
            "decision": decision.decision,
            "by": decision.by,
            "verdict": decision.verdict,
            "note": decision.note,
        }
    if attempt.expected_verdict is not None:
        document["expected_verdict"] = attempt.expected_verdict
    return document


def _intrinsics_from_json(item: Mapping[str, Any]) -> CameraIntrinsics:
    matrix = tuple(tuple(float(v) for v in row) for row in item["camera_matrix"])
    if len(matrix) != 3 or any(len(row) != 3 for row in matrix):
        raise ValueError("camera_matrix must be 3x3")
    width, height = (int(v) for v in item["image_size"])
    return CameraIntrinsics(
        matrix,
        tuple(float(v) for v in item.get("dist_coeffs", [])),
        (width, height),
    )


class PoseError(ValueError):
    """A recorded pose that is not a 4x4 rigid transform."""


def _pose_from_json(value: Any, where: str) -> Pose:
    """A 4x4 world-from-camera transform, checked: finite, orthonormal rotation, 0 0 0 1."""
    if not (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(row, list) and len(row) == 4 for row in value)
    ):
        raise PoseError(f"{where}: pose must be a 4x4 matrix (world_from_camera, mm)")
    try:
        pose = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise PoseError(f"{where}: pose must hold numbers only") from None
    if not np.all(np.isfinite(pose)):
        raise PoseError(f"{where}: pose holds a non-finite number")
    rotation = pose[:3, :3]
    orthonormal_error = float(np.max(np.abs(rotation.T @ rotation - np.eye(3))))
    if orthonormal_error > POSE_TOLERANCE or abs(np.linalg.det(rotation) - 1.0) > POSE_TOLERANCE:
        raise PoseError(
            f"{where}: pose rotation is not orthonormal with determinant 1 "
            f"(off by {orthonormal_error:.2g}, tolerance {POSE_TOLERANCE:g})"
        )
    if float(np.max(np.abs(pose[3] - [0.0, 0.0, 0.0, 1.0]))) > POSE_TOLERANCE:
        raise PoseError(f"{where}: pose last row must be 0 0 0 1")
    return tuple(tuple(float(v) for v in row) for row in pose)


def _recalibration_from_json(item: Mapping[str, Any], where: str) -> Recalibration:
    intrinsics = item.get("intrinsics")
    pose = item.get("pose")
    return Recalibration(
        int(item["timestamp_ns"]),
        None if intrinsics is None else _intrinsics_from_json(intrinsics),
        None if pose is None else _pose_from_json(pose, f"{where} recalibration"),
    )


def _attempt_from_json(item: Mapping[str, Any]) -> RecordedAttempt:
    trigger_item = item["trigger"]
    displayed = trigger_item.get("displayed_time_ms")
    trigger = RecordedTrigger(
        timestamp_ns=int(trigger_item["timestamp_ns"]),
        source=str(trigger_item.get("source", "keyboard")),
        displayed_time_ms=None if displayed is None else int(displayed),
    )
    decision = None
    if item.get("decision") is not None:
        decision_item = item["decision"]
        kind = str(decision_item["decision"])
        verdict = decision_item.get("verdict")
        if kind not in ("confirm", "override"):
            raise ValueError(f"decision must be confirm or override, not {kind!r}")
        if kind == "override" and verdict not in VERDICTS:
            raise ValueError(f"an override needs a verdict in {VERDICTS}, not {verdict!r}")
        decision = RecordedDecision(
            timestamp_ns=int(decision_item["timestamp_ns"]),
            decision=kind,
            by=str(decision_item.get("by", "judge")),
            verdict=None if verdict is None else str(verdict),
            note=str(decision_item.get("note", "")),
        )
    expected = item.get("expected_verdict")
    return RecordedAttempt(
        competitor_id=str(item["competitor_id"]),
        event=str(item["event"]),
        round=int(item["round"]),
        attempt=int(item["attempt"]),
        trigger=trigger,
        decision=decision,
        expected_verdict=None if expected is None else str(expected),
    )
