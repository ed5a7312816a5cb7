"""The benchmarks' PostgreSQL, a database per run, and the server facts printed next to the
figures.

Where the database comes from:
1. ``EWALL_BENCH_DATABASE_URL``: a superuser URL of an existing server. Each run creates its
   own database there (dropped afterwards unless ``--keep``); the service's pool logs in with
   that URL and switches to the least-privilege app role, as the service does when one URL
   serves both.
2. Otherwise the embedded PostgreSQL 18 + pgvector server in a temporary folder (or in
   ``--data-dir``, which a later run can reuse), tuned for the benchmark (shared_buffers, no
   JIT) and stopped at the end. The pool logs in as the app role itself, as ``ewall serve``
   does with the embedded server.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from app.db import migrate
from app.db.engine import Database, DatabaseUrls
from app.settings import Settings
from bench.common import BENCH_URL_ENV, console

# --- the server and the database -----------------------------------------------------


def physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def auto_shared_buffers(rows: int, bytes_per_row: int = 4096) -> str:
    """Enough to hold the heap and the HNSW graph warm, within a quarter of the RAM (the
    machine is shared) and never below the PostgreSQL default."""
    wanted = rows * bytes_per_row
    cap = min(physical_memory() // 4, 8 << 30)
    mb = max(128, min(wanted, cap) >> 20)
    return f"{mb}MB"


def server_config(shared_buffers: str) -> dict[str, str]:
    return {
        "shared_buffers": shared_buffers,
        # JIT compiles expensive plans (an exact scan over a million rows passes
        # jit_above_cost) and adds tens of milliseconds per query; OLTP setups run without
        # it.
        "jit": "off",
        # bulk COPY and index builds would otherwise checkpoint every few seconds
        "max_wal_size": "8GB",
        "checkpoint_timeout": "30min",
    }


@dataclass(frozen=True)
class ServerHandle:
    admin_url: str  # superuser, maintenance database
    kind: str  # "embedded" or "external"
    location: str

    def url_for(self, database: str, user: str | None = None) -> str:
        url = make_url(self.admin_url).set(database=database)
        if user is not None:
            url = url.set(username=user, password=None)
        return url.render_as_string(hide_password=False)


def _configure_server(admin_url: str, config: dict[str, str]) -> bool:
    """ALTER SYSTEM what differs; True when a restart is needed for it to apply."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for name, value in config.items():
            current = conn.execute(
                "SELECT current_setting(name) FROM pg_settings WHERE name = %s", (name,)
            ).fetchone()
            if current is None or str(current[0]).lower() == value.lower():
                continue
            conn.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
        conn.execute("SELECT pg_reload_conf()")
        # the reload is asynchronous: give the postmaster a moment before asking
        time.sleep(0.5)
        pending = conn.execute("SELECT count(*) FROM pg_settings WHERE pending_restart").fetchone()
        return bool(pending and pending[0])


@contextmanager
def bench_server(
    *, data_dir: Path | None, keep: bool, config: dict[str, str]
) -> Iterator[ServerHandle]:
    env_url = os.environ.get(BENCH_URL_ENV)
    if env_url:
        admin = make_url(env_url).set(database="postgres")
        yield ServerHandle(
            admin.render_as_string(hide_password=False),
            "external",
            admin.render_as_string(hide_password=True),
        )
        return
    from app.db.embedded import EmbeddedPostgres

    persistent = data_dir is not None
    folder = (data_dir or Path(tempfile.mkdtemp(prefix="ewall-bench-pg-"))).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    # the embedded server runs as its own system user when we are root: it must traverse
    os.chmod(folder, 0o755)  # noqa: S103 - read and traverse only, as tests/pg.py does
    embedded = EmbeddedPostgres(folder)
    try:
        if _configure_server(embedded.superuser_url("postgres"), config):
            embedded.stop()
            embedded = EmbeddedPostgres(folder)
        yield ServerHandle(embedded.superuser_url("postgres"), "embedded", str(folder))
    finally:
        embedded.stop()
        if persistent or keep:
            console.print(f"[dim]embedded server folder kept: {folder}[/]")
        else:
            shutil.rmtree(folder, ignore_errors=True)


@dataclass
class BenchDatabase:
    server: ServerHandle
    name: str
    superuser_url: str
    settings: Settings
    database: Database
    reused: bool

    def superuser(self, *, autocommit: bool = False) -> psycopg.Connection[Any]:
        # never auto-prepare: a cached generic plan must not leak between statements that
        # run under different planner settings
        return psycopg.connect(self.superuser_url, autocommit=autocommit, prepare_threshold=None)


def _signature_comment(signature: dict[str, Any]) -> str:
    return "ewall-bench " + json.dumps(signature, sort_keys=True, default=str)


@contextmanager
def bench_database(
    server: ServerHandle,
    settings: Settings,
    name: str,
    *,
    signature: dict[str, Any] | None,
    keep: bool,
    pool_size: int = 4,
) -> Iterator[BenchDatabase]:
    """A migrated database for one benchmark. With a ``signature`` and a database left by an
    earlier run whose completed load had the same signature, that database is reused."""
    reused = False
    app_role = settings.app_role
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        if server.kind == "embedded":
            exists = conn.execute(
                "SELECT 1 FROM pg_roles WHERE rolname = %s", (app_role,)
            ).fetchone()
            verb = "ALTER" if exists else "CREATE"
            conn.execute(
                sql.SQL(verb + " ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS").format(
                    sql.Identifier(app_role)
                )
            )
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (name,),
        ).fetchone()
        if row is not None and signature is not None and row[0] == _signature_comment(signature):
            reused = True
        else:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    superuser_url = server.url_for(name)
    migrate.upgrade(superuser_url, app_role=app_role, embedding_dim=settings.embedding_dim)
    # embedded: log in as the app role (trust auth); external: log in with the given URL and
    # let Database switch to the app role (SET ROLE), so RLS applies either way
    app_url = server.url_for(name, app_role) if server.kind == "embedded" else superuser_url
    database = Database(
        DatabaseUrls(app=app_url, migrations=superuser_url, superuser=superuser_url),
        app_role=app_role,
        pool_size=pool_size,
        max_overflow=pool_size,
        statement_timeout_ms=settings.statement_timeout_ms,
    )
    handle = BenchDatabase(server, name, superuser_url, settings, database, reused)
    try:
        yield handle
    finally:
        database.dispose()
        if not keep and server.kind == "external":
            with psycopg.connect(server.admin_url, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
        elif keep:
            console.print(f"[dim]database kept: {name} ({server.location})[/]")


def mark_loaded(bdb: BenchDatabase, signature: dict[str, Any]) -> None:
    """Record a completed load so that a later run with --keep/--data-dir can reuse it."""
    with psycopg.connect(bdb.server.admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(bdb.name), sql.Literal(_signature_comment(signature))
            )
        )


SERVER_SETTINGS = (
    "server_version",
    "shared_buffers",
    "work_mem",
    "maintenance_work_mem",
    "jit",
    "max_parallel_workers_per_gather",
    "max_parallel_maintenance_workers",
    "effective_cache_size",
    "synchronous_commit",
    "random_page_cost",
)


def server_facts(conn: psycopg.Connection[Any]) -> dict[str, str]:
    facts = {
        str(name): str(value)
        for name, value in conn.execute(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
            (list(SERVER_SETTINGS),),
        )
    }
    ext = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    facts["pgvector"] = str(ext[0]) if ext else "?"
    facts["cpus"] = str(os.cpu_count())
    facts["ram_gb"] = f"{physical_memory() / (1 << 30):.0f}"
    return facts


def print_facts(title: str, facts: dict[str, Any]) -> None:
    console.print(f"[bold]{title}[/]: " + ", ".join(f"{k}={v}" for k, v in facts.items()))
