"""A re-tag worker killed in the middle of a batch leaks nothing and loses nothing.

The worker (the real RetagWorker, with its thread) runs in a child process. A row lock on
the matter's queue entry holds it inside a batch: its chunk UPDATE has run, its progress
UPDATE waits, nothing is committed. The child is then SIGKILLed, thread and all. Readers
poll the screened person's search and the RLS backstop on its own the whole time, from the
moment the wall is committed until a restarted worker has finished.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psycopg
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens, make_settings
from tests.helpers import Firm, ok
from tests.walls.test_backstop_during_retag import backstop_view, matters

ROOT = Path(__file__).resolve().parents[2]
TEXT = "Pleitnota over de inbreuk op het octrooi voor gelaagd veiligheidsglas, deel {}."
GUARD_S = 120  # against a hang only; every wait below is on a condition

CHILD = textwrap.dedent(
    """
    import sys, threading
    from app.db.engine import Database, DatabaseUrls
    from app.settings import Settings
    from app.walls.retag import RetagWorker

    app_url, role = sys.argv[1], sys.argv[2]
    database = Database(
        DatabaseUrls(app=app_url, migrations=app_url), app_role=role,
        statement_timeout_ms=600_000,
    )
    settings = Settings(database_url=None, retag_batch_size=3, retag_poll_s=0.05)
    RetagWorker(database, settings).start()
    print("started", flush=True)
    threading.Event().wait()
    """
)


def _wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_worker_killed_mid_batch_never_leaks_and_a_restart_finishes(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    from app.walls.retag import RetagWorker
    from tests import pg

    firm = Firm(client, auth)
    for p in ("alice@firm.nl", "bob@firm.nl"):
        firm.person(p)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    firm.matter("M-2", "C-1")
    for i in range(10):
        firm.document(f"m1-{i}", TEXT.format(i), client_id="C-1", matter_id="M-1")
    firm.document("m2-0", TEXT.format("twee"), client_id="C-1", matter_id="M-2")
    assert "M-1" in firm.matters_seen("bob@firm.nl", "octrooi veiligheidsglas", k=50)

    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"])

    observations: list[tuple[str, set[str | None]]] = []
    errors: list[BaseException] = []
    stop = threading.Event()
    lock = threading.Lock()

    def poll() -> None:
        try:
            while not stop.is_set():
                searched = firm.matters_seen("bob@firm.nl", "octrooi veiligheidsglas", k=50)
                backstop = matters(backstop_view(client, "bob@firm.nl"))
                with lock:
                    observations.append(("search", searched))
                    observations.append(("backstop", backstop))
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)

    def count() -> int:
        with lock:
            return len(observations)

    readers = [threading.Thread(target=poll, name=f"reader-{i}") for i in range(2)]
    for reader in readers:
        reader.start()
    child: subprocess.Popen[str] | None = None
    try:
        with (
            psycopg.connect(db.superuser_url) as blocker,
            psycopg.connect(db.superuser_url, autocommit=True) as su,
        ):
            # hold the queue entry: the worker's batch will block after moving its chunks
            blocker.execute("SELECT 1 FROM retag_pending WHERE matter_id = 'M-1' FOR UPDATE")
            child = subprocess.Popen(  # noqa: S603 - our own interpreter and script
                [sys.executable, "-c", CHILD, db.app_url, pg.APP_ROLE],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=subprocess.PIPE,
                text=True,
            )

            def in_batch() -> int | None:
                row = su.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock' AND query LIKE 'UPDATE retag_pending%%'"
                ).fetchone()
                return None if row is None else int(row[0])

            _wait_for(lambda: in_batch() is not None or child.poll() is not None, "a batch")
            assert child.poll() is None, "the worker exited before its first batch"
            backend = in_batch()
            # mid-batch: the batch moved chunks it has not committed; readers keep polling
            seen_before = count()
            _wait_for(lambda: count() >= seen_before + 4, "searches during the batch")
            child.send_signal(signal.SIGKILL)
            child.wait()
            blocker.rollback()  # the orphaned backend finishes its statement, then aborts
            _wait_for(
                lambda: (
                    su.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (backend,)
                    ).fetchone()
                    == (0,)
                ),
                "the killed worker's backend to go",
            )
            state = su.execute(
                "SELECT p.retagged_chunks, g.wall_group_id, "
                "(SELECT count(*) FROM chunks c WHERE c.matter_id = 'M-1' "
                " AND c.wall_group_id = g.wall_group_id) "
                "FROM retag_pending p JOIN matter_wall_groups g USING (matter_id) "
                "WHERE p.matter_id = 'M-1'"
            ).fetchone()
            assert state is not None, "the queue entry must survive the crash"
            assert state[0] == 0 and state[2] == 0, "the killed batch must not have committed"
        seen_before = count()
        _wait_for(lambda: count() >= seen_before + 4, "searches after the crash")
        assert ok(client.get("/v1/admin/retag", headers=firm.h))["pending_matters"] == 1

        # a restarted worker picks the matter up and finishes it
        resources = client.app.state.resources  # type: ignore[attr-defined]
        worker = RetagWorker(resources.database, make_settings(retag_batch_size=3))
        worker.start()
        try:
            _wait_for(
                lambda: ok(client.get("/v1/admin/retag", headers=firm.h))["pending_matters"] == 0,
                "the restarted worker",
            )
        finally:
            worker.stop()
        seen_before = count()
        _wait_for(lambda: count() >= seen_before + 4, "searches after the re-tag")
    finally:
        stop.set()
        for reader in readers:
            reader.join()
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
    assert not errors, errors
    assert len(observations) >= 24
    leaks = [(kind, seen) for kind, seen in observations if "M-1" in seen]
    assert leaks == []
    assert all("M-2" in seen for _, seen in observations)  # the readers really saw results
    assert "M-1" in firm.matters_seen("alice@firm.nl", "octrooi veiligheidsglas", k=50)
