"""A full disk: a clear refusal before the attempt, a clear error during it, nothing lost."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from judgecam.device import evidence_files, evidence_log
from judgecam.device.evidence import AttemptInfo, EvidenceSpaceError, EvidenceStore
from judgecam.device.evidence_demo import DemoShape, draw_frame, fill_demo_store
from judgecam.device.evidence_verify import verify_store

TINY = DemoShape(width=48, height=27, frames_per_camera=3, verdict_index=1)
INFO = AttemptInfo("Open2026", "2019KIMA01", "333", 1, 2)


def full_disk(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_attempt_refused_below_the_free_space_floor(tmp_path: Path) -> None:
    free = shutil.disk_usage(tmp_path).free
    with EvidenceStore(tmp_path, min_free_bytes=free + 2**40) as store:
        with pytest.raises(EvidenceSpaceError, match=r"MiB free, below the floor of .* MiB"):
            store.begin_attempt(INFO)
        assert not any((tmp_path / "staging").iterdir())
        assert store.find() == []


def test_disk_full_while_writing_frames_loses_nothing_already_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with EvidenceStore(tmp_path, min_free_bytes=0) as store:
        recorded = fill_demo_store(store, ["2020LEEB01"], shape=TINY, attempts=2)
        log_before = (tmp_path / "log.jsonl").read_bytes()
        writer = store.begin_attempt(INFO)
        writer.add_frame("cam0", 1, draw_frame(TINY, 0, 1))
        monkeypatch.setattr(evidence_files.os, "write", full_disk)
        with pytest.raises(EvidenceSpaceError, match=r"disk full .* nothing already recorded"):
            writer.add_frame("cam0", 2, draw_frame(TINY, 0, 2))
        monkeypatch.undo()
        assert (tmp_path / "log.jsonl").read_bytes() == log_before
        staged = sorted(p.name for p in (writer.staging_dir / "clip/cam0").iterdir())
        assert staged == ["1.jpg"]  # no half-written temp file left behind
        # space freed: the same attempt carries on and commits
        writer.add_frame("cam0", 2, draw_frame(TINY, 0, 2))
        writer.commit({"verdict": "solved"})
        assert [a.attempt_id for a in store.find()][1:] == [
            r.attempt_id for r in reversed(recorded)
        ]
    assert verify_store(tmp_path).ok


def test_disk_full_while_appending_a_record_keeps_the_log_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with EvidenceStore(tmp_path, min_free_bytes=0) as store:
        [record] = fill_demo_store(store, ["2020LEEB01"], shape=TINY, attempts=1)
        log_before = (tmp_path / "log.jsonl").read_bytes()
        real_write = os.write
        calls = {"n": 0}

        def write_half_then_fail(fd: int, data: Any) -> int:
            calls["n"] += 1
            if calls["n"] == 1:  # a short write, then the disk is full
                return real_write(fd, bytes(data)[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(
            evidence_log, "write_all", lambda fd, data: evidence_files.write_all(fd, data)
        )
        monkeypatch.setattr(evidence_files.os, "write", write_half_then_fail)
        with pytest.raises(EvidenceSpaceError, match=r"log\.jsonl"):
            store.append_decision(record.attempt_id, "+2", "chief")
        monkeypatch.undo()
        assert (tmp_path / "log.jsonl").read_bytes() == log_before
        store.append_decision(record.attempt_id, "+2", "chief")
    report = verify_store(tmp_path)
    assert report.ok, report.lines()
    assert report.records == 3


def test_disk_full_at_commit_keeps_the_attempt_staged_for_recovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = EvidenceStore(tmp_path, min_free_bytes=0)
    writer = store.begin_attempt(INFO)
    writer.add_frame("cam0", 1, draw_frame(TINY, 0, 1), verdict_frame=True)
    real_fsync = os.fsync

    def log_fsync_fails(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("log.jsonl"):
            full_disk()
        real_fsync(fd)

    monkeypatch.setattr(evidence_log.os, "fsync", log_fsync_fails)
    with pytest.raises(EvidenceSpaceError):
        writer.commit({"verdict": "solved"})
    monkeypatch.undo()
    store.close()
    assert verify_store(tmp_path).ok
    with EvidenceStore(tmp_path, min_free_bytes=0) as reopened:
        assert reopened.recovery.aborted_attempts == (writer.attempt_id,)
        record = reopened.attempt_record(writer.attempt_id)
        assert record is not None and len(record.files) == 3
    assert verify_store(tmp_path).ok


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Any:
    """A real 3 MiB tmpfs (needs root and mount); skipped where it cannot be mounted."""
    import subprocess

    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_real_full_disk_refuses_clearly_and_keeps_every_committed_attempt(tiny_tmpfs: Path) -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    noisy = rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)  # incompressible frames
    root = tiny_tmpfs / "store"
    committed: list[str] = []
    with EvidenceStore(root, min_free_bytes=0) as store:
        with pytest.raises(EvidenceSpaceError, match="disk full"):
            for attempt in range(1, 200):
                with store.begin_attempt(AttemptInfo("Open2026", "C1", "333", 1, attempt)) as w:
                    for frame in range(10):
                        w.add_frame("cam0", frame, noisy, verdict_frame=frame == 5)
                    committed.append(w.commit({"verdict": "solved"}).attempt_id)
        assert len(committed) >= 2
    report = verify_store(root)
    assert report.ok, report.lines()
    with EvidenceStore(root, min_free_bytes=2**20) as store:  # with a floor: refused up front
        assert set(committed) <= {a.attempt_id for a in store.find(limit=1000)}
        with pytest.raises(EvidenceSpaceError, match="below the floor"):
            store.begin_attempt(AttemptInfo("Open2026", "C1", "333", 1, 999))
    assert verify_store(root).ok
