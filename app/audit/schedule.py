"""Signed audit checkpoints on a schedule, taken by the service itself.

A chain that a database superuser rewrites and recomputes verifies on its own; only a
checkpoint signed before the rewrite shows it (app/audit/checkpoints.py). Left to a cron entry
that an operator has to write, a default deployment had none, and such a rewrite passed every
verification. The service now takes one every ``EWALL_AUDIT_CHECKPOINT_INTERVAL_S`` (an hour
by default; 0 leaves it to cron), exactly as `ewall audit checkpoint` does (the key created on
first use, a chain that does not verify never signed):

- once per service: in the process that runs the re-tag worker (``ewall serve``'s parent with
  ``--workers N``); processes and hosts beside it skip while one holds the checkpoint lock;
- due when the newest checkpoint in the folder is an interval old, or there is none, and a
  chain has moved since it (an idle firm gets no new files); the first look comes a minute
  after start, so a service restarted more often than the interval still takes them;
- a refusal (the chain does not verify, or no longer passes through an earlier checkpoint) is
  logged as an error at every look, and nothing is signed: compliance sees it in
  GET /v1/audit/verify as well;
- the first checkpoint a process takes, and one a day after, verifies the chains from the
  genesis; the others only the rows after the newest checkpoint
  (``checkpoints.write_checkpoint``, incremental), so that an hourly look at a large log
  reads an hour's rows, not the year's.

The window a rewrite can hide in is the interval: rows appended since the newest checkpoint
are protected by the chain alone (docs/design.md, known limits).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

from sqlalchemy import Connection

from app.audit import checkpoints, repository
from app.db.engine import Database, begin_snapshot
from app.db.locks import LockNamespace
from app.settings import Settings

log = logging.getLogger("ewall.audit")

FIRST_LOOK_S = 60.0  # after start: long enough for a short-lived process to take none
# the rows before the newest checkpoint are read again, in full, once a day (and at the
# first checkpoint a process takes); in between a look verifies the rows appended since
FULL_EVERY_S = 86_400.0


def _signed_heads(path: Path) -> dict[str, tuple[int, str]] | None:
    """The heads a checkpoint file names (None when it cannot be read: take a new one)."""
    try:
        chains = json.loads(path.read_text(encoding="utf-8"))["chains"]
        return {name: (int(c["seq"]), str(c["hash"])) for name, c in chains.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _newest(files: list[Path], now: float, interval_s: float) -> Path | None:
    """The newest checkpoint (``files`` in name order, the order they were signed in),
    passing over one dated more than an interval after ``now``: written while this host's
    clock ran ahead and was set right since, it would read as "signed within the interval"
    until the clock caught up, and nothing would be signed meanwhile. One dated less ahead
    (a file server's clock a little ahead) still counts, or every look would sign again."""
    for path in reversed(files):
        if path.stat().st_mtime <= now + interval_s:
            return path
    return None


class CheckpointSchedule:
    """The thread that takes the service's scheduled checkpoints; ``run_once`` is one look."""

    def __init__(self, settings: Settings, database: Database) -> None:
        self.settings = settings
        self.database = database
        self.interval_s = float(settings.audit_checkpoint_interval_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._full_at: float | None = None  # when this process last verified in full

    def start(self) -> None:
        if self.interval_s <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._loop, name="ewall-audit-checkpoints", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        look = min(FIRST_LOOK_S, self.interval_s)
        wait = look
        while not self._stop.wait(wait):
            wait = look
            try:
                self.run_once()
            except checkpoints.CheckpointError as exc:
                # the refusal is the message; its traceback says nothing more. It stands
                # until someone acts (a broken chain, a key kept elsewhere): said again at
                # each interval, not each minute
                log.error("audit checkpoint refused: %s", exc)  # noqa: TRY400
                wait = self.interval_s
            except Exception:  # the database went away, a full disk: look again later
                log.exception("audit checkpoint failed; the next look retries")

    def _due(self, files: list[Path], now: float) -> bool:
        newest = _newest(files, now, self.interval_s)
        return newest is None or now - newest.stat().st_mtime >= self.interval_s

    def run_once(self, now: float | None = None) -> Path | None:
        """Take a checkpoint when one is due; its file, or None (not due, the chains have not
        moved, or another process holds the checkpoint lock). Raises CheckpointError when
        the chains do not verify (nothing is signed)."""
        directory = checkpoints.checkpoint_dir(self.settings)
        clock = time.time() if now is None else now
        if not self._due(checkpoints.listed(directory), clock):
            return None
        namespace = int(LockNamespace.CHECKPOINT)
        with self.database.engine.connect() as guard:
            taken = repository.try_checkpoint_lock(guard, namespace)
            guard.commit()
            if not taken:
                return None
            try:
                return self._take(guard, directory, clock)
            finally:
                # a statement of the look that failed on this connection aborted its
                # transaction: the unlock would fail too, and the session lock would go
                # back to the pool held, every later look skipped as "another holds it"
                guard.rollback()
                repository.checkpoint_unlock(guard, namespace)
                guard.commit()

    def _take(self, guard: Connection, directory: Path, now: float) -> Path | None:
        files = checkpoints.listed(directory)  # again, under the lock: another may have
        if not self._due(files, now):
            return None
        heads = repository.heads(guard)
        guard.commit()
        newest = _newest(files, now, self.interval_s)
        if newest is not None and _signed_heads(newest) == heads:
            return None  # nothing appended since the newest checkpoint
        key_file = checkpoints.key_path(self.settings)
        key, made = checkpoints.signing_key(key_file)
        if made is not None:
            log.info("generated the audit checkpoint key %s (public key %s)", key_file, made)
        # a clock set back since the last full pass (it ran ahead) reads as no time passed
        # until it catches up: a full pass then, not a day's or a week's of incremental ones
        incremental = self._full_at is not None and 0 <= now - self._full_at < FULL_EVERY_S
        with self.database.engine.connect() as conn:
            begin_snapshot(conn)  # the rows verified are the rows whose heads are signed
            try:
                written = checkpoints.write_checkpoint(
                    conn, key, directory, incremental=incremental
                )
            finally:
                conn.rollback()
        if written.verified_from is None:
            self._full_at = now
        log.info(
            "audit checkpoint written",
            extra={
                "file": str(written.path),
                "chains": json.dumps(written.heads),
                "verified": written.verified_from or "from the genesis",
                "rows": written.checked,
            },
        )
        return written.path
