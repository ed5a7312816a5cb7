"""A concurrency cap and a token-bucket rate limit shared by every client of one tenant."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

Clock = Callable[[], float]


class TokenBucket:
    """Requests per second with a small burst.

    ``reserve`` takes a token now and says how long to wait for it; the balance may go
    negative, which queues callers fairly without a polling loop and keeps the arithmetic
    right when the sleep is a no-op in tests.
    """

    def __init__(
        self, rate_per_s: float, burst: float | None = None, clock: Clock = time.monotonic
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate_per_s must be positive")
        self.rate = rate_per_s
        self.capacity = burst if burst is not None else max(1.0, rate_per_s)
        self._clock = clock
        self._tokens = self.capacity
        self._stamp = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


class TenantLimiter:
    def __init__(self, concurrency: int, rate_per_s: float) -> None:
        self.semaphore = threading.BoundedSemaphore(concurrency)
        self.bucket = TokenBucket(rate_per_s)
        self.concurrency = concurrency
        self.rate_per_s = rate_per_s


_LIMITERS: dict[tuple[str, int, float], TenantLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def limiter_for(tenant: str, concurrency: int, rate_per_s: float) -> TenantLimiter:
    """One limiter per tenant in this process, so two syncs against the same tenant (a full
    crawl and a delta, say) share the budget instead of doubling it."""
    key = (tenant, concurrency, rate_per_s)
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(key)
        if limiter is None:
            limiter = _LIMITERS[key] = TenantLimiter(concurrency, rate_per_s)
        return limiter
