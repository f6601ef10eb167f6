"""rubiks-color-resolver's square numbering mapped onto judgecam's facelets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from judgecam.puzzle.registry import get_puzzle
from judgecam.vision.color_resolver import (
    ResolverFormatError,
    load_resolver_file,
    resolver_square_to_facelet,
    samples_from_resolver,
)

#: Per resolver face: outward normal, and the directions of "up" and "right" of the picture of
#: that face seen from outside (U with B at the top, D with F at the top, sides with U on top).
VIEWS = {
    "U": ((0, 1, 0), (0, 0, -1), (1, 0, 0)),
    "L": ((-1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "F": ((0, 0, 1), (0, 1, 0), (1, 0, 0)),
    "R": ((1, 0, 0), (0, 1, 0), (0, 0, -1)),
    "B": ((0, 0, -1), (0, 1, 0), (-1, 0, 0)),
    "D": ((0, -1, 0), (0, 0, 1), (1, 0, 0)),
}


@pytest.mark.parametrize("puzzle", ["222", "333"])
def test_resolver_squares_land_where_the_format_says(puzzle: str) -> None:
    """Square k of resolver face f (row by row) is at row k // n, column k % n of f's view."""
    spec = get_puzzle(puzzle)
    mapping = resolver_square_to_facelet(puzzle)
    size = 2 if puzzle == "222" else 3
    assert sorted(mapping) == list(range(6 * size * size))
    for face_number, (face, (normal, up, right)) in enumerate(VIEWS.items()):
        for k in range(size * size):
            facelet = spec.facelets[mapping[face_number * size * size + k]]
            assert facelet.face == face
            centre = np.array(facelet.center)
            row, column = divmod(k, size)
            # Higher rows are further "up", later columns further "right" in the face's view.
            height = float(centre @ np.array(up))
            across = float(centre @ np.array(right))
            cell = spec.edge_mm / size
            np.testing.assert_allclose(height, (size / 2 - row - 0.5) * cell, atol=1e-6)
            np.testing.assert_allclose(across, (column + 0.5 - size / 2) * cell, atol=1e-6)
            np.testing.assert_allclose(facelet.normal, normal, atol=1e-9)


def test_solved_robot_cube_has_single_coloured_faces(shared_data: Path) -> None:
    squares = json.loads((shared_data / "color-samples" / "3x3x3-solved-01.json").read_text())
    samples = samples_from_resolver(squares, "333")
    spec = get_puzzle("333")
    for face in "URFDLB":
        labs = np.array([samples[f.index].lab for f in spec.facelets if f.face == face])  # type: ignore[union-attr]
        assert np.ptp(labs[:, 1]) < 25 and np.ptp(labs[:, 2]) < 25, face


def test_absent_squares_are_unseen() -> None:
    samples = samples_from_resolver({"1": [255, 255, 255]}, "222")
    assert samples[resolver_square_to_facelet("222")[0]] is not None
    assert sum(s is not None for s in samples) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "expected an object"),
        ('{"55": [1, 2, 3]}', "not a square of a 333"),
        ('{"1": [1, 2]}', r"expected \[R, G, B\]"),
        ('{"1": [1, 2, 300]}', r"expected \[R, G, B\]"),
        ('{"1": [1, 2, NaN]}', r"expected \[R, G, B\]"),
        ('{"1": "red"}', r"expected \[R, G, B\]"),
    ],
)
def test_bad_files_are_refused_with_one_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "samples.json"
    path.write_text(content)
    with pytest.raises(ResolverFormatError, match=message):
        load_resolver_file(path, "333")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ResolverFormatError, match="no such file"):
        load_resolver_file(tmp_path / "absent.json", "333")


def test_pyraminx_is_not_a_resolver_puzzle() -> None:
    with pytest.raises(ResolverFormatError, match="not a cube"):
        resolver_square_to_facelet("pyram")
