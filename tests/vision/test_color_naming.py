"""Naming clusters after a scheme under an unknown light, and the balanced clustering."""

from __future__ import annotations

import numpy as np
import pytest

from judgecam.calibration.scheme import builtin_scheme
from judgecam.vision.color_cluster import balanced_assignment, balanced_kmeans, cluster_means
from judgecam.vision.color_naming import (
    lab_to_linear_rgb,
    linear_rgb_to_lab,
    name_clusters,
    rotation_namings,
)
from judgecam.vision.color_pieces import piece_model


def test_linear_rgb_round_trip() -> None:
    lab = builtin_scheme("333").centres()
    # float32 conversions; orange sits on the gamut edge (blue 0), where clipping costs ~0.2.
    np.testing.assert_allclose(linear_rgb_to_lab(lab_to_linear_rgb(lab)), lab, atol=0.25)
    np.testing.assert_allclose(lab_to_linear_rgb(np.array([100.0, 0.0, 0.0])), 1.0, atol=1e-3)


@pytest.mark.parametrize("gains", [(1.0, 0.46, 0.15), (0.3, 0.3, 0.3), (0.9, 1.0, 1.1)])
def test_names_and_gains_recovered_under_a_diagonal_light(gains: tuple[float, ...]) -> None:
    scheme = builtin_scheme("333").centres()
    order = np.array([3, 0, 5, 1, 4, 2])  # clusters in a shuffled order
    seen = linear_rgb_to_lab(lab_to_linear_rgb(scheme[order]) * np.array(gains))
    naming = name_clusters(seen, np.full(6, 9), scheme)
    assert naming.colors == tuple(int(i) for i in order)
    np.testing.assert_allclose(np.array(naming.gains) * gains, 1.0, rtol=0.05)
    assert max(naming.delta_e) < 2.0


def test_rotation_namings_are_the_24_orientations_of_the_scheme() -> None:
    model = piece_model("333")
    scheme = builtin_scheme("333")
    namings = rotation_namings(model, np.arange(6), [c.face for c in scheme.colors])
    assert namings.shape == (24, 6)
    assert len({tuple(row) for row in namings}) == 24
    # Identity: the cluster on each face gets the colour the scheme puts there.
    identity = tuple(
        next(i for i, c in enumerate(scheme.colors) if c.face == face) for face in model.faces
    )
    assert identity in {tuple(int(v) for v in row) for row in namings}


def test_mirror_naming_is_refused_with_a_doubt() -> None:
    """Red and orange swapped alone is a mirror image: the names follow the geometry, and the
    classifier says the colours fit a mirrored scheme better."""
    model = piece_model("333")
    scheme = builtin_scheme("333")
    faces = [c.face for c in scheme.colors]
    names = [c.name for c in scheme.colors]
    on_face = {
        face: names.index(next(c.name for c in scheme.colors if c.face == face))
        for face in model.faces
    }
    cluster_lab = np.array([scheme.colors[on_face[face]].lab for face in model.faces])
    # Paint the R-face cluster orange and the L-face cluster red: a mirrored cube.
    right, left = model.faces.index("R"), model.faces.index("L")
    cluster_lab[[right, left]] = cluster_lab[[left, right]]
    allowed = rotation_namings(model, np.arange(6), faces)
    naming = name_clusters(cluster_lab, np.full(6, 9), scheme.centres(), allowed)
    assert naming.doubt is not None and "mirrored" in naming.doubt
    free = name_clusters(cluster_lab, np.full(6, 9), scheme.centres())
    assert names[free.colors[right]] == "orange" and names[free.colors[left]] == "red"


def test_balanced_assignment_respects_capacities() -> None:
    cost = np.array([[0.0, 5.0], [0.0, 5.0], [0.0, 5.0], [9.0, 0.0]])
    members, total = balanced_assignment(cost, [2, 2])
    assert np.bincount(members, minlength=2).tolist() == [2, 2]
    assert total == pytest.approx(5.0)


def test_balanced_kmeans_splits_a_lopsided_pair_evenly_and_keeps_pins() -> None:
    rng = np.random.default_rng(0)
    red = rng.normal([45.0, 65.0, 45.0], 1.0, size=(9, 3))
    orange = rng.normal([55.0, 50.0, 60.0], 1.0, size=(9, 3))
    labs = np.vstack([red, orange])
    seeds = np.array([red[0], red[1]])  # both seeds red: free k-means would stay lopsided
    result = balanced_kmeans(labs, seeds, [9, 9], pinned={0: 0})
    assert result.members[0] == 0
    assert len(set(result.members[:9].tolist())) == 1
    assert len(set(result.members[9:].tolist())) == 1
    assert result.members[0] != result.members[9]


def test_cluster_means_are_the_row_means_to_the_last_bit() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        count = int(rng.integers(1, 60))
        labs = rng.normal(size=(count, 3)) * rng.choice([1.0, 1e8, 1e-8], size=(count, 3))
        members = rng.integers(0, 6, count)
        previous = rng.random((6, 3))
        expected = previous.copy()
        for k in range(6):
            if np.any(members == k):
                expected[k] = labs[members == k].mean(axis=0)
        assert np.array_equal(cluster_means(labs, members, previous), expected)
