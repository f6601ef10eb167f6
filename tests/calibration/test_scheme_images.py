"""From photos of a solved cube to per-colour samples: by labelled face, or by clustering."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from judgecam.calibration.scheme import SchemeError, learn_scheme
from judgecam.calibration.scheme_images import (
    Facelet,
    _opposites_from_visibility,
    read_facelets_file,
    samples_by_cluster,
    samples_by_face,
    sticker_lab,
)
from judgecam.vision.colorspace import bgr_to_lab, ciede2000

#: Standard cube colours (BGR).
CUBE_BGR = {
    "U": (235, 235, 235),
    "D": (0, 213, 255),
    "F": (72, 155, 0),
    "B": (173, 70, 0),
    "R": (52, 18, 183),
    "L": (0, 88, 255),
}
#: Four corner views of a cube that together show every pair of adjacent faces.
CORNER_VIEWS = (("U", "F", "R"), ("U", "B", "L"), ("D", "F", "L"), ("D", "B", "R"))
#: Light falling from above: the top face brightest, the two side faces darker.
SHADING = (1.0, 0.85, 0.7)


def draw_cube_view(
    faces: tuple[str, str, str], colors: dict[str, tuple[int, int, int]], seed: int
) -> tuple[NDArray[np.uint8], list[Facelet]]:
    """A 400x400 isometric drawing of a solved 3x3x3 corner: top, left and right faces, black
    plastic between stickers, sensor noise; with each sticker's polygon and face."""
    image = np.full((400, 400, 3), 90, dtype=np.uint8)
    nearest_corner = np.array([200.0, 210.0])  # the cube's corner nearest the camera
    size = 150.0
    back_right = np.array([np.cos(np.radians(30)), -np.sin(np.radians(30))]) * size
    back_left = np.array([-back_right[0], back_right[1]])
    down = np.array([0.0, size])
    # Top face spans the two backward edges; each side face one of them and the vertical edge.
    spans = ((back_right, back_left), (back_left, down), (back_right, down))
    facelets = []
    for (first, second), face, shade in zip(spans, faces, SHADING, strict=True):
        for i in range(3):
            for j in range(3):
                polygon = np.array(
                    [
                        nearest_corner + first * (i + a) / 3 + second * (j + b) / 3
                        for a, b in ((0.08, 0.08), (0.92, 0.08), (0.92, 0.92), (0.08, 0.92))
                    ]
                )
                color = tuple(int(c * shade) for c in colors[face])
                cv2.fillConvexPoly(image, np.rint(polygon).astype(np.int32), color)
                facelets.append(Facelet(polygon, face))
    noise = np.random.default_rng(seed).normal(0.0, 2.0, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8), facelets


def _views(
    colors: dict[str, tuple[int, int, int]],
) -> tuple[list[NDArray[np.uint8]], list[list[Facelet]]]:
    images, facelets = [], []
    for seed, faces in enumerate(CORNER_VIEWS):
        image, stickers = draw_cube_view(faces, colors, seed)
        images.append(image)
        facelets.append(stickers)
    return images, facelets


def test_sticker_sample_is_the_drawn_colour() -> None:
    image = np.zeros((100, 100, 3), dtype=np.uint8)
    image[20:80, 20:80] = (0, 88, 255)
    image[20:23, 20:80] = (255, 255, 255)  # a bright bevel along one edge, outside the inset
    lab = sticker_lab(image, [[20, 20], [79, 20], [79, 79], [20, 79]])
    assert lab is not None
    assert float(ciede2000(lab, bgr_to_lab(np.array([0, 88, 255])))) < 0.5
    assert sticker_lab(image, [[1, 1], [3, 1], [3, 3]]) is None  # too small to sample


def test_samples_by_face_learn_the_cube() -> None:
    images, facelets = _views(CUBE_BGR)
    grouped = samples_by_face(images, facelets, "333")
    assert {face: len(v) for face, v in grouped.samples.items()} == {f: 18 for f in "UDFBRL"}
    scheme = learn_scheme(grouped.samples, puzzle="333", name="drawn", light="top light")
    assert [c.name for c in scheme.colors] == ["white", "yellow", "green", "blue", "red", "orange"]
    # White is always on top (unshaded) in these views; its centre is the drawn colour.
    white = bgr_to_lab(np.array(CUBE_BGR["U"], dtype=np.float64))
    assert float(ciede2000(scheme.colors[0].lab, white)) < 1.0
    red_on_the_right = bgr_to_lab(np.array(CUBE_BGR["R"], dtype=np.float64) * SHADING[2])
    assert float(ciede2000(scheme.colors[4].lab, red_on_the_right)) < 1.0


def test_samples_by_cluster_find_colours_and_opposites() -> None:
    images, facelets = _views(CUBE_BGR)
    faceless = [[Facelet(f.polygon) for f in stickers] for stickers in facelets]
    grouped = samples_by_cluster(images, faceless, "333")
    assert sorted(len(v) for v in grouped.samples.values()) == [18] * 6
    scheme = learn_scheme(
        grouped.samples, puzzle="333", name="drawn", light="top light", opposites=grouped.opposites
    )
    assert {frozenset(pair) for pair in scheme.opposites} == {
        frozenset(("white", "yellow")),
        frozenset(("green", "blue")),
        frozenset(("red", "orange")),
    }


def test_too_few_poses_cannot_settle_opposites() -> None:
    images, facelets = _views(CUBE_BGR)
    faceless = [[Facelet(f.polygon) for f in stickers] for stickers in facelets[:2]]
    with pytest.raises(SchemeError, match="cannot tell which colours are on opposite faces"):
        samples_by_cluster(images[:2], faceless, "333")


def test_facelets_file(tmp_path: Path) -> None:
    path = tmp_path / "view.png.facelets.json"
    path.write_text(json.dumps({"facelets": [{"face": "U", "polygon": [[0, 0], [9, 0], [9, 9]]}]}))
    (facelet,) = read_facelets_file(path)
    assert facelet.face == "U" and facelet.polygon.shape == (3, 2)
    path.write_text('{"stickers": []}')
    with pytest.raises(SchemeError, match="expected"):
        read_facelets_file(path)
    path.write_text("{")
    with pytest.raises(SchemeError, match="not a facelets JSON file"):
        read_facelets_file(path)


def test_a_sticker_seen_almost_edge_on_gives_no_sample() -> None:
    # A sliver (a sticker seen about 80 degrees from straight on) is mostly its surroundings.
    image = np.zeros((100, 100, 3), dtype=np.uint8)
    image[20:80, 20:80] = (40, 40, 200)
    square = np.array([[20, 20], [79, 20], [79, 79], [20, 79]], dtype=np.float64)
    sliver = np.array([[20, 20], [30, 20], [30, 79], [20, 79]], dtype=np.float64)
    assert sticker_lab(image, square) is not None
    assert sticker_lab(image, sliver) is None


def test_opposites_from_few_poses_take_the_only_pairing_that_fits() -> None:
    keys = ["a", "b", "c", "d", "e", "f"]
    seen = np.ones((6, 6), dtype=bool)
    for i, j in ((0, 1), (2, 3), (4, 5), (1, 2)):  # b and c (adjacent) never met either
        seen[i, j] = seen[j, i] = False
    assert _opposites_from_visibility(seen, keys) == (("a", "b"), ("c", "d"), ("e", "f"))
    seen[0, 3] = seen[3, 0] = False  # now a-d, b-c, e-f fits too
    with pytest.raises(SchemeError, match="2 ways to pair them"):
        _opposites_from_visibility(seen, keys)
