"""The replica fences ask whether a wall not lifted begins or ends within a few seconds
(sql/audit.sql's append fence, sql/walls.sql's no_window_edge_since). A firm's walls pile up
(lifted, expired); the question must be two range scans of the partial indexes on the edges
(migration 20261215_0072), not a read of every wall on every replica append."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import Connection, event, text

from app.audit import chain
from app.db import sqlfiles
from tests.conftest import DbHandle
from tests.helpers import audit_entry

WALLS = 5_000
INDEXES = ("ix_walls_open_effective_from", "ix_walls_open_effective_until")


@pytest.fixture
def many_walls(db: DbHandle) -> DbHandle:
    """Walls of years: most begun long ago, some ended, others set to end in the coming
    years, a fifth lifted; none begins or ends within a day of now."""
    now = datetime.now(UTC)
    rows = []
    for i in range(WALLS):
        begun = now - timedelta(days=1 + i % 1_900)
        ended = begun + timedelta(days=1 + i % 2_500) if i % 2 == 0 else None
        if ended is not None and abs(ended - now) < timedelta(days=1):
            ended = None
        lifted = now - timedelta(days=1) if i % 5 == 0 else None
        rows.append((f"W-old-{i}", begun, ended, lifted, "cp@firm.nl" if lifted else None))
    with psycopg.connect(db.superuser_url, autocommit=True) as conn:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO walls (wall_id, kind, title, reason, effective_from,"
                " effective_until, created_by, lifted_at, lifted_by)"
                " VALUES (%s, 'exclusionary', 'old', 'history', %s, %s, 'cp@firm.nl', %s, %s)",
                rows,
            )
        conn.execute("ANALYZE walls")
    return db


def _plan(conn: Connection, statement: str, parameters: Any) -> str:
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    cursor.execute("EXPLAIN " + statement, parameters)
    return "\n".join(row[0] for row in cursor.fetchall())


def _reads_walls_by_the_edge_indexes(plan: str) -> None:
    assert not re.search(r"Seq Scan on walls\b", plan), plan
    for index in INDEXES:
        assert index in plan, plan


def test_the_grounding_fence_reads_walls_by_their_edges(many_walls: DbHandle) -> None:
    with many_walls.database.engine.connect() as conn:
        query = sqlfiles.query("walls.no_window_edge_since")
        compiled = query.compile(conn)
        at = datetime.now(UTC) - timedelta(seconds=5)
        plan = _plan(conn, str(compiled), {"at": at})
        _reads_walls_by_the_edge_indexes(plan)
        # and it still answers: nothing began or ended in the last five seconds
        assert conn.execute(query, {"at": at}).scalar_one() is True
        conn.rollback()


def test_the_replica_append_fence_reads_walls_by_their_edges(many_walls: DbHandle) -> None:
    captured: list[tuple[str, Any]] = []

    def capture(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool
    ) -> None:
        if "WITH fence AS MATERIALIZED" in statement:
            captured.append((statement, parameters))

    engine = many_walls.database.engine
    event.listen(engine, "before_cursor_execute", capture)
    try:
        with engine.connect() as conn:
            version = int(conn.execute(text("SELECT version FROM policy_state")).scalar_one())
            at = datetime.now(UTC) - timedelta(seconds=2)
            entry = audit_entry(at=at, policy_version=version, result_count=0)
            appended = chain.append_fenced_retrieval(
                conn, entry, [], chain.Fence((), ()), within_s=chain.APPEND_LAG_MAX_S
            )
            assert appended is not None  # no wall edge near now: the fence holds
            assert len(captured) == 1
            _reads_walls_by_the_edge_indexes(_plan(conn, *captured[0]))
            conn.rollback()
    finally:
        event.remove(engine, "before_cursor_execute", capture)
