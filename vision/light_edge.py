"""A light edge across a face: never let it split one colour into two.

A cast shadow or a lamp's pool of light ends somewhere, and where it ends on a face the
stickers on either side read at two lightness levels that stage 4 can take for two colours.
The edge itself gives it away: a sticker it crosses is lit unevenly inside, so its sample
spreads over a good part of the gap between the face's two levels, while a sticker of one
paint under one light is uniform. On a render never seen before (seed 3141 c0006), a solved
pastel cube seen by a single top camera, its cream top face half in a spotlight, read as four
"orange" and five "red" facelets: DNF. Two of its stickers had samples spread over 37-81 and
29-64 in lightness; the others 0.3.

If the verdict is a penalty and does not survive leaving such a face unseen, the light decides
it: the answer is review. Like glare (`glare.py`), it only doubts, never merges. A glare spot
on one sticker of a face read in two colours looks the same to this test (a sample spread
far more than its neighbours'): corpus c0080, a DNF with a red and white face under bright
light, goes to a judge for it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from judgecam.puzzle.observation import MISSING, UNKNOWN
from judgecam.puzzle.verdict import holds_without
from judgecam.vision.fuse import Fusion, ViewEvidence
from judgecam.vision.glare import PENALTIES, fused_samples, verdict_without_faces
from judgecam.vision.model import PuzzleModel

logger = logging.getLogger(__name__)

#: Two colours on one face this far apart in lightness (CIELAB L) can be one paint in two
#: lights; closer ones are told apart by hue, not light.
MIN_LIGHTNESS_GAP = 15.0
#: A sample whose spread (`FaceletSample.spread`, the mean of its L, a, b standard deviations)
#: reaches this fraction of the gap is crossed by the light's edge: an edge across it between
#: the two levels gives a lightness standard deviation of up to half the gap (a third of that in
#: the mean over L, a and b) ...
EDGE_SPREAD_FRACTION = 0.08
#: ... and stands out from the face's other samples, whose spread is the sensor's noise and the
#: paint's texture (a darker or grainier face spreads more everywhere, not in one sticker).
EDGE_SPREAD_OVER_MEDIAN = 4.0


def unevenly_lit_faces(
    model: PuzzleModel,
    labels: Sequence[str],
    samples: Sequence[object],
) -> list[int]:
    """Faces read in exactly two colours of clearly different lightness with a sticker lit
    unevenly (a light's edge across it): their two colours may be one paint."""
    faces = []
    for face in range(len(model.face_names)):
        levels: dict[str, list[float]] = {}
        spreads = []
        for index in np.nonzero(model.facelet_face == face)[0]:
            sample = samples[int(index)]
            label = labels[int(index)]
            if sample is None or label in (UNKNOWN, MISSING):
                continue
            levels.setdefault(label, []).append(float(sample.lab[0]))  # type: ignore[attr-defined]
            spreads.append(float(sample.spread))  # type: ignore[attr-defined]
        if len(levels) != 2:
            # A face of one paint split by one light's edge reads in two colours; a face of
            # three or more is not one paint whatever the light (a hand's shadow or a glare
            # spot on a scrambled face, seed 1618 c0020, is not what this guards against).
            continue
        means = [float(np.mean(values)) for values in levels.values()]
        gap = max(means) - min(means)
        edge = max(EDGE_SPREAD_FRACTION * gap, EDGE_SPREAD_OVER_MEDIAN * float(np.median(spreads)))
        if gap >= MIN_LIGHTNESS_GAP and max(spreads) >= edge:
            faces.append(face)
    return faces


def light_edge_decides(
    model: PuzzleModel,
    fusion: Fusion,
    views: Sequence[ViewEvidence | None],
) -> str | None:
    """A reason for review if a penalty does not survive leaving unevenly lit faces unseen
    (unless they only rule out the harsher penalty: `holds_without`)."""
    verdict = fusion.verdict.verdict
    if verdict not in PENALTIES:
        return None
    samples = fused_samples(model, fusion, views)
    faces = unevenly_lit_faces(model, fusion.observation.facelets, samples)
    if not faces:
        return None
    trial = verdict_without_faces(model, fusion.observation, faces)
    if holds_without(verdict, trial):
        return None
    names = ", ".join(model.face_names[face] for face in faces)
    logger.info("a light's edge across face(s) %s decides %s", names, verdict)
    return (
        f"face(s) {names} read in two colours of different lightness, a sticker between them "
        f"lit unevenly (a shadow's or a light's edge?): {verdict} with them, {trial.verdict} "
        "without them"
    )
