"""Stage 1: the sticker scale when clutter of another size is linked to the puzzle, and
frames refused before any search (grey-scale)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision.locate import (
    MIN_COLOUR_FRACTION,
    _region,
    close_up_region,
    colour_fraction,
    find_puzzles,
)
from judgecam.vision.perturb import perturbed
from judgecam.vision.quads import Patch


def _patch(x: float, y: float, size: float) -> Patch:
    corners = np.array([[x, y], [x + size, y], [x + size, y + size], [x, y + size]], np.float64)
    return Patch(corners=corners, area=size * size, fill=1.0)


def test_close_up_puzzle_among_small_clutter_gets_its_own_sticker_size() -> None:
    # A 2x2x2 face seen close up (four 200 px stickers) linked to seven smaller robot parts.
    stickers = [_patch(600 + 220 * i, 300 + 220 * j, 200) for i in range(2) for j in range(2)]
    clutter = [_patch(300 + 60 * k, 200, 40 + 10 * k) for k in range(7)]
    region = _region(tuple(stickers + clutter), (1080, 1920))
    assert region.sticker_px < 100  # the median is a clutter size
    close_up = close_up_region(region)
    assert close_up is not None
    assert close_up.sticker_px == 200
    assert close_up.patches == region.patches


def test_puzzle_of_one_sticker_size_has_no_close_up_alternative() -> None:
    stickers = [_patch(100 + 60 * i, 100 + 60 * j, 50 + i) for i in range(3) for j in range(3)]
    assert close_up_region(_region(tuple(stickers), (720, 1280))) is None


def _grey(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


@pytest.mark.parametrize("view", ["c0074_cam0.jpg", "c0180_cam1.jpg", "c0097_cam0.jpg"])
def test_colour_is_told_from_grey_with_a_wide_margin(corpus_dir: Path, view: str) -> None:
    """The corpus views with the least colour keep 3 % or more of their pixels coloured, also
    darkened and flattened (the perturbations that take most colour away); the same views in
    grey-scale, as JPEG quality 30 too, have none."""
    image = cv2.imread(str(corpus_dir / view), cv2.IMREAD_COLOR)
    for coloured in (image, perturbed(image, "dark", view), perturbed(image, "flat", view)):
        assert colour_fraction(coloured) > 0.03 > 10 * MIN_COLOUR_FRACTION
    ok, encoded = cv2.imencode(".jpg", _grey(image), [cv2.IMWRITE_JPEG_QUALITY, 30])
    assert ok
    assert colour_fraction(_grey(image)) == 0.0
    assert colour_fraction(cv2.imdecode(encoded, cv2.IMREAD_COLOR)) == 0.0


def test_a_grey_scale_frame_of_a_puzzle_is_refused_for_its_colour(corpus_dir: Path) -> None:
    image = cv2.imread(str(corpus_dir / "c0163_cam0.jpg"), cv2.IMREAD_COLOR)
    assert find_puzzles(image).candidates  # found in colour
    search = find_puzzles(_grey(image))
    assert search.candidates == ()
    assert search.problems == (
        "image has no colour (a grey-scale frame: is the camera in mono mode?)",
    )
    # An empty grey frame is no puzzle found, as before: nothing there to read colours on.
    empty = find_puzzles(np.full_like(image, 128))
    assert empty.problems == ("no puzzle found (no group of sticker-like patches)",)
