"""Rival labellings that make a reading doubtful (`colors._rival_margins`): only those a judge
could be given count for the confidences reported."""

from __future__ import annotations

import numpy as np

from judgecam.vision.color_model import FaceletSample
from judgecam.vision.colors import _merged_rows, _Resolved, classify_colors

#: Stage 4's input on corpus capture c0124 (a 2x2x2 one turn from solved, glare, two cameras):
#: fused CIELAB, spread and pixel count per facelet, None where no camera saw it.
C0124 = [
    [23.92, -27.38, 18.83, 0.38, 1062],
    [38.02, -3.52, 40.19, 0.67, 515],
    [23.92, -27.38, 18.83, 0.26, 819],
    [37.74, -2.86, 39.34, 1.32, 174],
    *[None] * 5,
    [38.23, -35.31, 24.69, 0.84, 478],
    None,
    [38.17, -35.83, 25.41, 0.41, 1201],
    [24.39, 18.75, -44.55, 0.32, 1796],
    [59.69, -0.56, 1.59, 0.47, 1181],
    [24.57, 18.61, -44.56, 0.37, 2194],
    [59.93, -0.28, 1.39, 0.52, 437],
    [48.07, 60.42, 36.22, 0.64, 804],
    [48.11, 60.77, 35.72, 0.74, 659],
    [47.65, 61.47, 36.61, 0.54, 1083],
    [47.65, 61.47, 36.61, 0.63, 827],
    [10.66, 12.09, -28.31, 0.58, 722],
    None,
    [10.85, 11.78, -28.0, 0.89, 407],
    None,
]
#: Its true colours (the corpus's ground truth), None where unseen.
C0124_TRUTH = (
    *("green", "yellow", "green", "yellow"),
    *[None] * 5,
    *("green", None, "green", "blue", "white", "blue", "white", "red", "red", "red", "red"),
    *("blue", None, "blue", None),
)


def test_a_rival_that_merges_grey_and_colour_leaves_the_reading_sure() -> None:
    """The two yellows were doubted (confidence 0.65) only by a labelling that put them in one
    colour with the two whites, which `glare.merged_colors` would send to a judge itself."""
    samples = [
        None if row is None else FaceletSample((row[0], row[1], row[2]), row[3], int(row[4]))
        for row in C0124
    ]
    result = classify_colors(samples, "222")
    assert result.labels == C0124_TRUTH
    seen = [c for c, label in zip(result.confidences, result.labels, strict=True) if label]
    assert min(seen) >= 0.9
    assert not any("confidence" in reason for reason in result.reasons)


def _candidate(members: list[int]) -> _Resolved:
    count = len(members)
    return _Resolved(
        np.array(members), np.zeros((3, 3)), np.zeros((count, 3)), None, np.zeros(count), 1.0
    )


def test_a_cluster_of_a_grey_and_a_coloured_facelet_is_two_colours_merged() -> None:
    labs = np.array([[60.0, 0.5, 1.5], [38.0, -3.5, 40.0], [48.0, 60.0, 36.0], [62.0, 3.0, 4.0]])
    # White with yellow: those two rows; red alone and the other white are fine.
    assert _merged_rows(_candidate([0, 0, 1, 2]), labs).tolist() == [True, True, False, False]
    assert not np.any(_merged_rows(_candidate([0, 1, 2, 0]), labs))  # two whites together
