"""Ed25519 keys for signed checkpoints of the evidence chain (`cryptography`).

A checkpoint signs the statement "store S had head hash H at seq N". Anyone holding the public
key (its fingerprint published by the organiser) can then check that nothing up to seq N was
altered, deleted or inserted afterwards — even on another machine, from an export bundle.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from judgecam.device.evidence_chain import EvidenceError, canonical_json, sha256_hex
from judgecam.device.evidence_files import atomic_write

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

logger = logging.getLogger(__name__)

CHECKPOINT_PURPOSE = "judgecam-evidence-checkpoint"


def public_key_path(private_path: Path) -> Path:
    return private_path.with_name(private_path.name + ".pub")


def generate_key(private_path: Path) -> Path:
    """Write a new private key (PEM, mode 0600) and its public key beside it; return the latter."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if private_path.exists():
        raise EvidenceError(f"{private_path} exists; refusing to overwrite a signing key")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    atomic_write(private_path, private_pem, mode=0o600)
    os.chmod(private_path, 0o600)
    public_path = public_key_path(private_path)
    atomic_write(public_path, public_pem)
    return public_path


def load_private_key(path: Path) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise EvidenceError(f"cannot read signing key {path}: {error}") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise EvidenceError(f"{path} is not an Ed25519 private key")
    return key


def load_public_key_hex(path: Path) -> str:
    """The raw public key (hex) from a PEM public key file, or from a private key file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        data = path.read_bytes()
    except OSError as error:
        raise EvidenceError(f"cannot read key {path}: {error.strerror}") from error
    if b"PRIVATE KEY" in data:
        return public_key_hex(load_private_key(path))
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError as error:
        raise EvidenceError(f"cannot read public key {path}: {error}") from error
    if not isinstance(key, Ed25519PublicKey):
        raise EvidenceError(f"{path} is not an Ed25519 public key")
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def public_key_hex(key: Ed25519PrivateKey) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw.hex()


def public_key_pem(public_hex: str) -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex))
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def fingerprint(public_hex: str) -> str:
    """A short, readable fingerprint of a public key, to compare with the published one."""
    digest = sha256_hex(bytes.fromhex(public_hex))[:32]
    return ":".join(digest[i : i + 4] for i in range(0, 32, 4))


def checkpoint_message(store_id: str, covers_seq: int, covers_hash: str) -> bytes:
    return canonical_json(
        {
            "hash": covers_hash,
            "purpose": CHECKPOINT_PURPOSE,
            "seq": covers_seq,
            "store_id": store_id,
        }
    )


def sign_checkpoint(
    key: Ed25519PrivateKey, store_id: str, covers_seq: int, covers_hash: str
) -> str:
    return key.sign(checkpoint_message(store_id, covers_seq, covers_hash)).hex()


def signature_is_valid(
    public_hex: str, signature_hex: str, store_id: str, covers_seq: int, covers_hash: str
) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex))
        key.verify(
            bytes.fromhex(signature_hex), checkpoint_message(store_id, covers_seq, covers_hash)
        )
    except (InvalidSignature, ValueError):
        return False
    return True
