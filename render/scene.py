"""The judge station around the puzzle: table, judge mat, lights and optional clutter.

World frame: millimetres, the table top is z = 0, +z up; the mat lies on the table and the
puzzle rests on the mat near the origin. Textures are procedural (numpy / OpenCV drawing) so a
seed reproduces them exactly.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.render.color import blackbody_rgb, srgb_to_linear
from judgecam.render.gl import Lighting
from judgecam.render.mesh import (
    TEX_MAT,
    TEX_TABLE,
    Material,
    Mesh,
    capsule,
    concat,
    flat_polygon,
    lathe,
    make_mesh,
    rounded_box_faces,
    textured_plane,
)

logger = logging.getLogger(__name__)

TEXTURE_SIZE = 1024

#: Mat base colours (sRGB) seen at competitions: black, blue, grey, red, green, purple.
MAT_COLORS = {
    "black": (30, 30, 32),
    "blue": (30, 60, 140),
    "grey": (95, 98, 102),
    "red": (150, 30, 35),
    "green": (35, 110, 60),
    "purple": (80, 45, 120),
}
SKIN_TONES = ((235, 195, 165), (205, 150, 115), (160, 110, 80), (110, 75, 55))


def mat_texture(rng: np.random.Generator, base_srgb: tuple[int, int, int]) -> NDArray[np.float32]:
    """A rubbery judge-mat texture (linear albedo, 0..1): base colour, fine speckle, a printed
    border, a timer-pad outline and a small logo, in a lighter or darker ink."""
    n = TEXTURE_SIZE
    base = srgb_to_linear(np.asarray(base_srgb, np.float64) / 255.0)
    speckle = rng.normal(0.0, 1.0, (n // 4, n // 4)).astype(np.float32)
    speckle = np.asarray(cv2.resize(speckle, (n, n), interpolation=cv2.INTER_CUBIC), np.float32)
    fine = rng.normal(0.0, 1.0, (n, n)).astype(np.float32)
    mottling = 1.0 + 0.06 * speckle + 0.015 * fine
    img = np.clip(base[None, None, :] * mottling[..., None], 0, 1)
    bright = float(np.mean(base)) < 0.1
    ink = np.full(3, 0.55 if bright else 0.02, np.float32)
    canvas = np.zeros((n, n), np.uint8)
    m = int(n * rng.uniform(0.03, 0.06))
    cv2.rectangle(canvas, (m, m), (n - m, n - m), 255, int(rng.integers(4, 10)))
    if rng.random() < 0.7:
        cv2.rectangle(canvas, (2 * m, 2 * m), (n - 2 * m, n - 2 * m), 255, 2)
    cx, cy = int(n * rng.uniform(0.15, 0.3)), int(n * rng.uniform(0.7, 0.85))
    cv2.circle(canvas, (cx, cy), int(n * 0.06), 255, 5)
    cv2.putText(
        canvas,
        str(rng.choice(["CUBE", "JUDGE", "SPEED", "WCA"])),
        (int(n * 0.55), int(n * 0.9)),
        cv2.FONT_HERSHEY_DUPLEX,
        2.2,
        255,
        5,
        cv2.LINE_AA,
    )
    alpha = (cv2.GaussianBlur(canvas, (0, 0), 1.2).astype(np.float32) / 255.0)[..., None]
    img = img * (1 - alpha) + ink[None, None, :] * alpha
    # the shader multiplies the texture by the vertex albedo (white for textured surfaces)
    return np.ascontiguousarray(img.astype(np.float32))


def table_texture(rng: np.random.Generator, kind: str) -> NDArray[np.float32]:
    """A table top (linear albedo): wooden planks (warped grain, fibres, seams) or a plain
    speckled laminate. One texture spans the whole table, so nothing visibly repeats."""
    n = 2 * TEXTURE_SIZE
    y = np.mgrid[0:n, 0:n][0].astype(np.float32) / n
    warp = cv2.resize(
        rng.normal(0, 1, (12, 12)).astype(np.float32), (n, n), interpolation=cv2.INTER_CUBIC
    )
    if kind == "wood":
        base = srgb_to_linear(
            np.array([[150, 100, 60], [190, 145, 95], [110, 70, 45]][int(rng.integers(3))]) / 255.0
        )
        planks = int(rng.integers(7, 12))
        plank = np.floor(y * planks)
        plank_shade = rng.uniform(0.85, 1.15, planks + 1)[plank.astype(int)]
        grain = np.sin((y * rng.uniform(90, 160) + 1.5 * warp + 3.0 * plank) * 2 * math.pi)
        fibres = cv2.resize(rng.normal(0, 1, (n, 48)).astype(np.float32), (n, n))
        seam = np.abs(y * planks - np.rint(y * planks)) < 0.004 * planks
        shade = plank_shade * (1.0 + 0.08 * grain + 0.05 * fibres) * np.where(seam, 0.45, 1.0)
    else:
        base = srgb_to_linear(
            np.array([[200, 200, 195], [120, 120, 125], [225, 220, 210]][int(rng.integers(3))])
            / 255.0
        )
        shade = 1.0 + 0.04 * warp + 0.015 * rng.normal(0, 1, (n, n)).astype(np.float32)
    img = np.clip(base[None, None, :] * shade[..., None], 0, 1)
    return np.ascontiguousarray(img.astype(np.float32))


def station_meshes(
    mat_color: str, mat_size: tuple[float, float], thickness: float, mat_centre: NDArray[np.float64]
) -> Mesh:
    """Table plane and the mat (a thin slab with textured top) as one mesh."""
    table = textured_plane([0.0, 0.0], (1800.0, 1200.0), Material((1, 1, 1), 0.55, 0.04, TEX_TABLE))
    w, h = mat_size
    t = thickness
    mat_top = textured_plane(mat_centre, (w, h), Material((1, 1, 1), 0.8, 0.03, TEX_MAT), z=t)
    cx, cy = mat_centre[:2]
    outline = np.array(
        [
            [cx - w / 2, cy - h / 2, 0],
            [cx + w / 2, cy - h / 2, 0],
            [cx + w / 2, cy + h / 2, 0],
            [cx - w / 2, cy + h / 2, 0],
        ]
    )
    base = srgb_to_linear(np.asarray(MAT_COLORS[mat_color], np.float64) / 255.0)
    slab = flat_polygon(outline, t - 0.05, Material(tuple(base), 0.85, 0.03))
    return concat([table, mat_top, slab, _room()])


def _room() -> Mesh:
    """Walls and ceiling of a room around the table (seen past the table's edges)."""
    half, low, high = 2500.0, -800.0, 2200.0
    quads = []
    for angle in range(0, 360, 90):
        a = math.radians(angle)
        c, s = math.cos(a), math.sin(a)
        centre = np.array([c * half, s * half])
        along = np.array([-s, c]) * half
        p0, p1 = centre - along, centre + along
        quads.append(np.array([[*p0, low], [*p1, low], [*p1, high], [*p0, high]], np.float64)[::-1])
    quads.append(
        np.array(
            [[-half, -half, high], [half, -half, high], [half, half, high], [-half, half, high]]
        )[::-1]
    )
    quads.append(
        np.array([[-half, -half, low], [half, -half, low], [half, half, low], [-half, half, low]])
    )
    tris = np.vstack([q[[0, 1, 2, 0, 2, 3]] for q in quads])
    normals = np.repeat(
        [
            np.cross(q[1] - q[0], q[2] - q[0]) / np.linalg.norm(np.cross(q[1] - q[0], q[2] - q[0]))
            for q in quads
        ],
        6,
        axis=0,
    )
    return make_mesh(tris, normals, Material((0.45, 0.43, 0.4), 0.9, 0.02))


def sample_lighting(
    rng: np.random.Generator, target: NDArray[np.float64]
) -> tuple[Lighting, dict[str, Any]]:
    """Key, fill and ambient light of a room: colour temperatures 3000-6500 K, varied
    brightness and direction; a bright ceiling panel that glossy stickers reflect."""
    key_k = float(rng.uniform(3000, 6500))
    fill_k = float(np.clip(key_k + rng.normal(0, 600), 3000, 6500))
    condition = str(rng.choice(["normal", "normal", "bright", "dim"]))
    brightness = {"normal": 1.0, "bright": 1.8, "dim": 0.35}[condition] * float(
        rng.uniform(0.8, 1.25)
    )
    elevation = float(rng.uniform(30, 85))
    azimuth = float(rng.uniform(0, 360))
    distance = float(rng.uniform(700, 1500))
    el, az = math.radians(elevation), math.radians(azimuth)
    key_pos = target + distance * np.array(
        [math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)]
    )
    key_rgb = blackbody_rgb(key_k)
    fill_rgb = blackbody_rgb(fill_k)
    fill_az = az + math.pi + rng.uniform(-1.0, 1.0)
    fill_el = math.radians(rng.uniform(20, 70))
    fill_dir = np.array(
        [
            math.cos(fill_el) * math.cos(fill_az),
            math.cos(fill_el) * math.sin(fill_az),
            math.sin(fill_el),
        ]
    )
    fill_strength = float(rng.uniform(0.2, 0.5))
    ambient = float(rng.uniform(0.1, 0.22))
    panel_el = math.radians(rng.uniform(25, 88))
    panel_az = rng.uniform(0, 2 * math.pi)
    panel_dir = np.array(
        [
            math.cos(panel_el) * math.cos(panel_az),
            math.cos(panel_el) * math.sin(panel_az),
            math.sin(panel_el),
        ]
    )
    key_power = 3.0 * brightness
    lighting = Lighting(
        key_position=key_pos,
        key_color=key_rgb * key_power,
        key_size=float(rng.uniform(8.0, 32.0)),
        fill_direction=fill_dir,
        fill_color=fill_rgb * key_power * fill_strength,
        sky_color=fill_rgb * key_power * ambient,
        ground_color=key_rgb * key_power * ambient * 0.35,
        panel_direction=panel_dir,
        panel_color=key_rgb * key_power * float(rng.uniform(25.0, 90.0)),
    )
    record = {
        "condition": condition,
        "key_kelvin": round(key_k),
        "fill_kelvin": round(fill_k),
        "brightness": round(brightness, 3),
        "key_position_mm": [round(float(v), 1) for v in key_pos],
        "key_elevation_deg": round(elevation, 1),
        "key_azimuth_deg": round(azimuth, 1),
        "fill_strength": round(fill_strength, 3),
        "ambient": round(ambient, 3),
    }
    return lighting, record


def _rounded_box(half: tuple[float, float, float], radius: float, material: Material) -> Mesh:
    return concat([make_mesh(p, n, material) for p, n in rounded_box_faces(half, radius, 3)])


def _moved(mesh: Mesh, position: NDArray[np.float64], yaw_deg: float) -> Mesh:
    a = math.radians(yaw_deg)
    m = np.eye(4)
    m[:2, :2] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
    m[:3, 3] = position
    return mesh.transformed(m)


def timer_box(rng: np.random.Generator, position: NDArray[np.float64], yaw_deg: float) -> Mesh:
    """A stackmat-like timer: a low rounded box, two grey hand pads, a dark display window."""
    body_color = srgb_to_linear(
        np.array(rng.choice([[25, 40, 90], [20, 20, 22], [120, 20, 25]])) / 255.0
    )
    body = _rounded_box((95.0, 40.0, 14.0), 6.0, Material(tuple(body_color), 0.35, 0.05))
    body = _moved(body, np.array([0, 0, 14.0]), 0)
    pads = []
    for side in (-1, 1):
        pad = _rounded_box((30.0, 26.0, 1.5), 1.4, Material((0.35, 0.36, 0.38), 0.45, 0.04))
        pads.append(_moved(pad, np.array([side * 55.0, 0, 28.0]), 0))
    window = flat_polygon(
        np.array([[-16, -10, 28.0], [16, -10, 28.0], [16, 10, 28.0], [-16, 10, 28.0]]),
        0.5,
        Material((0.01, 0.012, 0.01), 0.1, 0.06),
    )
    return _moved(concat([body, *pads, window]), position, yaw_deg)


def cup(rng: np.random.Generator, position: NDArray[np.float64]) -> Mesh:
    """A mug-like cup: a lathed wall with an inner wall and a rim."""
    r, height, wall = rng.uniform(36, 45), rng.uniform(85, 110), 3.0
    outer = np.array([[r * 0.92, 0.0], [r, height * 0.1], [r, height]])
    inner = np.array([[r - wall, height], [r - wall, 4.0], [0.01, 4.0]])[::-1]
    color = srgb_to_linear(
        np.array(rng.choice([[230, 230, 225], [180, 40, 40], [40, 80, 160], [60, 60, 60]])) / 255.0
    )
    material = Material(tuple(color), 0.25, 0.05)
    p1, n1 = lathe(outer)
    p2, n2 = lathe(inner)
    n2 = -n2
    bottom = np.array([[0.01, 0.2], [r * 0.92, 0.0]])[::-1]
    p3, n3 = lathe(bottom)
    rim = np.array([[r - wall, height], [r, height]])[::-1]
    p4, n4 = lathe(rim)
    mesh = make_mesh(np.vstack([p1, p2, p3, p4]), np.vstack([n1, n2, -n3, n4]), material)
    return _moved(mesh, position, 0)


def hand(
    rng: np.random.Generator, wrist: NDArray[np.float64], towards: NDArray[np.float64]
) -> Mesh:
    """A hand-like occluder of skin-coloured capsules: a flattened palm and five fingers
    reaching from `wrist` towards `towards` (both world points)."""
    skin = srgb_to_linear(
        np.asarray(SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], np.float64) / 255.0
    )
    material = Material(tuple(skin), 0.5, 0.028)
    forward = towards - wrist
    forward /= np.linalg.norm(forward)
    side = np.cross(forward, [0.0, 0.0, 1.0])
    if np.linalg.norm(side) < 1e-6:
        side = np.array([1.0, 0.0, 0.0])
    side /= np.linalg.norm(side)
    parts = []
    palm_end = wrist + forward * 80.0
    for offset in np.linspace(-28.0, 28.0, 4):
        parts.append(capsule(wrist + side * offset * 0.8, palm_end + side * offset, 12.0, material))
    curl = rng.uniform(0.0, 0.3)
    for i, offset in enumerate(np.linspace(-27.0, 27.0, 4)):
        length = (60.0, 70.0, 66.0, 52.0)[i]
        tip = (
            palm_end
            + side * offset * 1.1
            + forward * length * (1 - curl * 0.4)
            - np.array([0, 0, length * curl * 0.6])
        )
        parts.append(capsule(palm_end + side * offset, tip, 8.5, material))
    thumb_base = wrist + forward * 25.0 - side * 35.0
    parts.append(capsule(thumb_base, thumb_base + forward * 45.0 - side * 25.0, 10.0, material))
    parts.append(capsule(wrist - forward * 120.0, wrist, 26.0, material))  # forearm
    return concat(parts)
