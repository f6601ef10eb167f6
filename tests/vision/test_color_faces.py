"""One light per face (`judgecam.vision.color_faces`): each face's shading is read from the
puzzle and divided out before the colours are labelled again."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from judgecam.calibration.scheme import ColorScheme, builtin_scheme
from judgecam.puzzle.registry import get_puzzle
from judgecam.vision.color_faces import (
    equal_luminance,
    face_gains,
    lit_labelling_cost,
    luminance,
    relit,
)
from judgecam.vision.color_model import FaceletSample
from judgecam.vision.color_pieces import piece_model
from judgecam.vision.color_simulation import LIGHTS, observe, scheme_from_rgb, scramble
from judgecam.vision.colors import _classify_once, classify_colors
from judgecam.vision.evaluate import _partition_agreement
from judgecam.vision.pipeline import MIN_COLOR_CONFIDENCE

#: Scrambles to shade.
SEEDS = [0, 1, 2, 3, 4, 5]
#: The faces a station camera pair sees of a 3x3x3, and how bright each is lit (1 = the lamp
#: side). F is turned from the lamp: a white sticker there reads as a mid grey.
LIT = {"U": 1.0, "F": 0.3, "R": 0.7}


def _shaded_cube(
    seed: int,
    lit: dict[str, float] = LIT,
    scheme: ColorScheme | None = None,
    light: str = "6500K",
) -> tuple[list[str], list[FaceletSample | None], np.ndarray]:
    """A scrambled 3x3x3 seen on the faces of `lit` under one light, each face lit as `lit`
    says (the built-in scheme when `scheme` is None)."""
    rng = np.random.default_rng(seed)
    state = scramble("333", rng)
    samples = observe(state, scheme or builtin_scheme("333"), LIGHTS[light], 0.9, 1.0, rng, 0.05)
    spec = get_puzzle("333")
    faces = [facelet.face for facelet in spec.facelets]
    shaded: list[FaceletSample | None] = []
    for sample, face in zip(samples, faces, strict=True):
        if face not in lit:
            shaded.append(None)
            continue
        gain = np.array([lit[face]] * 3)
        shaded.append(relit(np.zeros(1, dtype=np.intp), [sample], 1.0 / gain)[0])
    true_gains = np.array([lit.get(face, 1.0) for face in piece_model("333").faces])
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


#: A pastel scheme (light, soft colours: cream, lemon, mint, sky, rose, peach) ...
PASTEL = {
    "white": (238, 232, 215),
    "yellow": (246, 232, 120),
    "green": (130, 215, 160),
    "blue": (120, 170, 235),
    "red": (235, 120, 135),
    "orange": (250, 170, 110),
}
#: ... with the top face three times brighter than the sides: a lamp's reflection on it, or a
#: view of it taken by the other camera at another exposure.
BRIGHT_TOP = {"U": 1.0, "F": 0.3, "R": 0.3}


def test_equal_luminance_keeps_only_chromaticity() -> None:
    colors, samples, _ = _shaded_cube(0)
    flat = equal_luminance(samples)
    seen = [i for i, sample in enumerate(samples) if sample is not None]
    levels = luminance(np.array([flat[i].lab for i in seen]))  # type: ignore[union-attr]
    assert np.allclose(levels, levels[0], rtol=0.01)  # float32 colour conversions
    # One paint under the three face lights ends up one colour (up to the sampling noise).
    whites = np.array([flat[i].lab for i in seen if colors[i] == "white"])  # type: ignore[union-attr]
    assert float(np.ptp(whites, axis=0).max()) < 3.0
    assert equal_luminance([None, None]) == [None, None]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_true_labelling_costs_least_under_its_own_face_lights(seed: int) -> None:
    colors, samples, _ = _shaded_cube(seed, BRIGHT_TOP, scheme_from_rgb("333", PASTEL))
    model = piece_model("333")
    true_cost = lit_labelling_cost(model.face_of_facelet, samples, colors, 2.0)
    # Every face's facelets named by the face (a labelling by brightness, as a single CIEDE2000
    # labelling tends to give here) explains the samples worse.
    by_face = [model.faces[int(face)] for face in model.face_of_facelet]
    assert true_cost < lit_labelling_cost(model.face_of_facelet, samples, by_face, 2.0)
    seen = [i for i, sample in enumerate(samples) if sample is not None]
    swapped = list(colors)
    first, second = next((a, b) for a in seen for b in seen if colors[a] != colors[b] and a < b)
    swapped[first], swapped[second] = colors[second], colors[first]
    assert true_cost < lit_labelling_cost(model.face_of_facelet, samples, swapped, 2.0)


def _majority_colours(labels: list[str | None], truth: list[str]) -> dict[str, str]:
    """Per label: the true colour most of its facelets have."""
    counts: dict[str, Counter[str]] = {}
    for label, colour in zip(labels, truth, strict=True):
        counts.setdefault(str(label), Counter())[colour] += 1
    return {label: found.most_common(1)[0][0] for label, found in counts.items()}


@pytest.mark.parametrize("light", ["3000K", "6500K"])
def test_pastels_with_one_face_far_brighter_are_read_right(light: str) -> None:
    """The first labelling on the samples as they are groups the bright top face apart; the one
    on chromaticity alone reads the face lights right."""
    right = total = 0
    for seed in range(8):
        colors, samples, _ = _shaded_cube(seed, BRIGHT_TOP, scheme_from_rgb("333", PASTEL), light)
        result = classify_colors(samples, "333")
        seen = [i for i, sample in enumerate(samples) if sample is not None]
        right += _partition_agreement([(result.labels[i], colors[i]) for i in seen])
        total += len(seen)
        # A label stands for the true colour most of its facelets have; the others are misread
        # and must not carry the confidence a verdict rests on.
        majority = _majority_colours([result.labels[i] for i in seen], [colors[i] for i in seen])
        confidently_wrong = [
            i
            for i in seen
            if majority[str(result.labels[i])] != colors[i]
            and result.confidences[i] >= MIN_COLOR_CONFIDENCE
        ]
        assert confidently_wrong == [], (seed, confidently_wrong)
    assert right / total >= 0.98


#: Fused samples of corpus capture c0151 (a pastel 2x2x2 at +2, rig poses), facelet index ->
#: (CIELAB, spread, pixels, true colour). U is lit about twice as brightly as F, L and B: sky
#: reads L* 63 on U and 35 on B, rose 61 on U and 34 on F.
C0151_SAMPLES: dict[int, tuple[tuple[float, float, float], float, int, str]] = {
    0: ((60.9, 44.4, 17.7), 0.4, 1710, "rose"),
    1: ((63.4, -1.1, -27.0), 0.3, 1869, "sky"),
    2: ((61.3, 44.3, 17.6), 0.3, 1980, "rose"),
    3: ((63.8, -1.3, -26.8), 0.2, 2163, "sky"),
    4: ((62.7, -3.2, 41.5), 0.6, 862, "lemon"),
    5: ((62.9, -3.2, 41.2), 0.6, 659, "lemon"),
    6: ((62.8, -2.9, 41.1), 0.6, 693, "lemon"),
    7: ((62.9, -3.1, 40.8), 0.8, 607, "lemon"),
    8: ((42.3, -20.6, 14.6), 0.3, 1301, "mint"),
    9: ((34.4, 27.8, 12.3), 0.5, 1581, "rose"),
    10: ((42.5, -20.8, 14.5), 0.3, 1137, "mint"),
    11: ((34.6, 27.6, 12.2), 0.3, 1260, "rose"),
    16: ((47.3, 0.9, 11.8), 0.3, 1752, "cream"),
    17: ((47.2, 1.2, 11.6), 0.2, 1535, "cream"),
    18: ((47.1, 0.9, 11.8), 0.3, 1477, "cream"),
    19: ((47.1, 0.9, 11.8), 0.3, 1332, "cream"),
    20: ((40.2, 15.6, 27.2), 0.5, 914, "peach"),
    21: ((34.9, -1.2, -14.6), 0.3, 1064, "sky"),
    22: ((40.1, 15.9, 27.0), 0.6, 795, "peach"),
    23: ((34.9, -1.0, -14.9), 0.5, 942, "sky"),
}


def test_a_2x2x2_face_lit_apart_is_read_from_two_facelets_per_face() -> None:
    """A 2x2x2 face shows at most four facelets, often only two of a colour seen elsewhere
    (c0151: F shows two rose, U two rose and two sky, B two sky). With three required per face
    no light was read, the bright U grouped apart and 7 of 20 colours were wrong, every one
    under 0.9; two per face read the lights and every colour right and sure."""
    samples: list[FaceletSample | None] = [None] * 24
    for index, (lab, spread, pixels, _) in C0151_SAMPLES.items():
        samples[index] = FaceletSample(lab, spread, pixels)
    truth = {index: colour for index, (_, _, _, colour) in C0151_SAMPLES.items()}
    model = piece_model("222")
    labels = [truth.get(index) for index in range(24)]
    gains = face_gains(model.face_of_facelet, samples, labels, [1.0] * 24)
    assert gains is not None
    u, f = model.faces.index("U"), model.faces.index("F")
    assert gains[u] == pytest.approx(1.0) and gains[f] < 0.6
    result = classify_colors(samples, "222")
    pairs = [(result.labels[i], colour) for i, colour in truth.items()]
    assert _partition_agreement(pairs) == len(truth)  # type: ignore[arg-type]
    assert min(result.confidences[i] for i in truth) >= MIN_COLOR_CONFIDENCE
