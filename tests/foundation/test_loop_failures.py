"""A background loop that keeps failing (the database down under the re-tag worker and the
job workers) waits longer each time and logs its traceback once: before, each loop logged a
traceback per try, three lines a second, 660 KB of log in a minute (a check of
2026-12-06)."""

from __future__ import annotations

import logging

import pytest

from app.logging import Failures


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
