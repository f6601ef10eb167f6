"""One light per face: each face of the puzzle is lit as a whole, so shading is a factor per face.

A face turned away from the lamp is darker as a whole: its linear R, G and B are all scaled by
about the same factor. CIEDE2000 on the raw samples then sees a white sticker on a shaded face
(L* 50, neutral) as nearer to a dark orange or blue than to the whites of the lit face (L* 90),
and the classifier merges it with that colour. The factor of each face can be read from the
puzzle itself once its facelets are labelled: a sticker's log luminance is its colour's level
plus its face's light, a two-way layout fitted by least squares over the confident facelets
of colours seen on two faces or more, then fitted again without the facelets it fits worst
(the misread ones, which are exactly the ones the correction is for).

`face_gains` estimates the factors from a first labelling; `relit` divides them out, and the
labelling is then done again on samples that look as if every face were lit alike.

The first labelling can be too wrong to read the lights from: a face under a lamp's
reflection, or one seen by the other camera at another exposure, can be three or four times
brighter than the rest, and CIEDE2000 then groups facelets by brightness, not colour.
`equal_luminance` keeps only chromaticity, which no light's strength changes, for a second
first labelling; `lit_labelling_cost` decides between the two results, each with the face
lights that suit it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.color_model import FaceletSample
from judgecam.vision.color_naming import lab_to_linear_rgb, linear_rgb_to_lab
from judgecam.vision.colorspace import ciede2000

#: A face's factor is estimated only from at least this many confidently labelled facelets
#: that share their colour with a facelet elsewhere (fewer is one facelet's word). Two, not
#: three: a 2x2x2 face has four facelets and often shows only two of a colour seen on another
#: face, so with three most 2x2x2 captures had no face light at all (c0151: 7 of 20 colours
#: wrong, the brightly lit top grouped apart).
MIN_FACE_FACELETS = 2
#: Labels at least this confident (stage 4's 0..1) take part in the estimate.
MIN_CONFIDENCE = 0.5
#: A facelet whose log-luminance misses the fit by more than this many median residuals (and
#: by more than MIN_OUTLIER_LOG, a 20 % brightness difference) is left out of the refit.
OUTLIER_SPREADS = 3.0
MIN_OUTLIER_LOG = 0.2
#: Faces whose factors all lie within this ratio of each other are left as they are: the
#: correction would only add noise.
NEGLIGIBLE_RATIO = 1.1


def luminance(labs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Relative luminance Y (0..1) of CIELAB colours (..., 3): depends on L* alone."""
    lightness = np.asarray(labs, dtype=np.float64)[..., 0]
    f = (lightness + 16.0) / 116.0
    return np.where(f > 6.0 / 29.0, f**3, 3.0 * (6.0 / 29.0) ** 2 * (f - 4.0 / 29.0))


def face_gains(
    face_of_facelet: NDArray[np.intp],
    samples: Sequence[FaceletSample | None],
    labels: Sequence[str | None],
    confidences: Sequence[float],
) -> NDArray[np.float64] | None:
    """Each face's light relative to the brightest face (1 = as bright), or None if every face
    looks lit alike or too little is labelled to tell (faces that cannot be estimated get 1)."""
    faces = int(np.max(face_of_facelet)) + 1
    usable = [
        index
        for index, (sample, label, confidence) in enumerate(
            zip(samples, labels, confidences, strict=True)
        )
        if sample is not None and label is not None and confidence >= MIN_CONFIDENCE
    ]
    if not usable:
        return None
    log_y = np.log(
        np.maximum(luminance(np.array([samples[i].lab for i in usable], dtype=np.float64)), 1e-4)  # type: ignore[union-attr]
    )
    names = sorted({str(labels[i]) for i in usable})
    color = np.array([names.index(str(labels[i])) for i in usable], dtype=np.intp)
    face = face_of_facelet[np.asarray(usable, dtype=np.intp)]
    # log Y = colour level + face light: a two-way layout, fitted by least squares, then again
    # without the facelets it fits worst (misread ones). Only colours seen on two faces or more
    # tie the faces together.
    shared = np.array(
        [len(np.unique(face[color == k])) >= 2 for k in range(len(names))], dtype=bool
    )[color]
    counts = np.bincount(face[shared], minlength=faces)
    known = counts >= MIN_FACE_FACELETS
    if known.sum() < 2:
        return None
    rows = shared & known[face]
    design = np.zeros((len(usable), len(names) + faces))
    design[np.arange(len(usable)), color] = 1.0
    design[np.arange(len(usable)), len(names) + face] = 1.0
    keep = rows.copy()
    for _ in range(2):
        solution = np.linalg.lstsq(design[keep], log_y[keep], rcond=None)[0]
        residual = np.abs(design @ solution - log_y)
        spread = float(np.median(residual[keep]))
        keep = rows & (residual <= max(OUTLIER_SPREADS * spread, MIN_OUTLIER_LOG))
        if np.bincount(face[keep], minlength=faces)[known].min() < 2:
            keep = rows
            break
    solution = np.linalg.lstsq(design[keep], log_y[keep], rcond=None)[0]
    light = np.where(known, solution[len(names) :], 0.0)
    light[known] -= light[known].max()
    gains = np.where(known, np.exp(light), 1.0)
    if float(gains[known].max() / gains[known].min()) < NEGLIGIBLE_RATIO:
        return None
    return gains


def relit(
    face_of_facelet: NDArray[np.intp],
    samples: Sequence[FaceletSample | None],
    gains: NDArray[np.float64],
) -> list[FaceletSample | None]:
    """The samples with each face's light divided out (linear RGB scaled by 1 / gain)."""
    out: list[FaceletSample | None] = []
    for index, sample in enumerate(samples):
        if sample is None:
            out.append(None)
            continue
        rgb = lab_to_linear_rgb(np.asarray(sample.lab, dtype=np.float64))
        lab = linear_rgb_to_lab(rgb / gains[int(face_of_facelet[index])])
        out.append(
            FaceletSample(
                (float(lab[0]), float(lab[1]), float(lab[2])), sample.spread, sample.pixels
            )
        )
    return out


def equal_luminance(samples: Sequence[FaceletSample | None]) -> list[FaceletSample | None]:
    """The samples with linear RGB scaled to one luminance (the median of the seen ones): only
    chromaticity is left, which no light's strength changes."""
    seen = [sample for sample in samples if sample is not None]
    if not seen:
        return list(samples)
    labs = np.array([sample.lab for sample in seen], dtype=np.float64)
    target = float(np.median(luminance(labs)))
    out: list[FaceletSample | None] = []
    for sample in samples:
        if sample is None:
            out.append(None)
            continue
        lab = np.asarray(sample.lab, dtype=np.float64)
        scale = target / max(float(luminance(lab)), 1e-4)
        flat = linear_rgb_to_lab(lab_to_linear_rgb(lab) * scale)
        out.append(
            FaceletSample(
                (float(flat[0]), float(flat[1]), float(flat[2])), sample.spread, sample.pixels
            )
        )
    return out


#: Facelets' worth of evidence the prior noise (CIEDE2000 squared) carries in
#: `lit_labelling_cost`, as in stage 4's own fit (`colors.PRIOR_FACELETS`).
PRIOR_FACELETS = 9.0


def lit_labelling_cost(
    face_of_facelet: NDArray[np.intp],
    samples: Sequence[FaceletSample | None],
    labels: Sequence[str | None],
    prior_noise: float,
) -> float:
    """How badly a labelling explains the samples once each face's light is fitted to it
    (lower is better): -2 log-likelihood over 3, up to a constant, with each colour's own noise
    (CIEDE2000 to its mean, shrunk towards `prior_noise`).

    Two labellings of the same samples are compared this way: each gets the face lights that
    suit it best, so neither pays for the light the other assumed. There is no price per colour
    used: both labellings come from stage 4's own fit, which already paid it."""
    gains = face_gains(face_of_facelet, samples, labels, [1.0] * len(labels))
    lit = list(samples) if gains is None else relit(face_of_facelet, samples, gains)
    seen = [i for i, sample in enumerate(lit) if sample is not None and labels[i] is not None]
    if not seen:
        return 0.0
    labs = np.array([lit[i].lab for i in seen], dtype=np.float64)  # type: ignore[union-attr]
    names = sorted({str(labels[i]) for i in seen})
    member = np.array([names.index(str(labels[i])) for i in seen], dtype=np.intp)
    total = 0.0
    for colour in range(len(names)):
        own = labs[member == colour]
        squared = ciede2000(own, own.mean(axis=0)[None, :]) ** 2
        variance = (float(squared.sum()) + PRIOR_FACELETS * prior_noise**2) / (
            len(own) + PRIOR_FACELETS
        )
        total += len(own) * float(np.log(variance))
    return total
