"""Triangle meshes built with numpy: rounded boxes, rounded flat stickers, convex polytopes,
cylinders, capsules and textured planes.

A `Mesh` is a triangle soup (3 vertices per triangle, no index buffer) with per-vertex
material, so meshes concatenate by stacking arrays and upload to OpenGL as one buffer.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

logger = logging.getLogger(__name__)

F32 = NDArray[np.float32]

#: Texture selectors understood by the shader (`Material.texture`).
TEX_NONE, TEX_MAT, TEX_TABLE = 0, 1, 2


@dataclass(frozen=True)
class Material:
    """Surface look: linear albedo, GGX roughness, normal-incidence reflectance, texture, id.

    `object_id` goes to the ID buffer: facelet index + 1 for stickers, 0 for everything else.
    """

    albedo: tuple[float, float, float]
    roughness: float = 0.5
    f0: float = 0.04
    texture: int = TEX_NONE
    object_id: int = 0


@dataclass(frozen=True)
class Mesh:
    """Triangle soup: positions, normals, albedo (N, 3); uv (N, 2); material (N, 4) =
    (roughness, f0, texture, object_id), all float32, N a multiple of 3."""

    positions: F32
    normals: F32
    albedo: F32
    uv: F32
    material: F32

    @property
    def vertex_count(self) -> int:
        return int(self.positions.shape[0])

    def transformed(self, matrix: NDArray[np.float64]) -> Mesh:
        """This mesh moved by a rigid 4x4 transform."""
        rot, shift = matrix[:3, :3], matrix[:3, 3]
        return Mesh(
            (self.positions @ rot.T + shift).astype(np.float32),
            (self.normals @ rot.T).astype(np.float32),
            self.albedo,
            self.uv,
            self.material,
        )

    def interleaved(self) -> F32:
        """(N, 14) float32 rows: position, normal, albedo, uv, material (the GL vertex layout)."""
        return np.ascontiguousarray(
            np.hstack([self.positions, self.normals, self.albedo, self.uv, self.material]),
            dtype=np.float32,
        )


def make_mesh(
    positions: ArrayLike,
    normals: ArrayLike,
    material: Material,
    uv: ArrayLike | None = None,
    albedo: ArrayLike | None = None,
) -> Mesh:
    """A mesh of triangles (positions/normals (N, 3), N % 3 == 0) with one material."""
    pos = np.asarray(positions, dtype=np.float32).reshape(-1, 3)
    n = pos.shape[0]
    nrm = np.asarray(normals, dtype=np.float32).reshape(-1, 3)
    nrm = nrm / np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12)
    if albedo is None:
        alb = np.tile(np.asarray(material.albedo, dtype=np.float32), (n, 1))
    else:
        alb = np.asarray(albedo, dtype=np.float32).reshape(-1, 3)
    uvs = np.zeros((n, 2), np.float32) if uv is None else np.asarray(uv, np.float32).reshape(-1, 2)
    mat = np.tile(
        np.array(
            [material.roughness, material.f0, material.texture, material.object_id], np.float32
        ),
        (n, 1),
    )
    return Mesh(pos, nrm.astype(np.float32), alb, uvs, mat)


def concat(meshes: Sequence[Mesh]) -> Mesh:
    """All meshes in one."""
    parts = [m for m in meshes if m.vertex_count]
    if not parts:
        z3, z2, z4 = (np.zeros((0, k), np.float32) for k in (3, 2, 4))
        return Mesh(z3, z3, z3, z2, z4)
    return Mesh(
        *(
            np.concatenate([getattr(m, f) for m in parts])
            for f in ("positions", "normals", "albedo", "uv", "material")
        )
    )


def grid_triangles(rows: int, cols: int) -> NDArray[np.int64]:
    """Vertex indices (T, 3) triangulating a rows x cols grid of vertices, counter-clockwise
    when row index grows along +v and column index along +u."""
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(cols - 1), indexing="ij")
    a = (r * cols + c).ravel()
    b, d = a + 1, a + cols
    e = d + 1
    return np.concatenate([np.stack([a, b, e], 1), np.stack([a, e, d], 1)])


def _edge_samples(half: float, radius: float, segments: int) -> NDArray[np.float64]:
    """Coordinates across one box side: dense in the rounded bands, one span on the flat."""
    arc = np.sin(np.linspace(0.0, math.pi / 2, segments + 1))  # denser near the flat
    inner = half - radius
    band = inner + radius * arc  # inner .. half
    return np.concatenate([-band[::-1], band])


#: (axis, sign) of the six faces of a box in the order +x, -x, +y, -y, +z, -z.
BOX_FACES: tuple[tuple[int, float], ...] = ((0, 1), (0, -1), (1, 1), (1, -1), (2, 1), (2, -1))


def rounded_box_faces(
    half: ArrayLike, radius: float, segments: int = 4
) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """A box with rounded edges and corners, centred at the origin, as six patches.

    Each patch (positions, normals), arrays (T*3, 3), covers one face plus half of the rounded
    band around it, in `BOX_FACES` order, so a patch can be coloured like that face (stickerless
    cubies). Points on a subdivided box are pushed onto the rounded surface: the nearest point
    of the inner box plus `radius` along the way out.
    """
    h = np.asarray(half, dtype=np.float64)
    inner = h - radius
    patches = []
    for axis, sign in BOX_FACES:
        u_axis, v_axis = [a for a in range(3) if a != axis]
        if sign < 0:
            u_axis, v_axis = v_axis, u_axis  # keep triangles counter-clockwise from outside
        us = _edge_samples(h[u_axis], radius, segments)
        vs = _edge_samples(h[v_axis], radius, segments)
        uu, vv = np.meshgrid(us, vs, indexing="ij")
        pts = np.zeros((uu.size, 3))
        pts[:, axis] = sign * h[axis]
        pts[:, u_axis] = uu.ravel()
        pts[:, v_axis] = vv.ravel()
        core = np.clip(pts, -inner, inner)
        out = pts - core
        out_len = np.linalg.norm(out, axis=1, keepdims=True)
        nrm = out / np.maximum(out_len, 1e-12)
        surface = core + radius * nrm
        tris = grid_triangles(len(us), len(vs))
        # grid_triangles winds along (row=u, col=v); flip to make normals point outward
        tris = tris[:, ::-1]
        patches.append((surface[tris].reshape(-1, 3), nrm[tris].reshape(-1, 3)))
    return patches


def rounded_outline(
    corners: NDArray[np.float64], inset: float, radius: float, segments: int = 6
) -> NDArray[np.float64]:
    """The outline (M, 3) of a convex planar polygon shrunk by `inset` and with its corners
    rounded by `radius` (the Minkowski sum of a polygon shrunk by inset+radius and a disc),
    counter-clockwise like `corners`."""
    pts = np.asarray(corners, dtype=np.float64)
    centre = pts.mean(axis=0)
    normal = np.cross(pts[1] - pts[0], pts[2] - pts[0])
    normal /= np.linalg.norm(normal)
    count = len(pts)
    shrink = inset + radius
    # move each edge inward by `shrink`; intersect consecutive edges for the new corners
    inner = []
    for i in range(count):
        p_prev, p, p_next = pts[i - 1], pts[i], pts[(i + 1) % count]
        d1 = (p - p_prev) / np.linalg.norm(p - p_prev)
        d2 = (p_next - p) / np.linalg.norm(p_next - p)
        n1, n2 = np.cross(normal, d1), np.cross(normal, d2)  # inward normals (CCW polygon)
        bis = n1 + n2
        bis /= np.linalg.norm(bis)
        inner.append(p + bis * shrink / max(float(bis @ n1), 1e-6))
    outline = []
    for i in range(count):
        p_prev, p, p_next = pts[i - 1], pts[i], pts[(i + 1) % count]
        d1 = (p - p_prev) / np.linalg.norm(p - p_prev)
        d2 = (p_next - p) / np.linalg.norm(p_next - p)
        out1, out2 = -np.cross(normal, d1), -np.cross(normal, d2)
        a1 = 0.0
        a2 = math.atan2(float(np.cross(out1, out2) @ normal), float(out1 @ out2))
        for t in np.linspace(a1, a2, segments + 1):
            direction = math.cos(t) * out1 + math.sin(t) * np.cross(normal, out1)
            outline.append(inner[i] + radius * direction)
    del centre
    return np.asarray(outline)


def flat_polygon(
    outline: NDArray[np.float64], thickness: float, material: Material, lift: float = 0.0
) -> Mesh:
    """A thin slab over a convex outline: the top cap `lift + thickness` above the outline's
    plane (along its counter-clockwise normal) and the side walls down to `lift`."""
    pts = np.asarray(outline, dtype=np.float64)
    normal = np.cross(pts[1] - pts[0], pts[2] - pts[0])
    if np.linalg.norm(normal) < 1e-12:
        normal = np.cross(pts[len(pts) // 3] - pts[0], pts[2 * len(pts) // 3] - pts[0])
    normal /= np.linalg.norm(normal)
    top = pts + normal * (lift + thickness)
    bottom = pts + normal * lift
    centre = top.mean(axis=0)
    nxt = np.roll(np.arange(len(pts)), -1)
    cap = np.stack([np.repeat(centre[None], len(pts), 0), top, top[nxt]], 1).reshape(-1, 3)
    cap_n = np.tile(normal, (cap.shape[0], 1))
    side_out = np.cross(top[nxt] - top, normal)
    side_out /= np.maximum(np.linalg.norm(side_out, axis=1, keepdims=True), 1e-12)
    walls = np.stack([bottom, bottom[nxt], top[nxt], bottom, top[nxt], top], 1).reshape(-1, 3)
    walls_n = np.repeat(side_out, 6, axis=0)
    return make_mesh(np.vstack([cap, walls]), np.vstack([cap_n, walls_n]), material)


def convex_polytope(planes: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """Faces of the bounded convex polytope {x : n.x <= d for every plane (n, d)}.

    `planes` is (P, 4) rows (nx, ny, nz, d) with unit normals. Returns one counter-clockwise
    (seen from outside) vertex loop per plane that carries a face. Vertex enumeration over
    plane triples: fine for the dozen planes of a Pyraminx piece.
    """
    planes = np.asarray(planes, dtype=np.float64)
    normals, offsets = planes[:, :3], planes[:, 3]
    vertices = []
    count = len(planes)
    for i in range(count):
        for j in range(i + 1, count):
            for k in range(j + 1, count):
                a = normals[[i, j, k]]
                if abs(np.linalg.det(a)) < 1e-9:
                    continue
                x = np.linalg.solve(a, offsets[[i, j, k]])
                if np.all(normals @ x <= offsets + 1e-6):
                    vertices.append(x)
    if not vertices:
        return []
    verts = np.unique(np.round(np.asarray(vertices), 6), axis=0)
    faces = []
    for n, d in zip(normals, offsets, strict=True):
        on = verts[np.abs(verts @ n - d) < 1e-5]
        if len(on) < 3:
            continue
        c = on.mean(axis=0)
        u = on[0] - c
        u /= np.linalg.norm(u)
        v = np.cross(n, u)
        ang = np.arctan2((on - c) @ v, (on - c) @ u)
        faces.append(on[np.argsort(ang)])
    return faces


def polygon_fan(loop: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Triangles (T*3, 3) and flat normals fanning a convex counter-clockwise loop."""
    nxt = np.roll(np.arange(len(loop)), -1)
    c = loop.mean(axis=0)
    tris = np.stack([np.repeat(c[None], len(loop), 0), loop, loop[nxt]], 1).reshape(-1, 3)
    n = np.cross(loop[1] - loop[0], loop[2] - loop[0])
    n /= np.linalg.norm(n)
    return tris, np.tile(n, (tris.shape[0], 1))


def lathe(
    profile: NDArray[np.float64], segments: int = 32
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A surface of revolution about +z from a (K, 2) profile of (radius, z) points, with smooth
    normals; the profile goes bottom to top for an outward-facing surface."""
    prof = np.asarray(profile, dtype=np.float64)
    t = np.linspace(0, 2 * math.pi, segments + 1)
    ct, st = np.cos(t), np.sin(t)
    pts = np.stack(
        [prof[:, 0][:, None] * ct, prof[:, 0][:, None] * st, np.repeat(prof[:, 1:2], len(t), 1)],
        -1,
    )
    dr = np.gradient(prof[:, 0])
    dz = np.gradient(prof[:, 1])
    n2 = np.stack([dz, -dr], 1)
    n2 /= np.maximum(np.linalg.norm(n2, axis=1, keepdims=True), 1e-12)
    nrm = np.stack(
        [n2[:, 0][:, None] * ct, n2[:, 0][:, None] * st, np.repeat(n2[:, 1:2], len(t), 1)], -1
    )
    tris = grid_triangles(len(prof), len(t))
    return pts.reshape(-1, 3)[tris].reshape(-1, 3), nrm.reshape(-1, 3)[tris].reshape(-1, 3)


def capsule(
    start: ArrayLike, end: ArrayLike, radius: float, material: Material, segments: int = 16
) -> Mesh:
    """A capsule (cylinder with hemispherical ends) from `start` to `end`."""
    a, b = np.asarray(start, np.float64), np.asarray(end, np.float64)
    length = float(np.linalg.norm(b - a))
    half = np.linspace(0, math.pi / 2, segments // 2 + 1)
    bottom = np.stack([radius * np.sin(half), -radius * np.cos(half)], 1)
    top = np.stack([radius * np.cos(half), length + radius * np.sin(half)], 1)
    prof = np.vstack([bottom, top])
    pos, nrm = lathe(prof, segments)
    return make_mesh(pos, nrm, material).transformed(frame_along(a, b))


def frame_along(start: NDArray[np.float64], end: NDArray[np.float64]) -> NDArray[np.float64]:
    """A rigid transform taking +z to the direction start->end and the origin to `start`."""
    z = end - start
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, z, start
    return m


def textured_plane(
    centre: ArrayLike,
    size: tuple[float, float],
    material: Material,
    z: float = 0.0,
    uv_repeat: float = 1.0,
) -> Mesh:
    """A horizontal rectangle (normal +z) with uv 0..uv_repeat across it (textures repeat)."""
    cx, cy = np.asarray(centre, np.float64)[:2]
    w, h = size
    corners = np.array(
        [
            [cx - w / 2, cy - h / 2, z],
            [cx + w / 2, cy - h / 2, z],
            [cx + w / 2, cy + h / 2, z],
            [cx - w / 2, cy + h / 2, z],
        ]
    )
    uvs = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float64) * uv_repeat
    idx = np.array([0, 1, 2, 0, 2, 3])
    return make_mesh(corners[idx], np.tile([0, 0, 1.0], (6, 1)), material, uv=uvs[idx])


def rotation_about(axis: ArrayLike, angle_deg: float) -> NDArray[np.float64]:
    """4x4 right-handed rotation by `angle_deg` about the unit `axis` through the origin."""
    import cv2

    k = np.asarray(axis, np.float64)
    k = k / np.linalg.norm(k)
    rot, _ = cv2.Rodrigues(k * math.radians(angle_deg))
    m = np.eye(4)
    m[:3, :3] = rot
    return m
