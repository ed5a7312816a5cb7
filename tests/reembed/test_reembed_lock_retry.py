"""A re-embed's schema steps take a brief ACCESS EXCLUSIVE lock under a lock timeout, so a
long transaction on chunks is never queued behind them; when the lock is not had in time
the step is tried again (the driver's own error, raised on the raw cursor that runs DDL,
was let through: the run died with a traceback at the first busy moment)."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import psycopg
import pytest

from app.reembed.service import Reembedder, cancel
from tests.conftest import DbHandle
from tests.reembed.test_reembed import tiny, tiny_path  # noqa: F401 (fixtures)

GUARD_S = 120  # a bound against a hang, never a timed assertion


def test_a_schema_step_waits_out_a_busy_table(
    db: DbHandle, tiny: Any, caplog: pytest.LogCaptureFixture  # noqa: F811
) -> None:
    reembedder = Reembedder(db.database, tiny, lock_timeout_ms=50, switch_attempts=10_000)
    run = reembedder.start("test")
    failed: list[BaseException] = []

    def prepare() -> None:
        try:
            reembedder.prepare(run)
        except BaseException as exc:  # reported by the test
            failed.append(exc)

    with caplog.at_level(logging.INFO, logger="ewall"):
        with psycopg.connect(db.superuser_url) as busy:
            busy.execute("LOCK TABLE chunks IN ACCESS SHARE MODE")  # a long reader
            worker = threading.Thread(target=prepare)
            worker.start()
            deadline = time.monotonic() + GUARD_S
            while not any("retrying" in r.getMessage() for r in caplog.records):
                assert not failed, failed
                assert worker.is_alive(), "prepare ended while the table was busy"
                assert time.monotonic() < deadline, "no retry was logged"
                time.sleep(0.05)
            busy.rollback()  # the reader ends: the step gets its lock
        worker.join(timeout=GUARD_S)
    assert not worker.is_alive() and not failed, failed
    with psycopg.connect(db.superuser_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = 'chunks'::regclass"
            " AND attname = 'embedding_next' AND NOT attisdropped"
        ).fetchone()
    assert row == (1,)
    cancel(db.database)
