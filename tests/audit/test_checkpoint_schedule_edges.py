"""The scheduled audit checkpoint (app/audit/schedule.py) at its edges: a folder whose newest
file is dated ahead of the clock, a public key whose private key is kept elsewhere, and a
look that fails inside its lock."""

from __future__ import annotations

import errno
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, text

from app.audit import checkpoints
from app.audit import repository as audit_repository
from app.audit.schedule import CheckpointSchedule
from app.db.engine import begin_snapshot
from app.db.locks import LockNamespace
from app.settings import Settings
from tests.audit.test_checkpoint_schedule import HOUR, _files, _settings
from tests.conftest import DbHandle
from tests.helpers import Firm, superuser_rows
from tests.search.test_audit_chain import audited  # noqa: F401 (fixture)

DAY = 24 * HOUR


def _verified(db: DbHandle, settings: Settings) -> dict[str, Any]:
    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        try:
            return checkpoints.verify_configured(conn, settings)
        finally:
            conn.rollback()


def test_a_checkpoint_dated_ahead_of_the_clock_does_not_stop_the_schedule(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
) -> None:
    """A host whose clock ran a day ahead (a wrong clock at boot, set right later by NTP)
    left its newest checkpoint dated tomorrow. Read as "an hour has not passed since", the
    schedule signed nothing, without a word, until the clock caught up."""
    schedule = CheckpointSchedule(_settings(tmp_path), db.database)
    ahead = schedule.run_once()
    assert ahead is not None
    tomorrow = time.time() + DAY
    # named and dated as that host's clock had it
    stamp = datetime.fromtimestamp(tomorrow, UTC).strftime("%Y%m%dT%H%M%S%fZ")
    ahead = ahead.rename(
        ahead.with_name(re.sub(r"checkpoint-[0-9TZ]+-", f"checkpoint-{stamp}-", ahead.name))
    )
    os.utime(ahead, (tomorrow, tomorrow))
    assert _files(tmp_path) == [ahead]
    audited.search("alice@firm.nl", "octrooi nietig", k=3)  # the chains moved
    taken = schedule.run_once()
    assert taken is not None and taken in _files(tmp_path)
    # and the new one is the fresh one: nothing more within the interval
    audited.search("alice@firm.nl", "inventiviteit", k=3)
    assert schedule.run_once() is None


def test_a_checkpoint_dated_a_little_ahead_still_counts(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
) -> None:
    """A file server whose clock runs minutes ahead dates every checkpoint so: passed over,
    each look would sign another while the chains move."""
    schedule = CheckpointSchedule(_settings(tmp_path), db.database)
    first = schedule.run_once()
    assert first is not None
    soon = time.time() + 600
    os.utime(first, (soon, soon))
    audited.search("alice@firm.nl", "octrooi nietig", k=3)
    assert schedule.run_once() is None
    assert _files(tmp_path) == [first]


def test_a_public_key_whose_private_key_is_elsewhere_is_never_replaced(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
) -> None:
    """Checkpoints signed on another host (cron, the private key kept there) and only the
    .pub at the configured key's path, for GET /v1/audit/verify: the schedule made a new
    key, wrote its .pub over the operator's and signed with it, so every checkpoint of the
    real key stopped verifying."""
    settings = _settings(tmp_path)
    key = checkpoints.key_path(settings)
    public = checkpoints.generate_key(key)
    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        try:
            checkpoints.write_checkpoint(
                conn, checkpoints.load_private_key(key), checkpoints.checkpoint_dir(settings)
            )
        finally:
            conn.rollback()
    key.rename(tmp_path / "elsewhere.key")  # the signing host keeps it
    anchor = public.read_bytes()
    signed = _files(tmp_path)
    assert _verified(db, settings)["ok"] is True
    audited.search("alice@firm.nl", "octrooi nietig", k=3)
    schedule = CheckpointSchedule(settings, db.database)
    with pytest.raises(checkpoints.CheckpointError, match="public key"):
        schedule.run_once(now=time.time() + HOUR + 1)
    assert not key.exists()
    assert public.read_bytes() == anchor
    assert _files(tmp_path) == signed
    assert _verified(db, settings)["ok"] is True


def _checkpoint_locks(db: DbHandle) -> list[tuple[Any, ...]]:
    return superuser_rows(
        db,
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objid = 0",
        int(LockNamespace.CHECKPOINT),
    )


def test_a_look_that_fails_inside_the_lock_gives_the_lock_back(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A statement of the look failed on the lock's connection (its transaction aborted):
    the unlock failed as well, the connection went back to the pool still holding the
    session lock, and every later look found "another process holds it" and signed nothing,
    without a word."""
    real_heads = audit_repository.heads

    def failing_heads(conn: Connection) -> dict[str, tuple[int, str]]:
        conn.execute(text("SELECT 1 / 0"))  # PostgreSQL fails it: division_by_zero
        raise AssertionError("unreachable")

    monkeypatch.setattr(audit_repository, "heads", failing_heads)
    schedule = CheckpointSchedule(_settings(tmp_path), db.database)
    with pytest.raises(Exception, match="division by zero"):
        schedule.run_once()
    assert _checkpoint_locks(db) == []
    monkeypatch.setattr(audit_repository, "heads", real_heads)
    assert schedule.run_once() is not None


def test_a_key_without_its_public_key_gets_it_back(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
) -> None:
    """A key made by hand, or a stop between the key and its .pub: the schedule signed
    checkpoints that nothing could check, and GET /v1/audit/verify answered not ok for a log
    nobody touched."""
    settings = _settings(tmp_path)
    key = checkpoints.key_path(settings)
    public = checkpoints.generate_key(key)
    public.unlink()
    schedule = CheckpointSchedule(settings, db.database)
    assert schedule.run_once() is not None
    assert checkpoints.key_id(checkpoints.load_public_key(public)) == checkpoints.key_id(
        checkpoints.load_private_key(key).public_key()
    )
    assert _verified(db, settings)["ok"] is True


def test_a_public_key_of_another_key_signs_nothing(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path)
    key = checkpoints.key_path(settings)
    public = checkpoints.generate_key(key)
    other = checkpoints.generate_key(tmp_path / "other.key")
    public.write_bytes(other.read_bytes())
    schedule = CheckpointSchedule(settings, db.database)
    with pytest.raises(checkpoints.CheckpointError, match="is not the public key"):
        schedule.run_once()
    assert _files(tmp_path) == []


class _FullDisk:
    """A file whose every write fails as on a full disk."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.close()

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_leaves_no_half_written_key(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The key's file was made (O_EXCL) and its write failed: an empty key stayed, and every
    later look refused it as unreadable, after the disk had room again, until a person
    removed it."""
    real_fdopen = os.fdopen

    def full_once(fd: int, *args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(os, "fdopen", real_fdopen)  # the next open writes again
        return _FullDisk(real_fdopen(fd, *args, **kwargs))

    monkeypatch.setattr(os, "fdopen", full_once)
    settings = _settings(tmp_path)
    schedule = CheckpointSchedule(settings, db.database)
    with pytest.raises(OSError, match=os.strerror(errno.ENOSPC)):
        schedule.run_once()
    assert not checkpoints.key_path(settings).exists()
    assert schedule.run_once() is not None
    assert _verified(db, settings)["ok"] is True
