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
from judgecam.vision.evaluate import intrinsics_from_truth
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import analyse_view
from judgecam.vision.synthetic import Turn, default_camera, render_view, solved_colors


def _view_1280x720(corpus: Path) -> tuple[np.ndarray, Intrinsics]:
    manifest = corpus / "manifest.json"
    if manifest.is_file():
        for entry in json.loads(manifest.read_text(encoding="utf-8"))["captures"]:
            truth = json.loads((corpus / entry["truth"]).read_text(encoding="utf-8"))
            if truth["puzzle"] != "333":
                continue
            for view in truth["views"]:
                if list(view["image_size"]) == [1280, 720]:
                    image = cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR)
                    return image, intrinsics_from_truth(view)
    model = puzzle_model("333")
    rendered = render_view(
        model, solved_colors(model), (210.0, 190.0, 230.0), turn=Turn(1, (0, 0, 20))
    )
    return rendered.image, Intrinsics(default_camera(1280, 720), np.zeros(5))


@pytest.mark.slow
def test_stages_1_to_3_per_view(benchmark, corpus_dir: Path) -> None:
    image, camera = _view_1280x720(corpus_dir)
    model = puzzle_model("333")
    cv2.setNumThreads(1)  # the target is one core of the station computer
    try:
        view = benchmark(analyse_view, image, model, camera, "bench")
    finally:
        cv2.setNumThreads(-1)
    assert view.fit is not None and view.fit.found
