"""Read replicas: PostgreSQL physical streaming standbys that serve searches.

Each URL in ``EWALL_REPLICA_URLS`` gets its own pool (a `Database`, so a superuser login
switches to the application role there as on the primary). A monitor thread measures every
replica each ``EWALL_REPLICA_CHECK_INTERVAL_S``:

- down:        no connection, the probe failed or did not answer within ``PROBE_WAIT_S``
               (a frozen server: until that probe returns, no other is started), or the
               database holds no ewall schema (a URL naming the wrong database), or it
               is another database, or of another cluster, than the primary's (another
               ewall database of the standby: its schema is there too);
- not_standby: the server is not in recovery (a promoted or misconfigured "replica" would
               never see the primary's walls again; it gets no searches);
- lagging:     its replay is more than ``EWALL_REPLICA_MAX_LAG_MS`` behind the primary;
- ok:          everything else (only these get searches).

Lag is measured in time, from WAL positions, without comparing clocks: the monitor samples
the primary's ``pg_current_wal_lsn()`` with a monotonic time stamp, and a replica whose
``pg_last_wal_replay_lsn()`` is behind the sample taken at time t has not replayed what the
primary had at t: its lag is at least now - t. A replica that has replayed past the latest
sample lags 0 (an idle primary does not make a replica look stale).

The lag only decides where searches go (freshness of content, and how often the fence in
``app/search/replica.py`` has to send a search back to the primary); correctness under lag
does not depend on it: that is the fence's job.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlparse

from sqlalchemy import Connection
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.db import sqlfiles
from app.db.engine import Database, DatabaseUrls, error_kind
from app.settings import Settings

log = logging.getLogger("ewall.db.replicas")

OK = "ok"
DOWN = "down"
LAGGING = "lagging"
NOT_STANDBY = "not_standby"
UNKNOWN = "unknown"
PROBE_WAIT_S = 5.0  # a healthy probe takes milliseconds; a frozen replica never answers
# TCP settings of replica connections, unless the URL sets them: a replica whose host or
# network path goes away mid-statement (a paused VM, a lost route) fails the statement within
# about 10-25 s instead of the operating system's minutes (libpq's keepalive parameters and
# tcp_user_timeout, in ms). A replica process that is itself stopped keeps its socket
# answered by its kernel; only the monitor's PROBE_WAIT_S routes searches away from it.
_TCP_DEFAULTS = (
    ("connect_timeout", "5"),
    ("keepalives", "1"),
    ("keepalives_idle", "10"),
    ("keepalives_interval", "5"),
    ("keepalives_count", "3"),
    ("tcp_user_timeout", "10000"),
)


def primary_lsn(conn: Connection) -> str:
    """The primary's current WAL position (text form)."""
    return str(conn.execute(sqlfiles.query("replica.primary_lsn")).scalar_one())


@dataclass(frozen=True)
class PrimaryStart:
    """The primary's WAL position and clock, read in one statement."""

    lsn: str
    at: datetime


def primary_lsn_at(conn: Connection) -> PrimaryStart:
    """The primary's WAL position (text form) and its clock (app/db/clock.py)."""
    row = conn.execute(sqlfiles.query("replica.primary_lsn_at")).one()
    return PrimaryStart(str(row.lsn), row.at)


def replayed_past(conn: Connection, lsn: str) -> bool:
    """Whether this server is a standby that has replayed at least up to ``lsn``."""
    return bool(conn.execute(sqlfiles.query("replica.replayed_past"), {"lsn": lsn}).scalar_one())


def parse_urls(value: str) -> list[str]:
    return [u.strip() for u in value.split(",") if u.strip()]


def replica_name(url: str) -> str:
    """host:port/database of a URL, never its credentials (names in /readyz and metrics)."""
    parsed = urlparse(url)
    host = parsed.hostname or ""
    if not host:
        host = (parse_qs(parsed.query).get("host") or ["local"])[0]
    port = parsed.port or 5432
    database = parsed.path.lstrip("/") or "postgres"
    return f"{host}:{port}/{database}"


def probe_failure(exc: BaseException) -> str:
    """What /readyz (which answers anyone) says of a failed probe: the driver error's type
    and SQLSTATE, never its text. The text quoted the connection's host as the driver read
    it: a replica URL whose password held an unencoded "@" showed the password's tail
    ("failed to resolve host 'tail@host'"), and it names the login role and server paths.
    The log keeps the type and frames (app/logging.py), as the searches' mark_down does."""
    return f"{error_kind(exc)}: the probe failed (the service log has its frames)"


class Busy(Exception):
    """Every connection of this process's pool of the replica is in use: its search goes to
    the next healthy replica, else the primary, at once (a full pool says nothing of the
    server: the replica keeps its state)."""


@dataclass(frozen=True)
class ReplicaState:
    name: str
    state: str
    lag_ms: float | None
    replay_lsn: int | None
    error: str | None
    checked_at: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "lag_ms": None if self.lag_ms is None else round(self.lag_ms, 1),
            "error": self.error,
        }


class Replica:
    def __init__(self, name: str, database: Database) -> None:
        self.name = name
        self.database = database
        self._lock = threading.Lock()
        self._state = ReplicaState(name, UNKNOWN, None, None, None, None)

    @property
    def state(self) -> ReplicaState:
        with self._lock:
            return self._state

    def set_state(self, state: ReplicaState) -> None:
        with self._lock:
            previous = self._state.state
            self._state = state
        if previous != state.state:
            log.info(
                "replica state",
                extra={"replica": self.name, "state": state.state, "was": previous},
            )

    def connect_now(self) -> Connection:
        """A connection of this replica's pool without waiting (its pool's timeout is 0), or
        Busy. A search that waited for one here held its request for the pool's timeout and
        answered 503 ``busy`` while the primary was free, every connection being held by
        searches stuck on a frozen replica that the monitor had not yet marked down, or by a
        burst (attack round of 2026-12-08, fourth)."""
        try:
            return self.database.engine.connect()
        except PoolTimeout:
            raise Busy from None

    def mark_down(self, error: str) -> None:
        """A search saw this replica fail: no more searches until the monitor sees it well."""
        old = self.state
        self.set_state(ReplicaState(self.name, DOWN, None, old.replay_lsn, error, time.time()))


class ReplicaSet:
    """The replicas of one primary, their measured state and the routing choice."""

    def __init__(self, settings: Settings, primary: Database) -> None:
        self.primary = primary
        self.max_lag_ms = settings.replica_max_lag_ms
        self.interval_s = settings.replica_check_interval_s
        self.replicas: list[Replica] = []
        names: set[str] = set()
        for i, url in enumerate(parse_urls(settings.replica_urls), start=1):
            name = replica_name(url)
            if name in names:
                name = f"{name}#{i}"
            names.add(name)
            # a replica that stops answering must not hold a search (or the monitor) for
            # the operating system's TCP timeout
            dsn = url
            for key, value in _TCP_DEFAULTS:
                if f"{key}=" not in dsn:
                    dsn += ("&" if "?" in dsn else "?") + f"{key}={value}"
            database = Database(
                DatabaseUrls(app=dsn, migrations=dsn),
                app_role=settings.app_role,
                pool_size=settings.pool_size,
                max_overflow=settings.pool_max_overflow,
                statement_timeout_ms=settings.statement_timeout_ms,
                prepare_marked=settings.db_prepare,
                pool_timeout=0,  # a full pool: the search goes elsewhere (Replica.connect_now)
            )
            self.replicas.append(Replica(name, database))
        # (monotonic time, primary WAL position) samples, oldest first
        self._samples: deque[tuple[float, int]] = deque()
        # the primary's (database name, cluster system identifier), read with its first sample
        self._identity: tuple[str, str] | None = None
        self._window_s = max(60.0, 10 * self.max_lag_ms / 1000)
        self._turn = itertools.count()
        self._probes: dict[str, threading.Thread] = {}  # the latest probe of each replica
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __bool__(self) -> bool:
        return bool(self.replicas)

    def __iter__(self) -> Iterator[Replica]:
        return iter(self.replicas)

    # --- routing ----------------------------------------------------------------------------

    def candidates(self) -> list[Replica]:
        """The healthy replicas, to try in this order (round robin: each call starts at the
        next); none: the primary serves. Only a replica with no free connection (Busy) sends
        a read on to the next; every other failure sends it to the primary."""
        healthy = [r for r in self.replicas if r.state.state == OK]
        if not healthy:
            return []
        first = next(self._turn) % len(healthy)
        return healthy[first:] + healthy[:first]

    # --- measurement ------------------------------------------------------------------------

    def _sample_primary(self) -> None:
        try:
            with self.primary.connect() as conn:
                if self._identity is None:  # it never changes: read once
                    row = conn.execute(sqlfiles.query("replica.identity")).one()
                    self._identity = (str(row.database), str(row.system_id))
                lsn = int(conn.execute(sqlfiles.query("replica.primary_lsn_bytes")).scalar_one())
        except Exception:  # the primary's own health is /readyz's business
            log.debug("primary WAL position unavailable", exc_info=True)
            return
        now = time.monotonic()
        self._samples.append((now, lsn))
        while len(self._samples) > 1 and self._samples[0][0] < now - self._window_s:
            self._samples.popleft()

    def _lag_ms(self, replay: int, now: float) -> float:
        # a copy: a probe that ended late runs beside the monitor, which changes the samples
        for at, lsn in list(self._samples):
            if lsn > replay:
                return max(0.0, (now - at) * 1000)
        return 0.0

    def check(self, replica: Replica) -> ReplicaState:
        # on a connection of the replica's side pool, not of the searches' pool: a pool held
        # whole by searches (a burst) is this process's load, not the server's health (with
        # it, a probe waited for a connection, and after PROBE_WAIT_S a busy replica was down)
        try:
            with replica.database.side_engine.connect() as conn:
                row = conn.execute(sqlfiles.query("replica.probe")).one()
        except Exception as exc:  # any failure: the replica is down for routing
            if replica.state.state != DOWN:  # once per outage, not every interval
                log.warning("replica probe failed", extra={"replica": replica.name}, exc_info=True)
            state = ReplicaState(replica.name, DOWN, None, None, probe_failure(exc), time.time())
            replica.set_state(state)
            return state
        if not row.schema:
            state = ReplicaState(
                replica.name,
                DOWN,
                None,
                None,
                "the database holds no ewall schema (does the URL name the right database?)",
                time.time(),
            )
        elif self._identity is None:
            # the primary did not answer the monitor yet: whether this is a replica of its
            # database is unknown, and an unknown one gets no searches (the fence passes an
            # empty answer from a wrong database); searches need the primary anyway
            state = ReplicaState(
                replica.name,
                DOWN,
                None,
                None,
                "the primary's database and cluster are not known yet (the primary did not "
                "answer the monitor): the replica is not trusted until they are",
                time.time(),
            )
        elif (str(row.database), str(row.system_id)) != self._identity:
            # another database of the standby (a typo in the URL), or a standby of another
            # cluster: searches there were fenced, or answered from the wrong data when it
            # held nothing for them under the primary's policy version (attack round of
            # 2026-12-08)
            state = ReplicaState(
                replica.name,
                DOWN,
                None,
                None,
                "the replica serves another database than the primary (its database "
                f"{row.database!r} or its cluster differ): does the URL name the right one?",
                time.time(),
            )
        elif not row.standby:
            state = ReplicaState(
                replica.name,
                NOT_STANDBY,
                None,
                None,
                "the server is not in recovery (not a streaming replica)",
                time.time(),
            )
        else:
            replay = int(row.replay if row.replay is not None else row.receive or 0)
            lag = self._lag_ms(replay, time.monotonic())
            state = ReplicaState(
                replica.name,
                LAGGING if lag > self.max_lag_ms else OK,
                lag,
                replay,
                None,
                time.time(),
            )
        replica.set_state(state)
        return state

    def check_all(self) -> list[ReplicaState]:
        self._sample_primary()
        return [self._bounded_check(r) for r in self.replicas]

    def _bounded_check(self, replica: Replica) -> ReplicaState:
        """``check`` on a thread of its own, waited for at most PROBE_WAIT_S: a replica
        that does not answer (its process stopped, its host paused) blocks the driver, where
        no statement_timeout can fire, and must not keep its last state ("ok") while the
        monitor waits; a probe still blocked is not started again."""
        probe = self._probes.get(replica.name)
        if probe is None or not probe.is_alive():
            probe = threading.Thread(
                target=self.check, args=(replica,), name="ewall-replica-probe", daemon=True
            )
            self._probes[replica.name] = probe
            probe.start()
            probe.join(PROBE_WAIT_S)
        if probe.is_alive():
            old = replica.state
            state = ReplicaState(
                replica.name,
                DOWN,
                None,
                old.replay_lsn,
                f"the replica did not answer within {PROBE_WAIT_S:g} s",
                time.time(),
            )
            replica.set_state(state)
            return state
        return replica.state

    def states(self) -> list[ReplicaState]:
        return [r.state for r in self.replicas]

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        if not self.replicas or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="ewall-replicas", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.check_all()
            except Exception:  # the monitor never dies; a failed round marks nothing
                log.exception("replica check failed")
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        for replica in self.replicas:
            replica.database.dispose()
