"""`check` on real photographs (one face per photo, a robot's clutter around, assumed intrinsics).

`../shared/data/face-photos`: 2x2x2 and 3x3x3 cubes held in a LEGO robot, with the mean RGB per
square that the tracker's authors expect. Every photo must give a view the judge uses (not left
out as a loose fit), whose facelets are the face's own and whose colour samples match the
expected colours.
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
from judgecam.vision.pipeline import check

#: Faces in the order the squares are numbered (U, L, F, R, B, D).
FACE_ORDER = "ULFRBD"
CASES = (
    "2x2x2-random-01",
    "2x2x2-random-02",
    "2x2x2-random-03",
    "2x2x2-random-04",
    "3x3x3-random-01",
)
#: Photos whose view is still not read as the one face it shows, and why. (3x3x3-random-01 L,
#: a LEGO part of a sticker's size placed on the face beneath, is read right since session 13:
#: its loose fit makes stage 2 look again over the puzzle's whole silhouette.)
KNOWN_MISREAD: dict[tuple[str, str], str] = {}


def _params() -> list[object]:
    params: list[object] = []
    for case in CASES:
        for face in FACE_ORDER:
            reason = KNOWN_MISREAD.get((case, face))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(case, face, marks=marks, id=f"{case}-{face}"))
    return params


@pytest.mark.parametrize(("case", "face"), _params())
def test_one_face_photo(shared_data: Path, case: str, face: str) -> None:
    folder = shared_data / "face-photos" / case
    image = cv2.imread(str(folder / f"rubiks-side-{face}.jpg"), cv2.IMREAD_COLOR)
    assert image is not None
    puzzle = "222" if case.startswith("2x2x2") else "333"
    model = puzzle_model(puzzle)
    per_face = model.facelet_count // 6
    intrinsics = Intrinsics.assumed_for(image.shape[1], image.shape[0])
    result = check([(face, image)], puzzle, [intrinsics])
    assert not any("left out" in reason for reason in result.reasons), result.reasons
    view = result.views[0]
    assert view.found and view.fit is not None and view.segmentation is not None
    placed = np.nonzero(view.fit.assignment >= 0)[0]
    assert per_face - 1 <= len(placed) <= per_face
    faces = {int(model.facelet_face[view.fit.assignment[d]]) for d in placed}
    assert len(faces) == 1  # one face seen square on: every facelet on it
    expected_rgb = json.loads((folder / "expected-rgb.json").read_text(encoding="utf-8"))
    start = FACE_ORDER.index(face) * per_face + 1
    expected = bgr_to_lab(
        np.array([expected_rgb[str(start + k)][::-1] for k in range(per_face)], dtype=np.float64)
    )
    measured = bgr_to_lab(np.array([view.segmentation.facelets[d].mean_bgr for d in placed]))
    # Each measured facelet has an expected square of about its colour (order aside).
    nearest = ciede2000(measured[:, None, :], expected[None, :, :]).min(axis=1)
    assert float(np.median(nearest)) < 2.0
    assert float(nearest.max()) < 4.0
