"""Inputs and results of facelet colour classification (stage 4 of `judgecam check`).

A `FaceletSample` is what segmentation measured on one facelet; a `ColorClassification` is
what `judgecam.vision.colors.classify_colors` concluded: a colour name and a confidence per
facelet, the colour clusters it found and why it is unsure where it is.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from judgecam.vision.colorspace import bgr_to_lab

logger = logging.getLogger(__name__)

Lab = tuple[float, float, float]


#: How stage 4's reasons listing facelets of low confidence begin (`pipeline` looks for it).
LOW_CONFIDENCE_REASON = "low colour confidence"


@dataclass(frozen=True)
class FaceletSample:
    """The colour measured on one facelet.

    `lab` is the mean CIELAB colour; `spread` the standard deviation of the facelet's pixels
    in CIEDE2000-like units (0 when unknown; large for glare or a sticker edge), and `pixels`
    how many pixels were averaged (0 when unknown).
    """

    lab: Lab
    spread: float = 0.0
    pixels: int = 0

    @classmethod
    def from_bgr(cls, bgr: ArrayLike, spread: float = 0.0, pixels: int = 0) -> FaceletSample:
        """A sample from a mean BGR colour (0..255)."""
        lab = bgr_to_lab(np.asarray(bgr, dtype=np.float64).reshape(3))
        return cls((float(lab[0]), float(lab[1]), float(lab[2])), spread, pixels)

    @classmethod
    def from_rgb(cls, rgb: ArrayLike, spread: float = 0.0, pixels: int = 0) -> FaceletSample:
        """A sample from a mean RGB colour (0..255), as cube robots and JSON files give it."""
        return cls.from_bgr(np.asarray(rgb, dtype=np.float64).reshape(3)[::-1], spread, pixels)


def samples_from_bgr(bgr: ArrayLike) -> tuple[FaceletSample | None, ...]:
    """Samples from an (N, 3) array of mean BGR colours; rows with NaN are facelets not seen."""
    values = np.asarray(bgr, dtype=np.float64).reshape(-1, 3)
    labs = bgr_to_lab(np.nan_to_num(values))
    return tuple(
        None
        if not np.all(np.isfinite(row))
        else FaceletSample((float(lab[0]), float(lab[1]), float(lab[2])))
        for row, lab in zip(values, labs, strict=True)
    )


@dataclass(frozen=True)
class ColorCluster:
    """One colour found on the puzzle.

    `name` is the scheme colour it was named after; `face` the puzzle face it belongs on in the
    puzzle's current orientation (from the centres, or inferred from the pieces; None if
    unknown); `scheme_face` the face the scheme gives that colour (its WCA face: white -> U);
    `lab` the mean CIELAB colour of its facelets, `spread` their RMS CIEDE2000 from it and
    `count` how many seen facelets it has. `delta_e_to_scheme` is CIEDE2000 between the cluster
    (after adapting to the estimated light) and the scheme colour it was named after.
    """

    name: str
    face: str | None
    scheme_face: str | None
    lab: Lab
    spread: float
    count: int
    delta_e_to_scheme: float


@dataclass(frozen=True)
class ColorClassification:
    """Stage 4 result: a colour per facelet (None = not seen), with confidences 0..1.

    Confidence is tanh(margin / 4), where margin is how much worse (in squared noise units,
    i.e. twice the log-likelihood ratio) the best labelling that gives this facelet another
    colour is: 0 for a coin toss, 0.76 for a margin of 4 (likelihood ratio e^2), 0.96 at 8.
    `gains` is the estimated illuminant correction (von Kries gains on linear R, G, B).
    """

    puzzle: str
    labels: tuple[str | None, ...]
    confidences: tuple[float, ...]
    clusters: tuple[ColorCluster, ...]
    reasons: tuple[str, ...]
    gains: tuple[float, float, float]
    #: While stage 4 works (its face lights weigh facelets by `confidences`): the confidences to
    #: report, which disregard rival labellings no judge would be given (`colors._rival_margins`).
    #: Empty once they are the confidences (`colors._as_reported`).
    reported_confidences: tuple[float, ...] = ()

    def cluster(self, name: str) -> ColorCluster:
        """The cluster named `name` (KeyError if none)."""
        for cluster in self.clusters:
            if cluster.name == name:
                return cluster
        raise KeyError(name)

    @property
    def min_confidence(self) -> float:
        """Lowest confidence over seen facelets (1.0 if nothing was seen)."""
        seen = [c for c, label in zip(self.confidences, self.labels, strict=True) if label]
        return min(seen, default=1.0)

    def face_letters(self, by: str = "auto") -> tuple[str | None, ...]:
        """Per facelet, the face its colour belongs to (Kociemba letters; None if unseen).

        `by="centre"` uses the faces the clusters sit on (a 3x3x3's centres), `by="scheme"`
        the faces the scheme gives the colours (a 2x2x2 has no centres), `"auto"` the former
        when every cluster's face is known.
        """
        if by == "auto":
            by = "centre" if all(c.face for c in self.clusters) else "scheme"
        if by not in ("centre", "scheme"):
            raise ValueError(f"by must be 'auto', 'centre' or 'scheme', got {by!r}")
        face_of = {c.name: (c.face if by == "centre" else c.scheme_face) for c in self.clusters}
        return tuple(None if label is None else face_of[label] for label in self.labels)


def as_samples(
    samples: Sequence[FaceletSample | None] | ArrayLike,
) -> tuple[FaceletSample | None, ...]:
    """Accept samples, or an (N, 3) BGR array with NaN rows for unseen facelets."""
    if isinstance(samples, Sequence) and all(
        s is None or isinstance(s, FaceletSample) for s in samples
    ):
        return tuple(s for s in samples if s is None or isinstance(s, FaceletSample))
    return samples_from_bgr(np.asarray(samples, dtype=np.float64))
