"""What a 503 says of a database error is decided by the error's class (its SQLSTATE), with
errors raised by a real PostgreSQL: a transaction failed for a concurrent one is
``conflict_retry``, a cancelled statement ``timeout``, a database that cannot be reached
``database_unavailable``. The handler matched words: a lock timeout ("canceling statement
due to lock timeout") answered ``timeout``, a deadlock ``database_unavailable``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from psycopg import errors as pg_errors

from app.errors import database_failure
from tests.conftest import DbHandle
from tests.helpers import unreachable_database_url

ROW = "SELECT 1 FROM policy_state WHERE id = 1 FOR UPDATE"


@contextmanager
def _row_held(db: DbHandle) -> Iterator[None]:
    with psycopg.connect(db.superuser_url) as holder:
        holder.execute(ROW)
        yield
        holder.rollback()


def _raised(run: Callable[[], Any]) -> BaseException:
    with pytest.raises(psycopg.Error) as caught:
        run()
    return caught.value


def _lock_timeout(db: DbHandle) -> BaseException:
    with _row_held(db), psycopg.connect(db.superuser_url) as conn:
        conn.execute("SET lock_timeout = '1ms'")  # the row is never let go meanwhile
        return _raised(lambda: conn.execute(ROW))


def _nowait(db: DbHandle) -> BaseException:
    with _row_held(db), psycopg.connect(db.superuser_url) as conn:
        return _raised(lambda: conn.execute(ROW + " NOWAIT"))


def _statement_timeout(db: DbHandle) -> BaseException:
    with _row_held(db), psycopg.connect(db.superuser_url) as conn:
        conn.execute("SET statement_timeout = '1ms'")
        return _raised(lambda: conn.execute(ROW))


def _serialization_failure(db: DbHandle) -> BaseException:
    with psycopg.connect(db.superuser_url) as late, psycopg.connect(db.superuser_url) as first:
        late.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        late.execute("SELECT version FROM policy_state WHERE id = 1")  # its snapshot
        first.execute("UPDATE policy_state SET updated_at = updated_at WHERE id = 1")
        first.commit()
        update = "UPDATE policy_state SET updated_at = updated_at WHERE id = 1"
        return _raised(lambda: late.execute(update))


def _refused(db: DbHandle) -> BaseException:
    return _raised(lambda: psycopg.connect(unreachable_database_url(), connect_timeout=5))


CASES: dict[str, tuple[Callable[[DbHandle], BaseException], type[BaseException] | None, str]] = {
    "lock timeout": (_lock_timeout, pg_errors.LockNotAvailable, "conflict_retry"),
    "lock refused at once": (_nowait, pg_errors.LockNotAvailable, "conflict_retry"),
    "serialization failure": (
        _serialization_failure,
        pg_errors.SerializationFailure,
        "conflict_retry",
    ),
    "statement timeout": (_statement_timeout, pg_errors.QueryCanceled, "timeout"),
    "connection refused": (_refused, None, "database_unavailable"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_database_error_is_answered_by_its_class(module_db: DbHandle, case: str) -> None:
    provoke, kind, code = CASES[case]
    error = provoke(module_db)
    if kind is not None:
        assert isinstance(error, kind), repr(error)
    failure = database_failure(error)
    assert failure.code == code, (case, repr(error))
    if code == "conflict_retry":
        assert "nothing was changed" in failure.message
        assert "not reachable" not in failure.message


def test_a_deadlock_is_a_concurrent_change_not_an_unreachable_database() -> None:
    # the route-level deadlock (tests/walls/test_policy_deadlock_retry.py) answers through
    # this: the error class alone decides, whatever its words
    failure = database_failure(pg_errors.DeadlockDetected("deadlock detected"))
    assert failure.code == "conflict_retry"
