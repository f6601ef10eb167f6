"""NxNxN cube geometry: six faces of N x N facelets, N layers on each of the axes x, y, z.

Facelet order (the reading order of Kociemba facelet strings): faces U, R, F, D, L, B; each face
row by row, left to right, as seen from outside with U at the top for the side faces, B at the
top for U and F at the top for D. Axes: "x" towards R, "y" towards U, "z" towards F; parts from
the negative end (L, D, B) to the positive end (R, U, F).
"""

from __future__ import annotations

import logging

from judgecam.puzzle.geometry import (
    Axis,
    Face,
    Facelet,
    Piece,
    PuzzleSpec,
    Vec3,
    add,
    cross,
    scale,
    sub,
    vec,
)

logger = logging.getLogger(__name__)

#: (face name, outward normal, the direction that is "up" when the face is seen from outside).
CUBE_FACES: tuple[tuple[str, Vec3, Vec3], ...] = (
    ("U", (0.0, 1.0, 0.0), (0.0, 0.0, -1.0)),
    ("R", (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    ("F", (0.0, 0.0, 1.0), (0.0, 1.0, 0.0)),
    ("D", (0.0, -1.0, 0.0), (0.0, 0.0, 1.0)),
    ("L", (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    ("B", (0.0, 0.0, -1.0), (0.0, 1.0, 0.0)),
)

#: WCA standard colour scheme in scrambling orientation: white top, green front (Art. 9.5).
CUBE_COLORS: tuple[tuple[str, str], ...] = (
    ("U", "white"),
    ("R", "red"),
    ("F", "green"),
    ("D", "yellow"),
    ("L", "orange"),
    ("B", "blue"),
)

#: Axis name, direction, face at the negative end, face at the positive end, 3x3x3 middle slice.
CUBE_AXES: tuple[tuple[str, Vec3, str, str, str], ...] = (
    ("x", (1.0, 0.0, 0.0), "L", "R", "M"),
    ("y", (0.0, 1.0, 0.0), "D", "U", "E"),
    ("z", (0.0, 0.0, 1.0), "B", "F", "S"),
)

CUBE_STEP_DEG = 90.0
CUBE_LIMIT_DEG = 45.0  # WCA 10f, KCA 13.3.a.a


def layer_names(layers: int, low: str, high: str, slice_name: str) -> tuple[str, ...]:
    """Part names along one axis: outer faces at the ends; inner layers named by their depth.

    3x3x3 calls its only inner layer by the slice letter (M, E, S); bigger cubes name inner
    layers by the face they are nearer to and their depth (2L, 3L, ..., 2R), the middle layer of
    an odd cube by the slice letter.
    """
    names = []
    for index in range(layers):
        if index == 0:
            names.append(low)
        elif index == layers - 1:
            names.append(high)
        elif layers % 2 == 1 and index == layers // 2:
            names.append(slice_name)
        elif index < layers / 2:
            names.append(f"{index + 1}{low}")
        else:
            names.append(f"{layers - index}{high}")
    return tuple(names)


def build_cube(name: str, title: str, layers: int, edge_mm: float) -> PuzzleSpec:
    """The PuzzleSpec of an NxNxN cube with `layers` layers per axis and the given edge length."""
    cell = edge_mm / layers
    half = edge_mm / 2
    faces = tuple(Face(face, normal, scale(normal, half)) for face, normal, _ in CUBE_FACES)

    # Visible cubie slots, keyed by their integer grid position (0..N-1 on each axis).
    def cubie_center(grid: tuple[int, int, int]) -> Vec3:
        return vec(*((g + 0.5) * cell - half for g in grid))

    facelet_grid: list[tuple[int, int, int]] = []
    facelets_raw: list[tuple[str, Vec3, Vec3, tuple[Vec3, ...]]] = []
    for face, normal, up in CUBE_FACES:
        right = cross(up, normal)
        centre = scale(normal, half)
        for row in range(layers):
            for column in range(layers):
                across = (column + 0.5 - layers / 2) * cell
                down = (layers / 2 - row - 0.5) * cell
                point = add(centre, add(scale(right, across), scale(up, down)))
                corners = tuple(
                    add(point, add(scale(right, dx * cell / 2), scale(up, dy * cell / 2)))
                    for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
                )
                inner = sub(point, scale(normal, cell / 2))
                grid = tuple(round((c + half) / cell - 0.5) for c in inner)
                facelet_grid.append((grid[0], grid[1], grid[2]))
                facelets_raw.append((face, point, normal, corners))

    slots = sorted(set(facelet_grid), key=lambda g: (g[1], g[2], g[0]))
    slot_index = {grid: i for i, grid in enumerate(slots)}
    members: dict[int, list[int]] = {i: [] for i in range(len(slots))}
    facelets = []
    for index, ((face, point, normal, corners), grid) in enumerate(
        zip(facelets_raw, facelet_grid, strict=True)
    ):
        piece = slot_index[grid]
        members[piece].append(index)
        facelets.append(Facelet(index, face, point, normal, corners, piece))
    kinds = {1: "center", 2: "edge", 3: "corner"}
    pieces = tuple(
        Piece(i, kinds[len(members[i])], tuple(members[i]), cubie_center(grid))
        for i, grid in enumerate(slots)
    )

    axes = tuple(
        Axis(
            name=axis_name,
            direction=direction,
            part_names=layer_names(layers, low, high, slice_name),
            cuts=tuple(k * cell - half for k in range(1, layers)),
            step_deg=CUBE_STEP_DEG,
            limit_deg=CUBE_LIMIT_DEG,
        )
        for axis_name, direction, low, high, slice_name in CUBE_AXES
    )
    return PuzzleSpec(
        name=name,
        title=title,
        edge_mm=edge_mm,
        faces=faces,
        facelets=tuple(facelets),
        pieces=pieces,
        axes=axes,
        default_colors=CUBE_COLORS,
    )
