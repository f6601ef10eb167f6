"""The evidence store: what an attempt record holds, search, decisions, recovery of the index."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from judgecam import __version__
from judgecam.device.evidence import (
    AttemptInfo,
    EvidenceCorruptError,
    EvidenceError,
    EvidenceStore,
)
from judgecam.device.evidence_chain import canonical_json, link_hash, sha256_hex
from judgecam.device.evidence_demo import DemoShape, draw_frame, fill_demo_store
from judgecam.device.evidence_verify import verify_store

TINY = DemoShape(width=64, height=36, frames_per_camera=4, verdict_index=2)


def open_store(root: Path) -> EvidenceStore:
    return EvidenceStore(root, min_free_bytes=0)


def test_attempt_record_vouches_for_every_file(tmp_path: Path) -> None:
    info = AttemptInfo("Open2026", "2019KIMA01", "333", 2, 3)
    image = draw_frame(TINY, 0, 0)
    with open_store(tmp_path) as store, store.begin_attempt(info) as writer:
        writer.add_frame("cam0", 1_000, image)
        writer.add_frame("cam0", 2_000, image, verdict_frame=True)
        writer.add_overlay("cam0", 2_000, np.zeros((36, 64, 4), np.uint8))
        writer.add_file("notes.txt", b"judge saw a pop")
        record = writer.commit({"verdict": "+2", "measurements": {"angle": np.float64(7.5)}})

    content = record.content
    assert content["kind"] == "attempt" and content["status"] == "committed"
    assert content["info"] == {
        "competition": "Open2026",
        "competitor_id": "2019KIMA01",
        "event": "333",
        "round": 2,
        "attempt": 3,
        "station": "station-1",
    }
    assert content["software"] == {"judgecam": __version__}
    assert content["result"] == {"verdict": "+2", "measurements": {"angle": 7.5}}
    prefix = f"attempts/{record.attempt_id}/"
    assert sorted(content["files"]) == sorted(
        prefix + name
        for name in (
            "attempt.json",
            "clip/cam0/1000.jpg",
            "clip/cam0/2000.jpg",
            "verdict/cam0/2000.png",
            "overlay/cam0/2000.png",
            "notes.txt",
        )
    )
    for path, claim in content["files"].items():
        data = (tmp_path / path).read_bytes()
        assert claim == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    assert content["frames"] == [
        {
            "camera": "cam0",
            "timestamp_ns": 1000,
            "clip": "clip/cam0/1000.jpg",
            "verdict": None,
            "overlay": None,
        },
        {
            "camera": "cam0",
            "timestamp_ns": 2000,
            "clip": "clip/cam0/2000.jpg",
            "verdict": "verdict/cam0/2000.png",
            "overlay": "overlay/cam0/2000.png",
        },
    ]
    import cv2

    lossless = cv2.imread(str(tmp_path / prefix / "verdict/cam0/2000.png"))
    np.testing.assert_array_equal(lossless, image)
    assert not any((tmp_path / "staging").iterdir())


def test_log_lines_are_canonical_and_chained(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        fill_demo_store(store, ["2020LEEB01"], shape=TINY, attempts=2)
    lines = (tmp_path / "log.jsonl").read_bytes().splitlines()
    previous = "0" * 64
    for seq, line in enumerate(lines):
        value = json.loads(line)
        assert canonical_json(value) == line
        assert value["seq"] == seq and value["prev"] == previous
        digest = sha256_hex(canonical_json(value["content"]))
        assert value["hash"] == link_hash(seq, previous, digest)
        previous = value["hash"]
    assert json.loads(lines[0])["content"]["kind"] == "store-created"


def test_find_filters_by_competitor_event_round_and_attempt(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        fill_demo_store(store, ["2019KIMA01", "2020LEEB01"], shape=TINY, rounds=2, attempts=2)
        fill_demo_store(store, ["2019KIMA01"], event="222", shape=TINY, attempts=1)
        assert len(store.find()) == 9
        kim = store.find(competitor_id="2019KIMA01")
        assert len(kim) == 5 and {a.competitor_id for a in kim} == {"2019KIMA01"}
        assert [
            (a.event, a.round, a.attempt)
            for a in store.find(competitor_id="2019KIMA01", event="333", round=2)
        ] == [("333", 2, 2), ("333", 2, 1)]
        assert len(store.find(event="222")) == 1
        assert store.find(competitor_id="2019KIMA01", round=1, attempt=2)[0].attempt == 2
        assert store.find(competitor_id="nobody") == []


def test_decisions_are_new_records_pointing_at_the_attempt(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        [attempt] = fill_demo_store(store, ["2019KIMA01"], shape=TINY, attempts=1)
        first = store.append_decision(attempt.attempt_id, "+2", "Chief Park", "touched after stop")
        second = store.append_decision(attempt.attempt_id, "solved", "Chief Park", "replay")
        assert first.content["target"] == attempt.hash
        assert second.content["supersedes"] == first.hash
        assert [d.content["decision"] for d in store.decisions(attempt.attempt_id)] == [
            "+2",
            "solved",
        ]
        [summary] = store.find()
        assert (summary.decision, summary.decision_by) == ("solved", "Chief Park")
        assert store.attempt_record(attempt.attempt_id) == attempt  # never rewritten
        with pytest.raises(EvidenceError, match="no attempt"):
            store.append_decision("20260101T000000Z-nope", "DNF", "x")
    assert verify_store(tmp_path).ok


def test_exception_inside_writer_records_an_aborted_attempt(tmp_path: Path) -> None:
    info = AttemptInfo("Open2026", "2019KIMA01", "333", 1, 1)
    with open_store(tmp_path) as store:
        with (
            pytest.raises(RuntimeError, match="camera unplugged"),
            store.begin_attempt(info) as writer,
        ):
            writer.add_frame("cam0", 5, draw_frame(TINY, 0, 0))
            raise RuntimeError("camera unplugged")
        [summary] = store.find()
        assert summary.status == "aborted"
        record = store.attempt_record(summary.attempt_id)
        assert record is not None
        assert record.content["abort_reason"] == "RuntimeError: camera unplugged"
        assert any(path.endswith("clip/cam0/5.jpg") for path in record.files)
    assert verify_store(tmp_path).ok


@pytest.mark.parametrize(
    "name", ["../escape.txt", "/etc/passwd", "a/../../b", ".hidden", "", "a//b", "clip\\x"]
)
def test_unsafe_file_names_are_refused(tmp_path: Path, name: str) -> None:
    info = AttemptInfo("Open2026", "2019KIMA01", "333", 1, 1)
    with open_store(tmp_path) as store, store.begin_attempt(info) as writer:
        with pytest.raises(EvidenceError, match="unsafe"):
            writer.add_file(name, b"x")
        writer.commit({"verdict": "solved"})
    assert not (tmp_path / "escape.txt").exists()


def test_attempt_file_serves_only_recorded_files(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        [record] = fill_demo_store(store, ["2019KIMA01"], shape=TINY, attempts=1)
        attempt_id = record.attempt_id
        assert store.attempt_file(attempt_id, "notes.txt") == (
            tmp_path / "attempts" / attempt_id / "notes.txt"
        )
        for name in ("../../log.jsonl", "../" + attempt_id + "/notes.txt", "missing.txt"):
            assert store.attempt_file(attempt_id, name) is None
        assert store.attempt_file("../attempts", "notes.txt") is None


def test_two_processes_appending_keep_one_chain(tmp_path: Path) -> None:
    """The station and the review page write to one store: the flock keeps the chain linear."""
    with open_store(tmp_path) as station, open_store(tmp_path) as review:
        [first] = fill_demo_store(station, ["2019KIMA01"], shape=TINY, attempts=1)
        review.append_decision(first.attempt_id, "+2", "chief")
        fill_demo_store(station, ["2020LEEB01"], shape=TINY, attempts=1)
        review.append_decision(first.attempt_id, "solved", "chief")
        assert len(station.find()) == 2
        assert [r.seq for r in station.records()] == list(range(5))
    report = verify_store(tmp_path)
    assert report.ok, report.lines()
    assert report.records == 5


def test_index_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        fill_demo_store(store, ["2019KIMA01", "2020LEEB01"], shape=TINY, attempts=2)
        before = store.find()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'index.sqlite'}{suffix}").unlink(missing_ok=True)
    with open_store(tmp_path) as store:
        assert store.recovery.index_rebuilt
        assert store.find() == before
    with EvidenceStore(tmp_path, min_free_bytes=0, rebuild_index=True) as store:
        assert store.find() == before


def test_index_ahead_of_the_log_means_a_record_was_cut(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        fill_demo_store(store, ["2019KIMA01"], shape=TINY, attempts=2)
    log = tmp_path / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-1]))
    with pytest.raises(EvidenceCorruptError, match="seq 2"):
        open_store(tmp_path)


def test_attempt_info_is_validated() -> None:
    with pytest.raises(EvidenceError, match="round"):
        AttemptInfo("Open2026", "2019KIMA01", "333", 0, 1)
    with pytest.raises(EvidenceError, match="competitor_id"):
        AttemptInfo("Open2026", " ", "333", 1, 1)


def test_decisions_from_many_threads_keep_one_chain(tmp_path: Path) -> None:
    """waitress serves the review page from several threads sharing one store."""
    from concurrent.futures import ThreadPoolExecutor

    with open_store(tmp_path) as store:
        [record] = fill_demo_store(store, ["2019KIMA01"], shape=TINY, attempts=1)

        def decide(number: int) -> int:
            store.find(competitor_id="2019KIMA01")
            return store.append_decision(record.attempt_id, "+2", f"judge {number}").seq

        with ThreadPoolExecutor(max_workers=8) as pool:
            seqs = sorted(pool.map(decide, range(24)))
        assert seqs == list(range(2, 26))
        assert len(store.decisions(record.attempt_id)) == 24
    report = verify_store(tmp_path)
    assert report.ok, report.lines()
