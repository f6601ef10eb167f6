"""CIEDE2000 against Sharma et al.'s published test data; Lab conversion round trips."""

from __future__ import annotations

import numpy as np
import pytest

from judgecam.vision.colorspace import bgr_to_lab, ciede2000, lab_to_bgr

# (L1, a1, b1, L2, a2, b2, dE00) — pairs from Sharma, Wu & Dalal (2005), Table 1.
SHARMA = [
    (50.0000, 2.6772, -79.7751, 50.0000, 0.0000, -82.7485, 2.0425),
    (50.0000, 3.1571, -77.2803, 50.0000, 0.0000, -82.7485, 2.8615),
    (50.0000, 2.8361, -74.0200, 50.0000, 0.0000, -82.7485, 3.4412),
    (50.0000, -1.3802, -84.2814, 50.0000, 0.0000, -82.7485, 1.0000),
    (50.0000, 0.0000, 0.0000, 50.0000, -1.0000, 2.0000, 2.3669),
    (50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0009, 7.1792),
    (50.0000, 2.5000, 0.0000, 50.0000, 0.0000, -2.5000, 4.3065),
    (50.0000, 2.5000, 0.0000, 73.0000, 25.0000, -18.0000, 27.1492),
    (50.0000, 2.5000, 0.0000, 56.0000, -27.0000, -3.0000, 31.9030),
    (60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644),
    (22.7233, 20.0904, -46.6940, 23.0331, 14.9730, -42.5619, 2.0373),
    (90.8027, -2.0831, 1.4410, 91.1528, -1.6435, 0.0447, 1.4441),
    (2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082),
]


@pytest.mark.parametrize("row", SHARMA)
def test_ciede2000_matches_published_values(row: tuple[float, ...]) -> None:
    lab1, lab2, expected = np.array(row[:3]), np.array(row[3:6]), row[6]
    np.testing.assert_allclose(ciede2000(lab1, lab2), expected, atol=1e-4)
    np.testing.assert_allclose(ciede2000(lab2, lab1), expected, atol=1e-4)


def test_ciede2000_broadcasts_and_is_zero_on_identity() -> None:
    labs = np.array([row[:3] for row in SHARMA])
    np.testing.assert_allclose(ciede2000(labs, labs), 0.0, atol=1e-9)
    assert ciede2000(labs[:, None, :], labs[None, :, :]).shape == (len(SHARMA), len(SHARMA))


def test_bgr_to_lab_known_colours() -> None:
    lab = bgr_to_lab(np.array([[255, 255, 255], [0, 0, 0], [0, 0, 255]], dtype=np.uint8))
    np.testing.assert_allclose(lab[0], [100.0, 0.0, 0.0], atol=0.5)
    np.testing.assert_allclose(lab[1], [0.0, 0.0, 0.0], atol=0.5)
    # sRGB red is L 53.2, a 80.1, b 67.2 (BGR order in: blue, green, red).
    np.testing.assert_allclose(lab[2], [53.2, 80.1, 67.2], atol=1.0)


def test_lab_round_trip() -> None:
    rng = np.random.default_rng(0)
    bgr = rng.integers(0, 256, size=(50, 3), dtype=np.uint8)
    back = lab_to_bgr(bgr_to_lab(bgr))
    assert np.abs(back.astype(int) - bgr.astype(int)).max() <= 1
