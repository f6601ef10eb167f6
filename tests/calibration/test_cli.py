"""`judgecam calibrate ...`, `judgecam scheme show` and `judgecam config check` end to end."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from judgecam.calibration.boards import parse_board
from judgecam.calibration.camera import CameraModel, load_intrinsics, save_intrinsics
from judgecam.calibration.rig import invert_rigid, look_at_pose, mat_from_board, rotation_angle_deg
from judgecam.calibration.scheme import load_scheme
from judgecam.calibration.station import load_station_config
from judgecam.calibration.synthetic import photograph_board, ray_grid
from judgecam.cli import main


def _drawing_module() -> Any:
    """The cube drawing of test_scheme_images (tests are not a package)."""
    path = Path(__file__).with_name("test_scheme_images.py")
    spec = importlib.util.spec_from_file_location("scheme_image_drawing", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write_photos(folder: Path, photos: Any, count: int) -> list[str]:
    paths = []
    for i, image in enumerate(photos.images[:count]):
        path = folder / f"board-{i:02d}.png"
        cv2.imwrite(str(path), image)
        paths.append(str(path))
    return paths


def test_calibrate_camera_writes_opencv_intrinsics(
    tmp_path: Path,
    chessboard_photos: Any,
    true_camera: CameraModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    images = _write_photos(tmp_path, chessboard_photos, 12)
    output = tmp_path / "camera.yml"
    assert (
        main(["calibrate", "camera", "--board", "chessboard:9x6:25mm", *images, "-o", str(output)])
        == 0
    )
    printed = capsys.readouterr().out
    assert "12 views, RMS reprojection error" in printed and "board-11.png" in printed
    model = load_intrinsics(output)
    np.testing.assert_allclose(model.fx, true_camera.fx, rtol=0.01)
    storage = cv2.FileStorage(str(output), cv2.FILE_STORAGE_READ)
    assert storage.getNode("per_view_errors_px").mat().shape == (12, 1)
    storage.release()


def test_calibrate_camera_refuses_few_views_and_writes_nothing(
    tmp_path: Path, chessboard_photos: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    images = _write_photos(tmp_path, chessboard_photos, 6)
    cv2.imwrite(str(tmp_path / "blank.png"), np.full((480, 640), 200, np.uint8))
    output = tmp_path / "camera.yml"
    code = main(
        [
            "calibrate",
            "camera",
            "--board",
            "chessboard:9x6:25mm",
            *images,
            str(tmp_path / "blank.png"),
            "-o",
            str(output),
        ]
    )
    assert code == 1
    captured = capsys.readouterr()
    assert "blank.png: board not found, skipped" in captured.out
    assert "6 usable board views, need at least 10" in captured.err
    assert not output.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["calibrate", "camera", "--board", "chessboard:9x6", "x.png", "-o", "c.yml"],
            "expected chessboard",
        ),
        (
            ["calibrate", "camera", "--board", "chessboard:9x6:25mm", "missing.png", "-o", "c.yml"],
            "no such image",
        ),
        (["scheme", "show", "missing.toml"], "no such scheme file"),
        (["scheme", "show", "builtin:555"], "no built-in scheme"),
        (
            [
                "calibrate",
                "rig",
                "--board",
                "charuco:7x5:40mm:30mm:4X4_50",
                "missing.png",
                "-o",
                "p.toml",
            ],
            "no such image",
        ),
    ],
)
def test_unusable_input_exits_2_with_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_calibrate_scheme_from_labelled_photos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drawing = _drawing_module()
    images = []
    for seed, faces in enumerate(drawing.CORNER_VIEWS):
        image, facelets = drawing.draw_cube_view(faces, drawing.CUBE_BGR, seed)
        path = tmp_path / f"solved-{seed}.png"
        cv2.imwrite(str(path), image)
        document = {"facelets": [{"face": f.face, "polygon": f.polygon.tolist()} for f in facelets]}
        (tmp_path / f"solved-{seed}.png.facelets.json").write_text(json.dumps(document))
        images.append(str(path))
    output = tmp_path / "cube.toml"
    code = main(
        [
            "calibrate",
            "scheme",
            "--puzzle",
            "333",
            *images,
            "-o",
            str(output),
            "--light",
            "desk lamp",
        ]
    )
    assert code == 0
    scheme = load_scheme(output)
    assert scheme.light == "desk lamp" and scheme.name == "cube"
    assert scheme.names == ("white", "yellow", "green", "blue", "red", "orange")
    assert "\x1b[" not in capsys.readouterr().out  # not a terminal: plain text


def test_calibrate_scheme_refuses_two_near_identical_colours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drawing = _drawing_module()
    colors = dict(drawing.CUBE_BGR)
    colors["L"] = (54, 20, 185)  # "orange" stickers that are really the red ones
    images = []
    for seed, faces in enumerate(drawing.CORNER_VIEWS):
        image, facelets = drawing.draw_cube_view(faces, colors, seed)
        path = tmp_path / f"solved-{seed}.png"
        cv2.imwrite(str(path), image)
        document = {"facelets": [{"face": f.face, "polygon": f.polygon.tolist()} for f in facelets]}
        (tmp_path / f"solved-{seed}.png.facelets.json").write_text(json.dumps(document))
        images.append(str(path))
    output = tmp_path / "bad.toml"
    assert main(["calibrate", "scheme", "--puzzle", "333", *images, "-o", str(output)]) == 1
    err = capsys.readouterr().err
    assert re.search(
        r"refused \(regulation 8\.2\): (red / red 2|red 2 / red): CIEDE2000 0\.\d", err
    )
    assert not output.exists()


def test_scheme_show_writes_a_swatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "swatch.png"
    assert main(["scheme", "show", "builtin:333", "-o", str(output)]) == 0
    printed = capsys.readouterr().out
    assert "red / orange: CIEDE2000 28.2" in printed
    card = cv2.imread(str(output))
    assert card.shape[0] == 6 * 48
    # Row 5 (red) swatch is the red centre.
    np.testing.assert_array_equal(card[4 * 48 + 10, 10], (52, 18, 183))


def test_config_check_exit_codes(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "check", str(repo_root / "calibration" / "example-station.toml")]) == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('[station]\nname = "x"\nevidence_dir = "e"\ncolour = 1\n')
    assert main(["config", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'colour' in [station]" in err
    assert "no [[cameras]]" in err


def test_calibrate_rig_writes_the_pose_into_the_station(
    tmp_path: Path, repo_root: Path, true_camera: CameraModel, capsys: pytest.CaptureFixture[str]
) -> None:
    board = parse_board("charuco:7x5:40mm:30mm:4X4_50")
    truth = look_at_pose((250.0, -250.0, 300.0))
    camera_from_board = invert_rigid(truth) @ mat_from_board(board)
    rvec, _ = cv2.Rodrigues(camera_from_board[:3, :3])
    photo = photograph_board(
        board, ray_grid(true_camera), rvec.reshape(3), camera_from_board[:3, 3]
    )
    cv2.imwrite(str(tmp_path / "mat.png"), photo)
    save_intrinsics(true_camera, tmp_path / "cam.yml")
    station = tmp_path / "station.toml"
    shutil.copy(repo_root / "calibration" / "example-station.toml", station)
    code = main(
        [
            "calibrate",
            "rig",
            "--board",
            board.describe(),
            "--intrinsics",
            str(tmp_path / "cam.yml"),
            str(tmp_path / "mat.png"),
            "--station",
            str(station),
            "--camera",
            "north",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "south       seen" in printed and "north       hidden" in printed
    pose = load_station_config(station).camera("north").pose
    assert pose is not None
    assert rotation_angle_deg(pose, truth) < 1.0


def test_calibrate_scheme_with_vision_finding_the_stickers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No .facelets.json: vision's sticker finder, colour clustering, opposites from poses."""
    drawing = _drawing_module()
    images = []
    for seed, faces in enumerate(drawing.CORNER_VIEWS):
        image, _ = drawing.draw_cube_view(faces, drawing.CUBE_BGR, seed)
        path = tmp_path / f"pose-{seed}.png"
        cv2.imwrite(str(path), image)
        images.append(str(path))
    output = tmp_path / "found.toml"
    assert main(["calibrate", "scheme", "--puzzle", "333", *images, "-o", str(output)]) == 0
    assert capsys.readouterr().out.count(": 27 stickers found") == 4
    scheme = load_scheme(output)
    assert sorted(scheme.names) == sorted(["white", "yellow", "green", "blue", "red", "orange"])
    assert {frozenset(pair) for pair in scheme.opposites} == {
        frozenset(("white", "yellow")),
        frozenset(("green", "blue")),
        frozenset(("red", "orange")),
    }


def test_calibrate_camera_from_a_live_source_ends_with_the_stream(
    tmp_path: Path,
    chessboard_photos: Any,
    true_camera: CameraModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--source` with a video file standing in for a camera: the OpenCV source settles for
    30 frames, then each board position is held for 3 frames; the file's end stops the loop."""
    video = tmp_path / "board.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (640, 480))
    assert writer.isOpened()
    for _ in range(30):
        writer.write(np.full((480, 640, 3), 128, dtype=np.uint8))
    for image in chessboard_photos.images:
        for _ in range(3):
            writer.write(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
    writer.release()
    output = tmp_path / "live.yml"
    argv = ["calibrate", "camera", "--board", "chessboard:9x6:25mm", "--source", str(video)]
    assert main([*argv, "--resolution", "640x480", "--views", "20", "-o", str(output)]) == 0
    assert "12 views from 36 frames (stopped by end)" in capsys.readouterr().out
    np.testing.assert_allclose(load_intrinsics(output).fy, true_camera.fy, rtol=0.01)
