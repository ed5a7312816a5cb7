"""The service signs audit checkpoints by itself (app/audit/schedule.py).

Before, only `ewall audit checkpoint` on an operator's cron took them: a default deployment
had none, and a superuser who rewrote a row and recomputed the chain and its head left a log
that every verification reported intact."""

from __future__ import annotations

import stat
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from app.audit import checkpoints
from app.audit.schedule import FULL_EVERY_S, CheckpointSchedule
from app.db.locks import LockNamespace
from app.settings import Settings
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm
from tests.search.test_audit_chain import (
    _tamper,
    audited,  # noqa: F401 (fixture)
)
from tests.search.test_audit_checkpoints import _rewrite_history

HOUR = 3600.0


def _settings(tmp_path: Path, interval_s: float = HOUR) -> Settings:
    return make_settings(
        audit_checkpoint_key=tmp_path / "keys" / "audit.key",
        audit_checkpoint_dir=tmp_path / "checkpoints",
        audit_checkpoint_interval_s=interval_s,
    )


def _files(tmp_path: Path) -> list[Path]:
    return checkpoints.listed(tmp_path / "checkpoints")


def test_the_default_is_a_checkpoint_an_hour() -> None:
    assert Settings.model_fields["audit_checkpoint_interval_s"].default == HOUR


def test_a_checkpoint_is_taken_when_due_and_the_chains_moved(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
    embedder: Any,
    auth: Tokens,
) -> None:
    settings = _settings(tmp_path)
    schedule = CheckpointSchedule(settings, db.database)
    first = schedule.run_once()  # none yet: due at once; the key is made on first use
    assert first is not None and _files(tmp_path) == [first]
    key = tmp_path / "keys" / "audit.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert schedule.run_once() is None  # not an hour old
    later = time.time() + HOUR + 1
    assert schedule.run_once(now=later) is None  # an hour old, but nothing was appended
    audited.search("alice@firm.nl", "octrooi nietig", k=3)
    second = schedule.run_once(now=later)
    assert second is not None and _files(tmp_path) == [first, second]

    # a superuser rewrites row 3 and recomputes the chain: the scheduled checkpoints show it
    _rewrite_history(db, 3)
    with make_client(db, settings, embedder) as client:
        answer = client.get("/v1/audit/verify", headers=auth("co@firm.nl", "compliance"))
    assert answer.status_code == 200 and answer.json()["ok"] is False
    assert first.name in answer.json()["checkpoint_problem"]
    # and no scheduled checkpoint vouches for the rewrite
    audited.search("alice@firm.nl", "inventiviteit", k=3)
    with pytest.raises(checkpoints.CheckpointError, match="no longer passes through"):
        schedule.run_once(now=later + HOUR + 1)
    assert _files(tmp_path) == [first, second]


def test_one_process_at_a_time_takes_it(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
) -> None:
    schedule = CheckpointSchedule(_settings(tmp_path), db.database)
    with psycopg.connect(db.superuser_url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s, 0)", (int(LockNamespace.CHECKPOINT),))
        assert schedule.run_once() is None
        assert _files(tmp_path) == []
        # released before the look, not by closing: a closed connection's backend lets go
        # of its locks when it exits, which a loaded machine runs after the next statement
        other.execute("SELECT pg_advisory_unlock(%s, 0)", (int(LockNamespace.CHECKPOINT),))
    assert schedule.run_once() is not None


def test_the_service_takes_them_on_its_own(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
    embedder: Any,
) -> None:
    """The process that runs the re-tag worker runs the schedule (a short interval here)."""
    settings = _settings(tmp_path, interval_s=0.1)
    with make_client(db, settings, embedder, start_worker=True):
        deadline = time.monotonic() + 120  # a bound on a condition, not a pause
        while not _files(tmp_path):
            assert time.monotonic() < deadline, "no checkpoint was taken"
            time.sleep(0.05)
    public = checkpoints.load_public_key(tmp_path / "keys" / "audit.key.pub")
    with db.database.engine.connect() as conn:
        assert checkpoints.check_checkpoint(conn, _files(tmp_path)[0], public).ok


def test_a_look_reads_the_rows_since_the_newest_checkpoint_and_all_of_them_daily(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An hourly full verification of a large log held one snapshot on the primary for
    minutes and read a year's rows every hour: the looks in between verify the rows after
    the newest checkpoint, and a full pass a day finds what that cannot (a row before it
    edited without its hash)."""
    caplog.set_level("INFO", logger="ewall.audit")
    schedule = CheckpointSchedule(_settings(tmp_path), db.database)

    def written() -> Any:
        (record,) = [r for r in caplog.records if r.getMessage() == "audit checkpoint written"]
        caplog.clear()
        return record

    t0 = time.time()
    first = schedule.run_once(now=t0)
    assert first is not None
    assert written().verified == "from the genesis"  # the process's first: in full
    audited.search("alice@firm.nl", "octrooi nietig", k=3)
    second = schedule.run_once(now=t0 + HOUR + 1)
    assert second is not None
    record = written()
    assert (record.verified, record.rows) == (first.name, 1)  # the one retrieval since

    # a row before the checkpoints edited without its hash: no position's hash moves, so
    # the hourly look cannot see it; the daily full pass refuses to sign
    _tamper(db, "UPDATE audit_retrievals SET query = 'nothing to see' WHERE seq = 2")
    audited.search("alice@firm.nl", "inventiviteit", k=3)
    with pytest.raises(checkpoints.CheckpointError, match="does not verify"):
        schedule.run_once(now=t0 + FULL_EVERY_S + 1)
    assert _files(tmp_path) == [first, second]


def test_a_clock_set_back_since_the_full_pass_does_not_put_off_the_next(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A host whose clock ran two days ahead took its full pass then; once the clock was set
    right, every look read as less than a day after it, and only incremental looks ran until
    the clock caught up (three days without a full pass): a look dated before the last full
    pass verifies in full."""
    caplog.set_level("INFO", logger="ewall.audit")
    schedule = CheckpointSchedule(_settings(tmp_path), db.database)
    ahead = time.time() + 2 * FULL_EVERY_S
    assert schedule.run_once(now=ahead) is not None
    audited.search("alice@firm.nl", "octrooi nietig", k=3)
    caplog.clear()
    # set right: an hour after the file was written, by the file system's clock
    assert schedule.run_once(now=time.time() + HOUR + 5) is not None
    (record,) = [r for r in caplog.records if r.getMessage() == "audit checkpoint written"]
    assert getattr(record, "verified", None) == "from the genesis"
