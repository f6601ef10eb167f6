"""Benchmarks: writing one attempt's evidence, verifying a store of 1,000 attempts."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from judgecam.device.evidence import AttemptInfo, EvidenceStore
from judgecam.device.evidence_demo import DemoShape, draw_frame, write_demo_attempt
from judgecam.device.evidence_verify import verify_store

pytestmark = pytest.mark.slow

HD = DemoShape(width=1280, height=720, frames_per_camera=30, verdict_index=20)


@pytest.fixture(scope="session")
def thousand_attempts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,000 attempts with tiny frames (fsyncs skipped while building: only verify is timed)."""
    root = tmp_path_factory.mktemp("bench") / "store"
    tiny = DemoShape(width=16, height=9, frames_per_camera=2, cameras=("cam0",), verdict_index=1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", lambda fd: None)
        with EvidenceStore(root, min_free_bytes=0) as store:
            store.index._db.execute("PRAGMA synchronous=OFF")  # building only, not timed
            for number in range(1000):
                info = AttemptInfo(
                    "Bench", f"C{number % 97:03d}", "333", 1 + number // 500, 1 + number % 5
                )
                write_demo_attempt(store, info, tiny, overlays=False)
    return root


def test_write_one_attempt(benchmark: pytest.FixtureRequest, tmp_path: Path) -> None:
    """2 cameras x 30 frames of 1280x720 (JPEG) + 2 verdict frames (PNG), fsynced."""
    rng = np.random.default_rng(1)
    frames = {
        (camera, index): np.clip(
            draw_frame(HD, c, index).astype(np.int16)
            + rng.normal(0, 3, (720, 1280, 3)).astype(np.int16),
            0,
            255,
        ).astype(np.uint8)
        for c, camera in enumerate(HD.cameras)
        for index in range(HD.frames_per_camera)
    }
    store = EvidenceStore(tmp_path / "store", min_free_bytes=0)
    count = iter(range(1, 10**6))

    def write() -> None:
        info = AttemptInfo("Bench", "2019KIMA01", "333", 1, next(count))
        with store.begin_attempt(info) as writer:
            for (camera, index), image in frames.items():
                writer.add_frame(
                    camera,
                    10**9 + index * 33_333_333,
                    image,
                    verdict_frame=index == HD.verdict_index,
                )
            writer.commit({"verdict": "solved"})

    benchmark.pedantic(write, rounds=3, iterations=1)  # type: ignore[attr-defined]
    store.close()
    report = verify_store(tmp_path / "store")
    written = next(count) - 1  # 3 rounds, or 1 with --benchmark-disable
    assert report.ok and report.files == written * (60 + 2 + 1)  # + attempt.json


def test_verify_thousand_attempts(
    benchmark: pytest.FixtureRequest, thousand_attempts: Path
) -> None:
    report = benchmark.pedantic(
        verify_store,
        args=(thousand_attempts,),  # type: ignore[attr-defined]
        rounds=3,
        iterations=1,
    )
    assert report.ok
    assert report.records == 1001 and report.files == 1000 * 5  # json, 2 clips, verdict, notes
