"""Crash-safe file writes for the evidence store, and the names it accepts.

Every evidence file is written to a temporary name, fsynced, renamed into place, and the
directory is fsynced (so the rename itself survives a power cut). A full disk becomes an
`EvidenceSpaceError` with a clear message, never a half-written file under the final name.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from judgecam.device.evidence_chain import EvidenceError, EvidenceSpaceError

logger = logging.getLogger(__name__)

_SAFE_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
_SPACE_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
TEMP_MARK = ".tmp-"


@dataclass(frozen=True)
class FileDigest:
    sha256: str
    size: int

    def as_json(self) -> dict[str, object]:
        return {"sha256": self.sha256, "size": self.size}


def digest_bytes(data: bytes) -> FileDigest:
    return FileDigest(hashlib.sha256(data).hexdigest(), len(data))


def digest_file(path: Path) -> FileDigest:
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    return FileDigest(digest, path.stat().st_size)


def safe_name(name: str, *, what: str = "file name") -> str:
    """A store-relative name: '/'-separated parts of letters, digits, '.', '_', '+', '-'.

    Refuses absolute paths, '..', empty parts and names starting with a dot, so a name can never
    leave the attempt's folder (path traversal) nor collide with temporary files.
    """
    parts = name.split("/")
    if not name or len(parts) > 4 or not all(_SAFE_PART.match(part) for part in parts):
        raise EvidenceError(f"unsafe {what} {name!r}: use letters, digits, '.', '_', '-' only")
    return name


def is_space_error(error: OSError) -> bool:
    return error.errno in _SPACE_ERRNOS


def space_error(path: Path, error: OSError) -> EvidenceSpaceError:
    return EvidenceSpaceError(
        f"evidence disk full while writing {path} ({error.strerror}); nothing already recorded "
        "was lost: free space on the evidence disk, then record again"
    )


@contextmanager
def translate_space_errors(path: Path) -> Iterator[None]:
    """Turn ENOSPC/EDQUOT into EvidenceSpaceError; other OS errors pass through."""
    try:
        yield
    except OSError as error:
        if is_space_error(error):
            raise space_error(path, error) from error
        raise


def fsync_dir(path: Path) -> None:
    """Make renames and new entries in `path` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with translate_space_errors(path):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a short write is not an error by itself)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def atomic_write(path: Path, data: bytes, *, sync_dir: bool = True, mode: int = 0o644) -> None:
    """Write `data` to `path` via temp name + fsync + rename (+ directory fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f"{TEMP_MARK}{path.name}.{secrets.token_hex(4)}")
    with translate_space_errors(path):
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            write_all(fd, data)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            temp.unlink(missing_ok=True)  # our own incomplete temp file, never evidence
            raise
        os.close(fd)
        os.replace(temp, path)
        if sync_dir:
            fsync_dir(path.parent)


def walk_files(root: Path) -> Iterator[Path]:
    """Every regular file below `root` (sorted, symlinks reported as files, not followed)."""
    if not root.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for dirname in [name for name in dirnames if (Path(dirpath) / name).is_symlink()]:
            yield Path(dirpath) / dirname  # a linked folder is never evidence: report it
        for filename in sorted(filenames):
            yield Path(dirpath) / filename
