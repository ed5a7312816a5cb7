"""A stale snapshot never makes requests wait for each other's connections.

Every caller of the resolver is a request that already holds a connection of the pool. A
reload from that same pool would wait for a connection that only another waiting request
could return: with every connection held so, all of them would wait until the pool's
timeout. Reloads read on the database's side engine, one at a time; these tests leave no
second connection in the pool and expect an answer.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import event

from app.audit.chain import now_utc
from app.db.engine import Database
from app.settings import Settings
from app.walls.resolution import AccessResolver, Resolution
from tests import pg
from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm

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


def test_a_wall_preview_and_exposure_answer_with_one_connection_left(
    db: DbHandle, settings: Settings, embedder: Any, auth: Tokens
) -> None:
    """Both hold the request's connection and read the whole matrix (and the preview counts
    chunks) beside it: on the side engine, never from the pool the requests hold."""
    small = DbHandle(db.name, db.server, _small(db))
    try:
        with make_client(small, settings, embedder) as client:
            firm = Firm(client, auth)
            firm.person("alice@firm.nl")
            firm.client_("C-1", "Acme B.V.")
            firm.matter("M-1", "C-1", team=["alice@firm.nl"])
            wall = {"kind": "exclusionary", "title": "w", "reason": "r",
                    "protects": {"matters": ["M-1"]}, "screened": ["alice@firm.nl"]}  # fmt: skip
            wall_id = firm.wall(**wall)
            # what the app holds itself (the job queue's lease) stays held; the re-tag worker,
            # paused, holds nothing: every other connection but one is taken here
            resources = client.app.state.resources  # type: ignore[attr-defined]
            if resources.retag_worker is not None:
                resources.retag_worker.pause()
            pool: Any = small.database.engine.pool
            held = [small.database.engine.connect() for _ in range(POOL - 1 - pool.checkedout())]
            assert pool.checkedout() == POOL - 1
            try:
                preview = client.post("/v1/walls/preview", json=wall, headers=firm.h)
                assert preview.status_code == 200, preview.text
                exposure = client.get(f"/v1/walls/{wall_id}/exposure", headers=firm.h)
                assert exposure.status_code == 200, exposure.text
            finally:
                for c in held:
                    c.close()
    finally:
        small.database.dispose()
