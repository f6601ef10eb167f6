"""`camera.rotation_matrices` gives cv2.Rodrigues's matrices, many at once."""

from __future__ import annotations

import numpy as np

from judgecam.vision.camera import rotation_matrices, rotation_matrix


def test_rotation_matrices_equal_rodrigues() -> None:
    rng = np.random.default_rng(0)
    rvecs = rng.normal(size=(2000, 3)) * rng.uniform(1e-9, 4.0, size=(2000, 1))
    rvecs = np.concatenate([rvecs, np.zeros((1, 3)), [[1e-17, 0.0, 0.0], [np.pi, 0.0, 0.0]]])
    expected = np.stack([rotation_matrix(rvec) for rvec in rvecs])
    assert np.allclose(rotation_matrices(rvecs), expected, rtol=0.0, atol=1e-12)
