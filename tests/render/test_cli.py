"""`judgecam render ...`: bad input exits 2 with one line; turns parse; a real render."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecam.cli import UsageError, main
from judgecam.render.cli import parse_turns


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["render", "one", "--puzzle", "444", "--out", "x"], "unknown puzzle"),
        (["render", "one", "--puzzle", "333", "--moves", "Q", "--out", "x"], "bad --moves"),
        (["render", "one", "--puzzle", "333", "--turn", "y:Q=3", "--out", "x"], "has parts"),
        (["render", "one", "--puzzle", "333", "--scheme", "neon", "--out", "x"], "scheme"),
        (
            [
                "render",
                "one",
                "--puzzle",
                "333",
                "--turn",
                "y:U=30",
                "--turn",
                "x:R=20",
                "--out",
                "x",
            ],
            "only one axis",
        ),
        (["render", "corpus", "--count", "0", "--out", "x"], "at least 1"),
        (["render", "corpus", "--resolution-scale", "0", "--out", "x"], "between 0.25 and 4.0"),
    ],
)
def test_unusable_input_exits_2_with_one_line(argv, message, capsys, tmp_path: Path) -> None:
    argv = [a if a != "x" else str(tmp_path / "out") for a in argv]
    if "--moves" in argv:
        pytest.importorskip("moderngl")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_parse_turns_adds_angles_per_part() -> None:
    turns = parse_turns("333", ["y:U=30", "y:U=15", "y:D=-5"])
    assert turns == {"y": (-5.0, 0.0, 45.0)}
    assert parse_turns("pyram", ["U:tip=70"]) == {"U": (0.0, 0.0, 70.0)}
    with pytest.raises(UsageError):
        parse_turns("333", ["y-U=30"])


@pytest.mark.render
def test_render_one_writes_images_and_truth(tmp_path: Path, capsys) -> None:
    pytest.importorskip("moderngl")
    code = main(
        [
            "render",
            "one",
            "--puzzle",
            "pyram",
            "--moves",
            "U",
            "--turn",
            "L:tip=70",
            "--rig",
            "top",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    truth = json.loads((tmp_path / "one.json").read_text())
    assert truth["verdict"] == "DNF"  # U, and the l tip past the 60-degree limit
    assert (tmp_path / truth["views"][0]["image"]).is_file()
    assert "DNF" in capsys.readouterr().out
