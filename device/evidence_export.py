"""Export attempts as a self-contained bundle (.zip) that verifies on another machine.

The bundle holds the selected attempts' records and files, the decisions on them, and a chain
proof: every link from the genesis — or from the last signed checkpoint before them — to the
first signed checkpoint after them (or the head). Other competitors' records appear only as
link stubs (seq, prev, hash, content digest), so the proof discloses nothing about them.
"""

from __future__ import annotations

import json
import logging
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from judgecam.device.evidence import EvidenceStore
from judgecam.device.evidence_chain import EvidenceError, Record, canonical_json
from judgecam.device.evidence_files import fsync_dir
from judgecam.device.evidence_verify import (
    BUNDLE_CHAIN,
    BUNDLE_FILES,
    BUNDLE_FORMAT,
    BUNDLE_MANIFEST,
    BUNDLE_PUBLIC_KEY,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExportSummary:
    path: Path
    attempts: tuple[str, ...]
    first_seq: int
    last_seq: int
    files: int
    signed: bool


def select_attempts(
    store: EvidenceStore, *, attempt_id: str | None = None, competitor_id: str | None = None
) -> list[str]:
    if attempt_id:
        if store.attempt_record(attempt_id) is None:
            raise EvidenceError(f"no attempt {attempt_id!r} in {store.root}")
        return [attempt_id]
    if competitor_id:
        found = store.find(competitor_id=competitor_id, limit=10**9)
        if not found:
            raise EvidenceError(f"no attempts of competitor {competitor_id!r} in {store.root}")
        return sorted(a.attempt_id for a in found)
    raise EvidenceError("choose what to export: --attempt ID or --competitor ID")


def export_bundle(store: EvidenceStore, attempt_ids: list[str], output: Path) -> ExportSummary:
    """Write the bundle for `attempt_ids` to `output` (atomically)."""
    records = list(store.records())
    wanted = set(attempt_ids)
    full = {r.seq for r in records if r.attempt_id in wanted and r.kind in ("attempt", "decision")}
    full |= {
        r.seq
        for r in records
        if r.kind == "prune" and wanted & set(r.content.get("attempt_ids", []))
    }
    checkpoints = [r.seq for r in records if r.kind == "checkpoint"]
    first = max([seq for seq in checkpoints if seq < min(full)], default=0)
    last = min([seq for seq in checkpoints if seq > max(full)], default=records[-1].seq)
    full |= {seq for seq in checkpoints if first <= seq <= last}
    full.add(first)
    lines = [_line(record, record.seq in full) for record in records[first : last + 1]]
    manifest = {
        "format": BUNDLE_FORMAT,
        "store_id": store.store_id,
        "attempts": sorted(wanted),
        "records": sorted(full),
        "chain": {"first_seq": first, "last_seq": last},
    }
    keys = [records[seq].content["public_key"] for seq in checkpoints if first <= seq <= last]
    files = 0
    temp = output.with_name(output.name + ".partial")
    with zipfile.ZipFile(temp, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(BUNDLE_MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))
        archive.writestr(BUNDLE_CHAIN, b"".join(lines))
        if keys:
            from judgecam.device.evidence_keys import public_key_pem

            archive.writestr(BUNDLE_PUBLIC_KEY, public_key_pem(str(keys[-1])))
        for seq in sorted(full):
            for path in sorted(records[seq].files):
                source = store.root / path
                if source.is_file():  # pruned files are gone; the prune record says so
                    archive.write(source, BUNDLE_FILES + path)
                    files += 1
    with temp.open("rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(temp, output)
    fsync_dir(output.parent)
    return ExportSummary(
        path=output,
        attempts=tuple(sorted(wanted)),
        first_seq=first,
        last_seq=last,
        files=files,
        signed=bool(keys),
    )


def _line(record: Record, full: bool) -> bytes:
    return record.line() if full else canonical_json(record.stub()) + b"\n"
