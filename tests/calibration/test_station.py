"""The station configuration: the example loads, bad files list every problem, check looks
deeper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judgecam.calibration.camera import default_intrinsics, save_intrinsics
from judgecam.calibration.checks import check_station
from judgecam.calibration.rig import look_at_pose
from judgecam.calibration.station import (
    StationConfigError,
    load_station_config,
    save_station_config,
)

MINIMAL = """
[station]
name = "test"
evidence_dir = "evidence"

[[cameras]]
name = "top"
backend = "opencv"
source = 0
resolution = [1280, 720]
"""


@pytest.fixture
def example(repo_root: Path) -> Path:
    return repo_root / "calibration" / "example-station.toml"


def _write(folder: Path, text: str) -> Path:
    path = folder / "station.toml"
    path.write_text(text)
    return path


def test_example_station_loads(example: Path) -> None:
    config = load_station_config(example)
    assert config.name == "Station 1"
    assert [c.name for c in config.cameras] == ["south-east", "north", "west"]
    camera = config.camera("south-east")
    assert camera.backend == "picamera2"
    assert camera.resolution == (2304, 1296) and camera.analysis_resolution == (1152, 648)
    assert camera.controls.exposure_us == 8000 and camera.controls.colour_gains == (1.9, 1.6)
    assert camera.pose is not None
    np.testing.assert_allclose(camera.pose, look_at_pose((200.0, -200.0, 200.0)), atol=1e-6)
    assert config.trigger.kind == "keyboard" and config.web.port == 8080


def test_example_station_passes_the_check(example: Path) -> None:
    findings = check_station(load_station_config(example))
    assert [f for f in findings if f.level == "error"] == []


def test_defaults_and_relative_paths(tmp_path: Path) -> None:
    config = load_station_config(_write(tmp_path, MINIMAL))
    assert config.puzzle == "333" and config.scheme == "builtin:333"
    assert config.evidence_dir == tmp_path / "evidence"
    camera = config.cameras[0]
    assert camera.source == "0" and camera.analysis_resolution == (1280, 720)
    assert camera.pose is None and not camera.controls.fully_locked
    assert config.min_free_space_mb == 1024


def test_round_trip(tmp_path: Path, example: Path) -> None:
    config = load_station_config(example)
    path = tmp_path / "copy.toml"
    save_station_config(config, path)
    again = load_station_config(path)
    for field in (
        "name",
        "puzzle",
        "scheme",
        "evidence_dir",
        "min_free_space_mb",
        "trigger",
        "web",
    ):
        assert getattr(again, field) == getattr(config, field), field
    for first, second in zip(config.cameras, again.cameras, strict=True):
        assert first.controls == second.controls and first.resolution == second.resolution
        assert first.pose is not None and second.pose is not None
        np.testing.assert_allclose(second.pose, first.pose, atol=1e-6)


def test_every_problem_is_listed_with_key_and_section(tmp_path: Path) -> None:
    text = MINIMAL.replace('name = "test"', 'name = "test"\ncolour = "red"')
    text = text.replace("resolution = [1280, 720]", "resolution = [1280, 720]\nexposure_ms = 8")
    text += '\n[trigger]\nkind = "keyboard"\nserial_port = "/dev/ttyUSB0"\n[web]\nport = 99999\n'
    with pytest.raises(StationConfigError) as caught:
        load_station_config(_write(tmp_path, text))
    assert caught.value.problems == (
        "unknown key 'colour' in [station]",
        "[trigger] 'serial_port' is for kind 'stackmat-serial', not 'keyboard'",
        "[web] 'port' must be a whole number from 1 to 65535, got 99999",
        "unknown key 'exposure_ms' in [[cameras]] #1 (top)",
    )


@pytest.mark.parametrize(
    ("replace", "by", "message"),
    [
        (
            'backend = "opencv"',
            'backend = "v4l2"',
            "backend must be one of picamera2, opencv, replay",
        ),
        (
            "resolution = [1280, 720]",
            "resolution = [1280]",
            r"'resolution' must be \[width, height\]",
        ),
        ("resolution = [1280, 720]", "", "needs resolution"),
        (
            "resolution = [1280, 720]",
            "resolution = [1280, 720]\nanalysis_resolution = [640, 480]",
            "another aspect ratio",
        ),
        (
            "resolution = [1280, 720]",
            "resolution = [1280, 720]\n"
            "pose = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 1]]",
            "pose is not a rigid transform",
        ),
        (
            "resolution = [1280, 720]",
            "resolution = [1280, 720]\n[cameras.controls]\nanalogue_gain = 0.5",
            "'analogue_gain' must be a number from 1 to 64",
        ),
        (
            "resolution = [1280, 720]",
            "resolution = [1280, 720]\n[cameras.controls]\ncolour_gains = [1.5]",
            r"'colour_gains' must be \[red, blue\]",
        ),
        ('name = "test"', 'name = "test"\npuzzle = "555"', "puzzle '555' is unknown"),
        ('evidence_dir = "evidence"', "", r"\[station\] needs 'evidence_dir'"),
        ("[[cameras]]", "[[cameras]]\n[trigger]\nkind = 'gpio'\n[[cameras]]", "needs gpio_pin"),
    ],
)
def test_bad_values_are_named(tmp_path: Path, replace: str, by: str, message: str) -> None:
    assert replace in MINIMAL
    with pytest.raises(StationConfigError, match=message):
        load_station_config(_write(tmp_path, MINIMAL.replace(replace, by, 1)))


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(StationConfigError, match="no such file"):
        load_station_config(tmp_path / "missing.toml")
    with pytest.raises(StationConfigError, match="not valid TOML"):
        load_station_config(_write(tmp_path, "[station\n"))
    with pytest.raises(StationConfigError, match="no \\[\\[cameras\\]\\]"):
        load_station_config(_write(tmp_path, '[station]\nname = "x"\nevidence_dir = "e"\n'))


def test_check_opens_the_files_it_names(tmp_path: Path) -> None:
    (tmp_path / "broken.yml").write_text("not: [ a camera")
    text = MINIMAL.replace('name = "test"', 'name = "test"\nscheme = "missing.toml"')
    text += 'intrinsics = "broken.yml"\n'
    text += (
        '[[cameras]]\nname = "replayed"\nbackend = "replay"\nsource = "nowhere"\n'
        "resolution = [640, 480]\n"
    )
    config = load_station_config(_write(tmp_path, text))
    errors = [f.message for f in check_station(config) if f.level == "error"]
    assert any("missing.toml: no such scheme file" in e for e in errors)
    assert any("camera 'top': " in e and "broken.yml" in e for e in errors)
    assert any("replay source" in e and "nowhere does not exist" in e for e in errors)


def test_check_warns_about_unlocked_controls_and_unseen_faces(tmp_path: Path) -> None:
    save_intrinsics(default_intrinsics(1280, 720), tmp_path / "top.yml")
    pose = look_at_pose((0.0, -300.0, 300.0))
    rows = ", ".join("[" + ", ".join(f"{v:.6f}" for v in row) + "]" for row in pose)
    text = MINIMAL + f'intrinsics = "top.yml"\npose = [{rows}]\n'
    findings = check_station(load_station_config(_write(tmp_path, text)))
    messages = [f.message for f in findings]
    assert [f.level for f in findings if f.level == "error"] == []
    assert any("exposure_us, analogue_gain, colour_gains not locked" in m for m in messages)
    assert any("no camera sees the north, east, west face(s)" in m for m in messages)


def test_check_finds_a_camera_that_looks_away(tmp_path: Path) -> None:
    pose = look_at_pose((0.0, -300.0, 300.0), (0.0, -600.0, 300.0))  # looks away, level
    rows = ", ".join("[" + ", ".join(f"{v:.6f}" for v in row) + "]" for row in pose)
    config = load_station_config(_write(tmp_path, MINIMAL + f"pose = [{rows}]\n"))
    errors = [f.message for f in check_station(config) if f.level == "error"]
    assert errors == ["camera 'top': the puzzle's place on the mat is outside its image"]


def test_check_refuses_a_scheme_for_another_puzzle(tmp_path: Path) -> None:
    text = MINIMAL.replace('name = "test"', 'name = "test"\nscheme = "builtin:pyram"')
    errors = [
        f.message
        for f in check_station(load_station_config(_write(tmp_path, text)))
        if f.level == "error"
    ]
    assert errors == ["scheme 'standard pyram' is for pyram, the station judges 333"]
