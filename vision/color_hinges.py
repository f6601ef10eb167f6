"""Face lights that hinge on a few facelets: when their colour is in doubt, so is the light.

`color_faces.face_gains` ties a face's light to the other faces through its facelets of colours
that are seen on another face too. When all of those carry one label (a shaded face whose only
shared colour is a group of facelets a turned layer brought there), the light is fitted to that
label, and labelling again with that light divided out confirms the label, whatever it was:
on c0046 at 1.5x, two shaded red facelets on a white face were read orange at confidence 1.0,
the face's light fitted to orange. Read red, with the light fitted to that, they explain the
samples better (`lit_labelling_cost` 42.0 against 46.1), but no start of stage 4 led there.

`hinged_readings` lists, for every such group, the labellings with the group read as one of its
nearest other colours (by chromaticity, which no light's strength changes). `classify_colors`
scores them as it scores its two starts, each with the face lights that suit it: a better one
is labelled again with its lights; one about as good makes the group's facelets doubtful, as a
runner-up labelling does for any facelet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgecam.vision.color_faces import MIN_FACE_FACELETS
from judgecam.vision.color_model import FaceletSample
from judgecam.vision.color_shading import chromaticity

#: Other colours tried for a hinge group, nearest chromaticity first. Two: red/orange and
#: white/yellow are the pairs a light's strength can swap; a third was never nearer.
MAX_ALTERNATIVES = 2


@dataclass(frozen=True)
class HingedReading:
    """The labelling with the facelets `group` (all on `face`, all once `was`) read `as_color`."""

    face: int
    group: tuple[int, ...]
    was: str
    as_color: str
    labels: tuple[str | None, ...]


def hinge_groups(
    face_of_facelet: NDArray[np.intp], labels: Sequence[str | None]
) -> list[tuple[int, tuple[int, ...]]]:
    """(face, facelets) for each face whose facelets of colours also seen on another face all
    carry one label: the group its light is fitted to alone (if it is enough to fit one)."""
    faces_of: dict[str, set[int]] = {}
    for index, label in enumerate(labels):
        if label is not None:
            faces_of.setdefault(label, set()).add(int(face_of_facelet[index]))
    groups = []
    for face in sorted({int(f) for f in face_of_facelet}):
        shared = [
            index
            for index, label in enumerate(labels)
            if label is not None
            and int(face_of_facelet[index]) == face
            and len(faces_of[label]) >= 2
        ]
        if len(shared) >= MIN_FACE_FACELETS and len({labels[i] for i in shared}) == 1:
            groups.append((face, tuple(shared)))
    return groups


def hinged_readings(
    face_of_facelet: NDArray[np.intp],
    samples: Sequence[FaceletSample | None],
    labels: Sequence[str | None],
    per_color: int,
) -> list[HingedReading]:
    """Every hinge group read as each of its MAX_ALTERNATIVES nearest other colours, where that
    leaves no colour on more than `per_color` facelets (a face's worth)."""
    names = sorted({label for label in labels if label is not None})
    if len(names) < 2:
        return []
    seen = [i for i, label in enumerate(labels) if label is not None and samples[i] is not None]
    chroma = chromaticity(np.array([samples[i].lab for i in seen], dtype=np.float64))  # type: ignore[union-attr]
    row = {index: r for r, index in enumerate(seen)}
    means = {
        name: chroma[[row[i] for i in seen if labels[i] == name]].mean(axis=0) for name in names
    }
    counts = {name: sum(label == name for label in labels) for name in names}
    readings = []
    for face, group in hinge_groups(face_of_facelet, labels):
        was = str(labels[group[0]])
        centre = chroma[[row[i] for i in group]].mean(axis=0)
        others = sorted(
            (name for name in names if name != was),
            key=lambda name: float(np.linalg.norm(means[name] - centre)),
        )
        for name in others[:MAX_ALTERNATIVES]:
            if counts[name] + len(group) > per_color:
                continue
            flipped = list(labels)
            for index in group:
                flipped[index] = name
            readings.append(HingedReading(face, group, was, name, tuple(flipped)))
    return readings
