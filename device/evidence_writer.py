"""Writing one attempt's evidence: frames around the trigger, verdict frames, overlays, notes.

Files go to `staging/<attempt_id>/` (each via temp name + fsync + rename) while the attempt
runs; `commit` appends the attempt record (with every file's SHA-256) to the log and only then
moves the folder to `attempts/<attempt_id>/`. A crash at any point leaves either a staged folder
(recorded as an aborted attempt on the next open) or a committed record whose folder move the
next open completes — never evidence without a record, nor a record without its evidence.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np

from judgecam.device.evidence_chain import EvidenceError, Record
from judgecam.device.evidence_files import (
    FileDigest,
    atomic_write,
    digest_bytes,
    fsync_dir,
    safe_name,
)

if TYPE_CHECKING:
    from judgecam.device.evidence import EvidenceStore
    from judgecam.device.evidence_log import StagingLock

logger = logging.getLogger(__name__)

INFO_FILE = "attempt.json"
JPEG_QUALITY = 90
_FRAME_FILE = re.compile(r"^(clip|verdict|overlay)/([^/]+)/(\d+)\.(jpg|png)$")


@dataclass(frozen=True)
class AttemptInfo:
    """Who, what and where: the keys evidence is found by."""

    competition: str
    competitor_id: str
    event: str
    round: int
    attempt: int
    station: str = "station-1"

    def __post_init__(self) -> None:
        for name in ("competition", "competitor_id", "event", "station"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or len(value) > 64:
                raise EvidenceError(f"attempt {name} must be a non-empty text of <= 64 chars")
        for name in ("round", "attempt"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise EvidenceError(f"attempt {name} must be a positive integer, not {value!r}")

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> AttemptInfo:
        return cls(
            competition=str(value["competition"]),
            competitor_id=str(value["competitor_id"]),
            event=str(value["event"]),
            round=int(value["round"]),
            attempt=int(value["attempt"]),
            station=str(value.get("station", "station-1")),
        )


def frames_from_names(names: Iterable[str]) -> list[dict[str, Any]]:
    """The frame list of an attempt, derived from its file names (so recovery can rebuild it).

    `clip/<camera>/<timestamp_ns>.jpg` is a clip frame; `verdict/...png` its lossless copy;
    `overlay/...png` the overlay drawn for it.
    """
    frames: dict[tuple[str, int], dict[str, Any]] = {}
    for name in names:
        match = _FRAME_FILE.match(name)
        if not match:
            continue
        kind, camera, stamp = match.group(1), match.group(2), int(match.group(3))
        entry = frames.setdefault(
            (camera, stamp),
            {
                "camera": camera,
                "timestamp_ns": stamp,
                "clip": None,
                "verdict": None,
                "overlay": None,
            },
        )
        entry[kind] = name
    return [frames[key] for key in sorted(frames, key=lambda key: (key[1], key[0]))]


def _encode(image: np.ndarray, extension: str) -> bytes:
    import cv2

    if image.dtype != np.uint8 or image.ndim not in (2, 3):
        raise EvidenceError(
            f"frame must be a uint8 HxW or HxWxC array, not {image.dtype} {image.shape}"
        )
    params = (
        [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
        if extension == ".jpg"
        else [cv2.IMWRITE_PNG_COMPRESSION, 1]
    )
    ok, buffer = cv2.imencode(extension, image, params)
    if not ok:
        raise EvidenceError(f"could not encode a {image.shape} frame as {extension}")
    return buffer.tobytes()


class AttemptWriter:
    """Collects one attempt's files; a context manager that records an aborted attempt on error."""

    def __init__(
        self,
        store: EvidenceStore,
        info: AttemptInfo,
        attempt_id: str,
        staging: Path,
        owner: StagingLock,
    ) -> None:
        self.attempt_id = attempt_id
        self._owner = owner
        self.info = info
        self.started_ns = time.time_ns()
        self._store = store
        self._staging = staging
        self._digests: dict[str, FileDigest] = {}
        self._record: Record | None = None
        self._write(INFO_FILE, _info_bytes(info, attempt_id, self.started_ns))

    @property
    def staging_dir(self) -> Path:
        return self._staging

    @property
    def done(self) -> bool:
        return self._record is not None

    def __enter__(self) -> AttemptWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is not None and not self.done:
            try:
                self.abort(f"{type(exc).__name__}: {exc}")
            except EvidenceError:
                logger.exception("could not record aborted attempt %s", self.attempt_id)
        # Still staged (abort failed)? Then the next open may record it as aborted.
        self._owner.release(remove=self.done)

    def add_frame(
        self, camera: str, timestamp_ns: int, image_bgr: np.ndarray, *, verdict_frame: bool = False
    ) -> None:
        """A frame of the clip (JPEG); a verdict frame is also kept losslessly (PNG)."""
        safe_name(camera, what="camera name")
        stamp = int(timestamp_ns)
        self._write(f"clip/{camera}/{stamp}.jpg", _encode(image_bgr, ".jpg"))
        if verdict_frame:
            self._write(f"verdict/{camera}/{stamp}.png", _encode(image_bgr, ".png"))

    def add_overlay(self, camera: str, timestamp_ns: int, image: np.ndarray) -> None:
        """The overlay drawn for a frame (BGR or BGRA, PNG), shown over it on the review page."""
        safe_name(camera, what="camera name")
        self._write(f"overlay/{camera}/{int(timestamp_ns)}.png", _encode(image, ".png"))

    def add_file(self, name: str, data: bytes) -> None:
        """Any other file of the attempt (overlay PNGs, judge notes, ...), by relative name."""
        self._write(name, bytes(data))

    def commit(self, result: Mapping[str, Any]) -> Record:
        """Record the attempt with its verdict, measurements, confidences, versions, settings."""
        return self._finish("committed", {"result": dict(result)})

    def abort(self, reason: str) -> Record:
        """Record what was captured so far as an aborted attempt (nothing is thrown away)."""
        return self._finish("aborted", {"result": {}, "abort_reason": reason})

    def _write(self, name: str, data: bytes) -> None:
        if self.done:
            raise EvidenceError(f"attempt {self.attempt_id} is already recorded")
        safe_name(name)
        if name in self._digests:
            raise EvidenceError(f"attempt {self.attempt_id} already has a file {name!r}")
        atomic_write(self._staging / name, data, sync_dir=False)
        self._digests[name] = digest_bytes(data)

    def _finish(self, status: str, extra: Mapping[str, Any]) -> Record:
        if self.done:
            raise EvidenceError(f"attempt {self.attempt_id} is already recorded")
        folders = {self._staging}
        for name in self._digests:
            folders.update(self._staging / parent for parent in Path(name).parents)
        for folder in sorted(folders, reverse=True):  # deepest first, the attempt folder last
            fsync_dir(folder)
        self._record = self._store._commit_staged(
            self.attempt_id, self.info, self.started_ns, status, dict(self._digests), extra
        )
        self._owner.release(remove=True)
        return self._record


def _info_bytes(info: AttemptInfo, attempt_id: str, started_ns: int) -> bytes:
    import json

    value = {"attempt_id": attempt_id, "info": info.as_json(), "started_ns": started_ns}
    return json.dumps(value, sort_keys=True, indent=1).encode("utf-8")
