"""When to retry a request and how long to wait first.

Retries cover 429 (server-provided waits first), 500/502/503/504 and transport errors, bounded
by ``connector_max_attempts``; waits go through an injectable ``sleep`` so tests run fast. A
500 is retried too: docs/dms-apis.md §2.8 treats 5xx on a download as retryable, and one
500 failed the document for the run (501, "not implemented", is an answer, not a fault).
"""

from __future__ import annotations

import email.utils
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx

Sleep = Callable[[float], None]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def header_seconds(value: str | None) -> float | None:
    """A non-negative number of seconds from a header value; None when it is not one."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def retry_after_seconds(headers: httpx.Headers, now: datetime | None = None) -> float | None:
    """The wait a throttling response asks for, in the order iManage's own client prefers
    (S4): ``x-ratelimit-retryafter``, ``x-ratelimit-reset``, then the standard
    ``Retry-After`` (delta seconds or an HTTP date)."""
    now = now or datetime.now(UTC)
    seconds = header_seconds(headers.get("x-ratelimit-retryafter"))
    if seconds is not None:
        return seconds
    reset = header_seconds(headers.get("x-ratelimit-reset"))
    if reset is not None:
        # Either seconds until the reset or an epoch timestamp; no sane wait is 30+ years.
        return max(0.0, reset - now.timestamp()) if reset > 1e9 else reset
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = header_seconds(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 60.0
    # A server asking for a longer pause than this is not throttling a crawler, it is down;
    # giving up is better than holding a sync for an hour.
    max_wait_s: float = 300.0
    # x-ratelimit-remaining at or below this: pause one backoff step before the next call.
    low_remaining: int = 10

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Exponential with "equal jitter": half fixed, half random, so retries of many
        workers spread out but never collapse to zero."""
        step = min(self.backoff_cap_s, self.backoff_base_s * 2 ** max(0, attempt - 1))
        return float(step / 2 + rng.uniform(0, step / 2))
