"""The job worker's database work runs at its low priority: its own server processes are
reniced, and only when they are provably the server processes of its connections."""

from __future__ import annotations

import os
import time

from sqlalchemy import text

from app.db.backend_priority import is_local_backend, lower_local_backends
from app.db.engine import Database
from tests.conftest import DbHandle


def _backend(database: Database) -> tuple[int, float]:
    with database.connect() as conn:
        row = conn.execute(
            text(
                "SELECT pg_backend_pid(), extract(epoch FROM backend_start) "
                "FROM pg_stat_activity WHERE pid = pg_backend_pid()"
            )
        ).one()
    return int(row[0]), float(row[1])


def test_a_lowered_pool_renices_each_new_server_process(db: DbHandle) -> None:
    database = Database(db.database.urls, app_role=db.database.app_role, pool_size=1)
    try:
        lower_local_backends(database, 7)
        pid, _ = _backend(database)
        assert os.getpriority(os.PRIO_PROCESS, pid) == 7
        # another pool's server processes are not touched
        other, _ = _backend(db.database)
        assert other != pid and os.getpriority(os.PRIO_PROCESS, other) == 0
    finally:
        database.engine.dispose()


def test_only_a_process_that_matches_the_servers_record_counts_as_the_backend(
    db: DbHandle,
) -> None:
    pid, started = _backend(db.database)
    assert is_local_backend(pid, started, True)
    # a connection over a non-loopback address: the process may be another host's
    assert not is_local_backend(pid, started, False)
    # the same number with another start time: another process (a container, a remote host)
    assert not is_local_backend(pid, started - 3600, True)
    assert not is_local_backend(os.getpid(), time.time() - 3600, True)
    assert not is_local_backend(2**22 + 17, started, True)  # no such process
