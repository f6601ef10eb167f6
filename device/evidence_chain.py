"""Records of the evidence log and the SHA-256 chain that links them (pure: no disk).

A record on disk is one line of canonical JSON (sorted keys, no spaces, UTF-8):

    {"content": {...}, "hash": H, "prev": P, "seq": N}

where `content_sha256 = sha256(canonical(content))` and
`H = sha256(canonical({"content_sha256": ..., "prev": P, "seq": N}))`. `P` is the hash of the
record before (64 zeros for the first). Hashing the content separately lets an export replace
other competitors' records by a *link stub* `{seq, prev, hash, content_sha256}` and still prove
the chain from the genesis, without disclosing their data.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

GENESIS_PREV = "0" * 64
FORMAT = "judgecam-evidence/1"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class EvidenceError(Exception):
    """Anything wrong with the evidence store; the message is one clear line."""


class EvidenceSpaceError(EvidenceError):
    """Not enough free disk space to record evidence safely."""


class EvidenceCorruptError(EvidenceError):
    """The store on disk is not what its own records say it should be."""


def _json_default(value: Any) -> Any:
    """Let numpy scalars and arrays from the vision code pass into a record."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"{type(value).__name__} cannot be stored in an evidence record")


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8, no NaN: the one byte form every hash is taken over."""
    try:
        text = json.dumps(
            value,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
            default=_json_default,
        )
    except (TypeError, ValueError) as error:
        raise EvidenceError(f"record is not storable as canonical JSON: {error}") from error
    return text.encode("utf-8")


def normalise(value: Any) -> Any:
    """The plain-JSON form of `value` (numpy -> lists, tuples -> lists), as it will read back."""
    return json.loads(canonical_json(value))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def link_hash(seq: int, prev: str, content_sha256: str) -> str:
    """The hash of one chain link."""
    return sha256_hex(canonical_json({"content_sha256": content_sha256, "prev": prev, "seq": seq}))


@dataclass(frozen=True)
class Record:
    """One entry of the evidence log. `content["kind"]` says what it records."""

    seq: int
    prev: str
    hash: str
    content: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.content.get("kind", ""))

    @property
    def attempt_id(self) -> str | None:
        value = self.content.get("attempt_id")
        return str(value) if value is not None else None

    @property
    def time_ns(self) -> int:
        return int(self.content.get("time_ns", 0))

    @property
    def files(self) -> Mapping[str, Mapping[str, Any]]:
        """Store-relative path -> {"sha256", "size"} of every file this record vouches for."""
        return self.content.get("files", {}) or {}

    def line(self) -> bytes:
        """The exact bytes of this record's log line, newline included."""
        return (
            canonical_json(
                {"content": self.content, "hash": self.hash, "prev": self.prev, "seq": self.seq}
            )
            + b"\n"
        )

    def stub(self) -> dict[str, Any]:
        """The link stub that proves this record's place in the chain without its content."""
        return {
            "content_sha256": sha256_hex(canonical_json(self.content)),
            "hash": self.hash,
            "prev": self.prev,
            "seq": self.seq,
        }


def make_record(seq: int, prev: str, content: Mapping[str, Any]) -> Record:
    """A new record chained after `prev`; the content is normalised to plain JSON first."""
    plain = normalise(dict(content))
    digest = sha256_hex(canonical_json(plain))
    return Record(seq=seq, prev=prev, hash=link_hash(seq, prev, digest), content=plain)


@dataclass(frozen=True)
class Link:
    """A chain entry as read back: a full record or a stub (content withheld)."""

    seq: int
    prev: str
    hash: str
    content_sha256: str
    record: Record | None  # None for a stub


def parse_link(line: bytes, *, allow_stub: bool = False) -> Link:
    """Parse one log or bundle line; raise EvidenceCorruptError saying what is wrong with it."""
    try:
        value = json.loads(
            line.decode("utf-8"), parse_float=_finite_float, parse_constant=_no_constant
        )
    except (UnicodeDecodeError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        raise EvidenceCorruptError(f"not valid JSON ({error})") from error
    if not isinstance(value, dict):
        raise EvidenceCorruptError("not a JSON object")
    expected_keys = {"content", "hash", "prev", "seq"}
    stub_keys = {"content_sha256", "hash", "prev", "seq"}
    keys = set(value)
    if keys != expected_keys and not (allow_stub and keys == stub_keys):
        raise EvidenceCorruptError(f"unexpected fields {sorted(keys)}")
    seq, prev, claimed = value["seq"], value["prev"], value["hash"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise EvidenceCorruptError("seq is not a non-negative integer")
    if not (isinstance(prev, str) and _HEX64.match(prev)):
        raise EvidenceCorruptError("prev is not a SHA-256 hex digest")
    if not (isinstance(claimed, str) and _HEX64.match(claimed)):
        raise EvidenceCorruptError("hash is not a SHA-256 hex digest")
    if canonical_json(value) != line.rstrip(b"\n"):
        raise EvidenceCorruptError("bytes differ from the canonical form of its content")
    record: Record | None = None
    if "content" in value:
        content = value["content"]
        if not isinstance(content, dict):
            raise EvidenceCorruptError("content is not a JSON object")
        content_sha256 = sha256_hex(canonical_json(content))
        record = Record(seq=seq, prev=prev, hash=claimed, content=content)
    else:
        content_sha256 = value["content_sha256"]
        if not (isinstance(content_sha256, str) and _HEX64.match(content_sha256)):
            raise EvidenceCorruptError("content_sha256 is not a SHA-256 hex digest")
    if link_hash(seq, prev, content_sha256) != claimed:
        raise EvidenceCorruptError("hash does not match its content (record altered)")
    return Link(seq=seq, prev=prev, hash=claimed, content_sha256=content_sha256, record=record)


def _finite_float(text: str) -> float:
    """A JSON number as a float, refusing one too large for a float (an altered exponent)."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"number out of range: {text}")
    return number


def _no_constant(text: str) -> float:
    """NaN and Infinity are not JSON: canonical records never hold them."""
    raise ValueError(f"not a JSON number: {text}")


def parse_record(line: bytes) -> Record:
    """Parse a full log line (no stubs)."""
    link = parse_link(line)
    assert link.record is not None
    return link.record
