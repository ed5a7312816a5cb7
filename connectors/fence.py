"""The lock of one sync per (source, scope), and the fencing token that keeps a sync which
lost it from writing state.

A sync takes a session advisory lock on a connection of its own and holds it while it runs:
a second sync of the same scope is refused (`connectors.state.SyncBusyError`), and a sync
whose process dies loses the lock with its session, so the next one starts at once (no lease
to wait out). But that connection is idle while the sync works on others, and when it drops
(a server restart, an idle-session timeout, a proxy, pg_terminate_backend) the lock goes
silently, and another sync could start beside the first: two crawls writing cursors, seen
ids and the full-crawl bookkeeping that decides deletions (architecture.md, invariant 9).

So the lock comes with a fencing token (table ``sync_fences``): a sync that takes the lock
raises the token of its (source, scope) and keeps the value it raised it to; each of its
state transactions first reads the token FOR SHARE (`SyncLock.check`) and goes on only while
it is still that value, else raises `SyncFenceLostError` and the transaction rolls back. The
share lock orders a write against a takeover: a sync that takes over waits for a write in
flight to commit, then raises the token and loads the state that write left; any later write
of the first sync finds the token raised. The lock alone decides who runs; the token decides
whose writes count, and it holds whatever happened to the lock's connection.

Each check also asks the lock's connection whether it still holds the lock (which keeps it
from sitting idle for a whole crawl, too). A sync whose lock went, with no other sync
running, takes it again on a new connection and carries on (its token, checked in the same
transaction, says nobody took over meanwhile); if another sync holds it, this one stops.
"""

from __future__ import annotations

import logging
import os
import socket
from contextlib import AbstractContextManager, suppress

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from app.db.engine import Database
from connectors import repository

log = logging.getLogger("ewall.connectors.fence")


class SyncFenceLostError(RuntimeError):
    """This sync lost its lock to another sync of the same source and scope: it writes no
    more state (the other sync's state stands)."""


class SyncLock:
    """The advisory lock of one sync of (source, scope) and the fencing token it took."""

    def __init__(self, database: Database, source: str, scope: str, namespace: int,
                 key: int) -> None:
        self.database = database
        self.source = source
        self.scope = scope
        self.namespace = namespace
        self.key = key
        self.token: int | None = None
        self._held: AbstractContextManager[Connection] | None = None
        self._conn: Connection | None = None

    def __str__(self) -> str:
        return f"{self.source} ({self.scope})"

    def take(self) -> bool:
        """Take the lock and raise the token; False when another sync holds the lock."""
        if not self._lock() or self._conn is None:
            return False
        holder = f"{socket.gethostname()} pid {os.getpid()}"
        try:
            self.token = repository.take_fence(self._conn, self.source, self.scope, holder)
            self._conn.commit()
        except BaseException:
            self.release()  # no token, no lock
            raise
        return True

    def check(self, conn: Connection, source: str, scope: str) -> None:
        """In a state transaction (``conn``), before it writes: go on only while this sync
        holds the token it took; the token stays share-locked until ``conn`` commits."""
        if (source, scope) != (self.source, self.scope):
            raise ValueError(f"the sync of {self} writes no state of {source} ({scope})")
        if self.token is None:
            raise SyncFenceLostError(f"the sync of {self} holds no lock")
        self._keep_lock()
        now = repository.fence(conn, self.source, self.scope)
        if now is None or now.token != self.token:
            taker = (f"taken by {now.holder} (backend {now.backend_pid}) at "
                     f"{now.taken_at.isoformat()}, token {now.token}") if now else "gone"
            raise SyncFenceLostError(
                f"the sync of {self} lost its lock to another sync (token {self.token}; "
                f"the lock was {taker}): it writes no more state and stops"
            )

    def release(self) -> None:
        """Let the lock go (the token stays: the next sync raises it)."""
        if self._conn is None:
            return
        try:
            self._conn.rollback()  # a failed statement on it must not keep the unlock from it
            repository.advisory_unlock(self._conn, self.namespace, self.key)
            self._conn.commit()
        except DBAPIError:
            log.warning("the lock's connection was lost before the end of the sync; the lock "
                        "went with it", extra={"source": self.source, "scope": self.scope})
            with suppress(DBAPIError):
                self._conn.invalidate()  # never back to the pool with a lock its session holds
        finally:
            self._close()

    def _lock(self) -> bool:
        """Try the advisory lock on a new connection, kept open while it is held."""
        self._held = self.database.connect()
        self._conn = self._held.__enter__()
        try:
            got = repository.try_advisory_lock(self._conn, self.namespace, self.key)
            self._conn.commit()
        except BaseException:
            # the lock may have been granted before the failure: never back to the pool
            with suppress(DBAPIError):
                self._conn.invalidate()
            self._close()
            raise
        if not got:
            self._close()
        return got

    def _keep_lock(self) -> None:
        """Make sure the lock is still held, taking it again when its connection dropped and
        no other sync took it; `SyncFenceLostError` when one did."""
        if self._conn is not None and self._asks_holds():
            return
        log.warning("the lock of a sync was lost (its connection dropped); taking it again",
                    extra={"source": self.source, "scope": self.scope})
        self._close()
        if not self._lock():
            raise SyncFenceLostError(
                f"the sync of {self} lost its lock and another sync holds it now: it writes "
                "no more state and stops"
            )

    def _asks_holds(self) -> bool:
        """Whether the lock's connection still holds the lock. A question that fails on a
        session still alive (a failed statement left on it, a statement timeout) is asked
        once more after a rollback; failing again, the connection is invalidated, so that
        its session ends and the lock with it: back in the pool, a live session would hold
        the lock for good and refuse every later sync of this scope."""
        for attempt in range(2):
            conn = self._conn
            if conn is None:
                return False
            try:
                if attempt:
                    conn.rollback()
                held = repository.holds_advisory_lock(conn, self.namespace, self.key)
                conn.commit()
                return held
            except DBAPIError as exc:
                if exc.connection_invalidated or conn.invalidated:
                    return False  # the session is gone, and the lock with it
                if attempt:
                    with suppress(DBAPIError):
                        conn.invalidate()
        return False

    def _close(self) -> None:
        held, self._held, self._conn = self._held, None, None
        if held is None:
            return
        try:
            held.__exit__(None, None, None)
        except DBAPIError:
            log.debug("closing a lost lock connection failed", exc_info=True)
