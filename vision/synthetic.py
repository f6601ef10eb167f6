"""Quick synthetic views of a puzzle for unit tests and benchmarks (not the ground-truth corpus).

A flat-shaded projection of the puzzle model: black body, coloured stickers, one axis's parts
turned by known angles, optional noise and blur. It exists so that the vision stages can be
tested on inputs built in code with exactly known answers; the rendered corpus in
`tests/images/` (made by `judgecam.render`) is the realistic test.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.model import PuzzleModel, rotation_about

logger = logging.getLogger(__name__)

#: A common colour scheme (BGR): U white, R red, F green, D yellow, L orange, B blue.
DEFAULT_SCHEME_BGR: dict[str, tuple[int, int, int]] = {
    "U": (245, 245, 245),
    "R": (40, 30, 200),
    "F": (70, 180, 20),
    "D": (30, 220, 240),
    "L": (20, 130, 255),
    "B": (200, 90, 10),
}


@dataclass(frozen=True)
class SyntheticView:
    """One rendered view and its exact answers."""

    image: NDArray[np.uint8]
    camera_matrix: NDArray[np.float64]
    rvec: NDArray[np.float64]
    tvec: NDArray[np.float64]
    visible: NDArray[np.bool_]  # (F,) facelet faces the camera
    centers_px: NDArray[np.float64]  # (F, 2)


@dataclass(frozen=True)
class Turn:
    """Angles (degrees) of each part of one axis; the other axes stay aligned."""

    axis: int = 0
    part_angles: tuple[float, ...] = field(default_factory=tuple)


def look_at(
    eye: NDArray[np.float64], target: NDArray[np.float64], up: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(rvec, tvec) of the world->camera transform for a camera at `eye` looking at `target`."""
    forward = target - eye
    forward = forward / np.linalg.norm(forward)
    right = np.cross(forward, up)
    right = right / np.linalg.norm(right)
    down = np.cross(forward, right)
    rotation = np.stack([right, down, forward])  # rows: camera x (right), y (down), z (forward)
    tvec = -rotation @ eye
    rvec, _ = cv2.Rodrigues(rotation)
    return np.asarray(rvec, np.float64).reshape(3), np.asarray(tvec, np.float64).reshape(3)


def default_camera(width: int, height: int, hfov_deg: float = 66.0) -> NDArray[np.float64]:
    focal = (width / 2) / np.tan(np.deg2rad(hfov_deg) / 2)
    return np.array([[focal, 0, width / 2], [0, focal, height / 2], [0, 0, 1]], dtype=np.float64)


def turned_corners(model: PuzzleModel, turn: Turn | None) -> tuple[NDArray[np.float64], ...]:
    """Facelet corners, centres and normals after turning the parts of one axis."""
    corners = model.facelet_corners.copy()
    centers = model.facelet_centers.copy()
    normals = model.facelet_normals.copy()
    if turn is not None and turn.part_angles:
        axis = model.axes[turn.axis]
        for part, angle in enumerate(turn.part_angles):
            if angle == 0:
                continue
            rotation = rotation_about(axis.direction, angle)
            selected = axis.facelet_part == part
            corners[selected] = corners[selected] @ rotation.T
            centers[selected] = centers[selected] @ rotation.T
            normals[selected] = normals[selected] @ rotation.T
    return corners, centers, normals


def render_view(
    model: PuzzleModel,
    facelet_bgr: NDArray[np.uint8],
    eye: tuple[float, float, float],
    *,
    size: tuple[int, int] = (1280, 720),
    turn: Turn | None = None,
    target: tuple[float, float, float] = (0.0, 0.0, 0.0),
    background: tuple[int, int, int] = (150, 160, 170),
    noise_sigma: float = 3.0,
    blur_sigma: float = 0.8,
    sticker_scale: float = 0.86,
    seed: int = 0,
) -> SyntheticView:
    """Render the puzzle seen from `eye` (mm, puzzle frame) with flat colours."""
    width, height = size
    camera = default_camera(width, height)
    up = np.array([0.0, 1.0, 0.0])
    eye_vec = np.asarray(eye, dtype=np.float64)
    if abs(np.dot(up, eye_vec - np.asarray(target)) / np.linalg.norm(eye_vec)) > 0.99:
        up = np.array([0.0, 0.0, -1.0])
    rvec, tvec = look_at(eye_vec, np.asarray(target, dtype=np.float64), up)
    corners, centers, normals = turned_corners(model, turn)
    stickers = centers[:, None, :] + (corners - centers[:, None, :]) * sticker_scale
    visible = np.einsum("ij,ij->i", normals, eye_vec[None, :] - centers) > 0

    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = background
    dist = np.zeros(5)
    stickers_px, _ = cv2.projectPoints(stickers.reshape(-1, 3), rvec, tvec, camera, dist)
    stickers_px = stickers_px.reshape(corners.shape[0], -1, 2)
    centers_px, _ = cv2.projectPoints(centers, rvec, tvec, camera, dist)
    shift = 4
    scale = float(1 << shift)
    pitch = float(np.linalg.norm(corners[0, 0] - corners[0, 1]))
    # Each piece is a black cube behind its stickers; pieces are painted far to near.
    piece_ids = sorted(set(model.facelet_piece), key=str)
    piece_of = np.array([piece_ids.index(piece) for piece in model.facelet_piece])
    piece_centers = np.array(
        [
            np.mean(centers[piece_of == k] - normals[piece_of == k] * pitch / 2, axis=0)
            for k in range(len(piece_ids))
        ]
    )
    piece_depth = np.linalg.norm(piece_centers - eye_vec, axis=1)
    for piece in np.argsort(-piece_depth):
        members = np.nonzero(piece_of == piece)[0]
        cube = _cube_faces(piece_centers[piece], normals[members], pitch / 2)
        for face_normal, face in cube:
            if np.dot(face_normal, eye_vec - face.mean(axis=0)) <= 0:
                continue
            face_px, _ = cv2.projectPoints(face, rvec, tvec, camera, dist)
            cv2.fillPoly(
                image,
                [np.rint(face_px.reshape(-1, 2) * scale).astype(np.int32)],
                (18, 18, 18),
                cv2.LINE_AA,
                shift,
            )
        for index in members:
            if not visible[index]:
                continue
            sticker = np.rint(stickers_px[index] * scale).astype(np.int32)
            color = tuple(int(v) for v in facelet_bgr[index])
            cv2.fillPoly(image, [sticker], color, cv2.LINE_AA, shift)
    if blur_sigma > 0:
        image = np.asarray(cv2.GaussianBlur(image, (0, 0), blur_sigma), dtype=np.uint8)
    if noise_sigma > 0:
        rng = np.random.default_rng(seed)
        noisy = image.astype(np.float32) + rng.normal(0, noise_sigma, image.shape)
        image = np.clip(noisy, 0, 255).astype(np.uint8)
    return SyntheticView(
        image=image,
        camera_matrix=camera,
        rvec=np.asarray(rvec, dtype=np.float64).reshape(3),
        tvec=np.asarray(tvec, dtype=np.float64).reshape(3),
        visible=visible,
        centers_px=np.asarray(centers_px, dtype=np.float64).reshape(-1, 2),
    )


def _cube_faces(
    center: NDArray[np.float64], sticker_normals: NDArray[np.float64], half: float
) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """The six faces (normal, 4 corners) of a cube piece oriented like its stickers."""
    first = sticker_normals[0]
    helper = np.array([1.0, 0.0, 0.0]) if abs(first[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    if len(sticker_normals) > 1:
        helper = sticker_normals[1]
    second = helper - np.dot(helper, first) * first
    second = second / np.linalg.norm(second)
    third = np.cross(first, second)
    faces = []
    for normal, (u, v) in (
        (first, (second, third)),
        (-first, (second, third)),
        (second, (first, third)),
        (-second, (first, third)),
        (third, (first, second)),
        (-third, (first, second)),
    ):
        corners = np.array(
            [
                center + half * (normal + a * u + b * v)
                for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))
            ]
        )
        faces.append((normal, corners))
    return faces


def solved_colors(model: PuzzleModel) -> NDArray[np.uint8]:
    """BGR per facelet of the solved puzzle in `DEFAULT_SCHEME_BGR` (grey for unknown faces)."""
    colors = [
        DEFAULT_SCHEME_BGR.get(model.face_names[f], (128, 128, 128)) for f in model.facelet_face
    ]
    return np.array(colors, dtype=np.uint8)
