"""Penalties resting on stickers whose outline does not match their cell go to a judge
(`vision/loose_placed.py`); stage 3 says how far each placed outline is from its cell
(`GeometryFit.placement_errors`)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np

from judgecam.vision.evaluate import _alignment, intrinsics_from_truth
from judgecam.vision.fuse import ViewEvidence
from judgecam.vision.loose_placed import (
    LOOSE_PLACEMENT,
    loose_placement_decides,
    loosely_placed_facelets,
)
from judgecam.vision.pipeline import analyse_view

from .penalty_cases import MODEL, SPEC
from .penalty_cases import fusion_of as _fusion
from .penalty_cases import turned_r as _turned_r


def _view(placed: list[int], errors: list[float]) -> ViewEvidence:
    """A view (frame = the fused frame) that placed a sticker on each of `placed`, its outline
    `errors` (fraction of a sticker) from the cell's."""
    fit = SimpleNamespace(
        assignment=np.array(placed, dtype=np.int64),
        placement_errors=np.array(errors, dtype=np.float64),
    )
    return ViewEvidence((), fit)  # type: ignore[arg-type]


def test_a_penalty_resting_on_loosely_placed_stickers_goes_to_a_judge() -> None:
    colors, changed = _turned_r()
    rest = [i for i in range(len(colors)) if i not in changed]
    fusion = _fusion(colors, 1)
    assert fusion.verdict.verdict == "+2"
    view = _view(rest + changed, [0.05] * len(rest) + [LOOSE_PLACEMENT + 0.05] * len(changed))
    assert loosely_placed_facelets(MODEL, [view], fusion.permutations) == tuple(changed)
    reason = loose_placement_decides(MODEL, fusion, [view])
    assert reason is not None and "+2 rests on" in reason and "outline" in reason


def test_tight_or_otherwise_confirmed_stickers_let_the_penalty_stand() -> None:
    colors, changed = _turned_r()
    placed = list(range(len(colors)))
    fusion = _fusion(colors, 1)
    tight = _view(placed, [LOOSE_PLACEMENT - 0.05] * len(placed))
    assert loose_placement_decides(MODEL, fusion, [tight]) is None
    # Loose in one view, tight in another: the other view's outline confirms the placement.
    fusion = _fusion(colors, 2)
    errors = [0.5 if i in changed else 0.05 for i in placed]
    views = [_view(placed, errors), _view(changed, [0.02] * len(changed))]
    assert loosely_placed_facelets(MODEL, views[:1], fusion.permutations[:1]) == tuple(changed)
    assert loosely_placed_facelets(MODEL, views, fusion.permutations) == ()
    assert loose_placement_decides(MODEL, fusion, views) is None
    # A fit that says nothing about its outlines (placed by the rig's poses) counts as tight.
    unknown = _view(placed, [])
    assert loosely_placed_facelets(MODEL, [unknown], fusion.permutations[:1]) == ()


def test_a_solved_reading_is_left_alone() -> None:
    colors = SPEC.solved_state().colors
    fusion = _fusion(colors, 1)
    placed = list(range(len(colors)))
    assert loose_placement_decides(MODEL, fusion, [_view(placed, [0.9] * len(placed))]) is None


def test_a_turned_slices_sticker_over_the_next_layer_is_the_loose_one(corpus_dir: Path) -> None:
    """c0204 cam0: a solved 3x3x3 whose E slice stands at 41.6 degrees; stage 3 places one E
    sticker, jutting over the D layer, on a D cell. Of the view's placed outlines it alone is
    further than LOOSE_PLACEMENT from its cell, and it alone is on the wrong cell (truth)."""
    truth = json.loads((corpus_dir / "c0204.json").read_text(encoding="utf-8"))
    view_truth = truth["views"][0]
    image = cv2.imread(str(corpus_dir / view_truth["image"]), cv2.IMREAD_COLOR)
    view = analyse_view(image, MODEL, intrinsics_from_truth(view_truth), view_truth["image"])
    assert view.fit is not None and view.segmentation is not None
    errors = view.fit.placement_errors
    placed = np.nonzero(view.fit.assignment >= 0)[0]
    assert len(errors) == len(view.fit.assignment) and len(placed) >= 15
    assert np.all(np.isfinite(errors[placed]))
    alignment = _alignment([(view, view_truth, np.arange(MODEL.facelet_count))], MODEL)
    assert alignment is not None
    permutation = alignment[1]
    stickers = [f for f in view_truth["facelets"] if f.get("visibility", 1.0) > 0.5]
    centers = np.array([f["center_px"] for f in stickers])
    wrong = []
    for detection in placed:
        facelet = view.segmentation.facelets[detection]
        nearest = int(np.argmin(np.linalg.norm(centers - facelet.center_px, axis=1)))
        slot = int(permutation[view.fit.assignment[detection]])
        if slot != stickers[nearest]["index"]:
            wrong.append(int(detection))
    loose = [int(d) for d in placed if errors[d] > LOOSE_PLACEMENT]
    assert len(wrong) == 1 and loose == wrong
    others = np.delete(errors[placed], list(placed).index(wrong[0]))
    assert float(np.max(others)) < 0.5 * float(errors[wrong[0]])
