"""Shared helpers of the vision tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from judgecam.vision.geometry import GeometryFit, PartAngle
from judgecam.vision.model import puzzle_model

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
