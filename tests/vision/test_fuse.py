"""Stage 5 pieces: mapping pairs between puzzle frames and combining views' angles."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from judgecam.vision.fuse import (
    MAX_VIEW_DISAGREEMENT_DEG,
    _map_pair,
    fuse_pairs,
    held_layer_tip_pairs,
    stated_uncertainty,
)
from judgecam.vision.geometry import GeometryFit, PairAngle, PartAngle
from judgecam.vision.model import puzzle_model, rotation_about


def _fit(pairs: tuple[PairAngle, ...]) -> GeometryFit:
    return GeometryFit(
        found=True,
        rvec=np.zeros(3),
        tvec=np.array([0.0, 0.0, 300.0]),
        assignment=np.zeros(0, np.int64),
        part_angles=(),
        pairs=pairs,
        active_axis=0,
        reprojection_px=0.5,
        inlier_fraction=1.0,
        confidence=1.0,
        problems=(),
    )


def test_identity_keeps_pairs() -> None:
    model = puzzle_model("333")
    assert _map_pair(model, np.eye(3), "x", (0, 1)) == ("x", (0, 1))


def test_half_turn_reverses_the_parts_of_the_flipped_axes() -> None:
    model = puzzle_model("333")
    half_turn = rotation_about(np.array([0.0, 1.0, 0.0]), 180.0)  # x -> -x, z -> -z
    assert _map_pair(model, half_turn, "x", (0, 1)) == ("x", (1, 2))
    assert _map_pair(model, half_turn, "y", (0, 1)) == ("y", (0, 1))
    quarter = rotation_about(np.array([0.0, 0.0, 1.0]), 90.0)  # x -> y
    assert _map_pair(model, quarter, "x", (1, 2)) == ("y", (1, 2))


def test_views_that_agree_are_combined_by_inverse_variance() -> None:
    model = puzzle_model("222")
    first = _fit((PairAngle("y", ("D", "U"), 10.0, 0.5, 4),))
    second = _fit((PairAngle("y", ("D", "U"), 11.0, 1.0, 4),))
    fused, reasons = fuse_pairs(model, [(first, np.eye(3)), (second, np.eye(3))])
    assert reasons == ()
    (pair,) = fused
    u1, u2 = stated_uncertainty(0.5), stated_uncertainty(1.0)
    expected = (10.0 / u1**2 + 11.0 / u2**2) / (1 / u1**2 + 1 / u2**2)
    assert pair.angle_deg == pytest.approx(expected)
    assert pair.views == 2
    assert pair.uncertainty_deg <= min(u1, u2)


def test_views_that_disagree_widen_the_uncertainty_and_say_so() -> None:
    model = puzzle_model("222")
    first = _fit((PairAngle("y", ("D", "U"), 5.0, 0.2, 4),))
    second = _fit((PairAngle("y", ("D", "U"), 30.0, 0.2, 4),))
    fused, reasons = fuse_pairs(model, [(first, np.eye(3)), (second, np.eye(3))])
    (pair,) = fused
    assert abs(pair.angle_deg - 5.0) <= pair.uncertainty_deg
    assert abs(pair.angle_deg - 30.0) <= pair.uncertainty_deg
    assert any("disagree" in reason for reason in reasons)
    assert not pair.consistent


def test_views_that_disagree_leave_the_pair_wherever_either_view_says() -> None:
    # One of them read it wrong: the fused span covers each view's own stated span.
    model = puzzle_model("pyram")
    first = _fit((PairAngle("B", ("layer", "tip"), -13.2, 0.8, 2),))
    second = _fit((PairAngle("B", ("layer", "tip"), -5.4, 0.4, 2),))
    fused, _ = fuse_pairs(model, [(first, np.eye(3)), (second, np.eye(3))])
    (pair,) = fused
    assert not pair.consistent and not pair.snapped_apart
    low = -13.2 - stated_uncertainty(0.8)
    high = -5.4 + stated_uncertainty(0.4)
    assert pair.angle_deg - pair.uncertainty_deg <= low + 1e-9
    assert pair.angle_deg + pair.uncertainty_deg >= high - 1e-9
    # The angle stays the views' inverse-variance mean, the best guess of the pair's place.
    assert -13.2 < pair.angle_deg < -5.4


def test_views_a_few_degrees_apart_saw_the_layer_in_one_place() -> None:
    """Stated uncertainties can be tighter than two views agree (c0014: 12.4 and 9.6 degrees,
    each +-1): the pair is measured, with the spread as its uncertainty, not a misfit."""
    model = puzzle_model("222")
    first = _fit((PairAngle("y", ("D", "U"), 12.4, 0.2, 4),))
    second = _fit((PairAngle("y", ("D", "U"), 9.6, 0.2, 4),))
    apart = 12.4 - 9.6
    assert stated_uncertainty(0.2) < apart / 2 < apart < MAX_VIEW_DISAGREEMENT_DEG
    fused, reasons = fuse_pairs(model, [(first, np.eye(3)), (second, np.eye(3))])
    (pair,) = fused
    assert pair.consistent and reasons == ()
    assert abs(pair.angle_deg - 12.4) <= pair.uncertainty_deg
    assert abs(pair.angle_deg - 9.6) <= pair.uncertainty_deg


def test_angles_either_side_of_half_a_step_are_close() -> None:
    model = puzzle_model("222")
    first = _fit((PairAngle("y", ("D", "U"), 44.5, 0.3, 4),))
    second = _fit((PairAngle("y", ("D", "U"), -44.5, 0.3, 4),))
    fused, reasons = fuse_pairs(model, [(first, np.eye(3)), (second, np.eye(3))])
    (pair,) = fused
    assert abs(abs(pair.angle_deg) - 45.0) < 0.6
    assert pair.uncertainty_deg < 2.0
    # The two views snapped the part a step apart: their facelets cannot be fused as read.
    assert not pair.consistent and pair.snapped_apart
    assert any("snapping boundary" in reason for reason in reasons)


def test_only_puzzles_with_a_face_on_top_align_views_by_their_top_face() -> None:
    """A cube on the mat has a face on top that every upright camera sees pointing up most; a
    Pyraminx has a vertex on top, its three upper faces point up alike, and which one a view
    shows "on top" depends on where the camera stands."""
    from judgecam.vision.fuse import _rests_on_a_face

    assert _rests_on_a_face(puzzle_model("333"))
    assert _rests_on_a_face(puzzle_model("222"))
    assert not _rests_on_a_face(puzzle_model("pyram"))


def test_two_views_off_the_reference_must_also_agree_with_each_other() -> None:
    """Three cameras: the reference sees U and F, the other two see U and R, and R and B. The
    reference cannot tell how the third sits (it shares only U, uniform); the second can (they
    share R). The cross score is highest for the alignment under which they see R alike."""
    from judgecam.vision.fuse import ViewEvidence, _cross_score

    model = puzzle_model("333")
    face_lab = {
        "U": (95.0, 0.0, 0.0),
        "D": (85.0, -5.0, 80.0),
        "F": (55.0, -60.0, 45.0),
        "B": (35.0, 20.0, -60.0),
        "R": (45.0, 65.0, 45.0),
        "L": (65.0, 40.0, 70.0),
    }
    truth = np.array([face_lab[model.face_names[f]] for f in model.facelet_face])

    def seeing(*faces: str) -> np.ndarray:
        labs = np.full_like(truth, np.nan)
        for face in faces:
            shown = model.facelet_face == model.face_names.index(face)
            labs[shown] = truth[shown]
        return labs

    labs = [seeing("U", "F"), seeing("U", "R"), seeing("R", "B")]
    views = [ViewEvidence((), _fit(())) for _ in labs]
    identity = np.eye(3)
    right = _cross_score(model, views, labs, [identity, identity, identity], [1, 2])
    for quarter in (90.0, 180.0, 270.0):
        turned = rotation_about(np.array([0.0, 1.0, 0.0]), quarter)
        wrong = _cross_score(model, views, labs, [identity, identity, turned], [1, 2])
        assert wrong < right - 5.0
    # The reference's own alignment is not scored again.
    assert _cross_score(model, views, labs, [identity, identity, identity], [1]) == 0.0
    # One view's share: the pairs that include it.
    rotations = [identity, identity, identity]
    assert _cross_score(model, views, labs, rotations, [1, 2], only=2) == right
    assert _cross_score(model, views, labs, rotations, [1, 2], only=0) == 0.0


def test_a_pyraminx_view_knows_the_face_it_lies_on() -> None:
    """The face below points down and away from an upright camera at any elevation; the three
    upper faces point a third upwards: exactly one face is turned away without pointing up."""
    from judgecam.vision.camera import rotation_matrix
    from judgecam.vision.fuse import bottom_face

    model = puzzle_model("pyram")
    below = 2
    down = model.face_normals[below]
    for elevation in (10.0, 35.0, 60.0, 89.0):
        for yaw in (0.0, 50.0, 130.0, 250.0):
            # Camera axes (x right, y down, z forward) looking down at `elevation`, turned
            # about the vertical by `yaw`; the puzzle's face `below` on the mat.
            up = -down
            side = np.cross(up, model.face_normals[(below + 1) % 4])
            side /= np.linalg.norm(side)
            forward_flat = rotation_about(up, yaw) @ side
            right = np.cross(forward_flat, up)
            e = np.radians(elevation)
            forward = np.cos(e) * forward_flat - np.sin(e) * up
            image_down = np.cross(forward, right)
            camera_from_model = np.stack([right, image_down, forward])
            rvec, _ = cv2.Rodrigues(camera_from_model)
            fit = _fit(())
            fit = GeometryFit(**{**fit.__dict__, "rvec": rvec.reshape(3)})
            assert np.allclose(rotation_matrix(fit.rvec), camera_from_model, atol=1e-6)
            assert bottom_face(model, fit) == below, (elevation, yaw)


def _turned_fit(model, body_deg: float, part_deg: tuple[float, float, float]) -> GeometryFit:
    """A 3x3x3 fit whose body is turned `body_deg` about the first axis from the world's, its
    parts on that axis at `part_deg` from the body."""
    from dataclasses import replace

    from judgecam.vision.geometry import PartAngle

    direction = model.axes[0].direction
    rvec = cv2.Rodrigues(rotation_about(direction, body_deg))[0].reshape(3)
    measured = tuple(PartAngle(angle, 0.5, 6) for angle in part_deg)
    in_line = tuple(PartAngle(0.0, 0.5, 6) for _ in range(3))
    return replace(_fit(()), rvec=rvec, part_angles=(measured, in_line, in_line))


def test_the_rig_places_a_view_whose_fit_took_a_turned_layer_for_the_body() -> None:
    """One layer 33 degrees out of line: one camera's fit takes the two layers in line for its
    body, another's the turned layer (its body 33 degrees from the first's, the other two
    layers at +33 from it). The rig's poses still say how the views sit: the part one calls
    its body sits where the other's turned parts do."""
    from judgecam.vision.fuse import ViewEvidence, _known_alignment

    model = puzzle_model("333")
    first = ViewEvidence((), _turned_fit(model, 0.0, (0.0, 0.0, -33.0)))
    second = ViewEvidence((), _turned_fit(model, -33.0, (33.0, 33.0, 0.0)))
    poses = [np.eye(4), np.eye(4)]
    found = _known_alignment(model, [first, second], 0, 1, poses)
    assert found is not None and np.allclose(found, np.eye(3))
    # With no part measured out of line in either view, 33 degrees from any symmetry is too
    # far to trust the rig.
    in_line = ViewEvidence((), _turned_fit(model, 0.0, (0.0, 0.0, 0.0)))
    unturned = ViewEvidence((), _turned_fit(model, -33.0, (0.0, 0.0, 0.0)))
    assert _known_alignment(model, [in_line, unturned], 0, 1, poses) is None


def _pyraminx_fit(
    part_angles: tuple[tuple[PartAngle | None, ...], ...], pairs: tuple[PairAngle, ...]
) -> GeometryFit:
    fit = _fit(pairs)
    return GeometryFit(**{**fit.__dict__, "part_angles": part_angles})


def test_a_tip_is_measured_from_its_base_through_a_layer_a_crossing_askew_layer_holds() -> None:
    """Corpus c0156, cam1: the L layer stands 54.8 degrees askew; the B axis's base and tip are
    measured (0.2 and -1.5 degrees) but not its layer. The layer is held in line with the base
    (within the play), so the tip's pair is -1.7 degrees, its uncertainty widened by the play;
    with L in line nothing holds the layer and the tip stays unmeasured."""
    from judgecam.puzzle.locking import PLAY_DEG

    model = puzzle_model("pyram")
    assert [axis.name for axis in model.axes] == ["U", "L", "R", "B"]

    def part(angle: float) -> PartAngle:
        return PartAngle(angle, 0.4, 3)

    def fit_with(l_layer: float) -> GeometryFit:
        angles = (
            (None, part(-0.1), part(0.2)),
            (part(-1.0), part(l_layer), part(l_layer - 0.6)),
            (part(-0.2), None, None),
            (part(0.2), None, part(-1.5)),
        )
        pairs = (
            PairAngle("U", ("layer", "tip"), 0.3, 0.6, 3),
            PairAngle("L", ("base", "layer"), l_layer + 1.0, 0.6, 3),
            PairAngle("L", ("layer", "tip"), -0.6, 0.6, 3),
        )
        return _pyraminx_fit(angles, pairs)

    ((axis, parts, angle, uncertainty),) = held_layer_tip_pairs(model, fit_with(53.8))
    assert (axis, parts) == ("B", (1, 2))
    assert angle == pytest.approx(-1.7)
    assert PLAY_DEG <= uncertainty <= PLAY_DEG + stated_uncertainty(0.6)
    fused, _ = fuse_pairs(model, [(fit_with(53.8), np.eye(3))])
    assert ("B", (1, 2)) in {(pair.axis, pair.parts) for pair in fused}

    assert held_layer_tip_pairs(model, fit_with(0.5)) == []


def test_a_tip_measured_on_the_base_of_a_turned_layer_counts_through_its_held_layer() -> None:
    """Corpus c0156, cam0: the U layer stands 54.4 degrees askew and the other axes were
    measured on it; the L tip and L base stickers there are measured on the base instead
    (`GeometryFit.tips_elsewhere`), and with the L layer held in line the tip's pair is the
    tip's angle from that base, widened by the play."""
    from judgecam.puzzle.locking import PLAY_DEG

    model = puzzle_model("pyram")

    def part(angle: float) -> PartAngle:
        return PartAngle(angle, 0.5, 2)

    angles = (
        (part(-53.6), part(0.7), part(0.2)),
        (part(0.3), part(0.1), None),
        (part(-0.5), None, None),
        (part(0.0), None, None),
    )
    pairs = (
        PairAngle("U", ("base", "layer"), 54.4, 0.6, 4),
        PairAngle("U", ("layer", "tip"), -0.5, 0.6, 2),
        PairAngle("L", ("base", "layer"), -0.2, 0.5, 2),
    )
    fit = _pyraminx_fit(angles, pairs)
    assert held_layer_tip_pairs(model, fit) == []
    elsewhere = ((), (part(-0.3), None, part(-1.8)), (), ())
    moved = GeometryFit(**{**fit.__dict__, "tips_elsewhere": elsewhere})
    ((axis, parts, angle, uncertainty),) = held_layer_tip_pairs(model, moved)
    assert (axis, parts) == ("L", (1, 2))
    assert angle == pytest.approx(-1.5)
    assert PLAY_DEG <= uncertainty <= PLAY_DEG + stated_uncertainty(0.8)
