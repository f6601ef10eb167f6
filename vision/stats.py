"""Small statistics for the per-view stages, without NumPy's per-call overhead."""

from __future__ import annotations

import statistics

import numpy as np
from numpy.typing import ArrayLike


def median(values: ArrayLike) -> float:
    """The median of the values (flattened), as `np.median` gives it, in a tenth of the time.

    Stages 1-3 take about twenty medians of a few dozen values per view, where np.median's
    overhead (~10 us) is most of the cost; the standard library's on a list is ~1 us. Empty
    input and NaN are left to np.median itself.
    """
    flat = np.asarray(values, dtype=np.float64).ravel()
    if flat.size == 0 or np.isnan(flat).any():
        return float(np.median(flat))
    return float(statistics.median(flat.tolist()))
