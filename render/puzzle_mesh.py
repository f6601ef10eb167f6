"""Meshes of puzzles built from the domain geometry (`judgecam.puzzle`), in the puzzle frame.

Cubes: cubies with rounded edges on a black core, with inset rounded stickers (or, stickerless,
each cubie face moulded in its colour with thin dark gaps). Pyraminx: every piece is the convex
cell the cut planes make inside the tetrahedron, black, with rounded triangular stickers.
Every part may be turned by any angle about its axis.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle import PuzzleSpec
from judgecam.render.color import ColorScheme
from judgecam.render.mesh import (
    BOX_FACES,
    Material,
    Mesh,
    concat,
    convex_polytope,
    flat_polygon,
    lathe,
    make_mesh,
    polygon_fan,
    rotation_about,
    rounded_box_faces,
    rounded_outline,
)

logger = logging.getLogger(__name__)

STICKER_THICKNESS_MM = 0.25
BODY_BLACK = Material((0.018, 0.018, 0.02), 0.32, 0.045)
INNER_DARK = Material((0.03, 0.03, 0.032), 0.5, 0.04)


@dataclass(frozen=True)
class PuzzleLook:
    """How the physical puzzle looks: stickers or moulded colour, scheme, logo and damage."""

    style: str  # "stickered" or "stickerless"
    scheme: ColorScheme
    sticker_roughness: float = 0.25
    logo_facelet: int | None = None
    logo_color: str = "black"  # "black" or "white" emblem
    missing_facelets: tuple[int, ...] = ()


@dataclass(frozen=True)
class FaceletGeometry:
    """Where one facelet's sticker is, in the puzzle frame, after part rotations.

    `polygon` are the sticker's corners (rounded corners cut square), `outline` the rounded
    outline (for its projected area), both on the sticker's top surface.
    """

    index: int
    face: str
    center: NDArray[np.float64]
    normal: NDArray[np.float64]
    polygon: NDArray[np.float64]
    outline: NDArray[np.float64]


@dataclass(frozen=True)
class PuzzleModel:
    """A posed puzzle in its own frame: the mesh and every facelet's geometry."""

    mesh: Mesh
    facelets: tuple[FaceletGeometry, ...]


def _cube_dims(spec: PuzzleSpec) -> tuple[int, float]:
    layers = len(spec.axes[0].part_names)
    return layers, spec.edge_mm / layers


def _shrink(corners: NDArray[np.float64], inset: float) -> NDArray[np.float64]:
    """A convex polygon with every edge moved inward by `inset` (corners stay sharp)."""
    return rounded_outline(corners, inset, 1e-9, segments=1)[::2]


def sticker_inset(spec: PuzzleSpec, style: str) -> tuple[float, float]:
    """(inset from the cell edge, corner radius) of a sticker or moulded face, in mm."""
    if spec.name == "pyram":
        return 1.3, 1.2
    _, pitch = _cube_dims(spec)
    if style == "stickerless":
        # the moulded face's flat region: where the ID pass marks it (see _piece_body)
        return _gap(spec, style) / 2 + 0.643 * _body_radius(spec, style), 0.2
    return pitch * 0.075, pitch * 0.14


def _body_radius(spec: PuzzleSpec, style: str) -> float:
    """Radius of the rounded cubie edges, mm (stickerless cubies are rounder)."""
    _, pitch = _cube_dims(spec)
    return pitch * (0.08 if style == "stickerless" else 0.055)


def piece_rotations(
    spec: PuzzleSpec, residuals: dict[str, list[float]]
) -> list[NDArray[np.float64]]:
    """The rotation (4x4) of every piece: each axis turns the piece by its part's angle."""
    rotations = []
    for piece in spec.pieces:
        m = np.eye(4)
        for axis in spec.axes:
            angles = residuals.get(axis.name)
            if not angles:
                continue
            angle = angles[axis.part_of(piece.center)]
            if angle:
                m = rotation_about(axis.direction, angle) @ m
        rotations.append(m)
    return rotations


def build_puzzle(
    spec: PuzzleSpec,
    colors: tuple[str, ...],
    look: PuzzleLook,
    residuals: dict[str, list[float]],
) -> PuzzleModel:
    """The puzzle with facelet colours `colors` (by index, already snapped) and each axis's
    parts turned by `residuals[axis][part]` degrees (right-handed about the axis direction)."""
    rotations = piece_rotations(spec, residuals)
    inset, radius = sticker_inset(spec, look.style)
    lift = 0.0 if spec.name == "pyram" else -_gap(spec, look.style) / 2
    top = lift + (STICKER_THICKNESS_MM if look.style == "stickered" else 0.0)
    meshes: list[Mesh] = [_core(spec)]
    facelets: list[FaceletGeometry] = []
    for piece, rotation in zip(spec.pieces, rotations, strict=True):
        parts = [_piece_body(spec, piece.index, colors, look)]
        for index in piece.facelets:
            facelet = spec.facelets[index]
            corners = np.asarray(facelet.corners, np.float64)
            normal = np.asarray(facelet.normal, np.float64)
            if look.style == "stickered" and index not in look.missing_facelets:
                outline = rounded_outline(corners, inset, radius)
                material = Material(
                    tuple(look.scheme.albedo(colors[index])),
                    look.sticker_roughness,
                    0.05,
                    object_id=index + 1,
                )
                parts.append(flat_polygon(outline, STICKER_THICKNESS_MM, material, lift))
                if index == look.logo_facelet:
                    parts.append(
                        _logo(facelet.center, normal, corners, top, look.logo_color, index)
                    )
            polygon = _shrink(corners, inset) + normal * top
            outline_top = rounded_outline(corners, inset, radius) + normal * top
            facelets.append(
                FaceletGeometry(
                    index,
                    facelet.face,
                    _apply(rotation, np.asarray(facelet.center, np.float64) + normal * top),
                    rotation[:3, :3] @ normal,
                    _apply(rotation, polygon),
                    _apply(rotation, outline_top),
                )
            )
        meshes.append(concat(parts).transformed(rotation))
    facelets.sort(key=lambda f: f.index)
    return PuzzleModel(concat(meshes), tuple(facelets))


def _apply(m: NDArray[np.float64], points: NDArray[np.float64]) -> NDArray[np.float64]:
    pts = np.asarray(points, np.float64)
    return np.asarray(pts @ m[:3, :3].T + m[:3, 3], np.float64)


def _gap(spec: PuzzleSpec, style: str) -> float:
    if spec.name == "pyram":
        return 0.6
    return 0.7 if style == "stickerless" else 0.35


def _core(spec: PuzzleSpec) -> Mesh:
    """A dark core that fills the inside, so gaps and turned layers show dark plastic."""
    if spec.name == "pyram":
        return concat([_pyraminx_cell_mesh(spec, (0, 0, 0, 0), INNER_DARK)])
    r = spec.edge_mm * 0.36
    t = np.linspace(-math.pi / 2, math.pi / 2, 17)
    pos, nrm = lathe(np.stack([r * np.cos(t), r * np.sin(t)], 1), 24)
    return make_mesh(pos, nrm, INNER_DARK)


def _piece_body(
    spec: PuzzleSpec, piece_index: int, colors: tuple[str, ...], look: PuzzleLook
) -> Mesh:
    piece = spec.pieces[piece_index]
    if spec.name == "pyram":
        cell = tuple(axis.part_of(piece.center) for axis in spec.axes)
        return _pyraminx_cell_mesh(spec, cell, BODY_BLACK)
    _, pitch = _cube_dims(spec)
    gap = _gap(spec, look.style)
    half = pitch / 2 - gap / 2
    centre = np.asarray(piece.center, np.float64)
    radius = _body_radius(spec, look.style)
    patches = rounded_box_faces((half, half, half), radius, 4)
    by_normal: dict[tuple[int, float], int] = {}
    for index in piece.facelets:
        n = np.asarray(spec.facelets[index].normal, np.float64)
        axis = int(np.argmax(np.abs(n)))
        by_normal[(axis, float(np.sign(n[axis])))] = index
    meshes = []
    for (axis, sign), (pos, nrm) in zip(BOX_FACES, patches, strict=True):
        found = by_normal.get((axis, sign))
        pos = pos + centre
        if look.style == "stickered" or found is None:
            meshes.append(make_mesh(pos, nrm, BODY_BLACK if found is not None else INNER_DARK))
            continue
        index = found
        if index in look.missing_facelets:  # a missing cap shows a dark recess
            meshes.append(make_mesh(pos, nrm, INNER_DARK))
            continue
        albedo = tuple(look.scheme.albedo(colors[index]))
        # the ID covers the flat face and the first band of the rounding (normals within
        # about 20 degrees); `sticker_inset` gives the matching outline
        tri_n = nrm.reshape(-1, 3, 3).mean(axis=1)
        flat = tri_n[:, axis] * sign > 0.97
        flat_v = np.repeat(flat, 3)
        moulded = Material(albedo, look.sticker_roughness + 0.1, 0.045, object_id=index + 1)
        edge = Material(albedo, look.sticker_roughness + 0.1, 0.045)
        meshes.append(make_mesh(pos[flat_v], nrm[flat_v], moulded))
        meshes.append(make_mesh(pos[~flat_v], nrm[~flat_v], edge))
        if index == look.logo_facelet:
            facelet = spec.facelets[index]
            meshes.append(
                _logo(
                    facelet.center,
                    np.asarray(facelet.normal),
                    np.asarray(facelet.corners),
                    -gap / 2,
                    look.logo_color,
                    index,
                )
            )
    return concat(meshes)


def _logo(
    centre: tuple[float, float, float] | NDArray[np.float64],
    normal: NDArray[np.float64],
    corners: NDArray[np.float64],
    height: float,
    color: str,
    index: int,
) -> Mesh:
    """A small emblem (a ring with a bar, like a brand logo) printed on a centre."""
    c = np.asarray(centre, np.float64) + normal * (height + 0.02)
    size = float(np.linalg.norm(corners[1] - corners[0])) * 0.26
    u = (corners[1] - corners[0]) / np.linalg.norm(corners[1] - corners[0])
    v = np.cross(normal, u)
    albedo = (0.02, 0.02, 0.02) if color == "black" else (0.75, 0.75, 0.74)
    material = Material(albedo, 0.3, 0.05, object_id=index + 1)
    t = np.linspace(0, 2 * math.pi, 33)[:-1]
    ring_out = c + size * (np.outer(np.cos(t), u) + np.outer(np.sin(t), v))
    ring_in = c + 0.72 * size * (np.outer(np.cos(t), u) + np.outer(np.sin(t), v))
    nxt = np.roll(np.arange(len(t)), -1)
    tris = np.stack([ring_out, ring_out[nxt], ring_in[nxt], ring_out, ring_in[nxt], ring_in], 1)
    bar = np.array(
        [
            c - 0.7 * size * u - 0.12 * size * v,
            c + 0.7 * size * u - 0.12 * size * v,
            c + 0.7 * size * u + 0.12 * size * v,
            c - 0.7 * size * u + 0.12 * size * v,
        ]
    )
    bar_tris, _ = polygon_fan(bar)
    pos = np.vstack([tris.reshape(-1, 3), bar_tris])
    return make_mesh(pos, np.tile(normal, (len(pos), 1)), material)


@lru_cache(maxsize=64)
def _pyraminx_cell_faces(spec_name: str, cell: tuple[int, ...]) -> tuple[NDArray[np.float64], ...]:
    from judgecam.puzzle import get_puzzle

    spec = get_puzzle(spec_name)
    gap = _gap(spec, "stickered")
    planes = []
    for face in spec.faces:
        n = np.asarray(face.normal, np.float64)
        planes.append([*n, float(n @ np.asarray(face.center, np.float64))])
    for axis, part in zip(spec.axes, cell, strict=True):
        d = np.asarray(axis.direction, np.float64)
        if part > 0:  # above the cut below this part
            planes.append([*(-d), -(axis.cuts[part - 1] + gap / 2)])
        if part < len(axis.cuts):  # below the cut above this part
            planes.append([*d, axis.cuts[part] - gap / 2])
    return tuple(convex_polytope(np.asarray(planes)))


def _pyraminx_cell_mesh(spec: PuzzleSpec, cell: tuple[int, ...], material: Material) -> Mesh:
    loops = _pyraminx_cell_faces(spec.name, cell)
    tris, normals = zip(*(polygon_fan(loop) for loop in loops), strict=True) if loops else ((), ())
    if not tris:
        return concat([])
    return make_mesh(np.vstack(tris), np.vstack(normals), material)
