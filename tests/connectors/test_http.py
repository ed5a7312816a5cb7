"""The shared HTTP layer: allow-list, retries, throttling, limits, redaction (real HTTP)."""

from __future__ import annotations

import email.utils
import logging
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from app.ingest.extract import extract
from app.ingest.extract.mime import MAX_CONTENT_BYTES
from app.ingest.types import ExtractionError
from connectors.http.allowlist import AllowList, segment
from connectors.http.auth import parse_expires_in
from connectors.http.client import MAX_BODY_BYTES, SourceHttp
from connectors.http.errors import (
    ConnectorError,
    CredentialsError,
    RequestNotAllowedError,
    SourceAuthError,
    SourceHTTPError,
)
from connectors.http.mime import disposition_filename, guess_mime
from connectors.http.ratelimit import TokenBucket
from connectors.http.redaction import Redactor
from connectors.http.retry import retry_after_seconds
from connectors.imanage.client import IManageClient
from connectors.netdocuments.client import NetDocumentsClient
from tests.connectors.conftest import Sleeps, imanage_settings, netdocuments_settings
from tests.fakes.dms import FakeClock
from tests.fakes.imanage import FakeIManage
from tests.fakes.netdocuments import FakeNetDocuments


def _client(fake: FakeIManage, sleeps: Sleeps, **overrides: object) -> IManageClient:
    return IManageClient(imanage_settings(fake, **overrides), sleep=sleeps, clock=fake.clock)


# --- allow-list ---------------------------------------------------------------------------------


def test_request_outside_the_allow_list_is_refused_before_it_is_sent(
    netdocuments_fake: FakeNetDocuments, sleeps: Sleeps
) -> None:
    client = NetDocumentsClient(netdocuments_settings(netdocuments_fake), sleep=sleeps)
    try:
        with pytest.raises(RequestNotAllowedError, match="allow-list"):
            # N14: "get or create" a workspace. A read-only crawler must never reach it.
            client.http.get_json("/v1/Workspace/NG-AB12CD34/10025/0007/info", auth=client.auth)
        with pytest.raises(RequestNotAllowedError):
            client.http.request("DELETE", "/v1/Document/4824-5093-9170", auth=client.auth)
        with pytest.raises(RequestNotAllowedError):
            client.http.request("POST", "/v1/Search/NG-AB12CD34", json={"action": "changeAcl"})
        with pytest.raises(RequestNotAllowedError, match="another host"):
            client.http.get_json("https://evil.example/v2/Search")
    finally:
        client.close()
    assert netdocuments_fake.requests == []  # nothing left the process, not even a token


def test_allow_list_patterns_match_whole_segments() -> None:
    allow = AllowList("x", [("GET", "/v1/Document/{id}/info"), ("POST", "/v1/OAuth")])
    assert allow.allows("GET", "/v1/Document/4824-5093-9170/info")
    assert allow.allows("get", "/v1/Document/abc/info")
    assert not allow.allows("GET", "/v1/Document/a/b/info")
    assert not allow.allows("PUT", "/v1/Document/abc/info")
    assert not allow.allows("GET", "/v1/Document/abc/info/extra")
    assert not allow.allows("GET", "/v1/OAuth")


def test_ids_cannot_walk_out_of_their_path_segment() -> None:
    assert segment("ACTIVE!1042.3") == "ACTIVE!1042.3"
    assert segment("a/b") == "a%2Fb"
    assert segment("x?y=1#z") == "x%3Fy%3D1%23z"
    for bad in ("", ".", ".."):
        with pytest.raises(ConnectorError):
            segment(bad)


# --- retries ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"x-ratelimit-retryafter": "7"}, 7.0),
        ({"Retry-After": "3"}, 3.0),
        ({"x-ratelimit-retryafter": "2", "Retry-After": "9"}, 2.0),  # iManage's own first
    ],
)
def test_429_honours_the_server_wait(
    imanage_fake: FakeIManage, sleeps: Sleeps, headers: dict[str, str], expected: float
) -> None:
    imanage_fake.inject(r"^/api$", 429, headers=headers)
    client = _client(imanage_fake, sleeps)
    try:
        assert client.customer_id == "1234"
    finally:
        client.close()
    assert expected in sleeps
    assert [r.status for r in imanage_fake.calls(r"^/api$")] == [429, 200]


def test_429_with_an_http_date(imanage_fake: FakeIManage, sleeps: Sleeps) -> None:
    before = datetime.now(UTC)
    when = before + timedelta(seconds=30)
    imanage_fake.inject(
        r"^/api$", 429, headers={"Retry-After": email.utils.format_datetime(when, usegmt=True)}
    )
    client = _client(imanage_fake, sleeps)
    try:
        client.discover()
    finally:
        client.close()
    after = datetime.now(UTC)
    assert len(sleeps) == 1
    # The wait is what the date leaves when the answer is read, some moment between before
    # and after: bounded by those, not by a guess at how long two requests take on a busy
    # machine (the date names a whole second: the header drops the fraction).
    named = when.replace(microsecond=0)
    assert (named - after).total_seconds() <= sleeps[0] <= (named - before).total_seconds()


def test_429_without_a_hint_backs_off_exponentially_with_jitter(
    imanage_fake: FakeIManage, sleeps: Sleeps
) -> None:
    imanage_fake.inject(r"^/api$", 429, times=3)
    client = _client(imanage_fake, sleeps)
    try:
        client.discover()
    finally:
        client.close()
    assert len(sleeps) == 3
    for attempt, wait in enumerate(sleeps, start=1):
        step = 2 ** (attempt - 1)  # 1, 2, 4 s with the default 1 s base
        assert step / 2 <= wait <= step


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_errors_are_retried(imanage_fake: FakeIManage, sleeps: Sleeps, status: int) -> None:
    imanage_fake.inject(r"/libraries$", status, times=2, headers={"Retry-After": "1"})
    client = _client(imanage_fake, sleeps)
    try:
        assert client.libraries()[0]["id"] == "ACTIVE"
    finally:
        client.close()
    assert sleeps == [1.0, 1.0]


def test_attempts_are_bounded(imanage_fake: FakeIManage, sleeps: Sleeps) -> None:
    imanage_fake.inject(r"^/api$", 503, times=10)
    client = _client(imanage_fake, sleeps, connector_max_attempts=3)
    try:
        with pytest.raises(SourceHTTPError) as info:
            client.discover()
    finally:
        client.close()
    assert info.value.status == 503
    assert len(imanage_fake.calls(r"^/api$")) == 3
    assert len(sleeps) == 2


def test_a_wait_longer_than_the_limit_gives_up_at_once(
    imanage_fake: FakeIManage, sleeps: Sleeps
) -> None:
    imanage_fake.inject(r"^/api$", 429, headers={"Retry-After": "3600"})
    client = _client(imanage_fake, sleeps)
    try:
        with pytest.raises(SourceHTTPError, match="429"):
            client.discover()
    finally:
        client.close()
    assert sleeps == []


def test_transport_errors_are_retried_then_reported(sleeps: Sleeps) -> None:
    sock = socket.socket()  # bound, never listening: refused, and no one else's port
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    http = SourceHttp(
        source="t",
        base_url=f"http://127.0.0.1:{port}",
        allow=AllowList("t", [("GET", "/x")]),
        max_attempts=3,
        sleep=sleeps,
        timeout_s=2,
    )
    try:
        with pytest.raises(SourceHTTPError, match="transport error") as info:
            http.get_json("/x")
    finally:
        http.close()
        sock.close()
    assert info.value.status is None
    assert len(sleeps) == 2


class _Drip(BaseHTTPRequestHandler):
    """Headers at once, then one byte of the body every DRIP_S: each read is far inside the
    timeout, so only a deadline on the whole answer can end it."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(DRIP_BYTES))
        self.end_headers()
        try:
            for _ in range(DRIP_BYTES):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(DRIP_S)
        except OSError:  # the client gave up: what this test wants
            return

    def log_message(self, *args: object) -> None:
        pass


DRIP_S = 0.3
DRIP_BYTES = 200  # a minute of dripping: a client that waits for it all is the bug


@pytest.mark.timeout(120)
def test_a_slow_drip_answer_runs_into_a_deadline_and_is_reported(sleeps: Sleeps) -> None:
    """Before, a download dripping a byte every 3 s held a sync (and its source's lock) for
    as long as the server kept dripping."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Drip)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    http = SourceHttp(
        source="t",
        base_url=f"http://127.0.0.1:{server.server_port}",
        allow=AllowList("t", [("GET", "/x")]),
        max_attempts=2,
        sleep=sleeps,
        timeout_s=1.0,
    )
    try:
        with pytest.raises(SourceHTTPError, match="ReadTimeout"):
            http.request("GET", "/x")
    finally:
        http.close()
        server.shutdown()
    assert len(sleeps) == 1  # retried once, like any timeout


def test_an_answer_past_the_content_limit_is_not_read_whole(sleeps: Sleeps) -> None:
    """A 400 MB download took 925 MB of memory before the 50 MB limit refused it. The answer
    is now cut just past the limit (the extraction refuses it as too large, a report entry)
    and the rest is never read."""
    megabyte = b"x" * (1 << 20)
    sent: list[int] = []

    def body() -> Iterator[bytes]:
        for _ in range(400):
            sent.append(1)
            yield megabyte

    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body()))
    http = SourceHttp(
        source="t",
        base_url="https://dms.example",
        allow=AllowList("t", [("GET", "/x")]),
        sleep=sleeps,
        transport=transport,
    )
    try:
        response = http.request("GET", "/x")
    finally:
        http.close()
    assert len(response.content) == MAX_BODY_BYTES == MAX_CONTENT_BYTES + 1
    assert len(sent) <= MAX_CONTENT_BYTES // len(megabyte) + 2, len(sent)
    with pytest.raises(ExtractionError, match="too large"):
        extract(text=None, content=response.content, mime_type="text/plain")


def test_retry_after_header_parsing() -> None:
    now = datetime(2025, 1, 8, 12, 0, tzinfo=UTC)
    assert retry_after_seconds(httpx.Headers({"x-ratelimit-reset": "5"}), now) == 5
    epoch = str((now + timedelta(seconds=12)).timestamp())
    assert retry_after_seconds(httpx.Headers({"x-ratelimit-reset": epoch}), now) == 12
    assert retry_after_seconds(httpx.Headers({"Retry-After": "soon"}), now) is None
    assert retry_after_seconds(httpx.Headers({}), now) is None
    past = email.utils.format_datetime(now - timedelta(seconds=5), usegmt=True)
    assert retry_after_seconds(httpx.Headers({"Retry-After": past}), now) == 0


# --- auth and secrets -----------------------------------------------------------------------------


def test_wrong_secret_is_a_clear_error_without_the_secret(
    imanage_fake: FakeIManage, sleeps: Sleeps
) -> None:
    client = _client(imanage_fake, sleeps, imanage_password="wrong-Passw0rd-x")
    try:
        with pytest.raises(CredentialsError) as info:
            client.discover()
    finally:
        client.close()
    text = str(info.value)
    assert "invalid_grant" in text
    assert "401" in text
    assert "wrong-Passw0rd-x" not in text
    assert imanage_fake.client_secret not in text
    assert [r.path for r in imanage_fake.requests] == ["/auth/oauth2/token"]  # no retry loop


def test_401_refreshes_once_then_stands(imanage_fake: FakeIManage, sleeps: Sleeps) -> None:
    client = _client(imanage_fake, sleeps)
    try:
        client.discover()
        imanage_fake.inject(r"^/api$", 401)
        client.discover()  # one 401, one refresh, then fine
        assert imanage_fake.grants == ["password", "refresh_token"]
        imanage_fake.inject(r"^/api$", 401, times=2)
        with pytest.raises(SourceAuthError):
            client.discover()
    finally:
        client.close()
    assert imanage_fake.grants == ["password", "refresh_token", "refresh_token"]


def test_without_a_refresh_token_the_password_grant_runs_again(sleeps: Sleeps) -> None:
    fake = FakeIManage(refresh_tokens=False)
    with fake.running():
        client = _client(fake, sleeps)
        try:
            client.discover()
            fake.inject(r"^/api$", 401)
            client.discover()
        finally:
            client.close()
    assert fake.grants == ["password", "password"]


def test_secrets_never_reach_logs(
    imanage_fake: FakeIManage, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    imanage_fake.inject(r"^/api$", 429, headers={"Retry-After": "1"})
    client = _client(imanage_fake, sleeps)
    try:
        client.discover()
        token = imanage_fake.requests[-1].token
    finally:
        client.close()
    assert token
    logged = caplog.text + " ".join(str(r.__dict__) for r in caplog.records)
    for secret in (token, imanage_fake.password, imanage_fake.client_secret):
        assert secret not in logged
    assert "retrying" in caplog.text
    assert repr(client.http) == f"SourceHttp(source='imanage', base_url='{imanage_fake.url}')"


def test_redactor_scrubs_registered_values_and_auth_headers() -> None:
    redact = Redactor()
    redact.add("tok-123-secret")
    text = redact("X-Auth-Token: tok-123-secret, Authorization: Bearer abc.def and tok-123-secret")
    assert "tok-123-secret" not in text
    assert "abc.def" not in text
    assert redact("Authorization: Basic dXNlcjpwYXNz") == "Authorization: ***"


def test_expires_in_as_number_or_string() -> None:
    assert parse_expires_in(1800) == 1800
    assert parse_expires_in("3600") == 3600
    assert parse_expires_in(" 60 ") == 60
    assert parse_expires_in(None) == 1800
    assert parse_expires_in("soon") == 1800
    assert parse_expires_in(-5) == 1800


# --- limits -------------------------------------------------------------------------------------


def test_token_bucket_spaces_requests() -> None:
    clock = FakeClock(0)
    bucket = TokenBucket(2.0, burst=2, clock=clock)
    assert [bucket.reserve(), bucket.reserve()] == [0, 0]  # the burst
    assert bucket.reserve() == pytest.approx(0.5)
    assert bucket.reserve() == pytest.approx(1.0)  # queued behind the previous one
    clock.advance(10)
    assert bucket.reserve() == 0


def test_rate_limit_waits_through_the_injected_sleep(
    imanage_fake: FakeIManage, sleeps: Sleeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _client(imanage_fake, sleeps, connector_rate_per_s=1.0)
    # The tenant's bucket, as the settings made it, counted on a stopped clock: on the real
    # one, a busy machine that took 2 s over the token grant and two calls had earned their
    # tokens back, and nothing was waited for (the injected sleep never passes time itself).
    bucket = client.http.limiter.bucket
    stopped = TokenBucket(bucket.rate, burst=bucket.capacity, clock=FakeClock(0))
    monkeypatch.setattr(client.http.limiter, "bucket", stopped)
    try:
        for _ in range(3):
            client.discover()
    finally:
        client.close()
    # 1 req/s with a burst of 1: the token grant takes the burst, and each call after it
    # waits a second longer, queued behind the one before.
    assert sleeps == [1.0, 2.0, 3.0]


def test_concurrency_cap_holds_across_threads(imanage_fake: FakeIManage, sleeps: Sleeps) -> None:
    imanage_fake.delay_s = 0.15
    client = _client(imanage_fake, sleeps, connector_concurrency=2)
    try:
        client.discover()
        # the first two calls wait for each other: both in flight at once however slowly the
        # threads start (with the delay alone, one had to arrive within 0.15 s of another)
        imanage_fake.gather = 2
        threads = [threading.Thread(target=client.libraries) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        client.close()
    assert len(imanage_fake.calls(r"/libraries$")) == 6
    assert imanage_fake.max_in_flight == 2


# --- parsing helpers ------------------------------------------------------------------------------


def test_content_disposition_and_mime() -> None:
    assert disposition_filename('attachment; filename="SPA v3.docx"') == "SPA v3.docx"
    assert (
        disposition_filename("attachment; filename*=UTF-8''Pleitnota%20%C3%A9.pdf")
        == "Pleitnota é.pdf"
    )
    assert disposition_filename("inline") is None
    assert guess_mime("a.pdf") == "application/pdf"
    assert guess_mime("mail.msg") == "application/vnd.ms-outlook"
    assert guess_mime(None, "DOCX").endswith("wordprocessingml.document")
    assert guess_mime(None, None, "text/plain; charset=utf-8") == "text/plain"
    assert guess_mime(None, None, "application/octet-stream") == "application/octet-stream"
