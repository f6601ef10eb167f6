"""Export bundles: self-contained, verifiable elsewhere, disclosing no other competitor's data."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from judgecam.device.evidence import EvidenceError, EvidenceStore
from judgecam.device.evidence_demo import DemoShape, fill_demo_store
from judgecam.device.evidence_export import export_bundle, select_attempts
from judgecam.device.evidence_keys import generate_key, load_public_key_hex
from judgecam.device.evidence_verify import verify_bundle

TINY = DemoShape(width=48, height=27, frames_per_camera=3, verdict_index=1)


@pytest.fixture
def signed_store(tmp_path: Path) -> tuple[Path, Path]:
    """Round 1 (checkpointed), round 2 (checkpointed), a decision on KIM's round-2 attempt."""
    root, key = tmp_path / "store", tmp_path / "key.pem"
    generate_key(key)
    with EvidenceStore(root, min_free_bytes=0, signing_key=key) as store:
        fill_demo_store(store, ["2019KIMA01", "2020LEEB01"], shape=TINY, rounds=1, attempts=1)
        store.checkpoint()
        round_two = fill_demo_store(
            store,
            ["2019KIMA01", "2020LEEB01"],
            shape=TINY,
            rounds=1,
            attempts=1,
            competition="Round2",
        )
        store.append_decision(round_two[0].attempt_id, "+2", "chief", "pop")
        store.checkpoint()
    return root, key


def bundle_for(root: Path, out: Path, **select: str) -> Path:
    with EvidenceStore(root, min_free_bytes=0) as store:
        export_bundle(store, select_attempts(store, **select), out)
    return out


def test_bundle_verifies_on_another_machine(
    signed_store: tuple[Path, Path], tmp_path: Path
) -> None:
    root, key = signed_store
    bundle = bundle_for(root, tmp_path / "kim.zip", competitor_id="2019KIMA01")
    elsewhere = tmp_path / "elsewhere" / "kim.zip"
    elsewhere.parent.mkdir()
    shutil.copy(bundle, elsewhere)
    shutil.rmtree(root)  # nothing of the store is needed
    report = verify_bundle(elsewhere, trusted_key=load_public_key_hex(key.with_name("key.pem.pub")))
    assert report.ok, report.lines()
    # per attempt: attempt.json, notes.txt, 3x2 clip frames, 2 verdict frames, 3x2 overlays
    assert report.files == 2 * 16
    assert any("signed checkpoint" in anchor and "trusted" in anchor for anchor in report.anchors)
    with zipfile.ZipFile(elsewhere) as archive:
        names = set(archive.namelist())
        chain = archive.read("chain.jsonl")
    assert {"manifest.json", "chain.jsonl", "public_key.pem"} <= names
    assert b"2020LEEB01" not in chain  # LEE's records are link stubs only
    assert not any("LEEB" in name for name in names)


def test_bundle_of_one_attempt_starts_at_the_checkpoint_before_it(
    signed_store: tuple[Path, Path], tmp_path: Path
) -> None:
    root, _key = signed_store
    with EvidenceStore(root, min_free_bytes=0) as store:
        [attempt] = store.find(competitor_id="2019KIMA01", competition="Round2")
    bundle = bundle_for(root, tmp_path / "one.zip", attempt_id=attempt.attempt_id)
    with zipfile.ZipFile(bundle) as archive:
        first_line = archive.read("chain.jsonl").splitlines()[0]
    assert b'"kind":"checkpoint"' in first_line
    report = verify_bundle(bundle)
    assert report.ok, report.lines()
    assert report.records == 5  # checkpoint, 2 attempts, decision, checkpoint


def rewrite_zip(source: Path, target: Path, change: dict[str, bytes | None]) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            if name in change:
                if change[name] is not None:
                    new.writestr(name, change[name])  # type: ignore[arg-type]
            else:
                new.writestr(name, old.read(name))
        for name, data in change.items():
            if name not in old.namelist() and data is not None:
                new.writestr(name, data)


def test_tampered_bundles_name_the_problem(signed_store: tuple[Path, Path], tmp_path: Path) -> None:
    root, _key = signed_store
    bundle = bundle_for(root, tmp_path / "kim.zip", competitor_id="2019KIMA01")
    with zipfile.ZipFile(bundle) as archive:
        frame = next(n for n in archive.namelist() if n.endswith(".jpg"))
        data = archive.read(frame)
        chain = archive.read("chain.jsonl")
    relative = frame.removeprefix("files/")

    cases: list[tuple[dict[str, bytes | None], tuple[str, str]]] = [
        ({frame: data[:-1] + bytes([data[-1] ^ 1])}, ("altered-file", relative)),
        ({frame: None}, ("missing-file", relative)),
        ({"files/attempts/x/planted.png": b"x"}, ("unexpected-file", "attempts/x/planted.png")),
        ({"files/../../escape.txt": b"x"}, ("unexpected-file", "files/../../escape.txt")),
        (
            {"chain.jsonl": chain.replace(b'"decision":"+2"', b'"decision":"DNF"')},
            ("altered-record", "chain.jsonl line"),
        ),
    ]
    for number, (change, (kind, subject)) in enumerate(cases):
        tampered = tmp_path / f"tampered{number}.zip"
        rewrite_zip(bundle, tampered, change)
        report = verify_bundle(tampered)
        assert any(p.kind == kind and p.subject.startswith(subject) for p in report.problems), (
            kind,
            report.lines(),
        )


def test_export_needs_a_known_selection(signed_store: tuple[Path, Path]) -> None:
    root, _key = signed_store
    with EvidenceStore(root, min_free_bytes=0) as store:
        with pytest.raises(EvidenceError, match="no attempts of competitor"):
            select_attempts(store, competitor_id="nobody")
        with pytest.raises(EvidenceError, match="--attempt ID or --competitor ID"):
            select_attempts(store)


def test_unsigned_store_bundle_says_it_is_not_anchored(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with EvidenceStore(root, min_free_bytes=0) as store:
        fill_demo_store(store, ["2019KIMA01"], shape=TINY, attempts=1)
    bundle = bundle_for(root, tmp_path / "b.zip", competitor_id="2019KIMA01")
    report = verify_bundle(bundle)
    assert report.ok
    assert any("no signed checkpoint" in note for note in report.notices)
