"""The request guard: what every request must pass before a route reads or parses its body.

A pure ASGI middleware, in this order:

0. development auth on the data directory's generated key (no EWALL_DEV_SECRET) answers
   only requests that arrived on a loopback address: 403 otherwise, whatever started the
   server (`ewall serve` refuses such a bind, but uvicorn pointed at the app factory does
   not ask; invariant 13);
1. a declared ``Content-Length`` above the route's limit: 413, nothing read;
2. a route that needs a bearer token and none (or a bad one) came: 401, nothing read;
3. a NUL (U+0000) in a path or query parameter: 422 naming it; under /v1, a query parameter
   the route does not declare: 422 naming it and those it takes, and one it declares given
   twice unless it takes a list: 422 naming it (app/query_names.py);
4. the body is read in chunks and counted (chunked bodies too): 413 as soon as it passes the
   limit, the rest is never read;
5. a NUL in any string of a JSON body: 422 naming its place (``filters.doc_types.0``);
   bytes that are not UTF-8 in a query string or a posted form: 422 naming the field;
6. a name given twice in one object of a JSON body: 422 naming its place (app/json_keys.py),
   never read as "the last one wins".

PostgreSQL text cannot hold NUL, so without step 3/5 such a value reached psycopg and came
back as a 500 (or as a misleading 503 from the audit writer). One check here covers every
route, present and future, whatever types its models use.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

from fastapi.routing import APIRoute, iter_route_contexts
from starlette.concurrency import run_in_threadpool
from starlette.convertors import Convertor
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.auth.keys import is_loopback
from app.auth.service import Principal, TokenVerifier, bearer_principal
from app.deps import get_principal
from app.errors import AppError, envelope
from app.json_keys import DUPLICATE_MESSAGE, duplicate_key_path
from app.query_names import (
    declared_query_names,
    repeatable_query_names,
    repeated_names,
    repeated_query_body,
    unknown_names,
    unknown_query_body,
)
from app.settings import Settings

NUL_MESSAGE = "must not contain NUL (U+0000) characters"
UTF8_MESSAGE = "is not valid UTF-8 once percent-decoded"
# A JSON body up to this size is checked for repeated names on the event loop (about 10 us
# for a search's); a larger one in a worker thread
INLINE_PARSE_BYTES = 64 * 1024
# Routes that take bulk bodies get max_bulk_body_bytes, every other route max_body_bytes.
BULK_ROUTES = frozenset({("POST", "/v1/documents"), ("POST", "/v1/matrix/import")})


@dataclass(frozen=True)
class _Route:
    template: str
    regex: re.Pattern[str]
    convertors: dict[str, Convertor[Any]]
    methods: frozenset[str]
    needs_token: bool
    query_names: frozenset[str] | None  # None: a route whose query string is not checked
    repeatable: frozenset[str]  # query names that take a list (given more than once)


def _needs_token(dependant: Any) -> bool:
    pending = list(dependant.dependencies)
    while pending:
        dep = pending.pop()
        if dep.call is get_principal:
            return True
        pending.extend(dep.dependencies)
    return False


def _entry(context: Any) -> _Route:
    return _Route(
        template=str(context.path_format),
        regex=context.path_regex,
        convertors=dict(context.param_convertors),
        methods=frozenset(context.methods or ()),
        needs_token=_needs_token(context.dependant),
        query_names=declared_query_names(str(context.path_format), context.dependant),
        repeatable=repeatable_query_names(context.dependant),
    )


# The entries of routes that a router included as they are (no prefix, no dependencies of
# its own), by the route object (kept here with its entry, so its id is not reused): the
# module-level routers' routes, the same in every app of the process.
_AS_DECLARED: dict[int, tuple[APIRoute, _Route]] = {}


def _included_as_declared(route: Any) -> list[Any] | None:
    """The routes of an included router that adds nothing to them (FastAPI builds each
    one's context for every app anew: about 0.1 s per app for this API, paid by every test
    that builds one), or None: read its contexts."""
    router = getattr(route, "original_router", None)
    include = getattr(route, "include_context", None)
    if router is None or include is None or include.prefix or include.dependencies:
        return None
    return list(router.routes)


def _flatten(routes: list[Any], *, included: bool = False) -> list[_Route]:
    """Every FastAPI route of the app with its full path, also those of included routers
    (``included``: routes of a router included as declared, kept for the next app; the
    app's own routes are not, they live and go with it)."""
    out = []
    for route in routes:
        declared = _included_as_declared(route)
        if declared is not None:
            out.extend(_flatten(declared, included=True))
        elif isinstance(route, APIRoute) and not included:
            out.append(_entry(route))
        elif isinstance(route, APIRoute):
            kept = _AS_DECLARED.get(id(route))
            if kept is None or kept[0] is not route:
                kept = _AS_DECLARED[id(route)] = (route, _entry(route))
            out.append(kept[1])
        else:
            out.extend(
                _entry(context)
                for context in iter_route_contexts([route])
                if isinstance(context.original_route, APIRoute)
            )
    return out


def nul_path(value: Any) -> tuple[str, ...] | None:
    """The place of the first string holding a NUL in parsed JSON (depth first, in order),
    or None. Walked with a stack of its own: a body nested a thousand deep is valid JSON
    that Python's recursion limit would turn into a 500 (a fuzz of 2026-12-06)."""
    # (node, its parent's index in ``steps``, the key or index that reached it)
    steps: list[tuple[int, str]] = []
    stack: list[tuple[Any, int, str | None]] = [(value, -1, None)]
    while stack:
        item, parent, key = stack.pop()
        if key is not None:
            steps.append((parent, key))
            parent = len(steps) - 1
        if isinstance(item, str):
            if "\x00" in item:
                return _path(steps, parent)
        elif isinstance(item, list):
            stack.extend((v, parent, str(i)) for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, dict):
            for name in item:
                if "\x00" in name:  # a NUL in a key is named before what the key holds
                    steps.append((parent, name.replace("\x00", "\\u0000")))
                    return _path(steps, len(steps) - 1)
            stack.extend((v, parent, k) for k, v in reversed(list(item.items())))
    return None


def _path(steps: list[tuple[int, str]], at: int) -> tuple[str, ...]:
    out: list[str] = []
    while at >= 0:
        at, key = steps[at]
        out.append(key)
    return tuple(reversed(out))


def _nul_response(field: str) -> JSONResponse:
    return _invalid_field(field, NUL_MESSAGE, "nul_character")


def _invalid_field(field: str, message: str, kind: str) -> JSONResponse:
    return JSONResponse(
        envelope(
            "validation_error",
            f"Invalid request: {field}: {message}",
            {"field": field, "errors": [{"field": field, "message": message, "type": kind}]},
        ),
        status_code=422,
    )


def _undecodable_field(encoded: bytes, whole: str) -> str | None:
    """The first name in ``a=1&b=2`` form encoding (a query string, a posted form) whose
    name or value is not UTF-8 once percent-decoded. The parsers downstream replace such
    bytes with U+FFFD, so a wall's title was stored other than it was sent."""
    for pair in encoded.split(b"&"):
        for part in pair.split(b"=", 1):
            try:
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
            except UnicodeDecodeError:
                name = unquote_to_bytes(pair.split(b"=", 1)[0].replace(b"+", b" "))
                return name.decode("utf-8", "backslashreplace") or whole
    return None


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse(
        envelope(
            "payload_too_large",
            f"The request body is larger than {limit} bytes, the limit of this route.",
            {"limit_bytes": limit},
        ),
        status_code=413,
        headers={"Connection": "close"},
    )


def _arrived_on_loopback(scope: Scope) -> bool:
    """Whether the connection came in on a loopback address (the server's side of it), or on
    a unix socket (uvicorn --uds names it by its path, without a port)."""
    server = scope.get("server")
    if server is None:
        return False
    return server[1] is None or is_loopback(str(server[0]))


def _loopback_only() -> JSONResponse:
    return JSONResponse(
        envelope(
            "forbidden",
            "Development auth without EWALL_DEV_SECRET answers on loopback only: set "
            "EWALL_DEV_SECRET, or EWALL_AUTH_MODE=oidc with your identity provider.",
            {},
        ),
        status_code=403,
    )


class _TooLarge(Exception):
    pass


class RequestGuard:
    def __init__(self, app: ASGIApp, *, settings: Settings, verifier: TokenVerifier) -> None:
        self.app = app
        self.settings = settings
        self.verifier = verifier
        self._routes: tuple[tuple[int, int], list[_Route]] | None = None
        self.loopback_only = settings.auth_mode == "dev" and settings.dev_secret is None

    def limit_for(self, method: str, template: str | None) -> int:
        if (method, template) in BULK_ROUTES:
            return self.settings.max_bulk_body_bytes
        return self.settings.max_body_bytes

    def _table(self, scope: Scope) -> list[_Route]:
        router = getattr(scope.get("app"), "router", None)
        routes = list(getattr(router, "routes", ()))
        key = (id(router), len(routes))
        if self._routes is None or self._routes[0] != key:
            self._routes = (key, _flatten(routes))
        return self._routes[1]

    def _match(self, scope: Scope) -> tuple[_Route | None, dict[str, Any]]:
        path = _route_path(scope)
        method = scope["method"]
        for route in self._table(scope):
            found = route.regex.match(path)
            if found is None:
                continue
            if method in route.methods or (method == "HEAD" and "GET" in route.methods):
                params = {
                    name: route.convertors[name].convert(value)
                    if name in route.convertors
                    else value
                    for name, value in found.groupdict().items()
                }
                return route, params
        return None, {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.loopback_only and not _arrived_on_loopback(scope):
            await _loopback_only()(scope, receive, send)
            return
        route, path_params = self._match(scope)
        method = scope["method"]
        limit = self.limit_for(method, route.template if route is not None else None)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _too_large(limit)(scope, receive, send)
            return
        if route is None:  # unknown route or method: the router answers 404/405, body unread
            await self.app(scope, receive, send)
            return
        if route.needs_token:
            try:
                principal = await self._authenticate(scope)
            except AppError as exc:
                response = JSONResponse(
                    envelope(exc.code, exc.message, exc.details),
                    status_code=exc.status,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
            state = scope.setdefault("state", {})
            state["principal"] = principal
            state["person_id"] = principal.person_id
        for name, value in path_params.items():
            if isinstance(value, str) and "\x00" in value:
                await _nul_response(name)(scope, receive, send)
                return
        undecodable = _undecodable_field(scope.get("query_string", b""), "query")
        if undecodable is not None:
            await _invalid_field(undecodable, UTF8_MESSAGE, "invalid_utf8")(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        for name, value in parse_qsl(query, keep_blank_values=True):
            if "\x00" in name or "\x00" in value:
                await _nul_response(name.replace("\x00", "\\u0000"))(scope, receive, send)
                return
        if route.query_names is not None:
            unknown = unknown_names(query, route.query_names)
            if unknown:
                refusal = unknown_query_body(unknown, route.query_names)
                await JSONResponse(refusal, status_code=422)(scope, receive, send)
                return
            twice = repeated_names(query, route.repeatable)
            if twice:
                refusal = repeated_query_body(twice)
                await JSONResponse(refusal, status_code=422)(scope, receive, send)
                return
        try:
            body = await _read_body(receive, limit)
        except _TooLarge:
            await _too_large(limit)(scope, receive, send)
            return
        if body is None:
            return  # the client went away before its body ended: nothing to answer
        undecodable = _undecodable_form(scope, body)
        if undecodable is not None:
            await _invalid_field(undecodable, UTF8_MESSAGE, "invalid_utf8")(scope, receive, send)
            return
        if body and (b"\\u0000" in body or b"\x00" in body) and _is_json(scope):
            field = _body_nul_field(body)
            if field is not None:
                await _nul_response(field)(scope, receive, send)
                return
        if body and _is_json(scope):
            # a bulk body parses for a good part of a second: not on the event loop
            repeated = (
                duplicate_key_path(body)
                if len(body) <= INLINE_PARSE_BYTES
                else await run_in_threadpool(duplicate_key_path, body)
            )
            if repeated is not None:
                field = ".".join(repeated)
                await _invalid_field(field, DUPLICATE_MESSAGE, "duplicate_key")(
                    scope, receive, send
                )
                return
        await self.app(scope, _replay(body, receive), send)

    async def _authenticate(self, scope: Scope) -> Principal:
        header = ""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                header = value.decode("latin-1")
                break
        if self.settings.auth_mode == "dev":
            return bearer_principal(header, self.verifier)
        # OIDC may fetch the key set over the network: not on the event loop
        return await run_in_threadpool(bearer_principal, header, self.verifier)


def _route_path(scope: Scope) -> str:
    """The path the router matches: without the root path the app is mounted under."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path != root:
        return path[len(root) :]
    return path


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _content_type(scope: Scope) -> bytes | None:
    """The request's Content-Type, lower case; None without one."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return bytes(value).lower()
    return None


def _undecodable_form(scope: Scope, body: bytes) -> str | None:
    """The field of a posted form that is not UTF-8, "form" for a multipart body that is not
    (no route takes a file: the parser read such bytes as Latin-1, a title nobody typed)."""
    kind = _content_type(scope) or b""
    if kind.startswith(b"application/x-www-form-urlencoded"):
        return _undecodable_field(body, "form")
    if kind.startswith(b"multipart/form-data"):
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return "form"
    return None


def _is_json(scope: Scope) -> bool:
    kind = _content_type(scope)
    return kind is None or b"json" in kind  # FastAPI parses a body without a type as JSON


def _body_nul_field(body: bytes) -> str | None:
    if b"\x00" in body:
        return "body"  # a raw NUL is never valid JSON; say where it is without parsing
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # the route's own parser answers 422 for broken or too deep JSON
    found = nul_path(parsed)
    if found is None:
        return None  # an escaped backslash followed by "u0000": text, not a NUL
    return ".".join(found) if found else "body"


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
