"""The rig pose from a board lying on the mat, and which faces each camera sees."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from judgecam.calibration.boards import parse_board
from judgecam.calibration.camera import CalibrationError, CameraModel
from judgecam.calibration.rig import (
    estimate_rig_pose,
    face_views,
    invert_rigid,
    look_at_pose,
    mat_from_board,
    puzzle_faces_on_mat,
    rotation_angle_deg,
)
from judgecam.calibration.synthetic import RayGrid, photograph_board, ray_grid

BOARD = parse_board("charuco:7x5:40mm:30mm:4X4_50")


_GRIDS: dict[bytes, RayGrid] = {}


def _grid(camera: CameraModel) -> RayGrid:
    """ray_grid, computed once per camera model (it is the slow part of a photo)."""
    key = np.concatenate(
        [camera.camera_matrix.ravel(), camera.dist_coeffs, camera.image_size]
    ).tobytes()
    if key not in _GRIDS:
        _GRIDS[key] = ray_grid(camera)
    return _GRIDS[key]


def _photo_from(camera: CameraModel, mat_from_camera: np.ndarray) -> np.ndarray:
    camera_from_board = invert_rigid(mat_from_camera) @ mat_from_board(BOARD)
    rvec, _ = cv2.Rodrigues(camera_from_board[:3, :3])
    return photograph_board(BOARD, _grid(camera), rvec.reshape(3), camera_from_board[:3, 3])


@pytest.mark.parametrize(
    "position", [(250.0, -250.0, 300.0), (-150.0, 320.0, 260.0), (0.0, -380.0, 220.0)]
)
def test_rig_pose_is_recovered_within_a_degree(
    true_camera: CameraModel, position: tuple[float, float, float]
) -> None:
    truth = look_at_pose(position, (0.0, 0.0, 20.0))
    pose = estimate_rig_pose(BOARD, _photo_from(true_camera, truth), true_camera)
    assert rotation_angle_deg(pose.mat_from_camera, truth) < 1.0
    distance = float(np.linalg.norm(position))
    # Position error well under 1 % of the camera's distance.
    assert float(np.linalg.norm(pose.camera_position_mm - position)) < 0.01 * distance
    assert pose.reprojection_error_px < 0.5
    assert pose.corners_used == 24


def test_photo_at_another_resolution_uses_scaled_intrinsics(true_camera: CameraModel) -> None:
    truth = look_at_pose((250.0, -250.0, 300.0))
    small_camera = true_camera.scaled_to(480, 360)
    photo = _photo_from(small_camera, truth)
    pose = estimate_rig_pose(BOARD, photo, true_camera)
    assert rotation_angle_deg(pose.mat_from_camera, truth) < 1.0


def test_missing_board_is_a_clear_error(true_camera: CameraModel) -> None:
    blank = np.full((480, 640), 128, dtype=np.uint8)
    with pytest.raises(CalibrationError, match="not found well enough"):
        estimate_rig_pose(BOARD, blank, true_camera)
    with pytest.raises(CalibrationError, match="different aspect ratio"):
        estimate_rig_pose(BOARD, np.zeros((480, 480), dtype=np.uint8), true_camera)


def test_corner_camera_sees_top_and_two_sides() -> None:
    views = {v.face: v for v in face_views(look_at_pose((300.0, -300.0, 300.0)), "333")}
    assert {f for f, v in views.items() if v.visible} == {"top", "south", "east"}
    assert not views["bottom"].visible
    # From the diagonal at this height the faces are seen at the angles of the view vector
    # (300, -300, 300) - face centre with the face normals.
    direction = np.array([300.0, -300.0, 300.0]) - np.array([0.0, 0.0, 57.0])
    expected_top = np.degrees(np.arccos(direction[2] / np.linalg.norm(direction)))
    np.testing.assert_allclose(views["top"].angle_deg, expected_top, atol=1e-9)


def test_low_camera_sees_sides_at_a_graze() -> None:
    views = {v.face: v for v in face_views(look_at_pose((400.0, 0.0, 80.0)), "333")}
    assert views["east"].visible and not views["east"].grazing
    assert views["top"].visible and views["top"].grazing


def test_pyraminx_side_faces_lean_back() -> None:
    faces = puzzle_faces_on_mat("pyram")
    for name in ("south", "north-east", "north-west"):
        normal, _ = faces[name]
        # A regular tetrahedron's faces meet its base at arccos(1/3) = 70.53 degrees.
        np.testing.assert_allclose(np.degrees(np.arcsin(normal[2])), 90 - 70.528779, atol=1e-5)
    np.testing.assert_allclose(
        faces["south"][0][:2] / np.linalg.norm(faces["south"][0][:2]), [0, -1], atol=1e-12
    )
    np.testing.assert_allclose(faces["bottom"][0], [0, 0, -1])


def test_look_at_pose_points_the_optical_axis_at_the_target() -> None:
    pose = look_at_pose((100.0, 200.0, 300.0), (10.0, 20.0, 0.0))
    direction = np.array([-90.0, -180.0, -300.0])
    np.testing.assert_allclose(pose[:3, 2], direction / np.linalg.norm(direction))
    np.testing.assert_allclose(pose[:3, :3].T @ pose[:3, :3], np.eye(3), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(pose[:3, :3]), 1.0)
    # Image "down" points down the mat's z: the camera is upright.
    assert pose[2, 1] < 0
