"""Background ingestion gives way to people who are searching (docs/isolation.md, Run 11).

On two cores, a folder run's database work (chunk inserts, index maintenance, WAL) runs at
the same OS priority as every search's, whatever niceness the job worker process has, and a
search during it takes about twice as long. So while people search, the job worker process
works only part of the time: before each document (and between slices of a long one's
chunks, app/ingest/pipeline.py) it asks whether a search was audited since its last look,
and if so it pauses ``(1 - duty) / duty`` times as long as the work since then took (at most
``pause_max_s``), ending the pause early once no search has been audited for ``quiet_s``.
No pause holds a transaction or a pooled connection: the embeddings are computed after
the document's short read transaction and before its write transaction. With nobody
searching it never pauses; with people searching all day it still advances at ``duty`` of
its speed, so no job starves.

The signal is the retrieval audit chain's head (one indexed row): every search, on the
primary or on a replica, appends there in its own transaction, so the worker sees searches
served by any API process, on any host, without a channel of its own. It is read at most
every ``poll_s``, so a crawl of many unchanged documents costs a few reads a second.

State is per thread: each job worker thread paces its own documents, and ``reset`` at the
start of a job forgets the time between jobs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy.exc import SQLAlchemyError

from app.db.engine import Database
from app.jobs import repository

# The job worker's pauses (docs/isolation.md, Run 11): at most PAUSE_MAX_S each, ended early
# once no search has been audited for QUIET_S.
PAUSE_MAX_S = 5.0
QUIET_S = 1.0

log = logging.getLogger("ewall.jobs")


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.since: float | None = None  # when this thread's current piece of work began
        self.seen: int | None = None  # the retrieval head seen then


class SearchPacer:
    def __init__(
        self,
        read_head: Callable[[], int],
        *,
        duty: float,
        pause_max_s: float,
        quiet_s: float,
        poll_s: float = 0.1,
        stop: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], object] | None = None,
    ) -> None:
        if not 0 < duty <= 1:
            raise ValueError("duty must be in (0, 1]")
        self.read_head = read_head
        self.duty = duty
        self.pause_max_s = pause_max_s
        self.quiet_s = quiet_s
        self.poll_s = poll_s
        self.stop = stop or threading.Event()
        self.clock = clock
        self.wait = wait or self.stop.wait  # returns early once stop is set
        self._state = _ThreadState()
        self._lock = threading.Lock()
        self.pauses = 0
        self.paused_s = 0.0

    @classmethod
    def for_database(
        cls,
        database: Database,
        *,
        duty: float,
        pause_max_s: float,
        quiet_s: float,
        stop: threading.Event | None = None,
    ) -> SearchPacer:
        def read_head() -> int:
            with database.connect() as conn:
                return repository.retrieval_head(conn)

        return cls(read_head, duty=duty, pause_max_s=pause_max_s, quiet_s=quiet_s, stop=stop)

    def reset(self) -> None:
        """A job starts on this thread: the time since the last one was not work."""
        self._state.since = None
        self._state.seen = None

    def _head(self) -> int | None:
        try:
            return self.read_head()
        except SQLAlchemyError:  # never fail a document over a courtesy
            log.debug("retrieval head unreadable; not pacing", exc_info=True)
            return None

    def pace(self) -> float:
        """Before a document: pause if people searched during the last piece of work.
        Returns the seconds paused."""
        if self.duty >= 1:
            return 0.0
        state = self._state
        now = self.clock()
        if state.since is not None and now - state.since < self.poll_s:
            return 0.0  # too little work since the last look to be worth a read
        head = self._head()
        paused = 0.0
        if state.since is not None and head is not None and head != state.seen:
            worked = now - state.since
            wanted = min(self.pause_max_s, worked * (1 - self.duty) / self.duty)
            head, paused = self._pause(wanted, head)
        state.seen = head
        state.since = self.clock()
        return paused

    def _pause(self, seconds: float, head: int) -> tuple[int, float]:
        """Wait up to ``seconds``; back to work early once searches stopped for quiet_s."""
        started = self.clock()
        last_search = started
        deadline = started + seconds
        while not self.stop.is_set():
            now = self.clock()
            if now >= deadline or now - last_search >= self.quiet_s:
                break
            self.wait(min(self.poll_s, deadline - now))
            latest = self._head()
            if latest is not None and latest != head:
                head, last_search = latest, self.clock()
        paused = self.clock() - started
        with self._lock:
            self.pauses += 1
            self.paused_s += paused
        return head, paused
