"""Raspberry Pi cameras through picamera2 — the only module that imports picamera2.

Two streams from one request: "main" (full resolution, the evidence) in format "RGB888" —
which, despite its name, is laid out B, G, R in memory, i.e. already OpenCV's order — and
"lores" (low resolution, for motion detection and the live view) in "YUV420", the only lores
format a Pi 4's ISP offers. Each frame carries the request's `SensorTimestamp` (ns), so frames
line up with the moment the timer stopped. Auto exposure and white balance run for a number of
frames, then ExposureTime, AnalogueGain and ColourGains are locked at their settled values
(recorded in `settings()`), so the puzzle's colours do not drift with the competitor's hands.

Calls used (and mirrored by the fake in the tests): `Picamera2(camera_num)`,
`create_video_configuration(main=, lores=, controls=, buffer_count=)`, `configure`, `start`,
`captured_request()` -> `make_array(name)` / `get_metadata()`, `set_controls`, `stop`, `close`.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import time
from types import TracebackType
from typing import Any, Self

import cv2
import numpy as np

from judgecam.device.sources import CameraLost, CameraSettings, Frame

logger = logging.getLogger(__name__)

MAIN_FORMAT = "RGB888"  # B, G, R bytes in memory: OpenCV order, no conversion needed
LORES_FORMAT = "YUV420"
LOCKED_CONTROLS = ("ExposureTime", "AnalogueGain", "ColourGains")
MAX_PLAUSIBLE_LAG_NS = 1_000_000_000


class Picamera2Source:
    """A Pi camera (CSI) with a main and a low-resolution stream."""

    def __init__(
        self,
        camera_num: int = 0,
        camera: str = "cam0",
        resolution: tuple[int, int] = (1280, 720),
        analysis_resolution: tuple[int, int] = (320, 180),
        fps: float = 30.0,
        settle_frames: int = 30,
        controls: dict[str, Any] | None = None,
    ) -> None:
        self._camera_num = camera_num
        self._camera = camera
        self._resolution = resolution
        self._analysis_resolution = analysis_resolution
        self._fps = fps
        self._settle_frames = settle_frames
        self._fixed_controls = dict(controls or {})
        self._picam2: Any = None
        self._index = 0
        self._locked: dict[str, Any] = {}
        self._clock_offset_ns = 0

    @property
    def name(self) -> str:
        return self._camera

    def __enter__(self) -> Self:
        # The one place picamera2 is imported (by name: it has no type stubs, and exists only
        # on a Pi, where it comes from apt).
        picamera2 = importlib.import_module("picamera2")
        try:
            picam2 = picamera2.Picamera2(self._camera_num)
            config = picam2.create_video_configuration(
                main={"size": self._resolution, "format": MAIN_FORMAT},
                lores={"size": self._analysis_resolution, "format": LORES_FORMAT},
                controls={"FrameRate": self._fps},
                buffer_count=4,
            )
            picam2.configure(config)
            picam2.start()
        except Exception as error:  # libcamera raises RuntimeError, IndexError, ...
            raise CameraLost(f"camera {self._camera}: cannot start ({error})") from error
        self._picam2 = picam2
        self._settle_and_lock()
        return self

    def _settle_and_lock(self) -> None:
        """Let AE/AWB run, then fix exposure, gain and colour gains at the settled values.

        Meanwhile, check the clock of `SensorTimestamp`: on Raspberry Pi OS it is
        CLOCK_MONOTONIC (the clock triggers use), but libcamera leaves its origin unspecified, so
        if it is not within a second of the monotonic clock, frames are shifted onto it."""
        metadata: dict[str, Any] = {}
        lags: list[int] = []
        for _ in range(max(1, self._settle_frames)):
            with self._picam2.captured_request() as request:
                metadata = request.get_metadata()
                lags.append(time.monotonic_ns() - int(metadata["SensorTimestamp"]))
        lag = min(lags)  # capture-to-delivery latency, or a clock offset
        if not 0 <= lag < MAX_PLAUSIBLE_LAG_NS:
            self._clock_offset_ns = lag
            logger.warning(
                "camera %s: SensorTimestamp is not on the monotonic clock (off by %.3f s); "
                "frames are shifted onto it",
                self._camera,
                lag / 1e9,
            )
        locked = {key: metadata[key] for key in LOCKED_CONTROLS if key in metadata}
        locked.update(self._fixed_controls)
        self._picam2.set_controls({"AeEnable": False, "AwbEnable": False, **locked})
        self._locked = locked
        logger.info("camera %s locked at %s", self._camera, locked)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._picam2 is not None:
            try:
                self._picam2.stop()
            finally:
                self._picam2.close()
                self._picam2 = None

    def read(self) -> Frame | None:
        """The next frame (main BGR, lores BGR, SensorTimestamp); `CameraLost` on failure."""
        if self._picam2 is None:
            raise CameraLost(f"camera {self._camera} is not started")
        try:
            with self._picam2.captured_request() as request:
                # Copies: the buffers go back to libcamera when the request is released.
                main = np.array(request.make_array("main"), copy=True)
                lores_yuv = np.array(request.make_array("lores"), copy=True)
                metadata = request.get_metadata()
        except Exception as error:
            raise CameraLost(f"camera {self._camera}: capture failed ({error})") from error
        width, _ = self._analysis_resolution
        # YUV420 comes as (h * 3/2, stride) with any row padding on the right; crop after.
        analysis = cv2.cvtColor(lores_yuv, cv2.COLOR_YUV2BGR_I420)[:, :width]
        index = self._index
        self._index += 1
        return Frame(
            self._camera,
            index,
            int(metadata["SensorTimestamp"]) + self._clock_offset_ns,
            np.ascontiguousarray(main[:, :, :3]),
            np.ascontiguousarray(analysis),
        )

    def settings(self) -> CameraSettings:
        return CameraSettings(
            backend="picamera2",
            camera=self._camera,
            resolution=self._resolution,
            analysis_resolution=self._analysis_resolution,
            controls={"camera_num": self._camera_num, **self._locked},
        )


def open_picamera2(**options: Any) -> Picamera2Source:
    """The `picamera2` backend's factory (see `Picamera2Source` for the options).

    Raises ImportError at once when picamera2 is not installed, rather than at every
    reconnect attempt later."""
    if "picamera2" not in sys.modules and importlib.util.find_spec("picamera2") is None:
        raise ImportError(
            "the picamera2 backend needs picamera2 (on a Pi: sudo apt install python3-picamera2 "
            "and a venv made with --system-site-packages)"
        )
    for key in ("resolution", "analysis_resolution"):
        if key in options:
            options[key] = tuple(options[key])
    return Picamera2Source(**options)
