"""`judgecam colors`: the command line on the robot data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecam.cli import main


def test_json_output_of_a_scrambled_cube(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = shared_data / "color-samples" / "3x3x3-superflip.json"
    assert main(["colors", "--puzzle", "333", "--input", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = json.loads((shared_data / "color-samples" / "expected.json").read_text())
    assert report["kociemba"] == expected["3x3x3-superflip"]
    assert report["puzzle"] == "333"
    assert report["verdict"] == "DNF"
    assert report["moves_from_solved"] == 2
    assert [f["index"] for f in report["facelets"]] == list(range(54))
    assert all(0.0 <= f["confidence"] <= 1.0 for f in report["facelets"])
    assert {f["color"] for f in report["facelets"]} == {
        "white",
        "yellow",
        "red",
        "orange",
        "green",
        "blue",
    }
    assert isinstance(report["reasons"], list)


def test_solved_2x2_text_output(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = shared_data / "color-samples" / "2x2x2-solved-02.json"
    assert main(["colors", "--puzzle", "222", "--input", str(path)]) == 0
    out = capsys.readouterr().out
    assert "DDDDLLLLFFFFUUUURRRRBBBB" in out
    assert "verdict: solved" in out


def test_one_move_from_solved_is_plus_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgecam.puzzle.registry import get_puzzle
    from judgecam.vision.color_resolver import resolver_square_to_facelet

    rgb = {"white": (235, 235, 235), "yellow": (255, 213, 0), "green": (0, 155, 72)}
    rgb |= {"blue": (0, 70, 173), "red": (183, 18, 52), "orange": (255, 88, 0)}
    state = get_puzzle("333").solved_state().apply("R")
    squares = {
        str(square + 1): list(rgb[state.colors[facelet]])
        for square, facelet in enumerate(resolver_square_to_facelet("333"))
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(squares))
    assert main(["colors", "--puzzle", "333", "--input", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "+2"
    assert report["moves_from_solved"] == 1


def test_uncertain_colours_make_the_verdict_review(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = shared_data / "color-samples" / "3x3x3-random-05.json"
    assert main(["colors", "--puzzle", "333", "--input", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "review"
    assert report["moves_from_solved"] == 2
    assert any("below confidence" in reason for reason in report["reasons"])


@pytest.mark.parametrize(
    "arguments",
    [
        ["--puzzle", "333", "--input", "{missing}"],
        ["--puzzle", "333", "--input", "{corrupt}"],
        ["--puzzle", "222", "--input", "{cube333}"],
        ["--puzzle", "333", "--input", "{cube333}", "--scheme", "{missing}"],
        ["--puzzle", "333", "--input", "{cube333}", "--scheme", "builtin:222"],
    ],
    ids=["missing", "corrupt", "wrong-puzzle", "missing-scheme", "scheme-of-another-puzzle"],
)
def test_unusable_input_exits_2_with_one_line(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str], arguments: list[str]
) -> None:
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{not json")
    paths = {
        "missing": str(tmp_path / "absent.json"),
        "corrupt": str(corrupt),
        "cube333": str(shared_data / "color-samples" / "3x3x3-solved-01.json"),
    }
    assert main(["colors", *(a.format(**paths) for a in arguments)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("judgecam colors: ") and error.count("\n") == 1
