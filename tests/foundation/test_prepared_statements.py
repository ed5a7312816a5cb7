"""Only the marked fixed statements are prepared, and what they bind is what the server reads.

The pool prepares the statements marked with ``sqlfiles.prepared`` (audit appends, query
analysis, access sets) once per connection; the search statement, whose custom plans depend
on its parameters, never; with ``EWALL_DB_PREPARE=false`` nothing is. The allowed wall groups
travel as one text[] literal (app/db/sqlfiles.py), which must reach the server as the same
array, whatever the ids contain.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Connection, text

from app.audit import chain
from app.db.engine import Database
from app.db.sqlfiles import text_array
from app.search import repository as search_repository
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, audit_entry

TRICKY = (
    "plain",
    "",
    "with space",
    'a "quoted" id',
    "back\\slash",
    "trailing\\",
    "comma,inside",
    "{braces}",
    "NULL",
    "null",
    "ünïcødé ✓",
    "line\nbreak",
)


def _prepared(conn: Connection) -> list[str]:
    return [str(r[0]) for r in conn.execute(text("SELECT statement FROM pg_prepared_statements"))]


@pytest.mark.parametrize("values", [(), ("one",), TRICKY, tuple(f"wg-{i}" for i in range(2000))])
def test_a_text_array_literal_reaches_the_server_as_the_same_array(
    db: DbHandle, values: tuple[str, ...]
) -> None:
    with db.database.transaction() as conn:
        got = conn.execute(
            text("SELECT CAST(:p AS text[]) AS a, cardinality(CAST(:p AS text[])) AS n"),
            {"p": text_array(values)},
        ).one()
    assert list(got.a) == list(values)
    assert got.n == len(values)


def test_the_rls_settings_carry_exactly_the_allowed_groups(db: DbHandle) -> None:
    from app.walls import repository as walls_repository

    with db.database.transaction() as conn:
        walls_repository.set_allowed_sets(conn, TRICKY, ["acl-1"])
        stored = conn.execute(
            text("SELECT CAST(current_setting('ewall.allowed_wall_groups') AS text[])")
        ).scalar_one()
    assert list(stored) == list(TRICKY)


def test_marked_statements_are_prepared_once_and_others_never(db: DbHandle) -> None:
    with db.database.transaction() as conn:
        for _ in range(10):  # beyond psycopg's usual auto-prepare threshold of 5
            search_repository.group_sizes(conn, text_array(("wg-1", "wg-2")), ["acl-1"])
            search_repository.list_synonyms(conn)
        prepared = _prepared(conn)
    assert len(prepared) == 1, prepared
    assert "FROM search_key_stats" in prepared[0]
    assert "search_synonyms" not in prepared[0]


def test_with_prepare_off_nothing_is_prepared(db: DbHandle) -> None:
    plain = Database(db.database.urls, app_role=db.database.app_role, prepare_marked=False)
    try:
        with plain.transaction() as conn:
            for _ in range(10):
                search_repository.group_sizes(conn, ["wg-1"], ["acl-1"])
            assert _prepared(conn) == []
    finally:
        plain.dispose()


def test_searches_prepare_their_fixed_statements_but_never_the_search_itself(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    firm.document(
        "d-1", "De huurder is de huur niet verschuldigd.", client_id="C-1", matter_id="M-1"
    )
    for mode in ("hybrid", "dense", "sparse") * 3:
        hits = firm.search("alice@firm.nl", "huur verschuldigd", mode=mode)["results"]
        assert [h["matter_id"] for h in hits] == ["M-1"]
    seen: list[str] = []
    # every pooled connection the searches may have used
    conns = [db.database.engine.connect() for _ in range(4)]
    try:
        for conn in conns:
            seen += _prepared(conn)
    finally:
        for conn in conns:
            conn.close()
    assert any("audit_retrievals" in s for s in seen), seen
    assert any("search_key_stats" in s and "query_tsq" in s for s in seen), seen  # analysis
    assert not any("dense AS MATERIALIZED" in s for s in seen), "a search statement was prepared"
    with db.database.connect() as conn:
        assert chain.verify_chain(conn, "retrievals").ok


def test_a_rolled_back_append_leaves_the_next_prepared_one_intact(db: DbHandle) -> None:
    def append(conn: Connection, n: int) -> Any:

        row = audit_entry(
            retrieval_id=uuid.UUID(f"00000000-0000-4000-8000-{n:012d}"),
            person_id="p",
            purpose="test",
            query="q",
            allowed_wall_groups=["wg-1"],
            source_principals=["everyone"],
            result_count=0,
        )
        return chain.append_retrieval(conn, row, [])

    with db.database.transaction() as conn:
        append(conn, 1)

    def rolled_back() -> None:
        with db.database.transaction() as conn:
            append(conn, 2)
            raise RuntimeError("roll back")

    with pytest.raises(RuntimeError, match="roll back"):
        rolled_back()
    with db.database.transaction() as conn:
        assert append(conn, 3).seq == 2
    with db.database.connect() as conn:
        report = chain.verify_chain(conn, "retrievals")
    assert report.ok and report.checked == 2


def _plans(conn: Connection, marker: str) -> tuple[int, int]:
    row = conn.execute(
        text(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE strpos(statement, :marker) > 0"
        ),
        {"marker": marker},
    ).one()
    return int(row.generic_plans), int(row.custom_plans)


@pytest.mark.parametrize("mode", ["auto", "force_custom_plan"])
def test_the_query_analysis_runs_its_generic_plan_and_nothing_after_it_does(
    db: DbHandle, mode: str
) -> None:
    """Planning the query analysis cost about 5 ms a search against 1-3 ms to run it, and
    PostgreSQL kept planning it (its generic plan is estimated dearer): it now runs its
    generic plan, planned once per connection. The statements after it plan as before."""
    with db.database.transaction() as conn:
        conn.execute(text("SELECT set_config('plan_cache_mode', :mode, true)"), {"mode": mode})
        for question in ("huur verschuldigd", "octrooi", '"de huurder" -kantoor OR pacht') * 4:
            search_repository.analyze_query(
                conn,
                query=question,
                wall_groups=text_array(("wg-1", "wg-2")),
                source_acl_ids=["acl-1"],
                common_df=0.25,
                match_budget=10_000,
                rank_lexeme_limit=16,
                synonym_weight=0.3,
            )
            after = conn.execute(text("SELECT current_setting('plan_cache_mode')")).scalar_one()
            assert after == mode
        assert _plans(conn, "WITH plain AS") == (12, 0)


def _analysis(conn: Connection, source_acl_ids: list[Any]) -> None:
    search_repository.analyze_query(
        conn,
        query="huur",
        wall_groups=text_array(("wg-1",)),
        source_acl_ids=source_acl_ids,
        common_df=0.25,
        match_budget=10_000,
        rank_lexeme_limit=16,
        synonym_weight=0.3,
    )


def test_the_generic_plan_ends_with_the_statement_even_when_it_fails_on_the_client(
    db: DbHandle,
) -> None:
    """A parameter the driver cannot send fails before the server sees the statement; the
    transaction goes on, and the next statement (a search's, whose plan folds a boolean
    parameter) must not run generic (a review)."""
    with db.database.transaction() as conn:
        with pytest.raises(Exception):  # noqa: B017, PT011 - psycopg's own, by version
            _analysis(conn, [object()])
        mode = conn.execute(text("SELECT current_setting('plan_cache_mode')")).scalar_one()
        assert mode == "auto"


def test_the_query_analysis_runs_in_autocommit_too(db: DbHandle) -> None:
    """Outside a transaction the mode kept for the way back is gone when it is read."""
    with db.database.engine.connect() as conn:
        auto = conn.execution_options(isolation_level="AUTOCOMMIT")
        for _ in range(2):
            _analysis(auto, ["acl-1"])
        mode = auto.execute(text("SELECT current_setting('plan_cache_mode')")).scalar_one()
        assert mode == "auto"


def test_a_connection_lost_in_the_analysis_reports_the_servers_error(db: DbHandle) -> None:
    """A backend terminated under the analysis (a failover, a restart) left the connection
    closed, and the restore after it raised "the connection is closed" in place of the
    server's reason (a review)."""
    locked, found = threading.Event(), threading.Event()

    def terminate_the_waiting_analysis() -> None:
        with psycopg.connect(db.superuser_url) as holder, psycopg.connect(
            db.superuser_url, autocommit=True
        ) as killer:
            holder.execute("LOCK TABLE search_key_stats IN ACCESS EXCLUSIVE MODE")
            locked.set()
            while not found.is_set():  # until the analysis waits on the lock
                row = killer.execute(
                    "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE '%WITH plain AS%'"
                ).fetchone()
                if row:
                    killer.execute("SELECT pg_terminate_backend(%s)", (row[0],))
                    found.set()
                else:
                    killer.execute("SELECT pg_sleep(0.02)")
            holder.rollback()

    with db.database.connect() as conn:
        conn.execute(text("SELECT 1"))
        thread = threading.Thread(target=terminate_the_waiting_analysis)
        thread.start()
        try:
            assert locked.wait(60)
            with pytest.raises(Exception, match="terminating connection"):
                _analysis(conn, ["acl-1"])
        finally:
            found.set()
            thread.join()
