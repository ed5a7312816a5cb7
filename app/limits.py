"""Per-person limits on the heavy endpoints, so that one person's work cannot stall
everyone else's search (docs/isolation.md).

Two kinds, both answering 429 ``rate_limited`` with a ``Retry-After`` header:
- concurrency: at most N calls of one person in flight on a route family, across
  processes (searches are also bounded per process first, in memory: ``local_slot``);
- budgets: a token bucket per person and budget (grounding sentences and characters,
  citations checked), refilled continuously at its per-minute rate.

Per-call caps (a request too large to ever be served) stay 422 in the routes: retrying
them later would not help, so they carry no Retry-After.

The counts live in PostgreSQL (``limit_buckets``, ``limit_slots``, sql/limits.sql), so a
person's limit holds across every API process (invariant 13), not once per process. Each
check is one upsert with RETURNING on a small pool of the limiter's own: a check never
waits for a connection behind searches that fill the service's pool, holds its row lock
only until its own commit, and a statement timeout bounds it if the database stalls. A slot
is a lease: released when the call ends, or lapsing after ``SLOT_LEASE_S`` when the process
holding it died. Rows that no longer limit anyone are deleted a bounded batch at a time,
every ``SWEEP_EVERY`` checks of a process.
"""

from __future__ import annotations

import logging
import math
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import Connection

from app import limits_repository as repo
from app.db.engine import Database
from app.errors import RateLimited

log = logging.getLogger("ewall.limits")

# Longer than any gate call runs (the per-call caps bound its work), short enough that a slot
# of a process that died frees itself within minutes.
SLOT_LEASE_S = 600.0
# A search ends within its statement timeout (15 s) and its wait for the encoder: a search
# slot of a process that died frees itself within a minute (with the gates' lease, one
# process killed during an agent's eight searches locked that person out for ten minutes).
SEARCH_SLOT_LEASE_S = 60.0
SWEEP_EVERY = 64
SWEEP_BATCH = 500
CHECK_TIMEOUT_MS = 2_000
POOL_SIZE = 2
POOL_MAX_OVERFLOW = 2  # with POOL_SIZE, 4 connections a process at most: checks take microseconds


def _in_progress(family: str, limit: int) -> RateLimited:
    return RateLimited(
        f"You already have {limit} {family} calls in progress; wait for one to finish.",
        retry_after_s=1,
        limit=limit,
        scope=f"{family}_concurrent",
    )


class PersonLimiter:
    """``clock``: epoch seconds to count with instead of the database's clock (tests freeze
    it so that buckets do not refill between two calls)."""

    def __init__(self, database: Database, clock: Callable[[], float] | None = None) -> None:
        self.clock = clock
        self._database = Database(
            database.urls,
            app_role=database.app_role,
            pool_size=POOL_SIZE,
            max_overflow=POOL_MAX_OVERFLOW,
            statement_timeout_ms=CHECK_TIMEOUT_MS,
            prepare_marked=False,
        )
        self._lock = threading.Lock()
        self._checks = 0
        self._local: dict[tuple[str, str], int] = {}  # local_slot's calls in flight

    def _now(self) -> float | None:
        return self.clock() if self.clock is not None else None

    @contextmanager
    def slot(
        self,
        family: str,
        person_id: str,
        limit: int,
        *,
        budget: tuple[str, int] | None = None,
        lease_s: float = SLOT_LEASE_S,
    ) -> Iterator[None]:
        """Hold one of ``limit`` in-flight slots of ``person_id`` for ``family``, and pay one
        from ``budget`` (name, per minute) in the same transaction: a call refused for
        either takes neither."""
        holder = str(uuid.uuid4())
        refused: RateLimited | None = None
        with self._database.engine.connect() as conn, conn.begin() as transaction:
            if not repo.take_slot(conn, family, person_id, holder, limit, lease_s, self._now()):
                refused = _in_progress(family, limit)
            elif budget is not None:
                refused = self._spent(conn, person_id, [(budget[0], 1, budget[1])])
            if refused is not None:
                transaction.rollback()
        self._counted()
        if refused is not None:
            raise refused
        try:
            yield
        finally:
            try:
                with self._database.transaction() as conn:
                    repo.release_slot(conn, family, person_id, holder)
            except Exception:  # the lease lapses on its own; the call's own outcome stands
                log.warning("releasing a %s slot failed", family, exc_info=True)

    @contextmanager
    def local_slot(self, family: str, person_id: str, limit: int) -> Iterator[None]:
        """Hold one of ``limit`` slots of ``person_id`` for ``family`` in this process. What
        it guards is the process's own: its request threads (a sync route holds one while it
        waits for the encoder or the database) and its encoder lane, which one person's
        dozens of concurrent searches would fill, stalling everyone's. Counted in memory: a
        call refused here costs no round trip (the search also takes a slot across processes,
        ``search``)."""
        key = (family, person_id)
        with self._lock:
            taken = self._local.get(key, 0)
            if taken < limit:
                self._local[key] = taken + 1
        if taken >= limit:
            raise _in_progress(family, limit)
        try:
            yield
        finally:
            with self._lock:
                left = self._local[key] - 1
                if left:
                    self._local[key] = left
                else:
                    del self._local[key]

    @contextmanager
    def search(self, person_id: str, in_flight: int, per_minute: int) -> Iterator[None]:
        """What one audited search of ``person_id`` takes: one of ``in_flight`` slots in this
        process (taken first and in memory, so a search refused there costs no round trip),
        then, in one transaction, one of ``in_flight`` slots across every API process and
        one of the ``per_minute`` budget (invariant 13: a person's limits hold however many
        processes serve; a check of 2026-12-06 had 2 x 8 searches of one person in flight on
        two processes)."""
        with (
            self.local_slot("search", person_id, in_flight),
            self.slot(
                "search",
                person_id,
                in_flight,
                budget=("searches", per_minute),
                lease_s=SEARCH_SLOT_LEASE_S,
            ),
        ):
            yield

    def in_flight(self, family: str, person_id: str) -> int:
        with self._database.transaction() as conn:
            return repo.slots_in_flight(conn, family, person_id, self._now())

    def spend(self, budget: str, person_id: str, amount: int, per_minute: int) -> None:
        """Take ``amount`` from the person's bucket of ``budget`` or raise RateLimited.

        Several budgets of one call are checked with ``spend_all`` so that a refusal by one
        takes nothing from the others."""
        self.spend_all(person_id, [(budget, amount, per_minute)])

    def spend_all(self, person_id: str, costs: list[tuple[str, int, int]]) -> None:
        if not costs:
            return
        with self._database.engine.connect() as conn, conn.begin() as transaction:
            refused = self._spent(conn, person_id, costs)
            if refused is not None:
                transaction.rollback()
        self._counted()
        if refused is not None:
            raise refused

    def _spent(
        self, conn: Connection, person_id: str, costs: list[tuple[str, int, int]]
    ) -> RateLimited | None:
        """Take ``costs`` (budget, amount, per minute) from the person's buckets on
        ``conn``; the refusal of the first budget that cannot pay (the caller then rolls
        back, so the others keep theirs), or None."""
        # a call larger than the whole budget needs a full bucket, not a miracle
        asked = [
            (budget, float(min(amount, per_minute)), float(per_minute))
            for budget, amount, per_minute in costs
        ]
        levels = {lv.budget: lv for lv in repo.spend(conn, person_id, asked, self._now())}
        refused = [c for c in costs if not levels[c[0]].granted]
        if not refused:
            return None
        budget, amount, per_minute = refused[0]
        rate = per_minute / 60.0
        wait = math.ceil((min(amount, per_minute) - levels[budget].tokens) / rate)
        return RateLimited(
            f"Your {budget.replace('_', ' ')} budget ({per_minute} a minute) is "
            f"spent; try again in {wait} s.",
            retry_after_s=max(1, wait),
            limit=per_minute,
            scope=budget,
        )

    def sweep(self) -> int:
        """Delete a bounded batch of rows that no longer limit anyone; how many went."""
        with self._database.transaction() as conn:
            return repo.sweep(conn, SWEEP_BATCH, self._now())

    def _counted(self) -> None:
        with self._lock:
            self._checks += 1
            due = self._checks % SWEEP_EVERY == 0
        if due:
            try:
                self.sweep()
            except Exception:  # cleanup only; the next sweep tries again
                log.warning("sweeping the limit rows failed", exc_info=True)

    def close(self) -> None:
        self._database.dispose()
