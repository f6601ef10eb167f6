"""USB cameras through OpenCV (V4L2 on Linux).

Frames are timestamped with the station's monotonic clock right after `grab()` — the moment
the driver handed the frame over — because V4L2's own buffer times are not exposed the same way
by every OpenCV build. Auto exposure and white balance are left to settle for a number of frames,
then switched off so the colours of the puzzle stay put, and the values read back are recorded.
"""

from __future__ import annotations

import logging
import time
from types import TracebackType
from typing import Any, Self

import cv2

from judgecam.device.source_replay import DEFAULT_ANALYSIS_WIDTH, downscale
from judgecam.device.sources import CameraLost, CameraSettings, Frame

logger = logging.getLogger(__name__)

#: V4L2's CAP_PROP_AUTO_EXPOSURE values through OpenCV: 1 = manual, 3 = aperture priority.
V4L2_MANUAL_EXPOSURE = 1.0


class OpenCVSource:
    """A USB camera: `device` is an index (0 = /dev/video0) or a path/URL."""

    def __init__(
        self,
        device: int | str = 0,
        camera: str = "cam0",
        resolution: tuple[int, int] = (1280, 720),
        fps: float = 30.0,
        analysis_width: int = DEFAULT_ANALYSIS_WIDTH,
        settle_frames: int = 30,
        lock_controls: bool = True,
    ) -> None:
        self._device = device
        self._camera = camera
        self._resolution = resolution
        self._fps = fps
        self._analysis_width = analysis_width
        self._settle_frames = settle_frames
        self._lock_controls = lock_controls
        self._capture: cv2.VideoCapture | None = None
        self._index = 0
        self._controls: dict[str, Any] = {}
        #: The size of the frames the device actually sends (None before the first).
        self._delivered: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self._camera

    def __enter__(self) -> Self:
        capture = cv2.VideoCapture(self._device)
        if not capture.isOpened():
            raise CameraLost(f"camera {self._camera}: cannot open device {self._device!r}")
        width, height = self._resolution
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        capture.set(cv2.CAP_PROP_FPS, self._fps)
        self._capture = capture
        for _ in range(self._settle_frames):
            capture.grab()
        if self._lock_controls:
            self._lock(capture)
        return self

    def _lock(self, capture: cv2.VideoCapture) -> None:
        """Freeze exposure, gain and white balance at their settled values."""
        exposure = capture.get(cv2.CAP_PROP_EXPOSURE)
        gain = capture.get(cv2.CAP_PROP_GAIN)
        temperature = capture.get(cv2.CAP_PROP_WB_TEMPERATURE)
        capture.set(cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_MANUAL_EXPOSURE)
        capture.set(cv2.CAP_PROP_EXPOSURE, exposure)
        capture.set(cv2.CAP_PROP_GAIN, gain)
        capture.set(cv2.CAP_PROP_AUTO_WB, 0.0)
        capture.set(cv2.CAP_PROP_WB_TEMPERATURE, temperature)
        self._controls = {
            "exposure": capture.get(cv2.CAP_PROP_EXPOSURE),
            "gain": capture.get(cv2.CAP_PROP_GAIN),
            "wb_temperature": capture.get(cv2.CAP_PROP_WB_TEMPERATURE),
            "auto_exposure": capture.get(cv2.CAP_PROP_AUTO_EXPOSURE),
            "auto_wb": capture.get(cv2.CAP_PROP_AUTO_WB),
        }
        logger.info("camera %s locked at %s", self._camera, self._controls)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None

    def read(self) -> Frame | None:
        """The next frame; `CameraLost` when the device stops answering."""
        if self._capture is None:
            raise CameraLost(f"camera {self._camera} is not open")
        if not self._capture.grab():
            raise CameraLost(f"camera {self._camera}: no frame from device {self._device!r}")
        timestamp_ns = time.monotonic_ns()
        ok, image = self._capture.retrieve()
        if not ok or image is None:
            raise CameraLost(f"camera {self._camera}: frame could not be decoded")
        delivered = (int(image.shape[1]), int(image.shape[0]))
        if delivered != self._delivered:
            if delivered != self._resolution:
                # A USB camera that cannot give the size asked for falls back to another
                # (often 640x480) without an error: say so, and record what it sends.
                logger.warning(
                    "camera %s sends %dx%d frames, not the %dx%d asked for",
                    self._camera,
                    *delivered,
                    *self._resolution,
                )
            self._delivered = delivered
        index = self._index
        self._index += 1
        return Frame(
            self._camera, index, timestamp_ns, image, downscale(image, self._analysis_width)
        )

    def settings(self) -> CameraSettings:
        return CameraSettings(
            backend="opencv",
            camera=self._camera,
            resolution=self._delivered or self._resolution,
            controls={
                "device": self._device,
                "requested_resolution": list(self._resolution),
                **self._controls,
            },
        )


def open_opencv(**options: Any) -> OpenCVSource:
    """The `opencv` backend's factory (see `OpenCVSource` for the options)."""
    if "resolution" in options:
        options["resolution"] = tuple(options["resolution"])
    return OpenCVSource(**options)
