"""What the vendor HTTP clients share: the session, required settings, downloads, and
listings without paging."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
from pydantic import SecretStr

from app.settings import Settings
from connectors.http.allowlist import AllowList
from connectors.http.client import SourceHttp
from connectors.http.errors import ConnectorError
from connectors.http.lenient import pick
from connectors.http.mime import disposition_filename
from connectors.http.retry import Sleep
from connectors.paging import Listing, Page


@dataclass(frozen=True)
class Download:
    content: bytes
    filename: str | None
    content_type: str | None


def read_download(response: httpx.Response) -> Download:
    """The body of a download answer, its Content-Disposition filename and Content-Type."""
    return Download(
        content=response.content,
        filename=disposition_filename(response.headers.get("content-disposition")),
        content_type=response.headers.get("content-type"),
    )


def required_url(settings: Settings, source: str, fields: tuple[str, ...]) -> str:
    """The base URL (the first of ``fields``), once every field has a value; else a
    configuration error naming each missing one by its environment variable."""
    missing = ["EWALL_" + name.upper() for name in fields if not getattr(settings, name)]
    if missing:
        raise ConnectorError(f"{source}: not configured, missing {', '.join(missing)}")
    return str(getattr(settings, fields[0]))


def whole_members(
    what: str, rows: object, *, total: object, more: object, id_keys: tuple[str, ...]
) -> list[dict[str, Any]]:
    """A group's members as listed, or ConnectorError when the answer may not be all of
    them: not a list of objects that each carry an id (a shape we cannot read), or one that
    says it holds more (a total above the rows, a next link, a cursor; paging of these lists
    is undocumented). Read as fewer members, a deny of the group would lapse for the rest."""
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and any(pick(r, k) not in (None, "") for k in id_keys) for r in rows
    ):
        raise ConnectorError(f"{what}: an answer in a shape that cannot be read")
    if (isinstance(total, int) and not isinstance(total, bool) and total > len(rows)) or more:
        raise ConnectorError(f"{what}: {len(rows)} rows of more (paged, and no paging is known)")
    return rows


def whole_row_key(row: dict[str, Any]) -> str:
    """Identity of a row that has no id of its own (trustee, member, lookup rows)."""
    return repr(sorted((k, repr(v)) for k, v in row.items()))


def one_request(
    what: str,
    rows: Callable[[], list[dict[str, Any]]],
    key: Callable[[dict[str, Any]], str | None] = lambda row: None,
) -> list[dict[str, Any]]:
    """An endpoint with no documented paging: exactly one request, through the paging helper
    like every list (so its rows are deduplicated the same way)."""
    return Listing(what, lambda _: Page(rows()), key, mode="single").all()


class DmsClient:
    """One authenticated session against one tenant: ``http`` (the shared HTTP layer with
    this vendor's allow-list) and the secrets it must never show."""

    source: ClassVar[str]
    allow: ClassVar[AllowList]

    def __init__(
        self,
        settings: Settings,
        base_url: str,
        tenant: object,
        secrets: Iterable[SecretStr | None],
        options: tuple[httpx.BaseTransport | None, Sleep, random.Random | None],
    ) -> None:
        transport, sleep, rng = options
        self.http = SourceHttp.from_settings(
            settings,
            source=self.source,
            base_url=base_url,
            allow=self.allow,
            tenant=f"{self.source}:{base_url}:{tenant}",
            sleep=sleep,
            rng=rng,
            transport=transport,
        )
        for secret in secrets:
            self.http.redactor.add(secret)

    def close(self) -> None:
        self.http.close()
