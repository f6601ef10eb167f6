"""Glare on glossy stickers never turns a solved puzzle into a penalty (`vision/glare.py`)."""

from __future__ import annotations

import cv2
import numpy as np

from judgecam.puzzle.observation import Observation, PairObservation
from judgecam.vision.colorspace import bgr_to_lab
from judgecam.vision.glare import (
    is_washed_out,
    merged_colors,
    seen_glare,
    verdict_without_faces,
)
from judgecam.vision.model import puzzle_model
from judgecam.vision.segment import sample_color

STICKER = 60  # pixels
GREEN_BGR = (70, 180, 20)
WHITE_BGR = (235, 236, 232)
SCHEME = {"U": "white", "R": "red", "F": "green", "D": "yellow", "L": "orange", "B": "blue"}


def _sticker_view(color: tuple[int, int, int], glare: bool) -> tuple[np.ndarray, np.ndarray]:
    """One sticker on black plastic, optionally with a specular white blob over most of it
    (the light's own colour added on top of the paint, clipped), and its corners."""
    image = np.full((140, 140, 3), 20, np.uint8)
    corners = np.array([[40, 40], [100, 40], [100, 100], [40, 100]], np.float64)
    cv2.fillPoly(image, [corners.astype(np.int32)], color)
    if glare:
        highlight = np.zeros(image.shape[:2], np.uint8)
        cv2.ellipse(highlight, (70, 72), (27, 24), 25, 0, 360, 255, -1)
        highlight = cv2.GaussianBlur(highlight, (0, 0), 3.0)
        added = image.astype(np.float64) + 255.0 * (highlight[..., None] / 255.0)
        image = np.clip(added, 0, 255).astype(np.uint8)
    noise = np.random.default_rng(0).normal(0.0, 2.0, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8), corners


def _lab(color: tuple[int, int, int], glare: bool) -> np.ndarray:
    image, corners = _sticker_view(color, glare)
    mean_bgr, _, count = sample_color(image, corners)
    assert count > 0
    return bgr_to_lab(mean_bgr)


def test_a_sticker_under_a_specular_blob_reads_washed_out_and_is_seen_as_glare() -> None:
    washed = _lab(GREEN_BGR, glare=True)
    clean = _lab(GREEN_BGR, glare=False)
    assert is_washed_out(washed), washed
    assert not is_washed_out(clean), clean
    assert seen_glare([washed, clean])
    assert seen_glare([clean, washed])


def test_a_white_sticker_is_not_glare() -> None:
    white = _lab(WHITE_BGR, glare=False)
    assert is_washed_out(white)  # legitimately near-white ...
    # ... but seen white from every view it is just white: nothing to leave unseen.
    assert not seen_glare([white, _lab(WHITE_BGR, glare=True)])
    assert not seen_glare([white])
    assert merged_colors(["white", "white"], [white, _lab(WHITE_BGR, glare=True)]) is None


def test_a_glare_washed_face_does_not_decide_a_penalty() -> None:
    """c0207: a solved cube seen from above (D, L and B unseen) whose F edges, washed out in one
    view, were named another colour reads as DNF; with the glare face left unseen it is not a
    penalty any more, which is what turns the answer to review."""
    from judgecam.puzzle import get_puzzle
    from judgecam.puzzle.verdict import judge

    model = puzzle_model("333")
    labels = [SCHEME[model.face_names[face]] for face in model.facelet_face]
    for face in ("D", "L", "B"):
        for index in np.nonzero(model.facelet_face == model.face_names.index(face))[0]:
            labels[int(index)] = "unknown"
    front = model.face_names.index("F")
    for index in np.nonzero(model.facelet_face == front)[0][[1, 3, 5, 7]]:
        labels[int(index)] = "orange"
    pairs = tuple(
        PairObservation(axis.name, (i, i + 1), 0.0, 1.0)
        for axis in model.axes
        for i in range(len(axis.part_names) - 1)
    )
    observation = Observation("333", tuple(labels), pairs)
    assert judge(get_puzzle("333"), observation).verdict in ("+2", "DNF")
    assert verdict_without_faces(model, observation, [front]).verdict not in ("+2", "DNF")


def test_one_name_on_a_grey_and_a_saturated_sample_is_two_colours_merged() -> None:
    # c0081: a dim white sticker and a yellow one were both read "yellow".
    reason = merged_colors(["yellow", "yellow"], [(55.6, -0.2, 4.2), (54.5, -1.3, 48.7)])
    assert reason is not None and "yellow" in reason
    # Shading of one colour (darker, lighter) is not merging.
    assert merged_colors(["yellow", "yellow"], [(85.0, -4.0, 70.0), (60.0, -3.0, 45.0)]) is None
    assert merged_colors(["unknown", "red"], [(60.0, 0.0, 2.0), (40.0, 55.0, 35.0)]) is None


def test_glare_that_only_tells_plus_two_from_dnf_does_not_decide(monkeypatch) -> None:
    """A 3x3x3 one R turn from solved, D unseen: leaving a glare face unseen leaves +2 or DNF,
    never solved. The glare face's reading then only rules out the harsher penalty, which is
    not a judge's call (`lightens_only`); a glare face whose absence allows solved is."""
    from judgecam.puzzle import get_puzzle
    from judgecam.puzzle.verdict import judge
    from judgecam.vision import glare
    from judgecam.vision.fuse import Fusion

    model = puzzle_model("333")
    spec = get_puzzle("333")
    pairs = tuple(
        PairObservation(axis.name, (i, i + 1), 0.0, 1.0)
        for axis in model.axes
        for i in range(len(axis.part_names) - 1)
    )

    def fusion_of(moves: str, hidden: str) -> Fusion:
        labels = list(spec.solved_state().apply(moves).colors)
        for index in np.nonzero(model.facelet_face == model.face_names.index(hidden))[0]:
            labels[int(index)] = "unknown"
        observation = Observation("333", tuple(labels), pairs)
        return Fusion(observation, judge(spec, observation), None, (), (), (), (), False)

    up = model.face_names.index("U")
    suspects = [int(i) for i in np.nonzero(model.facelet_face == up)[0]]
    monkeypatch.setattr(glare, "glare_facelets", lambda *args: suspects)
    one_move = fusion_of("R", "D")
    assert one_move.verdict.verdict == "+2"
    assert verdict_without_faces(model, one_move.observation, [up]).possible == ("+2", "DNF")
    assert glare.glare_decides(model, one_move, []) is None
    # c0207's reading (solved; F edges, washed out in one view, named orange): without F the
    # cube could be solved, so the glare face decides a penalty and a judge looks.
    labels = [SCHEME[model.face_names[face]] for face in model.facelet_face]
    front = model.face_names.index("F")
    for face in ("D", "L", "B"):
        for index in np.nonzero(model.facelet_face == model.face_names.index(face))[0]:
            labels[int(index)] = "unknown"
    edges = [int(i) for i in np.nonzero(model.facelet_face == front)[0][[1, 3, 5, 7]]]
    for index in edges:
        labels[index] = "orange"
    observation = Observation("333", tuple(labels), pairs)
    misread = Fusion(observation, judge(spec, observation), None, (), (), (), (), False)
    assert misread.verdict.verdict in ("+2", "DNF")
    monkeypatch.setattr(glare, "glare_facelets", lambda *args: edges)
    reason = glare.glare_decides(model, misread, [])
    assert reason is not None and reason.startswith("glare on face(s) F")
