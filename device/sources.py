"""Frame sources: one small Protocol for every camera, live or replayed, chosen by name.

A station reads frames from one to three cameras. Each camera is a `FrameSource`; the
backends (``picamera2`` on a Pi, ``opencv`` for USB cameras, ``replay`` for recordings) live in
their own modules and are imported only when chosen, so `import picamera2` happens in exactly
one module and only on a Pi. Frames carry their own timestamp (the sensor's when the backend
has one) so that frames of several cameras, and the moment the timer stopped, line up.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

logger = logging.getLogger(__name__)

#: Backend name -> module (relative to judgecam.device) and factory function.
BACKENDS: Mapping[str, tuple[str, str]] = {
    "picamera2": ("judgecam.device.source_picamera2", "open_picamera2"),
    "opencv": ("judgecam.device.source_opencv", "open_opencv"),
    "replay": ("judgecam.device.source_replay", "open_replay"),
}


class CameraLost(RuntimeError):
    """A camera stopped delivering frames (unplugged, driver error, end of a recording)."""


@dataclass(frozen=True)
class Frame:
    """One frame of one camera.

    Attributes
    ----------
    camera : the camera's name (unique at the station).
    index : frame counter of that camera, from 0.
    timestamp_ns : capture time in nanoseconds on the station clock (monotonic when live).
    image : ndarray of shape (H, W, 3), uint8, BGR — the full-resolution evidence image.
    analysis : ndarray of shape (h, w, 3), uint8, BGR, or None — a low-resolution copy used
        for motion detection and the live view (the camera's second stream when it has one).
    """

    camera: str
    index: int
    timestamp_ns: int
    image: np.ndarray
    analysis: np.ndarray | None = None

    def analysis_image(self) -> np.ndarray:
        """The low-resolution stream when there is one, else the full image."""
        return self.image if self.analysis is None else self.analysis


@dataclass(frozen=True)
class CameraSettings:
    """What a camera was locked to, recorded with the evidence."""

    backend: str
    camera: str
    resolution: tuple[int, int]
    analysis_resolution: tuple[int, int] | None = None
    controls: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "backend": self.backend,
            "camera": self.camera,
            "resolution": list(self.resolution),
            "analysis_resolution": (
                None if self.analysis_resolution is None else list(self.analysis_resolution)
            ),
            "controls": {key: _jsonable(value) for key, value in self.controls.items()},
        }


@runtime_checkable
class FrameSource(Protocol):
    """A camera: a context manager that hands out frames one at a time.

    `read()` returns the next frame, or None when no frame came in time (live) or the
    recording has ended (replay); it raises `CameraLost` when the camera is gone.
    """

    @property
    def name(self) -> str: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...

    def read(self) -> Frame | None: ...

    def settings(self) -> CameraSettings: ...


def iter_frames(source: FrameSource) -> Iterator[Frame]:
    """Every frame of a source until it returns None."""
    while (frame := source.read()) is not None:
        yield frame


def open_source(backend: str, **options: Any) -> FrameSource:
    """The frame source of a backend by name; its module is imported only now."""
    try:
        module_name, factory_name = BACKENDS[backend]
    except KeyError:
        known = ", ".join(sorted(BACKENDS))
        raise ValueError(f"unknown camera backend {backend!r} (known: {known})") from None
    module = importlib.import_module(module_name)
    source: FrameSource = getattr(module, factory_name)(**options)
    return source


def nearest_in_time(frames: Sequence[Frame], timestamp_ns: int, tolerance_ns: int) -> Frame | None:
    """The frame closest to `timestamp_ns` if it is within `tolerance_ns`, else None."""
    best: Frame | None = None
    for frame in frames:
        if best is None or abs(frame.timestamp_ns - timestamp_ns) < abs(
            best.timestamp_ns - timestamp_ns
        ):
            best = frame
    if best is None or abs(best.timestamp_ns - timestamp_ns) > tolerance_ns:
        return None
    return best


def group_by_time(
    frames_by_camera: Mapping[str, Sequence[Frame]], timestamp_ns: int, tolerance_ns: int
) -> tuple[Frame, ...]:
    """One frame per camera taken at about the same moment (cameras with none in tolerance
    are left out), ordered by camera name."""
    group = []
    for camera in sorted(frames_by_camera):
        frame = nearest_in_time(frames_by_camera[camera], timestamp_ns, tolerance_ns)
        if frame is not None:
            group.append(frame)
    return tuple(group)


def _jsonable(value: Any) -> Any:
    """Camera control values (tuples, numpy scalars) as plain JSON values."""
    if isinstance(value, tuple | list):
        return [_jsonable(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
