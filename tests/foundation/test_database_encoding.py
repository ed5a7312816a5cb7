"""A database that is not encoded UTF8 is refused before anything is migrated or served.

On LATIN1 the migrations stopped half-way (revision 0060 raised "requested character too
large for encoding", the first sixty stayed applied); on SQL_ASCII the driver got bytes and
SQLAlchemy raised a TypeError before the first revision. Databases here are made as an
operator would make them by mistake, on the tests' real server: ``CREATE DATABASE ...
ENCODING ... TEMPLATE template0``.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg import sql

from app.cli import main
from app.db.engine import Database, DatabaseUrls
from app.main import create_app
from app.settings import Settings, get_settings
from tests import pg
from tests.conftest import TEST_DEV_SECRET

ENCODINGS = ("LATIN1", "SQL_ASCII")


@pytest.fixture(params=ENCODINGS)
def encoded(request: pytest.FixtureRequest, pg_server: pg.Server) -> Iterator[tuple[str, str]]:
    """(database name, encoding) of a fresh database that is not UTF8."""
    encoding: str = request.param
    name = f"t_enc_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.admin_url, autocommit=True) as conn:
        # LOCALE 'C' goes with every encoding; the server's own (C.UTF-8) only with UTF8
        conn.execute(
            sql.SQL("CREATE DATABASE {} ENCODING {} LOCALE 'C' TEMPLATE template0").format(
                sql.Identifier(name), sql.Literal(encoding)
            )
        )
    try:
        yield name, encoding
    finally:
        pg.drop_database(pg_server, name)


@pytest.fixture
def env(
    encoded: tuple[str, str], pg_server: pg.Server, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str]]:
    name, _ = encoded
    monkeypatch.setenv("EWALL_DATABASE_URL", pg_server.url_for(name, pg.APP_ROLE, pg.APP_PASSWORD))
    monkeypatch.setenv("EWALL_MIGRATIONS_DATABASE_URL", pg_server.url_for(name))
    monkeypatch.setenv("EWALL_DEV_SECRET", TEST_DEV_SECRET)  # serve asks for one beside a URL
    monkeypatch.setenv("EWALL_LOG_JSON", "false")
    monkeypatch.setenv("EWALL_LOG_LEVEL", "WARNING")
    get_settings.cache_clear()
    yield encoded
    get_settings.cache_clear()


def _untouched(server: pg.Server, name: str) -> None:
    with psycopg.connect(server.url_for(name)) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone()
        extensions = conn.execute(
            "SELECT count(*) FROM pg_extension WHERE extname <> 'plpgsql'"
        ).fetchone()
    assert tables == (0,) and extensions == (0,), "something was migrated"


def _refusal(capsys: pytest.CaptureFixture[str], encoding: str) -> None:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert f"is encoded {encoding}" in err and "ENCODING 'UTF8'" in err, err


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_migrate_refuses_up_front_naming_the_encoding(
    env: tuple[str, str], pg_server: pg.Server, capsys: pytest.CaptureFixture[str]
) -> None:
    name, encoding = env
    assert main(["migrate"]) == 2
    _refusal(capsys, encoding)
    _untouched(pg_server, name)


def test_serve_refuses_up_front_naming_the_encoding(
    env: tuple[str, str], pg_server: pg.Server, capsys: pytest.CaptureFixture[str]
) -> None:
    name, encoding = env
    assert main(["serve", "--port", str(_free_port())]) == 2
    _refusal(capsys, encoding)
    _untouched(pg_server, name)


def test_readyz_names_an_encoding_that_is_not_utf8(
    pg_server: pg.Server, settings: Settings
) -> None:
    """A worker attached to such a database (not through `ewall serve`) is not ready, and
    says why. LATIN1 only: on SQL_ASCII the pool cannot even ping (not ready either)."""
    name = f"t_enc_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} ENCODING 'LATIN1' LOCALE 'C' TEMPLATE template0").format(
                sql.Identifier(name)
            )
        )
    app_url = pg_server.url_for(name, pg.APP_ROLE, pg.APP_PASSWORD)
    database = Database(
        DatabaseUrls(app=app_url, migrations=pg_server.url_for(name)), app_role=pg.APP_ROLE
    )
    try:
        # no lifespan: the readiness checks alone, on a database nothing was migrated on
        client = TestClient(create_app(settings, database), raise_server_exceptions=False)
        answer = client.get("/readyz")
        assert answer.status_code == 503
        assert answer.json()["checks"]["database_encoding"] == {
            "encoding": "LATIN1",
            "ok": False,
        }
    finally:
        database.dispose()
        pg.drop_database(pg_server, name)
