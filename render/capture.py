"""One capture: a puzzle in a known state on the judge mat, seen by one or more cameras, with
its ground truth.

A `CapturePlan` says what to show (puzzle, state, part angles, cameras, clutter); everything
else (pose, lights, textures, camera jitter, sensor) is drawn from the plan's own seed, so a
capture renders the same whatever else is in the corpus.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.puzzle import Move, PuzzleSpec, State, get_puzzle
from judgecam.puzzle.observation import MISSING, Observation, PairObservation
from judgecam.puzzle.verdict import judge
from judgecam.render.camera import (
    CAMERA_MODELS,
    Camera,
    at_resolution,
    make_camera,
    spherical_eye,
)
from judgecam.render.color import ColorScheme, scheme_for
from judgecam.render.gl import Lighting, Renderer
from judgecam.render.mesh import Mesh, concat, rotation_about
from judgecam.render.post import (
    camera_pipeline,
    distort,
    encode_jpeg,
    lens_maps,
    sample_sensor_look,
)
from judgecam.render.puzzle_mesh import STICKER_THICKNESS_MM, PuzzleLook, PuzzleModel, build_puzzle
from judgecam.render.scene import (
    MAT_COLORS,
    cup,
    hand,
    mat_texture,
    sample_lighting,
    station_meshes,
    table_texture,
    timer_box,
)

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
RIGS = ("rig2", "rig3", "top", "oblique")


@dataclass(frozen=True)
class CapturePlan:
    """What one capture shows. `turns` gives, per axis, every part's rotation in degrees
    (right-handed about the axis direction) on top of the notation `moves`."""

    capture_id: str
    seed: int
    puzzle: str  # "333", "222", "pyram", or "none" for an empty mat
    style: str = "stickered"
    scheme: str = "wca"
    moves: str = ""
    turns: dict[str, tuple[float, ...]] = field(default_factory=dict)
    rig: str = "rig2"
    clutter: tuple[str, ...] = ()
    logo: bool = False
    missing: int = 0
    #: Every camera at this multiple of its model's resolution, the scene otherwise unchanged
    #: (`camera.at_resolution`; blur and chromatic aberration in pixels scale along).
    resolution_scale: float = 1.0


@dataclass(frozen=True)
class PuzzleTruth:
    """The exact state of the puzzle in a capture, from the domain package."""

    spec: PuzzleSpec
    scheme: ColorScheme
    state: State  # snapped: every part at its nearest aligned position
    part_rotations: dict[str, list[float]]
    residuals: dict[str, list[float]]
    pairs: list[dict[str, Any]]
    moves_from_solved: int | None
    verdict: str
    snapped_moves: str


@dataclass(frozen=True)
class PosedPuzzle:
    """The puzzle as placed in one capture: its model, pose, look and snapped colours."""

    model: PuzzleModel
    pose: NDArray[np.float64]
    look: PuzzleLook
    colors: tuple[str, ...]


@dataclass(frozen=True)
class StationScene:
    """Everything the cameras of one capture look at."""

    mesh: Mesh
    lighting: Lighting
    key_kelvin: float
    dim: bool
    puzzle: PosedPuzzle | None


def wrap180(angle: float) -> float:
    """An angle in degrees reduced to [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0


def reduce_to_step(angle: float, step: float) -> float:
    """An angle reduced to [-step/2, step/2): the misalignment from the nearest aligned spot."""
    return angle - step * round(angle / step)


def snapped_steps(angles: Sequence[float], step: float) -> list[int]:
    """Whole steps each part of one axis is turned by, consistent along the axis: adjacent parts
    differ by their relative angle rounded to a step (what each pair's residual is measured
    from), counted out from the best-aligned part.

    Snapping each part on its own can disagree with that: a 2x2x2 with its layers at -66.7 and
    +51.3 degrees snaps to -1 and +1 steps, 180 degrees apart, though the layers are 117.9
    degrees apart: one step and 27.9 degrees, which is what the image shows.
    """
    count = len(angles)
    if count == 0:
        return []
    reference = min(range(count), key=lambda i: abs(reduce_to_step(angles[i], step)))
    steps = [0] * count
    steps[reference] = round(angles[reference] / step)
    for i in range(reference + 1, count):
        steps[i] = steps[i - 1] + round(wrap180(angles[i] - angles[i - 1]) / step)
    for i in range(reference - 1, -1, -1):
        steps[i] = steps[i + 1] - round(wrap180(angles[i + 1] - angles[i]) / step)
    return steps


def puzzle_truth(plan: CapturePlan, missing: tuple[int, ...] = ()) -> PuzzleTruth:
    """Snap every turned part to a whole step (`snapped_steps`), apply those turns with the
    domain package and judge the exact truth (snapped colours, `missing` facelets, residual
    angles) with the domain package; keep the residual angles for the geometry."""
    spec = get_puzzle(plan.puzzle)
    scheme = scheme_for(spec.name, plan.scheme)
    state = (
        spec.solved_state(scheme.face_colors).apply(plan.moves)
        if plan.moves
        else (spec.solved_state(scheme.face_colors))
    )
    part_rotations: dict[str, list[float]] = {}
    residuals: dict[str, list[float]] = {}
    snapped: list[Move] = []
    for axis in spec.axes:
        angles = [float(a) for a in plan.turns.get(axis.name, ())] or [0.0] * len(axis.part_names)
        if len(angles) != len(axis.part_names):
            raise ValueError(f"axis {axis.name} of {spec.name} has {len(axis.part_names)} parts")
        part_rotations[axis.name] = angles
        steps_of = snapped_steps(angles, axis.step_deg)
        # What is left of each part's angle once its snapped turn is applied (the geometry).
        residuals[axis.name] = [
            angle - steps * axis.step_deg for angle, steps in zip(angles, steps_of, strict=True)
        ]
        for part, steps in enumerate(steps_of):
            if steps:
                snapped.append(Move(spec.name, axis.name, (part,), steps))
    state = state.apply(snapped)
    pairs: list[dict[str, Any]] = []
    for pair in spec.pairs():
        rot = part_rotations[pair.axis]
        angle = wrap180(rot[pair.parts[1]] - rot[pair.parts[0]])
        pairs.append(
            {
                "label": pair.label,
                "axis": pair.axis,
                "parts": list(pair.parts),
                "angle_deg": round(angle, 3),
                "residual_deg": round(reduce_to_step(angle, pair.step_deg), 3),
                "step_deg": pair.step_deg,
                "limit_deg": pair.limit_deg,
            }
        )
    observed = list(state.colors)
    for index in missing:
        observed[index] = MISSING
    observation = Observation(
        spec.name,
        tuple(observed),
        tuple(PairObservation(p["axis"], tuple(p["parts"]), p["residual_deg"]) for p in pairs),
    )
    decision = judge(spec, observation)
    count = decision.moves_from_solved
    verdict = decision.verdict
    return PuzzleTruth(
        spec,
        scheme,
        state,
        part_rotations,
        residuals,
        pairs,
        count,
        verdict,
        " ".join(str(m) for m in snapped),
    )


def resting_pose(
    spec: PuzzleSpec,
    turned_axis: str | None,
    rng: np.random.Generator,
    mat_top: float,
    position_xy: NDArray[np.float64],
) -> NDArray[np.float64]:
    """World-from-puzzle (4x4): resting on a face of the mat at a random yaw.

    A cube rests on one of its six faces; if a layer is turned off the grid the cube can only
    rest flat when that layer's axis is vertical, so the resting face is then one of that
    axis's two ends. A Pyraminx rests on a face; a turned layer is the one on the vertical axis.
    """
    if spec.name == "pyram":
        faces = list(spec.faces)
        if turned_axis is not None:
            d = np.asarray(spec.axis(turned_axis).direction, np.float64)
            down = -d
        else:
            down = np.asarray(faces[int(rng.integers(len(faces)))].normal, np.float64)
        height = float(np.max([np.asarray(f.center) @ down for f in faces]))
    else:
        if turned_axis is not None:
            down = np.asarray(spec.axis(turned_axis).direction, np.float64) * rng.choice([-1, 1])
        else:
            down = np.eye(3)[int(rng.integers(3))] * rng.choice([-1, 1])
        height = spec.edge_mm / 2
    align = _rotation_between(down, np.array([0.0, 0.0, -1.0]))
    yaw = rotation_about([0, 0, 1], float(rng.uniform(0, 360)))
    pose = yaw @ align
    pose[:3, 3] = [position_xy[0], position_xy[1], mat_top + height + STICKER_THICKNESS_MM]
    return pose


def _rotation_between(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    axis = np.cross(a, b)
    s, c = float(np.linalg.norm(axis)), float(a @ b)
    if s < 1e-9:
        if c > 0:
            return np.eye(4)
        helper = np.array([1.0, 0, 0]) if abs(a[0]) < 0.9 else np.array([0, 1.0, 0])
        return rotation_about(np.cross(a, helper), 180.0)
    return rotation_about(axis / s, math.degrees(math.atan2(s, c)))


def place_cameras(
    rig: str,
    target: NDArray[np.float64],
    size_mm: float,
    rng: np.random.Generator,
    resolution_scale: float = 1.0,
) -> list[Camera]:
    """Cameras as a judge station places them: `rig2` = two cameras at roughly opposite upper
    corners 20-40 cm away at 30-50 degrees elevation; `rig3` = three such cameras about 120
    degrees apart (no face of the puzzle is edge-on to all of them, whatever its yaw); `top` =
    one camera above; `oblique` = one camera from the side. `resolution_scale` gives each
    camera another output mode of its model (`at_resolution`) without changing where it is."""
    scale = max(1.0, size_mm / 57.0) ** 0.5
    models = list(CAMERA_MODELS.values())
    cams: list[Camera] = []
    if rig in ("rig2", "rig3"):
        model = models[int(rng.choice(4, p=[0.75, 0.1, 0.05, 0.1]))]
        mode = at_resolution(model, resolution_scale)
        az0 = float(rng.uniform(0, 360))
        apart = 180.0 if rig == "rig2" else 120.0
        azimuths = [az0] + [
            az0 + apart * k + float(rng.normal(0, 12 if rig == "rig2" else 8))
            for k in range(1, 2 if rig == "rig2" else 3)
        ]
        for i, az in enumerate(azimuths):
            base = 300.0 if model.focal_px < 1500 else 420.0
            dist = float(rng.uniform(0.75, 1.25)) * base * scale
            eye = spherical_eye(target, dist, az, float(rng.uniform(30, 50)))
            aim = target + rng.normal(0, 4.0, 3)
            cams.append(make_camera(f"cam{i}", mode, eye, aim, rng, float(rng.normal(0, 3))))
    elif rig == "top":
        model = models[int(rng.choice(4, p=[0.5, 0.2, 0.1, 0.2]))]
        mode = at_resolution(model, resolution_scale)
        dist = float(rng.uniform(170, 280)) * scale * (1.6 if model.focal_px > 1500 else 1.0)
        eye = spherical_eye(target, dist, float(rng.uniform(0, 360)), float(rng.uniform(80, 89.5)))
        cams.append(make_camera("top", mode, eye, target, rng, float(rng.uniform(0, 360))))
    elif rig == "oblique":
        model = models[int(rng.choice(4, p=[0.5, 0.2, 0.1, 0.2]))]
        mode = at_resolution(model, resolution_scale)
        dist = float(rng.uniform(250, 420)) * scale * (1.4 if model.focal_px > 1500 else 1.0)
        eye = spherical_eye(target, dist, float(rng.uniform(0, 360)), float(rng.uniform(15, 65)))
        cams.append(make_camera("oblique", mode, eye, target, rng, float(rng.normal(0, 4))))
    else:
        raise ValueError(f"unknown rig {rig!r}; known: {', '.join(RIGS)}")
    return cams


def _clutter_meshes(
    plan: CapturePlan,
    rng: np.random.Generator,
    centre: NDArray[np.float64],
    top_z: float,
    radius: float,
    mat_top: float,
) -> tuple[list[Mesh], list[dict[str, Any]]]:
    meshes: list[Mesh] = []
    records: list[dict[str, Any]] = []
    for kind in plan.clutter:
        az = float(rng.uniform(0, 2 * math.pi))
        direction = np.array([math.cos(az), math.sin(az), 0.0])
        if kind == "timer":
            pos = centre + direction * (radius + float(rng.uniform(110, 200)))
            pos[2] = mat_top
            yaw = math.degrees(az) + 90 + float(rng.normal(0, 15))
            meshes.append(timer_box(rng, pos, yaw))
        elif kind == "cup":
            pos = centre + direction * (radius + float(rng.uniform(70, 180)))
            pos[2] = 0.0
            meshes.append(cup(rng, pos))
        elif kind == "hand":
            towards = centre + np.array([*rng.normal(0, radius * 0.5, 2), 0.0])
            towards[2] = top_z + float(rng.uniform(40, 70))  # fingers curl down <= 15 mm
            wrist = towards + direction * 150.0 + np.array([0, 0, float(rng.uniform(10, 60))])
            meshes.append(hand(rng, wrist, towards))
            pos = wrist
        else:
            raise ValueError(f"unknown clutter {kind!r}")
        records.append({"kind": kind, "position_mm": [round(float(v), 1) for v in pos]})
    return meshes, records


def render_capture(plan: CapturePlan, renderer: Renderer, out_dir: Path) -> dict[str, Any]:
    """Render every view of `plan` into `out_dir` (JPEGs + `<id>.json`); return the truth."""
    rng = np.random.default_rng(plan.seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    mat_color = str(rng.choice(list(MAT_COLORS)))
    mat_size = (float(rng.uniform(300, 420)), float(rng.uniform(230, 300)))
    mat_thickness = float(rng.uniform(1.5, 3.0))
    mat_centre = np.array([*rng.normal(0, 30, 2), 0.0])
    table_kind = str(rng.choice(["wood", "plain"]))
    renderer.set_texture("tex_mat", mat_texture(rng, MAT_COLORS[mat_color]))
    renderer.set_texture("tex_table", table_texture(rng, table_kind))
    puzzle_xy = mat_centre[:2] + rng.normal(0, 25, 2)

    meshes: list[Mesh] = [station_meshes(mat_color, mat_size, mat_thickness, mat_centre)]
    truth: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": plan.capture_id,
        "seed": plan.seed,
        "puzzle": plan.puzzle,
    }
    model: PuzzleModel | None = None
    pose = np.eye(4)
    size_mm = 57.0
    look: PuzzleLook | None = None
    if plan.puzzle != "none":
        spec = get_puzzle(plan.puzzle)
        missing = _choose_missing(plan, spec, rng)
        pt = puzzle_truth(plan, missing)
        spec = pt.spec
        size_mm = spec.edge_mm
        turned = [a for a, res in pt.residuals.items() if any(abs(r) > 1e-9 for r in res)]
        layer_axes = (
            turned
            if spec.name != "pyram"
            else [
                a
                for a in turned
                if abs(pt.residuals[a][1]) > 1e-9 or abs(pt.residuals[a][0]) > 1e-9
            ]
        )
        if spec.name != "pyram" and len(turned) > 1:
            raise ValueError(f"{plan.capture_id}: a cube can have only one axis off the grid")
        pose = resting_pose(
            spec, layer_axes[0] if layer_axes else None, rng, mat_thickness, puzzle_xy
        )
        look = _sample_look(plan, spec, pt.scheme, missing, rng)
        model = build_puzzle(spec, pt.state.colors, look, pt.residuals)
        posed = model.mesh.transformed(pose)
        # (a Pyraminx tip turned while touching the mat dips into the rubber a little; lifting
        # the whole puzzle instead would make it float, which looks worse)
        meshes.append(posed)
        truth.update(_puzzle_record(plan, pt, look, pose))
    else:
        truth.update(
            {
                "style": None,
                "scheme": None,
                "verdict": "review",
                "review_reason": "no puzzle on the mat",
                "moves_from_solved": None,
            }
        )

    centre = pose[:3, 3].copy() if model is not None else np.array([*puzzle_xy, mat_thickness])
    radius = size_mm * 0.75
    top_z = centre[2] + size_mm * 0.6
    clutter, clutter_records = _clutter_meshes(plan, rng, centre, top_z, radius, mat_thickness)
    meshes.extend(clutter)
    lighting, light_record = sample_lighting(rng, centre)
    footprint = 0.0 if model is None else size_mm * (0.5 if plan.puzzle != "pyram" else 0.45)
    lighting = dataclasses.replace(
        lighting, contact=(float(centre[0]), float(centre[1]), mat_thickness, footprint)
    )
    scene = concat(meshes)
    truth["lighting"] = light_record
    truth["station"] = {
        "mat_color": mat_color,
        "mat_size_mm": [round(v, 1) for v in mat_size],
        "mat_thickness_mm": round(mat_thickness, 2),
        "table": table_kind,
    }
    truth["clutter"] = clutter_records
    cameras = place_cameras(plan.rig, centre, size_mm, rng, plan.resolution_scale)
    truth["rig"] = plan.rig
    if rng.random() < 0.3:  # a window or lamp where the top face mirrors it into camera 0
        top = centre + np.array([0.0, 0.0, size_mm / 2])
        lighting = _mirror_panel(lighting, cameras[0], top, rng)
        light_record["panel_mirrored_into"] = cameras[0].name
    posed_puzzle = (
        PosedPuzzle(model, pose, look, tuple(truth["state_colors"]))
        if model is not None and look is not None
        else None
    )
    station = StationScene(
        scene,
        lighting,
        light_record["key_kelvin"],
        light_record["condition"] == "dim",
        posed_puzzle,
    )
    views = [
        _render_view(plan.capture_id, cam, station, renderer, rng, out_dir, plan.resolution_scale)
        for cam in cameras
    ]
    truth["views"] = views
    truth["tags"] = _tags(plan, truth)
    # compact: the truth files are read by programs and the corpus has a size budget
    (out_dir / f"{plan.capture_id}.json").write_text(
        json.dumps(truth, separators=(",", ":")) + "\n"
    )
    return truth


def _mirror_panel(
    lighting: Lighting, camera: Camera, point: NDArray[np.float64], rng: np.random.Generator
) -> Lighting:
    """Lighting whose bright panel sits where a horizontal glossy face at `point` reflects it
    into `camera` (give or take a few degrees): the classic glare on the top stickers."""
    to_camera = camera.position - point
    to_camera /= np.linalg.norm(to_camera)
    mirrored = np.array([-to_camera[0], -to_camera[1], to_camera[2]]) + rng.normal(0, 0.08, 3)
    return dataclasses.replace(lighting, panel_direction=mirrored / np.linalg.norm(mirrored))


def _choose_missing(
    plan: CapturePlan, spec: PuzzleSpec, rng: np.random.Generator
) -> tuple[int, ...]:
    """Facelets whose sticker (or, stickerless, centre cap) has come off."""
    if not plan.missing:
        return ()
    pool = [f.index for f in spec.facelets]
    if plan.style == "stickerless":
        pool = [p.facelets[0] for p in spec.pieces if p.kind == "center"] or pool
    return tuple(int(i) for i in rng.choice(pool, size=plan.missing, replace=False))


def _sample_look(
    plan: CapturePlan,
    spec: PuzzleSpec,
    scheme: ColorScheme,
    missing: tuple[int, ...],
    rng: np.random.Generator,
) -> PuzzleLook:
    logo = None
    if plan.logo:
        centres = [p.facelets[0] for p in spec.pieces if p.kind == "center"]
        logo = int(rng.choice([c for c in centres if c not in missing])) if centres else None
    return PuzzleLook(
        style=plan.style,
        scheme=scheme,
        sticker_roughness=float(rng.uniform(0.14, 0.4)),
        logo_facelet=logo,
        logo_color=str(rng.choice(["black", "white"])),
        missing_facelets=missing,
    )


def _puzzle_record(
    plan: CapturePlan, pt: PuzzleTruth, look: PuzzleLook, pose: NDArray[np.float64]
) -> dict[str, Any]:
    return {
        "style": plan.style,
        "scheme": {
            "name": pt.scheme.name,
            "faces": dict(pt.scheme.face_colors),
            "colors": {k: list(v) for k, v in pt.scheme.srgb.items()},
        },
        "moves": plan.moves,
        "snapped_turns": pt.snapped_moves,
        "state_colors": list(pt.state.colors),
        "part_rotations": {a: [round(v, 3) for v in r] for a, r in pt.part_rotations.items()},
        "pairs": pt.pairs,
        "verdict": pt.verdict,
        "moves_from_solved": pt.moves_from_solved,
        "logo_facelet": look.logo_facelet,
        "missing_facelets": list(look.missing_facelets),
        "world_from_puzzle": np.round(pose, 4).tolist(),
    }


def _render_view(
    capture_id: str,
    cam: Camera,
    station: StationScene,
    renderer: Renderer,
    rng: np.random.Generator,
    out_dir: Path,
    resolution_scale: float = 1.0,
) -> dict[str, Any]:
    """Photograph the station with one camera; return the view's ground truth. Blur and
    chromatic aberration are drawn in pixels of the model's own mode and scaled to the
    camera's (`resolution_scale`): the same optics at another resolution."""
    from judgecam.render.color import blackbody_rgb

    maps = lens_maps(cam)
    hdr, ids = renderer.render(station.mesh, maps.pinhole, station.lighting, supersample=2)
    linear, id_image = distort(hdr, ids, maps)
    bad = int(np.count_nonzero(~np.isfinite(linear)))
    if bad:
        logger.warning("%s %s: %d non-finite pixels from the shader", capture_id, cam.name, bad)
    sensor = sample_sensor_look(rng, dim=station.dim)
    if resolution_scale != 1.0:
        sensor = dataclasses.replace(
            sensor,
            defocus_sigma_px=sensor.defocus_sigma_px * resolution_scale,
            motion_blur_px=sensor.motion_blur_px * resolution_scale,
            chromatic_px=sensor.chromatic_px * resolution_scale,
        )
    bgr = camera_pipeline(linear, blackbody_rgb(station.key_kelvin), sensor, rng)
    image_name = f"{capture_id}_{cam.name}.jpg"
    (out_dir / image_name).write_bytes(encode_jpeg(bgr, sensor.jpeg_quality))
    view: dict[str, Any] = {
        "image": image_name,
        "camera": cam.name,
        "camera_model": cam.model,
        "image_size": [cam.width, cam.height],
        "camera_matrix": np.round(cam.camera_matrix, 4).tolist(),
        "dist_coeffs": np.round(cam.dist_coeffs, 6).tolist(),
        "world_from_camera": np.round(cam.world_from_camera, 5).tolist(),
        "sensor": {
            "exposure_ev": round(sensor.exposure_ev, 3),
            "defocus_sigma_px": round(sensor.defocus_sigma_px, 3),
            "motion_blur_px": round(sensor.motion_blur_px, 3),
            "jpeg_quality": sensor.jpeg_quality,
        },
    }
    facelets: list[dict[str, Any]] = []
    glare = 0.0
    if station.puzzle is not None:
        facelets, glare = _facelet_truth(cam, station.puzzle, id_image, bgr)
    view["faces_seen"] = sorted({f["face"] for f in facelets})
    view["glare_fraction"] = round(glare, 4)
    view["facelets"] = facelets
    return view


def _facelet_truth(
    cam: Camera, puzzle: PosedPuzzle, id_image: NDArray[np.int32], bgr: NDArray[np.uint8]
) -> tuple[list[dict[str, Any]], float]:
    """Every facelet facing `cam` with visible pixels (polygon, centre, visibility), and the
    largest fraction of one coloured sticker washed out to white by glare (every channel
    >= 235; white stickers are left out, they are near white anyway)."""
    model, pose, look = puzzle.model, puzzle.pose, puzzle.look
    counts = np.bincount(id_image.ravel(), minlength=len(model.facelets) + 1)
    saturated = np.all(bgr >= 235, axis=2)
    sat_counts = np.bincount(id_image[saturated].ravel(), minlength=len(counts))
    eye = cam.position
    facelets = []
    glare = 0.0
    for fg in model.facelets:
        centre_w = _apply(pose, fg.center[None])[0]
        normal_w = pose[:3, :3] @ fg.normal
        if normal_w @ (eye - centre_w) <= 0 or cam.depth(centre_w[None])[0] <= 0:
            continue
        pixels = int(counts[fg.index + 1])
        if pixels == 0:
            continue
        outline_px = cam.project(_apply(pose, fg.outline)).astype(np.float32)
        area = float(cv2.contourArea(outline_px))
        polygon_px = cam.project(_apply(pose, fg.polygon))
        centre_px = cam.project(centre_w[None])[0]
        visibility = min(1.0, pixels / area) if area > 0 else 0.0
        if min(look.scheme.srgb[puzzle.colors[fg.index]]) < 180:
            glare = max(glare, float(sat_counts[fg.index + 1]) / pixels)
        entry: dict[str, Any] = {
            "index": fg.index,
            "face": fg.face,
            "color": puzzle.colors[fg.index],
            "polygon_px": np.round(polygon_px, 2).tolist(),
            "center_px": np.round(centre_px, 2).tolist(),
            "visibility": round(visibility, 3),
            "pixels": pixels,
        }
        if fg.index == look.logo_facelet:
            entry["logo"] = True
        if fg.index in look.missing_facelets:
            entry["missing"] = True
        facelets.append(entry)
    return facelets, glare


def _apply(m: NDArray[np.float64], points: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(np.asarray(points, np.float64) @ m[:3, :3].T + m[:3, 3], np.float64)


def _tags(plan: CapturePlan, truth: dict[str, Any]) -> list[str]:
    """Manifest tags, measured from the truth where possible (not just from the plan)."""
    tags: list[str] = [plan.rig]
    light = truth["lighting"]
    if light["key_kelvin"] < 4000:
        tags.append("warm")
    elif light["key_kelvin"] > 5500:
        tags.append("cool")
    if light["condition"] in ("dim", "bright"):
        tags.append(light["condition"])
    if plan.puzzle == "none":
        return [*tags, "empty"]
    if any(abs(abs(p["residual_deg"]) - p["limit_deg"]) <= 5.0 for p in truth["pairs"]):
        tags.append("near-limit")
    if any(abs(p["residual_deg"]) > 0.5 for p in truth["pairs"]):
        tags.append("misaligned")
    if plan.clutter:
        tags.append("clutter")
    fronts = [f for v in truth["views"] for f in v["facelets"] if f["pixels"] >= 50]
    if "hand" in plan.clutter and any(f["visibility"] < 0.8 for f in fronts):
        tags.append("occluded")
    if any(v["glare_fraction"] >= 0.03 for v in truth["views"]):
        tags.append("glare")
    if plan.style == "stickerless":
        tags.append("stickerless")
    if plan.scheme != "wca":
        tags.append("custom-scheme")
    if truth.get("logo_facelet") is not None:
        tags.append("logo")
    if truth.get("missing_facelets"):
        tags.append("damage")
    return tags
