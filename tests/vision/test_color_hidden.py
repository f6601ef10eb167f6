"""Colour classification when faces are hidden: the bottom face, a grazing side, scattered.

With unseen facelets a colour covers at most one face's worth of the seen stickers, and may
cover none (the bottom colour of a solved puzzle resting on the table). A uniform face must not
be split into two colours to use up a colour that is simply not in view.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from judgecam.calibration.scheme import builtin_scheme
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.state import State
from judgecam.vision.color_model import ColorClassification, FaceletSample
from judgecam.vision.color_simulation import LIGHTS, observe, scheme_from_rgb, scramble
from judgecam.vision.colors import classify_colors

ALL_LIGHTS = {"neutral": np.ones(3), **LIGHTS}


def hide(samples: list[FaceletSample], indices: set[int]) -> list[FaceletSample | None]:
    return [None if i in indices else s for i, s in enumerate(samples)]


def face_facelets(puzzle: str, faces: tuple[str, ...]) -> set[int]:
    return {f.index for f in get_puzzle(puzzle).facelets if f.face in faces}


def wrong_seen(result: ColorClassification, state: State, hidden: set[int]) -> int:
    return sum(result.labels[i] != color for i, color in enumerate(state.colors) if i not in hidden)


@pytest.mark.parametrize("hidden_faces", [("D",), ("D", "L"), ("D", "R")])
def test_a_solved_333_resting_on_its_bottom_keeps_every_face_one_colour(
    hidden_faces: tuple[str, ...],
) -> None:
    """The reported bug: U came back white/yellow alternating with D unseen."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        state = get_puzzle("333").solved_state()
        hidden = face_facelets("333", hidden_faces)
        samples = observe(state, builtin_scheme("333"), ALL_LIGHTS["neutral"], 0.9, 1.0, rng)
        result = classify_colors(hide(samples, hidden), "333")
        assert wrong_seen(result, state, hidden) == 0, seed
        assert all(result.labels[i] is None for i in hidden)
        # The hidden faces' colours are named but show no seen facelet.
        unseen = {state.colors[i] for i in hidden}
        assert {c.name for c in result.clusters if c.count == 0} == unseen
        seen = [c for i, c in enumerate(result.confidences) if i not in hidden]
        # Shading spreads white the most: its facelets may be less sure, the rest is sure.
        assert np.median(seen) > 0.9


@pytest.mark.parametrize("puzzle", ["222", "pyram"])
def test_solved_puzzles_without_centres_resting_on_their_bottom(puzzle: str) -> None:
    for seed in range(4):
        rng = np.random.default_rng(seed)
        state = get_puzzle(puzzle).solved_state()
        hidden = face_facelets(puzzle, ("D",))
        samples = observe(state, builtin_scheme(puzzle), ALL_LIGHTS["3000K"], 0.9, 1.0, rng)
        result = classify_colors(hide(samples, hidden), puzzle)
        assert wrong_seen(result, state, hidden) == 0, seed
        seen = [c for i, c in enumerate(result.confidences) if i not in hidden]
        assert np.median(seen) > 0.9


@pytest.mark.parametrize("puzzle", ["333", "pyram"])
@pytest.mark.parametrize("light", sorted(ALL_LIGHTS))
def test_a_colour_nobody_sees_casts_no_doubt_on_the_colours_in_view(
    puzzle: str, light: str
) -> None:
    """The bottom's colour is seen nowhere: its cluster has no mean worth the name, so it must
    not make seen facelets doubtful (a fresh rig3 capture: three green facelets of a solved
    cube at confidence 0.2 "or white?", white being the hidden bottom; before the fix 16 of 36
    such simulated 3x3s and 8 of 36 Pyraminxes had a seen facelet under 0.9)."""
    for seed in range(12):
        rng = np.random.default_rng(seed)
        state = get_puzzle(puzzle).solved_state()
        hidden = face_facelets(puzzle, ("D",))
        samples = observe(state, builtin_scheme(puzzle), ALL_LIGHTS[light], 0.9, 1.5, rng)
        result = classify_colors(hide(samples, hidden), puzzle)
        assert wrong_seen(result, state, hidden) == 0, seed
        doubtful = [i for i, c in enumerate(result.confidences) if i not in hidden and c < 0.9]
        assert doubtful == [], seed


def _hidden_set(puzzle: str, mode: str, rng: np.random.Generator) -> set[int]:
    spec = get_puzzle(puzzle)
    if mode == "bottom":
        return face_facelets(puzzle, ("D",))
    if mode == "bottom+side":
        sides = [face.name for face in spec.faces if face.name != "D"]
        return face_facelets(puzzle, ("D", sides[int(rng.integers(len(sides)))]))
    count = round(len(spec.facelets) * rng.uniform(0.2, 0.4))
    return {int(i) for i in rng.choice(len(spec.facelets), size=count, replace=False)}


#: Lowest facelet accuracy accepted per hiding mode, over 3 lights x 4 cases with noise and
#: shading. Measured with 20 cases per light and condition (other seeds): bottom hidden 100 %,
#: random 20-40 % hidden 97-100 %, bottom + side hidden 91-100 % (a Pyraminx with bottom and
#: side hidden shows two of its four faces: the lowest, scrambled, 91-94 %).
FLOORS = {"bottom": 0.99, "random": 0.96, "bottom+side": 0.9}


@pytest.mark.parametrize("mode", ["bottom", "bottom+side", "random"])
@pytest.mark.parametrize("solved", [True, False], ids=["solved", "scrambled"])
@pytest.mark.parametrize("puzzle", ["333", "222", "pyram"])
def test_accuracy_with_hidden_facelets_under_three_lights(
    puzzle: str, solved: bool, mode: str
) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{puzzle}{solved}{mode}".encode()))
    right = total = 0
    for light in ALL_LIGHTS.values():
        for _ in range(4):
            state = get_puzzle(puzzle).solved_state() if solved else scramble(puzzle, rng)
            exposure = rng.uniform(0.5, 1.0)
            samples = observe(state, builtin_scheme(puzzle), light, exposure, 2.0, rng)
            hidden = _hidden_set(puzzle, mode, rng)
            result = classify_colors(hide(samples, hidden), puzzle)
            total += len(state.colors) - len(hidden)
            right += len(state.colors) - len(hidden) - wrong_seen(result, state, hidden)
    assert right / total >= FLOORS[mode]


@pytest.mark.parametrize(
    ("puzzle", "hidden_faces", "calibrated"),
    [
        ("333", ("D", "L"), True),
        ("333", ("D", "L"), False),
        ("222", ("D",), True),
        ("222", ("D",), False),
    ],
)
def test_red_and_orange_alike_with_few_stickers_seen_are_unsure_not_wrong(
    puzzle: str, hidden_faces: tuple[str, ...], calibrated: bool
) -> None:
    """Warm light and an orange close to red, the bottom (and orange's own face) hidden:
    whatever the classifier decides, a wrong facelet must come with a confidence under 0.5."""
    colors = {"white": (235, 235, 235), "yellow": (255, 213, 0), "green": (0, 155, 72)}
    colors |= {"blue": (0, 70, 173), "red": (200, 30, 40), "orange": (225, 60, 30)}
    scheme = scheme_from_rgb(puzzle, colors)
    rng = np.random.default_rng(31)
    hidden = face_facelets(puzzle, hidden_faces)
    for case in range(8):
        state = scramble(puzzle, rng) if case % 2 else get_puzzle(puzzle).solved_state()
        samples = observe(state, scheme, ALL_LIGHTS["3000K"], 0.7, 2.0, rng)
        result = classify_colors(hide(samples, hidden), puzzle, scheme if calibrated else None)
        if wrong_seen(result, state, hidden):
            assert result.min_confidence < 0.5, case
