"""The tamper-evident evidence store of a judge station.

    root/
      log.jsonl          append-only records, each chained to the one before (evidence_chain)
      index.sqlite       search index, rebuildable from the log (evidence_index)
      attempts/<id>/     committed attempts: clip/, verdict/, overlay/ frames, attempt.json, ...
      staging/<id>/      attempts being written (evidence_writer)
      torn/              torn log tails set aside on open (never deleted)

Opening a store recovers from a crash: a torn final record is moved to `torn/`, reported and
recorded; the chain is re-verified; interrupted commits are completed; attempts that were never
committed are recorded as aborted; the index catches up with the log.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecam import __version__
from judgecam.device.evidence_chain import (
    FORMAT,
    EvidenceCorruptError,
    EvidenceError,
    EvidenceSpaceError,
    Record,
    make_record,
)
from judgecam.device.evidence_files import (
    FileDigest,
    atomic_write,
    digest_file,
    fsync_dir,
    safe_name,
)
from judgecam.device.evidence_index import INDEX_NAME, AttemptSummary, EvidenceIndex
from judgecam.device.evidence_log import EvidenceLog, LogScan, StagingLock, check_links
from judgecam.device.evidence_writer import (
    INFO_FILE,
    AttemptInfo,
    AttemptWriter,
    frames_from_names,
)

__all__ = [
    "AttemptInfo",
    "AttemptSummary",
    "AttemptWriter",
    "EvidenceCorruptError",
    "EvidenceError",
    "EvidenceSpaceError",
    "EvidenceStore",
    "Record",
    "RecoveryReport",
]

logger = logging.getLogger(__name__)

ATTEMPTS = "attempts"
STAGING = "staging"
TORN = "torn"
LOCK_SUFFIX = ".lock"
DEFAULT_MIN_FREE_BYTES = 200 * 2**20
MAX_TEXT = 2000


@dataclass(frozen=True)
class RecoveryReport:
    """What opening the store had to repair after a crash (empty when it was clean)."""

    torn_tail: Path | None = None
    torn_bytes: int = 0
    completed_commits: tuple[str, ...] = ()
    aborted_attempts: tuple[str, ...] = ()
    index_rebuilt: bool = False

    @property
    def clean(self) -> bool:
        return self.torn_tail is None and not self.completed_commits and not self.aborted_attempts

    def lines(self) -> list[str]:
        out = []
        if self.torn_tail is not None:
            out.append(f"torn final record ({self.torn_bytes} bytes) set aside in {self.torn_tail}")
        out += [f"finished interrupted commit of attempt {a}" for a in self.completed_commits]
        out += [f"recorded unfinished attempt {a} as aborted" for a in self.aborted_attempts]
        if self.index_rebuilt:
            out.append("search index rebuilt from the log")
        return out


def _utc(time_ns: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time_ns / 1e9))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]+", "_", text).strip("_")[:24] or "x"


class EvidenceStore:
    """Open (or create) the store at `root`, recovering from any crash; see the module doc."""

    def __init__(
        self,
        root: Path,
        *,
        min_free_bytes: int = DEFAULT_MIN_FREE_BYTES,
        signing_key: Path | None = None,
        rebuild_index: bool = False,
    ) -> None:
        self.root = Path(root)
        self.min_free_bytes = int(min_free_bytes)
        self.signing_key = signing_key
        self.root.mkdir(parents=True, exist_ok=True)
        missing = [f for f in (ATTEMPTS, STAGING, TORN) if not (self.root / f).is_dir()]
        for folder in missing:
            (self.root / folder).mkdir()
        if missing:
            fsync_dir(self.root)
        self._log = EvidenceLog(self.root)
        self._records: list[Record] = []
        self._log_end = 0
        self._index: EvidenceIndex | None = None
        # flock excludes other processes, not other threads of this one (the review page
        # serves from several threads): the RLock does that.
        self._mutex = threading.RLock()
        self._owners: list[StagingLock] = []
        try:
            with self._exclusive():
                self.recovery = self._open(rebuild_index)
        except BaseException:
            self.close()
            raise
        for line in self.recovery.lines():
            logger.warning("evidence store %s: %s", self.root, line)

    # ----------------------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close; attempts begun but not recorded stay staged for the next open to record."""
        for owner in self._owners:
            owner.release(remove=False)
        self._owners.clear()
        if self._index is not None:
            self._index.close()
            self._index = None
        self._log.close()

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        """The right to append: this thread among ours, this process among all."""
        with self._mutex, self._log.locked():
            yield

    def __enter__(self) -> EvidenceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def store_id(self) -> str:
        return str(self._records[0].content["store_id"])

    @property
    def index(self) -> EvidenceIndex:
        assert self._index is not None
        return self._index

    def _open(self, rebuild_index: bool) -> RecoveryReport:
        try:
            scan = self._log.scan()
        except EvidenceCorruptError as error:
            raise EvidenceCorruptError(
                f"evidence log {self._log.path} is damaged: {error}; "
                f"run `judgecam evidence verify {self.root}` for the full list"
            ) from error
        self._records = list(scan.records)
        self._log_end = scan.good_size
        torn_path = self._set_aside_torn_tail(scan) if scan.torn else None
        if not self._records:
            self._append({"kind": "store-created", "store_id": str(uuid.uuid4()), "format": FORMAT})
        index_rebuilt = self._open_index(rebuild_index)
        completed, aborted = self._recover_staging()
        return RecoveryReport(
            torn_tail=torn_path,
            torn_bytes=len(scan.torn),
            completed_commits=tuple(completed),
            aborted_attempts=tuple(aborted),
            index_rebuilt=index_rebuilt,
        )

    def _set_aside_torn_tail(self, scan: LogScan) -> Path:
        """Move a torn final record to torn/ (never deleted), cut it from the log, record it."""
        digest = FileDigest(*_sha_size(scan.torn))
        # A name fixed by offset and content: a crash during recovery just redoes the same move.
        name = f"log-offset-{scan.good_size}-{digest.sha256[:16]}.bin"
        path = self.root / TORN / name
        atomic_write(path, scan.torn)
        self._log.cut_torn_tail(scan.good_size)
        self._append(
            {
                "kind": "recovery",
                "torn_tail": {"offset": scan.good_size, "size": len(scan.torn)},
                "files": {f"{TORN}/{name}": digest.as_json()},
            }
        )
        return path

    def _open_index(self, rebuild: bool) -> bool:
        path = self.root / INDEX_NAME
        # A brand-new store has no index yet; only a missing index of a used store is news.
        rebuilt = rebuild or (not path.exists() and len(self._records) > 1)
        if rebuild:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        try:
            self._index = EvidenceIndex(path)
            indexed = self._index.hashes()
        except Exception as error:  # sqlite3.DatabaseError and friends: the index is derived
            logger.warning("index %s unreadable (%s); rebuilding it from the log", path, error)
            if self._index is not None:
                self._index.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            self._index = EvidenceIndex(path)
            indexed, rebuilt = {}, True
        for seq, digest in sorted(indexed.items()):
            if seq >= len(self._records) or self._records[seq].hash != digest:
                raise EvidenceCorruptError(
                    f"the index lists record seq {seq} which the log does not hold: a record "
                    f"was cut from or altered in {self._log.path}; run `judgecam evidence verify "
                    f"{self.root}` (and `reindex` only once the log is known to be right)"
                )
        self._sync_index()
        return rebuilt

    def _recover_staging(self) -> tuple[list[str], list[str]]:
        completed, aborted = [], []
        committed = {r.attempt_id for r in self._records if r.kind == "attempt"}
        for folder in sorted(p for p in (self.root / STAGING).iterdir() if p.is_dir()):
            attempt_id = folder.name
            owner = StagingLock.try_acquire(folder.with_name(attempt_id + LOCK_SUFFIX))
            if owner is None:
                continue  # its writer is alive (another process): not ours to touch
            try:
                if not folder.exists():
                    continue  # committed and moved while we waited for its lock
                if attempt_id in committed:
                    self._move_committed(attempt_id)
                    completed.append(attempt_id)
                    continue
                names = [
                    p.relative_to(folder).as_posix()
                    for p in sorted(folder.rglob("*"))
                    if p.is_file()
                ]
                if not names:
                    folder.rmdir()  # created, but nothing was ever written into it
                    continue
                try:
                    self._record_crashed_attempt(attempt_id, folder, names)
                except EvidenceSpaceError as error:  # keep it staged; the next open retries
                    logger.warning("could not record staged attempt %s yet: %s", attempt_id, error)
                    continue
                aborted.append(attempt_id)
            finally:
                owner.release(remove=True)
        return completed, aborted

    def _record_crashed_attempt(self, attempt_id: str, folder: Path, names: list[str]) -> None:
        import json

        info: dict[str, Any] = {
            "competition": "unknown",
            "competitor_id": "unknown",
            "event": "unknown",
            "round": 1,
            "attempt": 1,
            "station": "",
        }
        started_ns = 0
        try:
            saved = json.loads((folder / INFO_FILE).read_text("utf-8"))
            info = AttemptInfo.from_json(saved["info"]).as_json()
            started_ns = int(saved["started_ns"])
        except (OSError, ValueError, KeyError, TypeError, EvidenceError):
            logger.warning("staged attempt %s has no readable %s", attempt_id, INFO_FILE)
        digests = {name: digest_file(folder / name) for name in names}
        self._commit_staged(
            attempt_id,
            info,
            started_ns,
            "aborted",
            digests,
            {"result": {}, "abort_reason": "the station stopped before commit"},
            locked=True,
        )

    # ------------------------------------------------------------------------------- writing
    def check_space(self) -> None:
        """Raise EvidenceSpaceError when the evidence disk is below its free-space floor."""
        free = shutil.disk_usage(self.root).free
        if free < self.min_free_bytes:
            raise EvidenceSpaceError(
                f"evidence disk {self.root} has {free / 2**20:.0f} MiB free, below the floor of "
                f"{self.min_free_bytes / 2**20:.0f} MiB: not starting the attempt. Free space "
                "(export and prune a FINAL competition, or use a larger disk) and try again"
            )

    def begin_attempt(self, info: AttemptInfo) -> AttemptWriter:
        """Start writing one attempt (refused below the free-space floor)."""
        self.check_space()
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        attempt_id = (
            f"{stamp}-{_slug(info.event)}-r{info.round}-a{info.attempt}-"
            f"{_slug(info.competitor_id)}-{secrets.token_hex(3)}"
        )
        staging = self.root / STAGING / attempt_id
        owner = StagingLock.try_acquire(staging.with_name(attempt_id + LOCK_SUFFIX))
        if owner is None:
            raise EvidenceError(f"attempt id {attempt_id} is in use; try again")
        self._owners = [*(o for o in self._owners if o.held), owner]
        staging.mkdir()
        fsync_dir(staging.parent)
        return AttemptWriter(self, info, attempt_id, staging, owner)

    def _commit_staged(
        self,
        attempt_id: str,
        info: AttemptInfo | Mapping[str, Any],
        started_ns: int,
        status: str,
        digests: Mapping[str, FileDigest],
        extra: Mapping[str, Any],
        *,
        locked: bool = False,
    ) -> Record:
        """Append the attempt record, then move its folder from staging/ to attempts/."""
        info_json = info.as_json() if isinstance(info, AttemptInfo) else dict(info)
        content = {
            "kind": "attempt",
            "attempt_id": attempt_id,
            "status": status,
            "info": info_json,
            "started_ns": started_ns,
            "software": {"judgecam": __version__},
            "frames": frames_from_names(digests),
            "files": {
                f"{ATTEMPTS}/{attempt_id}/{name}": d.as_json()
                for name, d in sorted(digests.items())
            },
            **extra,
        }
        if locked:
            record = self._append(content)
        else:
            with self._exclusive():
                self._catch_up()
                record = self._append(content)
        self._move_committed(attempt_id)
        return record

    def _move_committed(self, attempt_id: str) -> None:
        source = self.root / STAGING / attempt_id
        target = self.root / ATTEMPTS / attempt_id
        if target.exists():
            raise EvidenceCorruptError(f"{target} exists already; leaving {source} in place")
        os.replace(source, target)
        fsync_dir(target.parent)
        fsync_dir(source.parent)

    def _append(self, content: Mapping[str, Any]) -> Record:
        """Chain and append one record (caller holds the lock); index it afterwards."""
        last = self._records[-1] if self._records else None
        now = time.time_ns()
        full = {"time_ns": now, "time_utc": _utc(now), **content}
        record = make_record(last.seq + 1 if last else 0, last.hash if last else "0" * 64, full)
        self._log_end = self._log.append(record)
        self._records.append(record)
        self._sync_index()
        return record

    def _sync_index(self) -> None:
        """Index records the index lacks. The log is the truth: an index failure (disk full)
        is logged and retried later, never turned into a lost or doubled record."""
        if self._index is None:
            return
        try:
            missing = self._records[self._index.last_seq() + 1 :]
            if missing:
                self._index.add(missing)
        except sqlite3.Error as error:
            logger.warning("search index behind the log (%s); it catches up later", error)

    def _catch_up(self) -> None:
        """Take in records another process appended since we last looked (caller holds lock)."""
        if self._log.size() == self._log_end:
            return
        new, end = self._log.read_since(self._log_end, first_line=len(self._records) + 1)
        last = self._records[-1]
        check_links(new, start=last.seq, start_hash=last.hash)
        self._records.extend(new)
        self._log_end = end
        self._sync_index()

    def refresh(self) -> None:
        """See records written by other processes (the station while the review page runs)."""
        with self._mutex:
            if self._log.size() != self._log_end:
                with self._log.locked():
                    self._catch_up()
            self._sync_index()

    def append_decision(self, attempt_id: str, decision: str, by: str, note: str = "") -> Record:
        """The chief judge's (or a judge's) decision on an attempt: a new record pointing at it."""
        for name, value, limit in (
            ("decision", decision, 40),
            ("by", by, 80),
            ("note", note, MAX_TEXT),
        ):
            if not isinstance(value, str) or len(value) > limit:
                raise EvidenceError(f"{name} must be text of at most {limit} characters")
        if not decision.strip() or not by.strip():
            raise EvidenceError("a decision needs a decision and the name of who made it")
        with self._exclusive():
            self._catch_up()
            target = self.attempt_record(attempt_id)
            if target is None:
                raise EvidenceError(f"no attempt {attempt_id!r} in this store")
            previous = self.decisions(attempt_id)
            return self._append(
                {
                    "kind": "decision",
                    "attempt_id": attempt_id,
                    "target": target.hash,
                    "target_seq": target.seq,
                    "supersedes": previous[-1].hash if previous else None,
                    "decision": decision.strip(),
                    "by": by.strip(),
                    "note": note.strip(),
                }
            )

    def mark_final(self, competition: str) -> Record:
        """Declare a competition's results final: only then may its evidence be pruned."""
        with self._exclusive():
            self._catch_up()
            return self._append({"kind": "competition-final", "competition": competition})

    def prune(self, competition: str) -> list[str]:
        """Delete the files of a FINAL competition's attempts; the records stay in the log."""
        self.refresh()
        if not self.index.is_final(competition):
            raise EvidenceError(
                f"competition {competition!r} is not marked final: its evidence is kept "
                "(mark it final with `judgecam evidence finalize` once results are final)"
            )
        attempts = [
            a for a in self.index.find(competition=competition, limit=10**9) if not a.pruned
        ]
        if not attempts:
            return []
        ids = sorted(a.attempt_id for a in attempts)
        records = [self.attempt_record(attempt_id) for attempt_id in ids]
        paths = sorted(path for record in records if record for path in record.files)
        with self._exclusive():
            self._catch_up()
            self._append(
                {"kind": "prune", "competition": competition, "attempt_ids": ids, "paths": paths}
            )
        for attempt_id in ids:
            shutil.rmtree(self.root / ATTEMPTS / attempt_id, ignore_errors=True)
        fsync_dir(self.root / ATTEMPTS)
        return ids

    def checkpoint(self) -> Record:
        """Sign the current head of the chain with the store's Ed25519 key (end of a round)."""
        from judgecam.device.evidence_keys import (
            load_private_key,
            public_key_hex,
            sign_checkpoint,
        )

        if self.signing_key is None:
            raise EvidenceError("no signing key given: create one with `judgecam evidence keygen`")
        key = load_private_key(self.signing_key)
        with self._exclusive():
            self._catch_up()
            head = self._records[-1]
            return self._append(
                {
                    "kind": "checkpoint",
                    "store_id": self.store_id,
                    "covers_seq": head.seq,
                    "covers_hash": head.hash,
                    "public_key": public_key_hex(key),
                    "signature": sign_checkpoint(key, self.store_id, head.seq, head.hash),
                }
            )

    # ------------------------------------------------------------------------------- reading
    def records(self) -> Iterator[Record]:
        with self._mutex:
            self.refresh()
            return iter(list(self._records))

    def record(self, seq: int) -> Record:
        return self._records[seq]

    def find(
        self,
        *,
        competition: str | None = None,
        competitor_id: str | None = None,
        event: str | None = None,
        round: int | None = None,
        attempt: int | None = None,
        limit: int = 500,
    ) -> list[AttemptSummary]:
        """Attempts by competitor, event, round, attempt (via the SQLite index), newest first."""
        with self._mutex:
            self.refresh()
            return self.index.find(
                competition=competition,
                competitor_id=competitor_id,
                event=event,
                round=round,
                attempt=attempt,
                limit=limit,
            )

    def attempt_record(self, attempt_id: str) -> Record | None:
        """The attempt's record (None if unknown)."""
        with self._mutex:
            for record in self._records_of(attempt_id):
                if record.kind == "attempt":
                    return record
        return None

    def decisions(self, attempt_id: str) -> list[Record]:
        """Decisions on the attempt, oldest first (the last one stands)."""
        with self._mutex:
            records = self._records_of(attempt_id)
        return [record for record in reversed(records) if record.kind == "decision"]

    def _records_of(self, attempt_id: str) -> list[Record]:
        """The attempt's records, newest first (seqs from the index, records from memory)."""
        seqs = self.index.seqs_for_attempt(attempt_id)
        return [self._records[seq] for seq in reversed(seqs) if seq < len(self._records)]

    def attempt_file(self, attempt_id: str, name: str) -> Path | None:
        """The path of a file the attempt's record vouches for; None for anything else."""
        try:
            safe_name(attempt_id, what="attempt id")
            safe_name(name)
        except EvidenceError:
            return None
        record = self.attempt_record(attempt_id)
        relative = f"{ATTEMPTS}/{attempt_id}/{name}"
        if record is None or relative not in record.files:
            return None
        path = self.root / relative
        return path if path.is_file() else None


def _sha_size(data: bytes) -> tuple[str, int]:
    import hashlib

    return hashlib.sha256(data).hexdigest(), len(data)
