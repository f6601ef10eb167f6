"""The learned detector with its committed ONNX model: hash and shape checks, a known answer
on a corpus image, and its speed on one core."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision.detector_onnx import (
    DEFAULT_MODEL,
    FaceletDetector,
    ModelError,
    to_facelets,
    verify_model,
)

pytest.importorskip("onnxruntime")

#: A stickered 3x3x3 seen by a station camera, with clutter: c0000_cam0 of the corpus.
KNOWN_CAPTURE = "c0000"
KNOWN_VIEW = 0


@pytest.fixture(scope="module")
def detector() -> FaceletDetector:
    return FaceletDetector(DEFAULT_MODEL, threads=1)


@pytest.fixture(scope="module")
def known_view(corpus_dir: Path) -> tuple[np.ndarray, dict]:
    truth = json.loads((corpus_dir / f"{KNOWN_CAPTURE}.json").read_text())
    view = truth["views"][KNOWN_VIEW]
    image = cv2.imread(str(corpus_dir / view["image"]), cv2.IMREAD_COLOR)
    assert image is not None
    return np.asarray(image, np.uint8), view


def test_hash_mismatch_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / DEFAULT_MODEL.name
    shutil.copyfile(DEFAULT_MODEL, copy)
    copy.with_suffix(".sha256").write_text("0" * 64 + f"  {copy.name}\n")
    with pytest.raises(ModelError, match="does not match its recorded SHA-256"):
        verify_model(copy)
    with pytest.raises(ModelError, match="does not match"):
        FaceletDetector(copy)


def test_missing_model_or_hash_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not found"):
        verify_model(tmp_path / "absent.onnx")
    copy = tmp_path / DEFAULT_MODEL.name
    shutil.copyfile(DEFAULT_MODEL, copy)
    with pytest.raises(ModelError, match="no hash file"):
        verify_model(copy)


def test_committed_model_matches_its_hash() -> None:
    assert len(verify_model(DEFAULT_MODEL)) == DEFAULT_MODEL.stat().st_size


def test_wrong_input_shape_is_refused(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["image"], ["maps"])],
        "wrong",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 128, 128])],
        [helper.make_tensor_value_info("maps", TensorProto.FLOAT, [1, 3, 128, 128])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "wrong.onnx"
    onnx.save(model, str(path))
    import hashlib

    path.with_suffix(".sha256").write_text(hashlib.sha256(path.read_bytes()).hexdigest() + "\n")
    with pytest.raises(ModelError, match="expected one input 1x3x256x256"):
        FaceletDetector(path)


def test_finds_the_known_facelets(
    detector: FaceletDetector, known_view: tuple[np.ndarray, dict]
) -> None:
    image, view = known_view
    detection = detector.detect(image, sides=4)
    assert detection.found
    clear = [f for f in view["facelets"] if f["visibility"] >= 0.9 and f["pixels"] >= 400]
    truth = np.array([f["center_px"] for f in clear])
    gaps = np.linalg.norm(truth[:, None] - detection.centers_px[None], axis=2)
    nearest = gaps.min(axis=1)
    # Nearly every clearly visible facelet found (a detection within 0.35 facelet sizes of its
    # centre, the model card's "on a true facelet"), and the centres as precise as issue 8
    # asks: median error at most 2 px in a 1280-pixel-wide frame.
    sizes = np.sqrt([f["pixels"] for f in clear])
    assert len(clear) >= 9
    assert np.mean(nearest < 0.35 * sizes) >= 0.9, nearest / sizes
    assert float(np.median(nearest)) * 1280 / image.shape[1] <= 2.0, nearest
    # and nothing found away from the puzzle
    assert detection.count <= len(view["facelets"])
    facelets = to_facelets(image, detection)
    assert len(facelets) == detection.count
    np.testing.assert_allclose(
        [f.center_px for f in facelets], detection.polygons_px.mean(axis=1), atol=1e-9
    )


def test_a_blank_frame_has_no_puzzle(detector: FaceletDetector) -> None:
    assert not detector.detect(np.full((720, 1280, 3), 90, np.uint8)).found


def test_speed_per_view_one_core(
    benchmark, detector: FaceletDetector, known_view: tuple[np.ndarray, dict]
) -> None:  # type: ignore[no-untyped-def]
    image, _ = known_view
    detection = benchmark(detector.detect, image, 4)
    assert detection.found


def test_geometry_fits_the_learned_facelets(
    detector: FaceletDetector, known_view: tuple[np.ndarray, dict]
) -> None:
    from judgecam.vision.detector_onnx import to_segmentation
    from judgecam.vision.evaluate import intrinsics_from_truth
    from judgecam.vision.geometry import fit_geometry
    from judgecam.vision.model import puzzle_model

    image, view = known_view
    segmentation = to_segmentation(image, detector.detect(image, sides=4))
    assert not segmentation.region.touches_border
    fit = fit_geometry(segmentation.facelets, puzzle_model("333"), intrinsics_from_truth(view))
    assert fit.found
    assert fit.reprojection_px < 3.0
