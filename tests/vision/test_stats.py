"""`stats.median` gives np.median's value exactly."""

from __future__ import annotations

import numpy as np

from judgecam.vision.stats import median


def test_median_equals_numpy_median() -> None:
    rng = np.random.default_rng(0)
    for count in range(1, 40):
        for _ in range(50):
            values = rng.normal(size=count) * rng.uniform(1e-3, 1e3)
            if count > 2:
                values[: count // 3] = np.round(values[: count // 3])  # ties
            assert median(values) == np.median(values)
            assert median(list(values)) == np.median(values)
    assert median(np.array([[1.0, 4.0], [2.0, 3.0]])) == 2.5  # flattened, as np.median does
    assert np.isnan(median([1.0, np.nan, 2.0]))
