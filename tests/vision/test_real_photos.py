"""Stages 1-3 on real photographs (one face per photo, clutter around, assumed intrinsics).

`../shared/data/face-photos`: a 3x3x3 held in a LEGO robot, with the mean RGB per square that
the tracker's authors expect. The facelets found must be the face's nine, and their colour
samples must match the expected colours.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision.camera import Intrinsics
from judgecam.vision.colorspace import bgr_to_lab, ciede2000
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import analyse_view

#: Faces in the order the squares are numbered (U, L, F, R, B, D; nine squares each).
FACE_ORDER = "ULFRBD"


@pytest.mark.parametrize("face", list(FACE_ORDER))
def test_one_face_photo(shared_data: Path, face: str) -> None:
    folder = shared_data / "face-photos" / "3x3x3-random-01"
    image = cv2.imread(str(folder / f"rubiks-side-{face}.jpg"), cv2.IMREAD_COLOR)
    assert image is not None
    view = analyse_view(
        image, puzzle_model("333"), Intrinsics.assumed_for(image.shape[1], image.shape[0])
    )
    assert view.found and view.fit is not None and view.segmentation is not None
    placed = np.nonzero(view.fit.assignment >= 0)[0]
    assert 8 <= len(placed) <= 9
    faces = {int(puzzle_model("333").facelet_face[view.fit.assignment[d]]) for d in placed}
    assert len(faces) == 1  # one face seen square on: every facelet on it
    expected_rgb = json.loads((folder / "expected-rgb.json").read_text(encoding="utf-8"))
    start = FACE_ORDER.index(face) * 9 + 1
    expected = bgr_to_lab(
        np.array([expected_rgb[str(start + k)][::-1] for k in range(9)], dtype=np.float64)
    )
    measured = bgr_to_lab(np.array([view.segmentation.facelets[d].mean_bgr for d in placed]))
    # Each measured facelet has an expected square of about its colour (order aside).
    nearest = ciede2000(measured[:, None, :], expected[None, :, :]).min(axis=1)
    assert float(np.median(nearest)) < 2.0
    assert float(nearest.max()) < 4.0
