"""A background loop that keeps failing (the database down under the re-tag worker and the
job workers) waits longer each time and logs its traceback once: before, each loop logged a
traceback per try, three lines a second, 660 KB of log in a minute (a check of
2026-12-06)."""

from __future__ import annotations

import logging

import pytest

from app.logging import Failures
from tests.conftest import DbHandle


def test_waits_double_to_a_cap_and_the_traceback_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("ewall.test.loop")
    failures = Failures(0.5, cap_s=8.0)
    with caplog.at_level(logging.INFO, logger=log.name):
        down = ConnectionError("database down")
        waits = [failures.failed(log, "batch failed", down) for _ in range(10)]
        failures.succeeded(log, "batches run again")
        failures.succeeded(log, "batches run again")
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0]
    records = [(r.levelname, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert records == [
        ("ERROR", "batch failed", True),
        ("WARNING", "batch failed (still failing)", False),  # 2
        ("WARNING", "batch failed (still failing)", False),  # 4
        ("WARNING", "batch failed (still failing)", False),  # 8
        ("INFO", "batches run again", False),
    ]
    assert failures.count == 0


def test_a_failure_of_another_kind_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A streak that starts as an outage and turns into another error: the new error's
    traceback is logged once too (a review)."""
    log = logging.getLogger("ewall.test.loop2")
    failures = Failures(0.5)
    with caplog.at_level(logging.INFO, logger=log.name):
        for exc in (ConnectionError("down"), ConnectionError("down"), ValueError("bad row")):
            failures.failed(log, "batch failed", exc)
    assert [(r.levelname, r.exc_info is not None) for r in caplog.records] == [
        ("ERROR", True),
        ("WARNING", False),
        ("ERROR", True),
    ]


def test_the_job_loop_backs_off_while_claims_fail_and_polls_again_after(
    db: DbHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job workers' loop itself: waits double while a claim fails (the database down)
    and return to the poll interval once one succeeds."""
    import threading

    from app.jobs.queue import JobWorker, JobWorkers

    failing = 4
    calls = 0
    waits: list[float] = []
    seen = threading.Event()

    def run_once(self: JobWorker) -> bool:
        nonlocal calls
        calls += 1
        if calls <= failing:
            raise ConnectionError("database down")
        return False

    class Recording(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(float(timeout or 0))
            if len(waits) >= failing + 2:
                seen.set()
            return super().wait(0)  # the test does not sleep the waits out

    workers = JobWorkers(db.database, {}, count=1, poll_s=0.25, retry_base_s=1.0)
    monkeypatch.setattr(workers, "_wake", Recording())
    monkeypatch.setattr(JobWorker, "run_once", run_once)
    workers.start()
    try:
        assert seen.wait(60), waits
    finally:
        workers.stop()
    assert waits[: failing + 2] == [0.25, 0.5, 1.0, 2.0, 0.25, 0.25], waits
