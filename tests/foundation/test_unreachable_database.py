"""A database that accepts a connection and never answers (a partitioned or paused host) is
given up on within seconds, not after minutes: psycopg without a connect_timeout waits
130 s, and every request behind the attempt waits for the pool."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from app.db.engine import NETWORK_TIMEOUTS, Database, DatabaseUrls, network_timeouts
from tests.conftest import DbHandle


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port whose connections are accepted and never answered."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


def test_a_database_that_never_answers_is_given_up_on(silent_server: int) -> None:
    url = f"postgresql://ewall@127.0.0.1:{silent_server}/ewall"
    database = Database(DatabaseUrls(app=url, migrations=url), app_role="ewall_app")
    answer: list[bool] = []
    thread = threading.Thread(target=lambda: answer.append(database.ping()), daemon=True)
    thread.start()
    # a bound far above the connect timeout (10 s), not a measure of speed, and below the
    # 130 s that psycopg waits when nothing is set
    thread.join(timeout=6 * NETWORK_TIMEOUTS["connect_timeout"])
    database.dispose()
    assert answer == [False]


def test_a_url_keeps_its_own_network_settings() -> None:
    assert network_timeouts("postgresql://u@h/db") == NETWORK_TIMEOUTS
    own = network_timeouts("postgresql://u@h/db?connect_timeout=3&keepalives=0")
    assert "connect_timeout" not in own and "keepalives" not in own
    assert own["tcp_user_timeout"] == NETWORK_TIMEOUTS["tcp_user_timeout"]
    # a connection service named in the URL sets them in its own file
    assert network_timeouts("postgresql://u@h/db?service=ewall") == {}


def test_a_database_down_is_logged_once_per_outage(
    caplog: pytest.LogCaptureFixture, db: DbHandle
) -> None:
    """/readyz pings on every probe: while the database was down, each probe logged a
    traceback (6.5 KB; a compose health check every 5 s). Now the first failure is logged
    with its traceback and the recovery once."""
    closed = socket.socket()  # bound, never listening: refused, and no one else's port
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    url = f"postgresql://ewall@127.0.0.1:{port}/ewall"
    down = Database(DatabaseUrls(app=url, migrations=url), app_role="ewall_app")
    with caplog.at_level(logging.INFO, logger="ewall.db"):
        assert [down.ping() for _ in range(3)] == [False, False, False]
        up = Database(
            DatabaseUrls(app=db.app_url, migrations=db.superuser_url), app_role="ewall_app"
        )
        up._unreachable = True  # as after an outage
        assert [up.ping() for _ in range(2)] == [True, True]
    down.dispose()
    up.dispose()
    closed.close()
    records = [(r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert records == [("database ping failed", True), ("database reachable again", False)]
