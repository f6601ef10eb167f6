"""Same colour, different light: whether two colour clusters differ only by brightness.

Shading (the shadow of another layer, grazing light, a darker corner of the view) multiplies
a sticker's linear R, G and B by about the same factor, so lightness and chroma drop together
while the chromaticity r/(r+g+b), g/(r+g+b) stays put. Two real colours of a puzzle (red and
orange, white and yellow, blue and green) differ in chromaticity under any light, because the
light's own colour scales both of them by the same channel gains.

The test compares the chromaticity means of two groups against the chromaticity noise of the
facelets themselves (the within-cluster covariance pooled over every cluster of the
labelling): a squared Mahalanobis distance (Hotelling's T^2) in the same "squared noise
units" as the classifier's facelet costs, so it can be set against the price of one more
colour (`judgecam.vision.colors.color_penalty`) rather than against a threshold of its own.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.color_naming import lab_to_linear_rgb

logger = logging.getLogger(__name__)

#: Smallest chromaticity noise (standard deviation per coordinate) assumed: one 8-bit step of
#: a mid-grey sRGB channel moves r/(r+g+b) by about this much, so a noiseless synthetic
#: cluster cannot make every chromaticity difference infinitely significant.
MIN_CHROMATICITY_NOISE = 2e-3
#: How far (a share of the way) a sheen may carry a colour's chromaticity towards the light's
#: and still count as that colour under another light (`lit_variant`): past half way the
#: reflection of the lamp outweighs the paint.
MAX_SHEEN_SHARE = 0.5
#: Linear RGB sum below which a facelet is too dark for its chromaticity to mean anything
#: (about L* = 3 for a grey): it is then taken as the neutral (1/3, 1/3).
DARK_SUM = 0.01


def chromaticity(labs: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, 2) chromaticity r/(r+g+b), g/(r+g+b) in linear RGB of (N, 3) CIELAB colours.

    Invariant to a brightness factor (shading), not to the light's colour.
    """
    rgb = lab_to_linear_rgb(np.asarray(labs, dtype=np.float64).reshape(-1, 3))
    total = rgb.sum(axis=1, keepdims=True)
    neutral = np.full((len(rgb), 2), 1.0 / 3.0)
    safe = np.maximum(total, DARK_SUM)
    return np.where(total >= DARK_SUM, rgb[:, :2] / safe, neutral)


def pooled_covariance(
    chroma: NDArray[np.float64], members: NDArray[np.intp]
) -> NDArray[np.float64]:
    """(2, 2) within-cluster chromaticity covariance pooled over all clusters of a labelling,
    with at least `MIN_CHROMATICITY_NOISE` squared on the diagonal."""
    residuals = np.empty_like(chroma)
    clusters = np.unique(members)
    for cluster in clusters:
        mask = members == cluster
        residuals[mask] = chroma[mask] - chroma[mask].mean(axis=0)
    dof = max(len(chroma) - len(clusters), 1)
    covariance = residuals.T @ residuals / dof
    return covariance + np.eye(2) * MIN_CHROMATICITY_NOISE**2


def chromaticity_separation(
    chroma: NDArray[np.float64],
    members: NDArray[np.intp],
    first: int,
    second: int,
    covariance: NDArray[np.float64],
) -> float:
    """Hotelling's T^2 between the chromaticity means of clusters `first` and `second`.

    About 2 (the number of coordinates) on average when the two are one colour under two light
    levels; grows with the number of facelets when they are two colours.
    """
    a, b = chroma[members == first], chroma[members == second]
    if not len(a) or not len(b):
        return float("inf")
    difference = a.mean(axis=0) - b.mean(axis=0)
    scaled = covariance * (1.0 / len(a) + 1.0 / len(b))
    return float(difference @ np.linalg.solve(scaled, difference))


def propagated_noise(lab: NDArray[np.float64], noise_delta_e: float) -> NDArray[np.float64]:
    """(2, 2) chromaticity covariance that CIELAB noise of `noise_delta_e` (spread over the
    three axes) causes at colour `lab` (first order, central differences).

    Chromaticity is far noisier for some colours than others (dark ones, saturated ones at
    the edge of the gamut), so the least noise a colour has is carried into chromaticity at
    that colour rather than assumed the same everywhere.
    """
    step = noise_delta_e / np.sqrt(3.0)
    offsets = np.vstack([np.eye(3), -np.eye(3)]) * step
    moved = chromaticity(np.asarray(lab, dtype=np.float64)[None, :] + offsets)
    jacobian = (moved[:3] - moved[3:]) / 2.0
    return jacobian.T @ jacobian


def shading_splits(
    labs: NDArray[np.float64],
    members: NDArray[np.intp],
    price: float,
    noise_delta_e: float,
) -> list[tuple[int, int, float]]:
    """Pairs of clusters that one colour under two light levels explains as well.

    A pair qualifies when its chromaticity separation (T^2, squared noise units) is below
    `price`, the cost of one more colour: the extra colour then buys less than it costs once
    brightness is left to the light. The noise is the pooled within-cluster chromaticity
    covariance plus `noise_delta_e` (the least colour noise assumed) carried into chromaticity
    at the pair's colours. Returns (first, second, separation), most alike first.
    """
    chroma = chromaticity(labs)
    covariance = pooled_covariance(chroma, members)
    used = [int(k) for k in np.unique(members)]
    floors = {k: propagated_noise(labs[members == k].mean(axis=0), noise_delta_e) for k in used}
    found = []
    for index, first in enumerate(used):
        for second in used[index + 1 :]:
            least = (floors[first] + floors[second]) / 2.0
            separation = chromaticity_separation(chroma, members, first, second, covariance + least)
            if separation < price:
                found.append((first, second, separation))
    logger.debug("clusters alike but for the light: %s", found)
    return sorted(found, key=lambda pair: pair[2])


def illuminant_chromaticity(
    gains: NDArray[np.float64] | tuple[float, float, float],
) -> NDArray[np.float64] | None:
    """Chromaticity of the light itself as the camera sees it: a neutral surface, which the
    von Kries `gains` (observed -> reference, `color_naming`) carry to neutral, is 1 / gains.
    None when a gain is not positive (a channel the naming could not fit)."""
    values = np.asarray(gains, dtype=np.float64)
    if not np.all(np.isfinite(values)) or np.any(values <= 0.0):
        return None
    inverse = 1.0 / values
    return inverse[:2] / inverse.sum()


def lit_variant(
    labs: NDArray[np.float64],
    members: NDArray[np.intp],
    variant: NDArray[np.bool_],
    colour: NDArray[np.bool_],
    illuminant: NDArray[np.float64],
    price: float,
    noise_delta_e: float,
) -> bool:
    """Whether the facelets `variant` are the colour of the facelets `colour` under another
    light: shaded (the same chromaticity) or with a sheen (a gloss adds the light's own colour,
    so the chromaticity moves from the colour's straight towards the light's, `illuminant`),
    at most `MAX_SHEEN_SHARE` of the way (further on, every colour turns the same grey).

    The distance from that line is weighed against the chromaticity noise as in
    `shading_splits` (squared noise units, against `price`, the cost of one more colour).
    """
    chroma = chromaticity(labs)
    if not variant.any() or not colour.any():
        return False
    own, other = chroma[colour].mean(axis=0), chroma[variant].mean(axis=0)
    covariance = (
        pooled_covariance(chroma, members)
        + (
            propagated_noise(labs[colour].mean(axis=0), noise_delta_e)
            + propagated_noise(labs[variant].mean(axis=0), noise_delta_e)
        )
        / 2.0
    )
    towards = illuminant - own
    length = float(np.hypot(*towards))
    if length < 1e-6:
        return False
    along = towards / length
    across = np.array([-along[1], along[0]])
    offset = other - own
    scale = 1.0 / int(colour.sum()) + 1.0 / int(variant.sum())
    off_line = float(offset @ across) ** 2 / (float(across @ covariance @ across) * scale)
    position = float(offset @ along)
    spread_along = float(np.sqrt(along @ covariance @ along * scale))
    # Shading leaves the chromaticity where it is (position 0); a sheen may move it at most
    # half way to the light's: beyond that the lamp's reflection, not the paint, is what the
    # camera sees, and every colour ends in the same grey.
    on_segment = -spread_along <= position <= MAX_SHEEN_SHARE * length
    logger.debug(
        "lit variant? off the line T^2 %.1f (price %.1f), along %.3f of %.3f",
        off_line,
        price,
        position,
        length,
    )
    return off_line < price and on_segment
