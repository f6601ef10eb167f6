"""The learned detector as a cross-check of the classical stages 1-3 (issue 8).

Both paths end in a `GeometryFit` of the same puzzle model, and the fit's body pose is that of
a reference part (the best-seen part on the active axis; the other parts' angles are measured
against it). Two fits of one puzzle therefore differ by a puzzle symmetry (each names facelets
in its own copy of the symmetric model) and, when a layer is turned, by a twist about that
layer's axis: one path may take the turned layer as its reference, the other the rest of the
puzzle. Neither difference changes the verdict, so the comparison looks at what does:

- the facelets: detections at the same image place must be placed on the same facelet once
  one frame is mapped onto the other;
- the adjacent pairs' angles that both fits measured: if both fits are within their stated
  uncertainty of the truth (`fuse.stated_uncertainty`), they are within the sum of the two of
  each other; a larger gap means at least one of them is wrong.

The body pose is only a gross check: after the symmetry and a twist about a turned layer's
axis, the two bodies may still tilt apart (the swing) by no more than the fusion accepts between
calibrated views, and their centres must be close. The twist itself is not checked: a twist
that no turned layer explains moves every facelet away from where the other fit puts it, which
the placements see. A disagreement is a reason for review, never a guess.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import rotation_angle_deg, rotation_matrix
from judgecam.vision.fuse import KNOWN_ALIGNMENT_TOLERANCE_DEG, _map_pair, stated_uncertainty
from judgecam.vision.geometry import GeometryFit, PairAngle
from judgecam.vision.model import PuzzleModel
from judgecam.vision.segment import FaceletSegmentation

logger = logging.getLogger(__name__)

#: Gross check: bodies tilted apart by more than this (degrees, after the nearest symmetry and a
#: twist about a turned layer's axis) are different poses. The same tolerance as the fusion's
#: for calibrated view alignments: within it, a pose still names the same puzzle frame.
MAX_SWING_DEG = KNOWN_ALIGNMENT_TOLERANCE_DEG
#: Gross check: body centres further apart across the line of sight than this fraction of the
#: camera distance are different poses (at a typical 5 puzzle widths away this is a quarter of
#: the puzzle, more than fits of the same stickers move its centre in the image). The distance
#: along the line of sight is left out: it is the least determined part of a fit to a few
#: stickers (it trades off against the tilt), and the verdict reads nothing from it.
MAX_SHIFT_FRACTION = 0.05
#: Added to the two stated uncertainties before a pair's angles disagree. Each stated
#: uncertainty is a ~95 % bound, so one fit in twenty is a little outside it; a gap of a degree
#: beyond both cannot move a verdict (the limits are 45 degrees and more, and the verdict stage
#: already treats angles near a limit with their uncertainty), so it alone is no reason to call
#: a judge.
PAIR_MARGIN_DEG = 1.0
#: Two frame mappings that the placements cannot tell apart are ambiguous if the body rotations
#: they leave differ by less than this (degrees): well under the few degrees two fits of one
#: view scatter by, so only a twist half-way between two symmetries is ambiguous.
AMBIGUOUS_DEG = 1.0
#: Two detections (one per path) are the same facelet if their centres are this close
#: (fraction of the smaller one's size).
SAME_PLACE = 0.35


@dataclass(frozen=True)
class PairGap:
    """One pair both fits measured, in the classical fit's frame, and their difference."""

    axis: str
    parts: tuple[str, str]
    classical_deg: float
    learned_deg: float
    gap_deg: float  # |classical - learned|, wrapped at the axis step
    tolerance_deg: float  # stated uncertainties of both, plus PAIR_MARGIN_DEG

    @property
    def disagrees(self) -> bool:
        return self.gap_deg > self.tolerance_deg


@dataclass(frozen=True)
class FitComparison:
    """How two fits of one view compare (see the module docstring)."""

    swing_deg: float  # body tilt between the fits after the symmetry and the twist
    twist_deg: float  # body rotation about a turned layer's axis (free: a different reference)
    shift_fraction: float  # body centre offset across the line of sight / camera distance
    ambiguous: bool  # two frame mappings fit equally well and map the facelets differently
    compared: int  # detections at the same place placed by both fits
    disagreeing: int  # of those, placed on different facelets
    pairs: tuple[PairGap, ...]  # pairs both fits measured
    #: The classical fit's facelets (its frame) the learned fit places elsewhere; meaningful
    #: only when the poses agree (`only_placements`).
    disputed: tuple[int, ...] = ()

    @property
    def only_placements(self) -> bool:
        """The fits agree on the pose and every pair; they differ on some facelets only."""
        return (
            self.swing_deg <= MAX_SWING_DEG
            and self.shift_fraction <= MAX_SHIFT_FRACTION
            and not self.ambiguous
            and not any(pair.disagrees for pair in self.pairs)
        )

    def problems(self) -> tuple[str, ...]:
        """Reasons for review if the fits disagree (empty if they agree)."""
        prefix = "cross-check: the learned and classical fits"
        if self.swing_deg > MAX_SWING_DEG or self.shift_fraction > MAX_SHIFT_FRACTION:
            return (
                f"{prefix} disagree on the puzzle's pose (tilted {self.swing_deg:.1f} degrees "
                f"apart, centres {self.shift_fraction:.0%} of the distance apart)",
            )
        if self.ambiguous:
            return (f"{prefix} cannot be put in one frame unambiguously",)
        found = []
        if self.disagreeing:
            found.append(
                f"{prefix} place {self.disagreeing} of {self.compared} facelets differently"
            )
        for pair in self.pairs:
            if pair.disagrees:
                found.append(
                    f"{prefix} disagree on pair {pair.axis}:{pair.parts[0]}|{pair.parts[1]} "
                    f"({pair.classical_deg:.1f} vs {pair.learned_deg:.1f} degrees, "
                    f"beyond {pair.tolerance_deg:.1f})"
                )
        return tuple(found)


class _Mapping(NamedTuple):
    """One way to map the learned fit's frame onto the classical one: a puzzle symmetry."""

    swing_deg: float
    disagreeing: int  # same-place detections it maps onto different facelets
    angle_deg: float  # body rotation left after the symmetry
    twist_deg: float
    mapped: NDArray[np.int64]  # the classical placements, renamed into the learned frame
    symmetry: int  # index into model.symmetries


def swing_twist_deg(
    rotation: NDArray[np.float64], direction: NDArray[np.float64]
) -> tuple[float, float]:
    """(swing, twist) of a rotation about a unit `direction`, in degrees.

    Every rotation is a twist about `direction` followed by a swing about an axis
    perpendicular to it; the swing is the angle the rotation tilts `direction` by.
    """
    cosine = float(direction @ rotation @ direction)
    swing = math.degrees(math.acos(min(1.0, max(-1.0, cosine))))
    # Quaternion of the rotation: w = cos(t/2), v = sin(t/2) k; the twist is 2 atan2(v.d, w).
    w = math.sqrt(max(0.0, 1.0 + float(np.trace(rotation)))) / 2.0
    v = np.array(
        [
            rotation[2, 1] - rotation[1, 2],
            rotation[0, 2] - rotation[2, 0],
            rotation[1, 0] - rotation[0, 1],
        ]
    )
    if w > 1e-6:
        along = float(v @ direction) / (4.0 * w)
    else:  # a half turn: v = k with |k| = 1, up to sign, from the symmetric part
        k = np.sqrt(np.clip((np.diag(rotation) + 1.0) / 2.0, 0.0, 1.0))
        along = abs(float(k @ direction))
    twist = math.degrees(2.0 * math.atan2(along, w))
    return swing, (twist + 180.0) % 360.0 - 180.0


def _placements(
    classical: tuple[FaceletSegmentation, GeometryFit],
    learned: tuple[FaceletSegmentation, GeometryFit],
) -> list[tuple[int, int]]:
    """(classical facelet, learned facelet) of the detections both fits placed at one place."""
    classical_seg, classical_fit = classical
    learned_seg, learned_fit = learned
    found = []
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
                found.append((placed, other_placed))
                break
    return found


def _pair_key(model: PuzzleModel, pair: PairAngle) -> tuple[str, tuple[int, int]]:
    return pair.axis, model.axis_and_parts(pair.axis, pair.parts)[1]


def _pair_gaps(
    model: PuzzleModel,
    classical_fit: GeometryFit,
    learned_fit: GeometryFit,
    symmetry: NDArray[np.float64],
) -> tuple[PairGap, ...]:
    """The pairs both fits measured, the learned ones mapped into the classical frame."""
    classical_pairs = {_pair_key(model, pair): pair for pair in classical_fit.pairs}
    gaps = []
    for pair in learned_fit.pairs:
        # x_classical = symmetry^T x_learned: the learned pair's name in the classical frame.
        key = _map_pair(model, symmetry.T, *_pair_key(model, pair))
        match = classical_pairs.get(key)
        if match is None:
            continue
        step = next(a for a in model.axes if a.name == match.axis).step_deg
        gap = abs((pair.angle_deg - match.angle_deg + step / 2.0) % step - step / 2.0)
        tolerance = (
            stated_uncertainty(pair.sigma_deg)
            + stated_uncertainty(match.sigma_deg)
            + PAIR_MARGIN_DEG
        )
        gaps.append(
            PairGap(match.axis, match.parts, match.angle_deg, pair.angle_deg, gap, tolerance)
        )
    return tuple(gaps)


def compare_fits(
    model: PuzzleModel,
    classical: tuple[FaceletSegmentation, GeometryFit],
    learned: tuple[FaceletSegmentation, GeometryFit],
) -> FitComparison:
    """Compare two found fits of one view (see the module docstring).

    Of the symmetries that map the learned frame onto the classical one within the gross
    check (a twist about either fit's active axis allowed), the one under which the most
    same-place detections agree is taken; ties are broken by the smaller body rotation, and a
    tie on both that would map the detections differently is ambiguous.
    """
    _, classical_fit = classical
    _, learned_fit = learned
    rotation_c = rotation_matrix(classical_fit.rvec)
    rotation_l = rotation_matrix(learned_fit.rvec)
    # x_learned = F x_classical for a point of the puzzle: F is a symmetry, up to a twist.
    frame_change = rotation_l.T @ rotation_c
    placements = _placements(classical, learned)
    classical_facelets = np.array([p[0] for p in placements], dtype=np.int64)
    learned_facelets = np.array([p[1] for p in placements], dtype=np.int64)
    candidates = []
    for index, symmetry in enumerate(model.symmetries):
        residual = symmetry.T @ frame_change  # classical frame -> classical frame
        directions = [
            model.axes[classical_fit.active_axis].direction
            if classical_fit.active_axis >= 0
            else None,
            symmetry.T @ model.axes[learned_fit.active_axis].direction
            if learned_fit.active_axis >= 0
            else None,
        ]
        options = [swing_twist_deg(residual, d) for d in directions if d is not None]
        swing, twist = min(options) if options else (rotation_angle_deg(residual), 0.0)
        mapped = model.facelet_permutation(symmetry)[classical_facelets]
        disagreeing = int(np.sum(mapped != learned_facelets))
        candidates.append(
            _Mapping(swing, disagreeing, rotation_angle_deg(residual), twist, mapped, index)
        )
    distance = max(float(np.linalg.norm(classical_fit.tvec)), 1e-9)
    sight = classical_fit.tvec / distance
    offset = learned_fit.tvec - classical_fit.tvec
    shift = float(np.linalg.norm(offset - float(offset @ sight) * sight)) / distance
    within = [c for c in candidates if c.swing_deg <= MAX_SWING_DEG]
    if not within:
        nearest = min(candidates, key=lambda c: c.swing_deg)
        return FitComparison(
            nearest.swing_deg,
            nearest.twist_deg,
            shift,
            False,
            len(placements),
            nearest.disagreeing,
            (),
        )
    within.sort(key=lambda c: (c.disagreeing, c.angle_deg))
    best = within[0]
    ambiguous = any(
        c.disagreeing == best.disagreeing
        and abs(c.angle_deg - best.angle_deg) < AMBIGUOUS_DEG
        and not np.array_equal(c.mapped, best.mapped)
        for c in within[1:]
    )
    pairs = _pair_gaps(model, classical_fit, learned_fit, model.symmetries[best.symmetry])
    comparison = FitComparison(
        best.swing_deg,
        best.twist_deg,
        shift,
        ambiguous,
        len(placements),
        best.disagreeing,
        pairs,
        tuple(sorted({int(f) for f in classical_facelets[best.mapped != learned_facelets]})),
    )
    logger.debug("cross-check: %s", comparison)
    return comparison
