"""`judgecam state` and `judgecam verdict` through the real command line entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecam.cli import main


def test_state_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["state", "--puzzle", "333", "R U R' U'"]) == 0
    out = capsys.readouterr().out
    assert "moves from solved: 2 or more moves -> DNF" in out
    assert "       W W O" in out  # the first row of U after R U R' U'


@pytest.mark.parametrize(
    ("puzzle", "moves", "count", "verdict"),
    [
        ("333", "", 0, "solved"),
        ("333", "Rw", 1, "+2"),
        ("3x3x3", "R L'", 2, "DNF"),
        ("222", "R L'", 0, "solved"),
        ("pyraminx", "u", 1, "+2"),
    ],
)
def test_state_json(
    capsys: pytest.CaptureFixture[str], puzzle: str, moves: str, count: int, verdict: str
) -> None:
    assert main(["state", "--puzzle", puzzle, moves, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["moves_from_solved"] == count
    assert result["verdict"] == verdict
    assert result["puzzle"] in {"333", "222", "pyram"}


def test_verdict_json(capsys: pytest.CaptureFixture[str], repo_root: Path) -> None:
    path = repo_root / "examples" / "observation-plus2-333.json"
    assert main(["verdict", "--observation", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["puzzle"], result["verdict"], result["moves_from_solved"]) == ("333", "+2", 1)
    beyond = [p for p in result["pairs"] if p["beyond_limit"]]
    assert [p["label"] for p in beyond] == ["x:M|R"]
    assert beyond[0]["angle_from_solved_deg"] == pytest.approx(50.0)


def test_verdict_text(capsys: pytest.CaptureFixture[str], repo_root: Path) -> None:
    path = repo_root / "examples" / "observation-twisted-corner-333.json"
    assert main(["verdict", "--observation", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3x3x3 Cube: review")
    assert "not solved: a twisted corner at UFR" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["state", "--puzzle", "444", "R"], "unknown puzzle '444'"),
        (["state", "R U X"], "bad move 'X' at position 4"),
        (["verdict", "--observation", "/no/such/file.json"], "no observation file"),
    ],
)
def test_unusable_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_bad_observation_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"puzzle": "333", "facelets": ["white"]}', encoding="utf-8")
    assert main(["verdict", "--observation", str(path)]) == 2
    assert "has 54 facelets" in capsys.readouterr().err
