"""Geometry of a puzzle: faces, facelets, pieces, turning axes and the pairs of adjacent parts.

The frame (shared by every part of judgecam): the puzzle is centred at the origin, units are
millimetres, axes are right-handed with +x towards the R face, +y towards U and +z towards F, in
the WCA scrambling orientation (Art. 9.5). A rotation of a part about an axis is right-handed
about `Axis.direction` (counter-clockwise seen from the tip of `direction`), so a clockwise face
turn such as R is a rotation of -90 degrees about +x. The relative angle of a `Pair` is
rotation(parts[1]) - rotation(parts[0]).
"""

from __future__ import annotations

import bisect
import logging
import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from judgecam.puzzle.state import State

logger = logging.getLogger(__name__)

Vec3 = tuple[float, float, float]


def vec(x: float, y: float, z: float) -> Vec3:
    """A Vec3 with plain floats (rounded to 1e-9 mm so that equal points print alike)."""
    return (_clean(x), _clean(y), _clean(z))


def _clean(value: float) -> float:
    rounded = round(float(value), 9)
    return 0.0 if rounded == 0 else rounded


def add(a: Vec3, b: Vec3) -> Vec3:
    return vec(a[0] + b[0], a[1] + b[1], a[2] + b[2])


def sub(a: Vec3, b: Vec3) -> Vec3:
    return vec(a[0] - b[0], a[1] - b[1], a[2] - b[2])


def scale(a: Vec3, factor: float) -> Vec3:
    return vec(a[0] * factor, a[1] * factor, a[2] * factor)


def dot(a: Vec3, b: Vec3) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a: Vec3, b: Vec3) -> Vec3:
    return vec(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a: Vec3) -> float:
    return math.sqrt(dot(a, a))


def unit(a: Vec3) -> Vec3:
    length = norm(a)
    if length == 0:
        raise ValueError("cannot normalise a zero vector")
    return scale(a, 1.0 / length)


def mean(points: tuple[Vec3, ...] | list[Vec3]) -> Vec3:
    count = len(points)
    return vec(
        sum(p[0] for p in points) / count,
        sum(p[1] for p in points) / count,
        sum(p[2] for p in points) / count,
    )


def rotate(point: Vec3, axis: Vec3, angle_deg: float) -> Vec3:
    """`point` rotated right-handedly by `angle_deg` about the unit vector `axis` (Rodrigues)."""
    angle = math.radians(angle_deg)
    cos_a, sin_a = math.cos(angle), math.sin(angle)
    k_cross_p = cross(axis, point)
    k_dot_p = dot(axis, point)
    return vec(
        point[0] * cos_a + k_cross_p[0] * sin_a + axis[0] * k_dot_p * (1 - cos_a),
        point[1] * cos_a + k_cross_p[1] * sin_a + axis[1] * k_dot_p * (1 - cos_a),
        point[2] * cos_a + k_cross_p[2] * sin_a + axis[2] * k_dot_p * (1 - cos_a),
    )


@dataclass(frozen=True)
class Face:
    """One face of the puzzle body: its name, outward unit normal and centre (mm)."""

    name: str
    normal: Vec3
    center: Vec3


@dataclass(frozen=True)
class Facelet:
    """One sticker: `index` in the state vector, the face it lies on, where it is and its piece.

    `corners` is the visible sticker polygon on the surface, counter-clockwise seen from outside
    (cubes: the full grid cell; Pyraminx: the small triangle).
    """

    index: int
    face: str
    center: Vec3
    normal: Vec3
    corners: tuple[Vec3, ...]
    piece: int


@dataclass(frozen=True)
class Piece:
    """One visible piece slot (cubie, Pyraminx tip, axial centre or edge) and its facelets."""

    index: int
    kind: str
    facelets: tuple[int, ...]
    center: Vec3


@dataclass(frozen=True)
class Axis:
    """A turning axis and its parts (layers, tips) ordered from the negative to the positive end.

    `cuts[i]` is the signed distance (mm, along `direction`) of the cut between part i and i+1.
    `step_deg` is the turning step, `limit_deg` the misalignment limit (WCA 10f).
    """

    name: str
    direction: Vec3
    part_names: tuple[str, ...]
    cuts: tuple[float, ...]
    step_deg: float
    limit_deg: float

    def part_of(self, point: Vec3) -> int:
        """Index of the part that contains `point` (a point on a cut belongs to the upper part)."""
        return bisect.bisect_right(self.cuts, dot(point, self.direction))

    def pairs(self) -> tuple[Pair, ...]:
        """Every pair of adjacent parts on this axis, from the negative end."""
        return tuple(
            Pair(
                axis=self.name,
                parts=(i, i + 1),
                step_deg=self.step_deg,
                limit_deg=self.limit_deg,
                label=f"{self.name}:{self.part_names[i]}|{self.part_names[i + 1]}",
            )
            for i in range(len(self.part_names) - 1)
        )


@dataclass(frozen=True)
class Pair:
    """Two adjacent parts on one axis; their relative angle is rot(parts[1]) - rot(parts[0])."""

    axis: str
    parts: tuple[int, int]
    step_deg: float
    limit_deg: float
    label: str


@dataclass(frozen=True)
class PuzzleSpec:
    """Everything judgecam knows about one puzzle type's shape; built once per name.

    `default_colors` maps face names to the colour names of the standard scheme in scrambling
    orientation (WCA / KCA Art. 9.5).
    """

    name: str
    title: str
    edge_mm: float
    faces: tuple[Face, ...]
    facelets: tuple[Facelet, ...]
    pieces: tuple[Piece, ...]
    axes: tuple[Axis, ...]
    default_colors: tuple[tuple[str, str], ...]

    def pairs(self) -> tuple[Pair, ...]:
        """Every adjacent pair of parts on every axis, axis by axis."""
        return self._pairs

    @cached_property
    def _pairs(self) -> tuple[Pair, ...]:
        # cached_property writes the instance __dict__ directly, which a frozen dataclass allows.
        return tuple(pair for axis in self.axes for pair in axis.pairs())

    def axis(self, name: str) -> Axis:
        """The axis called `name` (KeyError if this puzzle has none)."""
        for axis in self.axes:
            if axis.name == name:
                return axis
        raise KeyError(f"{self.name} has no axis {name!r}")

    def face(self, name: str) -> Face:
        """The face called `name` (KeyError if this puzzle has none)."""
        for face in self.faces:
            if face.name == name:
                return face
        raise KeyError(f"{self.name} has no face {name!r}")

    def solved_state(self, colors: Mapping[str, str] | None = None) -> State:
        """The solved state, coloured by `colors` (face name -> colour name; default standard)."""
        from judgecam.puzzle.state import State

        scheme = dict(self.default_colors) if colors is None else dict(colors)
        missing = [face.name for face in self.faces if face.name not in scheme]
        if missing:
            raise ValueError(f"no colour given for face(s) {', '.join(missing)}")
        return State(self.name, tuple(scheme[facelet.face] for facelet in self.facelets))
