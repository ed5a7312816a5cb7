"""A document delete that PostgreSQL fails to break a deadlock is run again, whole, like a
document write; before, DELETE /v1/documents answered 503 on the first such failure.

The deadlock, made deterministic: the delete removes the document row and, by its chunks'
statement trigger, updates the corpus statistics row. A side connection holds that row
(it never looks for deadlocks in time), waits until the delete's try waits for it, then asks
for the document row the try holds: the try's own deadlock check fails it. The side then
holds the document row until the next try waits for it, and lets go. Every step waits on
pg_blocking_pids, never on a clock."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens
from tests.helpers import ok, one_matter_firm, superuser_rows
from tests.replication import wait_for

BLOCKED_BY = (
    "SELECT a.pid FROM pg_stat_activity a WHERE a.datname = current_database() "
    "AND a.application_name = 'ewall' AND CAST(%s AS integer) = ANY(pg_blocking_pids(a.pid))"
)
WAITS_FOR = "SELECT CAST(%s AS integer) = ANY(pg_blocking_pids(CAST(%s AS integer)))"


def _blocked_by(db: DbHandle, pid: int) -> list[int]:
    return [int(r[0]) for r in superuser_rows(db, BLOCKED_BY, pid)]


def test_a_delete_that_loses_a_deadlock_is_deleted_on_its_next_try(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = one_matter_firm(client, auth, "alice@firm.nl", {"d-1": "Het octrooi is nietig."})
    admin = auth("admin@firm.nl", "admin")
    with psycopg.connect(db.superuser_url) as side, ThreadPoolExecutor(2) as pool:
        side.execute("SET deadlock_timeout = '10min'")
        side.execute("SELECT 1 FROM corpus_stats WHERE id = 1 FOR UPDATE")
        side_pid = side.info.backend_pid
        answer = pool.submit(client.delete, "/v1/documents/api/d-1", headers=admin)
        wait_for(lambda: bool(_blocked_by(db, side_pid)), "the delete to wait for the stats")
        (route_pid,) = _blocked_by(db, side_pid)
        take = pool.submit(
            side.execute,
            "SELECT 1 FROM documents WHERE source = 'api' AND external_id = 'd-1' FOR UPDATE",
        )
        take.result()  # granted once PostgreSQL failed the delete's try
        wait_for(
            lambda: answer.done() or bool(_blocked_by(db, side_pid)),
            "the delete to answer or try again",
        )
        side.rollback()
        response: Any = answer.result()
    assert route_pid
    body = ok(response)
    assert body["deleted"] is True
    assert superuser_rows(db, "SELECT count(*) FROM documents WHERE external_id = 'd-1'") == [(0,)]
    assert firm.documents_found("alice@firm.nl", "octrooi nietig") == []
