"""The rig: where each camera is relative to the mat, and which puzzle faces it can see.

A ChArUco (or chessboard) board lies flat where the puzzle will sit. Its pose in one photo
gives the camera's pose in the MAT FRAME, defined by the board:

* origin at the centre of the board's squared area (where the puzzle sits),
* x along the board's columns (towards its right edge as printed),
* y towards the board's top edge as printed (ChArUco marker 0 is at the top-left),
* z up, out of the mat.

Poses are stored as 4x4 `mat_from_camera` matrices (millimetres): a point X in camera
coordinates (OpenCV: x right, y down, z forward) is at `mat_from_camera @ [X, 1]` on the mat.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgecam.calibration.boards import BoardSpec, detect_board
from judgecam.calibration.camera import CalibrationError, CameraModel, same_aspect

logger = logging.getLogger(__name__)

#: Fewest board corners a pose is computed from; fewer gives poses that flip or wander.
MIN_POSE_CORNERS = 8
#: A face seen more obliquely than this (angle between its outward normal and the direction
#: to the camera) is flagged "grazing": foreshortened to a third of its size or less
#: (cos 70 deg = 0.34), its colours blend and its edges are unreliable.
GRAZING_DEG = 70.0
#: Typical puzzle sizes (mm): 3x3x3 57, 2x2x2 50, Pyraminx 98 edge.
PUZZLE_SIZE_MM: dict[str, float] = {"333": 57.0, "222": 50.0, "pyram": 98.0}


@dataclass(frozen=True)
class FaceView:
    """How one face of a puzzle lying on the mat looks from a camera."""

    face: str
    angle_deg: float  # between the face's outward normal and the direction to the camera
    visible: bool
    grazing: bool


@dataclass(frozen=True, eq=False)
class RigPose:
    """A camera's pose on the mat and how well the board fixed it."""

    mat_from_camera: NDArray[np.float64]  # (4, 4)
    reprojection_error_px: float
    corners_used: int

    @property
    def camera_position_mm(self) -> NDArray[np.float64]:
        """Camera centre in mat coordinates."""
        return np.asarray(self.mat_from_camera[:3, 3], dtype=np.float64)

    @property
    def view_direction(self) -> NDArray[np.float64]:
        """Unit vector of the optical axis in mat coordinates."""
        return np.asarray(self.mat_from_camera[:3, 2], dtype=np.float64)


def mat_from_board(spec: BoardSpec) -> NDArray[np.float64]:
    """4x4 transform from board coordinates (OpenCV: y down the rows, z into the board) to the
    mat frame (origin at the board centre, y towards the top edge, z up)."""
    width_mm, height_mm = spec.size_mm
    transform = np.diag([1.0, -1.0, -1.0, 1.0])
    transform[:3, 3] = [-width_mm / 2, height_mm / 2, 0.0]
    return transform


def rigid_transform(rotation: ArrayLike, translation: ArrayLike) -> NDArray[np.float64]:
    """4x4 matrix [R t; 0 1]."""
    transform = np.eye(4)
    transform[:3, :3] = np.asarray(rotation, dtype=np.float64)
    transform[:3, 3] = np.asarray(translation, dtype=np.float64).reshape(3)
    return transform


def invert_rigid(transform: ArrayLike) -> NDArray[np.float64]:
    """Inverse of a 4x4 rigid transform (R^T, -R^T t)."""
    matrix = np.asarray(transform, dtype=np.float64)
    rotation = matrix[:3, :3]
    return rigid_transform(rotation.T, -rotation.T @ matrix[:3, 3])


def estimate_rig_pose(spec: BoardSpec, image: NDArray[np.uint8], model: CameraModel) -> RigPose:
    """The camera's pose on the mat from one photo of the board lying where the puzzle sits.

    Raises CalibrationError if the board is not found, shows too few corners, or the photo's
    size does not match the intrinsics.
    """
    height, width = image.shape[:2]
    if (width, height) != tuple(model.image_size):
        if not same_aspect(model.image_size, (width, height)):
            raise CalibrationError(
                f"photo is {width}x{height} but the intrinsics are for "
                f"{model.image_size[0]}x{model.image_size[1]} (different aspect ratio)"
            )
        model = model.scaled_to(width, height)
    detection = detect_board(spec, image)
    if detection is None or len(detection.image_points) < MIN_POSE_CORNERS:
        found = 0 if detection is None else len(detection.image_points)
        raise CalibrationError(
            f"board {spec.describe()} not found well enough ({found} corners, need "
            f"{MIN_POSE_CORNERS}): is it flat, lit and fully inside the photo?"
        )
    object_points = detection.object_points.astype(np.float64)
    image_points = detection.image_points.astype(np.float64)
    ok, rvec, tvec = cv2.solvePnP(
        object_points,
        image_points,
        model.camera_matrix,
        model.dist_coeffs,
        flags=cv2.SOLVEPNP_IPPE,
    )
    if not ok:
        raise CalibrationError("solvePnP found no pose for the board")
    rvec, tvec = cv2.solvePnPRefineLM(
        object_points, image_points, model.camera_matrix, model.dist_coeffs, rvec, tvec
    )
    projected, _ = cv2.projectPoints(
        object_points, rvec, tvec, model.camera_matrix, model.dist_coeffs
    )
    error = float(np.sqrt(np.mean(np.sum((projected.reshape(-1, 2) - image_points) ** 2, axis=1))))
    rotation, _ = cv2.Rodrigues(rvec)
    camera_from_board = rigid_transform(rotation, tvec)
    mat_from_camera = mat_from_board(spec) @ invert_rigid(camera_from_board)
    if mat_from_camera[2, 3] <= 0:
        raise CalibrationError("the camera appears to be below the mat: board seen from behind?")
    logger.info("rig pose from %d corners, rms %.2f px", len(image_points), error)
    return RigPose(mat_from_camera, error, len(image_points))


def puzzle_faces_on_mat(puzzle: str) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Outward unit normal and centre (mm, mat frame) of each face of a puzzle resting on the
    mat at the origin.

    Cubes rest square to the board: faces "top", "bottom", "north" (+y), "south", "east"
    (+x), "west". A Pyraminx rests on a face ("bottom") with one edge of it parallel to the
    board's columns and the opposite side face ("south") looking towards the board's bottom
    edge; the other side faces are "north-east" and "north-west". Which physical colour is
    on which of these is unknown until the puzzle is seen: the point is how many faces each
    camera sees and how obliquely.
    """
    size = PUZZLE_SIZE_MM.get(puzzle)
    if size is None:
        raise CalibrationError(f"unknown puzzle {puzzle!r}")
    if puzzle in ("222", "333"):
        half = size / 2
        normals = {
            "top": (0, 0, 1),
            "bottom": (0, 0, -1),
            "north": (0, 1, 0),
            "south": (0, -1, 0),
            "east": (1, 0, 0),
            "west": (-1, 0, 0),
        }
        return {
            face: (np.array(n, dtype=np.float64), np.array([0, 0, half]) + half * np.array(n))
            for face, n in normals.items()
        }
    # Regular tetrahedron with edge `size` standing on its base; base centroid at the origin.
    height = size * np.sqrt(2.0 / 3.0)
    apex = np.array([0.0, 0.0, height])
    radius = size / np.sqrt(3.0)
    base = [radius * np.array([np.cos(a), np.sin(a), 0.0]) for a in np.radians([90, 210, 330])]
    faces = {
        "bottom": (base[0], base[1], base[2]),
        "south": (apex, base[1], base[2]),
        "north-east": (apex, base[2], base[0]),
        "north-west": (apex, base[0], base[1]),
    }
    centroid = np.array([0.0, 0.0, height / 4])
    result = {}
    for face, corners in faces.items():
        centre = np.mean(corners, axis=0)
        normal = np.cross(corners[1] - corners[0], corners[2] - corners[0])
        normal /= np.linalg.norm(normal)
        if np.dot(normal, centre - centroid) < 0:
            normal = -normal
        result[face] = (normal, centre)
    return result


def face_views(mat_from_camera: ArrayLike, puzzle: str) -> tuple[FaceView, ...]:
    """For each face of `puzzle` lying on the mat: can this camera see it, and how obliquely."""
    camera = np.asarray(mat_from_camera, dtype=np.float64)[:3, 3]
    views = []
    for face, (normal, centre) in puzzle_faces_on_mat(puzzle).items():
        towards_camera = camera - centre
        cosine = float(np.dot(normal, towards_camera) / np.linalg.norm(towards_camera))
        angle = float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))
        visible = face != "bottom" and cosine > 0
        views.append(FaceView(face, angle, visible, visible and angle > GRAZING_DEG))
    return tuple(views)


def rotation_angle_deg(first: ArrayLike, second: ArrayLike) -> float:
    """Angle of the rotation taking 3x3 rotation `first` to `second` (degrees)."""
    relative = (
        np.asarray(first, dtype=np.float64)[:3, :3].T @ np.asarray(second, dtype=np.float64)[:3, :3]
    )
    cosine = (np.trace(relative) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))


def look_at_pose(
    camera_position_mm: ArrayLike, target_mm: ArrayLike = (0.0, 0.0, 0.0)
) -> NDArray[np.float64]:
    """4x4 mat_from_camera of a camera at `camera_position_mm` aimed at `target_mm`, upright
    (image x horizontal, image y pointing down the mat's z). For planning a rig and for tests."""
    position = np.asarray(camera_position_mm, dtype=np.float64).reshape(3)
    forward = np.asarray(target_mm, dtype=np.float64).reshape(3) - position
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    if np.linalg.norm(right) < 1e-9:  # looking straight down: keep image x along the mat's x
        right = np.array([1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    return rigid_transform(np.column_stack([right, down, forward]), position)
