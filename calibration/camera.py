"""Camera intrinsics: the pinhole model and lens distortion, calibrated from board views.

Files are OpenCV's own FileStorage format (YAML, or JSON) with `camera_matrix` and
`dist_coeffs`, so any OpenCV tool can read what judgecam writes and the other way round.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.calibration.boards import BoardDetection

logger = logging.getLogger(__name__)

#: Raspberry Pi Camera Module 3 (IMX708): full sensor 4608x2592 (16:9), ~66 degrees
#: horizontal field of view with the standard lens.
PI_CAMERA3_SENSOR = (4608, 2592)
PI_CAMERA3_HFOV_DEG = 66.0
#: Fewest board views `calibrate_camera` accepts: each view gives 6 pose unknowns, and a
#: handful of tilted views is needed before fx, fy, cx, cy and distortion separate.
MIN_VIEWS = 10
#: The image is cut into a COVERAGE_GRID x COVERAGE_GRID grid; every cell must contain board
#: corners, otherwise distortion (largest at the edges and corners) is extrapolated.
COVERAGE_GRID = 3
#: Distortion coefficient counts OpenCV produces (plain, rational, thin prism, tilted).
_DIST_SIZES = (4, 5, 8, 12, 14)


#: Image sizes whose aspect ratios differ by at most this fraction show one sensor area, scaled
#: (a size made up from the principal point alone, 2 c + 1, is a pixel off).
ASPECT_TOLERANCE = 0.01


def same_aspect(first: tuple[int, int], second: tuple[int, int]) -> bool:
    """Whether intrinsics for images of one (width, height) fit the other by scaling alone.

    Another aspect ratio is another crop of the sensor (a 4:3 mode of a 16:9 camera, or a USB
    camera that fell back to 640x480): scaled to fit, the intrinsics would stretch the pixels."""
    ratio = (first[0] * second[1]) / max(first[1] * second[0], 1)
    return abs(ratio - 1.0) <= ASPECT_TOLERANCE


class CalibrationError(ValueError):
    """Calibration refused (too few views, poor coverage) or an unusable intrinsics file."""


@dataclass(frozen=True, eq=False)
class CameraModel:
    """Pinhole intrinsics and distortion for images of `image_size` (width, height)."""

    camera_matrix: NDArray[np.float64]
    dist_coeffs: NDArray[np.float64]
    image_size: tuple[int, int]
    name: str = ""

    @property
    def fx(self) -> float:
        return float(self.camera_matrix[0, 0])

    @property
    def fy(self) -> float:
        return float(self.camera_matrix[1, 1])

    @property
    def principal_point(self) -> tuple[float, float]:
        return float(self.camera_matrix[0, 2]), float(self.camera_matrix[1, 2])

    def scaled_to(self, width: int, height: int) -> CameraModel:
        """The same camera at another resolution with the same field of view (e.g. analysis)."""
        sx = width / self.image_size[0]
        sy = height / self.image_size[1]
        matrix = self.camera_matrix.copy()
        matrix[0, :] *= sx
        matrix[1, :] *= sy
        # Pixel centres sit at integers: (c + 0.5) scales, not c.
        matrix[0, 2] = (self.camera_matrix[0, 2] + 0.5) * sx - 0.5
        matrix[1, 2] = (self.camera_matrix[1, 2] + 0.5) * sy - 0.5
        return CameraModel(matrix, self.dist_coeffs.copy(), (width, height), self.name)


@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """A calibrated camera with the numbers to judge it by."""

    model: CameraModel
    rms_px: float
    per_view_errors_px: tuple[float, ...]
    view_names: tuple[str, ...]
    rvecs: tuple[NDArray[np.float64], ...] = field(default=())
    tvecs: tuple[NDArray[np.float64], ...] = field(default=())


def default_intrinsics(width: int, height: int) -> CameraModel:
    """Nominal Raspberry Pi Camera Module 3 intrinsics for a `width` x `height` image.

    The camera scales the sensor down, cropping to the image's aspect ratio when it differs
    from 16:9 (libcamera keeps the largest centred crop), so the focal length in pixels is the
    full-sensor one times max(width / 4608, height / 2592) (the cropped side scales more). No
    distortion; principal point at the centre. Good enough to start with; calibrate for
    anything that measures angles.
    """
    if width <= 0 or height <= 0:
        raise CalibrationError(f"image size must be positive, got {width}x{height}")
    sensor_focal = (PI_CAMERA3_SENSOR[0] / 2) / math.tan(math.radians(PI_CAMERA3_HFOV_DEG / 2))
    focal = sensor_focal * max(width / PI_CAMERA3_SENSOR[0], height / PI_CAMERA3_SENSOR[1])
    matrix = np.array(
        [[focal, 0.0, (width - 1) / 2], [0.0, focal, (height - 1) / 2], [0.0, 0.0, 1.0]]
    )
    return CameraModel(matrix, np.zeros(5), (width, height), "Pi Camera Module 3 (nominal)")


# ----------------------------------------------------------------------------------------
# Calibration
# ----------------------------------------------------------------------------------------


def coverage_gaps(
    points: Sequence[NDArray[np.float32]], image_size: tuple[int, int], grid: int = COVERAGE_GRID
) -> list[str]:
    """Regions of the image ("top-left", "bottom", ...) where no view put a board corner."""
    width, height = image_size
    seen = np.zeros((grid, grid), dtype=bool)
    for view in points:
        xy = np.asarray(view, dtype=np.float64).reshape(-1, 2)
        columns = np.clip((xy[:, 0] / width * grid).astype(int), 0, grid - 1)
        rows = np.clip((xy[:, 1] / height * grid).astype(int), 0, grid - 1)
        seen[rows, columns] = True
    return [_region_name(row, column, grid) for row, column in zip(*np.nonzero(~seen), strict=True)]


def _region_name(row: int, column: int, grid: int) -> str:
    vertical = "top" if row == 0 else "bottom" if row == grid - 1 else ""
    horizontal = "left" if column == 0 else "right" if column == grid - 1 else ""
    if vertical and horizontal:
        return f"{vertical}-{horizontal}"
    return vertical or horizontal or ("centre" if grid == 3 else f"row {row} column {column}")


def calibrate_camera(
    detections: Sequence[BoardDetection],
    view_names: Sequence[str] | None = None,
    *,
    name: str = "",
    min_views: int = MIN_VIEWS,
) -> CalibrationResult:
    """Intrinsics and distortion (k1, k2, p1, p2, k3) from board detections (cv2.calibrateCamera).

    Raises CalibrationError with fewer than `min_views` views, views of different sizes, or
    image regions no view covers (naming them).
    """
    names = (
        tuple(view_names)
        if view_names is not None
        else tuple(f"view {i + 1}" for i in range(len(detections)))
    )
    if len(names) != len(detections):
        raise ValueError("one name per detection")
    if len(detections) < min_views:
        raise CalibrationError(
            f"{len(detections)} usable board views, need at least {min_views}: "
            "take more, tilting the board and moving it into every corner of the image"
        )
    sizes = {detection.image_size for detection in detections}
    if len(sizes) != 1:
        raise CalibrationError(f"views have different image sizes: {sorted(sizes)}")
    image_size = sizes.pop()
    gaps = coverage_gaps([d.image_points for d in detections], image_size)
    if gaps:
        raise CalibrationError(
            "poor coverage: no board corners in the "
            + ", ".join(gaps)
            + " of the image; add views with the board there"
        )
    object_points = [d.object_points.reshape(-1, 1, 3).astype(np.float32) for d in detections]
    image_points = [d.image_points.reshape(-1, 1, 2).astype(np.float32) for d in detections]
    rms, matrix, dist, rvecs, tvecs, _, _, per_view = cv2.calibrateCameraExtended(
        object_points, image_points, image_size, np.zeros((3, 3)), np.zeros(5)
    )
    model = CameraModel(
        np.asarray(matrix, dtype=np.float64),
        np.asarray(dist, dtype=np.float64).reshape(-1),
        image_size,
        name,
    )
    errors = tuple(float(e) for e in np.asarray(per_view).reshape(-1))
    logger.info("calibrated %d views: rms %.3f px", len(detections), rms)
    return CalibrationResult(
        model,
        float(rms),
        errors,
        names,
        tuple(np.asarray(r, dtype=np.float64).reshape(3) for r in rvecs),
        tuple(np.asarray(t, dtype=np.float64).reshape(3) for t in tvecs),
    )


# ----------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------


def save_intrinsics(
    model: CameraModel,
    path: str | Path,
    *,
    rms_px: float | None = None,
    per_view_errors_px: Sequence[float] = (),
) -> None:
    """Write `model` in OpenCV FileStorage format (YAML, or JSON for a .json path)."""
    storage = cv2.FileStorage(str(path), cv2.FILE_STORAGE_WRITE)
    if not storage.isOpened():
        raise CalibrationError(f"{path}: cannot write intrinsics")
    try:
        storage.write("image_width", int(model.image_size[0]))
        storage.write("image_height", int(model.image_size[1]))
        storage.write("camera_matrix", np.asarray(model.camera_matrix, dtype=np.float64))
        storage.write("dist_coeffs", np.asarray(model.dist_coeffs, dtype=np.float64).reshape(1, -1))
        if model.name:
            storage.write("camera_name", model.name)
        if rms_px is not None:
            storage.write("rms_reprojection_error_px", float(rms_px))
        if len(per_view_errors_px):
            storage.write(
                "per_view_errors_px",
                np.asarray(per_view_errors_px, dtype=np.float64).reshape(-1, 1),
            )
    finally:
        storage.release()


def load_intrinsics(path: str | Path) -> CameraModel:
    """Read `camera_matrix` and `dist_coeffs` (and image_width/height if present).

    Accepts OpenCV FileStorage YAML/JSON and plain JSON with nested lists. Raises
    CalibrationError with one line for a missing, corrupt or incomplete file.
    """
    file = Path(path)
    if not file.is_file():
        raise CalibrationError(f"{file}: no such intrinsics file")
    values = _read_plain_json(file) if file.suffix.lower() == ".json" else None
    if values is None:
        values = _read_file_storage(file)
    matrix = values.get("camera_matrix")
    dist = values.get("dist_coeffs")
    if matrix is None or dist is None:
        missing = "camera_matrix" if matrix is None else "dist_coeffs"
        raise CalibrationError(f"{file}: no {missing} in the intrinsics file")
    matrix = np.asarray(matrix, dtype=np.float64)
    dist = np.asarray(dist, dtype=np.float64).reshape(-1)
    if matrix.shape != (3, 3) or not np.all(np.isfinite(matrix)):
        raise CalibrationError(f"{file}: camera_matrix must be 3x3 finite numbers")
    if matrix[0, 0] <= 0 or matrix[1, 1] <= 0 or not np.allclose(matrix[2], [0, 0, 1]):
        raise CalibrationError(f"{file}: camera_matrix is not a camera matrix (fx, fy > 0)")
    if dist.size not in _DIST_SIZES or not np.all(np.isfinite(dist)):
        raise CalibrationError(
            f"{file}: dist_coeffs must be 4, 5, 8, 12 or 14 finite numbers, got {dist.size}"
        )
    width, height = values.get("image_width"), values.get("image_height")
    if width is None or height is None:
        # Without a stated size assume the principal point is at the centre.
        width = round(2 * matrix[0, 2] + 1)
        height = round(2 * matrix[1, 2] + 1)
        logger.warning("%s: no image_width/height, assuming %dx%d", file, width, height)
    if int(width) <= 0 or int(height) <= 0:
        raise CalibrationError(f"{file}: image size must be positive, got {width}x{height}")
    return CameraModel(matrix, dist, (int(width), int(height)), str(values.get("camera_name", "")))


def _read_file_storage(file: Path) -> dict[str, Any]:
    try:
        storage = cv2.FileStorage(str(file), cv2.FILE_STORAGE_READ)
    except (cv2.error, SystemError) as error:  # the parser's error surfaces as SystemError
        raise CalibrationError(
            f"{file}: not an OpenCV YAML/JSON file ({_first_line(error)})"
        ) from None
    try:
        if not storage.isOpened():
            raise CalibrationError(f"{file}: not an OpenCV YAML/JSON file")
        values: dict[str, Any] = {}
        for key in ("camera_matrix", "dist_coeffs"):
            node = storage.getNode(key)
            if not node.empty():
                values[key] = node.mat() if node.isMap() else _sequence(node)
        for key in ("image_width", "image_height"):
            node = storage.getNode(key)
            if node.isReal() or node.isInt():
                values[key] = int(node.real())
        node = storage.getNode("camera_name")
        if node.isString():
            values["camera_name"] = node.string()
        return values
    except cv2.error as error:
        raise CalibrationError(f"{file}: unreadable intrinsics ({_first_line(error)})") from None
    finally:
        storage.release()


def _sequence(node: Any) -> list[Any] | None:
    if not node.isSeq():
        return None
    return [
        _sequence(node.at(i)) if node.at(i).isSeq() else node.at(i).real()
        for i in range(node.size())
    ]


def _read_plain_json(file: Path) -> dict[str, Any] | None:
    """Plain JSON with lists (or OpenCV matrix objects); None if it is OpenCV's own JSON."""
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CalibrationError(f"{file}: not valid JSON ({error})") from None
    if not isinstance(document, dict):
        raise CalibrationError(f"{file}: expected a JSON object with camera_matrix and dist_coeffs")
    values = dict(document)
    for key in ("camera_matrix", "dist_coeffs"):
        entry = values.get(key)
        if isinstance(entry, dict) and "data" in entry:
            rows, cols = entry.get("rows", 1), entry.get("cols", len(entry["data"]))
            try:
                values[key] = np.asarray(entry["data"], dtype=np.float64).reshape(rows, cols)
            except (TypeError, ValueError):
                raise CalibrationError(f"{file}: {key} has the wrong number of values") from None
        elif entry is not None:
            try:
                values[key] = np.asarray(entry, dtype=np.float64)
            except (TypeError, ValueError):
                raise CalibrationError(f"{file}: {key} must be numbers") from None
    return values


def _first_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__
