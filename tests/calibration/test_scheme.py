"""Colour schemes: built-ins, learning under warm and cool light, regulation 8.2, files."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path

import numpy as np
import pytest
import tomli_w
from numpy.typing import ArrayLike, NDArray

from judgecam.calibration.scheme import (
    DELTA_E_REFUSED,
    DELTA_E_WARNING,
    ColorScheme,
    SchemeColor,
    SchemeError,
    builtin_scheme,
    check_scheme,
    classify_colors,
    color_name,
    color_names,
    learn_scheme,
    load_scheme,
    robust_centre_and_spread,
    save_scheme,
    separation,
)
from judgecam.calibration.swatch import scheme_text
from judgecam.vision.colorspace import bgr_to_lab, ciede2000

#: Nominal sticker colours (sRGB) of a standard cube, per face.
STICKERS = {
    "U": (235, 235, 235),
    "D": (255, 213, 0),
    "F": (0, 155, 72),
    "B": (0, 70, 173),
    "R": (183, 18, 52),
    "L": (255, 88, 0),
}
#: Camera white balance locked for daylight; the light's colour then scales linear R, G, B
#: (von Kries): a warm incandescent-like light and a cool overcast-like light.
LIGHTS = {"warm": (1.0, 0.8, 0.55), "cool": (0.8, 0.92, 1.0), "neutral": (1.0, 1.0, 1.0)}


def _srgb_to_linear(values: NDArray[np.float64]) -> NDArray[np.float64]:
    c = np.asarray(values, dtype=np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _linear_to_srgb(values: NDArray[np.float64]) -> NDArray[np.float64]:
    c = np.clip(values, 0.0, 1.0)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055) * 255.0


def sticker_samples(
    light: tuple[float, float, float], per_face: int, seed: int
) -> dict[str, NDArray[np.float64]]:
    """CIELAB of `per_face` facelets per face seen under `light`: each facelet shaded by 0.8..1
    (its angle to the light), with sensor noise, quantised to 8-bit sRGB."""
    rng = np.random.default_rng(seed)
    samples = {}
    for face, rgb in STICKERS.items():
        linear = _srgb_to_linear(np.array(rgb)) * np.asarray(light) * 0.9
        shade = rng.uniform(0.8, 1.0, (per_face, 1))
        seen = linear * shade + rng.normal(0.0, 0.004, (per_face, 3))
        srgb = np.rint(_linear_to_srgb(seen))
        samples[face] = bgr_to_lab(srgb[:, ::-1])
    return samples


@pytest.mark.parametrize("puzzle", ["222", "333", "pyram"])
def test_builtin_schemes_pass_their_own_check(puzzle: str) -> None:
    scheme = builtin_scheme(puzzle)
    pairs = check_scheme(scheme)
    assert all(pair.status == "ok" for pair in pairs)
    assert len(pairs) == len(scheme.colors) * (len(scheme.colors) - 1) // 2


def test_builtin_schemes_follow_the_standard() -> None:
    cube = builtin_scheme("333")
    assert {c.face: c.name for c in cube.colors} == {
        "U": "white",
        "D": "yellow",
        "F": "green",
        "B": "blue",
        "R": "red",
        "L": "orange",
    }
    assert set(cube.opposites) == {("white", "yellow"), ("green", "blue"), ("red", "orange")}
    pyraminx = builtin_scheme("pyram")
    assert {c.face: c.name for c in pyraminx.colors} == {
        "F": "green",
        "L": "red",
        "R": "blue",
        "D": "yellow",
    }
    assert pyraminx.opposites == ()
    with pytest.raises(SchemeError, match="no built-in scheme for puzzle 'megaminx'"):
        builtin_scheme("megaminx")


@pytest.mark.parametrize("light", ["warm", "cool", "neutral"])
def test_scheme_learnt_under_a_light_classifies_new_facelets_under_it(light: str) -> None:
    scheme = learn_scheme(
        sticker_samples(LIGHTS[light], per_face=18, seed=1),  # a 3x3x3 seen twice
        puzzle="333",
        name=f"standard under {light}",
        light=light,
    )
    assert all(pair.status == "ok" for pair in check_scheme(scheme))
    assert set(scheme.opposites) == {
        (scheme.colors[0].name, scheme.colors[1].name),
        (scheme.colors[2].name, scheme.colors[3].name),
        (scheme.colors[4].name, scheme.colors[5].name),
    }
    for face, lab in sticker_samples(LIGHTS[light], per_face=200, seed=2).items():
        match = classify_colors(scheme, lab)
        faces = [scheme.colors[i].face for i in match.indices]
        assert faces == [face] * 200, f"{face} misread under {light} light"
        assert float(np.min(match.margin)) > 0


def test_warm_light_moves_colours_but_the_learnt_names_stay_readable() -> None:
    warm = learn_scheme(
        sticker_samples(LIGHTS["warm"], 18, 1), puzzle="333", name="w", light="warm"
    )
    cool = learn_scheme(
        sticker_samples(LIGHTS["cool"], 18, 1), puzzle="333", name="c", light="cool"
    )
    # The same white sticker is yellower (b*) under the warm light than under the cool one.
    assert warm.color(warm.colors[0].name).lab[2] - cool.colors[0].lab[2] > 15
    assert [c.name for c in warm.colors][:2] == ["white", "yellow"]


def _lab(red: int, green: int, blue: int) -> tuple[float, float, float]:
    lab = bgr_to_lab(np.array([blue, green, red], dtype=np.float64))
    return (float(lab[0]), float(lab[1]), float(lab[2]))


#: Centres learnt from rendered station photos (333-wca, annotated): every face's median
#: over lit and shaded views, so white is L 65 and yellow L 53.
STATION_CENTRES = {
    "white": (64.6, -0.5, 2.7),
    "yellow": (53.1, -2.6, 53.3),
    "green": (64.0, -53.7, 38.3),
    "blue": (21.4, 16.7, -40.3),
    "red": (49.4, 53.2, 33.2),
    "orange": (46.5, 39.3, 47.9),
}


def test_a_dark_yellow_is_named_yellow_not_grey() -> None:
    # Plain CIEDE2000 to the palette called this dark but clearly yellow centre "grey".
    assert color_name(STATION_CENTRES["yellow"]) == "yellow"
    assert color_names(list(STATION_CENTRES.values())) == list(STATION_CENTRES)


def test_shading_does_not_change_a_name() -> None:
    faces = {"yellow": "D", "green": "F", "blue": "B", "red": "R", "orange": "L"}
    for name, face in faces.items():
        lab = np.array(_lab(*STICKERS[face]))
        for factor in (1.0, 0.8, 0.6, 0.45):  # a face turned further and further away
            shaded = ((lab[0] + 16.0) * factor - 16.0, lab[1] * factor, lab[2] * factor)
            assert color_name(shaded) == name, (name, factor)


def test_white_grey_and_black_stay_apart() -> None:
    assert [color_name(_lab(v, v, v)) for v in (235, 128, 30)] == ["white", "grey", "black"]
    # In a scheme, neutrals are named relative to the lightest one, whatever the exposure.
    for factor in (1.0, 0.7):
        neutrals = [_lab(v, v, v) for v in (235, 128, 30)]
        shaded = [((lab[0] + 16) * factor - 16, 0.0, 0.0) for lab in neutrals]
        chromatic = [_lab(*STICKERS[face]) for face in ("F", "B", "R")]
        assert color_names(shaded + chromatic) == ["white", "grey", "black", "green", "blue", "red"]


def test_a_lone_neutral_is_white_unless_far_darker_than_the_brightest_colour() -> None:
    chromatic = [_lab(*STICKERS[face]) for face in ("D", "F", "B", "R", "L")]
    assert color_names([(58.0, 0.0, 2.0), *chromatic])[0] == "white"  # a white face in shade
    assert color_names([_lab(30, 30, 30), *chromatic])[0] == "black"


def test_a_light_pastel_rose_is_pink_not_red() -> None:
    # Shading only darkens: a colour lighter than the red reference is not a red in shade.
    assert color_name((69.6, 40.3, 11.0)) == "pink"


def test_robust_centre_ignores_a_reflection() -> None:
    samples = np.array([[50.0, 10.0, 10.0]] * 11 + [[95.0, 0.0, 0.0]])
    samples[:11, 0] += np.linspace(-2, 2, 11)
    centre, spread = robust_centre_and_spread(samples)
    # The mean lightness would be 54; the median stays with the eleven stickers.
    assert abs(centre[0] - 50.0) < 0.5
    np.testing.assert_allclose(centre[1:], (10.0, 10.0))
    assert spread[0] < 3.0  # the glare sample does not inflate the spread
    np.testing.assert_allclose(spread[1:], (1.0, 1.0))  # floored at MIN_SPREAD


def test_spread_includes_a_face_in_shadow() -> None:
    # Two thirds of the samples lit, a third on a shaded face 25 L* darker: the MAD alone
    # (about 0) would hide the shaded third from the separation check.
    lit = np.tile([70.0, 40.0, 50.0], (12, 1)) + np.linspace(-1, 1, 12)[:, None]
    shaded = lit[:6] - [25.0, 0.0, 0.0]
    _, spread = robust_centre_and_spread(np.vstack([lit, shaded]))
    assert spread[0] > 25.0 / 2.5631 * 0.9
    assert spread[1] < 1.5


def test_near_identical_colours_are_refused_naming_the_pair() -> None:
    standard = builtin_scheme("333")
    red = standard.color("red")
    dark_orange = SchemeColor(
        "dark orange", (red.lab[0] + 2.0, red.lab[1] + 1.0, red.lab[2] + 2.0), red.spread, "L"
    )
    colors = tuple(dark_orange if c.name == "orange" else c for c in standard.colors)
    scheme = dataclasses.replace(
        standard,
        colors=colors,
        opposites=(("white", "yellow"), ("green", "blue"), ("red", "dark orange")),
    )
    worst = separation(scheme)[0]
    assert (worst.first, worst.second) == ("red", "dark orange")
    assert worst.status == "refused"
    assert worst.delta_e < DELTA_E_REFUSED
    with pytest.raises(SchemeError, match=r"red / dark orange: CIEDE2000 2\.\d"):
        check_scheme(scheme)


def test_close_colours_with_tight_spreads_get_a_warning() -> None:
    standard = builtin_scheme("333")
    tight = (1.0, 1.0, 1.0)
    red = SchemeColor("red", (40.0, 60.0, 30.0), tight, "R")
    # 8 L* units lighter at the same chroma and hue: CIEDE2000 about 7.5, 4+ spreads apart.
    orange = SchemeColor("light red", (48.0, 60.0, 30.0), tight, "L")
    colors = tuple(
        red if c.face == "R" else orange if c.face == "L" else dataclasses.replace(c, spread=tight)
        for c in standard.colors
    )
    scheme = dataclasses.replace(
        standard,
        colors=colors,
        opposites=(("white", "yellow"), ("green", "blue"), ("red", "light red")),
    )
    pair = next(p for p in separation(scheme) if {p.first, p.second} == {"red", "light red"})
    np.testing.assert_allclose(pair.delta_e, float(ciede2000(red.lab, orange.lab)))
    assert DELTA_E_REFUSED <= pair.delta_e < DELTA_E_WARNING
    assert pair.status == "warning"
    check_scheme(scheme)  # a warning does not refuse


def test_separation_of_colours_differing_only_in_lightness_is_along_the_shading_axis() -> None:
    # Two greys 20 L* apart with spreads only in L: only the shading axis, 100 ln(L+16), tells
    # them apart, and a 2-unit L spread there is 200 / (L+16).
    first = SchemeColor("dark", (40.0, 0.0, 0.0), (2.0, 9.0, 9.0))
    second = SchemeColor("light", (60.0, 0.0, 0.0), (2.0, 9.0, 9.0))
    scheme = ColorScheme("greys", "pyram", (first, second), (), "test")
    (pair,) = separation(scheme)
    expected = 100.0 * np.log(76.0 / 56.0) / (200.0 / 56.0 + 200.0 / 76.0)
    np.testing.assert_allclose(pair.separation, expected, rtol=1e-6)
    np.testing.assert_allclose(pair.delta_e / (pair.spread_first + pair.spread_second), expected)


def _shaded(srgb: tuple[int, int, int], factors: ArrayLike, seed: int) -> NDArray[np.float64]:
    """CIELAB samples of one sticker colour lit by `factors` of the lamp (plus sensor noise)."""
    rng = np.random.default_rng(seed)
    value = np.array(srgb, dtype=np.float64) / 255.0
    linear = np.where(value <= 0.04045, value / 12.92, ((value + 0.055) / 1.055) ** 2.4)
    scaled = np.clip(linear[None, :] * np.asarray(factors, dtype=np.float64)[:, None], 0, 1)
    encoded = np.where(scaled <= 0.0031308, 12.92 * scaled, 1.055 * scaled ** (1 / 2.4) - 0.055)
    rgb = encoded * 255.0 + rng.normal(0.0, 1.0, scaled.shape)
    return np.asarray(bgr_to_lab(rgb[:, ::-1]), dtype=np.float64)


def _name_of(scheme: ColorScheme, face: str) -> str:
    return next(color.name for color in scheme.colors if color.face == face)


#: A lit top face, fill-lit sides and a face in shadow: the light varies 8-fold.
_LIGHT = np.repeat([1.0, 0.55, 0.35, 0.125], 6)


def test_lit_and_shaded_faces_of_red_and_orange_are_told_apart() -> None:
    # Under a directional lamp each colour's lightness and chroma vary a lot at a fixed
    # chromaticity; red and orange differ in hue, so no facelet can be confused.
    samples = {
        face: _shaded(STICKERS[face], _LIGHT, seed)
        for seed, face in enumerate(("U", "D", "F", "B", "R", "L"))
    }
    scheme = learn_scheme(samples, puzzle="333", name="lamp", light="directional lamp")
    pairs = {frozenset((p.first, p.second)): p for p in check_scheme(scheme)}
    red_orange = pairs[frozenset((_name_of(scheme, "R"), _name_of(scheme, "L")))]
    assert red_orange.status == "ok", red_orange.describe()
    assert scheme.color("red").spread[0] > 8.0  # the lightness really does vary a lot
    match = classify_colors(scheme, np.vstack(list(samples.values())))
    faces = [scheme.colors[i].face for i in match.indices]
    assert faces == [face for face in samples for _ in _LIGHT]


def test_white_and_grey_are_refused_when_a_shaded_white_looks_like_a_lit_grey() -> None:
    samples = {
        face: _shaded(STICKERS[face], _LIGHT, seed)
        for seed, face in enumerate(("U", "D", "F", "B", "R", "L"))
    }
    samples["D"] = _shaded((120, 120, 120), _LIGHT, 9)  # grey instead of yellow
    scheme = learn_scheme(samples, puzzle="333", name="lamp", light="directional lamp")
    worst = separation(scheme)[0]
    assert {worst.first, worst.second} == {_name_of(scheme, "U"), _name_of(scheme, "D")}
    assert worst.delta_e > DELTA_E_WARNING  # far apart as centres ...
    assert worst.status == "refused"  # ... but not under this light
    with pytest.raises(SchemeError, match="too close"):
        check_scheme(scheme)


def test_learnt_covariance_survives_the_file_and_old_files_still_load(tmp_path: Path) -> None:
    samples = {
        face: _shaded(STICKERS[face], _LIGHT, seed)
        for seed, face in enumerate(("U", "D", "F", "B", "R", "L"))
    }
    scheme = learn_scheme(samples, puzzle="333", name="lamp", light="directional lamp")
    path = tmp_path / "lamp.toml"
    save_scheme(scheme, path)
    loaded = load_scheme(path)
    for original, again in zip(scheme.colors, loaded.colors, strict=True):
        np.testing.assert_allclose(
            again.shading_covariance(), original.shading_covariance(), atol=2e-3
        )
    document = tomllib.loads(path.read_text())
    for entry in document["colors"]:
        del entry["covariance"]
    path.write_text(tomli_w.dumps(document))  # as written before covariances existed
    assert all(color.covariance is None for color in load_scheme(path).colors)


def test_learning_needs_one_group_per_colour_and_enough_samples() -> None:
    samples = sticker_samples(LIGHTS["neutral"], 9, 0)
    with pytest.raises(SchemeError, match="a 333 has 6 colours, got samples for 5"):
        learn_scheme(
            {k: v for k, v in samples.items() if k != "U"}, puzzle="333", name="x", light="x"
        )
    samples["U"] = samples["U"][:2]
    with pytest.raises(SchemeError, match="'U' has 2 samples, need at least 3"):
        learn_scheme(samples, puzzle="333", name="x", light="x")
    clusters = {f"c{i}": v for i, v in enumerate(sticker_samples(LIGHTS["neutral"], 9, 0).values())}
    with pytest.raises(SchemeError, match="give the opposite pairs"):
        learn_scheme(clusters, puzzle="333", name="x", light="x")
    scheme = learn_scheme(
        clusters,
        puzzle="333",
        name="x",
        light="x",
        opposites=[("c0", "c1"), ("c2", "c3"), ("c4", "c5")],
    )
    assert scheme.opposites[0] == (scheme.colors[0].name, scheme.colors[1].name)
    assert all(color.face is None for color in scheme.colors)


def test_scheme_file_round_trip(tmp_path: Path) -> None:
    scheme = learn_scheme(
        sticker_samples(LIGHTS["warm"], 18, 1), puzzle="333", name="warm cube", light="warm"
    )
    path = tmp_path / "warm.toml"
    save_scheme(scheme, path)
    loaded = load_scheme(path)
    assert (loaded.name, loaded.puzzle, loaded.light, loaded.opposites) == (
        scheme.name,
        scheme.puzzle,
        scheme.light,
        scheme.opposites,
    )
    np.testing.assert_allclose(loaded.centres(), scheme.centres(), atol=0.005)
    np.testing.assert_allclose(loaded.spreads(), scheme.spreads(), atol=0.005)
    assert [c.face for c in loaded.colors] == ["U", "D", "F", "B", "R", "L"]
    assert load_scheme("builtin:pyram").puzzle == "pyram"


GOOD = """
opposites = [["white", "yellow"], ["green", "blue"], ["red", "orange"]]
[scheme]
name = "x"
puzzle = "333"
light = "lamp"
""" + "".join(
    f'[[colors]]\nname = "{name}"\n'
    f"lab = [{50 + 8 * i}.0, {(-1) ** i * 30 * i}.0, {30 - 10 * i}.0]\n"
    "spread = [2.0, 2.0, 2.0]\n"
    for i, name in enumerate(["white", "yellow", "green", "blue", "red", "orange"])
)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such scheme file"),
        ("[scheme\nname=", "not valid TOML"),
        ('opposites = []\n[[colors]]\nname = "a"\n', r"missing \[scheme\] section"),
        (
            GOOD.replace('light = "lamp"', 'light = "lamp"\nlamp = 3'),
            r"unknown key 'lamp' in \[scheme\]",
        ),
        (GOOD.replace('puzzle = "333"', 'puzzle = "megaminx"'), "puzzle 'megaminx' is unknown"),
        (
            GOOD.replace("spread = [2.0, 2.0, 2.0]", "spread = [2.0, 2.0]", 1),
            r"#1 'spread' must be three finite numbers",
        ),
        (
            GOOD.replace("spread = [2.0, 2.0, 2.0]", "spread = [0.0, 2.0, 2.0]", 1),
            "spread must be positive",
        ),
        (
            GOOD.split("[[colors]]", 2)[0] + "[[colors]]" + GOOD.split("[[colors]]", 2)[1],
            "needs 6 colours, the file has 1",
        ),
        (GOOD.replace('["red", "orange"]', '["red", "purple"]'), "must name two colours"),
        (GOOD.replace(', ["red", "orange"]', ""), "has 3 opposite pairs, the file has 2"),
        (GOOD.replace('name = "orange"', 'name = "red"'), "colour names repeat"),
    ],
)
def test_corrupt_scheme_files_give_one_clear_error(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "scheme.toml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SchemeError, match=message) as caught:
        load_scheme(path)
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_good_example_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "scheme.toml"
    path.write_text(GOOD)
    assert load_scheme(path).names == ("white", "yellow", "green", "blue", "red", "orange")


def test_real_robot_colours_flag_every_case_the_scheme_misreads(shared_data: Path) -> None:
    """Measured sticker colours of real cubes (rubiks-color-resolver's test data): learn a scheme
    from each known case's own stickers; wherever that scheme misreads any of them, the
    separation check must already have said warning or refused."""
    folder = shared_data / "color-samples"
    expected = json.loads((folder / "expected.json").read_text())
    checked = 0
    for case, labels in expected.items():
        raw = json.loads((folder / f"{case}.json").read_text())
        count = len(raw)
        per_face = count // 6
        rgb = np.array([raw[str(i + 1)] for i in range(count)], dtype=np.float64)
        lab = bgr_to_lab(rgb[:, ::-1])
        # Files number squares face by face as U L F R B D; labels are in U R F D L B order.
        order = ["ULFRBD".index(face) * per_face + k for face in "URFDLB" for k in range(per_face)]
        lab = lab[order]
        groups = {
            face: lab[[i for i, label in enumerate(labels) if label == face]] for face in "URFDLB"
        }
        if min(len(group) for group in groups.values()) < 3:
            continue
        scheme = learn_scheme(
            groups, puzzle="333" if per_face == 9 else "222", name=case, light="robot"
        )
        match = classify_colors(scheme, lab)
        misread = sum(
            scheme.colors[i].face != label for i, label in zip(match.indices, labels, strict=True)
        )
        worst = separation(scheme)[0].status
        assert misread == 0 or worst in ("warning", "refused"), (
            f"{case}: {misread} misread, {worst}"
        )
        checked += 1
    assert checked >= 10


def test_terminal_swatches_only_on_a_terminal() -> None:
    scheme = builtin_scheme("333")
    coloured = scheme_text(scheme, ansi=True)
    plain = scheme_text(scheme, ansi=False)
    # Red's sRGB is (183, 18, 52): a 24-bit background escape.
    assert "\x1b[48;2;183;18;52m" in coloured
    assert "\x1b[" not in plain
    assert "red          L   39.1 a   61.4 b   27.3" in plain
