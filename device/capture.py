"""The capture window: a ring buffer before the trigger, frames after it, and "at rest".

Memory is bounded on purpose (a station runs all day on a Pi): the ring keeps full-resolution
images only at the evidence rate (a few per second) for the last few seconds, and the window of
an attempt never holds more than a fixed number of frames. Motion is measured on the
low-resolution analysis stream, relative to the sensor noise of that very frame pair, so the same
threshold works in a dim hall and under stage lights.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from judgecam.device.sources import Frame

logger = logging.getLogger(__name__)

#: median(|N(0, s)|) = 0.6745 s: the scale of a noise-only difference from its median.
MAD_TO_SIGMA = 1.0 / 0.6745


class FrameRing:
    """The last `span_s` seconds of one camera, at most one frame per 1/`rate_hz` seconds."""

    def __init__(self, span_s: float = 3.0, rate_hz: float = 5.0, max_frames: int = 64) -> None:
        self._span_ns = int(span_s * 1e9)
        self._spacing_ns = int(1e9 / rate_hz) if rate_hz > 0 else 0
        self._frames: deque[Frame] = deque(maxlen=max_frames)

    def add(self, frame: Frame) -> bool:
        """Keep the frame if it is due at the evidence rate; drop what fell out of the span."""
        kept = not self._frames or (
            frame.timestamp_ns - self._frames[-1].timestamp_ns >= self._spacing_ns
        )
        if kept:
            self._frames.append(frame)
        while self._frames and frame.timestamp_ns - self._frames[0].timestamp_ns > self._span_ns:
            self._frames.popleft()
        return kept

    def since(self, timestamp_ns: int) -> list[Frame]:
        """The kept frames taken at or after a moment."""
        return [f for f in self._frames if f.timestamp_ns >= timestamp_ns]

    def clear(self) -> None:
        self._frames.clear()

    def __len__(self) -> int:
        return len(self._frames)


@dataclass(frozen=True)
class Region:
    """A rectangle in analysis-frame pixels (the puzzle's region when calibration knows it)."""

    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True)
class MotionSample:
    """How much changed between two consecutive analysis frames of a camera."""

    camera: str
    timestamp_ns: int
    moving: bool
    changed_fraction: float  # share of pixels that changed by more than the noise allows
    noise_sigma: float  # per-pixel noise of a frame difference, in grey levels


class MotionDetector:
    """Frame differencing on the analysis stream, thresholded relative to the noise.

    A pixel has changed when its difference exceeds `k_sigma` times the noise estimated from the
    median difference of the same pair (most of the view is static; a hand or a turning puzzle
    covers a minority of it), and never less than `floor` grey levels (JPEG and quantisation).
    The pair shows motion when more than `min_fraction` of the region changed.
    """

    def __init__(
        self,
        k_sigma: float = 5.0,
        floor: float = 6.0,
        min_fraction: float = 0.002,
        region: Region | None = None,
    ) -> None:
        self.k_sigma = k_sigma
        self.floor = floor
        self.min_fraction = min_fraction
        self.region = region
        self._previous: dict[str, np.ndarray] = {}

    def _grey(self, frame: Frame) -> np.ndarray:
        image = frame.analysis_image()
        if self.region is not None:
            r = self.region
            image = image[r.y : r.y + r.height, r.x : r.x + r.width]
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        return cv2.GaussianBlur(grey, (3, 3), 0).astype(np.int16)

    def update(self, frame: Frame) -> MotionSample:
        """Compare a frame with its camera's previous one (the first frame counts as moving)."""
        grey = self._grey(frame)
        previous = self._previous.get(frame.camera)
        self._previous[frame.camera] = grey
        if previous is None or previous.shape != grey.shape:
            return MotionSample(frame.camera, frame.timestamp_ns, True, 1.0, 0.0)
        difference = np.abs(grey - previous)
        sigma = float(np.median(difference)) * MAD_TO_SIGMA
        threshold = max(self.floor, self.k_sigma * sigma)
        changed = float(np.count_nonzero(difference > threshold)) / difference.size
        return MotionSample(
            frame.camera, frame.timestamp_ns, changed > self.min_fraction, changed, sigma
        )

    def forget(self, camera: str) -> None:
        """Drop a camera's previous frame (after it reconnects the view may have moved)."""
        self._previous.pop(camera, None)


class RestTracker:
    """The puzzle is at rest when every watched camera saw no motion for N consecutive frames."""

    def __init__(self, still_frames: int = 5) -> None:
        self.still_frames = still_frames
        self._still: dict[str, int] = {}

    def update(self, sample: MotionSample) -> None:
        self._still[sample.camera] = 0 if sample.moving else self._still.get(sample.camera, 0) + 1

    def at_rest(self, cameras: Iterable[str]) -> bool:
        names = list(cameras)
        return bool(names) and all(self._still.get(c, 0) >= self.still_frames for c in names)

    def reset(self) -> None:
        self._still.clear()

    def forget(self, camera: str) -> None:
        self._still.pop(camera, None)

    def counts(self) -> Mapping[str, int]:
        return dict(self._still)


class CaptureWindow:
    """The frames of one attempt: from `pre_s` before the trigger to `post_s` after it, at the
    evidence rate, plus every set of views that was judged; never more than `max_frames`."""

    def __init__(
        self,
        trigger_ns: int,
        before: Sequence[Frame],
        post_s: float = 3.0,
        rate_hz: float = 5.0,
        max_frames: int = 120,
    ) -> None:
        self.trigger_ns = trigger_ns
        self.end_ns = trigger_ns + int(post_s * 1e9)
        self._spacing_ns = int(1e9 / rate_hz) if rate_hz > 0 else 0
        self._max_frames = max_frames
        self._frames: list[Frame] = []
        self._verdict_keys: set[tuple[str, int]] = set()
        self._last_kept: dict[str, int] = {}
        for frame in sorted(before, key=lambda f: f.timestamp_ns):
            self._append(frame)

    def _append(self, frame: Frame) -> bool:
        if len(self._frames) >= self._max_frames:
            return False
        key = (frame.camera, frame.index)
        if any((f.camera, f.index) == key for f in self._frames[-8:]):
            return False
        self._frames.append(frame)
        self._last_kept[frame.camera] = frame.timestamp_ns
        return True

    def offer(self, frame: Frame) -> bool:
        """Keep a live frame if it falls in the window and is due at the evidence rate."""
        if frame.timestamp_ns > self.end_ns:
            return False
        last = self._last_kept.get(frame.camera)
        if last is not None and frame.timestamp_ns - last < self._spacing_ns:
            return False
        return self._append(frame)

    def mark_verdict(self, views: Sequence[Frame]) -> None:
        """Keep the judged views (even past the window or the cap) and flag them."""
        for frame in views:
            key = (frame.camera, frame.index)
            if key not in {(f.camera, f.index) for f in self._frames}:
                self._frames.append(frame)  # judged views are always kept
            self._verdict_keys.add(key)

    def is_verdict_frame(self, frame: Frame) -> bool:
        return (frame.camera, frame.index) in self._verdict_keys

    @property
    def frames(self) -> tuple[Frame, ...]:
        return tuple(sorted(self._frames, key=lambda f: (f.timestamp_ns, f.camera)))

    def __len__(self) -> int:
        return len(self._frames)
