"""Check an evidence store folder or an export bundle (.zip): every record and every file.

Read-only. Each problem names what is wrong: the altered, missing or unexpected file; the log
line of an altered, deleted or inserted record; the broken link; a bad signature. A torn final
record (a crash while appending) is reported as such; opening the store sets it aside.
"""

from __future__ import annotations

import hashlib
import logging
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from judgecam.device.evidence_chain import (
    GENESIS_PREV,
    EvidenceCorruptError,
    EvidenceError,
    Link,
    Record,
    parse_link,
)
from judgecam.device.evidence_files import digest_file, walk_files
from judgecam.device.evidence_index import INDEX_NAME, read_index_hashes
from judgecam.device.evidence_log import LOG_NAME, split_torn_tail

logger = logging.getLogger(__name__)

EVIDENCE_FOLDERS = ("attempts", "torn")
BUNDLE_CHAIN = "chain.jsonl"
BUNDLE_MANIFEST = "manifest.json"
BUNDLE_PUBLIC_KEY = "public_key.pem"
BUNDLE_FILES = "files/"
BUNDLE_FORMAT = "judgecam-evidence-bundle/1"


@dataclass(frozen=True)
class Problem:
    """One thing that is not as the records say: kind, what it concerns, and how."""

    kind: str
    subject: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.upper()} {self.subject}: {self.detail}"


@dataclass(frozen=True)
class VerifyReport:
    source: str
    records: int
    files: int
    problems: tuple[Problem, ...]
    notices: tuple[str, ...] = ()
    anchors: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        out = [str(problem) for problem in self.problems]
        out += [f"note: {notice}" for notice in self.notices]
        out += [f"anchor: {anchor}" for anchor in self.anchors]
        verdict = "INTACT" if self.ok else f"NOT INTACT ({len(self.problems)} problems)"
        out.append(f"{verdict}: {self.source}: {self.records} records, {self.files} files checked")
        return out


@dataclass
class _ChainResult:
    links: list[Link] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    last_signed_seq: int = -1
    anchors: list[str] = field(default_factory=list)

    @property
    def full_records(self) -> list[Record]:
        return [link.record for link in self.links if link.record is not None]


def check_chain(
    lines: list[bytes],
    source: str,
    *,
    torn_tail: bytes = b"",
    allow_stubs: bool = False,
    trusted_key: str | None = None,
) -> _ChainResult:
    """Parse and link-check chain lines; name every bad line and every broken link."""
    result = _ChainResult()
    previous: Link | None = None
    for number, line in enumerate(lines, start=1):
        where = f"{source} line {number}"
        try:
            link = parse_link(line, allow_stub=allow_stubs)
        except EvidenceCorruptError as error:
            result.problems.append(Problem("altered-record", where, str(error)))
            previous = None
            continue
        where += f" (seq {link.seq})"
        if previous is None and number == 1:
            _check_start(link, where, result)
        elif previous is not None and link.seq != previous.seq + 1:
            result.problems.append(
                Problem(
                    "broken-link",
                    where,
                    f"follows seq {previous.seq}: a record was deleted or inserted here",
                )
            )
        elif previous is not None and link.prev != previous.hash:
            result.problems.append(
                Problem(
                    "broken-link",
                    where,
                    f"prev does not match the hash of seq {previous.seq} "
                    "(a record before it was replaced or inserted)",
                )
            )
        result.links.append(link)
        previous = link
    if torn_tail:
        result.problems.append(
            Problem(
                "torn-tail",
                f"{source} line {len(lines) + 1}",
                f"{len(torn_tail)} bytes of an unfinished final record (a crash while appending; "
                "opening the store sets it aside in torn/)",
            )
        )
    _check_references(result, source, trusted_key)
    _check_coverage(result, source, trusted_key)
    return result


def _check_coverage(result: _ChainResult, source: str, trusted_key: str | None) -> None:
    """Say which records no signature covers; with a trusted key, none covered is a failure."""
    if not result.links:
        return
    last = result.links[-1].seq
    if result.last_signed_seq < 0:
        if trusted_key is not None and not any(p.kind == "untrusted-key" for p in result.problems):
            result.problems.append(
                Problem("unsigned", source, "no checkpoint signed by the trusted key in this chain")
            )
        return
    if result.last_signed_seq < last:
        result.notices.append(
            f"seq {result.last_signed_seq + 1}..{last} came after the last "
            "signed checkpoint (sign with `judgecam evidence checkpoint`)"
        )


def _check_start(link: Link, where: str, result: _ChainResult) -> None:
    if link.seq == 0 and link.prev == GENESIS_PREV:
        result.anchors.append("chain starts at the genesis record")
        return
    record = link.record
    if record is not None and record.kind == "checkpoint":
        return  # its signature is checked with the other checkpoints; it anchors the start
    result.problems.append(
        Problem(
            "broken-link", where, "chain does not start at the genesis nor at a signed checkpoint"
        )
    )


def _check_references(result: _ChainResult, source: str, trusted_key: str | None) -> None:
    """Decisions must point at a real attempt; checkpoints must be validly signed."""
    from judgecam.device.evidence_keys import fingerprint, signature_is_valid

    by_seq = {link.seq: link for link in result.links}
    first_seq = result.links[0].seq if result.links else 0
    for record in result.full_records:
        where = f"{source} seq {record.seq}"
        content = record.content
        if record.kind == "decision":
            target = by_seq.get(int(content.get("target_seq", -1)))
            if target is None or target.hash != content.get("target") or target.seq >= record.seq:
                result.problems.append(
                    Problem(
                        "broken-link",
                        where,
                        f"decision points at {str(content.get('target'))[:12]}"
                        " which is not an earlier attempt record of this chain",
                    )
                )
        elif record.kind == "checkpoint":
            key = str(content.get("public_key", ""))
            covers_seq = int(content.get("covers_seq", -1))
            covers_hash = str(content.get("covers_hash", ""))
            signed = signature_is_valid(
                key,
                str(content.get("signature", "")),
                str(content.get("store_id", "")),
                covers_seq,
                covers_hash,
            )
            if not signed or covers_seq != record.seq - 1 or covers_hash != record.prev:
                result.problems.append(
                    Problem(
                        "bad-signature",
                        where,
                        "checkpoint signature or the head it covers is wrong",
                    )
                )
            elif trusted_key is not None and key != trusted_key:
                result.problems.append(
                    Problem(
                        "untrusted-key",
                        where,
                        f"signed by {fingerprint(key)}, not by the trusted "
                        f"key {fingerprint(trusted_key)}",
                    )
                )
            else:
                trust = "trusted" if trusted_key else "embedded"
                result.last_signed_seq = record.seq
                result.anchors.append(
                    f"signed checkpoint seq {record.seq} covers seq {first_seq}..{covers_seq} "
                    f"(key {fingerprint(key)}, {trust})"
                )


def _expected_files(records: Iterable[Record]) -> tuple[dict[str, Mapping[str, Any]], set[str]]:
    expected: dict[str, Mapping[str, Any]] = {}
    pruned: set[str] = set()
    for record in records:
        expected.update(record.files)
        if record.kind == "prune":
            pruned.update(str(path) for path in record.content.get("paths", []))
    return expected, pruned


def _check_files(
    expected: Mapping[str, Mapping[str, Any]],
    pruned: set[str],
    present: set[str],
    digest: Callable[[str], tuple[str, int]],
    problems: list[Problem],
    notices: list[str],
) -> int:
    checked = 0
    for path, claim in sorted(expected.items()):
        if path not in present:
            if path not in pruned:
                problems.append(Problem("missing-file", path, "recorded but not found"))
            continue
        sha, size = digest(path)
        checked += 1
        if sha != claim.get("sha256") or size != claim.get("size"):
            problems.append(
                Problem(
                    "altered-file",
                    path,
                    f"SHA-256 {sha[:16]}… (size {size}) differs from the "
                    f"recorded {str(claim.get('sha256'))[:16]}… (size {claim.get('size')})",
                )
            )
        if path in pruned:
            notices.append(f"{path} was pruned but is still present")
    for path in sorted(present - set(expected)):
        problems.append(Problem("unexpected-file", path, "not recorded by any record"))
    return checked


def verify_store(root: Path, *, trusted_key: str | None = None) -> VerifyReport:
    """Verify a store folder in place, without changing anything in it."""
    root = Path(root)
    log_path = root / LOG_NAME
    if not log_path.is_file():
        raise EvidenceError(f"{root} is not an evidence store (no {LOG_NAME})")
    body, torn = split_torn_tail(log_path.read_bytes())
    chain = check_chain(
        body.splitlines(keepends=True), LOG_NAME, torn_tail=torn, trusted_key=trusted_key
    )
    problems, notices = list(chain.problems), list(chain.notices)
    _check_index(root, chain.links, problems)
    expected, pruned = _expected_files(chain.full_records)
    present = {
        p.relative_to(root).as_posix()
        for folder in EVIDENCE_FOLDERS
        for p in walk_files(root / folder)
    }
    # A commit interrupted between its record and its folder move: the files are still staged.
    staged: dict[str, Path] = {}
    for path in walk_files(root / "staging"):
        relative = path.relative_to(root / "staging").as_posix()
        if "/" not in relative and relative.endswith(".lock"):
            continue  # a live writer's lock file, not evidence
        attempt_path = f"attempts/{relative}"
        if attempt_path in expected and attempt_path not in present:
            staged[attempt_path] = path
        else:
            notices.append(f"uncommitted staging/{relative} (recorded as aborted on next open)")
    for attempt_path in staged:
        notices.append(f"{attempt_path} is still in staging/ (commit finishes on next open)")

    def digest(relative: str) -> tuple[str, int]:
        found = digest_file(staged.get(relative, root / relative))
        return found.sha256, found.size

    checked = _check_files(expected, pruned, present | set(staged), digest, problems, notices)
    return VerifyReport(
        source=str(root),
        records=len(chain.links),
        files=checked,
        problems=tuple(problems),
        notices=tuple(notices),
        anchors=tuple(chain.anchors),
    )


def _check_index(root: Path, links: list[Link], problems: list[Problem]) -> None:
    """The index remembers every record's hash: a record cut from the log shows up here."""
    indexed = read_index_hashes(root / INDEX_NAME)
    if not indexed:
        return
    in_log = {link.seq: link.hash for link in links}
    for seq, digest in sorted(indexed.items()):
        if seq not in in_log:
            problems.append(
                Problem(
                    "missing-record",
                    f"{LOG_NAME} seq {seq}",
                    "indexed, but no longer in the log (deleted)",
                )
            )
        elif in_log[seq] != digest:
            problems.append(
                Problem(
                    "altered-record",
                    f"{LOG_NAME} seq {seq}",
                    "differs from the hash the index recorded",
                )
            )


def _safe_member(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and "\\" not in name


def verify_bundle(bundle: Path, *, trusted_key: str | None = None) -> VerifyReport:
    """Verify an export bundle: its chain proof, its signed checkpoints and its files."""
    import json

    try:
        archive = zipfile.ZipFile(bundle)
    except (OSError, zipfile.BadZipFile) as error:
        raise EvidenceError(f"cannot open bundle {bundle}: {error}") from error
    with archive:
        names = [info.filename for info in archive.infolist() if not info.is_dir()]
        problems: list[Problem] = []
        notices: list[str] = []
        for name in names:
            if not _safe_member(name):
                problems.append(Problem("unexpected-file", name, "unsafe path in bundle"))
        if BUNDLE_CHAIN not in names or BUNDLE_MANIFEST not in names:
            raise EvidenceError(f"{bundle} is not an evidence bundle (no {BUNDLE_CHAIN})")
        try:
            manifest = json.loads(archive.read(BUNDLE_MANIFEST))
        except ValueError as error:
            raise EvidenceError(f"{bundle}: manifest.json unreadable: {error}") from error
        body, torn = split_torn_tail(archive.read(BUNDLE_CHAIN))
        chain = check_chain(
            body.splitlines(keepends=True),
            BUNDLE_CHAIN,
            torn_tail=torn,
            allow_stubs=True,
            trusted_key=trusted_key,
        )
        problems += chain.problems
        notices += chain.notices
        _check_bundle_manifest(manifest, chain, problems)
        if not any(a.startswith("signed checkpoint") for a in chain.anchors):
            notices.append(
                "no signed checkpoint covers these records: the chain proves they "
                "are consistent with the store's history, not who wrote it"
            )
        expected, pruned = _expected_files(chain.full_records)
        present = {
            name[len(BUNDLE_FILES) :]
            for name in names
            if name.startswith(BUNDLE_FILES) and _safe_member(name)
        }
        extras = set(names) - {BUNDLE_CHAIN, BUNDLE_MANIFEST, BUNDLE_PUBLIC_KEY}
        for name in sorted(extras):
            if not name.startswith(BUNDLE_FILES) and _safe_member(name):
                problems.append(Problem("unexpected-file", name, "not part of a bundle"))

        def digest(relative: str) -> tuple[str, int]:
            data = archive.read(BUNDLE_FILES + relative)
            return hashlib.sha256(data).hexdigest(), len(data)

        checked = _check_files(expected, pruned, present, digest, problems, notices)
        _check_bundle_key(archive, names, chain, problems)
    return VerifyReport(
        source=str(bundle),
        records=len(chain.links),
        files=checked,
        problems=tuple(problems),
        notices=tuple(notices),
        anchors=tuple(chain.anchors),
    )


def _check_bundle_manifest(
    manifest: Mapping[str, Any], chain: _ChainResult, problems: list[Problem]
) -> None:
    if manifest.get("format") != BUNDLE_FORMAT:
        problems.append(Problem("altered-file", BUNDLE_MANIFEST, "unknown bundle format"))
    full = {record.seq for record in chain.full_records}
    for seq in manifest.get("records", []):
        if seq not in full:
            problems.append(
                Problem(
                    "missing-record",
                    f"{BUNDLE_CHAIN} seq {seq}",
                    "listed in the manifest but not in full in the chain",
                )
            )


def _check_bundle_key(
    archive: zipfile.ZipFile, names: list[str], chain: _ChainResult, problems: list[Problem]
) -> None:
    from judgecam.device.evidence_keys import public_key_pem

    keys = {str(r.content.get("public_key")) for r in chain.full_records if r.kind == "checkpoint"}
    if BUNDLE_PUBLIC_KEY not in names:
        if keys:
            problems.append(
                Problem(
                    "missing-file",
                    BUNDLE_PUBLIC_KEY,
                    "checkpoints are signed but the bundle has no public key",
                )
            )
        return
    pem = archive.read(BUNDLE_PUBLIC_KEY)
    if not any(public_key_pem(key) == pem for key in keys if len(key) == 64):
        problems.append(
            Problem(
                "altered-file",
                BUNDLE_PUBLIC_KEY,
                "is not the key that signed the bundle's checkpoints",
            )
        )
