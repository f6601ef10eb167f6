"""Rig poses: recorded in sessions, checked on load, handed by the station's judge to vision."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgecam.device.demo_session_build import choose_captures
from judgecam.device.session import (
    CameraIntrinsics,
    Recalibration,
    SessionError,
    load_session,
    write_session,
)
from judgecam.device.session_synth import SynthAttempt, SynthTiming, build_session, coded_view
from judgecam.device.sources import Frame
from judgecam.device.station_cli import DEMO_SESSION
from judgecam.device.station_judge import (
    CameraCalibration,
    VisionJudge,
    judge_for_session,
    poses_from_config,
)

TIMING = SynthTiming(idle_frames=1, turning_frames=2, trigger_after=1, rest_frames=3)


def _pose(yaw_deg: float, x_mm: float) -> tuple[tuple[float, ...], ...]:
    """A rigid world-from-camera transform: a yaw about the mat's normal and a shift."""
    c, s = np.cos(np.radians(yaw_deg)), np.sin(np.radians(yaw_deg))
    matrix = np.array([[c, -s, 0, x_mm], [s, c, 0, 20.0], [0, 0, 1, 300.0], [0, 0, 0, 1]])
    return tuple(tuple(float(v) for v in row) for row in matrix)


INTRINSICS = CameraIntrinsics(
    ((900.0, 0.0, 639.5), (0.0, 900.0, 359.5), (0.0, 0.0, 1.0)), (), (1280, 720)
)


def _session_with_poses(root: Path) -> Any:
    attempt = SynthAttempt({"left": coded_view("solved"), "right": coded_view("DNF")}, "P1")
    session = build_session(root, [attempt], TIMING)
    session = dataclasses.replace(
        session,
        intrinsics={"left": INTRINSICS},
        poses={"left": _pose(30.0, -200.0), "right": _pose(-150.0, 210.0)},
        recalibrations={"left": (Recalibration(200_000_000, None, _pose(45.0, -190.0)),)},
    )
    write_session(session)
    return session


def test_a_session_with_poses_round_trips(tmp_path: Path) -> None:
    written = _session_with_poses(tmp_path)
    loaded = load_session(tmp_path)
    assert loaded == written
    document = json.loads((tmp_path / "session.json").read_text())
    np.testing.assert_allclose(document["cameras"]["right"]["pose"], _pose(-150.0, 210.0))
    assert "pose" in document["cameras"]["left"]["recalibrations"][0]
    assert "intrinsics" not in document["cameras"]["left"]["recalibrations"][0]


@pytest.mark.parametrize(
    ("pose", "message"),
    [
        ([[1, 0, 0], [0, 1, 0], [0, 0, 1]], "camera left: pose must be a 4x4 matrix"),
        ([[1, 0, 0, "x"], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], "must hold numbers"),
        ([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, float("nan")], [0, 0, 0, 1]], "non-finite"),
        ([[1.1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], "not orthonormal"),
        ([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, -1, 0], [0, 0, 0, 1]], "determinant 1"),
        ([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]], "last row must be 0 0 0 1"),
    ],
)
def test_a_bad_pose_is_a_clear_error(tmp_path: Path, pose: Any, message: str) -> None:
    build_session(tmp_path, [SynthAttempt({"left": coded_view("solved")}, "P2")], TIMING)
    path = tmp_path / "session.json"
    document = json.loads(path.read_text())
    document["cameras"]["left"]["pose"] = pose
    path.write_text(json.dumps(document))
    with pytest.raises(SessionError, match=message) as caught:
        load_session(tmp_path)
    assert "\n" not in str(caught.value)


def test_a_bad_recalibration_pose_is_a_clear_error(tmp_path: Path) -> None:
    build_session(tmp_path, [SynthAttempt({"left": coded_view("solved")}, "P3")], TIMING)
    path = tmp_path / "session.json"
    document = json.loads(path.read_text())
    document["cameras"]["left"]["recalibrations"] = [
        {"timestamp_ns": 5, "pose": [[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}
    ]
    path.write_text(json.dumps(document))
    with pytest.raises(SessionError, match="camera left recalibration: pose rotation"):
        load_session(tmp_path)


class RecordingCheck:
    """Stands in for vision's `check`: keeps each call and answers review."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        return dataclasses.make_dataclass("Result", ["verdict", "reasons"])("review", ())


def _frames(at_ns: int) -> list[Frame]:
    image = np.zeros((360, 640, 3), np.uint8)
    return [Frame("left", 0, at_ns, image), Frame("right", 0, at_ns, image)]


def test_vision_judge_passes_the_poses_to_check(tmp_path: Path) -> None:
    session = _session_with_poses(tmp_path)
    recorder = RecordingCheck()
    judge = judge_for_session(load_session(tmp_path), draw=False)
    judge._check = recorder
    judge.judge(_frames(100_000_000), "333")
    judge.judge(_frames(300_000_000), "333oh")  # after the left camera's recalibration
    (args, kwargs), (_, later) = recorder.calls
    assert args[1] == "333"
    before = kwargs["world_from_camera"]
    np.testing.assert_array_equal(before[0], session.poses["left"])
    np.testing.assert_array_equal(before[1], session.poses["right"])
    np.testing.assert_array_equal(later["world_from_camera"][0], _pose(45.0, -190.0))
    np.testing.assert_array_equal(later["world_from_camera"][1], session.poses["right"])
    # The recorded intrinsics (1280x720) scaled to the 640x360 frames.
    np.testing.assert_allclose(args[2][0].camera_matrix[0], [450.0, 0.0, 319.5])


def test_cameras_without_a_pose_pass_none_and_no_poses_pass_nothing() -> None:
    recorder = RecordingCheck()
    left = np.array(_pose(10.0, 0.0))
    one = VisionJudge({}, check=recorder, draw=False, poses={"left": left})
    one.judge(_frames(0), "333")
    none = VisionJudge({"left": CameraCalibration(np.eye(3), np.zeros(5), (640, 360))})
    none._check = recorder
    none.judge(_frames(0), "333")
    (_, with_one), (args, without) = recorder.calls
    poses = with_one["world_from_camera"]
    assert len(poses) == 2 and poses[1] is None
    np.testing.assert_array_equal(poses[0], left)
    assert without == {} and len(args) == 4


def test_a_camera_sending_another_aspect_ratio_than_calibrated_is_a_review() -> None:
    """A USB camera that fell back to 640x480, calibrated at 1280x720: its intrinsics would be
    stretched to fit, so the attempt goes to a judge with the reason, before vision runs."""
    recorder = RecordingCheck()
    calibration = CameraCalibration(np.eye(3), np.zeros(5), (1280, 720))
    judge = VisionJudge({"left": calibration}, check=recorder, draw=False)
    four_by_three = np.zeros((480, 640, 3), np.uint8)
    result = judge.judge([Frame("left", 0, 0, four_by_three), _frames(0)[1]], "333")
    assert result.verdict == "review"
    assert result.review_because == (
        "camera left sends 640x480 frames but is calibrated for 1280x720, another aspect "
        "ratio: set its resolution back or calibrate it again",
    )
    assert recorder.calls == []
    judge.judge(_frames(0), "333")  # 640x360: the same aspect, scaled and judged
    assert len(recorder.calls) == 1


def test_poses_come_from_the_station_config(tmp_path: Path) -> None:
    from judgecam.calibration.station import load_station_config

    pose = [list(row) for row in _pose(90.0, 150.0)]
    config = tmp_path / "station.toml"
    config.write_text(f"""
[station]
name = "Table 3"
evidence_dir = "{tmp_path / "ev"}"

[trigger]
kind = "keyboard"

[[cameras]]
name = "east"
backend = "replay"
source = "{tmp_path}"
resolution = [1280, 720]
analysis_resolution = [320, 180]
pose = {pose}

[[cameras]]
name = "west"
backend = "replay"
source = "{tmp_path}"
resolution = [1280, 720]
analysis_resolution = [320, 180]
""")
    poses = poses_from_config(load_station_config(config))
    assert list(poses) == ["east"]
    np.testing.assert_allclose(poses["east"], pose)


def test_the_demo_records_each_attempts_rig_from_the_truth(corpus_dir: Path) -> None:
    manifest = json.loads((corpus_dir / "manifest.json").read_text())
    captures = choose_captures(manifest)
    assert [c["verdict"] for c in captures[:3]] == ["solved", "+2", "DNF"]
    assert "occluded" in captures[3]["tags"]
    session = load_session(DEMO_SESSION)
    assert [a.expected_verdict for a in session.attempts] == [c["verdict"] for c in captures]
    for camera in ("cam0", "cam1"):
        changes = session.recalibrations[camera]
        rigs = [session.poses[camera], *(change.pose for change in changes)]
        for capture, pose in zip(captures, rigs, strict=True):
            truth = json.loads((corpus_dir / capture["truth"]).read_text())
            (view,) = [v for v in truth["views"] if v["camera"] == camera]
            np.testing.assert_allclose(pose, view["world_from_camera"])
        # Each recalibration comes after the previous attempt's decision, before the next stop.
        for change, previous, attempt in zip(
            changes, session.attempts[:-1], session.attempts[1:], strict=True
        ):
            assert previous.decision is not None
            assert previous.decision.timestamp_ns < change.timestamp_ns
            assert change.timestamp_ns < attempt.trigger.timestamp_ns


def test_the_station_lists_first_what_made_it_a_review() -> None:
    """The page shows the reasons in order: what sent the attempt to a judge comes first, the
    notes after, each once."""
    answer = dataclasses.make_dataclass("Result", ["verdict", "reasons", "review_because"])(
        "review",
        ("a view left out", "no intrinsics given", "glare on face U decides the verdict"),
        ("glare on face U decides the verdict",),
    )
    judge = VisionJudge({}, check=lambda *args, **kwargs: answer, draw=False)
    result = judge.judge(_frames(0), "333")
    assert result.reasons == (
        "glare on face U decides the verdict",
        "a view left out",
        "no intrinsics given",
    )
