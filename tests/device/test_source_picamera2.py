"""The picamera2 backend against a fake module that mirrors exactly the calls it makes."""

from __future__ import annotations

import contextlib
import sys
import time
import types
from collections.abc import Iterator
from typing import Any, ClassVar

import cv2
import numpy as np
import pytest

from judgecam.device.source_picamera2 import Picamera2Source
from judgecam.device.sources import CameraLost, open_source

# The scene: a red patch on grey. In memory picamera2's "RGB888" is B, G, R (OpenCV order).
RED_BGR = (0, 0, 255)


class FakeRequest:
    def __init__(self, camera: FakePicamera2, number: int) -> None:
        self.camera = camera
        self.number = number
        self.released = False
        # Taken 20 ms before it is handed over, on the camera's clock.
        self.sensor_ns = time.monotonic_ns() - 20_000_000 + FakePicamera2.sensor_clock_offset_ns

    def make_array(self, name: str) -> np.ndarray:
        config = self.camera.config
        if name == "main":
            assert config["main"]["format"] == "RGB888"
            width, height = config["main"]["size"]
            image = np.full((height, width, 3), 128, np.uint8)
            image[: height // 2, : width // 2] = RED_BGR  # B, G, R bytes, as the ISP writes
            return image
        if name == "lores":
            assert config["lores"]["format"] == "YUV420"
            width, height = config["lores"]["size"]
            stride = width + 64  # padded rows, as libcamera may return them
            bgr = np.full((height, stride, 3), 128, np.uint8)
            bgr[: height // 2, : width // 2] = RED_BGR
            yuv = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV_I420)
            return yuv  # shape (height * 3 / 2, stride)
        raise KeyError(name)

    def get_metadata(self) -> dict[str, Any]:
        # AE/AWB converge over the first frames.
        settle = min(self.number, 10) / 10
        return {
            "SensorTimestamp": self.sensor_ns,
            "ExposureTime": int(20_000 - 10_000 * settle),
            "AnalogueGain": 4.0 - 2.0 * settle,
            "ColourGains": (1.5 + 0.4 * settle, 1.2 + 0.3 * settle),
        }

    def release(self) -> None:
        self.released = True


class FakePicamera2:
    instances: ClassVar[list[FakePicamera2]] = []
    fail_after: ClassVar[int | None] = None
    # 0: SensorTimestamp on the monotonic clock, as on Raspberry Pi OS.
    sensor_clock_offset_ns: ClassVar[int] = 0

    def __init__(self, camera_num: int = 0) -> None:
        self.camera_num = camera_num
        self.config: dict[str, Any] = {}
        self.started = False
        self.closed = False
        self.controls: dict[str, Any] = {}
        self.requests: list[FakeRequest] = []
        FakePicamera2.instances.append(self)

    def create_video_configuration(
        self,
        main: dict[str, Any],
        lores: dict[str, Any],
        controls: dict[str, Any],
        buffer_count: int,
    ) -> dict[str, Any]:
        return {"main": main, "lores": lores, "controls": controls, "buffer_count": buffer_count}

    def configure(self, config: dict[str, Any]) -> None:
        self.config = config

    def start(self) -> None:
        self.started = True

    @contextlib.contextmanager
    def captured_request(self) -> Iterator[FakeRequest]:
        if not self.started:
            raise RuntimeError("camera not started")
        if self.fail_after is not None and len(self.requests) >= self.fail_after:
            raise RuntimeError("Camera frontend has timed out!")
        request = FakeRequest(self, len(self.requests))
        self.requests.append(request)
        try:
            yield request
        finally:
            request.release()

    def set_controls(self, controls: dict[str, Any]) -> None:
        self.controls.update(controls)

    def stop(self) -> None:
        self.started = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_picamera2(monkeypatch: pytest.MonkeyPatch) -> type[FakePicamera2]:
    module = types.ModuleType("picamera2")
    module.Picamera2 = FakePicamera2  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "picamera2", module)
    FakePicamera2.instances = []
    FakePicamera2.fail_after = None
    FakePicamera2.sensor_clock_offset_ns = 0
    return FakePicamera2


def test_frames_are_bgr_with_sensor_timestamps(fake_picamera2: type[FakePicamera2]) -> None:
    source = open_source(
        "picamera2",
        camera="east",
        resolution=[640, 360],
        analysis_resolution=[160, 90],
        settle_frames=12,
    )
    with source:
        frame = source.read()
    assert frame is not None
    camera = fake_picamera2.instances[0]
    # "RGB888" is asked for, and taken as it is: the red patch stays red in BGR.
    assert camera.config["main"] == {"size": (640, 360), "format": "RGB888"}
    np.testing.assert_array_equal(frame.image[10, 10], RED_BGR)
    np.testing.assert_array_equal(frame.image[300, 600], (128, 128, 128))
    assert frame.image.shape == (360, 640, 3) and frame.image.flags["C_CONTIGUOUS"]
    # The lores stream comes back as BGR, row padding cropped.
    assert frame.analysis is not None and frame.analysis.shape == (90, 160, 3)
    np.testing.assert_allclose(frame.analysis[10, 10], RED_BGR, atol=6)
    np.testing.assert_allclose(frame.analysis[80, 150], (128, 128, 128), atol=3)
    # The 13th request (12 settling frames first), stamped with its SensorTimestamp as it is.
    assert len(camera.requests) == 13
    assert frame.timestamp_ns == camera.requests[12].sensor_ns
    assert all(r.released for r in camera.requests)
    assert camera.closed and not camera.started


def test_exposure_and_white_balance_are_locked_at_settled_values(
    fake_picamera2: type[FakePicamera2],
) -> None:
    with Picamera2Source(settle_frames=15) as source:
        settings = source.settings()
    camera = fake_picamera2.instances[0]
    assert camera.controls == {
        "AeEnable": False,
        "AwbEnable": False,
        "ExposureTime": 10_000,
        "AnalogueGain": 2.0,
        "ColourGains": (1.9, 1.5),
    }
    assert settings.controls["ExposureTime"] == 10_000
    assert settings.to_json()["controls"]["ColourGains"] == [1.9, 1.5]


def test_calibrated_controls_win_over_settled_ones(fake_picamera2: type[FakePicamera2]) -> None:
    with Picamera2Source(settle_frames=2, controls={"ExposureTime": 8_000}):
        pass
    assert fake_picamera2.instances[0].controls["ExposureTime"] == 8_000


def test_capture_failure_is_a_camera_loss(fake_picamera2: type[FakePicamera2]) -> None:
    fake_picamera2.fail_after = 3
    with Picamera2Source(settle_frames=2) as source:
        assert source.read() is not None
        with pytest.raises(CameraLost, match="timed out"):
            source.read()


def test_sensor_timestamps_on_another_clock_are_shifted_onto_the_monotonic_clock(
    fake_picamera2: type[FakePicamera2], caplog: pytest.LogCaptureFixture
) -> None:
    fake_picamera2.sensor_clock_offset_ns = -1_000 * 10**9  # a clock 1000 s behind
    with Picamera2Source(settle_frames=4) as source:
        frame = source.read()
        read_ns = time.monotonic_ns()
    assert frame is not None
    sensor_ns = fake_picamera2.instances[0].requests[-1].sensor_ns
    # Shifted by the clock difference (measured to within the delivery lag of 20 ms).
    assert 0 <= read_ns - frame.timestamp_ns < 500_000_000
    assert frame.timestamp_ns - sensor_ns == pytest.approx(1_000 * 10**9, abs=500_000_000)
    assert "not on the monotonic clock" in caplog.text
