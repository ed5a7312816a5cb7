"""Signed checkpoints of the audit chains: what catches a rewrite of history from outside.

Inside the database a superuser can edit a row and recompute every later hash and the head;
the chain then verifies. A checkpoint is the heads (seq and hash of each chain) at one
moment, signed with an Ed25519 key kept outside the database and written to a directory the
database cannot reach. Verifying against checkpoints proves that the chain still extends
each of them: the row at the checkpoint's seq still has the checkpoint's hash (and the
chain verifies from the genesis through it), so any rewrite at or before a checkpoint is
caught, whatever the rewriter recomputed.

Files:
- the private key: PKCS#8 PEM, created with mode 0600 (refused if it exists already);
- the public key beside it (``<key>.pub``, SubjectPublicKeyInfo PEM): all a verifier needs;
- one JSON file per checkpoint, ``{"format", "created_at", "key_id", "chains": {chain:
  {"seq", "hash"}}, "signature"}``; the signature covers the canonical JSON of the rest.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy import Connection

from app.audit import repository
from app.audit.chain import CHAINS, canonical_json, iso, now_utc, verify_all, verify_all_after
from app.settings import Settings

FORMAT = "ewall-audit-checkpoint/1"
PATTERN = "checkpoint-*.json"


class CheckpointError(Exception):
    """A key or checkpoint that cannot be used (missing, unreadable, wrong kind)."""


def key_path(settings: Settings) -> Path:
    return settings.audit_checkpoint_key or settings.data_dir / "audit" / "checkpoint.key"


def checkpoint_dir(settings: Settings) -> Path:
    return settings.audit_checkpoint_dir or settings.data_dir / "audit" / "checkpoints"


def public_key_path(key_path: Path) -> Path:
    return key_path.with_name(key_path.name + ".pub")


def generate_key(key_path: Path) -> Path:
    """Create the private key (0600, never overwritten) and export its public key beside it.
    Returns the public key's path. Refused where the public key exists without it: the
    private key is kept elsewhere (checkpoints signed on another host) or was lost, and a
    new key's .pub written over it would leave every checkpoint of the old key unverifiable."""
    public = public_key_path(key_path)
    if public.exists():
        raise CheckpointError(
            f"the public key {public} exists without its private key {key_path}; a new key "
            "is not made over it (sign where that key is kept, or move the .pub aside to "
            "start a new key)"
        )
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    key_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: an existing key is never replaced (its checkpoints would stop verifying)
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise CheckpointError(f"{key_path} exists already; it is not replaced") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
            handle.flush()
            os.fsync(handle.fileno())
        _write_atomically(public, _public_pem(key.public_key()))
    except BaseException:
        # a full disk: no half-written key left behind (made by this call, O_EXCL), which
        # every later checkpoint would refuse as unreadable until a person removed it
        key_path.unlink(missing_ok=True)
        raise
    return public


def ensure_public_key(key_path: Path, key: Ed25519PrivateKey) -> None:
    """The key's .pub beside it, written when missing (a key made by hand, or a stop between
    the two files): checkpoints signed without it cannot be checked, and GET /v1/audit/verify
    answers not ok. A .pub of another key is refused: nothing it signs would verify."""
    public = public_key_path(key_path)
    if not public.exists():
        _write_atomically(public, _public_pem(key.public_key()))
        return
    if key_id(load_public_key(public)) != key_id(key.public_key()):
        raise CheckpointError(
            f"{public} is not the public key of {key_path}: checkpoints signed with it "
            "would not verify; nothing was signed"
        )


def signing_key(key_path: Path) -> tuple[Ed25519PrivateKey, Path | None]:
    """The key that signs checkpoints, made on first use (`generate_key`) with its .pub
    beside it (`ensure_public_key`), as `ewall audit checkpoint` and the service's schedule
    both take it; and the public key's path when it was made just now."""
    made = None if key_path.exists() else generate_key(key_path)
    key = load_private_key(key_path)
    ensure_public_key(key_path, key)
    return key, made


def load_private_key(key_path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"cannot read the signing key {key_path}: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise CheckpointError(f"{key_path} is not an Ed25519 private key")
    if key_path.stat().st_mode & 0o077:
        raise CheckpointError(f"{key_path} is readable by others; chmod 600 it")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"cannot read the public key {path}: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise CheckpointError(f"{path} is not an Ed25519 public key")
    return key


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def _public_pem(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _signed_bytes(payload: dict[str, Any]) -> bytes:
    return canonical_json(payload).encode("utf-8")


def listed(directory: Path) -> list[Path]:
    """The checkpoint files, listed BEFORE the caller's snapshot takes its first statement.

    A checkpoint appears whole (renamed into place) only after its writer's snapshot; one
    listed before this snapshot begins was therefore signed from rows committed before it,
    and this snapshot holds every row it names. Listed after, a checkpoint that another
    process (`ewall audit checkpoint` beside the API's verify, a second checkpoint run)
    signed meanwhile names rows this snapshot cannot see, and an intact chain was reported
    as history removed, or a checkpoint refused with advice to move the others away."""
    return sorted(directory.glob(PATTERN)) if directory.is_dir() else []


@dataclass(frozen=True)
class Written:
    path: Path
    heads: dict[str, dict[str, Any]]
    verified_from: str | None = None  # the checkpoint the rows were verified on from
    checked: int = 0  # rows read and hashed


def write_checkpoint(
    conn: Connection, key: Ed25519PrivateKey, directory: Path, *, incremental: bool = False
) -> Written:
    """Verify the chains and sign their heads. ``conn`` should be a repeatable-read
    transaction, so that the rows verified and the heads signed are one state, with no
    statement run in it yet (see ``listed``). A chain that does not verify is not signed.

    In full (the command) the chains are verified from the genesis. ``incremental`` (the
    service's hourly schedule) verifies only the rows after the newest checkpoint of this
    key that every chain still passes through: its rows were verified when it was signed,
    and a rewrite that recomputed the hashes from anywhere at or before it changes the hash
    at its position (refused, as in full). A row before it edited without its hash is left
    to the full verifications (GET /v1/audit/verify, the console, the schedule's daily full
    pass): a checkpoint pins positions and cannot make such an edit verify. A full pass
    over a year of a large firm's retrievals takes many minutes of one core, holding one
    snapshot on the primary all along; this reads an hour's rows."""
    # a chain rewritten consistently verifies from its genesis: only the checkpoints signed
    # before it show the rewrite, and a new one must not vouch for it (files of another key
    # are for `verify --checkpoints` to judge)
    newest: tuple[Path, dict[str, tuple[int, str]]] | None = None
    for path in listed(directory):
        earlier = check_checkpoint(conn, path, key.public_key())
        if earlier.signed and not earlier.ok:
            raise CheckpointError(
                f"the audit chain no longer passes through the checkpoint {path.name} "
                f"({earlier.problems[0]}); nothing was signed. After a restore of the "
                "database to an earlier point, move the checkpoints signed after that point "
                "out of the folder (keep them: they record what was lost)"
            )
        if earlier.ok and earlier.heads is not None:
            newest = (path, earlier.heads)
    start = newest[1] if incremental and newest is not None else None
    report = verify_all(conn) if start is None else verify_all_after(conn, start)
    if not report["ok"]:
        raise CheckpointError(
            f"the audit chain does not verify ({report.get('problem')}); nothing was signed"
        )
    heads = {
        name: {
            "seq": (0 if start is None else start[name][0]) + int(chain["checked"]),
            "hash": str(chain["head"]),
        }
        for name, chain in report["chains"].items()
    }
    at = now_utc()
    payload: dict[str, Any] = {
        "format": FORMAT,
        "created_at": iso(at),
        "key_id": key_id(key.public_key()),
        "chains": heads,
    }
    signature = key.sign(_signed_bytes(payload))
    document = {**payload, "signature": base64.b64encode(signature).decode("ascii")}
    seqs = "-".join(str(heads[name]["seq"]) for name in CHAINS)
    path = directory / f"checkpoint-{at.strftime('%Y%m%dT%H%M%S%fZ')}-{seqs}.json"
    _write_atomically(path, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())
    source = None if start is None or newest is None else newest[0].name
    return Written(path, heads, source, int(report["checked"]))


@dataclass
class CheckpointReport:
    file: str
    ok: bool
    created_at: str | None = None
    problems: list[str] = field(default_factory=list)
    signed: bool = False  # its signature verifies with the key it was checked against
    heads: dict[str, tuple[int, str]] | None = None  # each chain's (seq, hash), when signed

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "ok": self.ok, "created_at": self.created_at}
        if self.problems:
            out["problems"] = self.problems
        return out


def check_checkpoint(conn: Connection, path: Path, public: Ed25519PublicKey) -> CheckpointReport:
    """Is this checkpoint signed by ``public``, and does each chain still pass through it?"""
    report = CheckpointReport(path.name, False)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        payload = {k: document[k] for k in ("format", "created_at", "key_id", "chains")}
        signature = base64.b64decode(document["signature"], validate=True)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        report.problems.append(f"unreadable checkpoint: {type(exc).__name__}: {exc}")
        return report
    report.created_at = str(payload["created_at"])
    if payload["format"] != FORMAT:
        report.problems.append(f"unknown format {payload['format']!r}")
        return report
    try:
        public.verify(signature, _signed_bytes(payload))
    except InvalidSignature:
        report.problems.append(
            "the signature does not verify with this public key (forged or altered "
            f"checkpoint, or signed by key {payload['key_id']})"
        )
        return report
    report.signed = True
    chains = payload["chains"]
    if not isinstance(chains, dict) or set(chains) != set(CHAINS):
        report.problems.append("the checkpoint does not name every chain")
        return report
    report.heads = {
        name: (int(chains[name]["seq"]), str(chains[name]["hash"])) for name in CHAINS
    }
    for name in CHAINS:
        seq, expected = report.heads[name]
        if seq == 0:
            continue  # the chain was empty then: every history extends it
        stored = repository.hash_at(conn, name, seq)
        if stored is None:
            report.problems.append(
                f"{name}: row {seq} of the checkpoint is gone (history removed or renumbered)"
            )
        elif stored != expected:
            report.problems.append(
                f"{name}: row {seq} has hash {stored[:16]}... but the checkpoint signed "
                f"{expected[:16]}... (history at or before seq {seq} was rewritten)"
            )
    report.ok = not report.problems
    return report


def verify_with_checkpoints(
    conn: Connection, directory: Path, public: Ed25519PublicKey
) -> dict[str, Any]:
    """The plain verification plus every checkpoint in ``directory``. The chains verify from
    the genesis (plain) and pass through each checkpoint's hash (here), so they extend it.
    ``conn``: a repeatable-read transaction with no statement run in it yet (``listed``)."""
    files = listed(directory)
    out = verify_all(conn)
    reports = [check_checkpoint(conn, path, public) for path in files]
    out["checkpoints"] = [r.as_dict() for r in reports]
    bad = [r for r in reports if not r.ok]
    if not files:
        # a wrong path must not pass silently as "nothing contradicts the chain"
        out["ok"] = False
        out["checkpoint_problem"] = f"no checkpoint files ({PATTERN}) in {directory}"
    elif bad:
        out["ok"] = False
        out["checkpoint_problem"] = (
            f"{len(bad)} of {len(reports)} checkpoints fail, first {bad[0].file}: "
            f"{bad[0].problems[0]}"
        )
    return out


def verify_configured(conn: Connection, settings: Settings) -> dict[str, Any]:
    """What `ewall audit verify` and GET /v1/audit/verify answer: the plain verification and,
    when the configured checkpoint folder holds checkpoints, every one of them. A chain that
    a superuser rewrote and recomputed verifies on its own; answering ok while the folder
    this service signs into proves the rewrite told compliance the log was intact."""
    directory = checkpoint_dir(settings)
    if not directory.is_dir() or next(directory.glob(PATTERN), None) is None:
        return verify_all(conn)
    try:
        public = load_public_key(public_key_path(key_path(settings)))
    except CheckpointError as exc:
        # checkpoints that cannot be checked are no proof either way: fail closed
        out = verify_all(conn)
        out["ok"] = False
        out["checkpoint_problem"] = f"the checkpoints in {directory} cannot be checked: {exc}"
        return out
    return verify_with_checkpoints(conn, directory, public)

