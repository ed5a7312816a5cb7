"""tests/sources.py ``parse_source``: a collection whose finalizers parse (a logged exception's
traceback does on Python 3.11) cannot break a parse of the project's source."""

from __future__ import annotations

import ast
import gc
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.sources import parse_source

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger("tests.sources")


class _Cycle:
    """Garbage only the cyclic collector frees; its finalizer logs an exception, as a
    suspended generator of a finished test does when it is collected and fails."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        empty: dict[str, int] = {}
        try:
            empty["absent"]
        except KeyError:
            log.debug("collected", exc_info=True)


@pytest.fixture
def collections_mid_parse() -> Iterator[None]:
    """The collector runs every few allocations, with finalizers that parse waiting."""
    threshold = gc.get_threshold()
    level = log.level
    log.setLevel(logging.DEBUG)  # the record is formatted (and its traceback parsed)
    gc.set_threshold(50, 1, 1)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        log.setLevel(level)
        gc.collect()


def _parse_under_collections(parse: Callable[[str], ast.Module]) -> int:
    source = (ROOT / "app" / "search" / "service.py").read_text(encoding="utf-8")
    failures = 0
    for _ in range(20):
        for _ in range(200):
            _Cycle()
        try:
            parse(source)
        except SystemError:
            failures += 1
    return failures


class _Formatting(logging.Handler):
    """Formats each record (its traceback included) and keeps nothing."""

    def emit(self, record: logging.LogRecord) -> None:
        self.format(record)


def test_a_parse_is_not_broken_by_finalizers_that_parse(collections_mid_parse: None) -> None:
    handler = _Formatting()
    log.addHandler(handler)
    try:
        assert _parse_under_collections(parse_source) == 0
    finally:
        log.removeHandler(handler)


def test_the_tests_parse_source_through_parse_source() -> None:
    """A bare ``ast.parse`` in a test is open to the failure above again."""
    allowed = {"tests/sources.py", "tests/foundation/test_sources.py"}
    bare = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in allowed
        and "ast.parse(" in path.read_text(encoding="utf-8")
    ]
    assert not bare, f"use tests.sources.parse_source: {bare}"
