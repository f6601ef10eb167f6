"""Stage 5: fuse the views of one moment into one observation, and judge it.

Each view's geometry fit names facelets in its own copy of the puzzle frame: which physical face
a view calls "U" is arbitrary (the puzzle's symmetry makes every choice fit). Fusing therefore
first finds, for every other view, the symmetry that maps it onto the reference view:
facelets seen by both views must show the same colour, and what remains undecided is settled by
the colour classifier and the rules engine (a wrong alignment yields a puzzle no turning can
reach, or costs more colour error). Alignments that stay ambiguous and would change the verdict
make it `review`.

Pair angles measured in several views are combined by inverse variance; views that disagree by
more than their uncertainties widen the uncertainty to cover both and say so. A Pyraminx tip
whose layer a view does not measure is measured from its base when a crossing layer stands
askew in that view (the layer is then held in line, within the mechanism's play).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import rotation_angle_deg, rotation_matrix
from judgecam.vision.colorspace import bgr_to_lab, ciede2000
from judgecam.vision.geometry import (
    UNCERTAINTY_FLOOR_DEG,
    GeometryFit,
    PairAngle,
    stated_uncertainty,
)
from judgecam.vision.model import PuzzleModel, rotation_about
from judgecam.vision.projected import ProjectedFacelet
from judgecam.vision.segment import Facelet

if TYPE_CHECKING:
    from judgecam.calibration.scheme import ColorScheme
    from judgecam.puzzle.locking import PairAngle as LockingAngle
    from judgecam.puzzle.observation import Observation
    from judgecam.puzzle.verdict import Verdict
    from judgecam.vision.color_model import ColorClassification

logger = logging.getLogger(__name__)

#: Stage 4: (samples per facelet, puzzle name, scheme) -> ColorClassification.
Classifier = Callable[[Sequence[Any], str, Any], "ColorClassification"]

#: Views that measure one pair further apart than their stated uncertainties, but by less than
#: this (degrees, as `projected.MAX_OTHER_AXIS_DEG` calls a layer "in line"), saw the layer in
#: the same place: their spread widens the pair's uncertainty. Further apart, at least one view
#: fitted the layer wrongly (and may have read its facelets at the wrong places).
MAX_VIEW_DISAGREEMENT_DEG = 6.0
#: Two views of one facelet agree if their colours are closer than this (CIEDE2000).
AGREE_DELTA_E = 12.0
#: Views whose samples of one facelet differ by more than this (CIEDE2000 at equal lightness)
#: contradict each other there (one of them misplaced a facelet); the facelet is then treated
#: as unseen.
CONFLICT_DELTA_E = 20.0
#: A facelet sampled where the fit projects it (no sticker detected there) counts this fraction
#: of its pixels when views compete for it: a detected sticker's outline is firmer evidence.
PROJECTED_WEIGHT = 0.5
#: Alignments scoring within this of the best are judged too before one is chosen.
ALIGNMENT_MARGIN = 2.0
#: At most this many candidate alignments per view are judged.
MAX_ALIGNMENTS = 4


@dataclass(frozen=True, eq=False)
class ViewEvidence:
    """What one view saw, in its own puzzle frame: facelet samples and pair angles."""

    facelets: tuple[Facelet, ...]
    fit: GeometryFit
    missing: tuple[int, ...] = ()  # model facelets (view frame) showing bare body
    projected: tuple[ProjectedFacelet, ...] = ()  # facelets sampled where the fit puts them
    bare: tuple[int, ...] = ()  # model facelets (view frame) in view that look like bare body


@dataclass(frozen=True)
class FusedPair:
    """One pair's residual in the fused frame, its uncertainty, and how many views saw it."""

    axis: str
    parts: tuple[int, int]
    angle_deg: float
    uncertainty_deg: float
    views: int
    consistent: bool = True  # the views agree, and snapped the parts to the same positions
    #: The views snapped the parts a step apart (the pair at the snapping boundary): the
    #: facelets they read there are a step apart and cannot be fused.
    snapped_apart: bool = False


@dataclass(frozen=True, eq=False)
class Fusion:
    """Stage 5 result: the observation, its verdict and how the views were put together."""

    observation: Observation
    verdict: Verdict
    colors: ColorClassification | None
    permutations: tuple[NDArray[np.int64] | None, ...]  # per view: view facelet -> fused facelet
    pairs: tuple[FusedPair, ...]
    hidden_faces: tuple[str, ...]
    reasons: tuple[str, ...]
    ambiguous: bool  # alignments of the views that fit about equally well disagree on the verdict
    #: Per view: the rotation from its model frame to the fused frame (None if not aligned).
    rotations: tuple[NDArray[np.float64] | None, ...] = ()
    #: The other legal alignments the views' overlap fits about as well (no rig poses), fused:
    #: glare must not decide the verdict under them either (`pipeline._judge`).
    alternatives: tuple[Fusion, ...] = ()
    #: Facelets the views saw in colours too far apart to be one (left unseen).
    contradicted: int = 0
    #: Per fused facelet, the sample stage 4 classified (`_fused_samples`; empty if not kept).
    samples: tuple[object, ...] = ()


#: Per model facelet of one view: Lab sample (NaN if unseen), pixel weight, Lab spread, and
#: whether the sample was taken where the fit projects the facelet (no sticker detected).
Samples = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]


def _view_samples(view: ViewEvidence, count: int) -> Samples:
    """Per model facelet (view frame): Lab sample (NaN if unseen), pixel weight, spread and
    whether it is a projected sample."""
    labs = np.full((count, 3), np.nan)
    weights = np.zeros(count)
    spreads = np.zeros(count)
    projected_mask = np.zeros(count, dtype=bool)
    for detection, facelet in enumerate(view.fit.assignment):
        if facelet < 0:
            continue
        sample = view.facelets[detection]
        if sample.pixel_count > weights[facelet]:
            labs[facelet] = bgr_to_lab(sample.mean_bgr)
            weights[facelet] = sample.pixel_count
            spreads[facelet] = sample.spread
    for projected in view.projected:
        facelet = projected.facelet
        if weights[facelet] > 0:
            continue  # a detected sticker's sample is kept
        labs[facelet] = bgr_to_lab(projected.sample.mean_bgr)
        weights[facelet] = PROJECTED_WEIGHT * projected.sample.pixel_count
        spreads[facelet] = projected.sample.spread
        projected_mask[facelet] = True
    return labs, weights, spreads, projected_mask


def top_face(model: PuzzleModel, fit: GeometryFit) -> tuple[int, float]:
    """The face pointing most upwards in the image, and by how much more than the next one.

    For an upright camera looking down at the puzzle from any elevation, the face on top has the
    most negative image-y component of its normal (side faces have zero or positive ones), so
    views of one rig agree on which face is on top without knowing where the cameras are.
    """
    rotation = rotation_matrix(fit.rvec)
    normals = model.face_normals @ rotation.T
    centers = (model.face_normals * model.radius * 0.5) @ rotation.T + fit.tvec
    facing = np.einsum("ij,ij->i", normals, centers) < 0
    # Faces turned away from the camera (the far side faces point up as much as the top at
    # 45 degrees elevation) cannot be the top face an upright camera above the mat sees.
    upward = np.where(facing, -normals[:, 1], -np.inf)
    order = np.argsort(-upward)
    return int(order[0]), float(upward[order[0]] - upward[order[1]])


#: A view's top face counts only if it points up this much more than any other face.
TOP_FACE_MARGIN = 0.3
#: A face whose normal points up in the image by more than this (image-y component below its
#: negative) cannot be the face the puzzle lies on (`bottom_face`).
BOTTOM_FACE_UPWARD = 0.25


def bottom_face(model: PuzzleModel, fit: GeometryFit) -> int | None:
    """The face the puzzle lies on, for an upright camera above the mat; None if not clear.

    That face points straight down: turned away from the camera, its normal has no sideways
    (image-x) part and none upwards, whatever the camera's elevation. Every other face of a
    Pyraminx on a face points up by a third and sideways or towards the camera. So exactly one
    face is turned away without pointing up in the image, and it is the face below (303 of 305
    Pyraminx views of the corpus and eight other sets; one top camera found none, and the one
    wrong pick came from a wrong fit). Like `top_face`, this assumes the image is upright.
    """
    rotation = rotation_matrix(fit.rvec)
    normals = model.face_normals @ rotation.T
    centers = (model.face_normals * model.radius * 0.5) @ rotation.T + fit.tvec
    away = np.einsum("ij,ij->i", normals, centers) > 0
    candidates = np.nonzero(away & (normals[:, 1] > -BOTTOM_FACE_UPWARD))[0]
    return int(candidates[0]) if len(candidates) == 1 else None


def _rests_on_a_face(model: PuzzleModel) -> bool:
    """Whether the puzzle, lying on a face, has a face on top (one opposite another: a cube).

    A Pyraminx lying on a face has a vertex on top, and its three upper faces point up alike,
    so which one an image shows "on top" depends on where the camera stands: views of one rig
    need not agree on it (c0199 without rig poses: views whose top faces differ, the true
    alignment filtered out, a +2 read DNF).
    """
    normals = model.face_normals
    return bool(np.any(normals @ normals.T < -0.99))


#: Weight of one pair of parts measured alike in two views, against one facelet seen alike.
PAIR_WEIGHT = 2.0


def _alignment_scores(
    model: PuzzleModel,
    reference: tuple[ViewEvidence, NDArray[np.float64]],
    other: tuple[ViewEvidence, NDArray[np.float64]],
) -> list[tuple[float, int]]:
    """(score, symmetry index) for the symmetries that can map `other` onto `reference`.

    Score: facelets seen alike by both minus those seen differently, plus pairs measured alike
    minus pairs measured differently. When both views show which face is on top, only
    alignments that keep it on top are kept.
    """
    top_ref, margin_ref = top_face(model, reference[0].fit)
    top_other, margin_other = top_face(model, other[0].fit)
    use_top = (
        _rests_on_a_face(model) and margin_ref > TOP_FACE_MARGIN and margin_other > TOP_FACE_MARGIN
    )
    # A puzzle with a vertex on top (a Pyraminx) has no face on top, but one below.
    bottoms = (
        (bottom_face(model, reference[0].fit), bottom_face(model, other[0].fit))
        if not _rests_on_a_face(model)
        else (None, None)
    )
    table = _pair_table(model, reference[0].fit)
    scored = []
    for index, rotation in enumerate(model.symmetries):
        if use_top:
            moved = rotation @ model.face_normals[top_other]
            if float(moved @ model.face_normals[top_ref]) < 0.99:
                continue
        if bottoms[0] is not None and bottoms[1] is not None:
            moved = rotation @ model.face_normals[bottoms[1]]
            if float(moved @ model.face_normals[bottoms[0]]) < 0.99:
                continue
        scored.append((_alignment_score(model, reference, other, rotation, table), index))
    scored.sort(key=lambda item: -item[0])
    return scored


#: A fit's pairs by (axis, part indices).
PairTable = dict[tuple[str, tuple[int, int]], PairAngle]


def _pair_table(model: PuzzleModel, fit: GeometryFit) -> PairTable:
    """A fit's pairs by (axis, part indices)."""
    return {(pair.axis, model.axis_and_parts(pair.axis, pair.parts)[1]): pair for pair in fit.pairs}


def _alignment_score(
    model: PuzzleModel,
    reference: tuple[ViewEvidence, NDArray[np.float64]],
    other: tuple[ViewEvidence, NDArray[np.float64]],
    rotation: NDArray[np.float64],
    reference_pairs: PairTable | None = None,
) -> float:
    """How well `other`, turned by `rotation` into `reference`'s frame, agrees with it: facelets
    seen alike minus seen differently, plus pairs measured alike minus measured differently
    (`reference_pairs`: the reference's `_pair_table`, when scoring many rotations)."""
    reference_view, reference_labs = reference
    other_view, other_labs = other
    seen_ref = np.all(np.isfinite(reference_labs), axis=1)
    if reference_pairs is None:
        reference_pairs = _pair_table(model, reference_view.fit)
    permutation = model.facelet_permutation(rotation)
    mapped = np.full_like(other_labs, np.nan)
    mapped[permutation] = other_labs
    both = seen_ref & np.all(np.isfinite(mapped), axis=1)
    score = 0.0
    if np.any(both):
        delta = ciede2000(reference_labs[both], mapped[both])
        score += float(np.sum(np.clip(1.0 - delta / AGREE_DELTA_E, -1.0, 1.0)))
    for pair in other_view.fit.pairs:
        axis, parts = model.axis_and_parts(pair.axis, pair.parts)
        match = reference_pairs.get(_map_pair(model, rotation, pair.axis, parts))
        if match is None:
            continue
        tolerance = stated_uncertainty(pair.sigma_deg) + stated_uncertainty(match.sigma_deg)
        gap = abs(_wrap(pair.angle_deg - match.angle_deg, axis.step_deg))
        score += PAIR_WEIGHT * float(np.clip(1.0 - gap / tolerance, -1.0, 1.0))
    return score


def _cross_score(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    labs: Sequence[NDArray[np.float64]],
    rotations: Sequence[NDArray[np.float64] | None],
    free: Sequence[int],
    only: int | None = None,
) -> float:
    """How well the views aligned by their overlap with the reference (`free`) agree with one
    another under `rotations`: each pair of them must see their own overlap alike too.

    With three cameras around a puzzle, two of them can share a face the reference view does
    not show; only their overlap tells how they sit (seed 8888 rig3 without rig poses: 26 of
    60 captures had alignments the reference alone could not tell apart). With `only`, just
    the pairs that include that view."""
    total = 0.0
    for position, first in enumerate(free):
        for second in free[position + 1 :]:
            if only is not None and only not in (first, second):
                continue
            first_view, second_view = views[first], views[second]
            first_rotation, second_rotation = rotations[first], rotations[second]
            if (
                first_view is None
                or second_view is None
                or first_rotation is None
                or second_rotation is None
            ):
                continue
            total += _alignment_score(
                model,
                (first_view, labs[first]),
                (second_view, labs[second]),
                first_rotation.T @ second_rotation,
            )
    return total


def _wrap(angle: float, step: float) -> float:
    half = step / 2.0
    return float((angle + half) % step - half)


def _map_pair(
    model: PuzzleModel, rotation: NDArray[np.float64], axis_name: str, parts: tuple[int, int]
) -> tuple[str, tuple[int, int]]:
    """The pair in the fused frame that a view-frame pair becomes under `rotation`."""
    axis = next(a for a in model.axes if a.name == axis_name)
    direction = rotation @ axis.direction
    target = max(model.axes, key=lambda a: abs(float(a.direction @ direction)))
    if float(target.direction @ direction) > 0:
        return target.name, parts
    # Reversed direction: the parts count from the other end; the relative angle keeps its sign.
    last = len(target.part_names) - 1
    return target.name, (last - parts[1], last - parts[0])


#: The parts of an axis that ends in a tip (a Pyraminx's), base first.
TIP_PARTS = ("base", "layer", "tip")


def view_pairs(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    rotations: Sequence[NDArray[np.float64] | None],
) -> dict[tuple[str, tuple[int, int]], dict[int, PairAngle]]:
    """Per fused pair (`_map_pair`): each aligned view's own measurement of it."""
    found: dict[tuple[str, tuple[int, int]], dict[int, PairAngle]] = {}
    for index, (view, rotation) in enumerate(zip(views, rotations, strict=False)):
        if view is None or rotation is None:
            continue
        for pair in view.fit.pairs:
            parts = model.axis_and_parts(pair.axis, pair.parts)[1]
            found.setdefault(_map_pair(model, rotation, pair.axis, parts), {})[index] = pair
    return found


def locking_angles(model: PuzzleModel, fit: GeometryFit) -> list[LockingAngle]:
    """A view's pair angles with their stated uncertainties, as `puzzle.locking` reads them."""
    from judgecam.puzzle.locking import PairAngle as LockingAngle
    from judgecam.puzzle.registry import get_puzzle

    pairs = {(p.axis, p.parts): p for p in get_puzzle(model.name).pairs()}
    return [
        LockingAngle(
            pairs[(pair.axis, model.axis_and_parts(pair.axis, pair.parts)[1])],
            pair.angle_deg,
            stated_uncertainty(pair.sigma_deg),
        )
        for pair in fit.pairs
    ]


def held_layer_tip_pairs(
    model: PuzzleModel, fit: GeometryFit
) -> list[tuple[str, tuple[int, int], float, float]]:
    """Tip pairs a view measures through a held layer: (axis, parts, angle, uncertainty).

    A Pyraminx view may measure a tip and the base of its axis but not the layer between
    (its facelets hidden or not outlined). If a crossing layer stands askew in the same view,
    the layer is held in line with the base within the mechanism's play (`puzzle.locking`),
    so the tip's pair is the tip's angle from the base, its uncertainty widened by the play.
    Without it the tip would be unmeasured, any angle, and the verdict a review.
    """
    from judgecam.puzzle.locking import PLAY_DEG, holders
    from judgecam.puzzle.registry import get_puzzle

    if len(fit.part_angles) != len(model.axes) or not any(
        tuple(axis.part_names) == TIP_PARTS for axis in model.axes
    ):
        return []
    spec = get_puzzle(model.name)
    pairs = {(p.axis, p.parts): p for p in spec.pairs()}
    seen = locking_angles(model, fit)
    found = []
    for axis, own, elsewhere in zip(
        model.axes, fit.part_angles, fit.tips_elsewhere or [()] * len(model.axes), strict=True
    ):
        if tuple(axis.part_names) != TIP_PARTS:
            continue
        # A tip only another group of the active axis's parts shows: measured there
        # (`geometry._tips_on_other_groups`).
        base, layer, tip = elsewhere or own
        if base is None or layer is not None or tip is None:
            continue
        if not holders(spec, pairs[(axis.name, (0, 1))], seen):
            continue
        angle = _wrap(tip.angle_deg - base.angle_deg, axis.step_deg)
        uncertainty = float(
            np.hypot(stated_uncertainty(float(np.hypot(base.sigma_deg, tip.sigma_deg))), PLAY_DEG)
        )
        found.append((axis.name, (1, 2), angle, uncertainty))
    return found


def fuse_pairs(
    model: PuzzleModel,
    views: Sequence[tuple[GeometryFit, NDArray[np.float64]]],
) -> tuple[tuple[FusedPair, ...], tuple[str, ...]]:
    """Combine every view's pair angles (each with its alignment rotation) by inverse variance,
    with the tip pairs a view measures through a held layer (`held_layer_tip_pairs`)."""
    measured: dict[tuple[str, tuple[int, int]], list[tuple[float, float]]] = {}
    for fit, rotation in views:
        for pair in fit.pairs:
            parts = model.axis_and_parts(pair.axis, pair.parts)[1]
            key = _map_pair(model, rotation, pair.axis, parts)
            measured.setdefault(key, []).append(
                (pair.angle_deg, stated_uncertainty(pair.sigma_deg))
            )
        for axis_name, parts, angle, uncertainty in held_layer_tip_pairs(model, fit):
            key = _map_pair(model, rotation, axis_name, parts)
            measured.setdefault(key, []).append((angle, uncertainty))
    fused = []
    reasons = []
    for (axis_name, parts), values in sorted(measured.items()):
        axis = next(a for a in model.axes if a.name == axis_name)
        # Residuals wrap at half a step (44 and -44 degrees are 2 apart on a cube): measure
        # every view relative to the most certain one before averaging.
        uncertainties = np.array([v[1] for v in values])
        anchor = values[int(np.argmin(uncertainties))][0]
        angles = np.array([anchor + _wrap(v[0] - anchor, axis.step_deg) for v in values])
        weights = 1.0 / uncertainties**2
        mean = float(np.sum(weights * angles) / np.sum(weights))
        uncertainty = float(1.0 / np.sqrt(np.sum(weights)))
        spread = float(np.max(np.abs(angles - mean)))
        consistent = True
        if len(values) > 1 and spread > uncertainty:
            disagreement = float(np.ptp(angles))
            if spread > float(np.max(uncertainties)) and disagreement > MAX_VIEW_DISAGREEMENT_DEG:
                consistent = False
                reasons.append(
                    f"views disagree on pair {axis_name}{list(parts)}: "
                    + ", ".join(f"{v[0]:.1f}" for v in values)
                    + " degrees"
                )
                # One of them read it wrong: the pair may be wherever any view says.
                low = float(np.min(angles - uncertainties))
                high = float(np.max(angles + uncertainties))
                uncertainty = max(mean - low, high - mean)
            else:
                uncertainty = max(uncertainty, spread + UNCERTAINTY_FLOOR_DEG)
        raw = np.array([v[0] for v in values])
        snapped_apart = bool(np.any(np.abs(raw - anchor) > axis.step_deg / 2))
        if snapped_apart:
            # Each view snapped the parts to its own nearest position, and they differ: the
            # facelets the views read are a step apart and cannot be fused.
            consistent = False
            reasons.append(
                f"pair {axis_name}{list(parts)} is at the snapping boundary and the views snap "
                "it differently"
            )
        fused.append(
            FusedPair(
                axis_name,
                parts,
                _wrap(mean, axis.step_deg),
                uncertainty,
                len(values),
                consistent,
                snapped_apart,
            )
        )
    return tuple(fused), tuple(reasons)


def _fused_samples(
    model: PuzzleModel,
    per_view: Sequence[Samples],
    permutations: Sequence[NDArray[np.int64] | None],
    calibrated: frozenset[int] = frozenset(),
) -> tuple[list[object], NDArray[np.float64], list[int]]:
    """Per fused facelet: the sample from the view that saw it largest (None if unseen), its
    pixel weight, and the facelets the views contradict each other on (left unseen).

    Where the views disagree, a projected sample gives way to a detected sticker's unless that
    is lighter and paler between views a calibrated rig put together (`_paler`: a reflection
    over it; then neither is trusted), and a washed-out sample gives way to the saturated one
    (see `_washed_out`; `calibrated`: the views a calibrated rig put together); any other
    disagreement leaves the facelet unseen.
    """
    from judgecam.vision.color_model import FaceletSample

    count = model.facelet_count
    samples: list[object] = [None] * count
    best = np.zeros(count)
    seen: list[list[tuple[NDArray[np.float64], float, float, bool]]] = [[] for _ in range(count)]
    uncalibrated = np.zeros(count, dtype=bool)  # seen by a view no calibrated rig placed
    for index, ((labs, weights, spreads, projected), permutation) in enumerate(
        zip(per_view, permutations, strict=True)
    ):
        if permutation is None:
            continue
        for facelet in np.nonzero(weights > 0)[0]:
            target = int(permutation[facelet])
            uncalibrated[target] |= index not in calibrated
            seen[target].append(
                (
                    labs[facelet],
                    float(weights[facelet]),
                    float(spreads[facelet]),
                    bool(projected[facelet]),
                )
            )
    conflicts = []
    for target, views_seen in enumerate(seen):
        kept = _consistent(views_seen, not uncalibrated[target])
        if kept is None:
            # Two views see different colours at one place: trust neither.
            conflicts.append(target)
            continue
        if not kept:
            continue
        lab, weight, spread, _ = max(kept, key=lambda item: item[1])
        best[target] = weight
        samples[target] = FaceletSample(
            (float(lab[0]), float(lab[1]), float(lab[2])), spread, int(weight)
        )
    return samples, best, conflicts


def _conflicts(seen: Sequence[Sequence[NDArray[np.float64]]]) -> list[int]:
    """Facelets whose samples from different views differ by more than CONFLICT_DELTA_E."""
    found = []
    for target, labs in enumerate(seen):
        if len(labs) < 2:
            continue
        stacked = np.asarray(labs)
        # Lightness is left out: one camera may catch the sticker's sheen and another not.
        same_light = np.repeat(stacked[:, None, :], len(stacked), axis=1).copy()
        same_light[..., 1:] = stacked[None, :, 1:]
        gaps = ciede2000(stacked[:, None, :], same_light)
        if float(np.max(gaps)) > CONFLICT_DELTA_E:
            found.append(target)
    return found


#: A sample lighter than another view's, with at most this fraction of its chroma (that one at
#: least MIN_OWN_CHROMA), is the same sticker under glare: glare adds the light's own (white)
#: colour, never chroma. Between views a calibrated rig puts together it need not be blown
#: out: glare on a sticker seen at an angle reads anywhere from L 74 (a blue on a dim 2x2x2,
#: corpus c0037) to 95. Of 81 facelets two such views contradicted on the corpus and nine
#: rendered sets, 80 were the saturated view's colour; the other (4242 rig3 c0031, L 65 grey
#: against blue) lay on a view placed wrong in part.
WASHED_OUT_CHROMA_FRACTION = 0.3
MIN_OWN_CHROMA = 20.0
#: Between views put together by their own colours, the pale sample must be this light
#: (CIELAB L), blown out: such views can pair a white sticker with a misplaced coloured one
#: (corpus c0085 in frames twice as large, as `check`: white at L 84-90 against green, taken
#: as glare, read a +2 as DNF).
WASHED_OUT_LIGHTNESS = 95.0


def _chroma(lab: NDArray[np.float64]) -> float:
    """CIELAB chroma: the distance of (a, b) from grey."""
    return float(np.hypot(lab[1], lab[2]))


def _washed_out(
    washed: NDArray[np.float64], saturated: NDArray[np.float64], calibrated: bool = False
) -> bool:
    """Whether `washed` looks like `saturated` under glare (lighter, nearly white; blown out
    unless both views were put together by a calibrated rig)."""
    own = _chroma(saturated)
    return (
        (calibrated or float(washed[0]) >= WASHED_OUT_LIGHTNESS)
        and float(washed[0]) > float(saturated[0])
        and own >= MIN_OWN_CHROMA
        and _chroma(washed) <= WASHED_OUT_CHROMA_FRACTION * own
    )


#: A sample lighter than another view's and with at most this fraction of its chroma is the
#: same colour with the light's own colour added (sheen): it agrees in hue but not in what it
#: says about the sticker, so the more saturated sample is kept.
SHEEN_CHROMA_FRACTION = 0.6


def _sheened(sample: NDArray[np.float64], other: NDArray[np.float64]) -> bool:
    """Whether `sample` looks like `other` with a sheen on it (lighter, markedly less chroma)."""
    chroma = _chroma(sample)
    other_chroma = _chroma(other)
    return (
        float(sample[0]) > float(other[0])
        and other_chroma >= MIN_OWN_CHROMA
        and chroma <= SHEEN_CHROMA_FRACTION * other_chroma
    )


def _paler(sample: NDArray[np.float64], other: NDArray[np.float64]) -> bool:
    """Whether CIELAB `sample` is lighter than `other` and less chromatic: what light added
    over a sticker (a reflection, a sheen) makes of its colour."""
    return float(sample[0]) > float(other[0]) and _chroma(sample) < _chroma(other)


def _consistent(
    samples: list[tuple[NDArray[np.float64], float, float, bool]],
    calibrated: bool = False,
) -> list[tuple[NDArray[np.float64], float, float, bool]] | None:
    """The samples of one facelet that can be trusted, or None if the views contradict
    (`calibrated`: the views were put together by a calibrated rig, see `_washed_out`)."""
    if len(samples) < 2:
        return samples
    if not _conflicts([[s[0] for s in samples]]):
        clear = [s for s in samples if not any(_sheened(s[0], o[0]) for o in samples)]
        return clear or samples
    detected = [s for s in samples if not s[3]]
    if detected and len(detected) < len(samples):
        projected = [s for s in samples if s[3]]
        saturated = max(projected, key=lambda s: _chroma(s[0]))
        if all(_washed_out(s[0], saturated[0]) for s in detected):
            # A sticker blown out by a reflected light still has an outline; the colour is
            # where the light is not (1618 hands c0028: a lamp mirrored over a blue face).
            return _consistent(projected, calibrated)
        if calibrated and any(_paler(s[0], saturated[0]) for s in detected):
            # A reflection short of blowing a sticker out leaves it lighter and paler, its
            # outline intact (corpus c0176: a red outlined at L 90, chroma 34 under a warm
            # lamp's panel, named white, against the red L 47, chroma 76 another camera
            # sampled in the cell; the outline won and a +2 read DNF): trust neither. Only
            # where a calibrated rig put the views together is the projected cell surely the
            # same sticker: views put together by their colours may pair a white sticker with
            # a misplaced cell (corpus c0085 in frames twice as large, as `check`: leaving
            # such facelets unseen let a wrong alignment win, and a +2 read DNF).
            # Three or more views: a majority that agrees, an outlined sticker among them,
            # outvotes the pale one (rig3 c0106: a green blown out to L 99.8 in one camera,
            # outlined green in another, sampled green in the third).
            majority = _agreeing_majority(samples)
            if majority is not None and any(not s[3] for s in majority):
                return _consistent(majority, calibrated)
            return None
        # A detected sticker's outline is firmer evidence than a projected cell's inside.
        return _consistent(detected, calibrated)
    saturated = max(samples, key=lambda s: _chroma(s[0]))
    rest = [s for s in samples if s is not saturated]
    if all(
        not _conflicts([[saturated[0], s[0]]]) or _washed_out(s[0], saturated[0], calibrated)
        for s in rest
    ):
        return [saturated]
    majority = _agreeing_majority(samples)
    return None if majority is None else _consistent(majority, calibrated)


def _agreeing_majority(
    samples: list[tuple[NDArray[np.float64], float, float, bool]],
) -> list[tuple[NDArray[np.float64], float, float, bool]] | None:
    """A strict majority of one facelet's samples that agree with each other, or None.

    With three or more views it outvotes the rest: a hand, a reflection or a misplaced
    detection spoils one view, not several independent ones at once."""
    for sample in samples:
        group = [s for s in samples if not _conflicts([[sample[0], s[0]]])]
        if 2 * len(group) > len(samples) and not _conflicts([[s[0] for s in group]]):
            return group
    return None


@dataclass(frozen=True, eq=False)
class _Judged:
    """One alignment of the views, fused and judged (`_judge_alignment`)."""

    observation: Observation
    verdict: Verdict
    colors: ColorClassification
    pairs: tuple[FusedPair, ...]
    reasons: tuple[str, ...]
    permutations: tuple[NDArray[np.int64] | None, ...]
    samples: list[object]  # per fused facelet, as `_fused_samples` gives them
    contradicted: int  # facelets the views saw in colours too far apart (left unseen)


def _judge_alignment(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    per_view: Sequence[Samples],
    rotations: Sequence[NDArray[np.float64] | None],
    scheme: ColorScheme | None,
    classify: Classifier | None = None,
    calibrated: frozenset[int] = frozenset(),
) -> _Judged:
    """The views fused under one alignment (`rotations`), classified and judged (`calibrated`:
    the views a calibrated rig put together)."""
    from judgecam.puzzle import get_puzzle
    from judgecam.puzzle.observation import MISSING, UNKNOWN, Observation, PairObservation
    from judgecam.puzzle.verdict import judge
    from judgecam.vision.colors import classify_colors

    permutations = tuple(
        None if rotation is None else model.facelet_permutation(rotation) for rotation in rotations
    )
    samples, _, conflicts = _fused_samples(model, per_view, permutations, calibrated)
    colors = (classify or classify_colors)(samples, model.name, scheme)  # type: ignore[arg-type]
    labels = [UNKNOWN if label is None else label for label in colors.labels]
    for view, permutation in zip(views, permutations, strict=True):
        if view is None or permutation is None:
            continue
        for facelet in view.missing:
            target = int(permutation[facelet])
            if labels[target] == UNKNOWN:
                labels[target] = MISSING
    pairs, reasons = fuse_pairs(
        model,
        [
            (view.fit, rotation)
            for view, rotation in zip(views, rotations, strict=True)
            if view is not None and rotation is not None
        ],
    )
    if conflicts:
        reasons = (
            *reasons,
            f"the views see different colours on {len(conflicts)} facelet(s) (left as unseen): "
            "a view misread them",
        )
    observation = Observation(
        model.name,
        tuple(labels),
        tuple(PairObservation(p.axis, p.parts, p.angle_deg, p.uncertainty_deg) for p in pairs),
    )
    verdict = judge(get_puzzle(model.name), observation)
    return _Judged(
        observation, verdict, colors, pairs, reasons, permutations, samples, len(conflicts)
    )


#: A calibrated alignment is used only if it is this close (degrees) to a puzzle symmetry.
KNOWN_ALIGNMENT_TOLERANCE_DEG = 20.0


def _known_alignment(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    reference: int,
    index: int,
    world_from_camera: Sequence[NDArray[np.float64] | None] | None,
) -> NDArray[np.float64] | None:
    """The symmetry mapping view `index`'s puzzle frame onto the reference's, from camera poses.

    Both views see one puzzle in one world: world_from_puzzle = world_from_camera x
    camera_from_puzzle in each, so their puzzle frames differ by R_ref^T R_view, which must be
    (close to) one of the puzzle's symmetries.
    """
    if world_from_camera is None:
        return None
    first, second = world_from_camera[reference], world_from_camera[index]
    reference_view, other_view = views[reference], views[index]
    if first is None or second is None or reference_view is None or other_view is None:
        return None
    reference_world = puzzle_in_world(first, reference_view.fit)
    other_world = puzzle_in_world(second, other_view.fit)
    best, angle = nearest_symmetry(model, reference_world, other_world)
    if angle <= KNOWN_ALIGNMENT_TOLERANCE_DEG:
        return best
    # A fit's body is the part group it fitted first: with a layer turned well out of line,
    # one view may take that layer for the body and another the rest (another renderer's
    # 3x3x3 with a layer at -33 degrees: one view's body 33 degrees from the others'). The
    # rig still places them if a part of one sits where a part of the other does, and every
    # such match says the bodies' nearest symmetry: with a layer about half a step out (44.5
    # degrees, seed 6868 rig3 `--hands` c0007) parts match under two symmetries, either of
    # which could be the one.
    matches = [
        symmetry
        for reference_part in _part_frames(model, reference_view.fit, reference_world)
        for other_part in _part_frames(model, other_view.fit, other_world)
        for symmetry, gap in [nearest_symmetry(model, reference_part, other_part)]
        if gap <= KNOWN_ALIGNMENT_TOLERANCE_DEG
    ]
    if matches and all(np.allclose(symmetry, best) for symmetry in matches):
        return best
    return None


def _part_frames(
    model: PuzzleModel, fit: GeometryFit, body_world: NDArray[np.float64]
) -> list[NDArray[np.float64]]:
    """The world rotations of a view's body and of each part it measured turned from it."""
    frames = [body_world]
    for axis, angles in zip(model.axes, fit.part_angles, strict=True):
        for measured in angles:
            if measured is not None and abs(measured.angle_deg) > KNOWN_ALIGNMENT_TOLERANCE_DEG:
                frames.append(body_world @ rotation_about(axis.direction, measured.angle_deg))
    return frames


def puzzle_in_world(
    world_from_camera: NDArray[np.float64], fit: GeometryFit
) -> NDArray[np.float64]:
    """The rotation of a view's puzzle frame (its fit's body) in the world of a calibrated rig:
    world_from_puzzle = world_from_camera x camera_from_puzzle."""
    return np.asarray(world_from_camera)[:3, :3] @ rotation_matrix(fit.rvec)


def nearest_symmetry(
    model: PuzzleModel, first: NDArray[np.float64], second: NDArray[np.float64]
) -> tuple[NDArray[np.float64], float]:
    """The puzzle symmetry closest to the rotation between two world rotations of the puzzle
    (`puzzle_in_world`), and the angle (degrees) the rotation is from it: near 0 when both see
    the same puzzle frame up to the puzzle's symmetry."""
    relative = first.T @ second
    angles = [rotation_angle_deg(symmetry.T @ relative) for symmetry in model.symmetries]
    index = int(np.argmin(angles))
    return np.asarray(model.symmetries[index], dtype=np.float64), angles[index]


def _legal(model: PuzzleModel, observation: Observation) -> bool:
    """Whether some legal puzzle shows the observed colours (unseen ones filled in)."""
    from judgecam.puzzle.completion import complete

    return bool(complete(model.name, observation.facelets).colorings)


def _color_cost(colors: ColorClassification, samples: Sequence[object]) -> float:
    """Sum of squared CIEDE2000 from each seen facelet to its colour's cluster mean."""
    means = {cluster.name: np.array(cluster.lab) for cluster in colors.clusters}
    total = 0.0
    for label, sample in zip(colors.labels, samples, strict=True):
        if label is None or sample is None or label not in means:
            continue
        lab = np.array(sample.lab)  # type: ignore[attr-defined]
        total += float(ciede2000(lab, means[label]) ** 2)
    return total


def fuse_views(
    model: PuzzleModel,
    views: Sequence[ViewEvidence | None],
    scheme: ColorScheme | None = None,
    classify: Classifier | None = None,
    world_from_camera: Sequence[NDArray[np.float64] | None] | None = None,
) -> Fusion:
    """Stage 5: one observation from every view that found the puzzle, and its verdict.

    `world_from_camera` (4x4 per view, OpenCV camera axes), when a calibrated rig gives it,
    aligns the views exactly; otherwise the views' colours and angles decide.
    """
    usable = [i for i, view in enumerate(views) if view is not None and view.fit.found]
    if not usable:
        raise ValueError("fuse_views needs at least one view that found the puzzle")
    count = model.facelet_count
    unseen: Samples = (
        np.full((count, 3), np.nan),
        np.zeros(count),
        np.zeros(count),
        np.zeros(count, dtype=bool),
    )
    per_view = [unseen if view is None else _view_samples(view, count) for view in views]
    reference = max(usable, key=lambda i: float(np.sum(per_view[i][1] > 0)))
    identity = np.eye(3)
    options: list[list[tuple[float, NDArray[np.float64]]]] = []
    discordant: list[int] = []
    known_views: set[int] = set()
    for index in range(len(views)):
        if index == reference:
            options.append([(0.0, identity)])
        elif index not in usable:
            options.append([])
        elif (
            known := _known_alignment(model, views, reference, index, world_from_camera)
        ) is not None:
            options.append([(0.0, known)])
            known_views.add(index)
        else:
            reference_view, other_view = views[reference], views[index]
            assert reference_view is not None and other_view is not None
            scored = _alignment_scores(
                model,
                (reference_view, per_view[reference][0]),
                (other_view, per_view[index][0]),
            )
            if not scored:
                options.append([])
                continue
            best = scored[0][0]
            if best < 0.0:
                # More of the overlap disagrees than agrees under every alignment: the colours
                # cannot say how this view sits on the reference (glare over one camera's view).
                discordant.append(index)
            options.append(
                [(s, model.symmetries[k]) for s, k in scored if s >= best - ALIGNMENT_MARGIN][
                    :MAX_ALIGNMENTS
                ]
            )
    candidates: list[tuple[float, list[NDArray[np.float64] | None]]] = [(0.0, [])]
    for choices in options:
        if not choices:
            candidates = [(score, [*c, None]) for score, c in candidates]
        else:
            candidates = [
                (score + extra, [*c, rotation])
                for score, c in candidates
                for extra, rotation in choices
            ]
    candidates = candidates[: MAX_ALIGNMENTS**2]
    free = [
        index
        for index, choices in enumerate(options)
        if index != reference and len(choices) > 0 and index not in known_views
    ]
    if len(free) > 1:
        candidates = [
            (
                score + _cross_score(model, views, [p[0] for p in per_view], rotations, free),
                rotations,
            )
            for score, rotations in candidates
        ]
    # The reference and the views the rig's poses put on it (the reference alone is no rig).
    calibrated = frozenset({reference, *known_views}) if known_views else frozenset()
    judged = []
    for score, rotations in candidates:
        result = _judge_alignment(model, views, per_view, rotations, scheme, classify, calibrated)
        illegal = not _legal(model, result.observation)
        cost = _color_cost(result.colors, result.samples)
        judged.append((illegal, -score, cost, result, tuple(rotations)))
    # A legal puzzle first, then the alignment the views agree on best, then the colours.
    judged.sort(key=lambda item: (item[0], item[1], item[2]))
    chosen, chosen_rotations = judged[0][3], judged[0][4]
    all_reasons = list(chosen.reasons)
    ambiguous = False
    legal = [item for item in judged if not item[0]]
    # Alignments the views' overlap cannot tell apart must agree on the verdict (the colour
    # cost only ranks them: stage 4 can be wrong too).
    close = [item for item in legal if item[1] <= legal[0][1] + ALIGNMENT_MARGIN] if legal else []
    if close and close[0] is judged[0] and not fits_another_arrangement(close[0][3].colors):
        # The puzzle's colours sit on it in the scheme's arrangement: an alignment that puts
        # them in a mirrored or other one is not how the views sit (two 2x2x2 views sharing
        # no facelet, corpus c0124 and c0202: the alignments giving DNF mirrored the scheme).
        close = [item for item in close if not fits_another_arrangement(item[3].colors)]
    if len(close) > 1:
        close_verdicts = sorted({item[3].verdict.verdict for item in close})
        if len(close_verdicts) > 1:
            ambiguous = True
            all_reasons.append(
                "the views could not be put together unambiguously "
                f"(possible verdicts: {', '.join(close_verdicts)})"
            )
    others = f"view {reference + 1}"
    if len(free) > 1:
        # A view that shares little with the reference (a few facelets, a shade apart) may share
        # a face with another view: it is discordant only if its overlap with all the others,
        # as they are put together, disagrees more than it agrees (seed 8888 rig3 c0045: -0.3
        # at best with the reference).
        labs = [p[0] for p in per_view]
        reference_view = views[reference]
        assert reference_view is not None
        still = []
        for index in discordant:
            view, rotation = views[index], chosen_rotations[index]
            if view is None or rotation is None:
                still.append(index)
                continue
            agreement = _alignment_score(
                model, (reference_view, labs[reference]), (view, labs[index]), rotation
            ) + _cross_score(model, views, labs, chosen_rotations, free, only=index)
            if agreement < 0.0:
                still.append(index)
        discordant = still
        others = "the other views"
    if discordant and not ambiguous:
        ambiguous = True
        all_reasons.append(
            "the views could not be put together: under every alignment, the overlap of view "
            + ", ".join(str(index + 1) for index in discordant)
            + f" with {others} disagrees more than it agrees"
        )
    return replace(
        _fusion(model, per_view, chosen, chosen_rotations),
        reasons=tuple(all_reasons),
        ambiguous=ambiguous,
        alternatives=tuple(_fusion(model, per_view, item[3], item[4]) for item in close[1:]),
    )


def fits_another_arrangement(colors: ColorClassification | None) -> bool:
    """Whether stage 4 found the colours fit the scheme better in an arrangement it forbids."""
    from judgecam.vision.color_naming import ARRANGEMENT_DOUBT

    return colors is not None and any(
        reason.startswith(ARRANGEMENT_DOUBT) for reason in colors.reasons
    )


def _fusion(
    model: PuzzleModel,
    per_view: Sequence[Samples],
    judged: _Judged,
    rotations: tuple[NDArray[np.float64] | None, ...],
) -> Fusion:
    """A `Fusion` of one alignment's `_judge_alignment` result, with the faces no view saw."""
    permutations = judged.permutations
    seen = np.zeros(model.facelet_count, dtype=bool)
    for (_, weights, _, _), permutation in zip(per_view, permutations, strict=True):
        if permutation is not None:
            seen[permutation[weights > 0]] = True
    hidden = tuple(
        name
        for face_index, name in enumerate(model.face_names)
        if not np.any(seen[model.facelet_face == face_index])
    )
    return Fusion(
        observation=judged.observation,
        verdict=judged.verdict,
        colors=judged.colors,
        permutations=permutations,
        pairs=judged.pairs,
        hidden_faces=hidden,
        reasons=tuple(judged.reasons),
        ambiguous=False,
        rotations=rotations,
        contradicted=judged.contradicted,
        samples=tuple(judged.samples),
    )
