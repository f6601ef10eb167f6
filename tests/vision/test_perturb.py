"""Images changed as a camera or a venue changes them (`judgecam.vision.perturb`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judgecam.vision.camera import rotation_angle_deg
from judgecam.vision.evaluate import main
from judgecam.vision.perturb import PERTURBATIONS, miscalibrated, perturbed


def test_each_perturbation_changes_the_image_as_it_says() -> None:
    image = np.full((40, 60, 3), (200, 100, 50), np.uint8)  # B, G, R
    warm = perturbed(image, "warm", "a.jpg")
    assert warm[0, 0].tolist() == [144, 95, 58]  # blue down, red up (50 x 1.18, truncated)
    assert perturbed(image, "cool", "a.jpg")[0, 0].tolist() == [240, 100, 40]
    assert perturbed(image, "dark", "a.jpg")[0, 0, 0] < 200 * 0.8
    assert perturbed(image, "flat", "a.jpg")[0, 0].tolist() == [180, 120, 90]
    noisy = perturbed(image, "noise8", "a.jpg")
    assert 6.0 < float(np.std(noisy.astype(float) - image)) < 10.0
    assert np.array_equal(noisy, perturbed(image, "noise8", "a.jpg"))  # the same per view
    assert perturbed(image, "jpeg30", "a.jpg").shape == image.shape
    assert set(PERTURBATIONS) == {
        "warm",
        "cool",
        "dark",
        "flat",
        "jpeg30",
        "noise8",
        "defocus",
        "motion",
        "vignette",
    }


def test_blur_and_vignetting_change_what_they_say() -> None:
    edge = np.zeros((41, 61, 3), np.uint8)
    edge[:, 30:] = 200  # a vertical edge: both blurs soften it (a vertical smear would not)
    for kind in ("defocus", "motion"):
        soft = perturbed(edge, kind, "a.jpg")
        assert 0 < int(soft[20, 30, 0]) < 200 and soft[20, 0, 0] == 0 and soft[20, 60, 0] == 200
    bright = np.full((41, 61, 3), 200, np.uint8)
    vignetted = perturbed(bright, "vignette", "a.jpg")
    assert vignetted[20, 30, 0] == 200  # the centre keeps its light
    assert 85 <= int(vignetted[0, 0, 0]) <= 95  # the corners 45 % of it


def test_an_unknown_perturbation_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown perturbation"):
        perturbed(np.zeros((4, 4, 3), np.uint8), "sepia")


def test_evaluate_judges_the_corpus_perturbed(corpus_dir: Path, capsys) -> None:
    assert main([str(corpus_dir), "--limit", "1", "--perturb", "warm"]) == 0
    assert "captures: 1" in capsys.readouterr().out


def test_a_miscalibrated_pose_is_off_by_the_angle_and_distance_asked() -> None:
    pose = np.eye(4)
    pose[:3, 3] = [100.0, -50.0, 300.0]
    moved = miscalibrated(pose, 1.5, 4.0, "c0001_cam0.jpg")
    assert rotation_angle_deg(pose[:3, :3].T @ moved[:3, :3]) == pytest.approx(1.5)
    assert np.linalg.norm(moved[:3, 3] - pose[:3, 3]) == pytest.approx(4.0)
    np.testing.assert_array_equal(moved, miscalibrated(pose, 1.5, 4.0, "c0001_cam0.jpg"))
    assert not np.allclose(moved, miscalibrated(pose, 1.5, 4.0, "c0001_cam1.jpg"))


def test_evaluate_judges_with_a_rig_off_and_refuses_it_without_rig_poses(
    corpus_dir: Path, capsys
) -> None:
    assert main([str(corpus_dir), "--limit", "1", "--rig-poses", "--rig-error", "1", "5"]) == 0
    assert "captures: 1" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        main([str(corpus_dir), "--limit", "1", "--rig-error", "1", "5"])
    assert refused.value.code == 2
