"""The OpenCV backend, on a video file standing in for a USB camera (same VideoCapture calls)."""

from __future__ import annotations

import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.device.source_opencv import OpenCVSource
from judgecam.device.sources import CameraLost, open_source


def _video(path: Path, frames: int = 4) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (640, 360))
    for i in range(frames):
        image = np.zeros((360, 640, 3), np.uint8)
        image[:, :, 0] = 200  # blue: BGR order is kept
        image[:20, :20] = 50 * i
        writer.write(image)
    writer.release()
    return path


def test_frames_with_monotonic_timestamps_and_analysis_stream(tmp_path: Path) -> None:
    source = open_source(
        "opencv",
        device=str(_video(tmp_path / "cam.avi")),
        camera="usb0",
        resolution=[640, 360],
        analysis_width=160,
        settle_frames=1,
    )
    before = time.monotonic_ns()
    with source:
        frames = [source.read() for _ in range(3)]
        with pytest.raises(CameraLost, match="no frame"):
            source.read()  # the "camera" stops delivering
        settings = source.settings()
    after = time.monotonic_ns()
    assert all(f is not None for f in frames)
    stamps = [f.timestamp_ns for f in frames if f is not None]
    assert before <= stamps[0] <= stamps[1] <= stamps[2] <= after
    first = frames[0]
    assert first is not None and first.analysis is not None
    assert first.analysis.shape == (90, 160, 3)
    assert float(first.image[100:, 100:, 0].mean()) > 190  # blue channel first: BGR
    assert [f.index for f in frames if f is not None] == [0, 1, 2]
    assert settings.backend == "opencv" and "exposure" in settings.controls


def test_settings_record_the_size_the_camera_sends_not_the_one_asked_for(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A USB camera asked for 1280x720 that can only send 640x360 (the video here): the
    evidence records what was judged, and the log says the camera fell back."""
    source = OpenCVSource(
        str(_video(tmp_path / "cam.avi")), camera="usb0", resolution=(1280, 720), settle_frames=0
    )
    with source:
        assert source.settings().resolution == (1280, 720)  # nothing delivered yet
        source.read()
        settings = source.settings()
    assert settings.resolution == (640, 360)
    assert settings.controls["requested_resolution"] == [1280, 720]
    assert "camera usb0 sends 640x360 frames, not the 1280x720 asked for" in caplog.text


def test_missing_device_is_a_camera_loss(tmp_path: Path) -> None:
    with pytest.raises(CameraLost, match="cannot open"), OpenCVSource(str(tmp_path / "none.avi")):
        pass
