"""Lens distortion maps, light colour and the camera pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from judgecam.render.camera import PI_CAM3_720, gl_projection, look_at, make_camera
from judgecam.render.color import blackbody_rgb, linear_to_srgb, srgb_to_linear
from judgecam.render.post import SensorLook, camera_pipeline, lens_maps


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lens_maps_invert_opencv_distortion(seed: int) -> None:
    """A ray read from the maps, projected with K and dist_coeffs, lands on its own pixel."""
    import cv2

    rng = np.random.default_rng(seed)
    camera = make_camera("c", PI_CAM3_720, np.array([0, -300.0, 200]), np.zeros(3), rng)
    maps = lens_maps(camera)
    pin = maps.pinhole
    v, u = rng.integers(0, camera.height, 200), rng.integers(0, camera.width, 200)
    rays = np.stack(
        [(maps.map_x[v, u] - pin.cx) / pin.fx, (maps.map_y[v, u] - pin.cy) / pin.fy, np.ones(200)],
        1,
    )
    pixels, _ = cv2.projectPoints(
        rays, np.zeros(3), np.zeros(3), camera.camera_matrix, camera.dist_coeffs
    )
    np.testing.assert_allclose(pixels.reshape(-1, 2), np.stack([u, v], 1), atol=2e-3)
    # the pinhole render covers every ray the distorted image needs
    assert maps.map_x.min() >= 0 and maps.map_x.max() <= pin.width - 1
    assert maps.map_y.min() >= 0 and maps.map_y.max() <= pin.height - 1


def test_gl_projection_puts_points_where_opencv_does() -> None:
    rng = np.random.default_rng(3)
    camera = make_camera("c", PI_CAM3_720, np.array([100, -250.0, 180]), np.zeros(3), rng)
    k = camera.camera_matrix
    points = rng.uniform(-30, 30, (20, 3))
    proj = gl_projection(k[0, 0], k[1, 1], k[0, 2], k[1, 2], 1280, 720, 10.0, 2000.0)
    gl_view = np.diag([1.0, -1.0, -1.0, 1.0]) @ camera.camera_from_world
    clip = (proj @ gl_view @ np.c_[points, np.ones(20)].T).T
    ndc = clip[:, :2] / clip[:, 3:4]
    # GL: pixel centres at +0.5 and rows counted from the bottom
    u = (ndc[:, 0] + 1) / 2 * 1280 - 0.5
    v = (1 - ndc[:, 1]) / 2 * 720 - 0.5
    pinhole = make_camera(
        "c", PI_CAM3_720, np.array([100, -250.0, 180]), np.zeros(3), np.random.default_rng(3)
    )
    pinhole = type(pinhole)(**{**pinhole.__dict__, "dist_coeffs": np.zeros(5)})
    np.testing.assert_allclose(np.stack([u, v], 1), pinhole.project(points), atol=1e-6)


def test_look_at_points_the_optical_axis_at_the_target() -> None:
    pose = look_at(np.array([200.0, 100, 300]), np.array([10.0, -20, 5]))
    forward = pose[:3, 2]
    expected = np.array([10.0, -20, 5]) - np.array([200.0, 100, 300])
    np.testing.assert_allclose(forward, expected / np.linalg.norm(expected), atol=1e-12)
    np.testing.assert_allclose(pose[:3, :3] @ pose[:3, :3].T, np.eye(3), atol=1e-12)
    assert pose[2, 1] < 0  # image "down" points down in the world


def test_blackbody_colours_run_from_warm_to_neutral() -> None:
    warm, neutral, cool = blackbody_rgb(3000), blackbody_rgb(6504), blackbody_rgb(9000)
    assert warm[0] > warm[1] > warm[2]
    np.testing.assert_allclose(neutral / neutral.mean(), np.ones(3), atol=0.04)  # ~D65
    assert cool[2] > cool[0]
    luminance = np.array([0.2126, 0.7152, 0.0722])
    np.testing.assert_allclose([warm @ luminance, cool @ luminance], [1.0, 1.0], atol=1e-3)


def test_srgb_round_trip() -> None:
    values = np.linspace(0, 1, 101)
    np.testing.assert_allclose(linear_to_srgb(srgb_to_linear(values)), values, atol=1e-9)


def test_camera_pipeline_exposes_grey_and_adds_shot_noise() -> None:
    """A flat grey scene comes out near mid-grey; darker light (fewer photons) is noisier."""
    flat = np.full((120, 160, 3), 0.3, np.float32)
    neutral = blackbody_rgb(6504)
    outputs = []
    for full_well in (8000.0, 600.0):
        look = SensorLook(0.0, 1.0, 0.0, 0.0, 0.0, full_well, 2.0, 90)
        outputs.append(camera_pipeline(flat, neutral, look, np.random.default_rng(0)))
    bright, dim = outputs
    for out in outputs:
        assert out.dtype == np.uint8 and out.shape == (120, 160, 3)
        assert 95 <= float(out.mean()) <= 125  # 15 % grey -> sRGB ~108
    assert float(dim[..., 1].std()) > 1.5 * float(bright[..., 1].std())
