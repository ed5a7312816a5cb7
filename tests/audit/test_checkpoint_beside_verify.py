"""Signed checkpoints while another process verifies or signs.

`ewall audit checkpoint` (a cron job on one host) and GET /v1/audit/verify (any API process),
or two checkpoint runs, each read the chains in one repeatable-read snapshot and then look at
the checkpoint folder. Listed after the snapshot, a checkpoint that the other process signed
meanwhile names a row this snapshot cannot see: the verify answered that the intact log had
lost that row ("history removed or renumbered"), and a checkpoint run refused to sign, with
advice to move the other checkpoints out of the folder. The folder is listed before the
snapshot's first statement now.

The verifying side is held inside its snapshot by a lock on gate_events (the last chain it
reads) until a policy change has committed and another checkpoint has been signed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, create_engine, text

from app.audit import chain, checkpoints
from app.db.engine import begin_snapshot, sqlalchemy_url
from tests.conftest import DbHandle, make_settings
from tests.helpers import lock_waiters, policy_event


def _policy_event(conn: Connection, n: int) -> None:
    chain.append_policy_event(
        conn, policy_event(object_id=f"W-{n}", details={"n": n}, policy_version=n)
    )


def _wait_for_a_lock_waiter(db: DbHandle) -> None:
    deadline = time.monotonic() + 60  # a bound on a condition, not a pause
    while not lock_waiters(db):
        assert time.monotonic() < deadline, "the verifying side never reached gate_events"
        time.sleep(0.02)


@pytest.mark.parametrize("side", ["verify", "checkpoint"])
def test_a_checkpoint_signed_during_another_snapshot_is_no_loss(
    db: DbHandle, tmp_path: Path, side: str
) -> None:
    key_file = tmp_path / "keys" / "audit.key"
    folder = tmp_path / "checkpoints"
    settings = make_settings(audit_checkpoint_key=key_file, audit_checkpoint_dir=folder)
    checkpoints.generate_key(key_file)
    key = checkpoints.load_private_key(key_file)
    with db.database.transaction() as conn:
        _policy_event(conn, 1)
    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        checkpoints.write_checkpoint(conn, key, folder)  # the folder holds one already

    def verify(conn: Connection) -> Any:
        return checkpoints.verify_configured(conn, settings)

    def sign(conn: Connection) -> Any:
        return checkpoints.write_checkpoint(conn, key, folder)

    work: Callable[[Connection], Any] = verify if side == "verify" else sign
    outcome: list[Any] = []

    def run() -> None:
        try:
            with db.database.engine.connect() as conn:
                begin_snapshot(conn)
                outcome.append(work(conn))
        except Exception as exc:  # reported by the assertion below
            outcome.append(exc)

    su_engine = create_engine(sqlalchemy_url(db.superuser_url))
    try:
        with su_engine.connect() as su:
            # the other side reads retrievals and policy (its snapshot is taken), then waits
            su.execute(text("LOCK TABLE gate_events IN ACCESS EXCLUSIVE MODE"))
            other = threading.Thread(target=run)
            other.start()
            _wait_for_a_lock_waiter(db)
            with db.database.transaction() as conn:
                _policy_event(conn, 2)  # a wall change, committed meanwhile
            # the cron's checkpoint, signed meanwhile (its rows as committed now)
            signed = checkpoints.write_checkpoint(su, key, folder)
            assert signed.heads["policy"]["seq"] == 2
            su.rollback()
            other.join(60)
            assert not other.is_alive()
    finally:
        su_engine.dispose()

    result = outcome[0]
    assert not isinstance(result, Exception), result
    if side == "verify":
        assert result["ok"], result
    else:
        assert result.heads["policy"]["seq"] == 1
    # and the folder agrees with the chains now, every checkpoint included
    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        now = checkpoints.verify_configured(conn, settings)
    assert now["ok"] and len(now["checkpoints"]) == (2 if side == "verify" else 3), now
