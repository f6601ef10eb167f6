"""Pyraminx geometry: a regular tetrahedron with four faces of nine triangles.

Frame (WCA scrambling orientation, KCA Art. 9.5): the D face lies on the table (normal -y), the
vertex U points up (+y), the F face looks towards the viewer (+z side), the base vertices are L
(left front), R (right front) and B (back). Each face is named after the vertex it does not
touch: F = (U, L, R), L = (U, B, L), R = (U, R, B), D = (L, R, B).

Axes are named after the vertices, as in WCA notation; `direction` points from the centre to the
vertex. The parts along each axis, from the negative end: "base" (the rest of the puzzle, which
includes the opposite face), "layer" (the axial centre piece and the three edges around it,
without the tip) and "tip". U turns layer+tip, u turns the tip alone (both clockwise seen from
the vertex, i.e. -120 degrees about `direction`).

Facelet order: faces F, L, R, D; each face row by row, left to right, as seen from outside with
the U vertex at the top (F, L, R: 1, 3 and 5 triangles per row) or, for D, with the F edge at the
top (5, 3 and 1 triangles, the B tip last).
"""

from __future__ import annotations

import logging
import math

from judgecam.puzzle.geometry import (
    Axis,
    Face,
    Facelet,
    Piece,
    PuzzleSpec,
    Vec3,
    cross,
    dot,
    mean,
    scale,
    sub,
    unit,
    vec,
)

logger = logging.getLogger(__name__)

PYRAMINX_STEP_DEG = 120.0
PYRAMINX_LIMIT_DEG = 60.0  # WCA 10f, KCA 13.3.a.a

#: Face name and the vertices it touches, in counter-clockwise order seen from outside.
PYRAMINX_FACES: tuple[tuple[str, tuple[str, str, str]], ...] = (
    ("F", ("U", "L", "R")),
    ("L", ("U", "B", "L")),
    ("R", ("U", "R", "B")),
    ("D", ("L", "B", "R")),
)

#: Standard scheme in scrambling orientation: yellow at the bottom, green in front (Art. 9.5).
PYRAMINX_COLORS: tuple[tuple[str, str], ...] = (
    ("F", "green"),
    ("L", "red"),
    ("R", "blue"),
    ("D", "yellow"),
)

VERTEX_NAMES: tuple[str, ...] = ("U", "L", "R", "B")


def pyraminx_vertices(edge_mm: float) -> dict[str, Vec3]:
    """The four vertices of a regular tetrahedron of edge `edge_mm`, centroid at the origin."""
    height = edge_mm * math.sqrt(6) / 3
    base_y = -height / 4
    return {
        "U": vec(0.0, 3 * height / 4, 0.0),
        "L": vec(-edge_mm / 2, base_y, edge_mm / (2 * math.sqrt(3))),
        "R": vec(edge_mm / 2, base_y, edge_mm / (2 * math.sqrt(3))),
        "B": vec(0.0, base_y, -edge_mm / math.sqrt(3)),
    }


def _grid_point(corners: dict[str, Vec3], weights: dict[str, int]) -> Vec3:
    """The point with integer barycentric `weights` (summing to 3) on a face."""
    total = sum(weights.values())
    return vec(*(sum(corners[v][i] * w for v, w in weights.items()) / total for i in range(3)))


def _small_triangles(
    names: tuple[str, str, str],
) -> list[tuple[tuple[str, str], list[dict[str, int]]]]:
    """The nine small triangles of a face as (piece key, barycentric corner weights)."""
    a, b, c = names
    triangles: list[tuple[tuple[str, str], list[dict[str, int]]]] = []
    for i in range(3):
        for j in range(3 - i):
            k = 2 - i - j
            if k >= 0:  # upward triangle: a tip or an edge
                weights = {a: i, b: j, c: k}
                corners = [
                    {a: i + 1, b: j, c: k},
                    {a: i, b: j + 1, c: k},
                    {a: i, b: j, c: k + 1},
                ]
                twos = [v for v, w in weights.items() if w == 2]
                if twos:
                    key = ("tip", twos[0])
                else:
                    ones = sorted((v for v, w in weights.items() if w == 1), key=VERTEX_NAMES.index)
                    key = ("edge", "".join(ones))
                triangles.append((key, corners))
            k = 1 - i - j
            if k >= 0:  # downward triangle: an axial centre
                weights = {a: i, b: j, c: k}
                corners = [
                    {a: i, b: j + 1, c: k + 1},
                    {a: i + 1, b: j, c: k + 1},
                    {a: i + 1, b: j + 1, c: k},
                ]
                one = next(v for v, w in weights.items() if w == 1)
                triangles.append((("center", one), corners))
    return triangles


def build_pyraminx(name: str, title: str, edge_mm: float) -> PuzzleSpec:
    """The PuzzleSpec of a Pyraminx with the given edge length."""
    vertices = pyraminx_vertices(edge_mm)
    height = edge_mm * math.sqrt(6) / 3
    face_height = edge_mm * math.sqrt(3) / 2
    row_height = face_height / 3

    faces: list[Face] = []
    raw: list[tuple[str, Vec3, Vec3, tuple[Vec3, ...], tuple[str, str]]] = []
    for face_name, names in PYRAMINX_FACES:
        corners = {v: vertices[v] for v in names}
        centre = mean([corners[v] for v in names])
        normal = unit(
            cross(
                sub(corners[names[1]], corners[names[0]]), sub(corners[names[2]], corners[names[0]])
            )
        )
        faces.append(Face(face_name, normal, centre))
        toward = sub(vertices["U"], centre) if "U" in names else (0.0, 0.0, 1.0)
        up = unit(sub(toward, scale(normal, dot(toward, normal))))
        right = cross(up, normal)
        top = max(dot(corners[v], up) for v in names)
        entries = []
        for key, weights in _small_triangles(names):
            points = [_grid_point(corners, w) for w in weights]
            if dot(cross(sub(points[1], points[0]), sub(points[2], points[0])), normal) < 0:
                points = [points[0], points[2], points[1]]
            point = mean(points)
            row = int((top - dot(point, up)) // row_height)
            entries.append(((row, dot(point, right)), point, tuple(points), key))
        entries.sort(key=lambda entry: entry[0])
        for _, point, polygon, key in entries:
            raw.append((face_name, point, normal, polygon, key))

    kind_order = {"tip": 0, "center": 1, "edge": 2}
    keys = sorted(
        {entry[4] for entry in raw},
        key=lambda k: (kind_order[k[0]], [VERTEX_NAMES.index(v) for v in k[1]]),
    )
    key_index = {key: i for i, key in enumerate(keys)}
    members: dict[int, list[int]] = {i: [] for i in range(len(keys))}
    facelets = []
    for index, (face_name, point, normal, polygon, key) in enumerate(raw):
        members[key_index[key]].append(index)
        facelets.append(Facelet(index, face_name, point, normal, polygon, key_index[key]))
    pieces = tuple(
        Piece(i, key[0], tuple(members[i]), mean([facelets[f].center for f in members[i]]))
        for i, key in enumerate(keys)
    )
    axes = tuple(
        Axis(
            name=vertex,
            direction=unit(vertices[vertex]),
            part_names=("base", "layer", "tip"),
            cuts=(height / 12, 5 * height / 12),
            step_deg=PYRAMINX_STEP_DEG,
            limit_deg=PYRAMINX_LIMIT_DEG,
        )
        for vertex in VERTEX_NAMES
    )
    return PuzzleSpec(
        name=name,
        title=title,
        edge_mm=edge_mm,
        faces=tuple(faces),
        facelets=tuple(facelets),
        pieces=pieces,
        axes=axes,
        default_colors=PYRAMINX_COLORS,
    )
