"""Altering any byte of any file or record, deleting or inserting a record: detected, named."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from judgecam.device.evidence import EvidenceStore
from judgecam.device.evidence_chain import make_record
from judgecam.device.evidence_demo import DemoShape, fill_demo_store
from judgecam.device.evidence_keys import generate_key, load_public_key_hex
from judgecam.device.evidence_verify import VerifyReport, verify_store

TINY = DemoShape(width=48, height=27, frames_per_camera=3, verdict_index=1)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small store: 2 attempts, a decision, a signed checkpoint. Copied per test."""
    root = tmp_path_factory.mktemp("pristine") / "store"
    key = root.parent / "key.pem"
    generate_key(key)
    with EvidenceStore(root, min_free_bytes=0, signing_key=key) as store:
        records = fill_demo_store(store, ["2019KIMA01", "2020LEEB01"], shape=TINY, attempts=1)
        store.append_decision(records[0].attempt_id, "+2", "chief", "pop")
        store.checkpoint()
    assert verify_store(root).ok
    return root


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(pristine, copy)
    return copy


def evidence_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "attempts").rglob("*") if p.is_file())


def subjects(report: VerifyReport) -> list[str]:
    return [problem.subject for problem in report.problems]


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x01
    path.write_bytes(bytes(data))


def test_pristine_copy_is_intact(store: Path) -> None:
    report = verify_store(store)
    assert report.ok
    assert report.files == len(evidence_files(store))
    assert any("signed checkpoint" in anchor for anchor in report.anchors)


def test_any_byte_of_any_evidence_file_altered_is_named(store: Path) -> None:
    files = evidence_files(store)
    assert len(files) > 20
    rng = random.Random(7)
    for path in files:
        original = path.read_bytes()
        for position in {0, len(original) - 1, rng.randrange(len(original))}:
            flip(path, position)
            report = verify_store(store)
            relative = path.relative_to(store).as_posix()
            assert [(p.kind, p.subject) for p in report.problems] == [("altered-file", relative)]
            path.write_bytes(original)
    assert verify_store(store).ok


def test_any_byte_of_the_log_altered_is_detected_and_its_line_named(store: Path) -> None:
    log = store / "log.jsonl"
    original = log.read_bytes()
    starts = [0]
    for index, byte in enumerate(original):
        if byte == 0x0A:
            starts.append(index + 1)
    rng = random.Random(11)
    positions = sorted(set(rng.sample(range(len(original)), 250)) | {len(original) - 1})
    for position in positions:
        flip(log, position)
        report = verify_store(store)
        assert not report.ok, position
        line = max(i for i, start in enumerate(starts) if start <= position) + 1
        if position == len(original) - 1:  # the final newline: the last record looks torn
            assert "torn-tail" in {p.kind for p in report.problems}
        else:
            assert any(f"line {line}" in subject for subject in subjects(report)), (
                position,
                report.lines(),
            )
        log.write_bytes(original)


def test_altered_record_with_recomputed_hash_breaks_the_next_link(store: Path) -> None:
    """An attacker who re-hashes the record they changed still breaks the chain after it."""
    log = store / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    value = json.loads(lines[1])
    value["content"]["result"]["verdict"] = "DNF"
    forged = make_record(value["seq"], value["prev"], value["content"])
    lines[1] = forged.line()
    log.write_bytes(b"".join(lines))
    report = verify_store(store)
    kinds = {(p.kind, p.subject.split(" (")[0]) for p in report.problems}
    assert ("broken-link", "log.jsonl line 3") in kinds
    assert ("altered-record", "log.jsonl seq 1") in kinds  # the index remembers the old hash


def test_deleting_a_middle_record_is_named(store: Path) -> None:
    log = store / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    del lines[2]
    log.write_bytes(b"".join(lines))
    report = verify_store(store)
    assert any(
        p.kind == "broken-link" and "line 3 (seq 3)" in p.subject for p in report.problems
    ), report.lines()
    # the deleted attempt's files are no longer vouched for by any record
    assert any(p.kind == "unexpected-file" for p in report.problems)


def test_deleting_the_last_record_is_named_via_the_index(store: Path) -> None:
    log = store / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-1]))
    report = verify_store(store)
    assert [(p.kind, p.subject) for p in report.problems] == [
        ("missing-record", f"log.jsonl seq {len(lines) - 1}")
    ]


def test_inserting_a_record_is_named(store: Path) -> None:
    log = store / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    previous = json.loads(lines[1])
    forged = make_record(
        2,
        previous["hash"],
        {
            "kind": "decision",
            "attempt_id": "x",
            "target": previous["hash"],
            "target_seq": 1,
            "decision": "DNF",
            "by": "mallory",
        },
    )
    lines.insert(2, forged.line())
    log.write_bytes(b"".join(lines))
    report = verify_store(store)
    assert any(
        p.kind == "broken-link" and p.subject.startswith("log.jsonl line 4")
        for p in report.problems
    ), report.lines()


def test_missing_and_unexpected_files_are_named(store: Path) -> None:
    victim = evidence_files(store)[5]
    victim.unlink()
    attempt_folder = next((store / "attempts").iterdir())
    (attempt_folder / "planted.jpg").write_bytes(b"\xff\xd8")
    (store / "torn" / "extra.bin").write_bytes(b"?")
    report = verify_store(store)
    assert sorted((p.kind, p.subject) for p in report.problems) == sorted(
        [
            ("missing-file", victim.relative_to(store).as_posix()),
            ("unexpected-file", (attempt_folder / "planted.jpg").relative_to(store).as_posix()),
            ("unexpected-file", "torn/extra.bin"),
        ]
    )


def test_checkpoint_signature_and_trusted_key_are_checked(
    store: Path, pristine: Path, tmp_path: Path
) -> None:
    log = store / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    original = lines[-1]
    value = json.loads(original)
    signature = value["content"]["signature"]
    value["content"]["signature"] = ("0" if signature[0] != "0" else "1") + signature[1:]
    lines[-1] = make_record(value["seq"], value["prev"], value["content"]).line()
    log.write_bytes(b"".join(lines))
    assert "bad-signature" in {p.kind for p in verify_store(store).problems}

    lines[-1] = original
    log.write_bytes(b"".join(lines))
    other = tmp_path / "other.pem"
    generate_key(other)
    report = verify_store(store, trusted_key=load_public_key_hex(other))
    assert [p.kind for p in report.problems] == ["untrusted-key"]
    own = load_public_key_hex(pristine.parent / "key.pem.pub")
    assert verify_store(store, trusted_key=own).ok
