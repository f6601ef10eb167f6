"""Meshes and puzzle models: sticker outlines, polytopes, part rotations, resting poses."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from judgecam.puzzle import get_puzzle
from judgecam.render.capture import CapturePlan, place_cameras, puzzle_truth, resting_pose
from judgecam.render.color import scheme_for
from judgecam.render.corpus import plan_corpus
from judgecam.render.mesh import convex_polytope, rounded_outline
from judgecam.render.puzzle_mesh import PuzzleLook, build_puzzle


def test_rounded_outline_is_inset_from_every_edge() -> None:
    square = np.array([[0, 0, 0], [10, 0, 0], [10, 10, 0], [0, 10, 0.0]])
    outline = rounded_outline(square, inset=1.0, radius=2.0)
    assert outline[:, :2].min() == pytest.approx(1.0)
    assert outline[:, :2].max() == pytest.approx(9.0)
    np.testing.assert_allclose(outline[:, 2], 0.0)
    # the corner is rounded: no outline point within the radius of the square's corner region
    assert np.min(np.hypot(outline[:, 0] - 1, outline[:, 1] - 1)) > 0.5


def test_convex_polytope_of_a_box() -> None:
    planes = np.array(
        [[1, 0, 0, 1], [-1, 0, 0, 1], [0, 1, 0, 2], [0, -1, 0, 2], [0, 0, 1, 3], [0, 0, -1, 3.0]]
    )
    faces = convex_polytope(planes)
    assert len(faces) == 6 and all(len(f) == 4 for f in faces)
    for face, plane in zip(faces, planes, strict=True):
        np.testing.assert_allclose(face @ plane[:3], plane[3])
        normal = np.cross(face[1] - face[0], face[2] - face[0])
        assert normal @ plane[:3] > 0  # counter-clockwise seen from outside


@pytest.mark.parametrize("puzzle", ["333", "222", "pyram"])
def test_facelet_geometry_turns_with_its_part(puzzle: str) -> None:
    spec = get_puzzle(puzzle)
    scheme = scheme_for(spec.name, "wca")
    colors = spec.solved_state(scheme.face_colors).colors
    look = PuzzleLook("stickered", scheme)
    axis = spec.axes[0]
    angles = [0.0] * len(axis.part_names)
    angles[-1] = 30.0
    still = build_puzzle(spec, colors, look, {})
    turned = build_puzzle(spec, colors, look, {axis.name: angles})
    direction = np.asarray(axis.direction)
    for a, b, facelet in zip(still.facelets, turned.facelets, spec.facelets, strict=True):
        moved = axis.part_of(facelet.center) == len(axis.part_names) - 1
        if not moved:
            np.testing.assert_allclose(a.polygon, b.polygon, atol=1e-9)
            continue
        # turned by 30 degrees about the axis: same height along it, 30 degrees around it
        np.testing.assert_allclose(a.center @ direction, b.center @ direction, atol=1e-9)
        pa, pb = (
            a.center - direction * (a.center @ direction),
            b.center - direction * (b.center @ direction),
        )
        if np.linalg.norm(pa) > 1:
            cos = pa @ pb / np.linalg.norm(pa) / np.linalg.norm(pb)
            assert np.degrees(np.arccos(np.clip(cos, -1, 1))) == pytest.approx(30.0, abs=1e-6)
            assert np.cross(pa, pb) @ direction > 0  # right-handed


def test_stickers_sit_on_the_puzzle_surface() -> None:
    spec = get_puzzle("333")
    scheme = scheme_for("333", "wca")
    model = build_puzzle(
        spec, spec.solved_state(scheme.face_colors).colors, PuzzleLook("stickered", scheme), {}
    )
    for geometry in model.facelets:
        depth = geometry.polygon @ geometry.normal
        np.testing.assert_allclose(depth, spec.edge_mm / 2, atol=0.3)


def test_resting_pose_puts_the_turned_axis_upright() -> None:
    spec = get_puzzle("333")
    rng = np.random.default_rng(5)
    for _ in range(10):
        pose = resting_pose(spec, "z", rng, 2.0, np.zeros(2))
        up = pose[:3, :3] @ np.array([0.0, 0.0, 1.0])
        assert abs(up[2]) == pytest.approx(1.0)
        assert pose[2, 3] == pytest.approx(2.0 + spec.edge_mm / 2, abs=0.5)


def test_snapping_uses_the_nearest_step() -> None:
    plan = CapturePlan("t", 1, "333", turns={"y": (0.0, 0.0, -46.0)})
    truth = puzzle_truth(plan)
    assert truth.snapped_moves == "U"
    assert truth.verdict == "+2"
    pair = next(p for p in truth.pairs if p["label"] == "y:E|U")
    assert (pair["angle_deg"], pair["residual_deg"]) == (-46.0, 44.0)
    within = puzzle_truth(CapturePlan("t", 1, "333", turns={"y": (0.0, 44.0, 0.0)}))
    assert (within.verdict, within.snapped_moves) == ("solved", "")


def test_corpus_plan_is_deterministic_and_prefix_stable() -> None:
    assert plan_corpus(7, 12) == plan_corpus(7, 30)[:12]
    assert plan_corpus(7, 12) != plan_corpus(8, 12)


def test_hands_in_every_capture_keep_every_other_part_of_the_plan() -> None:
    mixed = plan_corpus(7, 46)
    handed = plan_corpus(7, 46, hands=True)
    assert sum("hand" in plan.clutter for plan in mixed) < len(mixed) / 2
    for plain, forced in zip(mixed, handed, strict=True):
        assert set(forced.clutter) == set(plain.clutter) | {"hand"}
        assert replace(forced, clutter=plain.clutter) == plain


def test_a_rig_override_keeps_every_other_part_of_the_plan() -> None:
    mixed = plan_corpus(7, 30)
    three = plan_corpus(7, 30, rig="rig3")
    assert {plan.rig for plan in three} == {"rig3"}
    for plain, forced in zip(mixed, three, strict=True):
        assert replace(forced, rig=plain.rig) == plain


@pytest.mark.parametrize(("rig", "count", "apart"), [("rig2", 2, 180.0), ("rig3", 3, 120.0)])
def test_station_rigs_surround_the_puzzle(rig: str, count: int, apart: float) -> None:
    target = np.array([0.0, 0.0, 30.0])
    for seed in range(20):
        cameras = place_cameras(rig, target, 57.0, np.random.default_rng(seed))
        assert len(cameras) == count
        eyes = np.array([c.world_from_camera[:3, 3] - target for c in cameras])
        azimuths = np.degrees(np.arctan2(eyes[:, 1], eyes[:, 0]))
        elevations = np.degrees(np.arctan2(eyes[:, 2], np.hypot(eyes[:, 0], eyes[:, 1])))
        assert np.all((elevations > 25) & (elevations < 55))
        gaps = np.sort((azimuths - azimuths[0]) % 360.0)[1:]
        expected = apart * np.arange(1, count)
        np.testing.assert_allclose(gaps, expected, atol=40.0)
