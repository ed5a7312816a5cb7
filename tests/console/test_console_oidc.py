"""Console sign-in in oidc mode: the authorization code flow with PKCE against a local issuer
(tests/fakes/oidc.py) on a real port; the console's TestClient plays the browser, httpx the
visit at the issuer."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from fastapi.testclient import TestClient

from app.console.sessions import COOKIE, OIDC_COOKIE
from app.settings import Settings
from tests.conftest import DbHandle, make_client, make_settings
from tests.console.conftest import COMPLIANCE, LAWYER
from tests.fakes.oidc import FakeIssuer
from tests.fakes.server import AppSlot, serve

CLIENT_ID = "ewall-console"
AUDIENCE = "api://ewall"


@pytest.fixture(scope="module")
def issuer_url() -> Iterator[tuple[str, AppSlot]]:
    slot = AppSlot()
    with serve(slot) as url:
        yield url, slot


@pytest.fixture
def issuer(issuer_url: tuple[str, AppSlot]) -> FakeIssuer:
    url, slot = issuer_url
    fake = FakeIssuer(issuer=url, client_id=CLIENT_ID, api_audience=AUDIENCE)
    slot.app = fake.app()
    return fake


def console_settings(issuer: FakeIssuer) -> Settings:
    return make_settings(
        auth_mode="oidc",
        oidc_issuer=issuer.issuer,
        oidc_audience=AUDIENCE,
        oidc_jwks_url=f"{issuer.issuer}/jwks",
        console_oidc_client_id=CLIENT_ID,
    )


@pytest.fixture
def console(db: DbHandle, embedder: Any, issuer: FakeIssuer) -> Iterator[TestClient]:
    with make_client(db, console_settings(issuer), embedder) as client:
        yield client


def _to_issuer(console: TestClient, issuer: FakeIssuer, next_url: str = "/console/audit") -> str:
    """Start at the console, sign in at the issuer; returns the callback URL (a path)."""
    start = console.get("/console/oidc/start", params={"next": next_url}, follow_redirects=False)
    assert start.status_code == 303, start.text
    location = start.headers["location"]
    assert location.startswith(f"{issuer.issuer}/authorize?")
    cookie = next(c for c in start.headers.get_list("set-cookie") if c.startswith(OIDC_COOKIE))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie
    at_issuer = httpx.get(location, follow_redirects=False)
    assert at_issuer.status_code == 302, at_issuer.text
    back = urlparse(at_issuer.headers["location"])
    assert back.netloc == "testserver" and back.path == "/console/oidc/callback"
    return f"{back.path}?{back.query}"


def test_sign_in_with_code_and_pkce(console: TestClient, issuer: FakeIssuer) -> None:
    signin = console.get("/console/signin")
    assert 'id="oidc-signin"' in signin.text
    callback = _to_issuer(console, issuer)
    done = console.get(callback, follow_redirects=False)
    assert done.status_code == 200, done.text
    assert '<meta http-equiv="refresh" content="0;url=/console/audit">' in done.text
    cookie = next(c for c in done.headers.get_list("set-cookie") if c.startswith(f"{COOKIE}="))
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert console.get("/console/audit").status_code == 200
    assert console.get("/console/walls/new").status_code == 403  # compliance, not conflicts

    # PKCE: the challenge sent to the authorization endpoint is S256 of the verifier that
    # redeemed the code, and the code went back with the same redirect URI
    asked = issuer.authorizations[-1]
    redeemed = issuer.token_requests[-1]
    digest = hashlib.sha256(redeemed["code_verifier"].encode()).digest()
    assert asked["code_challenge"] == base64.urlsafe_b64encode(digest).decode().rstrip("=")
    assert asked["code_challenge_method"] == "S256"
    assert (
        redeemed["redirect_uri"]
        == asked["redirect_uri"]
        == ("http://testserver/console/oidc/callback")
    )
    assert redeemed["client_id"] == CLIENT_ID


def test_callback_only_in_the_browser_that_started_and_only_once(
    console: TestClient, issuer: FakeIssuer
) -> None:
    callback = _to_issuer(console, issuer)
    stranger = TestClient(console.app, raise_server_exceptions=False)
    refused = stranger.get(callback, follow_redirects=False)
    assert refused.status_code == 403
    assert "not started in this browser" in refused.text
    assert not any(c.startswith(f"{COOKIE}=") for c in refused.headers.get_list("set-cookie"))
    assert console.get(callback, follow_redirects=False).status_code == 200
    console.cookies.set(
        OIDC_COOKIE, parse_qs(urlparse(callback).query)["state"][0], path="/console/oidc"
    )
    replay = console.get(callback, follow_redirects=False)
    assert replay.status_code == 401
    assert "unknown or has expired" in replay.text


def test_a_sign_in_started_on_one_process_ends_on_another(
    console: TestClient, issuer: FakeIssuer, db: DbHandle, embedder: Any
) -> None:
    """The issuer's redirect may reach any API process: the pending sign-in is shared, and
    still taken once."""
    callback = _to_issuer(console, issuer)
    state_cookie = console.cookies.get(OIDC_COOKIE, path="/console/oidc")
    with make_client(db, console_settings(issuer), embedder) as other:
        assert other.app is not console.app
        other.cookies.set(OIDC_COOKIE, str(state_cookie), path="/console/oidc")
        done = other.get(callback, follow_redirects=False)
        assert done.status_code == 200, done.text
        sid = other.cookies.get(COOKIE)
        assert sid and other.get("/console/audit").status_code == 200
        # the first process knows the session, and the sign-in is spent there too
        console.cookies.set(COOKIE, str(sid), path="/console")
        assert console.get("/console/audit").status_code == 200
        assert console.get(callback, follow_redirects=False).status_code == 401


def test_nonce_of_another_sign_in_is_refused(console: TestClient, issuer: FakeIssuer) -> None:
    issuer.wrong_nonce = True
    done = console.get(_to_issuer(console, issuer), follow_redirects=False)
    assert done.status_code == 401
    assert "nonce" in done.text
    assert console.get("/console/audit", follow_redirects=False).status_code == 303


def test_a_lawyer_or_a_refusal_gets_no_session(console: TestClient, issuer: FakeIssuer) -> None:
    issuer.login_as = (LAWYER, ["lawyer"])
    lawyer = console.get(_to_issuer(console, issuer), follow_redirects=False)
    assert lawyer.status_code == 403
    assert "has no console pages" in lawyer.text
    issuer.login_as = (COMPLIANCE, ["compliance"])
    issuer.refuse = "access_denied"
    refused = console.get(_to_issuer(console, issuer), follow_redirects=False)
    assert refused.status_code == 401
    assert "access_denied" in refused.text
    # any other text in the parameter is not repeated on the firm's sign-in page
    lure = "access_denied. Your account is locked: call +31 20 555 0100"
    forged = console.get("/console/oidc/callback", params={"error": lure})
    assert forged.status_code == 401
    assert "locked" not in forged.text and "an error it did not name" in forged.text
    for response in (lawyer, refused):
        assert not any(c.startswith(f"{COOKIE}=") for c in response.headers.get_list("set-cookie"))
    assert console.get("/console/audit", follow_redirects=False).status_code == 303


def test_no_oidc_routes_in_dev_mode(client: TestClient) -> None:
    assert client.get("/console/oidc/start", follow_redirects=False).status_code == 404
    assert client.get("/console/oidc/callback?code=x&state=y").status_code == 404
