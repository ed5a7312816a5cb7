"""The console across several API processes (invariant 13): two apps on one database, each
with its own Resources as two processes of `ewall serve --workers 2` have. A session made
on one serves on the other, a form's CSRF token from one passes on the other, and signing
out on one ends the session on both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.console.sessions import COOKIE
from app.settings import Settings
from tests.conftest import DbHandle, make_client
from tests.console.conftest import PARTNER, console_client, csrf_of, sign_in
from tests.helpers import Firm


@pytest.fixture
def other_process(db: DbHandle, settings: Settings, embedder: Any, firm: Firm) -> Iterator[Any]:
    """A second app on the firm's database: nothing in memory is shared with the first."""
    with make_client(db, settings, embedder) as client:
        assert client.app is not firm.client.app
        yield client.app


def browser(app: Any, cookie: str | None = None) -> TestClient:
    client = TestClient(app, raise_server_exceptions=False)
    if cookie is not None:
        client.cookies.set(COOKIE, cookie, path="/console")
    return client


def test_a_session_made_on_one_process_serves_on_the_other(firm: Firm, other_process: Any) -> None:
    first = console_client(firm)
    assert sign_in(first, firm.auth, PARTNER, "conflicts").status_code == 303
    sid = first.cookies.get(COOKIE)
    assert sid
    second = browser(other_process, sid)
    page = second.get("/console/walls/new", follow_redirects=False)
    assert page.status_code == 200, page.text
    assert PARTNER in page.text


def test_csrf_from_one_process_passes_on_the_other_and_sign_out_ends_both(
    firm: Firm, other_process: Any, db: DbHandle
) -> None:
    first = console_client(firm)
    assert sign_in(first, firm.auth, PARTNER, "conflicts").status_code == 303
    sid = str(first.cookies.get(COOKIE))
    token = csrf_of(first.get("/console/walls").text)
    second = browser(other_process, sid)
    refused = second.post("/console/signout", data={"csrf": "x" * 43}, follow_redirects=False)
    assert refused.status_code == 403
    out = second.post("/console/signout", data={"csrf": token}, follow_redirects=False)
    assert out.status_code == 303
    assert out.headers["location"] == "/console/signin"
    # ended for the browser that signed in on the first process, too
    gone = first.get("/console/walls", follow_redirects=False)
    assert gone.status_code == 303
    assert gone.headers["location"].startswith("/console/signin")
    with psycopg.connect(db.superuser_url) as su:
        assert su.execute("SELECT count(*) FROM console_sessions").fetchone() == (0,)


def test_the_table_holds_no_cookie(firm: Firm, db: DbHandle) -> None:
    """Reading the sessions table (a backup, a replica) gives nothing to sign in with."""
    client = console_client(firm)
    assert sign_in(client, firm.auth, PARTNER, "conflicts").status_code == 303
    sid = str(client.cookies.get(COOKIE))
    with psycopg.connect(db.superuser_url) as su:
        rows = su.execute("SELECT sid_sha256 FROM console_sessions").fetchall()
    assert len(rows) == 1 and sid not in rows[0][0]
    replay = browser(firm.client.app, rows[0][0])
    assert replay.get("/console/walls", follow_redirects=False).status_code == 303


def test_ended_sessions_are_swept_at_the_next_sign_in(firm: Firm, db: DbHandle) -> None:
    first = console_client(firm)
    assert sign_in(first, firm.auth, PARTNER, "conflicts").status_code == 303
    with psycopg.connect(db.superuser_url, autocommit=True) as su:
        su.execute("UPDATE console_sessions SET expires_at = now() - interval '1 second'")
    second = console_client(firm)
    assert sign_in(second, firm.auth, PARTNER, "conflicts").status_code == 303
    with psycopg.connect(db.superuser_url) as su:
        assert su.execute("SELECT count(*) FROM console_sessions").fetchone() == (1,)
    assert second.get("/console/walls").status_code == 200
