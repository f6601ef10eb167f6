"""The SQLite index of the evidence log: find attempts by competitor, event, round, attempt.

The log is the truth; this index is derived from it and can always be rebuilt
(`judgecam evidence reindex DIR`). It runs in WAL mode with synchronous=FULL so a committed row
survives a power cut. It also remembers every record's hash, which lets `verify` notice a record
that was cut from the end of the log.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecam.device.evidence_chain import Record

logger = logging.getLogger(__name__)

INDEX_NAME = "index.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    attempt_id TEXT,
    time_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    attempt_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    competition TEXT NOT NULL,
    competitor_id TEXT NOT NULL,
    event TEXT NOT NULL,
    round INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    station TEXT NOT NULL,
    status TEXT NOT NULL,
    verdict TEXT,
    time_ns INTEGER NOT NULL,
    decision TEXT,
    decision_by TEXT,
    decision_seq INTEGER,
    decision_hash TEXT,
    pruned INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS attempts_competitor ON attempts (competitor_id);
CREATE INDEX IF NOT EXISTS attempts_event_round ON attempts (event, round);
CREATE INDEX IF NOT EXISTS attempts_competition ON attempts (competition);
CREATE TABLE IF NOT EXISTS finals (competition TEXT PRIMARY KEY, seq INTEGER NOT NULL);
"""


@dataclass(frozen=True)
class AttemptSummary:
    """One attempt as the index sees it, with the latest decision on it."""

    attempt_id: str
    seq: int
    competition: str
    competitor_id: str
    event: str
    round: int
    attempt: int
    station: str
    status: str
    verdict: str | None
    time_ns: int
    decision: str | None
    decision_by: str | None
    pruned: bool


def connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.executescript(_SCHEMA)
    return connection


class EvidenceIndex:
    """A thin, typed wrapper over the index database."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path)

    def close(self) -> None:
        self._db.close()

    def hashes(self) -> dict[int, str]:
        return dict(self._db.execute("SELECT seq, hash FROM records").fetchall())

    def last_seq(self) -> int:
        row = self._db.execute("SELECT max(seq) FROM records").fetchone()
        return -1 if row[0] is None else int(row[0])

    def add(self, records: Iterable[Record]) -> None:
        """Index records (idempotent: a record already indexed is skipped)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for record in records:
                cursor = db.execute(
                    "INSERT OR IGNORE INTO records VALUES (?, ?, ?, ?, ?)",
                    (record.seq, record.hash, record.kind, record.attempt_id, record.time_ns),
                )
                if cursor.rowcount:
                    self._apply(record)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # a failed COMMIT (disk full) has rolled back already
                db.execute("ROLLBACK")
            raise

    def _apply(self, record: Record) -> None:
        content = record.content
        db = self._db
        if record.kind == "attempt":
            info = content["info"]
            result = content.get("result", {}) or {}
            verdict = result.get("verdict")
            db.execute(
                "INSERT OR REPLACE INTO attempts (attempt_id, seq, hash, competition,"
                " competitor_id, event, round, attempt, station, status, verdict, time_ns)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.attempt_id,
                    record.seq,
                    record.hash,
                    str(info["competition"]),
                    str(info["competitor_id"]),
                    str(info["event"]),
                    int(info["round"]),
                    int(info["attempt"]),
                    str(info.get("station", "")),
                    str(content.get("status", "")),
                    None if verdict is None else str(verdict),
                    record.time_ns,
                ),
            )
        elif record.kind == "decision":
            db.execute(
                "UPDATE attempts SET decision = ?, decision_by = ?, decision_seq = ?,"
                " decision_hash = ? WHERE attempt_id = ?",
                (
                    content["decision"],
                    content["by"],
                    record.seq,
                    record.hash,
                    record.attempt_id,
                ),
            )
        elif record.kind == "competition-final":
            db.execute(
                "INSERT OR REPLACE INTO finals VALUES (?, ?)", (content["competition"], record.seq)
            )
        elif record.kind == "prune":
            db.executemany(
                "UPDATE attempts SET pruned = 1 WHERE attempt_id = ?",
                [(attempt_id,) for attempt_id in content["attempt_ids"]],
            )

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
        """Attempts matching every given filter, newest first."""
        where: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("competition", competition),
            ("competitor_id", competitor_id),
            ("event", event),
            ("round", round),
            ("attempt", attempt),
        ):
            if value is not None and value != "":
                where.append(f"{column} = ?")
                params.append(value)
        sql = (
            "SELECT attempt_id, seq, competition, competitor_id, event, round, attempt, station,"
            " status, verdict, time_ns, decision, decision_by, pruned FROM attempts"
        )
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY seq DESC LIMIT ?"
        params.append(limit)
        return [_summary(row) for row in self._db.execute(sql, params).fetchall()]

    def summary(self, attempt_id: str) -> AttemptSummary | None:
        row = self._db.execute(
            "SELECT attempt_id, seq, competition, competitor_id, event, round, attempt, station,"
            " status, verdict, time_ns, decision, decision_by, pruned FROM attempts"
            " WHERE attempt_id = ?",
            (attempt_id,),
        ).fetchone()
        return None if row is None else _summary(row)

    def seqs_for_attempt(self, attempt_id: str) -> list[int]:
        rows = self._db.execute(
            "SELECT seq FROM records WHERE attempt_id = ? ORDER BY seq", (attempt_id,)
        ).fetchall()
        return [int(row[0]) for row in rows]

    def distinct(self, column: str) -> list[str]:
        """Distinct values of one filter column, for the review page's pickers."""
        if column not in {"competition", "event", "round", "competitor_id"}:
            raise ValueError(column)
        rows = self._db.execute(f"SELECT DISTINCT {column} FROM attempts ORDER BY 1").fetchall()
        return [str(row[0]) for row in rows]

    def is_final(self, competition: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM finals WHERE competition = ?", (competition,)
        ).fetchone()
        return row is not None


def _summary(row: Sequence[Any]) -> AttemptSummary:
    return AttemptSummary(
        attempt_id=row[0],
        seq=int(row[1]),
        competition=row[2],
        competitor_id=row[3],
        event=row[4],
        round=int(row[5]),
        attempt=int(row[6]),
        station=row[7],
        status=row[8],
        verdict=row[9],
        time_ns=int(row[10]),
        decision=row[11],
        decision_by=row[12],
        pruned=bool(row[13]),
    )


def read_index_hashes(path: Path) -> dict[int, str] | None:
    """The seq -> hash table of an index, read without changing it; None when unreadable."""
    if not path.is_file():
        return None
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return dict(connection.execute("SELECT seq, hash FROM records").fetchall())
        finally:
            connection.close()
    except sqlite3.Error as error:
        logger.warning("index %s unreadable: %s", path, error)
        return None
