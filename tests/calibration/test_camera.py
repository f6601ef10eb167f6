"""Camera calibration recovers the intrinsics the synthetic photos were made with."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from judgecam.calibration.boards import (
    BoardDetection,
    BoardError,
    board_corners_mm,
    detect_board,
    parse_board,
)
from judgecam.calibration.camera import (
    CalibrationError,
    CameraModel,
    calibrate_camera,
    coverage_gaps,
    default_intrinsics,
    load_intrinsics,
    save_intrinsics,
)


def _detections(photos: Any) -> list[BoardDetection]:
    detections = [detect_board(photos.spec, image) for image in photos.images]
    assert all(d is not None for d in detections)
    return [d for d in detections if d is not None]


@pytest.mark.parametrize("board", ["chessboard_photos", "charuco_photos"])
def test_calibration_recovers_known_intrinsics(
    board: str, request: pytest.FixtureRequest, true_camera: CameraModel
) -> None:
    photos = request.getfixturevalue(board)
    result = calibrate_camera(_detections(photos))
    model = result.model
    np.testing.assert_allclose(model.fx, true_camera.fx, rtol=0.01)
    np.testing.assert_allclose(model.fy, true_camera.fy, rtol=0.01)
    np.testing.assert_allclose(model.principal_point, true_camera.principal_point, atol=2.0)
    # Noise of 2 grey levels and a 0.7 px blur leave corners a few tenths of a pixel off.
    assert result.rms_px < 0.5
    assert len(result.per_view_errors_px) == 12


def test_detected_corners_match_the_projection(
    chessboard_photos: Any, true_camera: CameraModel
) -> None:
    photos = chessboard_photos
    detection = detect_board(photos.spec, photos.images[1])
    assert detection is not None
    projected, _ = cv2.projectPoints(
        detection.object_points,
        photos.rvecs[1],
        photos.tvecs[1],
        true_camera.camera_matrix,
        true_camera.dist_coeffs,
    )
    errors = np.linalg.norm(projected.reshape(-1, 2) - detection.image_points, axis=1)
    assert float(np.median(errors)) < 0.2


def test_fewer_than_ten_views_are_refused(chessboard_photos: Any) -> None:
    with pytest.raises(CalibrationError, match="9 usable board views, need at least 10"):
        calibrate_camera(_detections(chessboard_photos)[:9])


def test_poor_coverage_is_refused_naming_the_region() -> None:
    spec = parse_board("chessboard:9x6:25mm")
    corners = board_corners_mm(spec)
    # Every view sits in the left two thirds of a 600x400 image.
    rng = np.random.default_rng(1)
    detections = [
        BoardDetection(
            (corners[:, :2] * 1.4 + rng.uniform(0, 40, 2)).astype(np.float32),
            corners,
            (600, 400),
        )
        for _ in range(12)
    ]
    assert coverage_gaps([d.image_points for d in detections], (600, 400)) == [
        "top-right",
        "right",
        "bottom-left",
        "bottom",
        "bottom-right",
    ]
    with pytest.raises(CalibrationError, match="no board corners in the top-right, right, bottom"):
        calibrate_camera(detections)


def test_coverage_gaps_name_the_empty_cells() -> None:
    points = [np.array([[10.0, 10.0], [300.0, 200.0]], dtype=np.float32)]
    gaps = coverage_gaps(points, (600, 400))
    assert "top-left" not in gaps and "centre" not in gaps
    assert gaps == ["top", "top-right", "left", "right", "bottom-left", "bottom", "bottom-right"]


def test_default_intrinsics_follow_the_pi_camera_3() -> None:
    full = default_intrinsics(4608, 2592)
    np.testing.assert_allclose(full.fx, 2304 / math.tan(math.radians(33)), rtol=1e-9)
    np.testing.assert_allclose(full.principal_point, (2303.5, 1295.5))
    np.testing.assert_array_equal(full.dist_coeffs, np.zeros(5))
    half = default_intrinsics(2304, 1296)
    np.testing.assert_allclose(half.fx, full.fx / 2, rtol=1e-9)
    # A 4:3 image is a centred crop of the 16:9 sensor: its focal length follows the height.
    four_three = default_intrinsics(640, 480)
    np.testing.assert_allclose(four_three.fx, full.fx * 480 / 2592, rtol=1e-9)
    horizontal_fov = 2 * math.degrees(math.atan(2304 / full.fx))
    np.testing.assert_allclose(horizontal_fov, 66.0, atol=1e-6)


@pytest.mark.parametrize("suffix", [".yml", ".json"])
def test_intrinsics_round_trip(tmp_path: Path, true_camera: CameraModel, suffix: str) -> None:
    path = tmp_path / f"camera{suffix}"
    save_intrinsics(true_camera, path, rms_px=0.12, per_view_errors_px=[0.1, 0.2])
    loaded = load_intrinsics(path)
    np.testing.assert_allclose(loaded.camera_matrix, true_camera.camera_matrix)
    np.testing.assert_allclose(loaded.dist_coeffs, true_camera.dist_coeffs)
    assert loaded.image_size == (640, 480)
    assert loaded.name == "truth"
    if suffix == ".yml":
        assert path.read_text().startswith("%YAML:1.0")


def test_plain_json_intrinsics_are_read(tmp_path: Path) -> None:
    path = tmp_path / "camera.json"
    path.write_text(
        '{"camera_matrix": [[500, 0, 319.5], [0, 500, 239.5], [0, 0, 1]],'
        ' "dist_coeffs": [0.1, 0, 0, 0, 0]}'
    )
    model = load_intrinsics(path)
    assert model.image_size == (640, 480)  # inferred from the principal point
    np.testing.assert_allclose(model.dist_coeffs, [0.1, 0, 0, 0, 0])


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.yml", None, "no such intrinsics file"),
        ("garbage.yml", "this is : not [ yaml", "not an OpenCV YAML/JSON file"),
        (
            "nodist.yml",
            "%YAML:1.0\n---\ncamera_matrix: !!opencv-matrix\n   rows: 3\n   cols: 3\n"
            "   dt: d\n   data: [ 500., 0., 320., 0., 500., 240., 0., 0., 1. ]\n",
            "no dist_coeffs",
        ),
        (
            "small.json",
            '{"camera_matrix": [[1, 0], [0, 1]], "dist_coeffs": [0, 0, 0, 0]}',
            "camera_matrix must be 3x3",
        ),
        (
            "negative.json",
            '{"camera_matrix": [[-5, 0, 1], [0, 5, 1], [0, 0, 1]], "dist_coeffs": [0, 0, 0, 0]}',
            "fx, fy > 0",
        ),
        (
            "dist.json",
            '{"camera_matrix": [[5, 0, 1], [0, 5, 1], [0, 0, 1]], "dist_coeffs": [0, 0]}',
            "dist_coeffs must be 4, 5, 8, 12 or 14",
        ),
        ("broken.json", '{"camera_matrix": ', "not valid JSON"),
    ],
)
def test_bad_intrinsics_files_give_one_clear_error(
    tmp_path: Path, name: str, content: str | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(CalibrationError, match=message):
        load_intrinsics(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("chessboard:9x6", "expected chessboard"),
        ("chessboard:9by6:25mm", "is not COLSxROWS"),
        ("chessboard:9x6:-3mm", "positive number of mm"),
        ("charuco:7x5:30mm:35mm:4X4_50", "marker must be smaller"),
        ("charuco:7x5:30mm:22mm:9X9_50", "unknown ArUco dictionary"),
        ("charuco:30x30:30mm:22mm:4X4_50", "needs 450 markers"),
        ("aruco:7x5", "expected chessboard"),
    ],
)
def test_bad_board_descriptions(text: str, message: str) -> None:
    with pytest.raises(BoardError, match=message):
        parse_board(text)


def test_board_description_round_trips() -> None:
    for text in ("chessboard:9x6:25mm", "charuco:7x5:30mm:22mm:4X4_50"):
        assert parse_board(text).describe() == text
    assert parse_board("charuco:7x5:30mm:22mm:DICT_5X5_100").dictionary == "5X5_100"


def test_scaled_model_keeps_the_field_of_view(true_camera: CameraModel) -> None:
    half = true_camera.scaled_to(320, 240)
    np.testing.assert_allclose(half.fx, 300.0)
    np.testing.assert_allclose(half.principal_point, (160.75, 117.75))
