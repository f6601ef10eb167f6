"""`judgecam station`: the demo, a replayed session, a live config on a replay camera, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from judgecam.cli import main
from judgecam.device.evidence import EvidenceStore
from judgecam.device.session import load_session
from judgecam.device.session_synth import SynthAttempt, SynthTiming, build_session, coded_view
from judgecam.device.sources import Frame
from judgecam.device.station_cli import DEMO_SESSION
from judgecam.device.station_judge import judge_for_session


@pytest.mark.slow
def test_demo_plays_to_its_end_and_writes_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence = tmp_path / "evidence"
    assert main(["station", "--demo", "--headless", "--evidence", str(evidence)]) == 0
    out = capsys.readouterr().out
    session = json.loads((DEMO_SESSION / "session.json").read_text())
    truths = [a["expected_verdict"] for a in session["attempts"]]
    assert [
        line.split("(ground truth: ")[1].rstrip(")")
        for line in out.splitlines()
        if "ground truth" in line
    ] == truths
    # A review's cause is said first and as such; its other reasons are notes (DEMO01's samples
    # on parts placed by the other view's angles), never a cause after a note.
    blocks = out.split("\n2026DEMO")[1:]
    reviews = [block.splitlines() for block in blocks if "camera review" in block.splitlines()[0]]
    assert reviews
    for _, *rest in reviews:
        labels = [
            line.split(":")[0].strip()
            for line in rest
            if line.startswith(("    why review: ", "    note: "))
        ]
        assert labels[0] == "why review"
        assert labels == sorted(labels, key=lambda label: label != "why review")
    assert any(line.startswith("    note: ") for line in out.splitlines())
    with EvidenceStore(evidence) as store:
        records = [r for r in store.records() if r.kind == "attempt"]
        assert [r.content["info"]["competitor_id"] for r in records] == [
            f"2026DEMO{i:02d}" for i in range(1, 5)
        ]
        for record in records:
            assert record.content["status"] == "committed"
            assert record.content["result"]["verdict"] in ("solved", "+2", "DNF", "review")
            assert record.attempt_id is not None
            (decision,) = store.decisions(record.attempt_id)
            assert decision.content["decision"].startswith("confirm ")
            # The lossless verdict frames in the evidence, judged again by vision, give the
            # verdict the station recorded: the station judged exactly what it kept.
            views = [f for f in record.content["frames"] if f["verdict"]]
            assert sorted(f["camera"] for f in views) == ["cam0", "cam1"]
            frames = []
            for view in views:
                path = store.attempt_file(record.attempt_id, view["verdict"])
                assert path is not None
                image = cv2.imread(str(path), cv2.IMREAD_COLOR)
                frames.append(Frame(view["camera"], 0, view["timestamp_ns"], image))
            again = judge_for_session(load_session(DEMO_SESSION), draw=False)
            assert again.judge(frames, "333").verdict == record.content["result"]["verdict"]


def test_demo_session_is_small_and_built_from_the_corpus() -> None:
    size = sum(p.stat().st_size for p in DEMO_SESSION.rglob("*") if p.is_file())
    assert size < 3_000_000
    sources = (DEMO_SESSION / "SOURCES.txt").read_text()
    assert "tests/images" in sources
    session = json.loads((DEMO_SESSION / "session.json").read_text())
    assert [a["expected_verdict"] for a in session["attempts"]][:3] == ["solved", "+2", "DNF"]
    assert set(session["cameras"]) == {"cam0", "cam1"}


def test_replay_of_a_recorded_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    timing = SynthTiming(idle_frames=1, turning_frames=3, trigger_after=1, rest_frames=7)
    attempt = SynthAttempt({"cam0": coded_view("solved")}, "2026REPL01", expected_verdict="solved")
    build_session(tmp_path / "s", [attempt], timing)
    code = main(
        [
            "station",
            "--replay",
            str(tmp_path / "s"),
            "--headless",
            "--evidence",
            str(tmp_path / "ev"),
            "--competition",
            "Replay Cup",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    # Vision sees no puzzle in a painted square: review, with the reason kept in the evidence.
    assert "2026REPL01 333 r1 a1: camera review" in out
    with EvidenceStore(tmp_path / "ev") as store:
        (record,) = [r for r in store.records() if r.kind == "attempt"]
        assert record.content["info"]["competition"] == "Replay Cup"
        assert record.content["result"]["reasons"]


def test_live_config_with_a_replay_camera(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    timing = SynthTiming(idle_frames=1, turning_frames=2, trigger_after=1, rest_frames=3)
    build_session(tmp_path / "s", [SynthAttempt({"top": coded_view("DNF")}, "X")], timing)
    config = tmp_path / "station.toml"
    config.write_text(f"""
[station]
name = "Table 9"
evidence_dir = "{tmp_path / "ev"}"
min_free_space_mb = 1

[trigger]
kind = "keyboard"

[[cameras]]
name = "top"
backend = "replay"
source = "{tmp_path / "s"}"
resolution = [320, 240]
analysis_resolution = [160, 120]
""")
    # No key is pressed: the recording plays to its end with no attempt, and the station stops.
    assert main(["station", "--config", str(config), "--headless"]) == 0
    assert (tmp_path / "ev" / "log.jsonl").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--replay", "/no/such/session"], "is not a session"),
        (["--config", "/no/such/station.toml"], "station.toml"),
    ],
)
def test_unusable_input_exits_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["station", *argv, "--headless"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith("judgecam station: ")


def test_picamera2_missing_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], repo_root: Path
) -> None:
    example = repo_root / "calibration" / "example-station.toml"
    text = example.read_text().replace('"/tmp/judgecam-evidence"', f'"{tmp_path / "ev"}"')
    config = tmp_path / "pi.toml"
    config.write_text(text)
    assert main(["station", "--config", str(config), "--headless"]) == 2
    assert "picamera2" in capsys.readouterr().err
