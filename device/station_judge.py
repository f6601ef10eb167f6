"""The station's judge: an adapter from the loop's `Judge` protocol to judgecam.vision.

`judgecam.vision.pipeline.check(images, puzzle, intrinsics, scheme)` judges the images of one
moment; this adapter hands it the views (named by camera), the puzzle of the attempt's event
and each camera's intrinsics (scaled to the frame's size; assumed ones, which vision reports as
a reason, when a camera has no calibration), and turns its `CheckResult` into a `JudgeResult`.
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


class VisionJudge:
    """Judges with `judgecam.vision.pipeline.check`."""

    def __init__(
        self,
        calibrations: Mapping[str, CameraCalibration] | None = None,
        scheme: Any = None,
        check: Callable[..., Any] | None = None,
        draw: bool = True,
    ) -> None:
        from judgecam.vision.pipeline import check as vision_check

        self._check = check or vision_check
        self._calibrations = dict(calibrations or {})
        self._scheme = scheme
        self.draw = draw

    def _intrinsics(self, frame: Frame) -> Any:
        from judgecam.vision.camera import Intrinsics

        height, width = frame.image.shape[:2]
        calibration = self._calibrations.get(frame.camera)
        if calibration is None:
            return Intrinsics.assumed_for(width, height)
        matrix, distortion = calibration.for_size(width, height)
        return Intrinsics(matrix, distortion)

    def judge(self, views: Sequence[Frame], event: str) -> JudgeResult:
        puzzle = EVENT_PUZZLES.get(event)
        if puzzle is None:
            return JudgeResult("review", (f"the camera does not judge event {event!r}",))
        images = [(frame.camera, frame.image) for frame in views]
        intrinsics = [self._intrinsics(frame) for frame in views]
        result = self._check(images, puzzle, intrinsics, self._scheme)
        details = {
            "puzzle": puzzle,
            "moves_from_solved": getattr(result, "moves_from_solved", None),
            "timings_ms": {
                k: round(float(v), 1) for k, v in getattr(result, "timings_ms", {}).items()
            },
        }
        return JudgeResult(
            str(result.verdict),
            tuple(str(r) for r in result.reasons),
            details,
            self._overlays(result, views) if self.draw else {},
        )

    @staticmethod
    def _overlays(result: Any, views: Sequence[Frame]) -> dict[str, np.ndarray]:
        """Each view with what vision measured drawn on it (facelets, fitted model, angles)."""
        try:
            from judgecam.vision.model import puzzle_model
            from judgecam.vision.overlay import draw_view

            model = puzzle_model(result.puzzle)
            pairs = [] if result.fusion is None else result.fusion.pairs
            lines = [
                f"{p.axis}{list(p.parts)} {p.angle_deg:+.1f} +- {p.uncertainty_deg:.1f} deg"
                for p in pairs
            ]
            return {
                frame.camera: draw_view(frame.image, view, model, None, lines, result.verdict)
                for frame, view in zip(views, result.views, strict=True)
            }
        except Exception:  # a drawing bug must not cost the verdict
            logger.exception("could not draw the overlays")
            return {}


def calibrations_from_session(session: Any) -> dict[str, CameraCalibration]:
    """The cameras' calibrations recorded in a session."""
    return {
        name: CameraCalibration(
            np.array(item.camera_matrix, dtype=np.float64),
            np.array(item.dist_coeffs, dtype=np.float64),
            (item.image_size[0], item.image_size[1]),
        )
        for name, item in session.intrinsics.items()
    }


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
