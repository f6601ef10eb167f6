"""Replay: recordings played as cameras, through the very same pipeline as live frames.

Three kinds of recording: a folder of images (timestamps from a frame rate), a video file
(MP4/MKV/AVI, timestamps from the container), or one camera of a recorded session
(`judgecam.device.session`, timestamps as recorded). The low-resolution analysis stream is
made by downscaling, as the camera's second stream would be.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import cv2
import numpy as np

from judgecam.device.image_files import ImageFileError, read_image
from judgecam.device.session import RecordedFrame, is_session, load_session
from judgecam.device.sources import CameraLost, CameraSettings, Frame

logger = logging.getLogger(__name__)

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})
VIDEO_SUFFIXES = frozenset({".mp4", ".mkv", ".avi", ".mov", ".webm"})
DEFAULT_ANALYSIS_WIDTH = 320


def downscale(image: np.ndarray, width: int) -> np.ndarray:
    """A low-resolution copy of a BGR image, `width` pixels wide (aspect ratio kept)."""
    height, full_width = image.shape[:2]
    if full_width <= width:
        return image
    size = (width, max(1, round(height * width / full_width)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


class ImageSequenceSource:
    """Frames from image files with given timestamps (an image folder or a session camera).

    `vanish_at_ns` makes the camera raise `CameraLost` at the first frame at or after that time,
    as an unplugged camera would.
    """

    def __init__(
        self,
        camera: str,
        frames: Sequence[RecordedFrame],
        root: Path,
        analysis_width: int | None = DEFAULT_ANALYSIS_WIDTH,
        vanish_at_ns: int | None = None,
    ) -> None:
        self._camera = camera
        self._frames = tuple(frames)
        self._root = root
        self._analysis_width = analysis_width
        self._vanish_at_ns = vanish_at_ns
        self._next = 0
        self._resolution: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self._camera

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Nothing to release; the position is kept, so a "reconnect" carries on."""

    def read(self) -> Frame | None:
        """The next recorded frame, None at the end; `CameraLost` if a file is unreadable."""
        if self._next >= len(self._frames):
            return None
        recorded = self._frames[self._next]
        if self._vanish_at_ns is not None and recorded.timestamp_ns >= self._vanish_at_ns:
            # A recorded loss is for good: every later read (reconnect attempts) fails too.
            raise CameraLost(f"camera {self._camera} vanished (recorded loss)")
        path = self._root / recorded.file
        try:
            image = read_image(path)
        except ImageFileError as error:
            raise CameraLost(f"camera {self._camera}: {error}") from None
        index = self._next
        self._next += 1
        self._resolution = (image.shape[1], image.shape[0])
        analysis = None if self._analysis_width is None else downscale(image, self._analysis_width)
        return Frame(self._camera, index, recorded.timestamp_ns, image, analysis)

    def settings(self) -> CameraSettings:
        return CameraSettings(
            backend="replay",
            camera=self._camera,
            resolution=self._resolution or (0, 0),
            controls={"source": str(self._root)},
        )


class VideoFileSource:
    """Frames of a video file, timestamped by the container (CAP_PROP_POS_MSEC)."""

    def __init__(
        self, path: Path, camera: str = "cam0", analysis_width: int | None = DEFAULT_ANALYSIS_WIDTH
    ) -> None:
        self._path = path
        self._camera = camera
        self._analysis_width = analysis_width
        self._capture: cv2.VideoCapture | None = None
        self._index = 0
        self._resolution = (0, 0)

    @property
    def name(self) -> str:
        return self._camera

    def __enter__(self) -> Self:
        capture = cv2.VideoCapture(str(self._path))
        if not capture.isOpened():
            raise CameraLost(f"cannot open video {self._path}")
        self._capture = capture
        return self

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
        """The next decoded frame, None at the end of the file."""
        if self._capture is None:
            raise CameraLost(f"video {self._path} is not open")
        ok, image = self._capture.read()
        if not ok or image is None:
            return None
        # POS_MSEC after read() is the presentation time of the frame just decoded.
        timestamp_ns = round(float(self._capture.get(cv2.CAP_PROP_POS_MSEC)) * 1e6)
        index = self._index
        self._index += 1
        self._resolution = (image.shape[1], image.shape[0])
        analysis = None if self._analysis_width is None else downscale(image, self._analysis_width)
        return Frame(self._camera, index, timestamp_ns, image, analysis)

    def settings(self) -> CameraSettings:
        return CameraSettings(
            "replay", self._camera, self._resolution, None, {"video": str(self._path)}
        )


def image_folder_frames(folder: Path, fps: float) -> list[RecordedFrame]:
    """The images of a folder in name order, timestamped at a fixed frame rate."""
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    period_ns = round(1e9 / fps)
    return [RecordedFrame(p.name, i * period_ns) for i, p in enumerate(files)]


def open_replay(
    path: str | Path,
    camera: str | None = None,
    fps: float = 10.0,
    analysis_width: int | None = DEFAULT_ANALYSIS_WIDTH,
    **_unused: Any,
) -> ImageSequenceSource | VideoFileSource:
    """A replay source for a session camera, an image folder or a video file.

    Raises FileNotFoundError / ValueError with one clear line when the path is unusable.
    """
    path = Path(path)
    if is_session(path):
        session = load_session(path)
        name = camera or sorted(session.cameras)[0]
        if name not in session.cameras:
            raise ValueError(f"session {path} has no camera {name!r}")
        vanish = min(
            (loss.timestamp_ns for loss in session.camera_losses if loss.camera == name),
            default=None,
        )
        return ImageSequenceSource(name, session.cameras[name], path, analysis_width, vanish)
    if path.is_dir():
        frames = image_folder_frames(path, fps)
        if not frames:
            raise ValueError(f"{path} holds no images")
        return ImageSequenceSource(camera or path.name, frames, path, analysis_width)
    if path.is_file() and path.suffix.lower() in VIDEO_SUFFIXES:
        return VideoFileSource(path, camera or "cam0", analysis_width)
    if not path.exists():
        raise FileNotFoundError(f"no such recording: {path}")
    raise ValueError(f"{path} is not a session folder, an image folder or a video file")
