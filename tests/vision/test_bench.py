"""Speed of stages 1-3 on one 1280x720 view (pytest-benchmark; no timed assertions).

Run `pytest tests/vision/test_bench.py --benchmark-only` to see ms per view; the full corpus
timing per stage is in `python -m judgecam.vision.evaluate tests/images`.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.vision.camera import Intrinsics
from judgecam.vision.edge_snap import snap_to_edges
from judgecam.vision.evaluate import intrinsics_from_truth
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import analyse_view
from judgecam.vision.synthetic import Turn, default_camera, render_view, solved_colors


def _view_1280x720(corpus: Path, puzzle: str = "333") -> tuple[np.ndarray, Intrinsics]:
    manifest = corpus / "manifest.json"
    if manifest.is_file():
        for entry in json.loads(manifest.read_text(encoding="utf-8"))["captures"]:
            truth = json.loads((corpus / entry["truth"]).read_text(encoding="utf-8"))
            if truth["puzzle"] != puzzle:
                continue
            for view in truth["views"]:
                if list(view["image_size"]) == [1280, 720]:
                    image = cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR)
                    return image, intrinsics_from_truth(view)
    model = puzzle_model(puzzle)
    rendered = render_view(
        model, solved_colors(model), (210.0, 190.0, 230.0), turn=Turn(1, (0, 0, 20))
    )
    return rendered.image, Intrinsics(default_camera(1280, 720), np.zeros(5))


def _on_one_core(benchmark, function, *args):
    """`benchmark(function, *args)` with OpenCV on one thread: the target is one core of the
    station computer."""
    cv2.setNumThreads(1)
    try:
        return benchmark(function, *args)
    finally:
        cv2.setNumThreads(-1)


@pytest.mark.slow
def test_stages_1_to_3_per_view(benchmark, corpus_dir: Path) -> None:
    image, camera = _view_1280x720(corpus_dir)
    view = _on_one_core(benchmark, analyse_view, image, puzzle_model("333"), camera, "bench")
    assert view.fit is not None and view.fit.found


@pytest.mark.slow
def test_stages_1_to_3_per_pyraminx_view(benchmark, corpus_dir: Path) -> None:
    """A Pyraminx view: its triangles' outlines are also moved onto the edges (`edge_snap`)."""
    image, camera = _view_1280x720(corpus_dir, "pyram")
    view = _on_one_core(benchmark, analyse_view, image, puzzle_model("pyram"), camera, "bench")
    assert view.fit is not None and view.fit.found


@pytest.mark.slow
def test_edge_snap_of_one_views_triangles(benchmark, corpus_dir: Path) -> None:
    """`snap_to_edges` alone on the triangles stage 2 outlined in a Pyraminx view."""
    image, camera = _view_1280x720(corpus_dir, "pyram")
    view = analyse_view(image, puzzle_model("pyram"), camera, "bench")
    assert view.segmentation is not None
    outlines = [facelet.corners_px for facelet in view.segmentation.facelets]
    snapped = _on_one_core(benchmark, snap_to_edges, image, outlines)
    assert len(snapped) == len(outlines)
