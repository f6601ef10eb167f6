"""Stage 1's sticker scale when clutter of another size is linked to the puzzle."""

from __future__ import annotations

import numpy as np

from judgecam.vision.locate import _region, close_up_region
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
