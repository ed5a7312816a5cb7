"""Hardening: bad input is a 4xx, the body limit and authentication come
before the body is read, cursors are signed, logs hold no query text, refusals are audited.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.auth.keys import dev_signing_key
from app.auth.service import DEV_AUDIENCE
from app.logging import JsonFormatter, RedactingFormatter
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.contract.test_error_shape import assert_envelope
from tests.helpers import Firm, ok

EVERY_ROLE = ("root@firm.nl", "lawyer", "conflicts", "compliance", "admin")
NUL = "a\x00b"

# --- point 2: a NUL in any string of any route is a 422 naming the field -----------------


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = spec["components"]["schemas"][name]
    return schema


def _variants(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of an Optional (anyOf [X, null])."""
    schema = _resolve(spec, schema)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [_resolve(spec, s) for s in schema[key] if s.get("type") != "null"]
            return options[0] if options else {"type": "null"}
    return schema


def _minimal(spec: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A small valid value for a schema, so that only the NUL can be wrong."""
    schema = _variants(spec, schema)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _minimal(spec, props[name]) for name in schema.get("required", [])}
    if kind == "array":
        return []
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if schema.get("format") == "date-time":
        return "2026-01-01T00:00:00Z"
    if schema.get("format") == "uuid":
        return str(uuid.uuid4())
    return "x"


def _string_leaves(
    spec: dict[str, Any], schema: dict[str, Any], depth: int = 0
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(place, builder) for every string a body may hold; builder(value) wraps it."""
    schema = _variants(spec, schema)
    kind = schema.get("type")
    if kind == "string" and depth:
        yield (), lambda v: v
    elif kind == "array" and depth < 6:
        for place, build in _string_leaves(spec, schema.get("items", {}), depth + 1):
            yield ("0", *place), lambda v, b=build: [b(v)]
    elif kind == "object" and depth < 6:
        for name, sub in schema.get("properties", {}).items():
            for place, build in _string_leaves(spec, sub, depth + 1):

                def wrap(v: Any, n: str = name, b: Any = build, s: dict[str, Any] = schema) -> Any:
                    base = _minimal(spec, s)
                    base[n] = b(v)
                    return base

                yield (name, *place), wrap


def _nul_cases(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any], str]]:
    """(method, url-pattern, request kwargs, expected field) for every string of every route."""
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            params = op.get("parameters", [])
            path_values = {
                p["name"]: str(_minimal(spec, p["schema"])) for p in params if p["in"] == "path"
            }
            required_query = {
                p["name"]: _minimal(spec, p["schema"])
                for p in params
                if p["in"] == "query" and p.get("required")
            }
            body_schema = (
                op.get("requestBody", {}).get("content", {}).get("application/json", {})
            ).get("schema")
            body = _minimal(spec, body_schema) if body_schema else None
            for p in params:
                if p["in"] not in ("path", "query"):
                    continue
                if _variants(spec, p["schema"]).get("type") != "string":
                    continue
                if p["in"] == "path":
                    url = path.format(**{**path_values, p["name"]: "a%00b"})
                    query = required_query
                else:
                    url = path.format(**path_values)
                    query = {**required_query, p["name"]: NUL}
                kwargs: dict[str, Any] = {"params": query}
                if body is not None:
                    kwargs["json"] = body
                yield method, url, kwargs, p["name"]
            if body_schema:
                for place, build in _string_leaves(spec, body_schema):
                    kwargs = {
                        "params": required_query,
                        "content": json.dumps(build(NUL)),
                        "headers": {"Content-Type": "application/json"},
                    }
                    yield method, path.format(**path_values), kwargs, ".".join(place)


def test_nul_in_every_string_of_every_route_is_a_422_naming_it(
    client: TestClient, auth: Tokens
) -> None:
    spec = client.get("/openapi.json").json()
    h = auth(*EVERY_ROLE)
    cases = list(_nul_cases(spec))
    # the reproductions are among the cases walked
    fields = {(url, field) for _, url, _, field in cases}
    for expected in (
        ("/v1/search", "query"),
        ("/v1/search", "filters.doc_types.0"),
        ("/v1/search", "filters.matter_ids.0"),
        ("/v1/search", "filters.sources.0"),
        ("/v1/search", "model"),
        ("/v1/search", "prompt_version"),
        ("/v1/audit/retrievals", "person_id"),
        ("/v1/audit/retrievals", "purpose"),
        ("/v1/audit/policy-events", "object_id"),
        ("/v1/people/a%00b", "person_id"),
        ("/v1/matters/a%00b", "matter_id"),
        ("/v1/walls/a%00b", "wall_id"),
        ("/v1/people/x", "aliases.0"),
    ):
        assert expected in fields, expected
    assert len(cases) > 80
    failures = []
    for method, url, kwargs, field in cases:
        extra_headers = kwargs.pop("headers", {})
        r = client.request(method.upper(), url, headers={**h, **extra_headers}, **kwargs)
        body = r.json()
        if r.status_code != 422 or body.get("error", {}).get("details", {}).get("field") != field:
            failures.append((method, url, field, r.status_code, r.text[:200]))
            continue
        assert_envelope(body, "validation_error")
    assert not failures, failures


def test_escaped_backslash_u0000_is_text_not_a_nul(client: TestClient, auth: Tokens) -> None:
    r = client.post(
        "/v1/search",
        content=b'{"query": "huur \\\\u0000 x"}',
        headers={**auth("l@firm.nl", "lawyer"), "Content-Type": "application/json"},
    )
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("depth", [990, 5000])
def test_a_deeply_nested_body_with_a_nul_is_a_4xx_not_a_500(
    client: TestClient, auth: Tokens, depth: int
) -> None:
    """A fuzz of 2026-12-06: a body nested about a thousand deep holding an escaped NUL
    was a 500 on every route, /healthz without a token included (the NUL guard recursed
    past Python's limit), and wrote two traceback lines each time."""
    body = ("[" * depth + '"\\u0000"' + "]" * depth).encode()
    for method, url, headers in (
        ("GET", "/healthz", {}),
        ("POST", "/v1/search", auth("l@firm.nl", "lawyer")),
    ):
        r = client.request(
            method, url, content=body, headers={**headers, "Content-Type": "application/json"}
        )
        assert r.status_code < 500, (url, depth, r.status_code, r.text[:200])
        if r.status_code >= 400:
            assert_envelope(r.json())


def test_a_failed_search_leaves_no_retrieval_row(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    r = client.post("/v1/search", json={"query": "huur\x00x"}, headers=auth("l@firm.nl", "lawyer"))
    assert r.status_code == 422
    assert r.json()["error"]["details"]["field"] == "query"
    with db.database.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM audit_retrievals")).scalar() == 0


# --- the datetime fields take RFC 3339 strings with a zone only ---------------------------


@pytest.mark.parametrize("value", [0, 1700000000, 1.5, True, "0", "2026-01-01", "1700000000"])
def test_datetimes_are_rfc3339_strings_only(client: TestClient, auth: Tokens, value: Any) -> None:
    r = client.post(
        "/v1/search",
        json={"query": "huur", "filters": {"modified_to": value}},
        headers=auth("l@firm.nl", "lawyer"),
    )
    assert r.status_code == 422, (value, r.text)
    assert r.json()["error"]["details"]["field"] == "filters.modified_to"
    r = client.get(
        "/v1/audit/retrievals", params={"since": value}, headers=auth("c@firm.nl", "compliance")
    )
    assert r.status_code == 422, (value, r.text)


def test_rfc3339_with_a_zone_still_works(client: TestClient, auth: Tokens) -> None:
    for value in ("2026-01-31T09:00:00Z", "2026-01-31T09:00:00.123+01:00"):
        r = client.post(
            "/v1/search",
            json={"query": "huur", "filters": {"modified_to": value}},
            headers=auth("l@firm.nl", "lawyer"),
        )
        assert r.status_code == 200, r.text


# a zone that pushes the instant out of the years a datetime holds, a year past 9999 or
# before 1, the last microsecond rounded up (a wall's end): 422, never a 500
_OUT_OF_RANGE = (
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "10000-01-01T00:00:00Z",
    "0000-12-31T23:59:59Z",
)


def test_instants_past_the_datetime_range_are_422_everywhere(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    compliance = auth("c@firm.nl", "compliance")
    wall = {"kind": "exclusionary", "title": "w", "reason": "r",
            "protects": {"matters": ["M-1"]}, "screened": ["alice@firm.nl"]}  # fmt: skip
    for value in _OUT_OF_RANGE:
        calls: list[tuple[str, str, dict[str, Any], str]] = [
            ("post", "/v1/search", {"json": {"query": "huur", "filters": {"modified_from": value}},
                                    "headers": auth("l@firm.nl", "lawyer")},
             "filters.modified_from"),
            ("get", "/v1/audit/retrievals", {"params": {"since": value}, "headers": compliance},
             "since"),
            ("get", "/v1/audit/policy-events", {"params": {"until": value}, "headers": compliance},
             "until"),
            ("get", "/v1/audit/gate-events", {"params": {"since": value}, "headers": compliance},
             "since"),
            ("get", "/v1/audit/export", {"params": {"until": value}, "headers": compliance},
             "until"),
            ("post", "/v1/walls", {"json": {**wall, "effective_until": value}, "headers": firm.h},
             "effective_until"),
            ("post", "/v1/walls/preview",
             {"json": {**wall, "effective_from": value}, "headers": firm.h}, "effective_from"),
            ("post", "/v1/documents",
             {"json": {"source": "api", "external_id": "d1", "text": "huur", "client_id": "C-1",
                       "matter_id": "M-1", "modified_at": value}, "headers": firm.h},
             "modified_at"),
        ]  # fmt: skip
        for method, url, kwargs, field in calls:
            r = client.request(method.upper(), url, **kwargs)
            assert r.status_code == 422, (value, url, r.status_code, r.text[:300])
            assert_envelope(r.json(), "validation_error")
            assert r.json()["error"]["details"]["field"] == field, (url, r.text[:300])
    # the last instant in UTC itself is a date like any other
    r = client.post("/v1/walls", json={**wall, "effective_until": "9999-12-31T23:59:59Z"},
                    headers=firm.h)  # fmt: skip
    assert r.status_code == 201, r.text
    r = client.post("/v1/search", json={"query": "huur"}, headers=auth("alice@firm.nl", "lawyer"))
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    "sub",
    ["a\x00b@firm.nl", "\ud800@firm.nl", "esc\x1b[31m", "x" * 401, "alice\u200b@firm.nl"],
)
def test_a_signed_token_whose_subject_cannot_name_a_person_is_401(
    client: TestClient, auth: Tokens, settings: Any, sub: str
) -> None:
    """Its subject would be written to the audit log and the budget tables as the person id:
    refused at the door, on every route, instead of failing in PostgreSQL (500). Signed here
    with the server's own key: ewall token refuses to issue such a subject."""
    now = int(time.time())
    claims = {
        "sub": sub,
        "roles": ["lawyer", "admin", "compliance", "conflicts"],
        "iss": settings.dev_issuer,
        "aud": DEV_AUDIENCE,
        "iat": now,
        "nbf": now,
        "exp": now + 600,
    }
    token = jwt.encode(claims, dev_signing_key(settings), algorithm="HS256")
    h = {"Authorization": f"Bearer {token}"}
    for method, url, body in (
        ("POST", "/v1/search", {"query": "huur"}),
        ("POST", "/v1/gates/citations", {"text": "ECLI:NL:HR:2020:1"}),
        ("GET", "/v1/eval/sets", None),
        ("POST", "/v1/documents", {"source": "api", "external_id": "d", "text": "t"}),
    ):
        r = client.request(method, url, json=body, headers=h)
        assert r.status_code == 401, (sub[:10], url, r.status_code, r.text[:200])
        assert_envelope(r.json(), "unauthenticated")
    # a subject of 400 printable characters is still a subject
    r = client.post("/v1/search", json={"query": "huur"}, headers=auth("x" * 400, "lawyer"))
    assert r.status_code == 200, r.text


def test_a_client_that_leaves_mid_body_is_no_server_error(
    client: TestClient, auth: Tokens, caplog: pytest.LogCaptureFixture
) -> None:
    """What an ASGI server sends when the client closes the connection before its body is
    complete: part of the body, then http.disconnect. Nobody is listening for an answer; it
    is counted as 499 and logged as a request, never as an unhandled server error."""
    token = auth("l@firm.nl", "lawyer")["Authorization"].encode()
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": b'{"query": "hu', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/v1/search", "raw_path": b"/v1/search", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
        "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"),
                    (b"content-length", b"100"), (b"authorization", token)],
    }  # fmt: skip
    with caplog.at_level(logging.INFO):
        asyncio.run(client.app(scope, receive, send))  # type: ignore[arg-type]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    metrics = client.get("/metrics", headers=auth("a@firm.nl", "admin")).text
    lines = [line for line in metrics.splitlines() if line.startswith("ewall_http_requests_total")]
    # (the body guard reads the body before routing: the route is not known yet)
    assert any('method="POST"' in x and 'status="499"' in x for x in lines), lines
    assert not any('status="500"' in x for x in lines), lines


# --- point 3: cursors are opaque, signed and strictly read ----------------------------------


def _b64(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "route", ["/v1/audit/retrievals", "/v1/audit/policy-events", "/v1/audit/gate-events"]
)
@pytest.mark.parametrize(
    "cursor",
    [
        _b64("seq:²"),
        _b64("seq:99999999999999999999999"),
        _b64("seq:5"),
        _b64("seq:-1"),
        "garbage!",
        "A" * 27,
        "A" * 2000,
    ],
)
def test_malformed_cursors_are_422_invalid_cursor(
    client: TestClient, auth: Tokens, route: str, cursor: str
) -> None:
    r = client.get(route, params={"cursor": cursor}, headers=auth("c@firm.nl", "compliance"))
    assert r.status_code == 422, r.text
    assert_envelope(r.json(), "invalid_cursor")
    assert r.json()["error"]["details"]["field"] == "cursor"


def test_cursors_page_and_cannot_be_tampered_with(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    for i in range(5):
        firm.person(f"p{i}@firm.nl")
    comp = auth("c@firm.nl", "compliance")
    first = ok(client.get("/v1/audit/policy-events", params={"limit": 2}, headers=comp))
    cursor = first["next_cursor"]
    assert cursor and "seq" not in base64.urlsafe_b64decode(cursor + "=").decode("latin-1")
    second = ok(
        client.get("/v1/audit/policy-events", params={"limit": 2, "cursor": cursor}, headers=comp)
    )
    assert second["items"] and second["items"][0]["seq"] < first["items"][-1]["seq"]
    # one character changed in the seq part, or a cursor of another list: refused
    flipped = ("B" if cursor[0] != "B" else "C") + cursor[1:]
    for bad, route in (
        (flipped, "/v1/audit/policy-events"),
        (cursor, "/v1/audit/retrievals"),
        (cursor, "/v1/audit/gate-events"),
    ):
        r = client.get(route, params={"cursor": bad}, headers=comp)
        assert r.status_code == 422, (route, r.text)
        assert_envelope(r.json(), "invalid_cursor")
    # the cursor of one filter sent with another: refused, not a page that silently skips
    # the other filter's rows above its seq (a check of 2026-12-06)
    r = client.get(
        "/v1/audit/policy-events",
        params={"limit": 2, "cursor": cursor, "object_id": "p0@firm.nl"},
        headers=comp,
    )
    assert r.status_code == 422, r.text
    assert_envelope(r.json(), "invalid_cursor")


# --- point 4: size limit and authentication before the body is read ------------------------


def test_broken_json_without_a_token_is_401(client: TestClient) -> None:
    for route in ("/v1/search", "/v1/documents", "/v1/walls"):
        r = client.post(route, content=b"{not json", headers={"Content-Type": "application/json"})
        assert r.status_code == 401, (route, r.text)
        assert_envelope(r.json(), "unauthenticated")
        assert r.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "body", [b'{"query": "\xff\xfe huur"}', b"[" * 50_000 + b"]" * 50_000], ids=["latin1", "deep"]
)
def test_a_body_not_utf8_or_nested_too_deep_is_a_422_naming_the_body(
    client: TestClient, auth: Tokens, body: bytes
) -> None:
    """A fuzz: these were 400 bad_request, naming nothing, where JSON that does not parse is
    a 422 naming the body."""
    headers = {**auth("alice@firm.nl", "lawyer"), "Content-Type": "application/json"}
    r = client.post("/v1/search", content=body, headers=headers)
    assert r.status_code == 422, r.text
    assert_envelope(r.json(), "validation_error")
    assert r.json()["error"]["details"]["field"] == "body"


def test_unknown_routes_stay_404_without_a_token(client: TestClient) -> None:
    r = client.post("/v1/no/such/route", content=b"{}")
    assert r.status_code == 404
    assert_envelope(r.json(), "not_found")


def test_a_trailing_slash_is_404_not_a_redirect_to_the_host_header(
    client: TestClient, auth: Tokens
) -> None:
    for headers in ({}, auth(*EVERY_ROLE)):
        r = client.get(
            "/v1/walls/", headers={**headers, "Host": "evil.example"}, follow_redirects=False
        )
        assert r.status_code == 404, r.headers
        assert "location" not in r.headers
        assert_envelope(r.json(), "not_found")


@pytest.fixture
def small_limits(db: DbHandle, embedder: Any) -> Iterator[TestClient]:
    settings = make_settings(max_body_bytes=4096, max_bulk_body_bytes=65536)
    with make_client(db, settings, embedder) as test_client:
        yield test_client


def test_content_length_over_the_route_limit_is_413(small_limits: TestClient, auth: Tokens) -> None:
    h = {**auth(*EVERY_ROLE), "Content-Type": "application/json"}
    big = json.dumps({"query": "x" * 5000}).encode()
    r = small_limits.post("/v1/search", content=big, headers=h)
    assert r.status_code == 413, r.text
    assert_envelope(r.json(), "payload_too_large")
    assert r.json()["error"]["details"]["limit_bytes"] == 4096
    # the same size passes the document route's larger limit (the route answers itself)
    doc = json.dumps({"source": "api", "external_id": "d1", "text": "huur " * 1000}).encode()
    assert 4096 < len(doc) < 65536
    assert small_limits.post("/v1/documents", content=doc, headers=h).status_code == 200
    too_big = json.dumps({"source": "api", "external_id": "d2", "text": "x" * 70000}).encode()
    r = small_limits.post("/v1/documents", content=too_big, headers=h)
    assert r.status_code == 413
    assert_envelope(r.json(), "payload_too_large")
    # without a token an oversized body is refused on its declared size, unread
    r = small_limits.post("/v1/search", content=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 413


class _Upload:
    """An ASGI client sending ``chunks`` chunks of 1 MiB without Content-Length (chunked)."""

    def __init__(self, chunks: int) -> None:
        self.chunks = chunks
        self.sent = 0
        self.status: int | None = None
        self.body = b""

    async def receive(self) -> dict[str, Any]:
        if self.sent >= self.chunks:
            return {"type": "http.disconnect"}
        self.sent += 1
        return {
            "type": "http.request",
            "body": b"x" * (1 << 20),
            "more_body": self.sent < self.chunks,
        }

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")

    def run(self, app: Any, headers: list[tuple[bytes, bytes]]) -> None:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/v1/search",
            "raw_path": b"/v1/search",
            "root_path": "",
            "query_string": b"",
            "headers": [(b"content-type", b"application/json"), *headers],
            "client": ("127.0.0.1", 1),
            "server": ("testserver", 80),
            "state": {},
        }
        asyncio.run(app(scope, self.receive, self.send))


def test_a_100_mb_chunked_body_is_never_read_in_full(client: TestClient, auth: Tokens) -> None:
    app = client.app
    anonymous = _Upload(100)
    anonymous.run(app, [])
    assert anonymous.status == 401
    assert anonymous.sent == 0  # not one chunk was read
    token = auth("l@firm.nl", "lawyer")["Authorization"].encode()
    signed_in = _Upload(100)
    signed_in.run(app, [(b"authorization", token)])
    assert signed_in.status == 413
    assert signed_in.sent <= 2  # 1 MiB limit: stopped at the first chunk over it
    assert json.loads(signed_in.body)["error"]["code"] == "payload_too_large"


# --- point 5: no query or document text in logs, also on the exception paths -------------


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def rendered(self) -> str:
        out = []
        for record in self.records:
            out.append(JsonFormatter().format(record))
            out.append(RedactingFormatter().format(record))
            out.append(repr(record.__dict__))
            if record.exc_info:  # what a stock formatter would print
                out.append(logging.Formatter().format(record))
        return "\n".join(out)


@pytest.fixture
def captured() -> Iterator[_Capture]:
    handler = _Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


SECRET_QUERY = "vertrouwelijk overnamebod zwanenburg"


def test_a_500_logs_no_query_text(
    client: TestClient, auth: Tokens, captured: _Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.audit import chain

    def broken(conn: Any, entry: chain.Retrieval, results: Any, **_: Any) -> None:
        raise RuntimeError(f"could not record {entry.query} for {entry.allowed_wall_groups}")

    monkeypatch.setattr(chain, "append_retrieval", broken)
    r = client.post("/v1/search", json={"query": SECRET_QUERY}, headers=auth("l@firm.nl"))
    assert r.status_code == 500
    logged = captured.rendered()
    assert "unhandled exception" in logged and "RuntimeError" in logged  # still diagnosable
    assert "zwanenburg" not in logged


def test_a_database_error_logs_no_statement_parameters(
    client: TestClient, auth: Tokens, captured: _Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit writer fails in PostgreSQL: psycopg quotes the value, SQLAlchemy the
    parameters; neither may reach a log line."""
    from app.audit import chain

    def broken(conn: Any, entry: chain.Retrieval, results: Any, **_: Any) -> None:
        conn.execute(text("SELECT CAST(:q AS integer)"), {"q": entry.query})

    monkeypatch.setattr(chain, "append_retrieval", broken)
    r = client.post("/v1/search", json={"query": SECRET_QUERY}, headers=auth("l@firm.nl"))
    assert r.status_code == 503
    assert_envelope(r.json(), "audit_unavailable")
    assert r.headers["Retry-After"] == "1"  # a passing condition: try again
    logged = captured.rendered()
    assert "audit append failed" in logged
    assert "zwanenburg" not in logged


def _fail_once() -> None:
    raise ValueError(f"inner {SECRET_QUERY}")


def _fail_twice() -> None:
    try:
        _fail_once()
    except ValueError as inner:
        raise KeyError(f"outer {SECRET_QUERY}") from inner


def test_the_formatters_redact_exception_messages() -> None:
    """What uvicorn logs for an exception re-raised past the handlers goes through these."""
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None, None)
    try:
        _fail_twice()
    except KeyError:
        record.exc_info = sys.exc_info()
    for formatter in (JsonFormatter(), RedactingFormatter()):
        line = formatter.format(record)
        assert "zwanenburg" not in line
        assert "ValueError" in line and "KeyError" in line and "direct cause" in line


# --- point 6: refused attempts are gate events that compliance can list -------------------


def test_gate_events_list_refusals_without_content(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.person("bob@firm.nl")
    own = firm.search("alice@firm.nl", SECRET_QUERY)
    rid = own["retrieval_id"]
    bob = auth("bob@firm.nl", "lawyer")
    # bob reads and probes alice's retrieval: both refused, both audited
    r = client.get(f"/v1/audit/retrievals/{rid}", headers=bob)
    assert r.status_code == 403
    assert_envelope(r.json(), "forbidden")
    r = client.post(
        "/v1/gates/grounding",
        json={"retrieval_id": rid, "answer": f"{SECRET_QUERY} is bekend."},
        headers=bob,
    )
    assert r.status_code == 403
    # a lawyer may not list gate events
    assert client.get("/v1/audit/gate-events", headers=bob).status_code == 403
    comp = auth("c@firm.nl", "compliance")
    events = ok(client.get("/v1/audit/gate-events", headers=comp))["items"]
    assert [(e["gate"], e["person_id"], e["ok"]) for e in events] == [
        ("grounding", "bob@firm.nl", False),
        ("retrieval_read", "bob@firm.nl", False),
    ]
    read = events[1]
    assert read["request"] == {"retrieval_id": rid}
    assert read["outcome"] == {"refused": {"status": 403, "code": "forbidden"}}
    assert SECRET_QUERY not in json.dumps(events) and "bekend" not in json.dumps(events)
    # filters and paging like the retrievals list
    only = ok(client.get("/v1/audit/gate-events", params={"gate": "retrieval_read"}, headers=comp))[
        "items"
    ]
    assert [e["event_id"] for e in only] == [read["event_id"]]
    assert not ok(
        client.get("/v1/audit/gate-events", params={"person_id": "alice@firm.nl"}, headers=comp)
    )["items"]
    assert (
        len(ok(client.get("/v1/audit/gate-events", params={"ok": False}, headers=comp))["items"])
        == 2
    )
    page = ok(client.get("/v1/audit/gate-events", params={"limit": 1}, headers=comp))
    rest = ok(
        client.get(
            "/v1/audit/gate-events",
            params={"limit": 1, "cursor": page["next_cursor"]},
            headers=comp,
        )
    )
    assert [e["seq"] for e in page["items"] + rest["items"]] == [e["seq"] for e in events]
    assert rest["next_cursor"] is None
    # the chain still verifies with the refusals in it
    verified = ok(client.get("/v1/audit/verify", headers=comp))
    assert verified["ok"] is True and verified["chains"]["gates"]["checked"] == 2


def test_ids_that_would_look_like_others_are_refused(client: TestClient, auth: Tokens) -> None:
    """A fuzz of 2026-12-06: a path id that was no UTF-8 ("%FF", "%FE") was stored as
    U+FFFD, so two ids named one person; a pushed document's external id took C1 controls
    and invisible characters; a session id took an unassigned code point."""
    admin = auth("admin@firm.nl", "admin")
    for raw in ("%FF%FE", "a%EF%BF%BDb"):
        r = client.put(f"/v1/people/{raw}", json={"name": "X"}, headers=admin)
        assert r.status_code == 422, (raw, r.text)
        assert_envelope(r.json(), "validation_error")
    for external_id in ("doc\u009b1", "doc\u202e1", "doc\u200b1", "doc\ufffd1", "doc\n1", "doc\t1"):
        r = client.post(
            "/v1/documents",
            json={"source": "dms", "external_id": external_id, "text": "huur"},
            headers=admin,
        )
        assert r.status_code == 422, (external_id, r.text)
        assert r.json()["error"]["details"]["field"] == "external_id"
    r = client.post(
        "/v1/search",
        json={"query": "huur", "session_id": "s-\uffff"},
        headers=auth("l@firm.nl", "lawyer"),
    )
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "session_id", r.text


def test_the_openapi_document_names_the_error_envelope_of_each_refusal(
    client: TestClient,
) -> None:
    """A fuzz of 2026-12-06: /openapi.json documented no 404, 409, 413 or 429, and its 422
    was FastAPI's own shape, not the envelope the routes answer with."""
    spec = client.get("/openapi.json").json()
    search = spec["paths"]["/v1/search"]["post"]["responses"]
    for status in ("401", "403", "404", "409", "413", "422", "429"):
        schema = search[status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (status, schema)
    error = spec["components"]["schemas"]["ErrorBody"]
    assert set(error["required"]) == {"code", "message", "details"}
    # a route's own word on a status stays (the job queue's 429), with the envelope's schema
    # (a review: ten such refusals had none)
    runs = spec["paths"]["/v1/ingest/runs"]["post"]["responses"]["429"]
    assert "queued" in runs["description"]
    missing = [
        (path, method, status)
        for path, operations in spec["paths"].items()
        for method, operation in operations.items()
        for status, response in operation["responses"].items()
        if status[:1] in "45"
        and response.get("content", {}).get("application/json", {}).get("schema")
        != {"$ref": "#/components/schemas/ErrorOut"}
    ]
    assert not missing, missing
