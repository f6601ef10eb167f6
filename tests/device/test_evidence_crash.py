"""Crash safety: torn final records, interrupted commits, and a writer killed with SIGKILL."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgecam.device.evidence import AttemptInfo, EvidenceStore
from judgecam.device.evidence_demo import DemoShape, draw_frame, fill_demo_store
from judgecam.device.evidence_verify import verify_store

TINY = DemoShape(width=48, height=27, frames_per_camera=3, verdict_index=1)


def open_store(root: Path) -> EvidenceStore:
    return EvidenceStore(root, min_free_bytes=0)


def test_torn_final_record_is_set_aside_reported_and_recorded(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        [record] = fill_demo_store(store, ["2019KIMA01"], shape=TINY, attempts=1)
        decision_line = store.append_decision(record.attempt_id, "+2", "chief").line()
    log = tmp_path / "log.jsonl"
    torn = decision_line[: len(decision_line) // 2]
    with log.open("ab") as handle:
        handle.write(torn)
    report = verify_store(tmp_path)
    assert [(p.kind, p.subject) for p in report.problems] == [("torn-tail", "log.jsonl line 4")]

    with open_store(tmp_path) as store:
        recovery = store.recovery
        assert recovery.torn_tail is not None and recovery.torn_bytes == len(torn)
        assert recovery.torn_tail.read_bytes() == torn  # set aside, never deleted
        assert "torn final record" in recovery.lines()[0]
        last = list(store.records())[-1]
        assert last.kind == "recovery"
        assert list(last.files) == [f"torn/{recovery.torn_tail.name}"]
    assert verify_store(tmp_path).ok
    with open_store(tmp_path) as store:  # recovery happens once
        assert store.recovery.clean


def test_nul_filled_final_line_counts_as_torn(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        fill_demo_store(store, ["2019KIMA01"], shape=TINY, attempts=1)
    with (tmp_path / "log.jsonl").open("ab") as handle:
        handle.write(b"\x00" * 300 + b"\n")
    assert [p.kind for p in verify_store(tmp_path).problems] == ["torn-tail"]
    with open_store(tmp_path) as store:
        assert store.recovery.torn_bytes == 301
    assert verify_store(tmp_path).ok


def test_uncommitted_attempt_is_recorded_as_aborted_on_next_open(tmp_path: Path) -> None:
    info = AttemptInfo("Open2026", "2019KIMA01", "333", 1, 4)
    store = open_store(tmp_path)
    writer = store.begin_attempt(info)
    writer.add_frame("cam0", 77, draw_frame(TINY, 0, 0), verdict_frame=True)
    store.close()  # the station dies before commit
    report = verify_store(tmp_path)
    assert report.ok and any("uncommitted" in note for note in report.notices)

    with open_store(tmp_path) as store:
        assert store.recovery.aborted_attempts == (writer.attempt_id,)
        [summary] = store.find(competitor_id="2019KIMA01", attempt=4)
        assert summary.status == "aborted"
        record = store.attempt_record(writer.attempt_id)
        assert record is not None
        assert [f["timestamp_ns"] for f in record.content["frames"]] == [77]
    assert verify_store(tmp_path).ok


def test_commit_interrupted_after_its_record_is_finished_on_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = AttemptInfo("Open2026", "2019KIMA01", "333", 1, 1)
    store = open_store(tmp_path)
    writer = store.begin_attempt(info)
    writer.add_frame("cam0", 1, draw_frame(TINY, 0, 0))

    def power_cut(self: EvidenceStore, attempt_id: str) -> None:
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(EvidenceStore, "_move_committed", power_cut)
    with pytest.raises(KeyboardInterrupt):
        writer.commit({"verdict": "solved"})
    monkeypatch.undo()
    store.close()
    report = verify_store(tmp_path)
    assert report.ok, report.lines()
    assert any("still in staging" in note for note in report.notices)
    with open_store(tmp_path) as store:
        assert store.recovery.completed_commits == (writer.attempt_id,)
    assert (tmp_path / "attempts" / writer.attempt_id / "clip/cam0/1.jpg").is_file()
    assert verify_store(tmp_path).ok


CHILD = """
import sys
from pathlib import Path
from judgecam.device.evidence import AttemptInfo, EvidenceStore
from judgecam.device.evidence_demo import DemoShape, write_demo_attempt
shape = DemoShape(width=48, height=27, frames_per_camera=3, verdict_index=1)
store = EvidenceStore(Path(sys.argv[1]), min_free_bytes=0)
print("ready", flush=True)
number = 0
while True:
    number += 1
    record = write_demo_attempt(store, AttemptInfo("Kill", f"C{number % 3}", "333", 1,
                                                   number), shape)
    store.append_decision(record.attempt_id, "+2", "chief", "x" * (number % 50))
"""


@pytest.mark.slow
def test_writer_killed_at_random_points_never_leaves_a_broken_store(tmp_path: Path) -> None:
    rng = random.Random(2026)
    environment = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    torn_reported = 0
    for kill in range(15):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE, env=environment
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"ready", f"kill {kill}: child did not start"
        time.sleep(rng.uniform(0.0, 0.25))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        report = verify_store(tmp_path)
        assert {p.kind for p in report.problems} <= {"torn-tail"}, (kill, report.lines())
        with open_store(tmp_path) as store:
            torn_reported += store.recovery.torn_tail is not None
            assert (store.recovery.torn_tail is not None) == (not report.ok)
        after = verify_store(tmp_path)
        assert after.ok, (kill, after.lines())
    with open_store(tmp_path) as store:
        assert len(store.find()) >= 15


def test_opening_the_store_leaves_another_process_attempt_alone(tmp_path: Path) -> None:
    """The review page starting while the station writes an attempt must not 'recover' it."""
    info = AttemptInfo("Open2026", "2019KIMA01", "333", 1, 1)
    with open_store(tmp_path) as station:
        writer = station.begin_attempt(info)
        writer.add_frame("cam0", 1, draw_frame(TINY, 0, 0))
        with open_store(tmp_path) as review:  # separate lock descriptions, like a process
            assert review.recovery.clean
            assert verify_store(tmp_path).ok
        writer.add_frame("cam0", 2, draw_frame(TINY, 0, 1))
        record = writer.commit({"verdict": "solved"})
        assert record.content["status"] == "committed"
        assert not any((tmp_path / "staging").iterdir())
    report = verify_store(tmp_path)
    assert report.ok and not report.notices, report.lines()
