"""`judgecam evidence ...` and `judgecam review` on the command line: exit codes and messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecam.cli import main
from judgecam.device.evidence import EvidenceStore
from judgecam.device.evidence_demo import DemoShape, fill_demo_store
from judgecam.device.evidence_verify import verify_store

TINY = DemoShape(width=48, height=27, frames_per_camera=3, verdict_index=1)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    with EvidenceStore(root, min_free_bytes=0) as opened:
        fill_demo_store(opened, ["2019KIMA01", "2020LEEB01"], shape=TINY, attempts=1)
        fill_demo_store(opened, ["2019KIMA01"], shape=TINY, attempts=1, competition="Other")
    return root


def test_verify_exit_codes_and_named_problems(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evidence", "verify", str(store)]) == 0
    assert "INTACT" in capsys.readouterr().out
    victim = sorted((store / "attempts").rglob("*.png"))[0]
    victim.write_bytes(victim.read_bytes() + b"!")
    assert main(["evidence", "verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert f"ALTERED-FILE {victim.relative_to(store).as_posix()}" in out
    assert "NOT INTACT (1 problems)" in out
    assert main(["evidence", "verify", str(store.parent / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_keygen_checkpoint_export_verify(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "round.key"
    assert main(["evidence", "keygen", str(key)]) == 0
    assert (key.stat().st_mode & 0o777) == 0o600
    assert main(["evidence", "keygen", str(key)]) == 2  # never overwritten
    capsys.readouterr()
    assert main(["evidence", "verify", str(store), "--public-key", f"{key}.pub"]) == 1
    assert "UNSIGNED" in capsys.readouterr().out  # nothing signed by that key yet
    assert main(["evidence", "checkpoint", str(store), "--key", str(key)]) == 0
    bundle = tmp_path / "kim.zip"
    assert (
        main(["evidence", "export", str(store), "--competitor", "2019KIMA01", "-o", str(bundle)])
        == 0
    )
    assert "exported 2 attempts" in capsys.readouterr().out
    assert main(["evidence", "verify", str(bundle), "--public-key", f"{key}.pub"]) == 0
    assert "trusted" in capsys.readouterr().out
    with EvidenceStore(store, min_free_bytes=0) as opened:
        opened.mark_final("DemoOpen2026")
    assert main(["evidence", "verify", str(store), "--public-key", f"{key}.pub"]) == 0
    assert "after the last signed checkpoint" in capsys.readouterr().out
    assert main(["evidence", "export", str(store), "--attempt", "nope", "-o", str(bundle)]) == 2


def test_prune_only_a_final_competition(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evidence", "prune", str(store), "--competition", "DemoOpen2026", "--yes"]) == 2
    assert "not marked final" in capsys.readouterr().err
    assert main(["evidence", "finalize", str(store), "--competition", "DemoOpen2026"]) == 0
    assert main(["evidence", "prune", str(store), "--competition", "DemoOpen2026"]) == 0
    assert "nothing deleted" in capsys.readouterr().out
    before = len(list((store / "attempts").iterdir()))
    assert main(["evidence", "prune", str(store), "--competition", "DemoOpen2026", "--yes"]) == 0
    assert len(list((store / "attempts").iterdir())) == before - 2  # "Other" is kept
    report = verify_store(store)
    assert report.ok, report.lines()  # pruned files are expected to be gone, records remain
    with EvidenceStore(store, min_free_bytes=0) as opened:
        assert {a.pruned for a in opened.find(competition="DemoOpen2026")} == {True}
        assert [r.kind for r in opened.records()][-2:] == ["competition-final", "prune"]


def test_reindex_and_not_a_store(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evidence", "reindex", str(store)]) == 0
    assert "index rebuilt from 4 records" in capsys.readouterr().out
    assert main(["evidence", "reindex", str(tmp_path)]) == 2
    assert "not an evidence store" in capsys.readouterr().err


def test_review_on_the_lan_needs_a_password(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["review", str(store), "--host", "0.0.0.0"]) == 2
    assert "needs --password-file" in capsys.readouterr().err
    short = tmp_path / "pw"
    short.write_text("abc\n")
    assert main(["review", str(store), "--host", "0.0.0.0", "--password-file", str(short)]) == 2
    assert "shorter than 8" in capsys.readouterr().err


def test_demo_fills_only_a_new_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "demo"
    assert main(["evidence", "demo", str(target), "--competitors", "1"]) == 0
    assert "4 synthetic attempts" in capsys.readouterr().out
    assert verify_store(target).ok
    assert main(["evidence", "demo", str(target)]) == 2
    assert "not empty" in capsys.readouterr().err
