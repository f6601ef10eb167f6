"""The OpenGL renderer: the ID buffer agrees with the projected facelet polygons; timing."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.puzzle import get_puzzle
from judgecam.render.camera import Camera, look_at, spherical_eye
from judgecam.render.capture import CapturePlan, render_capture
from judgecam.render.color import scheme_for
from judgecam.render.gl import PinholeView, Renderer
from judgecam.render.mesh import Material, concat, textured_plane
from judgecam.render.puzzle_mesh import PuzzleLook, build_puzzle
from judgecam.render.scene import sample_lighting

pytestmark = pytest.mark.render


@pytest.fixture(scope="module")
def renderer():
    pytest.importorskip("moderngl")
    try:
        gl = Renderer(shadow_size=1024)
    except Exception as error:  # no EGL on this machine
        pytest.skip(f"no headless OpenGL: {error}")
    yield gl
    gl.release()


def _small_camera(target: np.ndarray, azimuth: float) -> Camera:
    """A 320x240 pinhole camera (no distortion) 250 mm from `target`."""
    k = np.array([[300.0, 0.0, 159.5], [0.0, 300.0, 119.5], [0.0, 0.0, 1.0]])
    eye = spherical_eye(target, 250.0, azimuth, 40.0)
    return Camera("test", "test", 320, 240, k, np.zeros(5), look_at(eye, target))


@pytest.mark.parametrize(
    ("puzzle", "style", "turns"),
    [
        ("333", "stickered", {"y": [0.0, 0.0, 30.0]}),
        ("333", "stickerless", {"x": [0.0, 20.0, 0.0]}),
        ("222", "stickered", {}),
        ("pyram", "stickered", {"U": [0.0, 40.0, 70.0]}),
    ],
)
def test_id_buffer_matches_projected_polygons(renderer, puzzle, style, turns) -> None:
    spec = get_puzzle(puzzle)
    scheme = scheme_for(spec.name, "wca")
    look = PuzzleLook(style, scheme)
    colors = spec.solved_state(scheme.face_colors).colors
    model = build_puzzle(spec, colors, look, turns)
    pose = np.eye(4)
    pose[2, 3] = 40.0
    mesh = concat(
        [
            model.mesh.transformed(pose),
            textured_plane([0, 0], (400, 400), Material((0.2, 0.2, 0.2))),
        ]
    )
    camera = _small_camera(np.array([0.0, 0.0, 40.0]), 35.0)
    lighting, _ = sample_lighting(np.random.default_rng(0), np.zeros(3))
    k = camera.camera_matrix
    view = PinholeView(k[0, 0], k[1, 1], k[0, 2], k[1, 2], 320, 240, camera.world_from_camera)
    image, ids = renderer.render(mesh, view, lighting, supersample=1)
    assert image.shape == (240, 320, 3) and np.isfinite(image).all()
    checked = 0
    for facelet in model.facelets:
        pixels = ids == facelet.index + 1
        count = int(pixels.sum())
        outline = (facelet.outline @ pose[:3, :3].T) + pose[:3, 3]
        projected = camera.project(outline).astype(np.float32)
        area = float(cv2.contourArea(projected))
        if count < 200 or area < 200:
            continue
        mask = np.zeros_like(ids, np.uint8)
        cv2.fillPoly(mask, [np.rint(projected).astype(np.int32)], 1)
        overlap = np.logical_and(mask > 0, pixels).sum()
        # the sticker's rendered pixels and its projected outline are the same region
        assert overlap / count >= 0.9, (facelet.index, overlap, count)
        ys, xs = np.nonzero(pixels)
        moments = cv2.moments(projected)
        centroid = np.array([moments["m10"] / moments["m00"], moments["m01"] / moments["m00"]])
        if count / area > 0.95:  # unoccluded: the centroids agree to a fraction of a pixel
            np.testing.assert_allclose([xs.mean(), ys.mean()], centroid, atol=0.75)
        checked += 1
    assert checked >= 6


def test_render_time_per_image(renderer, tmp_path: Path, benchmark) -> None:
    """One camera view end to end (render + ID pass, lens, sensor, JPEG, truth): the benchmark
    reports the render time per image."""
    plan = CapturePlan("bench", 7, "333", moves="R U", turns={"y": (0.0, 0.0, 50.0)}, rig="top")
    truth = benchmark.pedantic(render_capture, args=(plan, renderer, tmp_path), rounds=1)
    # U turned +50 degrees (counter-clockwise from above) snaps to U', which undoes the U:
    # the puzzle is one move (R) from solved
    assert (truth["verdict"], truth["snapped_turns"]) == ("+2", "U'")
    (view,) = truth["views"]
    image = cv2.imread(str(tmp_path / view["image"]))
    assert image.shape[:2] == (view["image_size"][1], view["image_size"][0])
    assert len(view["facelets"]) >= 9


@pytest.mark.slow
def test_corpus_capture_regenerates_from_its_seed(
    renderer, corpus_dir: Path, tmp_path: Path
) -> None:
    """Re-rendering a committed capture from the plan gives the same ground truth."""
    import json

    from judgecam.render.corpus import plan_corpus

    manifest_path = corpus_dir / "manifest.json"
    if not manifest_path.is_file():
        pytest.skip("no corpus")
    manifest = json.loads(manifest_path.read_text())
    plan = plan_corpus(manifest["seed"], 2)[1]
    fresh = render_capture(plan, renderer, tmp_path)
    committed = json.loads((corpus_dir / f"{plan.capture_id}.json").read_text())
    for key in ("state_colors", "pairs", "verdict", "world_from_puzzle", "lighting", "clutter"):
        assert fresh[key] == committed[key], key
    for new, old in zip(fresh["views"], committed["views"], strict=True):
        np.testing.assert_allclose(new["camera_matrix"], old["camera_matrix"])
        assert [f["index"] for f in new["facelets"]] == [f["index"] for f in old["facelets"]]
        np.testing.assert_allclose(
            [f["polygon_px"] for f in new["facelets"]],
            [f["polygon_px"] for f in old["facelets"]],
            atol=0.02,
        )
        np.testing.assert_allclose(
            [f["pixels"] for f in new["facelets"]],
            [f["pixels"] for f in old["facelets"]],
            rtol=0.02,
        )
