"""The API process's side of the job worker process (docs/isolation.md).

``ewall serve`` (``EWALL_JOB_PROCESS``, on by default) runs no job threads: background jobs
(large documents, connector runs) are claimed and run by one child process, ``python -m
app.cli worker --supervised``, which lowers its own OS priority (``EWALL_JOB_PROCESS_NICE``)
after loading the model. The supervisor

- hands the child its settings over the child's stdin (one JSON line: the app's settings
  with the database URLs and role of the app's pool, so both talk to the same database,
  secrets never on a command line or in the environment);
- keeps that pipe open: writing ``wake`` cuts the child's poll short after an enqueue, and
  when the API process goes away, however it dies, the pipe closes and the child stops;
- restarts a child that died, after a back-off that doubles up to
  ``EWALL_JOB_PROCESS_RESTART_MAX_S`` (reset once a child has lived a minute), logging each;
- on ``stop`` asks the child to end (SIGTERM) and kills it after ``STOP_S``.

A job in flight when its process dies is claimed again by the next one: its advisory lock
died with the session (app/jobs/queue.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from typing import IO, Any

from pydantic import SecretStr
from pydantic_core import to_jsonable_python

from app.db.engine import Database
from app.settings import Settings

log = logging.getLogger("ewall.jobs")

READY = "ready"  # the child's first line on stdout once it claims jobs
HEALTHY_S = 60.0  # a child that lived this long resets the back-off
FIRST_RESTART_S = 0.5
# the child's time to stop: a job in flight gets a moment to finish (the child stops its
# threads a second before this), otherwise the next worker takes it over
STOP_S = 10.0


def child_settings(settings: Settings, database: Database) -> dict[str, Any]:
    """The settings a child needs to work on ``database`` as the app does."""
    data: dict[str, Any] = {}
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        data[name] = value.get_secret_value() if isinstance(value, SecretStr) else value
    data.update(
        database_url=database.urls.app,
        migrations_database_url=database.urls.migrations,
        app_role=database.app_role,
    )
    jsonable: dict[str, Any] = to_jsonable_python(data)
    return jsonable


def worker_command() -> list[str]:
    # our pid goes on the command line: the child compares its parent with it from its
    # first instruction, so an API process killed while the child still starts is noticed
    return [
        sys.executable,
        "-m",
        "app.cli",
        "worker",
        "--supervised",
        "--parent-pid",
        str(os.getpid()),
    ]


class WorkerSupervisor:
    """One job worker child process, kept alive until ``stop``."""

    def __init__(self, settings: Settings, database: Database) -> None:
        self._payload = json.dumps(child_settings(settings, database))
        self.restart_max_s = settings.job_process_restart_max_s
        self.stop_s = STOP_S
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ready = threading.Event()
        self._process: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None
        self.starts = 0
        self.exits: list[int] = []  # return codes of children that ended on their own
        self._pids: list[int] = []

    @property
    def pid(self) -> int | None:
        with self._lock:
            return self._process.pid if self._process is not None else None

    def pids(self) -> list[int]:
        """Every child started so far (tests check none is left)."""
        return list(self._pids)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._supervise, name="ewall-job-supervisor")
        self._thread.daemon = True
        self._thread.start()

    def wait_ready(self, timeout: float) -> bool:
        """True once the current child claims jobs (it loaded the model)."""
        return self._ready.wait(timeout)

    def wake(self) -> None:
        """A job was enqueued: the child claims it now instead of at its next poll."""
        self._send("wake")

    def _send(self, line: str) -> None:
        with self._lock:
            process = self._process
            if process is None or process.stdin is None:
                return
            try:
                process.stdin.write(line + "\n")
                process.stdin.flush()
            except (OSError, ValueError):  # it is dying; the supervisor restarts it
                pass

    # --- the supervising thread -----------------------------------------------------------
    def _spawn(self) -> subprocess.Popen[str]:
        # the child imports the app from wherever this process did
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        process = subprocess.Popen(  # noqa: S603 (our interpreter, our module)
            worker_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
            # its own session: a Ctrl-C at the terminal reaches the API, which stops the
            # worker, instead of the worker too (which the supervisor would take for a crash)
            start_new_session=True,
        )
        if process.stdin is not None:  # always, with stdin=PIPE
            process.stdin.write(self._payload + "\n")
            process.stdin.flush()
        return process

    def _supervise(self) -> None:
        delay = FIRST_RESTART_S
        while not self._stopping.is_set():
            started = time.monotonic()
            try:
                with self._lock:
                    if self._stopping.is_set():
                        return
                    process = self._spawn()
                    self._process = process
                    self._pids.append(process.pid)
                    self.starts += 1
            except OSError:
                log.exception("the job worker process could not start")
                process = None
            if process is not None:
                log.info("job worker process started", extra={"pid": process.pid})
                self._follow(process.stdout)
                code = process.wait()
                self._ready.clear()
                if self._stopping.is_set():
                    return
                self.exits.append(code)
                if time.monotonic() - started >= HEALTHY_S:
                    delay = FIRST_RESTART_S
            log.warning(
                "job worker process exited; restarting",
                extra={
                    "returncode": process.returncode if process is not None else None,
                    "restart_in_s": round(delay, 2),
                },
            )
            if self._stopping.wait(delay):
                return
            delay = min(self.restart_max_s, delay * 2)

    def _follow(self, stdout: IO[str] | None) -> None:
        """Read the child's stdout until it ends (so the pipe never fills)."""
        if stdout is None:
            return
        for line in stdout:
            if line.strip() == READY:
                self._ready.set()
            else:
                sys.stdout.write(line)

    # --- shutdown -------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after ``stop_s``) and the supervisor."""
        self._stopping.set()
        with self._lock:
            process = self._process
        if process is not None and process.poll() is None:
            try:
                process.terminate()
                process.wait(self.stop_s)
            except subprocess.TimeoutExpired:
                log.warning("job worker process did not stop; killing it")
                process.kill()
                process.wait()
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        if self._thread is not None:
            self._thread.join(self.stop_s)
