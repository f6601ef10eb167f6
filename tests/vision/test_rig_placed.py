"""A view left out, placed where another camera of the rig puts the puzzle (`rig_placed`)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from judgecam.render.camera import look_at
from judgecam.vision.camera import Intrinsics
from judgecam.vision.geometry import CLEARLY_VISIBLE, GeometryFit, PartAngle, _facing
from judgecam.vision.model import puzzle_model
from judgecam.vision.rig_placed import line_of_sight, puzzle_position, rig_placed_fit
from judgecam.vision.segment import Facelet

MODEL = puzzle_model("333")
INTRINSICS = Intrinsics(
    np.array([[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]]), np.zeros(5)
)
#: The puzzle in the world: turned about the vertical, resting on the mat.
WORLD_FROM_PUZZLE = np.eye(4)
WORLD_FROM_PUZZLE[:3, :3] = cv2.Rodrigues(np.array([0.0, 0.0, 0.6]))[0]
WORLD_FROM_PUZZLE[:3, 3] = [0.0, 0.0, 28.5]
CAMERAS = (
    look_at(np.array([260.0, -120.0, 220.0]), np.array([0.0, 0.0, 28.0])),
    look_at(np.array([-200.0, -220.0, 200.0]), np.array([0.0, 0.0, 28.0])),
    look_at(np.array([-60.0, 250.0, 240.0]), np.array([0.0, 0.0, 28.0])),
)


def _camera_from_puzzle(world_from_camera: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(np.linalg.inv(world_from_camera) @ WORLD_FROM_PUZZLE)


def _fit(camera: int, depth_error_mm: float = 0.0) -> GeometryFit:
    """A tight fit of camera `camera`, its distance to the puzzle off by `depth_error_mm`."""
    pose = _camera_from_puzzle(CAMERAS[camera])
    translation = pose[:3, 3] * (1.0 + depth_error_mm / np.linalg.norm(pose[:3, 3]))
    return GeometryFit(
        found=True,
        rvec=cv2.Rodrigues(pose[:3, :3])[0].reshape(3),
        tvec=translation,
        assignment=np.arange(9, dtype=np.int64),
        part_angles=tuple((PartAngle(0.0, 0.4, 9),) * 3 for _ in MODEL.axes),
        pairs=(),
        active_axis=0,
        reprojection_px=0.5,
        inlier_fraction=1.0,
        confidence=1.0,
        problems=(),
    )


def _patches(camera: int, offset_px: tuple[float, float] = (0.0, 0.0)) -> list[Facelet]:
    """A square patch on every facelet camera `camera` sees clearly, and which facelet it is."""
    pose = _camera_from_puzzle(CAMERAS[camera])
    rotation, translation = pose[:3, :3], pose[:3, 3]
    visible = np.flatnonzero(
        _facing(
            MODEL.facelet_normals, MODEL.facelet_centers, rotation, translation, CLEARLY_VISIBLE
        )
    )
    patches = []
    for facelet in visible:
        corners = MODEL.facelet_corners[facelet]
        centre = corners.mean(axis=0)
        sticker = centre + 0.85 * (corners - centre)
        in_camera = sticker @ rotation.T + translation
        pixels = in_camera[:, :2] / in_camera[:, 2:] * 900.0 + [640.0, 360.0] + offset_px
        patches.append(Facelet(pixels, np.array([40.0, 40.0, 200.0]), 2.0, 900, 1.0))
    return patches


def _visible(camera: int) -> NDArray[np.int64]:
    pose = _camera_from_puzzle(CAMERAS[camera])
    return np.flatnonzero(
        _facing(
            MODEL.facelet_normals, MODEL.facelet_centers, pose[:3, :3], pose[:3, 3], CLEARLY_VISIBLE
        )
    )


def test_the_puzzle_is_where_the_cameras_lines_of_sight_meet() -> None:
    """Each fit's distance off by millimetres, its direction right: two cameras put the puzzle's
    centre where it is; one alone, as far off as its distance."""
    fits = [_fit(0, 5.0), _fit(2, -7.0)]
    centre = puzzle_position(fits, [CAMERAS[0], CAMERAS[2]])
    np.testing.assert_allclose(centre, WORLD_FROM_PUZZLE[:3, 3], atol=1e-6)
    alone = puzzle_position(fits[:1], [CAMERAS[0]])
    assert np.linalg.norm(alone - WORLD_FROM_PUZZLE[:3, 3]) == pytest.approx(5.0)


@pytest.mark.parametrize("depth_error_mm", [0.0, 4.0, -6.0])
def test_every_patch_is_placed_on_its_own_facelet(depth_error_mm: float) -> None:
    """Two cameras whose fits' distances are off by a few mm (a third of a sticker seen from
    here): each patch of the third goes to its own facelet."""
    fits = [_fit(0, depth_error_mm), _fit(2, -depth_error_mm)]
    centre = puzzle_position(fits, [CAMERAS[0], CAMERAS[2]])
    fit = rig_placed_fit(MODEL, fits[0], CAMERAS[0], CAMERAS[1], _patches(1), INTRINSICS, centre)
    assert fit is not None
    np.testing.assert_array_equal(fit.assignment, _visible(1))
    assert fit.pairs == ()  # it measures no angle of its own


def test_one_camera_whose_distance_is_off_places_nothing_unless_slid_along_its_sight() -> None:
    """One camera's distance 6 mm off puts the cells a third of a sticker aside here: no patch
    sits on its cell as carried. Slid along that camera's line of sight (where its error
    lies) to where the patches sit, each goes to its own facelet."""
    fit = _fit(0, 6.0)
    assert rig_placed_fit(MODEL, fit, CAMERAS[0], CAMERAS[1], _patches(1), INTRINSICS) is None
    sight = line_of_sight(fit, CAMERAS[0])
    slid = rig_placed_fit(MODEL, fit, CAMERAS[0], CAMERAS[1], _patches(1), INTRINSICS, None, sight)
    assert slid is not None
    np.testing.assert_array_equal(slid.assignment, _visible(1))
    truth = _camera_from_puzzle(CAMERAS[1])[:3, 3]
    assert np.linalg.norm(slid.tvec - truth) < 1.0


def test_a_slide_never_reaches_a_grid_a_cell_off() -> None:
    """Patches a cell away from where one camera puts the puzzle, along its line of sight: the
    slide stops short of them, and nothing is placed."""
    fit = _fit(0)
    sight = line_of_sight(fit, CAMERAS[0])
    patches = _patches(1)
    size = float(np.median([p.size_px for p in patches]))
    for offset in ((1.2 * size, 0.0), (0.0, 1.2 * size), (-0.9 * size, 0.9 * size)):
        shifted = _patches(1, offset)
        assert (
            rig_placed_fit(MODEL, fit, CAMERAS[0], CAMERAS[1], shifted, INTRINSICS, None, sight)
            is None
        )


@pytest.mark.parametrize("stickers", [1.0, 1.2, 1.5])
def test_patches_a_cell_away_from_where_the_rig_puts_the_puzzle_are_not_placed(
    stickers: float,
) -> None:
    """Patches about a cell away, in any direction, from where the rig puts their cells (a
    calibration a degree or two off): a grid a cell off fits them nearly as well as the one the
    rig gives, so none is placed, even where some patches meet a cell."""
    size = float(np.median([p.size_px for p in _patches(1)]))
    for angle in np.linspace(0.0, 2.0 * np.pi, 12, endpoint=False):
        offset = (stickers * size * np.cos(angle), stickers * size * np.sin(angle))
        shifted = _patches(1, offset)
        assert rig_placed_fit(MODEL, _fit(0), CAMERAS[0], CAMERAS[1], shifted, INTRINSICS) is None


def test_too_few_patches_on_cells_place_nothing() -> None:
    patches = _patches(1)[:2]
    assert rig_placed_fit(MODEL, _fit(0), CAMERAS[0], CAMERAS[1], patches, INTRINSICS) is None
