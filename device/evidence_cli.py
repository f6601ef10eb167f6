"""`judgecam evidence ...` (verify, export, checkpoint, keygen, reindex, finalize, prune) and
`judgecam review DIR` (the local review page)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from judgecam.cli import UsageError

if TYPE_CHECKING:
    from judgecam.device.evidence import EvidenceStore

logger = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    evidence = subparsers.add_parser(
        "evidence",
        help="the tamper-evident evidence store: verify, export, sign, prune",
        description="Verify, export, sign (checkpoint) and prune the evidence of judged attempts.",
    )
    commands = evidence.add_subparsers(dest="evidence_command", metavar="ACTION", required=True)

    verify = commands.add_parser("verify", help="check every record and file (exit 0 if intact)")
    verify.add_argument("target", type=Path, help="store folder or export bundle (.zip)")
    verify.add_argument(
        "--public-key", type=Path, help="trusted public key: checkpoints must be signed by it"
    )
    verify.set_defaults(func=_verify)

    export = commands.add_parser("export", help="a self-contained, verifiable bundle (.zip)")
    export.add_argument("store", type=Path, metavar="DIR")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--attempt", metavar="ID", help="one attempt id")
    which.add_argument("--competitor", metavar="ID", help="every attempt of a competitor")
    export.add_argument("-o", "--output", type=Path, required=True, metavar="BUNDLE.zip")
    export.set_defaults(func=_export)

    checkpoint = commands.add_parser("checkpoint", help="sign the chain head (end of a round)")
    checkpoint.add_argument("store", type=Path, metavar="DIR")
    checkpoint.add_argument("--key", type=Path, required=True, help="Ed25519 private key (PEM)")
    checkpoint.set_defaults(func=_checkpoint)

    keygen = commands.add_parser("keygen", help="create an Ed25519 signing key (+ KEY.pub)")
    keygen.add_argument("key", type=Path, metavar="KEY")
    keygen.set_defaults(func=_keygen)

    reindex = commands.add_parser("reindex", help="rebuild the search index from the log")
    reindex.add_argument("store", type=Path, metavar="DIR")
    reindex.set_defaults(func=_reindex)

    finalize = commands.add_parser("finalize", help="mark a competition's results final")
    finalize.add_argument("store", type=Path, metavar="DIR")
    finalize.add_argument("--competition", required=True, metavar="ID")
    finalize.set_defaults(func=_finalize)

    prune = commands.add_parser("prune", help="delete the files of a FINAL competition")
    prune.add_argument("store", type=Path, metavar="DIR")
    prune.add_argument("--competition", required=True, metavar="ID")
    prune.add_argument("--yes", action="store_true", help="really delete (else: list only)")
    prune.set_defaults(func=_prune)

    demo = commands.add_parser("demo", help="fill a NEW store with synthetic attempts (try-out)")
    demo.add_argument("store", type=Path, metavar="DIR")
    demo.add_argument("--competitors", type=int, default=4)
    demo.set_defaults(func=_demo)

    review = subparsers.add_parser(
        "review",
        help="the review page: find attempts, step through frames, record decisions",
        description="Serve the local review page of an evidence store (waitress).",
    )
    review.add_argument("store", type=Path, metavar="DIR")
    review.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine)")
    review.add_argument("--port", type=int, default=8080)
    review.add_argument(
        "--password-file",
        type=Path,
        metavar="F",
        help="file holding the password (required unless the host is loopback)",
    )
    review.set_defaults(func=_review)


def _open_store(path: Path, **kwargs: object) -> EvidenceStore:
    from judgecam.device.evidence import EvidenceError, EvidenceStore
    from judgecam.device.evidence_log import LOG_NAME

    if not (path / LOG_NAME).is_file():
        raise UsageError(f"{path} is not an evidence store (no {LOG_NAME})")
    try:
        store = EvidenceStore(path, min_free_bytes=0, **kwargs)  # type: ignore[arg-type]
    except EvidenceError as error:
        raise UsageError(str(error)) from error
    for line in store.recovery.lines():
        print(f"recovered: {line}")
    return store


def _verify(args: argparse.Namespace) -> int:
    from judgecam.device.evidence import EvidenceError
    from judgecam.device.evidence_keys import load_public_key_hex
    from judgecam.device.evidence_verify import verify_bundle, verify_store

    target: Path = args.target
    try:
        trusted = load_public_key_hex(args.public_key) if args.public_key else None
        if target.is_dir():
            report = verify_store(target, trusted_key=trusted)
        elif target.is_file():
            report = verify_bundle(target, trusted_key=trusted)
        else:
            raise UsageError(f"{target} does not exist")
    except EvidenceError as error:
        raise UsageError(str(error)) from error
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


def _export(args: argparse.Namespace) -> int:
    from judgecam.device.evidence import EvidenceError
    from judgecam.device.evidence_export import export_bundle, select_attempts

    with _open_store(args.store) as store:
        try:
            ids = select_attempts(store, attempt_id=args.attempt, competitor_id=args.competitor)
            summary = export_bundle(store, ids, args.output)
        except EvidenceError as error:
            raise UsageError(str(error)) from error
    proof = "a signed checkpoint" if summary.signed else "the chain head (no signed checkpoint)"
    print(
        f"exported {len(summary.attempts)} attempts, {summary.files} files, chain seq "
        f"{summary.first_seq}..{summary.last_seq} up to {proof} -> {summary.path}"
    )
    return 0


def _checkpoint(args: argparse.Namespace) -> int:
    from judgecam.device.evidence import EvidenceError
    from judgecam.device.evidence_keys import fingerprint

    with _open_store(args.store, signing_key=args.key) as store:
        try:
            record = store.checkpoint()
        except EvidenceError as error:
            raise UsageError(str(error)) from error
    print(
        f"checkpoint seq {record.seq} signs seq 0..{record.content['covers_seq']} "
        f"(key {fingerprint(record.content['public_key'])})"
    )
    return 0


def _keygen(args: argparse.Namespace) -> int:
    from judgecam.device.evidence import EvidenceError
    from judgecam.device.evidence_keys import fingerprint, generate_key, load_public_key_hex

    try:
        public = generate_key(args.key)
    except EvidenceError as error:
        raise UsageError(str(error)) from error
    print(
        f"private key {args.key} (keep it secret), public key {public}, fingerprint "
        f"{fingerprint(load_public_key_hex(public))}"
    )
    return 0


def _reindex(args: argparse.Namespace) -> int:
    with _open_store(args.store, rebuild_index=True) as store:
        count = sum(1 for _ in store.records())
    print(f"index rebuilt from {count} records")
    return 0


def _finalize(args: argparse.Namespace) -> int:
    with _open_store(args.store) as store:
        record = store.mark_final(args.competition)
    print(f"competition {args.competition} marked final (record seq {record.seq})")
    return 0


def _prune(args: argparse.Namespace) -> int:
    from judgecam.device.evidence import EvidenceError

    with _open_store(args.store) as store:
        if not store.index.is_final(args.competition):
            raise UsageError(
                f"competition {args.competition!r} is not marked final; its "
                "evidence is kept (judgecam evidence finalize first)"
            )
        attempts = [
            a for a in store.find(competition=args.competition, limit=10**9) if not a.pruned
        ]
        if not args.yes:
            for attempt in attempts:
                print(f"would delete the files of {attempt.attempt_id}")
            print(f"{len(attempts)} attempts; nothing deleted (add --yes to delete)")
            return 0
        try:
            pruned = store.prune(args.competition)
        except EvidenceError as error:
            raise UsageError(str(error)) from error
    print(f"deleted the files of {len(pruned)} attempts; their records stay in the log")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from judgecam.device.evidence import EvidenceStore
    from judgecam.device.evidence_demo import fill_demo_store

    if args.store.exists() and any(args.store.iterdir()):
        raise UsageError(f"{args.store} is not empty; the demo only fills a new folder")
    with EvidenceStore(args.store, min_free_bytes=0) as store:
        ids = [f"2026DEMO{number:02d}" for number in range(1, args.competitors + 1)]
        records = fill_demo_store(store, ids, rounds=2)
    print(f"{len(records)} synthetic attempts in {args.store}; try `judgecam review {args.store}`")
    return 0


def _review(args: argparse.Namespace) -> int:
    from judgecam.device.webapp import is_loopback, make_access_secret, serve

    password: str | None = None
    if args.password_file is not None:
        try:
            password = args.password_file.read_text("utf-8").strip()
        except OSError as error:
            raise UsageError(f"cannot read {args.password_file}: {error.strerror}") from error
        if len(password) < 8:
            raise UsageError(f"the password in {args.password_file} is shorter than 8 characters")
    elif not is_loopback(args.host):
        raise UsageError(f"serving to {args.host} needs --password-file (the page is on the LAN)")
    store = _open_store(args.store)
    link_secret = None
    if password is None:
        password = link_secret = make_access_secret()
    serve(store, host=args.host, port=args.port, password=password, link_secret=link_secret)
    return 0
