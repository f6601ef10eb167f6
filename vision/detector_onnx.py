"""The learned facelet detector: an ONNX model run with onnxruntime on the CPU.

Two passes per frame with the same model: the whole frame letterboxed into the 256x256 input
finds the puzzle (the group of facelet peaks with the largest total score, without peaks under
half its best); a square crop around that group, scaled so the puzzle spans about 75 % of the
input, then gives every facelet's centre and corners precisely (same grouping). Output: facelet
keypoints and polygons in frame pixels with confidences, which `to_facelets` (or
`to_segmentation`) turns into the stage-2 `Facelet`s that the geometry stage fits.

The model file's SHA-256 is checked against the `.sha256` file beside it before it is loaded.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.detector_post import (
    Keypoints,
    decode,
    drop_weak,
    main_cluster,
    polygon_sizes,
)
from judgecam.vision.detector_pre import (
    INPUT_SIZE,
    CropTransform,
    crop_transform,
    letterbox_transform,
    to_tensor,
    warp_input,
)
from judgecam.vision.locate import PuzzleRegion
from judgecam.vision.quads import Patch
from judgecam.vision.segment import Facelet, FaceletSegmentation, sample_color

logger = logging.getLogger(__name__)

#: The committed model (trained by `python -m judgecam.models.train`).
DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "models" / "facelets.onnx"
#: In the second pass the puzzle's extent is this fraction of the crop's side.
CROP_FILL = 0.75
#: Fewest facelets in the main group for "the puzzle was found".
MIN_FACELETS = 3


class ModelError(RuntimeError):
    """The model file is missing, altered (hash mismatch) or not the expected network."""


@dataclass(frozen=True, eq=False)
class Detection:
    """Facelets the learned detector found in one frame (frame pixels)."""

    found: bool
    centers_px: NDArray[np.float64]  # (N, 2)
    polygons_px: NDArray[np.float64]  # (N, K, 2) clockwise on screen
    confidences: NDArray[np.float64]  # (N,)
    crop: CropTransform | None  # the second pass's window, None if the first found nothing
    confidence: float  # 0..1, for the frame as a whole

    @property
    def count(self) -> int:
        return int(self.centers_px.shape[0])


def expected_sha256(model_path: Path) -> str:
    """The hash recorded beside the model (`<name>.sha256`, sha256sum format)."""
    hash_path = model_path.with_suffix(".sha256")
    if not hash_path.is_file():
        raise ModelError(f"no hash file {hash_path} beside the model")
    return hash_path.read_text().split()[0].strip().lower()


def verify_model(model_path: Path) -> bytes:
    """The model file's bytes, after checking them against the recorded SHA-256."""
    if not model_path.is_file():
        raise ModelError(f"model file {model_path} not found")
    data = model_path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    expected = expected_sha256(model_path)
    if actual != expected:
        raise ModelError(
            f"model {model_path.name} does not match its recorded SHA-256 "
            f"(expected {expected[:12]}..., got {actual[:12]}...): retrain or restore it"
        )
    return data


def crop_around(keypoints_px: Keypoints, fill: float = CROP_FILL) -> CropTransform:
    """The second pass's window: a square centred on the facelets (frame pixels), its side
    such that their extent (plus half a facelet each side) fills `fill` of it."""
    points = keypoints_px.polygons.reshape(-1, 2)
    low, high = points.min(axis=0), points.max(axis=0)
    margin = 0.5 * float(np.median(polygon_sizes(keypoints_px.polygons)))
    extent = float(max(high - low)) + 2.0 * margin
    center = (low + high) / 2.0
    return crop_transform(float(center[0]), float(center[1]), extent / fill)


def to_frame(keypoints: Keypoints, transform: CropTransform) -> Keypoints:
    """Keypoints from input pixels to frame pixels."""
    return Keypoints(
        transform.to_frame(keypoints.centers),
        keypoints.scores,
        transform.to_frame(keypoints.polygons),
    )


class FaceletDetector:
    """Loads the ONNX model once (hash and input shape checked, warmed up) and runs it."""

    def __init__(self, model_path: Path = DEFAULT_MODEL, threads: int = 1) -> None:
        import onnxruntime as ort  # type: ignore[import-untyped]

        data = verify_model(model_path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self._session = ort.InferenceSession(
                data, sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own untyped errors
            raise ModelError(f"cannot load {model_path.name}: {error}") from error
        inputs = self._session.get_inputs()
        if len(inputs) != 1 or list(inputs[0].shape) != [1, 3, INPUT_SIZE, INPUT_SIZE]:
            shapes = [i.shape for i in inputs]
            raise ModelError(
                f"{model_path.name}: expected one input 1x3x{INPUT_SIZE}x{INPUT_SIZE}, got {shapes}"
            )
        self._input = inputs[0].name
        self.model_path = model_path
        self.run_window(np.full((INPUT_SIZE, INPUT_SIZE, 3), 114, np.uint8))  # warm-up

    def run_window(self, window: NDArray[np.uint8]) -> NDArray[np.float32]:
        """Raw model output (channels, h, w) for one (INPUT_SIZE, INPUT_SIZE, 3) BGR window."""
        (output,) = self._session.run(None, {self._input: to_tensor(window)})
        return np.asarray(output[0], np.float32)

    def keypoints(
        self, image: NDArray[np.uint8], transform: CropTransform, sides: int
    ) -> Keypoints:
        """Keypoints (frame pixels) found in one window of the frame."""
        return to_frame(decode(self.run_window(warp_input(image, transform)), sides), transform)

    def detect(self, image: NDArray[np.uint8], sides: int = 4) -> Detection:
        """Both passes on one BGR frame; `sides` is 4 for cubes, 3 for the Pyraminx."""
        if image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
            raise ValueError(f"expected a BGR image of shape (H, W, 3), got {image.shape}")
        height, width = image.shape[:2]
        coarse = drop_weak(
            main_cluster(self.keypoints(image, letterbox_transform(width, height), sides))
        )
        if len(coarse) == 0:
            return _nothing(sides)
        crop = crop_around(coarse)
        fine = drop_weak(main_cluster(self.keypoints(image, crop, sides)))
        found = len(fine) >= MIN_FACELETS
        confidence = float(
            np.clip(len(fine) / 6.0, 0.0, 1.0) * (np.median(fine.scores) if len(fine) else 0.0)
        )
        return Detection(found, fine.centers, fine.polygons, fine.scores, crop, confidence)


@functools.lru_cache(maxsize=1)
def shared_detector() -> FaceletDetector:
    """The committed model, loaded once per process (one thread, like every stage)."""
    return FaceletDetector(DEFAULT_MODEL, threads=1)


def _nothing(sides: int) -> Detection:
    return Detection(False, np.zeros((0, 2)), np.zeros((0, sides, 2)), np.zeros(0), None, 0.0)


def to_facelets(image: NDArray[np.uint8], detection: Detection) -> tuple[Facelet, ...]:
    """The detection as stage-2 facelets (colour sampled as the classical path does), ready
    for `judgecam.vision.geometry.fit_geometry`."""
    facelets = []
    for polygon, confidence in zip(detection.polygons_px, detection.confidences, strict=True):
        mean, spread, count = sample_color(image, polygon)
        facelets.append(
            Facelet(
                corners_px=polygon,
                mean_bgr=mean,
                spread=spread,
                pixel_count=count,
                confidence=float(confidence),
            )
        )
    return tuple(facelets)


def to_region(detection: Detection, image_shape: tuple[int, ...]) -> PuzzleRegion:
    """The detection as a stage-1 candidate region (what `find_puzzles` returns per puzzle)."""
    if detection.count == 0:
        raise ValueError("an empty detection has no region")
    polygons = detection.polygons_px
    sizes = polygon_sizes(polygons)
    patches = tuple(
        Patch(corners=polygon, area=float(size**2), fill=1.0)
        for polygon, size in zip(polygons, sizes, strict=True)
    )
    hull = cv2.convexHull(polygons.reshape(-1, 2).astype(np.float32)).reshape(-1, 2)
    sticker = float(np.median(sizes))
    height, width = image_shape[:2]
    margin = 0.5 * sticker
    touches = bool(
        hull[:, 0].min() < margin
        or hull[:, 1].min() < margin
        or hull[:, 0].max() > width - 1 - margin
        or hull[:, 1].max() > height - 1 - margin
    )
    return PuzzleRegion(patches, hull.astype(np.float64), sticker, touches, detection.confidence)


def to_segmentation(image: NDArray[np.uint8], detection: Detection) -> FaceletSegmentation:
    """The detection as a stage-2 result: stages 1-2 of the pipeline in one, ready for
    `judgecam.vision.geometry.fit_geometry(segmentation.facelets, model, intrinsics)`."""
    return FaceletSegmentation(
        region=to_region(detection, image.shape),
        facelets=to_facelets(image, detection),
        confidence=detection.confidence,
    )
