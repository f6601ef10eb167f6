"""One light per face (`judgecam.vision.color_faces`): each face's shading is read from the
puzzle and divided out before the colours are labelled again."""

from __future__ import annotations

import numpy as np
import pytest

from judgecam.calibration.scheme import builtin_scheme
from judgecam.puzzle.registry import get_puzzle
from judgecam.vision.color_faces import face_gains, relit
from judgecam.vision.color_model import FaceletSample
from judgecam.vision.color_pieces import piece_model
from judgecam.vision.color_simulation import LIGHTS, observe, scramble
from judgecam.vision.colors import _classify_once, classify_colors

#: Scrambles to shade.
SEEDS = [0, 1, 2, 3, 4, 5]
#: The faces a station camera pair sees of a 3x3x3, and how bright each is lit (1 = the lamp
#: side). F is turned from the lamp: a white sticker there reads as a mid grey.
LIT = {"U": 1.0, "F": 0.3, "R": 0.7}


def _shaded_cube(seed: int) -> tuple[list[str], list[FaceletSample | None], np.ndarray]:
    """A scrambled 3x3x3 seen on U, F and R under one warm-ish light, each face lit as LIT."""
    rng = np.random.default_rng(seed)
    state = scramble("333", rng)
    samples = observe(state, builtin_scheme("333"), LIGHTS["6500K"], 0.9, 1.0, rng, 0.05)
    spec = get_puzzle("333")
    faces = [facelet.face for facelet in spec.facelets]
    shaded: list[FaceletSample | None] = []
    for sample, face in zip(samples, faces, strict=True):
        if face not in LIT:
            shaded.append(None)
            continue
        gain = np.array([LIT[face]] * 3)
        shaded.append(relit(np.zeros(1, dtype=np.intp), [sample], 1.0 / gain)[0])
    true_gains = np.array([LIT.get(face, 1.0) for face in piece_model("333").faces])
    return list(state.colors), shaded, true_gains


@pytest.mark.parametrize("seed", SEEDS)
def test_face_lights_are_read_from_a_labelling(seed: int) -> None:
    colors, samples, _ = _shaded_cube(seed)
    model = piece_model("333")
    gains = face_gains(model.face_of_facelet, samples, colors, [1.0] * len(colors))
    assert gains is not None
    for index, face in enumerate(model.faces):
        if face in LIT:
            assert gains[index] == pytest.approx(LIT[face], rel=0.12), (face, gains)
        else:
            assert gains[index] == 1.0  # unseen: left alone


def test_faces_lit_alike_are_left_alone() -> None:
    rng = np.random.default_rng(3)
    state = scramble("333", rng)
    samples = observe(state, builtin_scheme("333"), LIGHTS["6500K"], 0.9, 1.0, rng, 0.05)
    model = piece_model("333")
    assert face_gains(model.face_of_facelet, samples, list(state.colors), [1.0] * 54) is None


def test_dividing_the_lights_out_restores_the_lit_colours() -> None:
    _, samples, true_gains = _shaded_cube(0)
    model = piece_model("333")
    restored = relit(model.face_of_facelet, samples, true_gains)
    rng = np.random.default_rng(0)
    state = scramble("333", rng)
    unshaded = observe(state, builtin_scheme("333"), LIGHTS["6500K"], 0.9, 1.0, rng, 0.05)
    for before, after in zip(unshaded, restored, strict=True):
        if after is not None:
            assert np.allclose(before.lab, after.lab, atol=2.0)  # gamut clipping of a blue


@pytest.mark.parametrize("seed", SEEDS)
def test_whites_on_a_shaded_face_are_read_as_white(seed: int) -> None:
    colors, samples, _ = _shaded_cube(seed)
    result = classify_colors(samples, "333")
    seen = [i for i, sample in enumerate(samples) if sample is not None]
    wrong = [i for i in seen if result.labels[i] != colors[i]]
    assert wrong == [], [(i, colors[i], result.labels[i]) for i in wrong]


def test_the_shaded_face_misleads_a_single_labelling() -> None:
    """Without the second labelling some seed misreads the shaded face (the reason for it)."""
    misread = 0
    for seed in SEEDS:
        colors, samples, _ = _shaded_cube(seed)
        once = _classify_once(samples, "333")
        misread += sum(
            1 for i, s in enumerate(samples) if s is not None and once.labels[i] != colors[i]
        )
    assert misread > 0
