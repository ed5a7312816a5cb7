"""The only requests a connector may send, checked before anything leaves the process.

The crawler is read-only: no write endpoint and no "get or create" endpoint (NetDocuments N14)
can be reached even by a bug, because the request is refused here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

import httpx

from connectors.http.errors import ConnectorError, RequestNotAllowedError


def segment(value: object) -> str:
    """One URL path segment from an id that came from the source.

    Ids are data, not paths: a hostile or broken id such as ``../../x`` must not walk the
    request onto another endpoint (which the allow-list would then have to catch).
    """
    text = str(value)
    if text in ("", ".", ".."):
        raise ConnectorError(f"invalid id for a URL path segment: {text!r}")
    # '!' stays readable because iManage ids are LIB!num.ver; everything else unusual is encoded.
    return quote(text, safe="!~-._")


_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


@dataclass(frozen=True)
class Route:
    method: str
    pattern: str
    regex: re.Pattern[str]


def _compile(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(pattern):
        out.append(re.escape(pattern[last : match.start()]))
        out.append(r"[^/]+")
        last = match.end()
    out.append(re.escape(pattern[last:]))
    return re.compile("^" + "".join(out) + "$")


class AllowList:
    """The only requests a connector may send: exact methods, paths with ``{id}`` holes."""

    def __init__(self, source: str, routes: Iterable[tuple[str, str]]) -> None:
        self.source = source
        self.routes = tuple(Route(m.upper(), p, _compile(p)) for m, p in routes)

    def allows(self, method: str, path: str) -> bool:
        method = method.upper()
        return any(r.method == method and r.regex.match(path) for r in self.routes)

    def check(self, method: str, path: str) -> None:
        if not self.allows(method, path):
            raise RequestNotAllowedError(
                f"{self.source}: {method.upper()} {path} is not on the connector's allow-list"
            )


def same_server(asked: str, url: httpx.URL) -> bool:
    """``url`` is on the server ``asked`` names: the same host and port, by the same scheme
    or upgraded to https (httpx gives a default port as None either way). For the clients
    that follow redirects (the citation gate, the case-law cross-check): an answer from
    elsewhere is not the source's."""
    source = httpx.URL(asked)
    same = (url.host, url.port) == (source.host, source.port)
    return same and url.scheme in {source.scheme, "https"}
