"""The learned detector as a cross-check of the classical stages 1-3 (issue 8).

Both paths end in a `GeometryFit` of the same puzzle model. Each fit names facelets in its own
copy of the puzzle frame (the model is symmetric), so two fits of one puzzle differ by a puzzle
symmetry: the body rotation left after the nearest symmetry, and the facelets that detections
at the same place are given after mapping one frame onto the other, say whether the two paths
see the same puzzle the same way. A disagreement is a reason for review, never a guess.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from judgecam.vision.camera import rotation_matrix
from judgecam.vision.geometry import GeometryFit
from judgecam.vision.model import PuzzleModel
from judgecam.vision.segment import FaceletSegmentation

logger = logging.getLogger(__name__)

#: Body rotations differing by more than this (degrees, after the nearest symmetry) disagree.
MAX_ROTATION_DEG = 5.0
#: Body positions differing by more than this fraction of the camera distance disagree.
MAX_SHIFT_FRACTION = 0.05
#: Two detections (one per path) are the same facelet if their centres are this close
#: (fraction of the smaller one's size).
SAME_PLACE = 0.35


@dataclass(frozen=True)
class FitComparison:
    """How two fits of one view compare."""

    rotation_deg: float  # body rotation between them, after the nearest puzzle symmetry
    shift_fraction: float  # body position difference / camera distance
    compared: int  # detections at the same place placed by both fits
    disagreeing: int  # of those, placed on different facelets

    def problem(self) -> str | None:
        """A reason for review if the fits disagree, or None."""
        if self.rotation_deg > MAX_ROTATION_DEG or self.shift_fraction > MAX_SHIFT_FRACTION:
            return (
                "cross-check: the learned and classical fits disagree on the puzzle's pose "
                f"({self.rotation_deg:.1f} degrees, {self.shift_fraction:.0%} of the distance)"
            )
        if self.disagreeing:
            return (
                "cross-check: the learned and classical fits place "
                f"{self.disagreeing} of {self.compared} facelets differently"
            )
        return None


def rotation_angle_deg(rotation: np.ndarray) -> float:
    """The angle (degrees) of a 3x3 rotation matrix."""
    cosine = (float(np.trace(rotation)) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))


def compare_fits(
    model: PuzzleModel,
    classical: tuple[FaceletSegmentation, GeometryFit],
    learned: tuple[FaceletSegmentation, GeometryFit],
) -> FitComparison:
    """Compare two found fits of one view (see the module docstring)."""
    classical_seg, classical_fit = classical
    learned_seg, learned_fit = learned
    rotation_c = rotation_matrix(classical_fit.rvec)
    rotation_l = rotation_matrix(learned_fit.rvec)
    # x_learned = S x_classical for a point of the puzzle: S is (close to) a symmetry.
    frame_change = rotation_l.T @ rotation_c
    symmetry = min(model.symmetries, key=lambda s: rotation_angle_deg(s.T @ frame_change))
    rotation_deg = rotation_angle_deg(symmetry.T @ frame_change)
    distance = max(float(np.linalg.norm(classical_fit.tvec)), 1e-9)
    shift = float(np.linalg.norm(classical_fit.tvec - learned_fit.tvec)) / distance
    to_learned = model.facelet_permutation(symmetry)
    compared = disagreeing = 0
    for index, facelet in enumerate(classical_seg.facelets):
        placed = int(classical_fit.assignment[index])
        if placed < 0:
            continue
        for other_index, other in enumerate(learned_seg.facelets):
            other_placed = int(learned_fit.assignment[other_index])
            if other_placed < 0:
                continue
            gap = float(np.linalg.norm(facelet.center_px - other.center_px))
            if gap < SAME_PLACE * min(facelet.size_px, other.size_px):
                compared += 1
                disagreeing += int(to_learned[placed] != other_placed)
                break
    return FitComparison(rotation_deg, shift, compared, disagreeing)
