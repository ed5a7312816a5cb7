"""The citation gate: is every ECLI in a draft still good law, per the live source?

Each ECLI is fetched from ``{rechtspraak_url}?id={ECLI}`` (the judiciary's open data), all
at once up to ``citation_max_parallel``, each under a HARD deadline of
``citation_timeout_s`` that covers connecting, the response, reading the whole body and
parsing it:
httpx's own timeouts apply per operation, so a server trickling bytes could exceed them
many times over. Anything other than a readable record for that very ECLI answers
``live: false, reason: "unverifiable: ..."`` (fail closed): a lawyer must never be told a
citation is fine because the source was down.

There is no cache by default; with ``citation_cache_ttl_s > 0`` definitive answers (live or
definitely not) are reused for that long, unverifiable ones never, and only for the person
who asked: one cache for the firm answered ``cached: true`` (in no time) to whoever checked
an ECLI that a colleague had checked within the TTL, so a lawyer screened from a matter could
learn which decisions its team was citing (a probe of 2026-12-07).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import httpx

from app.caselaw.parse import assess, parse_rechtspraak
from app.caselaw.xmlbytes import legacy_bytes
from app.ecli import normalize_ecli
from app.ingest.types import ExtractionError
from app.settings import Settings
from connectors.http.allowlist import same_server

log = logging.getLogger("ewall.gates.citations")

MAX_BODY_BYTES = 32 * 1024 * 1024  # the largest real records are a few MB
# Real records hold at most a few dozen stray legacy bytes (87 in ../shared/corpus); each
# costs a Python call to repair, so an answer with more is refused before parsing, not left
# to hold a parse thread that other callers' checks wait for.
MAX_LEGACY_BYTES = 5_000
USER_AGENT = "ewall-citation-gate/1"
# Parsing runs here, off the call's event loop and under the same deadline as the fetch: a
# body of stray non-UTF-8 bytes takes seconds per MB to repair. Not the loop's default
# executor, which `asyncio.run` waits for at its end; a parse past its deadline finishes
# here unwaited.
_PARSERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ecli-parse")


@dataclass(frozen=True)
class CitationResult:
    ecli: str
    live: bool
    reason: str
    code: str  # live | withdrawn | replaced | vervallen | set_aside | unverifiable
    by: str | None = None  # the ECLI that replaced, voided or set it aside, when known
    http_status: int | None = None
    cached: bool = False
    elapsed_ms: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "ecli": self.ecli,
            "live": self.live,
            "reason": self.reason,
            "code": self.code,
            "by": self.by,
            "http_status": self.http_status,
            "cached": self.cached,
            "elapsed_ms": self.elapsed_ms,
        }


class _TooLargeError(Exception):
    """The answer exceeds max_body_bytes."""


class _ElsewhereError(Exception):
    """The source redirected to another server."""


def _unverifiable(
    ecli: str, what: str, started: float, http_status: int | None = None
) -> CitationResult:
    return CitationResult(
        ecli=ecli,
        live=False,
        reason=f"unverifiable: {what}",
        code="unverifiable",
        http_status=http_status,
        elapsed_ms=round((time.monotonic() - started) * 1000, 1),
    )


def malformed_citation(text: str) -> CitationResult:
    """What reads as a citation in an answer but is not a well-formed ECLI as written
    (`app.ecli.find_citations`): unverifiable, checked against nothing."""
    return _unverifiable(text, "not a well-formed ECLI as written", time.monotonic())


def against_known_state(
    result: CitationResult, known: tuple[str, str | None] | None
) -> CitationResult:
    """A live answer from the source about a decision that the case-law index last saw
    withdrawn, voided, set aside or held is no proof that it lives: ingestion holds such a
    record for a person to confirm (app/caselaw/state.py, rule 2), and so does the gate."""
    if not result.live or known is None:
        return result
    state, by = known
    return replace(
        result,
        live=False,
        code="unverifiable",
        reason=f"unverifiable: the source reads it as live, but ewall's case-law index "
        f"has it {state.replace('_', ' ')}" + (f" (by {by})" if by else ""),
        by=by,
    )


class CitationChecker:
    """Checks ECLIs against the live source; one instance per app (it holds the cache)."""

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.url = settings.rechtspraak_url
        self.timeout_s = float(settings.citation_timeout_s)
        self.max_parallel = int(settings.citation_max_parallel)
        self.cache_ttl_s = float(settings.citation_cache_ttl_s)
        self.max_body_bytes = max_body_bytes
        self._transport = transport
        # (the caller, the ECLI) -> (expiry, result): a person's own answers only
        self._cache: dict[tuple[str | None, str], tuple[float, CitationResult]] = {}
        self._lock = threading.Lock()

    # --- cache ---------------------------------------------------------------------------

    def _cached(self, caller: str | None, ecli: str) -> CitationResult | None:
        if self.cache_ttl_s <= 0:
            return None
        with self._lock:
            hit = self._cache.get((caller, ecli))
            if hit is None:
                return None
            expires, result = hit
            if time.monotonic() >= expires:
                del self._cache[caller, ecli]
                return None
        return replace(result, cached=True, elapsed_ms=0.0)

    def _remember(self, caller: str | None, result: CitationResult) -> None:
        if self.cache_ttl_s <= 0 or result.code == "unverifiable":
            return
        with self._lock:
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[caller, result.ecli] = (time.monotonic() + self.cache_ttl_s, result)

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()

    # --- checking ------------------------------------------------------------------------

    async def check(
        self, eclis: Sequence[str], caller: str | None = None
    ) -> list[CitationResult]:
        """One result per distinct ECLI, in order of first appearance. ``caller``: the person
        asking; the cache answers them only from their own earlier checks."""
        unique = list(dict.fromkeys(eclis))
        if not unique:
            return []
        gate = asyncio.Semaphore(self.max_parallel)
        limits = httpx.Limits(
            max_connections=self.max_parallel, max_keepalive_connections=self.max_parallel
        )
        async with httpx.AsyncClient(
            transport=self._transport,
            timeout=httpx.Timeout(self.timeout_s),
            limits=limits,
            follow_redirects=True,
            max_redirects=3,
            headers={"Accept": "application/xml", "User-Agent": USER_AGENT},
            event_hooks={"request": [self._same_source]},
        ) as client:
            return list(
                await asyncio.gather(*(self._check_one(client, gate, e, caller) for e in unique))
            )

    async def _same_source(self, request: httpx.Request) -> None:
        """A redirect may change the scheme to https, never the host or port: an answer from
        elsewhere is not the judiciary's."""
        if not same_server(self.url, request.url):
            raise _ElsewhereError(str(request.url.copy_with(query=None))[:200])

    def check_sync(self, eclis: Sequence[str], caller: str | None = None) -> list[CitationResult]:
        """For sync code such as a FastAPI ``def`` route (it runs in the threadpool).

        Each call runs its own short-lived event loop in the calling thread, so the checks
        neither block nor depend on the server's loop.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.check(eclis, caller))
        raise RuntimeError("check_sync() inside a running event loop: await check() instead")

    async def _check_one(
        self, client: httpx.AsyncClient, gate: asyncio.Semaphore, raw: str, caller: str | None
    ) -> CitationResult:
        started = time.monotonic()
        ecli = normalize_ecli(raw)
        if ecli is None:
            return _unverifiable(raw, "not a well-formed ECLI", started)
        cached = self._cached(caller, ecli)
        if cached is not None:
            return cached
        async with gate:
            # the deadline starts when this ECLI's request starts, not while it queues
            started = time.monotonic()
            result = await self._fetch_and_assess(client, ecli, started)
        self._remember(caller, result)
        return result

    async def _fetch(self, client: httpx.AsyncClient, ecli: str) -> tuple[int, bytes]:
        async with client.stream("GET", self.url, params={"id": ecli}) as response:
            if response.status_code != httpx.codes.OK:
                return response.status_code, b""
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_body_bytes:
                raise _TooLargeError
            parts: list[bytes] = []
            size = 0
            async for part in response.aiter_bytes():
                size += len(part)
                if size > self.max_body_bytes:
                    raise _TooLargeError
                parts.append(part)
            return response.status_code, b"".join(parts)

    async def _fetch_and_assess(
        self, client: httpx.AsyncClient, ecli: str, started: float
    ) -> CitationResult:
        try:
            status, body = await asyncio.wait_for(self._fetch(client, ecli), self.timeout_s)
        except (TimeoutError, httpx.TimeoutException):
            return _unverifiable(
                ecli, f"no answer from the source within {self.timeout_s:g} s", started
            )
        except _ElsewhereError as exc:
            return _unverifiable(
                ecli, f"the source redirected to another server ({exc})", started
            )
        except _TooLargeError:
            return _unverifiable(ecli, "the answer from the source is too large", started, 200)
        except httpx.HTTPError as exc:
            return _unverifiable(ecli, f"the source is unreachable ({type(exc).__name__})", started)
        if status == httpx.codes.NOT_FOUND:
            return _unverifiable(ecli, "the source has no record of it (HTTP 404)", started, status)
        if status != httpx.codes.OK:
            return _unverifiable(ecli, f"the source answered HTTP {status}", started, status)
        if legacy_bytes(body) > MAX_LEGACY_BYTES:
            return _unverifiable(
                ecli, "unreadable answer from the source (not UTF-8)", started, status
            )
        left = started + self.timeout_s - time.monotonic()
        try:
            parsing = asyncio.get_running_loop().run_in_executor(_PARSERS, parse_rechtspraak, body)
            record = await asyncio.wait_for(parsing, max(left, 0.0))
        except TimeoutError:
            return _unverifiable(
                ecli, f"the answer could not be read within {self.timeout_s:g} s", started, status
            )
        except ExtractionError as exc:
            return _unverifiable(
                ecli, f"unreadable answer from the source ({exc.reason[:200]})", started, status
            )
        except Exception:
            # a parser bug must not turn into "live" or a 500: the gate fails closed
            log.exception("citation check: parsing the answer failed", extra={"ecli": ecli})
            return _unverifiable(ecli, "unreadable answer from the source", started, status)
        if record.ecli.upper() != ecli.upper():
            return _unverifiable(
                ecli, f"the source answered with a record for {record.ecli}", started, status
            )
        verdict = assess(record)
        return CitationResult(
            ecli=ecli,
            live=verdict.live,
            reason=verdict.reason,
            code=verdict.code,
            by=verdict.by,
            http_status=status,
            elapsed_ms=round((time.monotonic() - started) * 1000, 1),
        )
