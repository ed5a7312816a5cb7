"""Writer mode is a role, not a setting; the reading policy hides suppressed chunks
(migration 20261202_0036), proven on raw connections of the service role."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import DbHandle

CHUNK = (
    "INSERT INTO chunks (chunk_id, document_id, source, external_id, wall_group_id, "
    "source_acl_id, doc_type, ordinal, body, embedding, content_sha256, token_count, suppressed) "
    "SELECT %s, document_id, 't', 'd', %s, 'public', 'other', %s, 'tekst', "
    "array_fill(0.1, ARRAY[384])::vector, %s, 1, %s FROM documents"
)


@pytest.fixture
def seeded(db: DbHandle) -> DbHandle:
    with psycopg.connect(db.superuser_url) as su:
        su.execute(
            "INSERT INTO documents (source, external_id, status, doc_type, title, source_acl_id) "
            "VALUES ('t', 'd', 'active', 'other', 'D', 'public')"
        )
        su.execute(CHUNK, ("t:d:1", "open", 0, "h1", False))
        su.execute(CHUNK, ("t:d:2", "wg_walled", 1, "h2", False))
        su.execute(CHUNK, ("t:d:3", "open", 2, "h3", True))
    return db


def test_the_old_setting_no_longer_opens_the_chunks(seeded: DbHandle) -> None:
    with psycopg.connect(seeded.app_url) as conn:
        conn.execute("SELECT set_config('ewall.writer', 'on', false)")
        conn.execute("SELECT set_config('ewall.allowed_wall_groups', '{open}', false)")
        conn.execute("SELECT set_config('ewall.allowed_source_acls', '{public}', false)")
        ids = [r[0] for r in conn.execute("SELECT chunk_id FROM chunks ORDER BY 1")]
        # neither the walled chunk nor the suppressed one
        assert ids == ["t:d:1"]
        # no write passes: an update reaches only visible rows, an insert is refused
        assert conn.execute("UPDATE chunks SET body = 'x' WHERE chunk_id <> 't:d:1'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(CHUNK, ("t:d:9", "open", 9, "h9", False))


def test_the_writer_role_writes_and_sees_every_chunk(seeded: DbHandle) -> None:
    with psycopg.connect(seeded.app_url) as conn:
        conn.execute("SET LOCAL ROLE ewall_writer")
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (3,)
        conn.execute(CHUNK, ("t:d:4", "open", 3, "h4", False))
        conn.execute("UPDATE chunks SET suppressed = false WHERE chunk_id = 't:d:3'")
        conn.commit()
        # LOCAL: after the commit the session is the service role again
        assert conn.execute("SELECT current_user").fetchone() == ("ewall_app",)
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)


def test_the_service_role_does_not_inherit_the_writer(db: DbHandle) -> None:
    with psycopg.connect(db.app_url) as conn:
        row = conn.execute(
            "SELECT pg_has_role('ewall_app', 'ewall_writer', 'USAGE'), "
            "pg_has_role('ewall_app', 'ewall_writer', 'SET'), "
            "(SELECT rolcanlogin FROM pg_roles WHERE rolname = 'ewall_writer'), "
            "(SELECT rolcanlogin FROM pg_roles WHERE rolname = 'ewall_audit_owner')"
        ).fetchone()
    assert row == (False, True, False, False)


def test_the_writer_holds_every_privilege_of_the_service_role(db: DbHandle) -> None:
    """A writing transaction also writes documents, runs and audit rows as the writer: a
    migration that grants the service role something must grant it to ewall_writer too."""
    query = (
        "SELECT c.relname, a.privilege_type FROM pg_class c, aclexplode(c.relacl) a "
        "WHERE c.relnamespace = 'public'::regnamespace AND a.grantee = %s::regrole "
        "UNION SELECT p.oid::regprocedure::text, a.privilege_type "
        "FROM pg_proc p, aclexplode(p.proacl) a "
        "WHERE p.pronamespace = 'public'::regnamespace AND a.grantee = %s::regrole"
    )
    with psycopg.connect(db.superuser_url) as conn:
        app = set(conn.execute(query, ("ewall_app", "ewall_app")).fetchall())
        writer = set(conn.execute(query, ("ewall_writer", "ewall_writer")).fetchall())
    assert app and app <= writer, sorted(app - writer)
