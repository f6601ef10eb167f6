"""Tight views of a rig that put the puzzle in different places (`vision/rig_agreement.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from judgecam.calibration.rig import look_at_pose
from judgecam.vision.camera import Intrinsics
from judgecam.vision.evaluate import in_larger_frame, intrinsics_from_truth
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import analyse_view, judge_views
from judgecam.vision.rig_agreement import MAX_SIGHT_OFFSET, RigView, rig_disagreement, sight_offset
from judgecam.vision.synthetic import default_camera

CENTRE = np.array([0.0, 0.0, 28.0])  # a 3x3x3 on the mat, mm
STICKER_PX = 40.0
UP = np.array([0.0, 0.0, 38.0])  # two cells up the mat's z


def _view(name: str, azimuth_deg: float, centre: np.ndarray = CENTRE) -> RigView:
    """A camera 350 mm out and 250 mm up, aimed at the puzzle, whose fit puts it at `centre`."""
    angle = np.radians(azimuth_deg)
    pose = look_at_pose([350 * np.cos(angle), 350 * np.sin(angle), 250.0], CENTRE)
    camera_from_world = np.linalg.inv(pose)
    tvec = camera_from_world[:3, :3] @ centre + camera_from_world[:3, 3]
    fit = SimpleNamespace(tvec=tvec)  # the only part of a fit the check reads
    camera = Intrinsics(default_camera(1280, 720), np.zeros(5))
    return RigView(name, fit, camera, pose, STICKER_PX)  # type: ignore[arg-type]


def _one_cell_off(azimuth_deg: float, other_deg: float) -> np.ndarray:
    """The puzzle centre moved one cell (19 mm) out of the plane of two cameras' lines of
    sight (the way the other camera sees a shift best)."""
    first, second = _view("", azimuth_deg), _view("", other_deg)
    normal = np.cross(
        first.world_from_camera[:3, 3] - CENTRE, second.world_from_camera[:3, 3] - CENTRE
    )
    return CENTRE + 19.0 * normal / np.linalg.norm(normal)


def _farther(azimuth_deg: float, fraction: float) -> np.ndarray:
    """The puzzle centre moved along this camera's line of sight (a fit's distance error)."""
    camera = _view("", azimuth_deg).world_from_camera[:3, 3]
    return CENTRE + fraction * (CENTRE - camera)


def test_fits_of_one_place_agree_and_a_cell_off_is_told() -> None:
    left, right = _view("left", 0.0), _view("right", 120.0)
    assert sight_offset(left, right) == pytest.approx(0.0, abs=1e-6)
    assert rig_disagreement([left, right]) is None
    # A fit's distance error moves the centre along its own line of sight: no disagreement.
    assert rig_disagreement([_view("left", 0.0, _farther(0.0, 0.05)), right]) is None
    shifted = _view("left", 0.0, _one_cell_off(0.0, 120.0))
    assert sight_offset(shifted, right) > 1.3 * MAX_SIGHT_OFFSET
    # Two cameras cannot say which one is off: a judge looks.
    found = rig_disagreement([shifted, None, right])
    assert found is not None
    odd, why = found
    assert odd is None
    assert why.startswith("left and right put the puzzle")


def test_with_three_cameras_the_one_apart_is_left_out() -> None:
    """(Two cells up: seen from cameras 35 degrees above the mat, one cell up is 0.7 of a
    sticker off the other's line of sight, under the bar; see the module's notes.)"""
    views = [_view("a", 0.0, CENTRE + UP), _view("b", 120.0), _view("c", 240.0)]
    found = rig_disagreement(views)
    assert found is not None and found[0] == 0
    assert "which agree with one another" in found[1]
    # Two of three apart from each other and from the third: nobody can be left out.
    views[1] = _view("b", 120.0, CENTRE - UP)
    found = rig_disagreement(views)
    assert found is not None and found[0] is None


def _judged(corpus: Path, capture: str, factor: float):
    truth = json.loads((corpus / f"{capture}.json").read_text(encoding="utf-8"))
    model = puzzle_model(truth["puzzle"])
    views, poses = [], []
    for view in truth["views"]:
        image = cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR)
        if factor > 1:
            image, view = in_larger_frame(image, view, factor)
        views.append(analyse_view(image, model, intrinsics_from_truth(view), view["image"]))
        poses.append(np.asarray(view["world_from_camera"], dtype=np.float64))
    return truth, judge_views(views, truth["puzzle"], None, None, poses)


@pytest.mark.slow
def test_a_view_fitted_a_column_off_goes_to_a_judge_not_dnf(corpus_dir: Path) -> None:
    """Corpus c0085 (a +2) in frames twice as large: camera 0 outlines two columns of its face
    and fits them a column off, eight stickers on their neighbours' cells, which read DNF. The
    rig says its puzzle is 1.4 stickers off camera 1's line of sight."""
    truth, result = _judged(corpus_dir, "c0085", 2.0)
    assert truth["verdict"] == "+2"
    assert result.verdict == "review"
    assert any("put the puzzle 1.4 stickers apart" in r for r in result.review_because)
    # At the corpus's own size both views fit right, and agree.
    truth, result = _judged(corpus_dir, "c0085", 1.0)
    assert not any("stickers apart" in r for r in result.reasons)
