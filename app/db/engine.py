"""Connection pool and transactions.

One SQLAlchemy engine over psycopg 3 (its QueuePool holds the psycopg connections). Every
request transaction comes from `Database.transaction()`. A second, two-connection engine
(`side_engine`) serves the reads a request makes beside its own transaction (the matrix
snapshot, the wall preview's chunk count), so that a request never waits for a connection
that only another waiting request could give back.

Connections never auto-prepare statements: a cached generic plan built for one dense-search
strategy must never be reused for another (an "HNSW" search would then silently run the exact
plan, or the reverse), and the search statement's custom plans depend on its parameters
(docs/latency-sql.md).

Only statements marked with ``sqlfiles.prepared`` (the audit appends, the query analysis: fixed
shapes whose result never depends on their plan) are prepared, once per connection, when the
database is opened with ``prepare_marked=True`` (``EWALL_DB_PREPARE``): what they save is the
server's parse and rewrite of the statement on every search.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.pq import TransactionStatus
from sqlalchemy import Connection, Engine, NullPool, create_engine, event, make_url
from sqlalchemy.exc import DBAPIError

from app.db import sqlfiles

log = logging.getLogger("ewall.db")
T = TypeVar("T")
_USABLE = (TransactionStatus.IDLE, TransactionStatus.INTRANS)

# psycopg prepares a statement after this many executions; None would also refuse an explicit
# prepare=True, so "never by itself" is a count no connection reaches.
NEVER_AUTO_PREPARE = 2**62


def begin_snapshot(conn: Connection) -> None:
    """Begin one repeatable-read, read-only transaction on ``conn``: every statement in it
    sees the same committed state, and none can write. It ends when ``conn`` commits, rolls
    back or closes."""
    conn.execution_options(isolation_level="REPEATABLE READ")
    conn.begin()
    conn.execute(sqlfiles.query("db.read_only"))


def sqlalchemy_url(url: str) -> str:
    """Accept plain libpq URLs and point SQLAlchemy at the psycopg 3 driver."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise ValueError("database URL must start with postgresql://")


# Ids are compared in NFC, names folded and searched in Unicode (Dutch full text, the legal
# normaliser's private-use markers): only a UTF8 database can hold them. On any other the
# migrations failed half-way (LATIN1: "requested character too large for encoding" at
# revision 0060, the first 60 applied) or not at all (SQL_ASCII hands the driver bytes).
REQUIRED_ENCODING = "UTF8"


class WrongEncoding(RuntimeError):
    """The database is not encoded UTF8: nothing may be migrated or served on it."""


def encoding_problem(database: str, encoding: str | None) -> str | None:
    """The sentence that stops the service on a database encoded ``encoding``, or None."""
    if encoding is None or encoding.upper() == REQUIRED_ENCODING:
        return None
    return (
        f"the database {database!r} is encoded {encoding}, and ewall needs UTF8 (ids, names "
        f"and document text are Unicode); nothing was changed. Create the database with "
        f"ENCODING 'UTF8' (CREATE DATABASE {database} ENCODING 'UTF8' LOCALE 'C.UTF-8' "
        f"TEMPLATE template0; initdb -E UTF8 makes it the default), then run `ewall migrate`"
    )


def require_utf8(url: str) -> None:
    """Raise WrongEncoding unless the database at ``url`` is encoded UTF8. The server says
    its encoding when the connection opens, so no statement of ours runs; the client
    encoding is set to UTF8 only so that SQLAlchemy's own first statements read text on
    SQL_ASCII (whose text the driver otherwise hands over as bytes). A database out of
    reach raises SQLAlchemy's OperationalError, as every other connection does."""
    engine = create_engine(
        sqlalchemy_url(url),
        poolclass=NullPool,
        connect_args={"client_encoding": "utf8", **network_timeouts(url)},
    )
    try:
        with engine.connect() as conn:
            problem = encoding_problem(*server_encoding(conn))
    finally:
        engine.dispose()
    if problem is not None:
        raise WrongEncoding(problem)


def server_encoding(conn: Connection) -> tuple[str, str | None]:
    """(database name, encoding) as the server said when ``conn`` opened: no statement."""
    driver = conn.connection.driver_connection
    if not isinstance(driver, psycopg.Connection):  # sqlalchemy_url chose psycopg
        raise TypeError(f"not a psycopg connection: {driver!r}")
    return driver.info.dbname, driver.info.parameter_status("server_encoding")


@dataclass(frozen=True)
class DatabaseUrls:
    app: str
    migrations: str
    superuser: str | None = None


SIDE_POOL_SIZE = 2
# How long the service waits on a database it cannot reach, unless the URL says otherwise
# (libpq's own names): a connection attempt gives up after 10 s, a connection whose peer
# stops answering (a partition, a paused host) is dropped after about 30 s, sending or
# idle. Without them a request waits minutes for the operating system to give up, holding
# its pooled connection, and the requests behind it wait for the pool. Unix sockets (the
# embedded server) ignore the TCP ones.
NETWORK_TIMEOUTS: dict[str, int] = {
    "connect_timeout": 10,
    "keepalives": 1,
    "keepalives_idle": 15,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}


def network_timeouts(url: str) -> dict[str, int]:
    """NETWORK_TIMEOUTS less those the URL sets itself; none when the URL names a connection
    service (whose file sets them). libpq's environment (PGCONNECT_TIMEOUT) does not count:
    only the settings read the environment, and the URL is where an operator changes these."""
    given = set(make_url(sqlalchemy_url(url)).query)
    if "service" in given:
        return {}
    return {key: value for key, value in NETWORK_TIMEOUTS.items() if key not in given}


def _engine(
    url: str,
    role: str,
    options: str,
    pool_size: int,
    max_overflow: int,
    *,
    prepare_marked: bool,
    pool_timeout: float = 30.0,
) -> Engine:
    engine = create_engine(
        sqlalchemy_url(url),
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_timeout=pool_timeout,
        pool_pre_ping=True,
        pool_recycle=1800,
        connect_args={
            "prepare_threshold": NEVER_AUTO_PREPARE if prepare_marked else None,
            "application_name": "ewall",
            "options": options,
            **network_timeouts(url),
        },
    )

    @event.listens_for(engine, "connect")
    def _use_app_role(dbapi_conn: Any, _record: Any) -> None:
        # A login that is not the app role (one URL for owner and service, as in
        # docker-compose without a separate login) switches to it for the whole session.
        cur = dbapi_conn.cursor()
        cur.execute(sqlfiles.raw("db.current_login"))
        current = cur.fetchone()[0]
        if current != role:
            # a role is an identifier, which cannot be a bound parameter: psycopg quotes it
            cur.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        cur.close()
        dbapi_conn.commit()

    if prepare_marked:

        @event.listens_for(engine, "do_execute")
        def _prepare_marked(cursor: Any, statement: str, parameters: Any, context: Any) -> bool:
            # False: SQLAlchemy runs every statement that is not marked as it always does
            options = context.execution_options
            if not options.get(sqlfiles.PREPARE_OPTION):
                return False
            if not options.get(sqlfiles.GENERIC_OPTION):
                cursor.execute(statement, parameters, prepare=True)
                return True
            # the plan cache mode for this statement alone, on other cursors of the same
            # connection (a cursor holds its whole result once executed); transaction-local
            dbapi = cursor.connection
            dbapi.execute(sqlfiles.raw("db.generic_plan_on"), prepare=True)
            try:
                cursor.execute(statement, parameters, prepare=True)
            except BaseException:
                # After an error raised here (a parameter the driver cannot send) the
                # transaction goes on: put the mode back. One the server raised ended the
                # transaction, mode and all (INERROR), or the connection (UNKNOWN): nothing
                # to put back, and a failed restore must not hide the error (a review).
                if dbapi.info.transaction_status in _USABLE:
                    try:
                        dbapi.execute(sqlfiles.raw("db.generic_plan_off"), prepare=True)
                    except Exception:
                        log.warning("plan_cache_mode not put back after an error", exc_info=True)
                raise
            dbapi.execute(sqlfiles.raw("db.generic_plan_off"), prepare=True)
            return True

    return engine


class Database:
    """The engine of the service: connects as (or switches to) the least-privilege app role."""

    def __init__(
        self,
        urls: DatabaseUrls,
        *,
        app_role: str,
        pool_size: int = 8,
        max_overflow: int = 8,
        statement_timeout_ms: int = 15_000,
        prepare_marked: bool = True,
        pool_timeout: float = 30.0,
    ) -> None:
        self.urls = urls
        self.app_role = app_role
        self.prepare_marked = prepare_marked
        self._unreachable = False  # the last ping failed: say so once, not on every probe
        # as the server said when the ping's connection opened (None before a ping answered)
        self.server_encoding: str | None = None
        options = f"-c statement_timeout={int(statement_timeout_ms)}"
        # ``pool_timeout``: how long a checkout waits for a connection of a full pool before
        # sqlalchemy's TimeoutError (503 ``busy``, app/errors.py); a replica's pool waits
        # none, and its search goes elsewhere (app/db/replicas.py)
        self.engine: Engine = _engine(
            urls.app,
            app_role,
            options,
            pool_size,
            max_overflow,
            prepare_marked=prepare_marked,
            pool_timeout=pool_timeout,
        )
        # Reads that a request makes beside its own transaction (the matrix snapshot a stale
        # cache reloads, app/walls/resolution.py; the wall preview's count) take their
        # connection from here, never from the pool the requests hold: sixteen requests
        # holding all of ``engine``'s connections and each waiting for a seventeenth would
        # wait for each other until the pool's timeout. The resolver reloads one at a time
        # per kind; a caller beyond two waits for a short read here, never for a request.
        self.side_engine: Engine = _engine(
            urls.app, app_role, options, SIDE_POOL_SIZE, 0, prepare_marked=False
        )

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """Commit on success, roll back on error."""
        with self.engine.begin() as conn:
            yield conn

    def retried(self, work: Callable[[Connection], T], attempts: int) -> T:
        """``work(conn)`` in one transaction, committed; run whole again in a fresh
        transaction (``attempts``) when PostgreSQL failed it to break a deadlock or on a
        serialization failure, also at COMMIT. ``work`` must keep nothing from a try but what
        it returns: a rolled-back try leaves no row, and a try that raises anything else is
        raised. Its result is returned only once committed.

        The only form: a loop of ``with attempt as conn:`` blocks (``attempts()`` until
        2026-12-07) let a block left by ``return`` keep its value when the COMMIT then failed
        for a lost race, which ``Attempt.__exit__`` cannot tell from a block run to its end
        and so took for a try to make again: the caller's answer stood for nothing written."""
        for k in range(1, attempts + 1):
            attempt = Attempt(self.transaction(), last=k == attempts)
            with attempt as conn:
                result = work(conn)
            if attempt.committed:
                return result
        raise RuntimeError("no attempt committed")  # the last try's error is raised

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            yield conn

    def ping(self) -> bool:
        """Whether the database answers (and, in ``server_encoding``, how it is encoded:
        read from the connection, no statement). The first failure is logged with its traceback
        and the recovery once: a probe every 5 s logged a traceback each time (6.5 KB a
        probe, a check of 2026-12-06)."""
        try:
            with self.engine.connect() as conn:
                conn.execute(sqlfiles.query("db.ping"))
                self._saw_encoding(*server_encoding(conn))
        except Exception:  # any failure means "not reachable" for /readyz
            if not self._unreachable:
                log.warning("database ping failed", exc_info=True)
            self._unreachable = True
            return False
        if self._unreachable:
            log.info("database reachable again")
            self._unreachable = False
        return True

    def _saw_encoding(self, database: str, encoding: str | None) -> None:
        problem = encoding_problem(database, encoding)
        if problem is not None and encoding != self.server_encoding:
            log.warning("%s", problem)  # once: a database's encoding never changes
        self.server_encoding = encoding

    def dispose(self) -> None:
        self.engine.dispose()
        self.side_engine.dispose()


class Attempt:
    """One try of a transaction (``Database.retried``, which alone reads ``committed``: a
    lost race at COMMIT is swallowed here for the next try)."""

    def __init__(self, transaction: AbstractContextManager[Connection], last: bool) -> None:
        self.last = last
        self.committed = False
        self._transaction = transaction

    def __enter__(self) -> Connection:
        return self._transaction.__enter__()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        try:
            self._transaction.__exit__(kind, exc, tb)  # commits, or rolls back
        except DBAPIError as failed:
            # the commit itself failed (a deferred trigger's lock, a serialization check at
            # commit): nothing was written; tried again like a statement's failure
            if exc is not None or self.last or not lost_race(failed):
                raise
            _trying_again(failed)
            return False
        self.committed = exc is None
        if self.last or exc is None or not lost_race(exc):
            return False
        _trying_again(exc)
        return True


# What PostgreSQL raises when it rolled a transaction back because a concurrent one met it:
# to break a deadlock (40P01), or a serialization failure (40001). Nothing of the
# transaction is left; the same work, begun again, usually passes.
RETRYABLE: tuple[type[pg_errors.DatabaseError], ...] = (
    pg_errors.DeadlockDetected,
    pg_errors.SerializationFailure,
)


def _trying_again(exc: BaseException) -> None:
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    log.warning(
        "transaction rolled back for a concurrent one; trying it again",
        extra={"error": type(orig).__name__, "sqlstate": getattr(orig, "sqlstate", None)},
    )


def error_kind(exc: BaseException) -> str:
    """The driver error's type and SQLSTATE (``UndefinedTable (SQLSTATE 42P01)``), never its
    text: for what anyone may read (/readyz) and for one-line warnings that recur. The text
    may quote a URL as the driver read it, the login role, server paths."""
    orig = getattr(exc, "orig", None) or exc  # SQLAlchemy's wrapper: the driver's error
    code = getattr(orig, "sqlstate", None)
    sqlstate = f" (SQLSTATE {code})" if isinstance(code, str) and code else ""
    return f"{type(orig).__name__}{sqlstate}"


def lost_race(exc: BaseException) -> bool:
    """Whether ``exc`` (SQLAlchemy's wrapper or the driver's error) is a transaction
    PostgreSQL failed for a concurrent one's sake (``RETRYABLE``)."""
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    return isinstance(orig, RETRYABLE)
