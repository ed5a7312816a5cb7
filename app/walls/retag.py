"""Background re-tagging: moves a pending matter's chunks to its new wall group in batches.

Pending matters are invisible to every search until done, so access is narrower while the
worker lags, never wider. All state lives in retag_pending, so a crash loses nothing: the
next worker (or the next start) continues where the last committed batch ended.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from app.db.engine import Database
from app.logging import Failures
from app.settings import Settings
from app.walls import repository
from app.walls.access import mark_writer

log = logging.getLogger("ewall.retag")


@dataclass
class RetagProgress:
    matters_done: int = 0
    chunks_moved: int = 0


def retag_matter_batch(
    database: Database, matter_id: str, target: str, policy_version: int, batch_size: int
) -> tuple[int, bool]:
    """One transaction: move up to batch_size chunks; clear the mark when none are left.
    Returns (chunks moved, finished). Nothing moves when the matter no longer waits for
    ``target`` (the runner read its queue row before the matter moved again): another
    runner may have moved the chunks to the new group and cleared the mark, and moving
    them back would leave them in the old group with nothing to hide them. Batches of one
    matter take turns (a lock until commit), so a batch that passed the check commits
    before any other runner's check or clear of the matter."""
    with database.transaction() as conn:
        mark_writer(conn)
        if not repository.claim_retag(conn, matter_id, target):
            return 0, False
        moved = repository.retag_batch(conn, matter_id, target, batch_size)
        if moved:
            repository.add_retagged_chunks(conn, matter_id, target, moved)
            return moved, False
        return 0, repository.clear_retag_if_done(conn, matter_id, target, policy_version)


def clear_idle(database: Database, rows: list[repository.PendingRetag]) -> set[str]:
    """One transaction: clear the marks of the matters among ``rows`` that have nothing to
    move (a client's matters without documents, queued by a wall over the client), so that
    the batches go to the matters that have; the matters cleared. One transaction apiece
    took seconds per thousand matters, and a matter queued behind them stayed hidden."""
    with database.transaction() as conn:
        mark_writer(conn)  # counts every chunk of the matters, whoever may read them
        return repository.clear_idle_retags(conn, rows)


def run_once(
    database: Database,
    batch_size: int,
    max_batches: int | None = None,
    keep_going: Callable[[], bool] = lambda: True,
    batch_lock: threading.Lock | None = None,
) -> RetagProgress:
    """Drain the queue (or stop after max_batches); used by the worker and by tests."""
    progress = RetagProgress()
    batches = 0
    lock = batch_lock or threading.Lock()
    while True:
        with lock:
            if not keep_going():
                return progress
            with database.transaction() as conn:
                rows = repository.next_retags(conn)
            if not rows:
                return progress
            cleared = clear_idle(database, rows)
        progress.matters_done += len(cleared)
        for row in rows:
            if row.matter_id in cleared:
                continue
            while True:
                with lock:
                    if not keep_going():
                        return progress
                    moved, finished = retag_matter_batch(
                        database,
                        row.matter_id,
                        row.target_wall_group_id,
                        row.policy_version,
                        batch_size,
                    )
                progress.chunks_moved += moved
                batches += 1
                if finished:
                    progress.matters_done += 1
                if moved == 0 or (max_batches is not None and batches >= max_batches):
                    break
            if max_batches is not None and batches >= max_batches:
                return progress


class RetagWorker:
    """In-process worker thread; pause() holds it (tests use that to prove fail-closed)."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self.database = database
        self.batch_size = settings.retag_batch_size
        self.poll_s = settings.retag_poll_s
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._batch_lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="ewall-retag", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._running.set()
        self._thread.join(timeout=10)

    def pause(self) -> None:
        """Stop before the next batch; returns once no batch is in flight."""
        self._running.clear()
        with self._batch_lock:
            pass

    def resume(self) -> None:
        self._running.set()
        self._wake.set()

    def wake(self) -> None:
        self._wake.set()

    def _loop(self) -> None:
        failures = Failures(self.poll_s)
        while not self._stop.is_set():
            self._running.wait()
            if self._stop.is_set():
                return
            wait = self.poll_s
            try:
                progress = run_once(
                    self.database,
                    self.batch_size,
                    max_batches=50,
                    keep_going=self._running.is_set,
                    batch_lock=self._batch_lock,
                )
                failures.succeeded(log, "re-tag batches run again")
                if progress.chunks_moved or progress.matters_done:
                    log.info(
                        "re-tagged",
                        extra={"chunks": progress.chunks_moved, "matters": progress.matters_done},
                    )
                    continue
            except Exception as exc:
                wait = failures.failed(log, "re-tag batch failed; will retry", exc)
            self._wake.wait(wait)
            self._wake.clear()
