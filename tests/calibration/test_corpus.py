"""Schemes learnt from the rendered corpus (tests/images): ground-truth sticker polygons of
SOLVED captures under warm and cool light, classified back on held-out stickers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from judgecam.calibration.scheme import (
    ColorScheme,
    SchemeColor,
    classify_colors,
    robust_centre_and_spread,
    separation,
)
from judgecam.calibration.scheme_images import sticker_lab

#: Stickers less visible than this (occluded by a neighbour or clutter) are not sampled.
MIN_VISIBILITY = 0.9


def _manifest(corpus_dir: Path) -> dict[str, Any]:
    path = corpus_dir / "manifest.json"
    if not path.is_file():
        pytest.skip("no rendered corpus in tests/images")
    manifest: dict[str, Any] = json.loads(path.read_text())
    return manifest


def _truth(corpus_dir: Path, capture: dict[str, Any]) -> dict[str, Any]:
    truth: dict[str, Any] = json.loads((corpus_dir / capture["truth"]).read_text())
    return truth


def _samples_by_colour(
    corpus_dir: Path, truth: dict[str, Any]
) -> dict[str, list[NDArray[np.float64]]]:
    """Median CIELAB of every well-visible sticker of every view, keyed by its true colour."""
    samples: dict[str, list[NDArray[np.float64]]] = {}
    for view in truth["views"]:
        image = cv2.imread(str(corpus_dir / view["image"]))
        assert image is not None, view["image"]
        for facelet in view["facelets"]:
            if facelet["visibility"] < MIN_VISIBILITY:
                continue
            lab = sticker_lab(image, facelet["polygon_px"])
            if lab is not None:
                samples.setdefault(facelet["color"], []).append(lab)
    return samples


def _split_half_errors(corpus_dir: Path, truth: dict[str, Any]) -> tuple[int, int, str]:
    """Learn the colours a capture shows from every other sticker, classify the rest.

    A capture shows 3 to 5 of its colours (the face on the mat is hidden), so the learnt
    scheme holds just those: the point is how well a centre and a spread learnt under the
    capture's light separate its own colours.
    """
    pooled = _samples_by_colour(corpus_dir, truth)
    train = {name: np.array(v[0::2]) for name, v in pooled.items() if len(v) >= 6}
    if len(train) < 2:
        return 0, 0, "ok"  # nothing to tell apart
    test = {name: np.array(pooled[name][1::2]) for name in train}
    colors = []
    for name, lab in train.items():
        centre, spread = robust_centre_and_spread(lab)
        colors.append(SchemeColor(name, centre, spread))
    scheme = ColorScheme(
        truth["id"], truth["puzzle"], tuple(colors), (), truth["lighting"]["condition"]
    )
    errors = total = 0
    for name, lab in test.items():
        match = classify_colors(scheme, lab)
        errors += sum(scheme.colors[i].name != name for i in match.indices)
        total += len(lab)
    return errors, total, separation(scheme)[0].status


def _solved_captures(corpus_dir: Path, lights: tuple[str, ...]) -> list[dict[str, Any]]:
    manifest = _manifest(corpus_dir)
    return [
        capture
        for capture in manifest["captures"]
        if capture["verdict"] == "solved" and any(light in capture["tags"] for light in lights)
    ]


@pytest.mark.parametrize("light", ["warm", "cool"])
def test_schemes_learnt_under_warm_and_cool_light_read_their_stickers(
    corpus_dir: Path, light: str
) -> None:
    """Schemes that pass the 8.2 separation check read at least 98 % of held-out stickers.

    The corpus shades faces differently and puts glare on glossy stickers on purpose, so a
    single centre and spread per colour cannot describe every capture: where it cannot, the
    separation check must say so (warning or refused) rather than the scheme misreading
    silently. Measured on the seed-2026 corpus: accepted schemes misread 2 of 218 (warm) and
    0 of 174 (cool) held-out stickers; most misreads fall in refused schemes.
    """
    captures = _solved_captures(corpus_dir, (light,))
    if len(captures) < 2:
        pytest.skip(f"fewer than 2 solved {light} captures in the corpus")
    errors_by_status: dict[str, list[int]] = {}
    for capture in captures:
        errors, total, status = _split_half_errors(corpus_dir, _truth(corpus_dir, capture))
        counts = errors_by_status.setdefault(status, [0, 0])
        counts[0] += errors
        counts[1] += total
    accepted_errors, accepted_total = errors_by_status.get("ok", [0, 0])
    assert accepted_total >= 100, errors_by_status
    assert accepted_errors <= 0.02 * accepted_total, errors_by_status
