"""Glare on glossy stickers: never let it turn a solved puzzle into a penalty.

A specular highlight adds the light's own (white) colour on top of the paint: a sticker under
glare reads near-white (very light, almost no chroma) in one view while another view, at
another angle, sees its real colour. A white sticker is legitimately near-white too, so a
washed-out sample alone proves nothing; the evidence is the same facelet seen saturated from
another view. The face carrying such a facelet is read under glare, and the colours of its
facelets (the washed ones, and the clustering they distort) are suspect. If the verdict is a
penalty and does not survive leaving that face unseen, glare decides it: the answer is review.

The same washing-out (or a dim white sticker) can also make the classifier give one colour name
to a near-grey sample and a saturated one. A paint is either neutral (white, grey) or not, so a
colour read both ways is two colours merged, and no verdict is given on it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle.observation import Observation
from judgecam.puzzle.verdict import Verdict, holds_without, judge_unseen
from judgecam.vision.colors import NEUTRAL_CHROMA
from judgecam.vision.fuse import Fusion, ViewEvidence, _view_samples
from judgecam.vision.model import PuzzleModel

logger = logging.getLogger(__name__)

#: A sample at least this light (CIELAB L) ...
WASHED_LIGHTNESS = 88.0
#: ... with at most this chroma is washed out (near-white) ...
WASHED_CHROMA = 12.0
#: ... and is glare if another view sees the same facelet with at least this chroma, darker.
SATURATED_CHROMA = 20.0

PENALTIES = ("+2", "DNF")

#: One colour name on a sample with chroma below NEUTRAL_CHROMA (grey-looking, `colors`) and on
#: one with chroma at least CHROMATIC_CHROMA means two colours were merged. On the rendered
#: corpus (rig poses) it flags no cluster of a correct verdict; the 4 clusters of one true
#: colour it flags (a red washed to chroma 4 by glare, ...) are all in captures already
#: answered review.
CHROMATIC_CHROMA = 30.0


def is_washed_out(lab: NDArray[np.float64]) -> bool:
    """Whether a CIELAB sample is near-white: very light with almost no chroma."""
    return bool(
        float(lab[0]) >= WASHED_LIGHTNESS and float(np.hypot(lab[1], lab[2])) <= WASHED_CHROMA
    )


def seen_glare(samples: Sequence[NDArray[np.float64]]) -> bool:
    """Whether one facelet's CIELAB samples (one per view) show glare: one is washed out and
    another, darker, is saturated (glare adds white light; it never adds chroma)."""
    return any(
        float(np.hypot(other[1], other[2])) >= SATURATED_CHROMA and other[0] < lab[0]
        for lab in samples
        if is_washed_out(lab)
        for other in samples
    )


def glare_facelets(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    permutations: Sequence[NDArray[np.int64] | None],
) -> tuple[int, ...]:
    """Fused facelets seen washed out in one view and saturated (and darker) in another."""
    count = model.facelet_count
    seen: list[list[NDArray[np.float64]]] = [[] for _ in range(count)]
    for view, permutation in zip(views, permutations, strict=True):
        if view is None or permutation is None:
            continue
        labs, weights, _, _ = _view_samples(view, count)
        for facelet in np.nonzero(weights > 0)[0]:
            seen[int(permutation[facelet])].append(labs[facelet])
    return tuple(target for target, samples in enumerate(seen) if seen_glare(samples))


def verdict_without_faces(
    model: PuzzleModel, observation: Observation, faces: Sequence[int]
) -> Verdict:
    """The verdict with every facelet of `faces` read as unseen."""
    from judgecam.puzzle import get_puzzle

    facelets = np.nonzero(np.isin(model.facelet_face, list(faces)))[0]
    return judge_unseen(get_puzzle(model.name), observation, facelets)


def glare_decides(
    model: PuzzleModel,
    fusion: Fusion,
    views: Sequence[ViewEvidence | None],
) -> str | None:
    """A reason for review if a penalty verdict does not survive leaving glare faces unseen
    (unless the glare faces only rule out the harsher penalty: `lightens_only`)."""
    if fusion.verdict.verdict not in PENALTIES:
        return None
    suspects = glare_facelets(model, views, fusion.permutations)
    if not suspects:
        return None
    faces = sorted({int(model.facelet_face[index]) for index in suspects})
    trial = verdict_without_faces(model, fusion.observation, faces)
    if holds_without(fusion.verdict.verdict, trial):
        return None
    names = ", ".join(model.face_names[face] for face in faces)
    logger.info("glare on face(s) %s decides %s", names, fusion.verdict.verdict)
    return (
        f"glare on face(s) {names} ({len(suspects)} facelet(s) washed out in one view, coloured "
        f"in another) decides the verdict: {fusion.verdict.verdict} with it, {trial.verdict} "
        "without it"
    )


def fused_samples(
    model: PuzzleModel,
    fusion: Fusion,
    views: Sequence[ViewEvidence | None],
) -> list[object]:
    """Per fused facelet, the sample stage 4 classified (`FaceletSample`, None if unseen): the
    fusion's own, or made again from `views` for a fusion that did not keep them."""
    from judgecam.vision.fuse import _fused_samples

    if fusion.samples:
        return list(fusion.samples)

    count = model.facelet_count
    per_view = [
        _view_samples(view, count)
        if view is not None
        else (np.full((count, 3), np.nan), np.zeros(count), np.zeros(count), np.zeros(count, bool))
        for view in views
    ]
    return _fused_samples(model, per_view, fusion.permutations)[0]


def mixed_colors(
    model: PuzzleModel,
    fusion: Fusion,
    views: Sequence[ViewEvidence | None],
) -> str | None:
    """`merged_colors` on the fused samples (the same ones stage 4 classified)."""
    samples = fused_samples(model, fusion, views)
    labs = [None if sample is None else sample.lab for sample in samples]  # type: ignore[attr-defined]
    return merged_colors(fusion.observation.facelets, labs)


def mixes_grey_and_colour(chromas: Sequence[float]) -> bool:
    """Whether samples of one colour name (their CIELAB chromas) hold a near-grey one and a
    clearly coloured one: two colours merged."""
    return min(chromas) < NEUTRAL_CHROMA and max(chromas) >= CHROMATIC_CHROMA


def merged_colors(labels: Sequence[str], labs: Sequence[Sequence[float] | None]) -> str | None:
    """A reason for review if one colour name covers a near-grey and a saturated sample."""
    from judgecam.puzzle.observation import MISSING, UNKNOWN

    chroma: dict[str, list[float]] = {}
    for label, lab in zip(labels, labs, strict=True):
        if lab is None or label in (UNKNOWN, MISSING):
            continue
        chroma.setdefault(label, []).append(float(np.hypot(lab[1], lab[2])))
    for label, values in chroma.items():
        if mixes_grey_and_colour(values):
            return (
                f"{label} is read on a grey-looking facelet (chroma {min(values):.0f}) and on a "
                f"saturated one (chroma {max(values):.0f}): two colours merged (glare or dim "
                "light?)"
            )
    return None
