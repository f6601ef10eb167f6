"""The puzzle's geometry as numpy arrays, the form the vision stages fit against.

`judgecam.puzzle` describes a puzzle as Python objects; fitting it to images needs arrays
(every facelet's 3D corners, which part of each axis it turns with, the rotations that map the
puzzle onto itself). This module converts once and caches per puzzle name.
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class AxisModel:
    """One turning axis: its unit direction and, per facelet, the part it turns with."""

    name: str
    direction: FloatArray  # (3,) unit vector
    part_names: tuple[str, ...]
    facelet_part: IntArray  # (F,) index into part_names
    step_deg: float
    limit_deg: float

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """Adjacent parts along the axis, as index pairs (lower, upper)."""
        return tuple((i, i + 1) for i in range(len(self.part_names) - 1))


@dataclass(frozen=True, eq=False)
class PuzzleModel:
    """Arrays describing a puzzle in its own frame (mm, centred at the origin)."""

    name: str
    face_names: tuple[str, ...]
    face_normals: FloatArray  # (faces, 3)
    facelet_face: IntArray  # (F,) index into face_names
    facelet_piece: tuple[Any, ...]  # (F,) piece identifiers (hashable)
    facelet_centers: FloatArray  # (F, 3)
    facelet_normals: FloatArray  # (F, 3)
    facelet_corners: FloatArray  # (F, K, 3) facelet cell polygon, same K for every facelet
    axes: tuple[AxisModel, ...]
    symmetries: tuple[FloatArray, ...]  # proper rotations (3, 3) mapping the shape onto itself
    _permutations: dict[tuple[float, ...], IntArray] = field(default_factory=dict, repr=False)

    @property
    def facelet_count(self) -> int:
        return int(self.facelet_centers.shape[0])

    # Constants of the model (its arrays are never changed), computed on first use: stages 3
    # and their checks ask for them several times per view.
    @functools.cached_property
    def radius(self) -> float:
        """Distance from the centre to the farthest sticker corner (mm)."""
        return float(np.linalg.norm(self.facelet_corners, axis=-1).max())

    @functools.cached_property
    def sticker_size(self) -> float:
        """Typical facelet cell edge length (mm)."""
        edges = np.roll(self.facelet_corners, -1, axis=1) - self.facelet_corners
        return float(np.median(np.linalg.norm(edges, axis=-1)))

    def axis_and_parts(
        self, axis_name: str, part_names: tuple[str, str]
    ) -> tuple[AxisModel, tuple[int, int]]:
        """The axis a pair of parts turns about, and the parts' indices along it (a fit names
        pairs by part names, fusion by indices)."""
        axis = next(a for a in self.axes if a.name == axis_name)
        return axis, (axis.part_names.index(part_names[0]), axis.part_names.index(part_names[1]))

    def facelet_permutation(self, rotation: FloatArray) -> IntArray:
        """Index map p such that facelet i moves to facelet p[i] under `rotation`."""
        key = tuple(np.round(np.asarray(rotation, dtype=np.float64), 6).reshape(-1).tolist())
        cached = self._permutations.get(key)
        if cached is None:
            cached = self._permutation(rotation)
            self._permutations[key] = cached
        return cached.copy()

    def _permutation(self, rotation: FloatArray) -> IntArray:
        moved = self.facelet_centers @ rotation.T
        distances = np.linalg.norm(moved[:, None, :] - self.facelet_centers[None, :, :], axis=-1)
        return np.argmin(distances, axis=1).astype(np.int64)


def rotation_about(axis: FloatArray, angle_deg: float) -> FloatArray:
    """Rotation matrix for a right-handed turn of `angle_deg` about the unit vector `axis`."""
    # Rodrigues' formula I + sin(t) K + (1 - cos(t)) K^2 with K^2 = k k^T - I, written out in
    # scalars: the fit calls this thousands of times per view with small arrays.
    x, y, z = np.asarray(axis, dtype=np.float64).reshape(3).tolist()
    norm = math.sqrt(x * x + y * y + z * z)
    x, y, z = x / norm, y / norm, z / norm
    theta = math.radians(angle_deg)
    s, c = math.sin(theta), 1.0 - math.cos(theta)
    return np.array(
        [
            [1.0 - c * (y * y + z * z), c * x * y - s * z, c * x * z + s * y],
            [c * x * y + s * z, 1.0 - c * (x * x + z * z), c * y * z - s * x],
            [c * x * z - s * y, c * y * z + s * x, 1.0 - c * (x * x + y * y)],
        ]
    )


def _symmetry_group(axes: tuple[AxisModel, ...], centers: FloatArray) -> tuple[FloatArray, ...]:
    """Closure of the axis turns (by one step each): the puzzle's rotation group."""
    generators = [rotation_about(axis.direction, axis.step_deg) for axis in axes]
    group: list[FloatArray] = [np.eye(3)]
    frontier = [np.eye(3)]
    while frontier:
        next_frontier = []
        for element in frontier:
            for generator in generators:
                candidate = generator @ element
                if not any(np.abs(candidate - known).max() < 1e-6 for known in group):
                    group.append(candidate)
                    next_frontier.append(candidate)
        frontier = next_frontier
        if len(group) > 120:
            raise ValueError("puzzle axes do not generate a finite rotation group")
    # Keep only rotations mapping the facelet centres onto themselves.
    kept = []
    for element in group:
        moved = centers @ element.T
        gaps = np.linalg.norm(moved[:, None, :] - centers[None, :, :], axis=-1).min(axis=1)
        if gaps.max() < 1e-3 * max(1.0, float(np.abs(centers).max())):
            kept.append(element)
    return tuple(kept)


def _part_index(axis: Any, part_names: tuple[str, ...], point: FloatArray) -> int:
    """Index of the part holding `point` (`part_of` may answer with an index or a name)."""
    part = axis.part_of(tuple(float(v) for v in point))
    if isinstance(part, int | np.integer):
        return int(part)
    return part_names.index(str(part))


@functools.cache
def puzzle_model(name: str) -> PuzzleModel:
    """The model of a puzzle known to `judgecam.puzzle.get_puzzle` ("333", "222", "pyram")."""
    from judgecam.puzzle import get_puzzle

    return model_from_puzzle(get_puzzle(name))


def model_from_puzzle(puzzle: Any) -> PuzzleModel:
    """Convert a domain puzzle (faces, facelets, axes) into arrays."""
    face_names = tuple(str(face.name) for face in puzzle.faces)
    face_normals = np.array([face.normal for face in puzzle.faces], dtype=np.float64)
    facelets = sorted(puzzle.facelets, key=lambda facelet: int(facelet.index))
    centers = np.array([facelet.center for facelet in facelets], dtype=np.float64)
    normals = np.array([facelet.normal for facelet in facelets], dtype=np.float64)
    corners = np.array([facelet.corners for facelet in facelets], dtype=np.float64)
    faces = np.array([face_names.index(str(facelet.face)) for facelet in facelets], np.int64)
    pieces = tuple(facelet.piece for facelet in facelets)
    axes = []
    for axis in puzzle.axes:
        part_names = tuple(str(part) for part in axis.part_names)
        direction = np.asarray(axis.direction, dtype=np.float64)
        direction = direction / np.linalg.norm(direction)
        # A facelet turns with the part holding its piece; the sticker centre pushed slightly
        # inwards lies inside that piece on every puzzle we model.
        inner = centers - normals * 0.5
        parts = np.array([_part_index(axis, part_names, point) for point in inner], np.int64)
        axes.append(
            AxisModel(
                name=str(axis.name),
                direction=direction,
                part_names=part_names,
                facelet_part=parts,
                step_deg=float(axis.step_deg),
                limit_deg=float(axis.limit_deg),
            )
        )
    axes_tuple = tuple(axes)
    return PuzzleModel(
        name=str(puzzle.name),
        face_names=face_names,
        face_normals=face_normals,
        facelet_face=faces,
        facelet_piece=pieces,
        facelet_centers=centers,
        facelet_normals=normals,
        facelet_corners=corners,
        axes=axes_tuple,
        symmetries=_symmetry_group(axes_tuple, centers),
    )
