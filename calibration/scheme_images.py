"""From photos of a SOLVED puzzle to per-colour CIELAB samples for `learn_scheme`.

Two ways to know where the stickers are:

* ground-truth polygons, each labelled with its face (rendered images, or an organiser's
  annotation in a `.facelets.json` file beside the photo): samples are grouped by face, and
  opposite colours follow from the puzzle's geometry;
* vision's sticker finder (`judgecam.vision.locate.find_puzzles`): stickers are found
  without knowing their face, so the colours are clustered (a solved puzzle has exactly as
  many colours as faces) and opposite colours are the pairs never seen together in one view
  (a cube shows at most three mutually adjacent faces at once).

Each sticker gives ONE sample: the median CIELAB of its pixels, inset from its edges, which is
what the facelet classifier compares with the scheme.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgecam.calibration.scheme import (
    OPPOSITE_FACES,
    PUZZLE_FACES,
    SchemeError,
    shading_coordinates,
)
from judgecam.vision.colorspace import bgr_to_lab

logger = logging.getLogger(__name__)

#: Stickers are sampled inside their polygon shrunk by this fraction towards its centroid:
#: edges carry bevels, shadows and blur from the neighbouring colour.
INSET = 0.3
#: Fewest pixels a sticker sample is taken from.
MIN_PIXELS = 9
#: Pixels this close (px) to the edge of the inset polygon are left out as well: lens blur,
#: demosaicing and JPEG's half-resolution chroma mix a pixel with its neighbours that far, so
#: a sticker seen almost edge-on (a sliver a pixel or two wide) gives no sample instead of
#: the colour of the plastic and the background around it.
EDGE_PIXELS = 2
#: Stickers seen more than this far (degrees) from straight on give no sample: the reflection
#: off the plastic's surface grows steeply at grazing angles (Fresnel, n = 1.5: 4 % head-on,
#: 13 % at 70 degrees, 27 % at 80) and washes out the colour of a dark sticker; in rendered
#: station photos the chromaticity of side stickers drifts from about 72 degrees on.
MAX_VIEW_ANGLE = 72.0
#: Clustering weights of the shading coordinates (shading, chromaticity, chromaticity): a face
#: in shadow moves a colour along the first by tens of units at the same chromaticity, so
#: that axis counts a quarter; colours of one chromaticity (white, grey, black) still part.
_CLUSTER_WEIGHTS = np.array([0.25, 1.0, 1.0])


@dataclass(frozen=True, eq=False)
class Facelet:
    """One sticker in one photo: its polygon (K, 2) in pixels, and its face if known."""

    polygon: NDArray[np.float64]
    face: str | None = None


@dataclass(frozen=True, eq=False)
class GroupedSamples:
    """Samples per colour group and, for cubes, the opposite pairs of groups."""

    samples: dict[str, NDArray[np.float64]]
    opposites: tuple[tuple[str, str], ...] | None  # None: from the faces' geometry


def sticker_lab(
    image: NDArray[np.uint8], polygon: ArrayLike, inset: float = INSET
) -> NDArray[np.float64] | None:
    """Median CIELAB of the trustworthy pixels inside `polygon` shrunk by `inset`.

    Trustworthy: at least `EDGE_PIXELS` inside the shrunk polygon. None if fewer than
    `MIN_PIXELS` are left, or if the sticker is seen more than `MAX_VIEW_ANGLE` from straight
    on. Overexposed pixels stay: the judging cameras see them the same way.
    """
    points = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
    if foreshortening(points) < np.cos(np.radians(MAX_VIEW_ANGLE)):
        return None
    centroid = points.mean(axis=0)
    shrunk = centroid + (points - centroid) * (1.0 - inset)
    mask = np.zeros(image.shape[:2], dtype=np.uint8)
    cv2.fillConvexPoly(mask, np.rint(shrunk).astype(np.int32), 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * EDGE_PIXELS + 1,) * 2)
    inner = cv2.erode(mask, kernel)
    pixels = image[inner.astype(bool)]
    if len(pixels) < MIN_PIXELS:
        return None
    return np.asarray(np.median(bgr_to_lab(pixels), axis=0), dtype=np.float64)


def foreshortening(polygon: ArrayLike) -> float:
    """About the cosine of the angle a regular sticker (square, triangle) is seen at.

    A regular polygon has isotropic second moments; viewing it at angle t squeezes one axis
    by cos t, so the square root of the ratio of the moments' eigenvalues is cos t (1 head-on,
    0 edge-on). 0 for a degenerate polygon.
    """
    points = np.asarray(polygon, dtype=np.float32).reshape(-1, 1, 2)
    moments = cv2.moments(points)
    if moments["m00"] == 0:
        return 0.0
    second = np.array([[moments["mu20"], moments["mu11"]], [moments["mu11"], moments["mu02"]]])
    low, high = np.linalg.eigvalsh(second / moments["m00"])
    return float(np.sqrt(max(low, 0.0) / high)) if high > 0 else 0.0


def read_facelets_file(path: str | Path) -> list[Facelet]:
    """Facelets from JSON: {"facelets": [{"face": "U", "polygon": [[x, y], ...]}, ...]}."""
    file = Path(path)
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
        entries = document["facelets"]
        facelets = [
            Facelet(
                np.asarray(entry["polygon"], dtype=np.float64).reshape(-1, 2), entry.get("face")
            )
            for entry in entries
        ]
    except FileNotFoundError:
        raise SchemeError(f"{file}: no such facelets file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SchemeError(f"{file}: not a facelets JSON file ({error})") from None
    except (KeyError, TypeError, ValueError, AttributeError):
        raise SchemeError(
            f'{file}: expected {{"facelets": [{{"face", "polygon"}}, ...]}}'
        ) from None
    if any(len(f.polygon) < 3 for f in facelets):
        raise SchemeError(f"{file}: every polygon needs at least 3 corners")
    return facelets


def detect_facelets(image: NDArray[np.uint8], puzzle: str) -> list[Facelet]:
    """Stickers of the largest puzzle vision finds in `image` (faces unknown)."""
    from judgecam.vision.locate import find_puzzles

    search = find_puzzles(image, sides=3 if puzzle == "pyram" else 4)
    if not search.candidates:
        return []
    return [
        Facelet(np.asarray(patch.corners, dtype=np.float64))
        for patch in search.candidates[0].patches
    ]


def samples_by_face(
    images: Sequence[NDArray[np.uint8]], facelets: Sequence[Sequence[Facelet]], puzzle: str
) -> GroupedSamples:
    """Sticker samples grouped by their (known) face."""
    faces = PUZZLE_FACES[puzzle]
    groups: dict[str, list[NDArray[np.float64]]] = {face: [] for face in faces}
    for image, stickers in zip(images, facelets, strict=True):
        for facelet in stickers:
            if facelet.face not in groups:
                raise SchemeError(f"facelet face {facelet.face!r} is not a face of a {puzzle}")
            lab = sticker_lab(image, facelet.polygon)
            if lab is not None:
                groups[facelet.face].append(lab)
    return GroupedSamples(
        {face: np.array(values).reshape(-1, 3) for face, values in groups.items()}, None
    )


def samples_by_cluster(
    images: Sequence[NDArray[np.uint8]], facelets: Sequence[Sequence[Facelet]], puzzle: str
) -> GroupedSamples:
    """Sticker samples clustered into the puzzle's number of colours (faces unknown).

    For cubes the opposite pairs are the clusters never seen in the same photo; raises
    SchemeError when the photos do not settle that.
    """
    count = len(PUZZLE_FACES[puzzle])
    labs: list[NDArray[np.float64]] = []
    view_of: list[int] = []
    for view, (image, stickers) in enumerate(zip(images, facelets, strict=True)):
        for facelet in stickers:
            lab = sticker_lab(image, facelet.polygon)
            if lab is not None:
                labs.append(lab)
                view_of.append(view)
    if len(labs) < count * 3:
        raise SchemeError(
            f"found {len(labs)} stickers in {len(images)} photos; need at least {count * 3} "
            f"(3 per colour of a {puzzle})"
        )
    data = np.asarray(shading_coordinates(np.array(labs)) * _CLUSTER_WEIGHTS, dtype=np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 100, 0.01)
    cv2.setRNGSeed(0)
    no_initial_labels = np.zeros((len(data), 1), dtype=np.int32)
    _, found, _ = cv2.kmeans(data, count, no_initial_labels, criteria, 10, cv2.KMEANS_PP_CENTERS)
    labels = np.asarray(found, dtype=np.intp).reshape(-1)
    keys = [f"cluster {k + 1}" for k in range(count)]
    samples = {keys[k]: np.array(labs)[labels == k] for k in range(count)}
    opposites: tuple[tuple[str, str], ...] = ()
    if OPPOSITE_FACES[puzzle]:
        seen_together = np.zeros((count, count), dtype=bool)
        for view in set(view_of):
            present = sorted({int(labels[i]) for i in range(len(labels)) if view_of[i] == view})
            for a, b in itertools.combinations(present, 2):
                seen_together[a, b] = seen_together[b, a] = True
        opposites = _opposites_from_visibility(seen_together, keys)
    return GroupedSamples(samples, opposites)


def _opposites_from_visibility(
    seen_together: NDArray[np.bool_], keys: list[str]
) -> tuple[tuple[str, str], ...]:
    """Opposite pairs: the one way to pair up all colours with pairs never seen together.

    Opposite faces are never in one view, so the opposites are a perfect matching of the
    "never seen together" graph. Few poses leave some adjacent colours unseen together too;
    that is fine as long as only one perfect matching remains.
    """
    never = ~seen_together
    np.fill_diagonal(never, False)
    matchings = list(_perfect_matchings(never, list(range(len(keys)))))
    if len(matchings) != 1:
        partners = [np.flatnonzero(row) for row in never]
        detail = ", ".join(
            f"{keys[i]} never seen with {len(p)} others"
            for i, p in enumerate(partners)
            if len(p) != 1
        )
        raise SchemeError(
            "cannot tell which colours are on opposite faces from these photos "
            f"({len(matchings)} ways to pair them: {detail}); photograph the solved puzzle "
            "in more poses, each showing three faces"
        )
    return tuple((keys[a], keys[b]) for a, b in matchings[0])


def _perfect_matchings(
    allowed: NDArray[np.bool_], left: list[int]
) -> Iterator[list[tuple[int, int]]]:
    """Every way to split `left` into pairs (a, b) with allowed[a, b] (a < b in each pair)."""
    if not left:
        yield []
        return
    first, rest = left[0], left[1:]
    for partner in rest:
        if allowed[first, partner]:
            remaining = [k for k in rest if k != partner]
            for tail in _perfect_matchings(allowed, remaining):
                yield [(first, partner), *tail]
