"""Frame sources: the Protocol, choosing by name, grouping by time, and replay."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.device.session import SessionError, load_session
from judgecam.device.session_synth import SynthAttempt, SynthTiming, build_session, coded_view
from judgecam.device.source_replay import ImageSequenceSource, VideoFileSource, open_replay
from judgecam.device.sources import (
    CameraLost,
    Frame,
    FrameSource,
    group_by_time,
    iter_frames,
    nearest_in_time,
    open_source,
)

MS = 1_000_000


def _frame(camera: str, t_ms: int) -> Frame:
    return Frame(camera, t_ms, t_ms * MS, np.zeros((2, 2, 3), np.uint8))


def test_importing_the_device_package_does_not_import_camera_libraries() -> None:
    code = (
        "import sys, judgecam.device.sources, judgecam.device.station_loop, "
        "judgecam.device.station_cli, judgecam.device.triggers;"
        "print(sorted(m for m in ('picamera2', 'gpiozero', 'serial', 'flask', 'waitress') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_only_one_module_imports_picamera2(repo_root: Path) -> None:
    pattern = re.compile(
        r'^\s*(import picamera2|from picamera2 |.*import_module\("picamera2"\))', re.M
    )
    users = sorted(
        p.name for p in (repo_root / "device").glob("*.py") if pattern.search(p.read_text())
    )
    assert users == ["source_picamera2.py"]


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown camera backend 'webcam'"):
        open_source("webcam")


def test_nearest_in_time_respects_the_tolerance() -> None:
    frames = [_frame("a", t) for t in (0, 33, 66, 100)]
    assert nearest_in_time(frames, 70 * MS, 10 * MS) == frames[2]
    assert nearest_in_time(frames, 83 * MS, 10 * MS) is None
    assert nearest_in_time([], 0, 10) is None


def test_group_by_time_takes_one_frame_per_camera_of_the_same_moment() -> None:
    frames = {
        "b": [_frame("b", t) for t in (5, 38, 71)],
        "a": [_frame("a", t) for t in (0, 33, 66)],
        "c": [_frame("c", t) for t in (300,)],  # too far: left out
    }
    group = group_by_time(frames, 35 * MS, 10 * MS)
    assert [(f.camera, f.timestamp_ns // MS) for f in group] == [("a", 33), ("b", 38)]


def test_image_folder_replay_with_fixed_rate(tmp_path: Path) -> None:
    for i in range(3):
        cv2.imwrite(str(tmp_path / f"{i:03d}.png"), np.full((48, 64, 3), i * 50, np.uint8))
    (tmp_path / "notes.txt").write_text("not an image")
    with open_replay(tmp_path, fps=20.0, analysis_width=32) as source:
        assert isinstance(source, FrameSource)
        frames = list(iter_frames(source))
    assert [f.timestamp_ns for f in frames] == [0, 50 * MS, 100 * MS]
    assert frames[1].image.shape == (48, 64, 3)
    assert frames[1].analysis is not None and frames[1].analysis.shape == (24, 32, 3)
    assert int(frames[2].image[0, 0, 0]) == 100


def test_video_replay_uses_container_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (64, 48))
    for i in range(5):
        image = np.zeros((48, 64, 3), np.uint8)
        image[:, :, 2] = 40 * i  # red grows: checks frame order and BGR
        writer.write(image)
    writer.release()
    with VideoFileSource(path, camera="usb") as source:
        frames = list(iter_frames(source))
    assert [f.camera for f in frames] == ["usb"] * 5
    np.testing.assert_allclose([f.timestamp_ns / MS for f in frames], [0, 40, 80, 120, 160], atol=1)
    reds = [float(f.image[:, :, 2].mean()) for f in frames]
    np.testing.assert_allclose(reds, [0, 40, 80, 120, 160], atol=3)


def test_session_replay_and_recorded_camera_loss(tmp_path: Path) -> None:
    attempt = SynthAttempt({"left": coded_view("solved"), "right": coded_view("DNF")}, "X1")
    timing = SynthTiming(idle_frames=1, turning_frames=2, trigger_after=1, rest_frames=3)
    build_session(tmp_path, [attempt], timing, losses=[("right", 300 * MS)])
    session = load_session(tmp_path)
    assert sorted(session.cameras) == ["left", "right"]
    with open_replay(tmp_path, camera="left") as left:
        assert len(list(iter_frames(left))) == 6
    right = open_replay(tmp_path, camera="right")
    assert isinstance(right, ImageSequenceSource)
    with right:
        stamps = [right.read().timestamp_ns for _ in range(3)]  # type: ignore[union-attr]
        assert stamps == [0, 100 * MS, 200 * MS]
        for _ in range(2):  # lost for good: reconnecting does not bring old frames back
            with pytest.raises(CameraLost, match="vanished"):
                right.read()


def test_a_recorded_frame_cut_short_is_a_camera_loss_that_says_so(tmp_path: Path) -> None:
    for i in range(2):
        cv2.imwrite(str(tmp_path / f"{i:03d}.jpg"), np.full((48, 64, 3), 60 + i, np.uint8))
    whole = (tmp_path / "001.jpg").read_bytes()
    (tmp_path / "001.jpg").write_bytes(whole[: len(whole) - 40])
    with open_replay(tmp_path, fps=10.0) as source:
        assert source.read() is not None
        with pytest.raises(CameraLost, match=r"001\.jpg is cut short"):
            source.read()


def test_unusable_recordings_say_why(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such recording"):
        open_replay(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no images"):
        open_replay(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "session.json").write_text("{not json")
    with pytest.raises(SessionError, match="cannot read"):
        load_session(tmp_path / "bad")
    (tmp_path / "bad" / "session.json").write_text('{"format": "other"}')
    with pytest.raises(SessionError, match="not a judgecam-session"):
        load_session(tmp_path / "bad")
