"""What the local document-management fakes (iManage, NetDocuments) share.

Each fake is a FastAPI app served over real HTTP on 127.0.0.1 (``tests.fakes.server``). This
module holds the plumbing they have in common, written from docs/dms-apis.md (what each
system is known or suspected to do) and independent of the project's code:

* a fake clock shared with the connector under test, so token expiry needs no waiting;
* a request log (method, path, query, body, the token presented and its age) that tests
  read to prove no write endpoint was called and tokens were renewed before they expired;
* fault injection: the next N requests whose path matches a pattern get a chosen status,
  headers and body (429 with each Retry-After variant, 503, ...);
* bearer-token bookkeeping: tokens minted on the fake clock, refused once ``token_ttl`` has
  passed or after ``tokens.clear()``;
* paging helpers: server-side page caps, totals that are exact, low or high, and cursors
  that carry a generation so that expiring them is one counter bump.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.fakes.server import serve

GATHER_GUARD_S = 60.0  # against a hang only (a cap below ``gather`` is never reached)


class FakeClock:
    """Monotonic seconds shared by the fake and the connector under test."""

    def __init__(self, start: float = 10_000.0) -> None:
        self.now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    token: str | None
    token_age: float | None
    status: int = 0


@dataclass
class Fault:
    method: str | None
    path: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: Any
    times: int


def error(status: int, message: str = "not found") -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def file_response(content: bytes, filename: str | None) -> Response:
    """A download: the bytes, and the filename in Content-Disposition when there is one."""
    headers = {}
    if filename:
        headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return Response(content, media_type="application/octet-stream", headers=headers)


def capped(asked: int, cap: int | None) -> int:
    """The page size a server that serves at most ``cap`` rows actually uses."""
    return asked if cap is None else min(asked, cap)


def reported_total(count: int, mode: str) -> int:
    """The total a server reports: exact, or wrong by three ("low"/"high")."""
    return count + {"low": -3, "high": 3}.get(mode, 0)


def position_token(prefix: str, generation: int, offset: int) -> str:
    return f"{prefix}{generation}-{offset}"


def position_offset(prefix: str, generation: int, token: str) -> int | None:
    """The offset a token of the current generation stands for; None when it expired or
    was never handed out."""
    match = re.match(rf"^{re.escape(prefix)}(\d+)-(\d+)$", token)
    if not match or int(match.group(1)) != generation:
        return None
    return int(match.group(2))


class FakeDms:
    """Request log, faults, tokens and serving for one fake tenant.

    Subclasses say where the token grant lives (``token_path``; it needs no token), how a
    request presents its token (`_request_token`) and how a request body reads
    (`_request_body`), then build their routes on an app from `_app`.
    """

    token_path = ""
    app: FastAPI

    def __init__(self, *, clock: FakeClock | None, token_ttl: int, advance_per_request: float):
        self.clock = clock or FakeClock()
        self.token_ttl = token_ttl
        self.advance_per_request = advance_per_request
        self.url = ""  # set while served
        self.tokens: dict[str, float] = {}  # token -> issued at (fake clock)
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay_s = 0.0
        # hold each request until this many were in flight at once (or GATHER_GUARD_S went
        # by): a test of a concurrency cap then sees the cap reached whatever the machine's
        # speed, not only when a request happened to arrive within another's delay
        self.gather = 0
        self._gathered = asyncio.Event()
        self._seq = 0
        self._lock = threading.Lock()

    # --- what a vendor says -------------------------------------------------------------------

    def _request_token(self, request: Request) -> str | None:
        raise NotImplementedError

    def _request_body(self, raw: bytes, request: Request) -> Any:
        raise NotImplementedError

    # --- knobs ---------------------------------------------------------------------------------

    def inject(
        self,
        path: str,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        body: Any = None,
        times: int = 1,
        method: str | None = None,
    ) -> None:
        """The next ``times`` requests whose path matches the regex ``path`` get ``status``."""
        self.faults.append(Fault(method, re.compile(path), status, headers or {}, body, times))

    # --- what happened -------------------------------------------------------------------------

    def calls(self, path_regex: str, method: str | None = None) -> list[Recorded]:
        pattern = re.compile(path_regex)
        return [
            r
            for r in self.requests
            if pattern.search(r.path) and (method is None or r.method == method)
        ]

    # --- tokens --------------------------------------------------------------------------------

    def _mint(self, template: str) -> tuple[str, int]:
        """A new token (``template`` formatted with a sequence number) valid from now on the
        fake clock, and that sequence number."""
        with self._lock:
            self._seq += 1
            token = template.format(self._seq)
            self.tokens[token] = self.clock.now
            return token, self._seq

    def _token_ok(self, token: str | None) -> bool:
        with self._lock:
            issued = self.tokens.get(token or "")
            return issued is not None and self.clock.now - issued < self.token_ttl

    # --- the app -------------------------------------------------------------------------------

    def _app(self) -> FastAPI:
        """An app whose every request is recorded, may meet an injected fault, and (except
        the token grant) needs a valid token."""
        app = FastAPI()
        fake = self

        @app.middleware("http")
        async def record(request: Request, call_next: Any) -> Response:
            raw = await request.body()
            body = fake._request_body(raw, request) if raw else None
            token = fake._request_token(request)
            with fake._lock:
                fake.clock.now += fake.advance_per_request
                issued = fake.tokens.get(token or "")
                entry = Recorded(
                    request.method,
                    request.url.path,
                    dict(request.query_params),
                    body,
                    token,
                    None if issued is None else fake.clock.now - issued,
                )
                fake.requests.append(entry)
                fault = next(
                    (
                        f
                        for f in fake.faults
                        if f.times > 0
                        and f.path.search(request.url.path)
                        and (f.method in (None, request.method))
                    ),
                    None,
                )
                if fault is not None:
                    fault.times -= 1
                fake.in_flight += 1
                fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                if fake.max_in_flight >= fake.gather:
                    fake._gathered.set()
            try:
                if fake.gather:
                    with suppress(TimeoutError):
                        await asyncio.wait_for(fake._gathered.wait(), GATHER_GUARD_S)
                if fake.delay_s:
                    await asyncio.sleep(fake.delay_s)
                if fault is not None:
                    response: Response = JSONResponse(
                        fault.body or {"error": "injected"},
                        status_code=fault.status,
                        headers=fault.headers,
                    )
                elif request.url.path != fake.token_path and not fake._token_ok(token):
                    response = error(401, "invalid_token")
                else:
                    response = await call_next(request)
            finally:
                with fake._lock:
                    fake.in_flight -= 1
            entry.status = response.status_code
            return response

        return app

    @contextmanager
    def running(self) -> Iterator[str]:
        with serve(self.app) as url:
            self.url = url
            yield url
