"""Alembic owns the schema: round trip, least privilege, RLS, append-only audit.

Drift between the migrations and the committed catalog snapshot: test_schema_snapshot.py.
"""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import text

from app.db import migrate, snapshot
from tests import pg
from tests.conftest import DbHandle


def test_upgrade_downgrade_upgrade_round_trip(db: DbHandle, pg_server: pg.Server) -> None:
    """Every downgrade undoes its upgrade: back to an empty schema, then up again to the
    same catalog (compared as a snapshot on the embedded server, where the snapshot is
    taken)."""
    url = db.superuser_url
    assert migrate.current_revision(url) == migrate.head_revision()
    migrate.downgrade(url, app_role=pg.APP_ROLE, embedding_dim=384, revision="base")
    assert migrate.current_revision(url) is None
    with psycopg.connect(url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
        ).fetchone()
    assert left is not None and left[0] == 0
    migrate.upgrade(url, app_role=pg.APP_ROLE, embedding_dim=384)
    assert migrate.current_revision(url) == migrate.head_revision()
    if pg_server.kind == "embedded":
        again = snapshot.snapshot_of(url)
        assert again == snapshot.committed(), snapshot.diff(snapshot.committed(), again)


def test_revisions_are_date_named() -> None:
    names = [p.name for p in migrate.migrations_dir().joinpath("versions").glob("*.py")]
    assert names
    for name in names:
        assert name[:4].isdigit() and name[4] == "_", name


def test_legal_citations_share_one_lexeme(db: DbHandle) -> None:
    with psycopg.connect(db.superuser_url) as conn:
        forms = ["art. 56 EOV", "artikel 56 EOV", "EOV art. 56", "artikel 56 van het EOV"]
        vectors = {
            f: conn.execute(
                "SELECT ewall_nl_tsvector(%s)::text", (f,)
            ).fetchone()[0]  # type: ignore[index]
            for f in forms
        }
        assert len(set(vectors.values())) == 1, vectors
        assert "'art56eov'" in vectors["art. 56 EOV"]
        book = {
            conn.execute(
                "SELECT ewall_nl_tsvector(%s)::text", (f,)
            ).fetchone()[0]  # type: ignore[index]
            for f in ["artikel 6:162 BW", "6:162 BW", "BW art. 6:162", "art. 6:162 lid 1 BW"]
        }
        assert len(book) == 1 and "art6x162bw" in next(iter(book))
        # accents off, words cut to 7 letters (migration 20261203_0044)
        cut = conn.execute(
            "SELECT ewall_nl_tsvector('ongeëvenaarde uitvindingen')::text"
        ).fetchone()[0]  # type: ignore[index]
        assert cut == "'ongeeve':1 'uitvind':2"


def test_synonyms_apply_through_ts_rewrite(db: DbHandle) -> None:
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute(
            "INSERT INTO search_synonyms (term, synonym, created_by) VALUES ('octrooi', 'patent', 't')"
        )
        rewritten = conn.execute(
            "SELECT ts_rewrite(to_tsquery('ewall_nl', 'octrooi'), "
            "'SELECT target, substitute FROM search_synonym_rules')::text"
        ).fetchone()[0]  # type: ignore[index]
        assert "patent" in rewritten and "octrooi" in rewritten


def _app_conn(db: DbHandle) -> psycopg.Connection:
    return psycopg.connect(db.app_url)


def test_app_role_has_least_privilege(db: DbHandle) -> None:
    with _app_conn(db) as conn:
        row = conn.execute(
            "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert row == (False, False)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_retrievals SET query = 'x'",
        "DELETE FROM audit_retrievals",
        "TRUNCATE audit_retrievals",
        "UPDATE policy_events SET actor = 'x'",
        "DELETE FROM policy_events",
        "TRUNCATE gate_events",
        "DELETE FROM audit_retrieval_results",
        "DELETE FROM audit_heads",
        "DELETE FROM audit_access_sets",
        "UPDATE audit_access_sets SET members = '{}'",
    ],
)
def test_app_role_cannot_change_audit_rows(db: DbHandle, statement: str) -> None:
    with _app_conn(db) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(statement)


def test_guard_triggers_stop_even_the_owner(db: DbHandle) -> None:
    """The superuser owns the tables, yet the append-only triggers still refuse, also under
    session_replication_role = replica (ENABLE ALWAYS)."""
    from app.audit import chain

    with db.database.transaction() as conn:
        chain.append_policy_event(
            conn,
            {
                "event_id": __import__("uuid").uuid4(),
                "at": chain.now_utc(),
                "actor": "t",
                "action": "test",
                "object_type": "t",
                "object_id": "t",
                "reason": None,
                "details": {},
                "policy_version": 1,
            },
        )
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("SET session_replication_role = replica")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE policy_events SET actor = 'mallory'")
        conn.rollback()
        conn.execute("SET session_replication_role = replica")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("TRUNCATE policy_events")


def test_rls_returns_nothing_without_the_setting(db: DbHandle) -> None:
    with psycopg.connect(db.superuser_url) as su:
        su.execute(
            "INSERT INTO documents (source, external_id, status, doc_type, title, source_acl_id) "
            "VALUES ('t', 'd', 'active', 'other', 'D', 'public')"
        )
        su.execute(
            "INSERT INTO chunks (chunk_id, document_id, source, external_id, wall_group_id, "
            "source_acl_id, doc_type, ordinal, body, embedding, content_sha256, token_count) "
            "SELECT 't:d:1', document_id, 't', 'd', 'open', 'public', 'other', 0, 'tekst', "
            "array_fill(0.1, ARRAY[384])::vector, 'h', 1 FROM documents"
        )
    with _app_conn(db) as conn:
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
        conn.execute("SELECT set_config('ewall.allowed_wall_groups', '{open}', true)")
        # both sets are needed: wall groups alone are not enough
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
        conn.execute("SELECT set_config('ewall.allowed_source_acls', '{public}', true)")
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (1,)
        conn.execute("SELECT set_config('ewall.allowed_wall_groups', '{other}', true)")
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
        conn.rollback()
        # transaction-local: gone after the transaction
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO chunks (chunk_id, document_id, source, external_id, wall_group_id, "
                "source_acl_id, doc_type, ordinal, body, embedding, content_sha256, token_count) "
                "VALUES ('t:d:2', 1, 't', 'd', 'open', 'public', 'other', 1, 'x', "
                "array_fill(0.1, ARRAY[384])::vector, 'h2', 1)"
            )


def test_stats_follow_the_chunks(db: DbHandle) -> None:
    with db.database.transaction() as conn:
        conn.execute(text("SET LOCAL ROLE ewall_writer"))
        conn.execute(
            text(
                "INSERT INTO documents (source, external_id, status, doc_type, title, source_acl_id)"
                " VALUES ('t', 'd', 'active', 'other', 'D', 'public')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO chunks (chunk_id, document_id, source, external_id, wall_group_id, "
                "source_acl_id, doc_type, ordinal, body, embedding, content_sha256, token_count) "
                "SELECT 't:d:' || g, (SELECT document_id FROM documents), 't', 'd', "
                "CASE WHEN g % 2 = 0 THEN 'open' ELSE 'wg_x' END, 'public', 'other', g, "
                "'octrooi inventiviteit ' || g, array_fill(0.1, ARRAY[384])::vector, 'h' || g, 3 "
                "FROM generate_series(1, 10) AS g"
            )
        )
        sizes: dict[str, int] = dict(
            conn.execute(text("SELECT wall_group_id, n_chunks FROM wall_group_sizes")).all()
        )
        assert sizes == {"open": 5, "wg_x": 5}
        assert (
            conn.execute(text("SELECT ndoc FROM lexeme_stats WHERE lexeme = 'octrooi'")).scalar()
            == 10
        )
        conn.execute(text("UPDATE chunks SET wall_group_id = 'open' WHERE wall_group_id = 'wg_x'"))
        sizes = dict(
            conn.execute(text("SELECT wall_group_id, n_chunks FROM wall_group_sizes")).all()
        )
        assert sizes["open"] == 10 and sizes["wg_x"] == 0
        conn.execute(text("DELETE FROM chunks WHERE ordinal <= 4"))
        assert conn.execute(text("SELECT n_chunks FROM corpus_stats")).scalar() == 6
        assert (
            conn.execute(text("SELECT ndoc FROM lexeme_stats WHERE lexeme = 'octrooi'")).scalar()
            == 6
        )


def test_a_login_that_is_not_the_app_role_switches_to_it(db: DbHandle) -> None:
    """One URL for owner and service (docker-compose without a separate login): every pooled
    connection runs as the least-privilege role, so RLS and the audit grants still bind."""
    from app.db.engine import Database, DatabaseUrls

    shared = Database(
        DatabaseUrls(app=db.superuser_url, migrations=db.superuser_url), app_role=pg.APP_ROLE
    )
    try:
        with shared.transaction() as conn:
            assert conn.execute(text("SELECT current_user")).scalar() == pg.APP_ROLE
            assert conn.execute(text("SELECT count(*) FROM chunks")).scalar() == 0
        with (
            pytest.raises(Exception, match=r"append-only|permission denied"),
            shared.transaction() as conn,
        ):
            conn.execute(text("DELETE FROM policy_events"))
    finally:
        shared.dispose()
