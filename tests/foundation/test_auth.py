"""Production tokens: RS256/ES256 against a JWKS served over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from fastapi.testclient import TestClient

from app.auth.service import TokenVerifier, issue_dev_token
from app.errors import Unauthenticated
from tests.conftest import DbHandle, make_client, make_settings

ISSUER = "https://login.example.test/tenant/v2.0"
AUDIENCE = "api://ewall"


@pytest.fixture(scope="module")
def keys() -> dict[str, Any]:
    return {
        "rsa": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "ec": ec.generate_private_key(ec.SECP256R1()),
        "rogue": rsa.generate_private_key(public_exponent=65537, key_size=2048),
    }


@contextmanager
def _jwks_server(
    published: dict[str, Any], hold: tuple[threading.Event, threading.Event] | None = None
) -> Iterator[str]:
    """A JWKS over real HTTP serving the keys of ``published`` (key id -> private key) as
    they are at each request: a test may withdraw one. With ``hold`` (gate, held), an issuer
    slow to answer a refetch: the first request is answered at once, every later one is held
    until ``gate`` is set (``held`` is set once one is)."""
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served[0] += 1
            if hold is not None and served[0] > 1:
                hold[1].set()
                hold[0].wait()
            jwks = []
            for kid, key in list(published.items()):
                if isinstance(key, rsa.RSAPrivateKey):
                    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
                    public["alg"] = "RS256"
                else:
                    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
                    public["alg"] = "ES256"
                public.update({"kid": kid, "use": "sig"})
                jwks.append(public)
            body = json.dumps({"keys": jwks}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/keys"
    finally:
        if hold is not None:
            hold[0].set()
        server.shutdown()


@pytest.fixture(scope="module")
def jwks_url(keys: dict[str, Any]) -> Iterator[str]:
    with _jwks_server({"rsa-1": keys["rsa"], "ec-1": keys["ec"]}) as url:
        yield url


def _token(key: Any, alg: str, kid: str, **overrides: Any) -> str:
    now = int(time.time())
    claims = {
        "sub": "alice@firm.nl",
        "roles": ["compliance"],
        "iss": ISSUER,
        "aud": AUDIENCE,
        "iat": now,
        "exp": now + 600,
    }
    claims.update(overrides)
    return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})


def test_oidc_tokens(db: DbHandle, embedder: Any, keys: dict[str, Any], jwks_url: str) -> None:
    settings = make_settings(
        auth_mode="oidc", oidc_issuer=ISSUER, oidc_audience=AUDIENCE, oidc_jwks_url=jwks_url
    )
    with make_client(db, settings, embedder) as client:

        def status(token: str) -> int:
            return client.get(
                "/v1/audit/verify", headers={"Authorization": f"Bearer {token}"}
            ).status_code

        assert status(_token(keys["rsa"], "RS256", "rsa-1")) == 200
        assert status(_token(keys["ec"], "ES256", "ec-1")) == 200
        assert status(_token(keys["rsa"], "RS256", "rsa-1", iss="https://evil.test")) == 401
        assert status(_token(keys["rsa"], "RS256", "rsa-1", aud="api://other")) == 401
        assert status(_token(keys["rsa"], "RS256", "rsa-1", exp=int(time.time()) - 600)) == 401
        assert status(_token(keys["rogue"], "RS256", "rsa-1")) == 401
        assert status(_token(keys["rsa"], "RS256", "unknown-kid")) == 401
        assert status(_token(keys["rsa"], "RS256", "rsa-1", roles=["lawyer"])) == 403
        # a header whose algorithm is not the named key's: refused, not tried (was a 500)
        assert status(_token(keys["ec"], "ES256", "rsa-1")) == 401
        assert status(_token(keys["rsa"], "RS256", "ec-1")) == 401
        assert status(_token(keys["rsa"], "RS256", "rsa-1", sub=" alice@firm.nl")) == 401
        # a subject that prints like another person's, or splits a report's line
        for hidden in (
            "alice@firm.nl\u200b", "alice@\nfirm.nl", "alice\u202e@firm.nl", "alice\u034f@firm.nl",
            "alice\ufe0f@firm.nl", "alice\u3164@firm.nl",
        ):  # fmt: skip
            assert status(_token(keys["rsa"], "RS256", "rsa-1", sub=hidden)) == 401, hidden
        # a development token is worthless in production mode
        dev = issue_dev_token(make_settings(), "alice@firm.nl", ["compliance"])
        assert status(dev) == 401


def test_token_cli_prints_a_usable_token(
    client: TestClient, settings: Any, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.cli import main
    from app.settings import Settings

    # the CLI reads its settings from the environment: give it the key the client verifies with
    monkeypatch.setenv("EWALL_DEV_SECRET", settings.dev_secret.get_secret_value())
    monkeypatch.setattr("app.cli.get_settings", Settings)
    assert main(["token", "--sub", "x@firm.nl", "--role", "compliance"]) == 0
    token = capsys.readouterr().out.strip()
    assert (
        client.get("/v1/audit/verify", headers={"Authorization": f"Bearer {token}"}).status_code
        == 200
    )
    assert main(["token", "--sub", " "]) == 2
    # tokens the server would refuse are not issued (a check of 2026-12-06)
    for sub in ("x" * 401, "x\x00@firm.nl", "x@\nfirm.nl", "x\u200b@firm.nl"):
        assert main(["token", "--sub", sub]) == 2, sub


def test_a_key_the_issuer_withdraws_is_refused_once_the_key_set_is_refetched(
    db: DbHandle, embedder: Any, keys: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Key rotation, or a leaked key pulled: once the cached key set expires, a token signed
    with a key the issuer no longer publishes is 401. PyJWT's per-key cache never expired,
    so a key that had signed one token stayed trusted until a restart (fuzz)."""
    published = {"rsa-1": keys["rsa"], "ec-1": keys["ec"]}
    monkeypatch.setattr("app.auth.service.JWKS_CACHE_S", 0.2)
    with _jwks_server(published) as url:
        settings = make_settings(
            auth_mode="oidc", oidc_issuer=ISSUER, oidc_audience=AUDIENCE, oidc_jwks_url=url
        )
        with make_client(db, settings, embedder) as client:

            def status(token: str) -> int:
                return client.get(
                    "/v1/audit/verify", headers={"Authorization": f"Bearer {token}"}
                ).status_code

            old = _token(keys["rsa"], "RS256", "rsa-1")
            assert status(old) == 200
            del published["rsa-1"]  # the issuer withdraws it
            deadline = time.monotonic() + 60  # a bound on a condition, not a timing
            while status(old) == 200:
                assert time.monotonic() < deadline, "a withdrawn key is still trusted"
                time.sleep(0.1)
            assert status(old) == 401
            assert status(_token(keys["ec"], "ES256", "ec-1")) == 200


def test_an_unreachable_issuer_does_not_sign_everyone_out(
    db: DbHandle, embedder: Any, keys: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key set expires every few minutes; while the issuer cannot be reached, the last
    one fetched stands in (for JWKS_STALE_MAX_S), and with none fetched yet a token is 503,
    not 401: the caller is not wrong, the identity provider is away."""
    monkeypatch.setattr("app.auth.service.JWKS_CACHE_S", 0.2)
    token = {"Authorization": f"Bearer {_token(keys['rsa'], 'RS256', 'rsa-1')}"}
    with _jwks_server({"rsa-1": keys["rsa"]}) as url:
        settings = make_settings(
            auth_mode="oidc", oidc_issuer=ISSUER, oidc_audience=AUDIENCE, oidc_jwks_url=url
        )
        client = make_client(db, settings, embedder)
        client.__enter__()
        assert client.get("/v1/audit/verify", headers=token).status_code == 200
    try:  # the issuer is gone now
        verifier = client.app.state.resources.verifier  # type: ignore[attr-defined]
        cache = verifier._jwks.jwk_set_cache
        deadline = time.monotonic() + 60
        while not cache.is_expired():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert client.get("/v1/audit/verify", headers=token).status_code == 200
        with make_client(db, settings, embedder) as fresh:  # never fetched the set
            refused = fresh.get("/v1/audit/verify", headers=token)
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "identity_provider_unavailable"
    finally:
        client.__exit__(None, None, None)


# a bound on a condition (the check ends), not a timing: it takes milliseconds; on the old
# code it waits for the fetch, which waits for the test
ANSWERS_WITHIN_S = 60


@pytest.mark.parametrize("refetch", ["unknown kid", "expired set"])
def test_a_known_key_verifies_while_the_key_set_is_being_fetched(
    keys: dict[str, Any], monkeypatch: pytest.MonkeyPatch, refetch: str
) -> None:
    """Every token check waited behind PyJWT's client lock while one request refetched the
    key set (for a key id the set lacks, or at its expiry): up to JWKS_TIMEOUT_S per check
    with a slow issuer, and a stream of random key ids held every lawyer's search. A token
    whose key the last set holds now verifies meanwhile; the refetch stays one at a time."""
    # the fetch in flight is held by the test, not cut short by the client's timeout
    monkeypatch.setattr("app.auth.service.JWKS_TIMEOUT_S", 3600.0)
    if refetch == "expired set":
        monkeypatch.setattr("app.auth.service.JWKS_CACHE_S", 0.2)
    gate, held = threading.Event(), threading.Event()
    with _jwks_server({"rsa-1": keys["rsa"]}, (gate, held)) as url:
        settings = make_settings(
            auth_mode="oidc", oidc_issuer=ISSUER, oidc_audience=AUDIENCE, oidc_jwks_url=url
        )
        verifier = TokenVerifier(settings)
        known = _token(keys["rsa"], "RS256", "rsa-1")
        assert verifier.verify(known).person_id == "alice@firm.nl"  # the first fetch
        client = verifier._jwks
        assert client is not None and client.jwk_set_cache is not None
        if refetch == "expired set":
            cache = client.jwk_set_cache
            deadline = time.monotonic() + 60  # a bound on a condition, not a timing
            while not cache.is_expired():
                assert time.monotonic() < deadline
                time.sleep(0.05)
            first = known
        else:  # a key id the set lacks refetches it (at most once per cooldown: none here)
            client.cooldown_duration = 0
            first = _token(keys["rogue"], "RS256", "rotated-2")
        outcomes: dict[str, Any] = {}

        def check(name: str, token: str) -> None:
            try:
                outcomes[name] = verifier.verify(token).person_id
            except Exception as exc:  # handed to the test's thread
                outcomes[name] = exc

        fetching = threading.Thread(target=check, args=("first", first), daemon=True)
        fetching.start()
        assert held.wait(ANSWERS_WITHIN_S), "the refetch never reached the issuer"
        second = threading.Thread(target=check, args=("second", known), daemon=True)
        second.start()
        second.join(ANSWERS_WITHIN_S)
        waited = second.is_alive()
        gate.set()  # the issuer answers; the old code's waiter goes on
        second.join(ANSWERS_WITHIN_S)
        fetching.join(ANSWERS_WITHIN_S)
    assert not waited, "a token with a known key waited for the key set's refetch"
    assert outcomes["second"] == "alice@firm.nl", outcomes
    if refetch == "expired set":
        assert outcomes["first"] == "alice@firm.nl", outcomes
    else:  # the key id is still unknown after the refetch
        assert isinstance(outcomes["first"], Unauthenticated), outcomes
