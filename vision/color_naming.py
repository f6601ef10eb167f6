"""Naming colour clusters after a scheme, under an unknown light (von Kries adaptation).

The camera sees the puzzle's colours under whatever light the room has: warm lamps push orange
towards yellow and red towards orange, dim light pulls everything together. Rather than
thresholds, the classifier estimates the light from the puzzle itself: for a candidate naming
(cluster -> scheme colour) it fits the diagonal von Kries gains on linear sRGB that best carry
the clusters onto their scheme colours, and scores the naming by CIEDE2000 after adaptation.
The naming with the lowest score wins, so the light and the names are estimated together, and
every cluster gets a different name.

When the puzzle's arrangement is known (which cluster sits on which face, from the centres or
the pieces), only namings that are a rotation of the scheme's arrangement are considered: a
real puzzle is never a mirror image of its scheme, so swapping red and orange alone is ruled
out by geometry rather than by colour.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.color_pieces import PieceModel
from judgecam.vision.colorspace import ciede2000

logger = logging.getLogger(__name__)

#: How a naming doubt starts: the colours fit the scheme better in another arrangement than
#: any the scheme allows (a custom scheme, or colours misread as a whole).
ARRANGEMENT_DOUBT = "the colours fit the scheme better in a mirrored or different arrangement"
#: How it ends for the built-in scheme (`colors` words it otherwise for a calibrated one).
CALIBRATE_ADVICE = "a non-standard scheme? calibrate one"

#: Mean CIEDE2000 by which a naming outside the scheme's arrangement must beat the best one
#: inside it before the classifier says the puzzle may not follow the scheme.
ARRANGEMENT_DOUBT_DELTA_E = 8.0


@dataclass(frozen=True)
class Naming:
    """Scheme colour index per cluster, the von Kries gains (linear R, G, B), CIEDE2000 per
    cluster after adaptation, and a reason when the names are doubtful (else None)."""

    colors: tuple[int, ...]
    gains: tuple[float, float, float]
    delta_e: tuple[float, ...]
    doubt: str | None


def lab_to_linear_rgb(lab: NDArray[np.float64]) -> NDArray[np.float64]:
    """Linear sRGB (R, G, B; 1 = white) of CIELAB colours of shape (..., 3)."""
    shape = lab.shape
    bgr = cv2.cvtColor(lab.reshape(-1, 1, 3).astype(np.float32), cv2.COLOR_Lab2BGR)
    srgb = np.clip(bgr.reshape(shape)[..., ::-1].astype(np.float64), 0.0, 1.0)
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def linear_rgb_to_lab(rgb: NDArray[np.float64]) -> NDArray[np.float64]:
    """CIELAB of linear sRGB colours (R, G, B) of shape (..., 3), clipped to the gamut."""
    shape = rgb.shape
    linear = np.clip(rgb, 0.0, 1.0)
    srgb = np.where(linear <= 0.0031308, linear * 12.92, 1.055 * linear ** (1 / 2.4) - 0.055)
    bgr = srgb[..., ::-1].reshape(-1, 1, 3).astype(np.float32)
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab).reshape(shape).astype(np.float64)


def _fit_gains(
    observed: NDArray[np.float64], reference: NDArray[np.float64], weights: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Least-squares diagonal gains g (..., 3) with g * observed ~ reference, per candidate.

    observed, reference: (..., K, 3) linear RGB; weights: (K,) (0 for empty clusters).
    """
    numerator = np.einsum("k,...kc,...kc->...c", weights, observed, reference)
    denominator = np.einsum("k,...kc,...kc->...c", weights, observed, observed)
    return numerator / np.maximum(denominator, 1e-12)


def _score(
    cluster_rgb: NDArray[np.float64],
    scheme_lab: NDArray[np.float64],
    scheme_rgb: NDArray[np.float64],
    candidates: NDArray[np.intp],
    weights: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """For (P, K) candidate namings: total CIEDE2000, gains (P, 3), per-cluster CIEDE2000."""
    reference_rgb = scheme_rgb[candidates]  # [p, k, c]
    gains = _fit_gains(cluster_rgb[None], reference_rgb, weights)  # [p, c]
    adapted = linear_rgb_to_lab(cluster_rgb[None] * gains[:, None, :])
    delta = ciede2000(adapted, scheme_lab[candidates])  # [p, k]
    return (delta * (weights > 0)).sum(axis=1), gains, delta


def rotation_namings(
    model: PieceModel, arrangement: NDArray[np.intp], scheme_faces: Sequence[str | None]
) -> NDArray[np.intp]:
    """Namings (cluster -> scheme colour) that put the scheme on the puzzle by a rotation.

    `arrangement[..., f]` is the cluster on face f (a permutation; several at once along the
    leading axes), the namings (..., R, K) one per rotation. Empty if the scheme gives no faces.
    """
    faces = arrangement.shape[-1]
    if any(face not in model.faces for face in scheme_faces):
        return np.empty((*arrangement.shape[:-1], 0, faces), dtype=np.intp)
    color_on_face = np.empty(len(model.faces), dtype=np.intp)
    for color, face in enumerate(scheme_faces):
        color_on_face[model.faces.index(str(face))] = color
    face_of_cluster = np.argsort(arrangement, axis=-1)  # the inverse permutation
    namings = color_on_face[model.rotations][:, face_of_cluster]  # [r, ..., k]
    return np.asarray(np.moveaxis(namings, 0, -2), dtype=np.intp)


def naming_costs(
    cluster_lab: NDArray[np.float64],
    counts: NDArray[np.intp],
    scheme_lab: NDArray[np.float64],
    allowed: NDArray[np.intp],
    scheme_rgb: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """For (T, P, K) sets of allowed namings: the mean CIEDE2000 (per cluster in view, after the
    light is estimated) of each set's best naming, how well the colours fit the scheme put on
    the puzzle that way; (T,). A set with no naming (P = 0) costs 0. `scheme_rgb` is
    `lab_to_linear_rgb(scheme_lab)` when the caller has it already."""
    sets, per_set = allowed.shape[:2]
    if per_set == 0:
        return np.zeros(sets)
    weights = (np.asarray(counts) > 0).astype(np.float64)
    # Arrangements equal up to a rotation share their namings: each distinct one is scored once
    # (a naming's score does not depend on the others scored with it).
    namings = allowed.reshape(sets * per_set, -1)
    keys = namings @ (len(scheme_lab) ** np.arange(namings.shape[1]))  # a number per naming
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    distinct = namings[first]
    totals, _, _ = _score(
        lab_to_linear_rgb(cluster_lab),
        scheme_lab,
        lab_to_linear_rgb(scheme_lab) if scheme_rgb is None else scheme_rgb,
        distinct,
        weights,
    )
    per_naming = totals[inverse.reshape(-1)].reshape(sets, per_set)
    return np.asarray(per_naming.min(axis=1) / max(float(weights.sum()), 1.0))


def name_clusters(
    cluster_lab: NDArray[np.float64],
    counts: NDArray[np.intp],
    scheme_lab: NDArray[np.float64],
    allowed: NDArray[np.intp] | None = None,
) -> Naming:
    """Name K clusters after K or more scheme colours, estimating the light on the way.

    `allowed` (P, K) restricts the namings (e.g. `rotation_namings`); without it, or if it is
    empty, every injective naming is scored. With `allowed`, the best free naming is scored too
    and a doubt is reported when it is much better.
    """
    clusters = len(cluster_lab)
    weights = (np.asarray(counts) > 0).astype(np.float64)
    cluster_rgb = lab_to_linear_rgb(cluster_lab)
    scheme_rgb = lab_to_linear_rgb(scheme_lab)
    free = np.array(list(itertools.permutations(range(len(scheme_lab)), clusters)), dtype=np.intp)
    free_totals, free_gains, free_delta = _score(cluster_rgb, scheme_lab, scheme_rgb, free, weights)
    doubt = None
    if allowed is not None and len(allowed):
        totals, gains, delta = _score(cluster_rgb, scheme_lab, scheme_rgb, allowed, weights)
        best = int(np.argmin(totals))
        seen = max(float(weights.sum()), 1.0)
        gap = (totals[best] - free_totals.min()) / seen
        if gap > ARRANGEMENT_DOUBT_DELTA_E:
            doubt = (
                f"{ARRANGEMENT_DOUBT} "
                f"(mean CIEDE2000 {totals[best] / seen:.1f} vs {free_totals.min() / seen:.1f}): "
                + CALIBRATE_ADVICE
            )
        namings = allowed
    else:
        totals, gains, delta, namings = free_totals, free_gains, free_delta, free
        best = int(np.argmin(totals))
    chosen_gains = gains[best]
    logger.debug("naming %s, gains %s, total %.1f", namings[best], chosen_gains, totals[best])
    return Naming(
        colors=tuple(int(c) for c in namings[best]),
        gains=(float(chosen_gains[0]), float(chosen_gains[1]), float(chosen_gains[2])),
        delta_e=tuple(float(d) for d in delta[best]),
        doubt=doubt,
    )
