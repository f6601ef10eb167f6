"""`judgecam check`: judge a puzzle from the images of one moment (issue 4).

    judgecam check IMAGE [IMAGE ...] --puzzle {222,333,pyram} [--intrinsics FILE ...]
                   [--scheme FILE] [--overlay DIR] [--json] [--learned]

Exit status 0 for any verdict (review included); 2 with one line for unusable input.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from judgecam.vision.camera import Intrinsics
    from judgecam.vision.pipeline import CheckResult

logger = logging.getLogger(__name__)

PUZZLES = ("222", "333", "pyram")


def register(subparsers: Any) -> None:
    """Add `check` to the judgecam command line."""
    parser = subparsers.add_parser(
        "check",
        help="judge a puzzle from camera images: solved, +2, DNF or review",
        description="Judge a puzzle from images of one moment taken by different cameras.",
    )
    parser.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    parser.add_argument("--puzzle", required=True, choices=PUZZLES)
    parser.add_argument(
        "--intrinsics",
        nargs="+",
        type=Path,
        default=None,
        metavar="FILE",
        help="OpenCV camera file(s) (YAML/JSON): one per image, or one for all",
    )
    parser.add_argument("--scheme", type=Path, default=None, help="colour scheme file")
    parser.add_argument(
        "--station",
        type=Path,
        default=None,
        metavar="CONFIG",
        help="station config (TOML): the images are its cameras' views, in its order; each "
        "camera's intrinsics file and rig pose (judgecam calibrate rig) are used",
    )
    parser.add_argument("--overlay", type=Path, default=None, metavar="DIR", help="write overlays")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--learned",
        action="store_true",
        help="cross-check each view with the learned detector (models/facelets.onnx): "
        "a verdict the two readings disagree on gives review",
    )
    parser.set_defaults(func=run)


def _load_image(path: Path) -> NDArray[np.uint8]:
    from judgecam.cli import UsageError
    from judgecam.device.image_files import ImageFileError, read_image

    try:
        return read_image(path)
    except ImageFileError as error:
        raise UsageError(str(error)) from None


def _station(
    path: Path, images: list[NDArray[np.uint8]]
) -> tuple[list[Path | None], list[NDArray[np.float64] | None]]:
    """Per image (camera of the station config, in order): its intrinsics file and rig pose."""
    from judgecam.calibration.station import StationConfigError, load_station_config
    from judgecam.cli import UsageError

    try:
        config = load_station_config(path)
    except (OSError, StationConfigError) as error:
        raise UsageError(f"--station: {error}") from None
    if len(config.cameras) != len(images):
        names = ", ".join(camera.name for camera in config.cameras)
        raise UsageError(
            f"--station: {path} has {len(config.cameras)} camera(s) ({names}); give one image "
            f"per camera in that order, not {len(images)}"
        )
    return [camera.intrinsics for camera in config.cameras], [
        camera.pose for camera in config.cameras
    ]


def _intrinsics(
    paths: list[Path] | list[Path | None] | None, images: list[NDArray[np.uint8]]
) -> list[Intrinsics]:
    """One camera model per image: from the files (one for all, or one per image; None for
    an image without one), or a Pi Camera Module 3's field of view, assumed and said."""
    from judgecam.calibration.camera import CalibrationError, load_intrinsics, same_aspect
    from judgecam.cli import UsageError
    from judgecam.vision.camera import Intrinsics

    sizes = [(int(image.shape[1]), int(image.shape[0])) for image in images]
    if not paths:
        return [Intrinsics.assumed_for(*size) for size in sizes]
    if len(paths) not in (1, len(images)):
        raise UsageError(
            f"give one --intrinsics file for all images or one per image, not {len(paths)}"
        )
    try:
        models = [None if path is None else load_intrinsics(path) for path in paths]
    except CalibrationError as error:
        raise UsageError(str(error)) from None
    files = list(paths)
    if len(models) == 1:
        models, files = models * len(images), files * len(images)
    result = []
    for model, size, path in zip(models, sizes, files, strict=True):
        if model is None:
            result.append(Intrinsics.assumed_for(*size))
            continue
        if model.image_size != size:
            if not same_aspect(model.image_size, size):
                raise UsageError(
                    f"{path}: intrinsics for {model.image_size[0]}x{model.image_size[1]} do not "
                    f"fit a {size[0]}x{size[1]} image (another aspect ratio): calibrate the "
                    "camera at this resolution, or give the file's image_width/height"
                )
            # Same camera at another resolution: the field of view is kept.
            model = model.scaled_to(*size)
        result.append(Intrinsics.from_camera_model(model))
    return result


def run(args: argparse.Namespace) -> int:
    """Judge the images; print the verdict (and write overlays when asked)."""
    from judgecam.cli import UsageError
    from judgecam.vision.pipeline import check

    images = [_load_image(path) for path in args.images]
    poses: list[NDArray[np.float64] | None] | None = None
    intrinsics_files: list[Path] | list[Path | None] | None = args.intrinsics
    if args.station is not None:
        station_files, poses = _station(args.station, images)
        intrinsics_files = args.intrinsics or station_files
        if all(pose is None for pose in poses):
            poses = None
    cameras = _intrinsics(intrinsics_files, images)
    scheme = None
    if args.scheme is not None:
        from judgecam.calibration.scheme import SchemeError, load_scheme

        try:
            scheme = load_scheme(args.scheme, args.puzzle)
        except SchemeError as error:
            raise UsageError(str(error)) from None
    from judgecam.vision.detector_onnx import ModelError

    try:
        result = check(
            [(str(path), image) for path, image in zip(args.images, images, strict=True)],
            args.puzzle,
            cameras,
            scheme,
            world_from_camera=poses,
            learned=args.learned,
        )
    except ModelError as error:
        raise UsageError(f"--learned: {error}") from None
    if args.overlay is not None:
        write_overlays(result, images, args.overlay)
    if args.json:
        print(json.dumps(result_to_json(result), indent=2))
    else:
        print(human_answer(result))
    return 0


def _view_labels(result: CheckResult, view_index: int) -> list[tuple[str | None, float]]:
    """Colour name and confidence of each detected facelet of one view (None if unplaced)."""
    view = result.views[view_index]
    if view.segmentation is None:
        return []
    labels: list[tuple[str | None, float]] = [(None, 0.0)] * len(view.segmentation.facelets)
    fusion = result.fusion
    if view.fit is None or fusion is None or fusion.colors is None:
        return labels
    permutation = fusion.permutations[view_index]
    if permutation is None:
        return labels
    for detection, facelet in enumerate(view.fit.assignment):
        if facelet < 0:
            continue
        fused = int(permutation[facelet])
        labels[detection] = (fusion.colors.labels[fused], float(fusion.colors.confidences[fused]))
    return labels


def _faces(result: CheckResult, view_index: int) -> list[dict[str, Any]]:
    import cv2
    import numpy as np

    view = result.views[view_index]
    if view.fit is None or view.segmentation is None or not view.fit.found:
        return []
    from judgecam.vision.model import puzzle_model

    model = puzzle_model(result.puzzle)
    labels = _view_labels(result, view_index)
    permutation = result.fusion.permutations[view_index] if result.fusion is not None else None
    faces: dict[int, list[int]] = {}
    for detection, facelet in enumerate(view.fit.assignment):
        if facelet >= 0:
            fused = int(permutation[facelet]) if permutation is not None else int(facelet)
            faces.setdefault(int(model.facelet_face[fused]), []).append(detection)
    answer = []
    for face, detections in sorted(faces.items()):
        corners = np.concatenate([view.segmentation.facelets[d].corners_px for d in detections])
        hull = cv2.convexHull(corners.astype(np.float32)).reshape(-1, 2)
        answer.append(
            {
                "face": model.face_names[face],
                "outline_px": [[round(float(x), 1), round(float(y), 1)] for x, y in hull],
                "facelets": [
                    {
                        "center_px": [
                            round(float(v), 1) for v in view.segmentation.facelets[d].center_px
                        ],
                        "color": labels[d][0],
                        "confidence": round(labels[d][1], 3),
                    }
                    for d in detections
                ],
            }
        )
    return answer


def result_to_json(result: CheckResult) -> dict[str, Any]:
    """The JSON object issue 4 specifies."""
    from judgecam.vision.model import puzzle_model

    model = puzzle_model(result.puzzle)
    pairs = []
    if result.fusion is not None:
        for pair in result.fusion.verdict.pairs:
            axis = next(a for a in model.axes if a.name == pair.axis)
            measured = any(
                p.axis == pair.axis and p.parts == pair.parts for p in result.fusion.pairs
            )
            pairs.append(
                {
                    "axis": pair.axis,
                    "parts": [axis.part_names[pair.parts[0]], axis.part_names[pair.parts[1]]],
                    "angle_deg": round(float(pair.angle_from_solved_deg), 2) if measured else None,
                    "uncertainty_deg": round(float(pair.uncertainty_deg), 2) if measured else None,
                    "limit_deg": float(pair.limit_deg),
                    "beyond_limit": bool(pair.beyond_limit) if measured else None,
                }
            )
    return {
        "puzzle": result.puzzle,
        "verdict": result.verdict,
        "moves_from_solved": result.moves_from_solved,
        "reasons": list(result.reasons),
        "review_because": list(result.review_because),
        "pairs": pairs,
        "hidden": list(result.fusion.hidden_faces)
        if result.fusion is not None
        else list(model.face_names),
        "intrinsics_assumed": any(view.intrinsics.assumed for view in result.views),
        "views": [
            {
                "image": view.name,
                "puzzle_found": view.found,
                "problems": list(view.problems),
                "notes": list(view.notes),
                "cross_check": list(view.disagreements),
                "faces": _faces(result, index),
            }
            for index, view in enumerate(result.views)
        ],
        "timings_ms": {stage: round(value, 1) for stage, value in result.timings_ms.items()},
    }


def human_answer(result: CheckResult) -> str:
    """A short answer: the verdict and, for a review, what made it one; the largest
    misalignment; then the other reasons (notes)."""
    lines = [
        f"{result.verdict}" + (" (1 move from solved)" if result.moves_from_solved == 1 else "")
    ]
    lines.extend(f"why: {reason}" for reason in result.review_because)
    if result.fusion is not None and result.fusion.pairs:
        from judgecam.vision.model import puzzle_model

        largest = max(result.fusion.pairs, key=lambda p: abs(p.angle_deg))
        axis = next(a for a in puzzle_model(result.puzzle).axes if a.name == largest.axis)
        names = "/".join(axis.part_names[i] for i in largest.parts)
        lines.append(
            f"largest misalignment: {names} about {largest.axis}, "
            f"{largest.angle_deg:+.1f} ± {largest.uncertainty_deg:.1f} degrees"
        )
    lines.extend(f"- {r}" for r in result.reasons if r not in result.review_because)
    return "\n".join(lines)


def overlay_pair_lines(result: CheckResult) -> list[str]:
    """One line per adjacent pair for the overlay, named as the reasons and the JSON name it
    (`x L|M`), with its limit: a judge reading the picture must see which layer is meant and
    whether it is past the limit, not an axis index."""
    pairs = result_to_json(result)["pairs"]
    lines = []
    for pair in pairs:
        name = f"{pair['axis']} {'|'.join(pair['parts'])}"
        if pair["angle_deg"] is None:
            lines.append(f"{name}: not measured (limit {pair['limit_deg']:g})")
            continue
        where = "BEYOND" if pair["beyond_limit"] else "within"
        lines.append(
            f"{name}: {pair['angle_deg']:+.1f} +- {pair['uncertainty_deg']:.1f} deg "
            f"({where} {pair['limit_deg']:g})"
        )
    return lines


def write_overlays(result: CheckResult, images: list[NDArray[np.uint8]], folder: Path) -> None:
    """One annotated PNG per view in `folder`."""
    import cv2

    from judgecam.vision.model import puzzle_model
    from judgecam.vision.overlay import draw_view

    folder.mkdir(parents=True, exist_ok=True)
    model = puzzle_model(result.puzzle)
    pair_lines = overlay_pair_lines(result)
    for index, (view, image) in enumerate(zip(result.views, images, strict=True)):
        labels = [label for label, _ in _view_labels(result, index)]
        drawn = draw_view(
            image,
            view,
            model,
            labels,
            pair_lines,
            result.verdict,
            result.reasons,
            result.review_because,
        )
        name = f"{index:02d}_{Path(view.name).stem}_overlay.png"
        cv2.imwrite(str(folder / name), drawn)
