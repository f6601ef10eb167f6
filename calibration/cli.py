"""Command line of calibration: `judgecam calibrate scheme|camera|rig`, `judgecam scheme show`,
`judgecam config check`.

Exit codes: 0 done; 1 refused (a scheme with colours too close, a camera calibration with too
few or badly spread views) and nothing written; 2 unusable input (missing or corrupt file, bad
board description, invalid station configuration).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np
    from numpy.typing import NDArray

logger = logging.getLogger(__name__)

REFUSED = 1


def register(subparsers: Any) -> None:
    """Add `calibrate`, `scheme` and `config` to the judgecam command line."""
    calibrate = subparsers.add_parser(
        "calibrate", help="learn a colour scheme, camera intrinsics or the rig pose"
    )
    jobs = calibrate.add_subparsers(dest="calibrate_job", metavar="JOB", required=True)

    scheme = jobs.add_parser("scheme", help="learn a colour scheme from photos of a SOLVED puzzle")
    scheme.add_argument("--puzzle", required=True, choices=("222", "333", "pyram"))
    scheme.add_argument("images", nargs="+", metavar="IMAGE", type=Path)
    scheme.add_argument("-o", "--output", required=True, type=Path, metavar="SCHEME.toml")
    scheme.add_argument(
        "--name", default=None, help="scheme name (default: the output file's stem)"
    )
    scheme.add_argument("--light", default="station light", help="the light it is learnt under")
    scheme.set_defaults(func=_calibrate_scheme)

    camera = jobs.add_parser("camera", help="camera intrinsics and distortion from board photos")
    camera.add_argument(
        "--board", required=True, help="chessboard:9x6:25mm or charuco:COLSxROWS:SQmm:MKmm:DICT"
    )
    camera.add_argument("images", nargs="*", metavar="IMAGE", type=Path)
    camera.add_argument("--source", default=None, help="live OpenCV camera (number or URL)")
    camera.add_argument("--views", type=int, default=15, help="views to collect live (default 15)")
    camera.add_argument(
        "--seconds", type=float, default=120.0, help="live time limit (default 120)"
    )
    camera.add_argument(
        "--resolution",
        default="1280x720",
        help="live capture WxH: the station's (default 1280x720)",
    )
    camera.add_argument("--name", default="", help="camera name stored in the file")
    camera.add_argument("-o", "--output", required=True, type=Path, metavar="CAMERA.yml")
    camera.set_defaults(func=_calibrate_camera)

    rig = jobs.add_parser(
        "rig", help="camera pose on the mat from a board lying where the puzzle sits"
    )
    rig.add_argument(
        "--board", required=True, help="charuco:COLSxROWS:SQmm:MKmm:DICT (or chessboard)"
    )
    rig.add_argument("--intrinsics", type=Path, default=None, metavar="CAMERA.yml")
    rig.add_argument("image", type=Path, metavar="IMAGE")
    rig.add_argument("--puzzle", default="333", choices=("222", "333", "pyram"))
    destination = rig.add_mutually_exclusive_group(required=True)
    destination.add_argument("-o", "--output", type=Path, metavar="POSE.toml")
    destination.add_argument("--station", type=Path, metavar="STATION.toml")
    rig.add_argument("--camera", default=None, help="camera name in --station")
    rig.set_defaults(func=_calibrate_rig)

    show = subparsers.add_parser("scheme", help="show a colour scheme")
    scheme_jobs = show.add_subparsers(dest="scheme_job", metavar="JOB", required=True)
    show_job = scheme_jobs.add_parser("show", help="colours as swatches (and a PNG with -o)")
    show_job.add_argument("scheme", metavar="SCHEME.toml|builtin:333")
    show_job.add_argument("-o", "--output", type=Path, default=None, metavar="swatch.png")
    show_job.set_defaults(func=_scheme_show)

    config = subparsers.add_parser("config", help="station configuration")
    config_jobs = config.add_subparsers(dest="config_job", metavar="JOB", required=True)
    check = config_jobs.add_parser("check", help="validate a station configuration")
    check.add_argument("config", type=Path, metavar="STATION.toml")
    check.set_defaults(func=_config_check)


def _usage(message: str) -> Exception:
    from judgecam.cli import UsageError

    return UsageError(message)


def _read_image(path: Path) -> NDArray[np.uint8]:
    from judgecam.device.image_files import ImageFileError, read_image

    try:
        return read_image(path)
    except ImageFileError as error:
        raise _usage(str(error)) from None


# ----------------------------------------------------------------------------------------


def _calibrate_scheme(args: argparse.Namespace) -> int:
    from judgecam.calibration import scheme_images
    from judgecam.calibration.scheme import SchemeError, learn_scheme, save_scheme, separation
    from judgecam.calibration.swatch import scheme_text

    images = [_read_image(path) for path in args.images]
    sidecars = [path.with_name(path.name + ".facelets.json") for path in args.images]
    have = [sidecar.is_file() for sidecar in sidecars]
    try:
        if all(have):
            facelets = [scheme_images.read_facelets_file(sidecar) for sidecar in sidecars]
            if all(f.face is not None for stickers in facelets for f in stickers):
                grouped = scheme_images.samples_by_face(images, facelets, args.puzzle)
            else:
                grouped = scheme_images.samples_by_cluster(images, facelets, args.puzzle)
            print(f"stickers from {len(sidecars)} .facelets.json files")
        elif any(have):
            missing = [str(s) for s, ok in zip(sidecars, have, strict=True) if not ok]
            raise _usage(f"some photos have .facelets.json files and some not: {missing[0]}")
        else:
            facelets = [scheme_images.detect_facelets(image, args.puzzle) for image in images]
            for path, stickers in zip(args.images, facelets, strict=True):
                print(f"{path}: {len(stickers)} stickers found")
            grouped = scheme_images.samples_by_cluster(images, facelets, args.puzzle)
        learnt = learn_scheme(
            grouped.samples,
            puzzle=args.puzzle,
            name=args.name or args.output.stem,
            light=args.light,
            opposites=grouped.opposites,
        )
    except SchemeError as error:
        raise _usage(str(error)) from None
    print(scheme_text(learnt, ansi=sys.stdout.isatty()))
    refused = [pair for pair in separation(learnt) if pair.status == "refused"]
    if refused:
        for pair in refused:
            print(f"refused (regulation 8.2): {pair.describe()}", file=sys.stderr)
        print(f"nothing written to {args.output}", file=sys.stderr)
        return REFUSED
    save_scheme(learnt, args.output)
    print(f"wrote {args.output}")
    return 0


def _scheme_show(args: argparse.Namespace) -> int:
    import cv2

    from judgecam.calibration.scheme import SchemeError, load_scheme
    from judgecam.calibration.swatch import scheme_card, scheme_text

    try:
        scheme = load_scheme(args.scheme)
    except SchemeError as error:
        raise _usage(str(error)) from None
    print(scheme_text(scheme, ansi=sys.stdout.isatty()))
    if args.output is not None:
        if not cv2.imwrite(str(args.output), scheme_card(scheme)):
            raise _usage(f"{args.output}: cannot write the swatch image")
        print(f"wrote {args.output}")
    return 0


# ----------------------------------------------------------------------------------------


def _calibrate_camera(args: argparse.Namespace) -> int:
    from judgecam.calibration.boards import BoardError, detect_board, parse_board
    from judgecam.calibration.camera import CalibrationError, calibrate_camera, save_intrinsics

    try:
        spec = parse_board(args.board)
    except BoardError as error:
        raise _usage(str(error)) from None
    if bool(args.images) == (args.source is not None):
        raise _usage("give board photos or --source, not both and not neither")
    if args.source is not None:
        detections, names = _live_views(spec, args)
    else:
        detections, names = [], []
        sizes = set()
        for path in args.images:
            image = _read_image(path)
            sizes.add(image.shape[:2])
            detection = detect_board(spec, image)
            if detection is None:
                print(f"{path}: board not found, skipped")
                continue
            detections.append(detection)
            names.append(str(path))
        if len(sizes) > 1:
            raise _usage("the photos have different sizes; calibrate one resolution at a time")
    try:
        result = calibrate_camera(detections, names, name=args.name)
    except CalibrationError as error:
        print(f"refused: {error}", file=sys.stderr)
        print(f"nothing written to {args.output}", file=sys.stderr)
        return REFUSED
    model = result.model
    print(f"{len(detections)} views, RMS reprojection error {result.rms_px:.3f} px")
    for name, view_error in zip(result.view_names, result.per_view_errors_px, strict=True):
        print(f"  {view_error:6.3f} px  {name}")
    print(
        f"fx {model.fx:.1f} fy {model.fy:.1f} cx {model.principal_point[0]:.1f} "
        f"cy {model.principal_point[1]:.1f}  dist {' '.join(f'{d:.4f}' for d in model.dist_coeffs)}"
    )
    save_intrinsics(
        model, args.output, rms_px=result.rms_px, per_view_errors_px=result.per_view_errors_px
    )
    print(f"wrote {args.output}")
    return 0


def _parse_resolution(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    if not (width.isdigit() and height.isdigit() and int(width) > 0 and int(height) > 0):
        raise _usage(f"resolution {text!r} is not WIDTHxHEIGHT")
    return int(width), int(height)


def _live_views(spec: Any, args: argparse.Namespace) -> tuple[list[Any], list[str]]:
    from judgecam.calibration.views import collect_board_views
    from judgecam.device.sources import CameraLost, iter_frames, open_source

    device: int | str = int(args.source) if str(args.source).isdigit() else args.source
    source = open_source(
        "opencv",
        device=device,
        camera="calibration",
        resolution=_parse_resolution(args.resolution),
        lock_controls=False,
    )

    def images() -> Iterator[NDArray[np.uint8]]:
        # A camera that stops (or a video file that ends) ends the collection, keeping the
        # views found so far.
        try:
            for frame in iter_frames(source):
                yield frame.image
        except CameraLost as error:
            print(f"camera stopped: {error}")

    print(f"move the board through the view: collecting {args.views} views, {args.seconds:g} s max")
    try:
        with source:
            collected = collect_board_views(
                images(),
                spec,
                max_views=args.views,
                max_frames=int(args.seconds * 60),
                max_seconds=args.seconds,
            )
    except CameraLost as error:
        raise _usage(str(error)) from None
    print(
        f"{len(collected.detections)} views from {collected.frames_seen} frames "
        f"(stopped by {collected.stopped_by})"
    )
    names = [f"live view {i + 1}" for i in range(len(collected.detections))]
    return list(collected.detections), names


# ----------------------------------------------------------------------------------------


def _calibrate_rig(args: argparse.Namespace) -> int:
    import dataclasses
    import math

    import tomli_w

    from judgecam.calibration.boards import BoardError, parse_board
    from judgecam.calibration.camera import CalibrationError, default_intrinsics, load_intrinsics
    from judgecam.calibration.rig import estimate_rig_pose, face_views
    from judgecam.calibration.station import (
        StationConfigError,
        load_station_config,
        save_station_config,
    )

    try:
        spec = parse_board(args.board)
    except BoardError as error:
        raise _usage(str(error)) from None
    if args.camera is not None and args.station is None:
        raise _usage("--camera names a camera of --station; give the station file too")
    image = _read_image(args.image)
    config = None
    camera_name: str | None = args.camera
    intrinsics: Path | None = args.intrinsics
    if args.station is not None:
        try:
            config = load_station_config(args.station)
        except StationConfigError as error:
            raise _usage(str(error)) from None
        if camera_name is None:
            if len(config.cameras) != 1:
                raise _usage("the station has several cameras: name one with --camera")
            camera_name = config.cameras[0].name
        try:
            station_camera = config.camera(camera_name)
        except KeyError:
            raise _usage(f"{args.station}: no camera called {camera_name!r}") from None
        if intrinsics is None:
            intrinsics = station_camera.intrinsics
    try:
        if intrinsics is not None:
            model = load_intrinsics(intrinsics)
        else:
            model = default_intrinsics(image.shape[1], image.shape[0])
            print("no --intrinsics: using nominal Pi Camera Module 3 values (less accurate)")
        pose = estimate_rig_pose(spec, image, model)
    except CalibrationError as error:
        raise _usage(str(error)) from None
    position = pose.camera_position_mm
    horizontal = float((position[0] ** 2 + position[1] ** 2) ** 0.5)
    elevation = math.degrees(math.atan2(position[2], horizontal))
    print(
        f"pose from {pose.corners_used} corners, "
        f"reprojection error {pose.reprojection_error_px:.2f} px"
    )
    print(
        f"camera at x {position[0]:.0f} y {position[1]:.0f} z {position[2]:.0f} mm "
        f"({elevation:.0f} degrees above the mat)"
    )
    for view in face_views(pose.mat_from_camera, args.puzzle):
        state = "grazing" if view.grazing else "seen" if view.visible else "hidden"
        print(f"  {view.face:<11} {state:<8} {view.angle_deg:5.1f} degrees from its normal")
    if config is not None:
        cameras = tuple(
            dataclasses.replace(camera, pose=pose.mat_from_camera)
            if camera.name == camera_name
            else camera
            for camera in config.cameras
        )
        save_station_config(dataclasses.replace(config, cameras=cameras), args.station)
        print(f"wrote the pose of camera {camera_name!r} into {args.station}")
    else:
        document = {
            "board": spec.describe(),
            "reprojection_error_px": round(pose.reprojection_error_px, 4),
            "pose": [[round(float(v), 6) for v in row] for row in pose.mat_from_camera],
        }
        args.output.write_bytes(tomli_w.dumps(document).encode("utf-8"))
        print(f"wrote {args.output}")
    return 0


# ----------------------------------------------------------------------------------------


def _config_check(args: argparse.Namespace) -> int:
    from judgecam.calibration.checks import check_station
    from judgecam.calibration.station import StationConfigError, load_station_config

    try:
        config = load_station_config(args.config)
    except StationConfigError as error:
        for problem in error.problems:
            print(f"error: {args.config}: {problem}", file=sys.stderr)
        return 2
    findings = check_station(config)
    for finding in findings:
        stream = sys.stderr if finding.level == "error" else sys.stdout
        print(f"{finding.level}: {finding.message}", file=stream)
    errors = sum(finding.level == "error" for finding in findings)
    warnings = len(findings) - errors
    print(
        f"{args.config}: {len(config.cameras)} camera(s), {errors} error(s), {warnings} warning(s)"
    )
    return 2 if errors else 0
