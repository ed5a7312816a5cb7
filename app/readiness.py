"""/readyz without hanging: the checks (database, migrations, model) run on a thread of their
own, one at a time, and the answer waits for them at most ``WAIT_S``.

A database that does not answer (a frozen server, a lost network path with the socket still
open) blocks a check in the driver: PostgreSQL's own statement_timeout cannot fire there,
and libpq has no client-side timeout of its own. Run on the request threads, each probe
would hold one until the server came back, and probes every few seconds would use up the
pool that /healthz, /metrics and every search share. So the probe answers 503 once it has
waited ``WAIT_S``, and while a check is still blocked no second one is started: the probes
that come meanwhile answer 503 at once, naming the check that waits.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

WAIT_S = 5.0  # longer than a healthy check takes on a loaded machine; shorter than a probe's period

Checks = Callable[[], tuple[bool, dict[str, Any]]]


class Readiness:
    def __init__(self, checks: Checks) -> None:
        self._checks = checks
        self._lock = threading.Lock()
        self._running: Future[tuple[bool, dict[str, Any]]] | None = None

    async def check(self) -> tuple[bool, dict[str, Any]]:
        """(ready, checks); not ready with ``{"database": False, "waiting": ...}`` when the
        checks did not end within ``WAIT_S`` or an earlier run of them still waits."""
        with self._lock:
            if self._running is not None and not self._running.done():
                return False, _waiting("an earlier readiness check still waits for the database")
            running: Future[tuple[bool, dict[str, Any]]] = Future()
            self._running = running
        # a daemon thread: one blocked for good never holds up the process's exit
        threading.Thread(
            target=self._run, args=(running,), name="ewall-readyz", daemon=True
        ).start()
        try:
            return await asyncio.wait_for(asyncio.wrap_future(running), WAIT_S)
        except TimeoutError:
            return False, _waiting(f"the database did not answer within {WAIT_S:g} s")

    def _run(self, running: Future[tuple[bool, dict[str, Any]]]) -> None:
        try:
            running.set_result(self._checks())
        except BaseException as exc:  # reported by check() as the probe's error
            running.set_exception(exc)


def _waiting(why: str) -> dict[str, Any]:
    return {"database": False, "waiting": why}
