"""A stale snapshot never makes requests wait for each other's connections.

Every caller of the resolver is a request that already holds a connection of the pool. The
reload of a stale matrix snapshot used to take a second one from the same pool: with every
connection held by a request that needed a second, all of them waited until the pool's
timeout (30 s) and one answered 500. Reloads now read on the database's side engine, one at
a time.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import event

from app.audit.chain import now_utc
from app.db.engine import Database
from app.walls.resolution import AccessResolver, Resolution
from tests import pg
from tests.conftest import DbHandle

POOL = 4


def _small(db: DbHandle) -> Database:
    # no overflow: a second connection from this pool is one no request can get
    return Database(db.database.urls, app_role=pg.APP_ROLE, pool_size=POOL, max_overflow=0)


def test_a_request_holding_the_last_connection_still_resolves(db: DbHandle) -> None:
    database = _small(db)
    try:
        resolver = AccessResolver()
        held = [database.engine.connect() for _ in range(POOL - 1)]
        with database.transaction() as conn:  # the pool's last connection
            res = resolver.resolve(database, "someone@firm.nl", now_utc())
            assert res.policy_version >= 0 and not res.known
            assert resolver.matrix(conn, database).version == res.policy_version
        for c in held:
            c.close()
    finally:
        database.dispose()


def test_concurrent_requests_on_a_stale_cache_share_one_reload(db: DbHandle) -> None:
    database = _small(db)
    loads: list[Any] = []
    event.listen(database.side_engine, "checkout", lambda *a: loads.append(a))
    resolver = AccessResolver()
    everyone_holds = threading.Barrier(POOL)

    def request(i: int) -> Resolution:
        with database.transaction():
            everyone_holds.wait()  # every connection of the pool is held now
            return resolver.resolve(database, f"p{i}@firm.nl", now_utc())

    try:
        with ThreadPoolExecutor(POOL) as pool:
            answers = list(pool.map(request, range(POOL)))
        assert len({a.policy_version for a in answers}) == 1
        assert len(loads) == 1  # one reload, shared by all four
        resolver.invalidate()
        request_after = resolver.resolve(database, "p0@firm.nl", now_utc())
        assert request_after.policy_version == answers[0].policy_version
        assert len(loads) == 2
    finally:
        database.dispose()
