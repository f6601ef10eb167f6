"""The station's judge: an adapter from the loop's `Judge` protocol to judgecam.vision.

`judgecam.vision.pipeline.check(images, puzzle, intrinsics, scheme, world_from_camera=...)`
judges the images of one moment; this adapter hands it the views (named by camera), the puzzle
of the attempt's event, each camera's intrinsics (scaled to the frame's size; assumed ones,
which vision reports as a reason, when a camera has no calibration) and each camera's pose on
the mat (None for a camera without one; nothing at all when no camera has one), and turns its
`CheckResult` into a `JudgeResult`. The rig poses let vision align the views of a symmetric
puzzle exactly instead of by colours alone.

A recorded session may say a camera was calibrated again at some moment (`recalibrations`):
each frame is judged with the calibration in force at its timestamp.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgecam.device.sources import Frame
from judgecam.device.station import JudgeResult

logger = logging.getLogger(__name__)

#: Scorecard event ids -> the puzzle vision expects (one-handed and blindfolded are cubes too).
EVENT_PUZZLES: Mapping[str, str] = {
    "333": "333",
    "333oh": "333",
    "333bf": "333",
    "333fm": "333",
    "222": "222",
    "pyram": "pyram",
}


@dataclass(frozen=True)
class CameraCalibration:
    """Intrinsics of one camera for images of `image_size` (width, height)."""

    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    image_size: tuple[int, int]

    def for_size(self, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
        """Camera matrix and distortion for frames of another size (same field of view)."""
        sx, sy = width / self.image_size[0], height / self.image_size[1]
        matrix = np.array(self.camera_matrix, dtype=np.float64)
        matrix[0, :] *= sx
        matrix[1, :] *= sy
        # Pixel centres sit at integers: (c + 0.5) scales, not c.
        matrix[0, 2] = (self.camera_matrix[0, 2] + 0.5) * sx - 0.5
        matrix[1, 2] = (self.camera_matrix[1, 2] + 0.5) * sy - 0.5
        return matrix, np.asarray(self.dist_coeffs, dtype=np.float64)


@dataclass(frozen=True)
class CalibrationChange:
    """From `timestamp_ns` on, a camera's calibration and pose (None: unknown from then on)."""

    timestamp_ns: int
    calibration: CameraCalibration | None = None
    pose: np.ndarray | None = None  # 4x4 world_from_camera, mm, OpenCV camera axes


class VisionJudge:
    """Judges with `judgecam.vision.pipeline.check`.

    `calibrations` and `poses` (4x4 world/mat-from-camera, mm) are per camera name; `changes`
    are later recalibrations per camera, in time order, applied by frame timestamp."""

    def __init__(
        self,
        calibrations: Mapping[str, CameraCalibration] | None = None,
        scheme: Any = None,
        check: Callable[..., Any] | None = None,
        draw: bool = True,
        poses: Mapping[str, np.ndarray] | None = None,
        changes: Mapping[str, Sequence[CalibrationChange]] | None = None,
    ) -> None:
        from judgecam.vision.pipeline import check as vision_check

        self._check = check or vision_check
        self._calibrations = dict(calibrations or {})
        self._poses = {
            name: np.asarray(pose, dtype=np.float64) for name, pose in (poses or {}).items()
        }
        self._changes = {
            name: sorted(items, key=lambda change: change.timestamp_ns)
            for name, items in (changes or {}).items()
        }
        self._scheme = scheme
        self.draw = draw

    def _setup(self, frame: Frame) -> tuple[CameraCalibration | None, np.ndarray | None]:
        """The camera's calibration and pose in force when the frame was taken."""
        calibration = self._calibrations.get(frame.camera)
        pose = self._poses.get(frame.camera)
        for change in self._changes.get(frame.camera, ()):
            if change.timestamp_ns > frame.timestamp_ns:
                break
            calibration, pose = change.calibration, change.pose
        return calibration, pose

    def _intrinsics(self, frame: Frame) -> Any:
        from judgecam.vision.camera import Intrinsics

        height, width = frame.image.shape[:2]
        calibration, _ = self._setup(frame)
        if calibration is None:
            return Intrinsics.assumed_for(width, height)
        matrix, distortion = calibration.for_size(width, height)
        return Intrinsics(matrix, distortion)

    def _misfit(self, frame: Frame) -> str | None:
        """Why the camera's calibration does not fit its frame (another aspect ratio: the
        camera is not in the mode it was calibrated in), or None."""
        from judgecam.calibration.camera import same_aspect

        calibration, _ = self._setup(frame)
        height, width = frame.image.shape[:2]
        if calibration is None or same_aspect(calibration.image_size, (width, height)):
            return None
        calibrated = f"{calibration.image_size[0]}x{calibration.image_size[1]}"
        return (
            f"camera {frame.camera} sends {width}x{height} frames but is calibrated for "
            f"{calibrated}, another aspect ratio: set its resolution back or calibrate it again"
        )

    def judge(self, views: Sequence[Frame], event: str) -> JudgeResult:
        puzzle = EVENT_PUZZLES.get(event)
        if puzzle is None:
            return JudgeResult("review", (f"the camera does not judge event {event!r}",))
        misfits = tuple(m for m in (self._misfit(frame) for frame in views) if m is not None)
        if misfits:
            return JudgeResult("review", misfits, {"puzzle": puzzle}, {}, misfits)
        images = [(frame.camera, frame.image) for frame in views]
        intrinsics = [self._intrinsics(frame) for frame in views]
        poses = [self._setup(frame)[1] for frame in views]
        if any(pose is not None for pose in poses):
            result = self._check(images, puzzle, intrinsics, self._scheme, world_from_camera=poses)
        else:
            result = self._check(images, puzzle, intrinsics, self._scheme)
        details = {
            "puzzle": puzzle,
            "moves_from_solved": getattr(result, "moves_from_solved", None),
            "timings_ms": {
                k: round(float(v), 1) for k, v in getattr(result, "timings_ms", {}).items()
            },
        }
        # What made it a review first: the page lists the reasons in this order.
        because = tuple(str(r) for r in getattr(result, "review_because", ()))
        return JudgeResult(
            str(result.verdict),
            (*because, *(str(r) for r in result.reasons if str(r) not in because)),
            details,
            self._overlays(result, views) if self.draw else {},
            because,
        )

    @staticmethod
    def _overlays(result: Any, views: Sequence[Frame]) -> dict[str, np.ndarray]:
        """Each view with what vision measured drawn on it (facelets, fitted model, angles)."""
        try:
            from judgecam.vision.check_cli import overlay_pair_lines
            from judgecam.vision.model import puzzle_model
            from judgecam.vision.overlay import draw_view

            model = puzzle_model(result.puzzle)
            # The pairs named as `judgecam check`'s overlay names them (`y E|U`, with the
            # limit): the chief judge reviewing the evidence reads the same picture.
            lines = overlay_pair_lines(result)
            return {
                frame.camera: draw_view(
                    frame.image,
                    view,
                    model,
                    None,
                    lines,
                    result.verdict,
                    result.reasons,
                    result.review_because,
                )
                for frame, view in zip(views, result.views, strict=True)
            }
        except Exception:  # a drawing bug must not cost the verdict
            logger.exception("could not draw the overlays")
            return {}


def _calibration_of(item: Any) -> CameraCalibration:
    """A session's `CameraIntrinsics` as a `CameraCalibration`."""
    return CameraCalibration(
        np.array(item.camera_matrix, dtype=np.float64),
        np.array(item.dist_coeffs, dtype=np.float64),
        (item.image_size[0], item.image_size[1]),
    )


def calibrations_from_session(session: Any) -> dict[str, CameraCalibration]:
    """The cameras' calibrations recorded in a session (as at its start)."""
    return {name: _calibration_of(item) for name, item in session.intrinsics.items()}


def poses_from_session(session: Any) -> dict[str, np.ndarray]:
    """The cameras' poses (4x4 world-from-camera) recorded in a session (as at its start)."""
    return {name: np.array(pose, dtype=np.float64) for name, pose in session.poses.items()}


def changes_from_session(session: Any) -> dict[str, list[CalibrationChange]]:
    """The cameras' recalibrations recorded in a session, in time order."""
    return {
        name: [
            CalibrationChange(
                item.timestamp_ns,
                None if item.intrinsics is None else _calibration_of(item.intrinsics),
                None if item.pose is None else np.array(item.pose, dtype=np.float64),
            )
            for item in items
        ]
        for name, items in session.recalibrations.items()
    }


def judge_for_session(session: Any, draw: bool = True) -> VisionJudge:
    """A `VisionJudge` with everything a session recorded: intrinsics, poses, recalibrations."""
    return VisionJudge(
        calibrations_from_session(session),
        draw=draw,
        poses=poses_from_session(session),
        changes=changes_from_session(session),
    )


def poses_from_config(config: Any) -> dict[str, np.ndarray]:
    """The cameras' poses on the mat (4x4 mat_from_camera, mm) named in a station config."""
    poses = {}
    for camera in config.cameras:
        if camera.pose is None:
            logger.warning("camera %s has no pose: vision aligns views by colours", camera.name)
            continue
        poses[camera.name] = np.asarray(camera.pose, dtype=np.float64)
    return poses


def calibrations_from_config(config: Any) -> dict[str, CameraCalibration]:
    """The cameras' calibrations named in a station config (cameras without one are left out)."""
    from judgecam.calibration.camera import load_intrinsics

    calibrations = {}
    for camera in config.cameras:
        if camera.intrinsics is None:
            logger.warning("camera %s has no intrinsics: vision assumes a lens", camera.name)
            continue
        model = load_intrinsics(camera.intrinsics)
        calibrations[camera.name] = CameraCalibration(
            model.camera_matrix, model.dist_coeffs, (model.image_size[0], model.image_size[1])
        )
    return calibrations
