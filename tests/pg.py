"""Where the tests' PostgreSQL comes from.

1. EWALL_DATABASE_URL (a role that may create databases and roles), else
2. a Testcontainers pgvector/pgvector container when a Docker engine answers, else
3. the embedded PostgreSQL 18 + pgvector server in a temporary folder.

Every test database is a copy of a template that the migrations built once.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from app.db import migrate

APP_ROLE = "ewall_app"
APP_PASSWORD = "ewall-test-app"  # a throwaway server; the embedded one uses trust auth
# Under pytest-xdist each worker starts its own server, except on a shared one
# (EWALL_DATABASE_URL): there each worker keeps a template of its own.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
TEMPLATE = f"ewall_template_{_WORKER}" if _WORKER else "ewall_template"
# Roles belong to the whole server: workers sharing one build their templates in turn, so two
# never create the same role at once (in prepare_template or in the migrations).
_TEMPLATE_LOCK = 2_702_027


@dataclass
class Server:
    admin_url: str  # superuser, database "postgres"
    kind: str

    def url_for(self, database: str, user: str | None = None, password: str | None = None) -> str:
        url = make_url(self.admin_url).set(database=database)
        if user is not None:
            url = url.set(username=user, password=password)
        return url.render_as_string(hide_password=False)


def _docker_available() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        import docker

        docker.from_env(timeout=3).ping()  # type: ignore[attr-defined]
        return True
    except Exception:
        return False


@contextmanager
def start_server() -> Iterator[Server]:
    env_url = os.environ.get("EWALL_DATABASE_URL")
    if env_url:
        yield Server(make_url(env_url).set(database="postgres").render_as_string(False), "env")
        return
    if os.environ.get("EWALL_TEST_DOCKER", "auto") != "off" and _docker_available():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("pgvector/pgvector:pg17", driver=None) as container:
            yield Server(
                container.get_connection_url().replace("postgresql+psycopg2", "postgresql"),
                "docker",
            )
        return
    from app.db.embedded import EmbeddedPostgres

    folder = Path(tempfile.mkdtemp(prefix="ewall-test-pg-", dir=memory_folder()))
    # the server runs as its own system user when we are root; it must reach its folder
    os.chmod(folder, 0o755)  # noqa: S103
    embedded = EmbeddedPostgres(folder)
    try:
        server = Server(embedded.superuser_url("postgres"), "embedded")
        _throwaway(server)
        yield server
    finally:
        embedded.stop()
        shutil.rmtree(folder, ignore_errors=True)


# Most tests create a database (a copy of the template: about 200 files) and drop it. On
# ext4 the kernel's inode allocator then searches past the inodes just freed
# (recently_deleted, find_inode_bit): perf over two test modules put a third of the
# server's CPU there, about 0.34 s of CPU per CREATE DATABASE (issue 27). In memory (tmpfs)
# creating a file costs what it costs; the server's data dies with the session anyway.
_MEMORY = Path("/dev/shm")  # noqa: S108 (mkdtemp makes a folder of its own there)
_MEMORY_ROOM = 4 * 2**30  # a worker's server held 172 MB at most over the 10,000-chunk modules


def memory_folder() -> str | None:
    """The shared-memory folder when it is writable with room to spare, else None (the
    temporary folder); EWALL_TEST_PG_IN_MEMORY=off keeps the server on disk."""
    if os.environ.get("EWALL_TEST_PG_IN_MEMORY", "auto") == "off":
        return None
    try:
        if os.access(_MEMORY, os.W_OK) and shutil.disk_usage(_MEMORY).free >= _MEMORY_ROOM:
            return str(_MEMORY)
    except OSError:
        pass
    return None


def _throwaway(server: Server) -> None:
    """A server whose data dies with the session needs no durability: without fsync and
    synchronous commit, creating a database per test and each commit cost what the work
    costs, not what the disk's flush costs (the tests check results, never crash recovery)."""
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(sql.SQL("ALTER SYSTEM SET {} = off").format(sql.Identifier(setting)))
        conn.execute("SELECT pg_reload_conf()")


def prepare_template(server: Server, embedding_dim: int) -> None:
    with psycopg.connect(server.admin_url, autocommit=True) as lock:
        lock.execute("SELECT pg_advisory_lock(%s)", (_TEMPLATE_LOCK,))
        _prepare_template(server, embedding_dim)


def _prepare_template(server: Server, embedding_dim: int) -> None:
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        if (
            conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone()
            is None
        ):
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD {}").format(
                    sql.Identifier(APP_ROLE), sql.Literal(APP_PASSWORD)
                )
            )
        conn.execute(
            sql.SQL("ALTER ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD {}").format(
                sql.Identifier(APP_ROLE), sql.Literal(APP_PASSWORD)
            )
        )
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(TEMPLATE))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
    migrate.upgrade(server.url_for(TEMPLATE), app_role=APP_ROLE, embedding_dim=embedding_dim)


def create_database(server: Server, name: str | None = None) -> str:
    name = name or f"t_{uuid.uuid4().hex[:16]}"
    # FILE_COPY copies the template's files instead of writing every page through the WAL:
    # about a third of the time for a template of this size, when the checkpoint it needs is
    # cheap (a throwaway server without fsync).
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
                sql.Identifier(name), sql.Identifier(TEMPLATE)
            )
        )
    return name


def drop_database(server: Server, name: str) -> None:
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
