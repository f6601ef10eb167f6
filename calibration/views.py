"""Choosing board views from a live camera: keep a frame only when the board has moved.

Calibration needs views that differ (position, distance, tilt); thirty near-identical frames
of a board held still add nothing but weight. Works on any iterable of BGR frames, so the
live loop and its tests share the code.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.calibration.boards import BoardDetection, BoardSpec, detect_board

logger = logging.getLogger(__name__)

#: A new view must differ from every kept one by this much in some part of its signature
#: (`view_signature`): the board moved a tenth of the image diagonal, or turned or tilted by
#: roughly ten degrees.
MIN_VIEW_CHANGE = 0.1


@dataclass(frozen=True, eq=False)
class CollectedViews:
    """Kept detections, and how many frames were looked at."""

    detections: tuple[BoardDetection, ...]
    frames_seen: int
    stopped_by: str  # "views", "frames", "time" or "end"


def view_signature(detection: BoardDetection) -> NDArray[np.float64]:
    """Where and how the board sits in the image, as numbers of similar scale (about 0..1).

    Hull centre and size over the image diagonal; in-plane rotation (cos, sin of the board's
    x axis in the image, halved); tilt (the homography's perspective terms times the board's
    extent: about 0.2 at 30 degrees).
    """
    points = detection.image_points.astype(np.float64)
    board = detection.object_points[:, :2].astype(np.float64)
    diagonal = float(np.hypot(*detection.image_size))
    hull = cv2.convexHull(points.astype(np.float32))
    size = np.sqrt(max(cv2.contourArea(hull), 0.0)) / diagonal
    homography, _ = cv2.findHomography(board, points)
    if homography is None:
        rotation = np.zeros(2)
        tilt = np.zeros(2)
    else:
        homography = homography / homography[2, 2]
        axis = homography[:2, 0] / max(float(np.linalg.norm(homography[:2, 0])), 1e-12)
        rotation = 0.5 * axis
        tilt = homography[2, :2] * float(np.ptp(board, axis=0).max())
    return np.concatenate([points.mean(axis=0) / diagonal, [size], rotation, tilt])


def collect_board_views(
    frames: Iterable[NDArray[np.uint8]],
    spec: BoardSpec,
    *,
    max_views: int,
    max_frames: int,
    max_seconds: float,
    clock: Callable[[], float] = time.monotonic,
) -> CollectedViews:
    """Board detections from a stream of frames, one per distinct board position.

    Stops at `max_views` views, `max_frames` frames, `max_seconds` or the end of the stream,
    whichever comes first, so a live loop always ends.
    """
    start = clock()
    kept: list[BoardDetection] = []
    signatures: list[NDArray[np.float64]] = []
    seen = 0
    stopped_by = "end"
    for frame in frames:
        seen += 1
        detection = detect_board(spec, frame)
        if detection is not None:
            signature = view_signature(detection)
            if all(np.max(np.abs(signature - other)) >= MIN_VIEW_CHANGE for other in signatures):
                kept.append(detection)
                signatures.append(signature)
                logger.info("kept view %d (frame %d)", len(kept), seen)
        if len(kept) >= max_views:
            stopped_by = "views"
            break
        if seen >= max_frames:
            stopped_by = "frames"
            break
        if clock() - start >= max_seconds:
            stopped_by = "time"
            break
    return CollectedViews(tuple(kept), seen, stopped_by)
