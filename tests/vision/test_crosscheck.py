"""The learned detector as a cross-check in `analyse_view` (issue 8): disagreement between the
two paths is a review reason; where the classical path finds nothing, a tight learned fit is
used."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision.camera import Intrinsics
from judgecam.vision.detector_onnx import Detection
from judgecam.vision.evaluate import evaluate_view, intrinsics_from_truth
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import analyse_view, check
from judgecam.vision.synthetic import Turn, default_camera, render_view, solved_colors

#: A 2x2x2 view the classical stages miss and the learned detector finds (model card).
LEARNED_ONLY_VIEW = ("c0037", 1)


class FakeDetector:
    """Stands in for `FaceletDetector`: returns a fixed detection."""

    def __init__(self, detection: Detection) -> None:
        self.detection = detection

    def detect(self, image: np.ndarray, sides: int = 4) -> Detection:
        return self.detection


def _camera() -> Intrinsics:
    return Intrinsics(default_camera(1280, 720), np.zeros(5))


def _detection(polygons: np.ndarray) -> Detection:
    count = len(polygons)
    return Detection(
        count >= 3,
        polygons.mean(axis=1),
        polygons,
        np.full(count, 0.9),
        None,
        0.9 if count else 0.0,
    )


@pytest.fixture(scope="module")
def cube() -> tuple[np.ndarray, np.ndarray]:
    """A synthetic 3x3x3 view and the facelet polygons the classical path finds in it."""
    model = puzzle_model("333")
    view = render_view(
        model, solved_colors(model), (210.0, 190.0, 230.0), turn=Turn(1, (0.0, 0.0, 10.0)), seed=5
    )
    classical = analyse_view(view.image, model, _camera(), "cube")
    assert classical.found and classical.segmentation is not None
    polygons = np.array([f.corners_px for f in classical.segmentation.facelets])
    return view.image, polygons


def _rotated(polygons: np.ndarray, degrees: float) -> np.ndarray:
    """The polygons turned in the image about their common centre (a different pose)."""
    center = polygons.reshape(-1, 2).mean(axis=0)
    theta = np.radians(degrees)
    turn = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    return (polygons - center) @ turn.T + center


def test_agreeing_detector_adds_no_problem(cube) -> None:
    image, polygons = cube
    view = analyse_view(
        image, puzzle_model("333"), _camera(), "cube", FakeDetector(_detection(polygons))
    )
    assert view.found
    assert view.problems == ()
    assert {stage for stage, _ in view.timings_ms} >= {"learned_detect", "learned_geometry"}


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda polygons: polygons[:0], "the learned detector finds no puzzle"),
        (lambda polygons: _rotated(polygons, 20.0), "the learned and classical fits"),
    ],
    ids=["learned finds nothing", "learned pose turned 20 degrees"],
)
def test_disagreement_gives_review_with_a_reason(cube, make, expected) -> None:
    image, polygons = cube
    detector = FakeDetector(_detection(make(polygons)))
    model = puzzle_model("333")
    view = analyse_view(image, model, _camera(), "cube", detector)
    assert not view.found
    assert any(expected in problem for problem in view.problems), view.problems


def test_disagreement_turns_the_verdict_into_review(cube, monkeypatch) -> None:
    image, polygons = cube
    import judgecam.vision.detector_onnx as detector_onnx

    detector = FakeDetector(_detection(_rotated(polygons, 20.0)))
    monkeypatch.setattr(detector_onnx, "shared_detector", lambda: detector)
    result = check([("cube", image)], "333", [_camera()], learned=True)
    assert result.verdict == "review"
    assert any(r.startswith("cube: cross-check:") for r in result.reasons), result.reasons


@pytest.fixture(scope="module")
def learned_only(corpus_dir: Path) -> tuple[np.ndarray, dict, dict]:
    capture, index = LEARNED_ONLY_VIEW
    truth = json.loads((corpus_dir / f"{capture}.json").read_text())
    view_truth = truth["views"][index]
    image = cv2.imread(str(corpus_dir / view_truth["image"]), cv2.IMREAD_COLOR)
    assert image is not None
    return np.asarray(image, np.uint8), view_truth, truth


def test_learned_fit_is_used_where_the_classical_path_finds_nothing(learned_only) -> None:
    pytest.importorskip("onnxruntime")
    from judgecam.vision.detector_onnx import shared_detector

    image, view_truth, truth = learned_only
    model = puzzle_model(str(truth["puzzle"]))
    camera = intrinsics_from_truth(view_truth)
    classical = analyse_view(image, model, camera, "view")
    assert not classical.found
    assert any("no puzzle found" in p for p in classical.problems)
    view = analyse_view(image, model, camera, "view", shared_detector())
    assert view.found, view.problems
    assert any("learned detector only" in note for note in view.notes)
    score = evaluate_view(view, view_truth, truth, model)
    assert score.placed >= 4
    assert score.placed_right == score.placed
    errors = np.abs(score.angle_errors)
    assert errors.size > 0
    np.testing.assert_array_less(errors, 3.0)


def test_check_command_learned_flag(learned_only, tmp_path, capsys) -> None:
    pytest.importorskip("onnxruntime")
    from judgecam.cli import main

    image, view_truth, truth = learned_only
    image_path = tmp_path / "view.png"
    cv2.imwrite(str(image_path), image)
    camera_path = tmp_path / "camera.yml"
    storage = cv2.FileStorage(str(camera_path), cv2.FILE_STORAGE_WRITE)
    storage.write("camera_matrix", np.asarray(view_truth["camera_matrix"], np.float64))
    storage.write("dist_coeffs", np.asarray(view_truth["dist_coeffs"], np.float64).reshape(1, -1))
    storage.write("image_width", int(image.shape[1]))
    storage.write("image_height", int(image.shape[0]))
    storage.release()
    args = ["check", str(image_path), "--puzzle", str(truth["puzzle"]), "--json"]
    args += ["--intrinsics", str(camera_path)]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["views"][0]["puzzle_found"] is False
    assert main([*args, "--learned"]) == 0
    learned = json.loads(capsys.readouterr().out)
    assert learned["views"][0]["puzzle_found"] is True
    assert any("learned detector only" in note for note in learned["views"][0]["notes"])


def test_check_command_unusable_model_is_a_usage_error(cube, tmp_path, monkeypatch, capsys) -> None:
    import judgecam.vision.detector_onnx as detector_onnx
    from judgecam.cli import main

    def broken() -> None:
        raise detector_onnx.ModelError("model facelets.onnx does not match its recorded SHA-256")

    monkeypatch.setattr(detector_onnx, "shared_detector", broken)
    image_path = tmp_path / "cube.png"
    cv2.imwrite(str(image_path), cube[0])
    assert main(["check", str(image_path), "--puzzle", "333", "--learned"]) == 2
    assert "SHA-256" in capsys.readouterr().err
