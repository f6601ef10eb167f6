"""The append-only log file of the evidence store (JSON Lines, one record per line).

Opened for append only and fsynced after every record. Writers in several processes (station,
review page) take an exclusive `flock` around each append. A record torn by a crash can only be
the final line; `scan_log` tells it apart from tampering, which can be anywhere.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from judgecam.device.evidence_chain import (
    GENESIS_PREV,
    EvidenceCorruptError,
    Record,
    parse_record,
)
from judgecam.device.evidence_files import fsync_dir, translate_space_errors, write_all

logger = logging.getLogger(__name__)

LOG_NAME = "log.jsonl"
LOCK_NAME = ".lock"


@dataclass(frozen=True)
class LogScan:
    """The complete records of a log, where they end, and any torn bytes after them."""

    records: tuple[Record, ...]
    good_size: int
    torn: bytes

    @property
    def head(self) -> tuple[int, str]:
        """(seq, hash) of the last record; (-1, genesis) for an empty log."""
        if not self.records:
            return -1, GENESIS_PREV
        last = self.records[-1]
        return last.seq, last.hash


def split_torn_tail(data: bytes) -> tuple[bytes, bytes]:
    """Split log bytes into (complete lines, torn tail).

    The tail is whatever follows the last newline; a final line of NUL bytes (what some file
    systems show after a power cut that extended the file but not its data) is torn too.
    """
    cut = data.rfind(b"\n") + 1
    body, tail = data[:cut], data[cut:]
    if body:
        start = body.rfind(b"\n", 0, len(body) - 1) + 1
        last_line = body[start:-1]
        if last_line and not last_line.strip(b"\x00"):
            body, tail = body[:start], body[start:] + tail
    return body, tail


def parse_lines(body: bytes, *, first_line: int = 1) -> list[Record]:
    """Parse complete lines strictly: any bad line is tampering, named by its line number."""
    records: list[Record] = []
    for number, line in enumerate(body.splitlines(keepends=True), start=first_line):
        try:
            records.append(parse_record(line))
        except EvidenceCorruptError as error:
            raise EvidenceCorruptError(f"log line {number}: {error}") from error
    return records


def check_links(
    records: list[Record] | tuple[Record, ...], *, start: int = -1, start_hash: str = GENESIS_PREV
) -> None:
    """Raise EvidenceCorruptError at the first record that does not follow the one before."""
    seq, previous = start, start_hash
    for record in records:
        if record.seq != seq + 1 or record.prev != previous:
            raise EvidenceCorruptError(
                f"broken chain at seq {record.seq} (expected seq {seq + 1} after hash "
                f"{previous[:12]}): a record was deleted, inserted or altered"
            )
        seq, previous = record.seq, record.hash


class EvidenceLog:
    """The log file of one store, opened for append."""

    def __init__(self, root: Path) -> None:
        self.path = root / LOG_NAME
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if created:
            os.fsync(self._fd)
            fsync_dir(root)
        self._lock_fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)

    def close(self) -> None:
        os.close(self._fd)
        os.close(self._lock_fd)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive across processes, for an append and the tail bookkeeping around it."""
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def scan(self) -> LogScan:
        """Every complete record (links checked) and the torn tail, if any."""
        data = self.path.read_bytes()
        body, torn = split_torn_tail(data)
        records = parse_lines(body)
        check_links(records)
        return LogScan(records=tuple(records), good_size=len(body), torn=torn)

    def read_since(self, offset: int, *, first_line: int) -> tuple[list[Record], int]:
        """Records another process appended after `offset`; returns them and the new end."""
        with self.path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
        body, _torn = split_torn_tail(data)
        return parse_lines(body, first_line=first_line), offset + len(body)

    def append(self, record: Record) -> int:
        """Append one record and fsync; return the new size. On failure nothing is left behind."""
        before = self.size()
        line = record.line()
        try:
            with translate_space_errors(self.path):
                write_all(self._fd, line)
                os.fsync(self._fd)
        except BaseException:
            # Only our own partial line is cut off; every earlier record stays as it was.
            try:
                os.ftruncate(self._fd, before)
                os.fsync(self._fd)
            except OSError:
                logger.exception("could not cut a failed record from %s (open will)", self.path)
            raise
        return before + len(line)

    def cut_torn_tail(self, good_size: int) -> None:
        """Drop bytes after `good_size` (called only after they were saved elsewhere)."""
        os.ftruncate(self._fd, good_size)
        os.fsync(self._fd)


class StagingLock:
    """An flock held by the live writer of a staged attempt; the kernel drops it if it dies.

    Lets a second process opening the store (the review page) tell an attempt being written
    right now from one whose writer crashed, which it then records as aborted.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def try_acquire(cls, path: Path) -> StagingLock | None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self, *, remove: bool) -> None:
        if self._fd is None:
            return
        if remove:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None
