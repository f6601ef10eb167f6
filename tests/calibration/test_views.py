"""Live view collection keeps distinct board positions and always stops."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from judgecam.calibration.views import collect_board_views


def test_repeated_frames_give_one_view_each(chessboard_photos: Any) -> None:
    frames = [image for image in chessboard_photos.images[:4] for _ in range(3)]
    frames.insert(2, np.full((480, 640), 128, dtype=np.uint8))  # no board in this one
    collected = collect_board_views(
        frames, chessboard_photos.spec, max_views=10, max_frames=100, max_seconds=60.0
    )
    assert len(collected.detections) == 4
    assert (collected.frames_seen, collected.stopped_by) == (13, "end")


def test_the_loop_stops_at_views_frames_or_time(chessboard_photos: Any) -> None:
    spec = chessboard_photos.spec
    images = chessboard_photos.images
    by_views = collect_board_views(images, spec, max_views=3, max_frames=100, max_seconds=60.0)
    assert (len(by_views.detections), by_views.stopped_by) == (3, "views")
    blank = np.zeros((480, 640), dtype=np.uint8)
    endless = itertools.repeat(blank)
    by_frames = collect_board_views(endless, spec, max_views=3, max_frames=5, max_seconds=60.0)
    assert (by_frames.frames_seen, by_frames.stopped_by) == (5, "frames")
    ticks = itertools.count(0.0, 10.0)
    by_time = collect_board_views(
        endless, spec, max_views=3, max_frames=1000, max_seconds=25.0, clock=lambda: next(ticks)
    )
    assert (by_time.frames_seen, by_time.stopped_by) == (3, "time")
