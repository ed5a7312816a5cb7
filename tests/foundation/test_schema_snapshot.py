"""The migrations build exactly the committed catalog snapshot (migrations/schema.sql)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from app.cli import main
from app.db import snapshot
from app.settings import Settings
from tests import pg
from tests.conftest import DbHandle


def _snapshot_server_is(pg_server: pg.Server, settings: Settings) -> bool:
    """The test server is the one the snapshot is taken on, with the same role and dim."""
    return (
        pg_server.kind == "embedded"
        and pg.APP_ROLE == snapshot.SNAPSHOT_APP_ROLE
        and settings.embedding_dim == snapshot.SNAPSHOT_EMBEDDING_DIM
    )


def test_migrated_catalog_matches_the_committed_snapshot(
    db: DbHandle, pg_server: pg.Server, settings: Settings
) -> None:
    # db is a copy of the template that this session's migrations built from nothing
    if _snapshot_server_is(pg_server, settings):
        migrated = snapshot.snapshot_of(db.superuser_url)
    else:  # another server version or role would print a different catalog
        migrated = snapshot.scratch_snapshot()
    expected = snapshot.committed()
    if migrated != expected:
        pytest.fail(
            "The catalog the migrations build differs from migrations/schema.sql.\n"
            "When the change is intended, regenerate the snapshot and commit it:\n"
            f"    {snapshot.REGENERATE}\n\n" + snapshot.diff(expected, migrated),
            pytrace=False,
        )


def test_a_schema_change_shows_in_the_diff(db: DbHandle) -> None:
    before = snapshot.snapshot_of(db.superuser_url)
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("ALTER TABLE chunks ADD COLUMN drift_probe integer")
        conn.execute("REVOKE SELECT ON people FROM ewall_app")
    after = snapshot.snapshot_of(db.superuser_url)
    assert after != before
    shown = snapshot.diff(before, after)
    assert "+    drift_probe integer" in shown
    assert "-GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.people TO ewall_app;" in shown
    assert "migrations/schema.sql (committed)" in shown


def test_normalize_keeps_the_schema_and_drops_what_varies() -> None:
    dump = (
        "--\n-- PostgreSQL database dump\n--\n\n"
        "\\restrict Zx81kq\n\n"
        "-- Dumped from database version 18.6\n-- Dumped by pg_dump version 18.6\n\n"
        "SET statement_timeout = 0;\nSET client_encoding = 'UTF8';\n"
        "SELECT pg_catalog.set_config('search_path', '', false);\n\n"
        "--\n-- Name: t; Type: TABLE; Schema: public; Owner: -\n--\n\n"
        "CREATE TABLE public.t (\n    a integer   \n);\n\n\n"
        "--\n-- Name: TABLE t; Type: ACL; Schema: public; Owner: -\n--\n\n"
        "GRANT SELECT ON TABLE public.t TO ewall_app;\n\n\n"
        "--\n-- PostgreSQL database dump complete\n--\n\n\\unrestrict Zx81kq\n\n"
    )
    assert snapshot.normalize(dump) == (
        snapshot.HEADER
        + "\n-- TABLE public t\n\nCREATE TABLE public.t (\n    a integer\n);\n\n"
        + "-- ACL public TABLE t\n\nGRANT SELECT ON TABLE public.t TO ewall_app;\n"
    )
    other_run = dump.replace("Zx81kq", "Pq02aa").replace("18.6", "18.7")
    assert snapshot.normalize(other_run) == snapshot.normalize(dump)


def test_the_snapshot_command_regenerates_the_committed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "schema.sql"
    assert main(["schema", "snapshot", "--output", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    assert out.read_text(encoding="utf-8") == snapshot.committed()
