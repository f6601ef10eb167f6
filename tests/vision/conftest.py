"""Shared helpers of the vision tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from judgecam.vision.geometry import GeometryFit, PartAngle
from judgecam.vision.model import puzzle_model
from judgecam.vision.pipeline import CheckResult, check

#: (puzzle, active axis, {(axis, part): degrees, or None for an unmeasured part}) -> a fit.
FitWith = Callable[[str, int, dict[tuple[int, int], float | None]], GeometryFit]


def _fit_with(puzzle: str, active: int, angles: dict[tuple[int, int], float | None]) -> GeometryFit:
    """A found fit whose parts are in line except `angles` ((axis, part) -> degrees or None
    for an unmeasured part); only the part angles and the active axis are meaningful."""
    model = puzzle_model(puzzle)
    part_angles = tuple(
        tuple(
            None
            if angles.get((a, p), 0.0) is None
            else PartAngle(float(angles.get((a, p), 0.0) or 0.0), 0.3, 4)
            for p in range(len(axis.part_names))
        )
        for a, axis in enumerate(model.axes)
    )
    return GeometryFit(
        True,
        np.zeros(3),
        np.array([0.0, 0.0, 300.0]),
        np.zeros(0, np.int64),
        part_angles,
        (),
        active,
        0.5,
        1.0,
        1.0,
        (),
    )


@pytest.fixture
def fit_with() -> FitWith:
    """`_fit_with`: a fit with chosen part angles, for tests of what reads them."""
    return _fit_with


#: (folder, capture id) -> (`check` on its views with their true intrinsics and rig poses, its
#: truth).
JudgeCapture = Callable[[Path, str], tuple[CheckResult, dict[str, Any]]]


def _judge_capture(folder: Path, capture: str) -> tuple[CheckResult, dict[str, Any]]:
    """`check` on one rendered capture in `folder`, as a calibrated station judges it."""
    from judgecam.vision.evaluate import intrinsics_from_truth

    truth = json.loads((folder / f"{capture}.json").read_text(encoding="utf-8"))
    result = check(
        [(view["image"], cv2.imread(str(folder / view["image"]))) for view in truth["views"]],
        truth["puzzle"],
        [intrinsics_from_truth(view) for view in truth["views"]],
        world_from_camera=[np.asarray(view["world_from_camera"]) for view in truth["views"]],
    )
    return result, truth


@pytest.fixture
def judge_capture() -> JudgeCapture:
    """`_judge_capture`: a rendered capture judged with its rig poses."""
    return _judge_capture


@pytest.fixture
def loose_fits_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage 1 looks again only where nothing fits, as before session 38: a fit too loose to
    use is kept, not looked for again at larger widths (`pipeline._worth_another_search`). For
    the tests of what becomes of such a view (left out, vouched for by the rig, outvoted)."""
    from judgecam.vision import pipeline

    monkeypatch.setattr(pipeline, "_worth_another_search", lambda found: found is None)
