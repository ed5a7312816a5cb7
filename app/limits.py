"""Per-person limits on the heavy endpoints, so that one person's work cannot stall
everyone else's search (docs/isolation.md).

Two kinds, both answering 429 ``rate_limited`` with a ``Retry-After`` header:
- concurrency: at most N calls of one person in flight on a route family (the gates);
- budgets: a token bucket per person and budget (grounding sentences and characters,
  citations checked), refilled continuously at its per-minute rate.

Per-call caps (a request too large to ever be served) stay 422 in the routes: retrying
them later would not help, so they carry no Retry-After.

The state lives in this process: with several API processes each enforces its own share,
which bounds the load per process, the resource these limits protect.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.errors import RateLimited


class PersonLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._in_flight: dict[tuple[str, str], int] = {}
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}  # tokens, at

    @contextmanager
    def slot(self, family: str, person_id: str, limit: int) -> Iterator[None]:
        """Hold one of ``limit`` in-flight slots of ``person_id`` for ``family``."""
        key = (family, person_id)
        with self._lock:
            if self._in_flight.get(key, 0) >= limit:
                raise RateLimited(
                    f"You already have {limit} {family} calls in progress; wait for one to finish.",
                    retry_after_s=1,
                    limit=limit,
                    scope=f"{family}_concurrent",
                )
            self._in_flight[key] = self._in_flight.get(key, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._in_flight[key] - 1
                if left:
                    self._in_flight[key] = left
                else:
                    del self._in_flight[key]

    def in_flight(self, family: str, person_id: str) -> int:
        with self._lock:
            return self._in_flight.get((family, person_id), 0)

    def spend(self, budget: str, person_id: str, amount: int, per_minute: int) -> None:
        """Take ``amount`` from the person's bucket of ``budget`` or raise RateLimited.

        Several budgets of one call are checked with ``spend_all`` so that a refusal by one
        takes nothing from the others."""
        self.spend_all(person_id, [(budget, amount, per_minute)])

    def spend_all(self, person_id: str, costs: list[tuple[str, int, int]]) -> None:
        now = self.clock()
        with self._lock:
            levels: list[tuple[tuple[str, str], float]] = []
            for budget, amount, per_minute in costs:
                key = (budget, person_id)
                rate = per_minute / 60.0
                tokens, at = self._buckets.get(key, (float(per_minute), now))
                tokens = min(float(per_minute), tokens + max(0.0, now - at) * rate)
                # a call larger than the whole budget needs a full bucket, not a miracle
                need = float(min(amount, per_minute))
                if tokens < need:
                    wait = math.ceil((need - tokens) / rate)
                    raise RateLimited(
                        f"Your {budget.replace('_', ' ')} budget ({per_minute} a minute) is "
                        f"spent; try again in {wait} s.",
                        retry_after_s=max(1, wait),
                        limit=per_minute,
                        scope=budget,
                    )
                levels.append((key, tokens - need))
            for key, left in levels:
                self._buckets[key] = (left, now)
            if len(self._buckets) > 100_000:  # people who stopped calling refill to full anyway
                self._buckets.clear()
