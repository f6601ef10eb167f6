"""Accuracy and speed of `judgecam check` on a ground-truth corpus (tests/images/).

    python -m judgecam.vision.evaluate tests/images [--limit N] [--json] [--learned]
        [--schemes DIR] [--details] [--captures-json FILE] [--rig-poses] [--why-unread]

For every capture of the manifest, runs the full pipeline with the views' true intrinsics and
compares with the truth file: verdicts (unsolved called solved must be 0), pair angles (error and
whether the stated uncertainty covers it), facelet colours, and the time of each stage per view.
The fused observation lives in an arbitrary copy of the puzzle frame; it is mapped onto the
truth's frame by the puzzle symmetry that best matches detected facelets to the truth's
projected facelet centres.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import logging
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import Intrinsics
from judgecam.vision.colorspace import bgr_to_lab
from judgecam.vision.fuse import Classifier, _map_pair, stated_uncertainty
from judgecam.vision.model import PuzzleModel, puzzle_model
from judgecam.vision.perturb import PERTURBATIONS, miscalibrated, perturbed
from judgecam.vision.pipeline import CheckResult, ViewResult, analyse_view, judge_views
from judgecam.vision.projected import MIN_FACING

if TYPE_CHECKING:
    from judgecam.calibration.scheme import ColorScheme

logger = logging.getLogger(__name__)

UNSOLVED = ("+2", "DNF")


@dataclass
class CaptureScore:
    """One capture's comparison with its truth."""

    capture: str
    puzzle: str
    truth: str
    verdict: str
    reasons: tuple[str, ...]
    angle_errors: list[float] = field(default_factory=list)
    covered: list[bool] = field(default_factory=list)
    colors_right: int = 0  # up to renaming the colours (custom schemes have other names)
    colors_named_right: int = 0
    colors_seen: int = 0
    #: The seen facelets' colours against the truth's sticker at the pixels they were read at
    #: (`colors_at_their_pixels`): colour reading alone, whatever slot a layer was snapped to.
    colors_right_at_pixels: int = 0
    colors_seen_at_pixels: int = 0
    assigned_right: int = 0
    assigned: int = 0
    view_placed_right: int = 0
    view_placed: int = 0
    view_angle_errors: list[float] = field(default_factory=list)
    view_covered: list[bool] = field(default_factory=list)
    views: int = 0
    stage_ms: dict[str, float] = field(default_factory=dict)
    rig: str = ""
    perfect_vision: str = ""  # the verdict on what the cameras could see, read perfectly
    #: ... read with perfect colours and angles as sure as the issue's target (TARGET_ANGLE_DEG)
    target_vision: str = ""
    #: ... and only facelets some view shows facing it at projected.MIN_FACING or more: what
    #: a reader of cells no more slanted than ours could answer (`seeable_facelets`)
    readable_vision: str = ""
    reads_truth: bool | None = None  # the fused reading is the true state (see `reads_truth`)
    review_because: tuple[str, ...] = ()  # what made it a review (`CheckResult.review_because`)
    #: The truth's seeable facelets (`seeable_facelets`) the fused reading leaves unseen: what
    #: vision, not the cameras' placement, lost. All of them if the reading was not aligned.
    unread: tuple[int, ...] = ()
    #: With `why_unread`: per unread facelet some view shows facing it at MIN_FACING or more,
    #: per such view, (view image, truth facelet, why that view read nothing there).
    unread_why: tuple[tuple[str, int, str], ...] = ()


@dataclass
class ViewScore:
    """Stages 1-3 of one view against its truth, in the view's own puzzle frame."""

    placed: int = 0
    placed_right: int = 0
    angle_errors: list[float] = field(default_factory=list)
    covered: list[bool] = field(default_factory=list)


def evaluate_view(
    view: ViewResult, view_truth: dict[str, Any], truth: dict[str, Any], model: PuzzleModel
) -> ViewScore:
    """Facelet placement and pair angle errors of one view (whatever the other views did)."""
    score = ViewScore()
    own = _alignment([(view, view_truth, np.arange(model.facelet_count))], model)
    if own is None or view.fit is None:
        return score
    rotation, _, score.placed_right, score.placed = own
    truth_pairs = {(p["axis"], tuple(p["parts"])): p for p in truth["pairs"]}
    for pair in view.fit.pairs:
        parts = model.axis_and_parts(pair.axis, pair.parts)[1]
        expected = truth_pairs.get(_map_pair(model, rotation, pair.axis, parts))
        if expected is None:
            continue
        step = float(expected["step_deg"])
        error = (pair.angle_deg - float(expected["residual_deg"]) + step / 2) % step - step / 2
        score.angle_errors.append(float(error))
        score.covered.append(abs(error) <= stated_uncertainty(pair.sigma_deg))
    return score


def intrinsics_from_truth(view: dict[str, Any]) -> Intrinsics:
    return Intrinsics(
        np.asarray(view["camera_matrix"], dtype=np.float64),
        np.asarray(view["dist_coeffs"], dtype=np.float64),
    )


def truth_alignment(
    result: CheckResult, truth: dict[str, Any], model: PuzzleModel
) -> tuple[NDArray[np.float64], NDArray[np.int64], int, int] | None:
    """(rotation, permutation) taking the fused frame onto the truth frame, or None; with
    how many detections it maps onto the truth facelet at their place, out of how many."""
    if result.fusion is None:
        return None
    return _alignment(
        list(zip(result.views, truth["views"], result.fusion.permutations, strict=True)), model
    )


def _alignment(
    views: list[tuple[ViewResult, dict[str, Any], NDArray[np.int64] | None]], model: PuzzleModel
) -> tuple[NDArray[np.float64], NDArray[np.int64], int, int] | None:
    pairs = [
        (int(permutation[assigned]), int(sticker["index"]))
        for view, view_truth, permutation in views
        if permutation is not None
        for assigned, sticker in _placed_on_stickers(view, view_truth)
    ]
    if not pairs:
        return None
    fused = np.array([p[0] for p in pairs])
    true = np.array([p[1] for p in pairs])
    best = max(
        model.symmetries,
        key=lambda rotation: int(np.sum(model.facelet_permutation(rotation)[fused] == true)),
    )
    permutation = model.facelet_permutation(best)
    return best, permutation, int(np.sum(permutation[fused] == true)), len(pairs)


def _partition_agreement(pairs: list[tuple[str, str]]) -> int:
    """Facelets right under the best one-to-one renaming of our colours onto the truth's.

    Which name a colour gets does not matter to the verdict (only single-coloured faces do),
    and a custom scheme's names are unknown without `--scheme`.
    """
    counts = Counter(pairs)
    used_ours: set[str] = set()
    used_truth: set[str] = set()
    right = 0
    for (ours, expected), count in counts.most_common():
        if ours in used_ours or expected in used_truth:
            continue
        used_ours.add(ours)
        used_truth.add(expected)
        right += count
    return right


def reads_truth(labels: Sequence[str], state_colors: Sequence[str], model: PuzzleModel) -> bool:
    """Whether every facelet the reading names has its true colour, in some frame (a symmetry
    of the puzzle) and under some renaming: the state it judged is the real one.

    A verdict can be right on a wrong reading (a DNF read with a few facelets wrong stays DNF,
    a layer misread by a quarter turn can turn one move into another); those are right by
    luck, and `summarise` lists them.
    """
    known = [index for index, label in enumerate(labels) if label not in ("unknown", "missing")]
    for rotation in model.symmetries:
        permutation = model.facelet_permutation(rotation)
        pairs = [(labels[i], str(state_colors[int(permutation[i])])) for i in known]
        if _partition_agreement(pairs) == len(known):
            return True
    return False


def _stickers_under(
    view_truth: dict[str, Any], centers: Sequence[NDArray[np.float64]], sizes: Sequence[float]
) -> list[dict[str, Any] | None]:
    """For each point (pixels) with its sticker size, the mostly unhidden rendered sticker whose
    centre lies within half that size of it, or None."""
    stickers = [f for f in view_truth["facelets"] if f.get("visibility", 1.0) > 0.5]
    if not stickers:
        return [None] * len(centers)
    truth_centers = np.array([f["center_px"] for f in stickers], dtype=np.float64)
    found: list[dict[str, Any] | None] = []
    for center, size in zip(centers, sizes, strict=True):
        gaps = np.linalg.norm(truth_centers - center, axis=1)
        nearest = int(np.argmin(gaps))
        found.append(stickers[nearest] if gaps[nearest] < 0.5 * size else None)
    return found


def _placed_on_stickers(
    view: ViewResult, view_truth: dict[str, Any]
) -> list[tuple[int, dict[str, Any]]]:
    """(model facelet, the rendered sticker under it) for every detection the view's fit
    placed on a sticker (`_stickers_under`)."""
    if view.fit is None or view.segmentation is None:
        return []
    placed = [(d, int(a)) for d, a in enumerate(view.fit.assignment) if a >= 0]
    facelets = [view.segmentation.facelets[d] for d, _ in placed]
    under = _stickers_under(
        view_truth, [f.center_px for f in facelets], [f.size_px for f in facelets]
    )
    return [(a, sticker) for (_, a), sticker in zip(placed, under, strict=True) if sticker]


def _projected_on_stickers(
    view: ViewResult, view_truth: dict[str, Any]
) -> list[tuple[int, dict[str, Any]]]:
    """(model facelet, the rendered sticker under it) for every cell the view sampled where its
    fit projects it (`_stickers_under`)."""
    samples = [p.sample for p in view.projected]
    under = _stickers_under(
        view_truth, [s.corners_px.mean(axis=0) for s in samples], [s.size_px for s in samples]
    )
    return [
        (p.facelet, sticker) for p, sticker in zip(view.projected, under, strict=True) if sticker
    ]


def colors_at_their_pixels(result: CheckResult, truth: dict[str, Any]) -> list[tuple[str, str]]:
    """(our colour, the truth's colour) of every fused facelet a view outlined a sticker on or
    sampled where its fit projects the cell, the truth's being that of the rendered sticker
    under the sample's centre (the most common one where the views' samples fell on different
    stickers). Colours implied by the visible pieces, sampled nowhere, are not counted.

    A layer turned about half a step (a cube's 45 degrees, a Pyraminx's 60) can be snapped
    either way; snapped the other way from the truth's, its stickers' slots are a step off and
    the slot-by-slot comparison (`colors_right`) counts their colours wrong although each was
    read right. This comparison asks only whether the colour read is the sticker's.
    """
    if result.fusion is None:
        return []
    labels = result.fusion.observation.facelets
    found: dict[int, list[str]] = {}
    views = zip(result.views, truth["views"], result.fusion.permutations, strict=True)
    for view, view_truth, permutation in views:
        if permutation is None:
            continue
        for assigned, sticker in (
            *_placed_on_stickers(view, view_truth),
            *_projected_on_stickers(view, view_truth),
        ):
            target = int(permutation[assigned])
            if labels[target] not in ("unknown", "missing"):
                found.setdefault(target, []).append(str(sticker["color"]))
    return [
        (labels[index], Counter(colors).most_common(1)[0][0]) for index, colors in found.items()
    ]


def score_capture(result: CheckResult, truth: dict[str, Any], model: PuzzleModel) -> CaptureScore:
    score = CaptureScore(
        capture=str(truth["id"]),
        puzzle=model.name,
        truth=str(truth["verdict"]),
        verdict=result.verdict,
        reasons=result.reasons,
        views=len(result.views),
        rig=str(truth.get("rig", "")),
        perfect_vision=perfect_vision_verdict(truth),
        target_vision=perfect_vision_verdict(truth, TARGET_ANGLE_DEG),
        readable_vision=perfect_vision_verdict(truth, TARGET_ANGLE_DEG, MIN_FACING),
        review_because=result.review_because,
        unread=tuple(sorted(seeable_facelets(truth))),
    )
    for view in result.views:
        for stage, value in view.timings_ms:
            score.stage_ms[stage] = score.stage_ms.get(stage, 0.0) + value
    if truth["puzzle"] == "none":
        return score
    for view, view_truth in zip(result.views, truth["views"], strict=True):
        view_score = evaluate_view(view, view_truth, truth, model)
        score.view_placed_right += view_score.placed_right
        score.view_placed += view_score.placed
        score.view_angle_errors.extend(view_score.angle_errors)
        score.view_covered.extend(view_score.covered)
    alignment = truth_alignment(result, truth, model)
    if alignment is None or result.fusion is None:
        return score
    rotation, permutation, score.assigned_right, score.assigned = alignment
    colors = truth["state_colors"]
    seen = [
        (label, colors[int(permutation[index])])
        for index, label in enumerate(result.fusion.observation.facelets)
        if label not in ("unknown", "missing")
    ]
    score.colors_seen = len(seen)
    read = {
        int(permutation[index])
        for index, label in enumerate(result.fusion.observation.facelets)
        if label != "unknown"
    }
    score.unread = tuple(index for index in score.unread if index not in read)
    score.colors_named_right = sum(label == expected for label, expected in seen)
    score.colors_right = _partition_agreement(seen)
    at_pixels = colors_at_their_pixels(result, truth)
    score.colors_seen_at_pixels = len(at_pixels)
    score.colors_right_at_pixels = _partition_agreement(at_pixels)
    score.reads_truth = reads_truth(result.fusion.observation.facelets, colors, model)
    truth_pairs = {(p["axis"], tuple(p["parts"])): p for p in truth["pairs"]}
    for pair in result.fusion.pairs:
        axis_name, parts = _map_pair(model, rotation, pair.axis, pair.parts)
        expected = truth_pairs.get((axis_name, parts))
        if expected is None:
            continue
        step = float(expected["step_deg"])
        error = (pair.angle_deg - float(expected["residual_deg"]) + step / 2) % step - step / 2
        score.angle_errors.append(float(error))
        score.covered.append(abs(error) <= pair.uncertainty_deg)
    return score


#: A facelet counts as seeable in a view when at least this fraction of it is unoccluded in the
#: renderer's ID buffer and it covers at least SEEABLE_PIXELS pixels.
SEEABLE_VISIBILITY = 0.5
SEEABLE_PIXELS = 40


def truth_facing(truth: dict[str, Any], view: dict[str, Any]) -> NDArray[np.float64]:
    """Per facelet (truth indices): the cosine between its normal, its layer turned as the
    truth has it, and the line of sight of the view's camera (negative: it faces away)."""
    model = puzzle_model(str(truth["puzzle"]))
    centers = model.facelet_corners.mean(axis=1)
    normals = model.facelet_normals.copy()
    for axis in model.axes:
        for part, angle in enumerate(truth["part_rotations"].get(axis.name, ())):
            # The state is the snapped one: its facelets stand turned by what is left over.
            residual = float(angle) - round(float(angle) / axis.step_deg) * axis.step_deg
            if residual == 0.0:
                continue
            turn, _ = cv2.Rodrigues(np.radians(residual) * axis.direction)
            on_part = axis.facelet_part == part
            centers[on_part] = centers[on_part] @ turn.T
            normals[on_part] = normals[on_part] @ turn.T
    camera_from_puzzle = np.linalg.inv(np.asarray(view["world_from_camera"], dtype=np.float64))
    camera_from_puzzle = camera_from_puzzle @ np.asarray(truth["world_from_puzzle"], np.float64)
    rotation, shift = camera_from_puzzle[:3, :3], camera_from_puzzle[:3, 3]
    rays = centers @ rotation.T + shift
    facing = -np.einsum("ij,ij->i", normals @ rotation.T, rays) / np.linalg.norm(rays, axis=1)
    return np.asarray(facing, dtype=np.float64)


def seeable_facelets(truth: dict[str, Any], min_facing: float | None = None) -> set[int]:
    """The facelets (truth indices) some view shows: at least SEEABLE_VISIBILITY of it
    unoccluded and SEEABLE_PIXELS large; with `min_facing`, also facing that view at least
    that squarely (`truth_facing`)."""
    seeable = set()
    for view in truth["views"]:
        facing = truth_facing(truth, view) if min_facing is not None else None
        for facelet in view["facelets"]:
            index = int(facelet["index"])
            if (
                facelet.get("visibility", 1.0) >= SEEABLE_VISIBILITY
                and facelet.get("pixels", SEEABLE_PIXELS) >= SEEABLE_PIXELS
                and (facing is None or facing[index] >= min_facing)
            ):
                seeable.add(index)
    return seeable


def seeable_missing(
    truth: dict[str, Any], missing: set[int], min_facing: float | None = None
) -> set[int]:
    """The facelets of `missing` (stickers off) whose bare cell some view shows: it faces that
    camera (at least `min_facing`, if given) and the view sees another facelet of its face.
    The renderer lists no facelet for a sticker that is off, so its cell is judged by its face."""
    if not missing:
        return set()
    model = puzzle_model(str(truth["puzzle"]))
    shown = set()
    for view in truth["views"]:
        facing = truth_facing(truth, view)
        faces = {
            str(facelet["face"])
            for facelet in view["facelets"]
            if facelet.get("visibility", 1.0) >= SEEABLE_VISIBILITY
        }
        for index in missing:
            face = model.face_names[int(model.facelet_face[index])]
            if face in faces and facing[index] > (min_facing or 0.0):
                shown.add(index)
    return shown


def why_unread(
    result: CheckResult,
    truth: dict[str, Any],
    images: Sequence[NDArray[np.uint8]],
    model: PuzzleModel,
    unread: Sequence[int],
) -> tuple[tuple[str, int, str], ...]:
    """Why each view that shows an `unread` facelet (truth index) squarely enough to read
    (`seeable_facelets` at MIN_FACING) read nothing there: the view left out, or the test of
    `projected.project_facelets` it failed (`projected.unsampled_reasons`). A view placed by
    the rig is asked without the angles it borrowed, so its parts may show as not tight; a
    view used is asked with the angles the second look borrowed for it (`borrowed_angles`)."""
    from judgecam.vision.projected import unsampled_reasons
    from judgecam.vision.second_look import borrowed_angles

    found: list[tuple[str, int, str]] = []
    fusion = result.fusion
    permutations = fusion.permutations if fusion is not None else ()
    rotations = fusion.rotations if fusion is not None else ()
    for number, (view, view_truth, image) in enumerate(
        zip(result.views, truth["views"], images, strict=True)
    ):
        readable = seeable_facelets({**truth, "views": [view_truth]}, MIN_FACING)
        wanted = [index for index in unread if index in readable]
        if not wanted:
            continue
        name = str(view_truth["image"])
        fit, segmentation = view.fit, view.segmentation
        own = _alignment([(view, view_truth, np.arange(model.facelet_count))], model)
        used = number < len(permutations) and permutations[number] is not None
        if not used or fit is None or segmentation is None or own is None:
            # The pipeline says why it left a view out as "IMAGE: why; view left out".
            prefix = f"{view.name}: "
            said = next(
                (
                    r.removeprefix(prefix)
                    for r in result.reasons
                    if r.startswith(prefix) and r.endswith("view left out")
                ),
                (*view.problems, "not put together with the other views")[0],
            )
            why = f"view left out: {said.removesuffix('; view left out')}"
            found.extend((name, index, why) for index in wanted)
            continue
        permutation = own[1]  # the view's facelet -> the truth's
        # Asked as the second look asked it: with the angles it borrowed from the other views.
        rotation = rotations[number] if number < len(rotations) else None
        borrowed = (
            None
            if rotation is None or fusion is None
            else borrowed_angles(model, fit, rotation, fusion.pairs)
        )
        asked, placed = borrowed if borrowed is not None else (fit, frozenset())
        reasons = unsampled_reasons(
            image, segmentation.facelets, asked, model, view.intrinsics, view.missing, placed
        )
        sampled = {projected.facelet for projected in view.projected}
        for facelet in range(model.facelet_count):
            index = int(permutation[facelet])
            if index not in wanted:
                continue
            lost = "read in this view, lost in fusion"
            found.append((name, index, lost if facelet in sampled else reasons.get(facelet, lost)))
    return tuple(sorted(found))


#: The angle error the issue allows at the 95th percentile (degrees): a stage 3 that meets its
#: target states about this much uncertainty.
TARGET_ANGLE_DEG = 3.0


def perfect_vision_verdict(
    truth: dict[str, Any], uncertainty_deg: float = 0.5, min_facing: float | None = None
) -> str:
    """The verdict on what the views could show: every seeable facelet (any view) with its true
    colour, every pair's true residual with `uncertainty_deg`, the rest unseen.

    The bound on the review rate that no vision stage can beat with these cameras: a facelet
    no camera sees (the bottom face, a grazing side) stays unknown to any method. With
    TARGET_ANGLE_DEG, the bound for angles measured as well as the issue asks: a pair within
    that of a limit (a 2x2x2 layer at 43.6 degrees, a tip at 59.3) is a judge's call then too.
    With `min_facing`, facelets seen only more slanted than that count as unseen.
    """
    from judgecam.puzzle.observation import MISSING, UNKNOWN, Observation, PairObservation
    from judgecam.puzzle.registry import get_puzzle
    from judgecam.puzzle.verdict import judge

    if truth["puzzle"] == "none":
        return "review"
    seeable = seeable_facelets(truth, min_facing)
    missing = {int(index) for index in truth.get("missing_facelets", [])}
    # A sticker off where no camera looks is as unknown as a colour there (session 31: the
    # bound had counted two stickers off on the face on the mat as seen).
    seen_off = seeable_missing(truth, missing, min_facing)
    labels = tuple(
        MISSING
        if index in seen_off
        else UNKNOWN
        if index in missing or index not in seeable
        else color
        for index, color in enumerate(truth["state_colors"])
    )
    pairs = tuple(
        PairObservation(
            str(p["axis"]), tuple(p["parts"]), float(p["residual_deg"]), uncertainty_deg
        )
        for p in truth["pairs"]
    )
    observation = Observation(str(truth["puzzle"]), labels, pairs)
    return judge(get_puzzle(str(truth["puzzle"])), observation).verdict


def oracle_classifier(views: list[ViewResult], truth: dict[str, Any]) -> Classifier:
    """A stand-in for stage 4 that reads each detected facelet's colour from the truth.

    Diagnostic only: it measures stages 1-3 and 5 as if colours were perfect. Each fused sample
    is traced back to the detection it came from by its CIELAB value.
    """
    from judgecam.vision.color_model import ColorClassification

    table: dict[tuple[float, ...], str] = {}
    for view, view_truth in zip(views, truth["views"], strict=True):
        if view.segmentation is None:
            continue
        facelets = [f for f in view_truth["facelets"] if f.get("visibility", 1.0) > 0.5]
        if not facelets:
            continue
        centers = np.array([f["center_px"] for f in facelets], dtype=np.float64)
        # Facelets sampled where the fit projects them are traced like detections: the truth
        # colour at their place is what a perfect stage 4 would read there.
        sampled = [*view.segmentation.facelets, *(p.sample for p in view.projected)]
        for detection in sampled:
            gaps = np.linalg.norm(centers - detection.center_px, axis=1)
            nearest = int(np.argmin(gaps))
            if gaps[nearest] < 0.5 * detection.size_px:
                key = tuple(np.round(bgr_to_lab(detection.mean_bgr), 4).tolist())
                table[key] = str(facelets[nearest]["color"])

    def classify(samples: Any, puzzle: str, scheme: Any) -> ColorClassification:
        labels = tuple(
            None if sample is None else table.get(tuple(np.round(sample.lab, 4).tolist()))
            for sample in samples
        )
        confidences = tuple(0.0 if label is None else 1.0 for label in labels)
        return ColorClassification(puzzle, labels, confidences, (), (), (1.0, 1.0, 1.0))

    return classify


def truth_files(corpus: Path) -> list[Path]:
    """The captures' truth files: from the manifest, or (while a corpus is still being
    rendered) every truth file whose images are all there."""
    manifest = corpus / "manifest.json"
    if manifest.is_file():
        entries = json.loads(manifest.read_text(encoding="utf-8"))["captures"]
        return [corpus / entry["truth"] for entry in entries]
    found = []
    for path in sorted(corpus.glob("c*.json")):
        try:
            truth = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if all((corpus / view["image"]).is_file() for view in truth.get("views", [])):
            found.append(path)
    return found


def scheme_file(schemes: Path, truth: dict[str, Any]) -> Path | None:
    """The calibrated scheme of a capture's puzzle and scheme name: `schemes/PUZZLE-NAME.toml`
    (e.g. `333-pastel.toml`); None for an empty mat.

    Assumes the station knows which registered scheme the competitor's puzzle has, as when
    each competitor's puzzle is calibrated before the round: the name comes from the truth,
    the colours only from the organiser's calibration photos.
    """
    if truth["puzzle"] == "none" or not truth.get("scheme"):
        return None
    return schemes / f"{truth['puzzle']}-{truth['scheme']['name']}.toml"


def _capture_scheme(schemes: Path | None, truth: dict[str, Any]) -> ColorScheme | None:
    """The scheme `scheme_file` names, loaded (SchemeError if missing or unusable)."""
    from judgecam.calibration.scheme import load_scheme

    path = None if schemes is None else scheme_file(schemes, truth)
    return None if path is None else load_scheme(path, str(truth["puzzle"]))


#: `--scale` bounds: below a quarter a 1280x720 view's stickers are a few pixels wide; above
#: four times the images would be larger than any camera mode the station uses.
MIN_SCALE = 0.25
MAX_SCALE = 4.0


def in_larger_frame(
    image: NDArray[np.uint8], view: dict[str, Any], factor: float
) -> tuple[NDArray[np.uint8], dict[str, Any]]:
    """A view placed in the middle of a frame `factor` times as wide and high, its borders
    replicated, with its truth moved along (principal point, facelet pixels): what the same
    lens on a larger sensor sees, the puzzle smaller in the frame. Measures stage 1's search
    on frames larger than the corpus's (`--larger-frame`)."""
    height, width = image.shape[:2]
    top, left = round(height * (factor - 1) / 2), round(width * (factor - 1) / 2)
    bottom = round(height * factor) - height - top
    right = round(width * factor) - width - left
    larger = cv2.copyMakeBorder(image, top, bottom, left, right, cv2.BORDER_REPLICATE)
    moved = copy.deepcopy(view)
    moved["image_size"] = [int(larger.shape[1]), int(larger.shape[0])]
    moved["camera_matrix"][0][2] += left
    moved["camera_matrix"][1][2] += top
    for facelet in moved["facelets"]:
        facelet["center_px"] = [facelet["center_px"][0] + left, facelet["center_px"][1] + top]
        if "polygon_px" in facelet:
            facelet["polygon_px"] = [[x + left, y + top] for x, y in facelet["polygon_px"]]
    return np.asarray(larger, np.uint8), moved


def rescaled(
    image: NDArray[np.uint8], view: dict[str, Any], factor: float
) -> tuple[NDArray[np.uint8], dict[str, Any]]:
    """A view resized by `factor` (area-averaged down, bilinear up), with its truth scaled
    along (focal lengths, principal point, facelet pixels): the same scene seen by a camera of
    another resolution, such as a 640x360 USB camera or a 1920x1080 mode (`--scale`)."""
    height, width = image.shape[:2]
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    scale_x, scale_y = size[0] / width, size[1] / height
    interpolation = cv2.INTER_AREA if factor < 1.0 else cv2.INTER_LINEAR
    resized = cv2.resize(image, size, interpolation=interpolation)

    def moved(x: float, y: float) -> list[float]:
        # cv2.resize maps pixel centres: x' + 0.5 = (x + 0.5) * scale.
        return [(x + 0.5) * scale_x - 0.5, (y + 0.5) * scale_y - 0.5]

    scaled = copy.deepcopy(view)
    scaled["image_size"] = [size[0], size[1]]
    matrix = scaled["camera_matrix"]
    matrix[0][0] *= scale_x
    matrix[0][1] *= scale_x
    matrix[1][1] *= scale_y
    matrix[0][2], matrix[1][2] = moved(matrix[0][2], matrix[1][2])
    for facelet in scaled["facelets"]:
        facelet["center_px"] = moved(*facelet["center_px"])
        if "polygon_px" in facelet:
            facelet["polygon_px"] = [moved(x, y) for x, y in facelet["polygon_px"]]
        if "pixels" in facelet:
            facelet["pixels"] = facelet["pixels"] * scale_x * scale_y
    return np.asarray(resized, np.uint8), scaled


def evaluate(
    corpus: Path,
    limit: int | None = None,
    oracle_colors: bool = False,
    rig_poses: bool = False,
    learned: bool = False,
    schemes: Path | None = None,
    larger_frame: float = 1.0,
    perturb: str | None = None,
    rig_error: tuple[float, float] | None = None,
    diagnose: bool = False,
    scale: float = 1.0,
) -> list[CaptureScore]:
    """Judge every capture of `corpus` and score it against its truth; `schemes` is a folder of
    calibrated schemes (`scheme_file`), None to resolve the colours from the images alone;
    `larger_frame` > 1 places every view in a larger frame (`in_larger_frame`); `perturb`
    changes every view first (`perturb.PERTURBATIONS`); `rig_error` (degrees, mm) moves every
    rig pose as a calibration that far off would (`perturb.miscalibrated`); `diagnose` says
    why each unread facelet went unread (`why_unread`); `scale` != 1 resizes every view first,
    as a camera of another resolution would see it (`rescaled`)."""
    detector = None
    if learned:
        from judgecam.vision.detector_onnx import shared_detector

        detector = shared_detector()
    scores = []
    for truth_file in truth_files(corpus)[:limit]:
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        # An empty mat is judged as the event's puzzle would be (a 3x3x3): it must be review.
        puzzle = "333" if truth["puzzle"] == "none" else str(truth["puzzle"])
        model = puzzle_model(puzzle)
        images = []
        cameras = []
        for index, view in enumerate(truth["views"]):
            read = cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR)
            if read is None:
                raise FileNotFoundError(corpus / view["image"])
            image: NDArray[np.uint8] = np.asarray(read, dtype=np.uint8)
            if perturb is not None:
                image = perturbed(image, perturb, str(view["image"]))
            if scale != 1.0:
                image, truth["views"][index] = rescaled(image, view, scale)
                view = truth["views"][index]
            if larger_frame > 1.0:
                image, truth["views"][index] = in_larger_frame(image, view, larger_frame)
                view = truth["views"][index]
            images.append((str(view["image"]), image))
            cameras.append(intrinsics_from_truth(view))
        model_views = [
            analyse_view(image, model, camera, name, detector)
            for (name, image), camera in zip(images, cameras, strict=True)
        ]
        classify = (
            oracle_classifier(model_views, truth)
            if oracle_colors and truth["puzzle"] != "none"
            else None
        )
        poses = (
            [np.asarray(view["world_from_camera"], dtype=np.float64) for view in truth["views"]]
            if rig_poses
            else None
        )
        if poses is not None and rig_error is not None:
            poses = [
                miscalibrated(pose, *rig_error, str(view["image"]))
                for pose, view in zip(poses, truth["views"], strict=True)
            ]
        scheme = _capture_scheme(schemes, truth)
        result = judge_views(model_views, puzzle, scheme, classify, poses)
        score = score_capture(result, truth, model)
        if diagnose and truth["puzzle"] != "none":
            score.unread_why = why_unread(
                result, truth, [image for _, image in images], model, score.unread
            )
        logger.info("%s %s truth %s -> %s", score.capture, score.puzzle, score.truth, score.verdict)
        scores.append(score)
    return scores


def _rate(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def summarise(scores: list[CaptureScore]) -> dict[str, Any]:
    """The numbers the issue asks for."""
    total = len(scores)
    unsolved_called_solved = [
        s.capture for s in scores if s.truth in UNSOLVED and s.verdict == "solved"
    ]
    solved_penalised = [s.capture for s in scores if s.truth == "solved" and s.verdict in UNSOLVED]
    wrong_penalty = [
        s.capture
        for s in scores
        if s.truth in UNSOLVED and s.verdict in UNSOLVED and s.truth != s.verdict
    ]
    reviews = [s.capture for s in scores if s.verdict == "review"]
    decided = [s for s in scores if s.verdict != "review"]
    misread = [s.capture for s in decided if s.reads_truth is False]
    errors = np.abs(np.concatenate([s.angle_errors for s in scores])) if scores else np.zeros(0)
    covered = [c for s in scores for c in s.covered]
    view_errors = (
        np.abs(np.concatenate([s.view_angle_errors for s in scores])) if scores else np.zeros(0)
    )
    view_covered = [c for s in scores for c in s.view_covered]
    views = sum(s.views for s in scores)
    stages: Counter[str] = Counter()
    for s in scores:
        stages.update(s.stage_ms)
    confusion: Counter[str] = Counter(f"{s.truth} -> {s.verdict}" for s in scores)
    rigs = sorted({s.rig for s in scores})
    return {
        "captures": total,
        "correct_verdicts": sum(s.truth == s.verdict for s in scores),
        "unsolved_called_solved": unsolved_called_solved,
        "solved_called_plus2_or_dnf": solved_penalised,
        "wrong_penalty": wrong_penalty,
        # Verdicts (right or wrong) given on a reading that is not the true state.
        "decided_on_a_misreading": misread,
        "review_rate": len(reviews) / total if total else 0.0,
        "reviews": reviews,
        "review_rate_by_rig": {
            rig: _rate([s.verdict == "review" for s in scores if s.rig == rig]) for rig in rigs
        },
        # What these cameras allow: every seeable facelet read perfectly (perfect_vision_verdict).
        "review_rate_perfect_vision": _rate([s.perfect_vision == "review" for s in scores]),
        "review_rate_perfect_vision_by_rig": {
            rig: _rate([s.perfect_vision == "review" for s in scores if s.rig == rig])
            for rig in rigs
        },
        # The captures perfect vision judges right that we send to a judge (vision's reviews,
        # not the cameras' placement's), and the seeable facelets left unread in all captures.
        "reviews_vision_could_avoid": [
            s.capture
            for s in scores
            if s.verdict == "review" and s.truth != "review" and s.perfect_vision == s.truth
        ],
        # ... and of them, those that angles measured only as well as the target would also
        # send to a judge (a pair within TARGET_ANGLE_DEG of a limit): the rest are vision's.
        "review_rate_target_vision": _rate([s.target_vision == "review" for s in scores]),
        "reviews_vision_could_avoid_at_target": [
            s.capture
            for s in scores
            if s.verdict == "review" and s.truth != "review" and s.target_vision == s.truth
        ],
        # ... and of them, those that cells seen no more slanted than projected.MIN_FACING
        # would also leave to a judge: the rest need no grazing sliver read.
        "review_rate_readable_vision": _rate([s.readable_vision == "review" for s in scores]),
        "reviews_vision_could_avoid_readable": [
            s.capture
            for s in scores
            if s.verdict == "review" and s.truth != "review" and s.readable_vision == s.truth
        ],
        "seeable_facelets_unread": sum(len(s.unread) for s in scores),
        "confusion": dict(sorted(confusion.items())),
        "pairs_measured": int(errors.size),
        "angle_error_median_deg": float(np.median(errors)) if errors.size else None,
        "angle_error_p95_deg": float(np.percentile(errors, 95)) if errors.size else None,
        "angle_error_by_puzzle": _angle_errors_by_puzzle(scores),
        "uncertainty_coverage": float(np.mean(covered)) if covered else None,
        "per_view_pairs_measured": int(view_errors.size),
        "per_view_angle_error_median_deg": float(np.median(view_errors))
        if view_errors.size
        else None,
        "per_view_angle_error_p95_deg": float(np.percentile(view_errors, 95))
        if view_errors.size
        else None,
        "per_view_uncertainty_coverage": float(np.mean(view_covered)) if view_covered else None,
        "per_view_facelet_placement_accuracy": (
            sum(s.view_placed_right for s in scores) / max(1, sum(s.view_placed for s in scores))
        ),
        "facelet_color_accuracy": (
            sum(s.colors_right for s in scores) / max(1, sum(s.colors_seen for s in scores))
        ),
        # What a judge relies on: the readings behind the verdicts given (reviews left out).
        "facelet_color_accuracy_in_verdicts": (
            sum(s.colors_right for s in decided) / max(1, sum(s.colors_seen for s in decided))
        ),
        "facelets_seen_in_verdicts": sum(s.colors_seen for s in decided),
        # The colour read against the sticker at its pixels, whichever slot it was placed in.
        "facelet_color_accuracy_at_pixels": (
            sum(s.colors_right_at_pixels for s in scores)
            / max(1, sum(s.colors_seen_at_pixels for s in scores))
        ),
        "facelets_seen_at_pixels": sum(s.colors_seen_at_pixels for s in scores),
        "facelet_color_names_right": (
            sum(s.colors_named_right for s in scores) / max(1, sum(s.colors_seen for s in scores))
        ),
        "facelets_seen": sum(s.colors_seen for s in scores),
        "facelet_placement_accuracy": (
            sum(s.assigned_right for s in scores) / max(1, sum(s.assigned for s in scores))
        ),
        "ms_per_view": {stage: value / max(1, views) for stage, value in sorted(stages.items())},
        "views": views,
    }


def _angle_errors_by_puzzle(scores: list[CaptureScore]) -> dict[str, dict[str, float]]:
    """Fused pair angle errors per puzzle (pairs, median and 95th percentile in degrees): the
    overall numbers mix the cubes with the Pyraminx, whose small triangles measure worse."""
    grouped: dict[str, list[float]] = {}
    for s in scores:
        grouped.setdefault(s.puzzle, []).extend(abs(e) for e in s.angle_errors)
    return {
        puzzle: {
            "pairs": len(errors),
            "median_deg": float(np.median(errors)),
            "p95_deg": float(np.percentile(errors, 95)),
        }
        for puzzle, errors in sorted(grouped.items())
        if errors
    }


def _tally_why(scores: list[CaptureScore]) -> dict[str, int]:
    """How often each reason of `why_unread` stands in the reviews of answerable captures,
    per (view, facelet), most frequent first (numbers in a reason counted as one, N)."""
    counts = Counter(
        re.sub(r"\d+", "N", why)
        for s in scores
        if s.verdict == "review" and s.truth != "review"
        for _, _, why in s.unread_why
    )
    return dict(counts.most_common())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgecam.vision.evaluate", description=__doc__)
    parser.add_argument("corpus", type=Path, help="folder with manifest.json (tests/images)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N captures")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--details", action="store_true", help="one line per capture")
    parser.add_argument(
        "--captures-json",
        type=Path,
        default=None,
        metavar="FILE",
        help="write every capture's score (verdict, review cause, unread facelets...) as JSON",
    )
    parser.add_argument(
        "--why-unread",
        action="store_true",
        help="diagnostic: say why each unread facelet a view shows squarely enough went unread "
        "there (with --details per capture; the summary tallies the reasons over the reviews)",
    )
    parser.add_argument(
        "--oracle-colors",
        action="store_true",
        help="diagnostic: take facelet colours from the truth (measures the other stages)",
    )
    parser.add_argument(
        "--rig-poses",
        action="store_true",
        help="align views with the cameras' poses, as a station with a calibrated rig can",
    )
    parser.add_argument(
        "--learned",
        action="store_true",
        help="cross-check every view with the learned detector (models/facelets.onnx)",
    )
    parser.add_argument(
        "--schemes",
        type=Path,
        default=None,
        metavar="DIR",
        help="calibrated schemes PUZZLE-NAME.toml: each capture judged with its scheme's file",
    )
    parser.add_argument(
        "--larger-frame",
        type=float,
        default=1.0,
        metavar="F",
        help="place every view in a frame F times as wide and high (borders replicated): the "
        "puzzle smaller in the frame, as a larger sensor behind the same lens sees it",
    )
    parser.add_argument(
        "--perturb",
        choices=sorted(PERTURBATIONS),
        default=None,
        help="change every view first: a colour cast (warm, cool), underexposure (dark), low "
        "contrast (flat), JPEG quality 30, sensor noise (noise8); the truth is unchanged",
    )
    parser.add_argument(
        "--rig-error",
        type=float,
        nargs=2,
        default=None,
        metavar=("DEG", "MM"),
        help="with --rig-poses: every camera pose turned DEG degrees and moved MM mm (random, "
        "seeded), as a rig calibrated that far off",
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        metavar="F",
        help="resize every view by F first (0.5: a 640x360 camera for 1280x720 views), the "
        "truth scaled along: the same scene at another resolution",
    )
    args = parser.parse_args(argv)
    if not MIN_SCALE <= args.scale <= MAX_SCALE:
        parser.error(f"--scale must be between {MIN_SCALE} and {MAX_SCALE}")
    if args.rig_error is not None and not args.rig_poses:
        parser.error("--rig-error needs --rig-poses")
    if args.larger_frame < 1.0:
        parser.error("--larger-frame must be 1 or more")
    if args.captures_json is not None and not args.captures_json.parent.is_dir():
        # Said before the corpus is judged (minutes), not after.
        parser.error(f"--captures-json: no folder {args.captures_json.parent}")
    logging.basicConfig(level=logging.WARNING)
    start = time.perf_counter()
    scores = evaluate(
        args.corpus,
        args.limit,
        args.oracle_colors,
        args.rig_poses,
        args.learned,
        args.schemes,
        args.larger_frame,
        args.perturb,
        None if args.rig_error is None else (args.rig_error[0], args.rig_error[1]),
        args.why_unread,
        args.scale,
    )
    summary = summarise(scores)
    if args.why_unread:
        summary["why_unread_in_reviews"] = _tally_why(scores)
    summary["wall_seconds"] = round(time.perf_counter() - start, 1)
    if args.details:
        for s in scores:
            errors = " ".join(f"{e:+.1f}" for e in s.angle_errors)
            print(
                f"{s.capture} {s.puzzle} truth={s.truth:7s} got={s.verdict:7s} "
                f"colours {s.colors_right}/{s.colors_seen} placed {s.assigned_right}/{s.assigned} "
                f"per view {s.view_placed_right}/{s.view_placed} angles [{errors}] "
                f"per view [{' '.join(f'{e:+.1f}' for e in s.view_angle_errors)}]"
            )
            if s.truth != s.verdict:
                print(
                    f"      perfect vision: {s.perfect_vision} (angles at the target: "
                    f"{s.target_vision}; no slivers: {s.readable_vision}); {len(s.unread)} seeable "
                    "facelet(s) unread"
                )
                for reason in dict.fromkeys((*s.review_because, *s.reasons[:6])):
                    print(f"      - {reason}")
                for name, index, why in s.unread_why:
                    print(f"      unread {index} in {name}: {why}")
    if args.captures_json is not None:
        rows = [dataclasses.asdict(s) for s in scores]
        try:
            args.captures_json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        except OSError as error:
            print(f"cannot write {args.captures_json}: {error.strerror}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for key, value in summary.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
