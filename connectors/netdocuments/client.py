"""NetDocuments REST v1/v2: the HTTP calls and tolerant parsing of their answers.

Paths from the vendor-published swagger (S1) unless noted; response shapes are mostly [O] and
come in two conventions (S3's ``Results``/``DocId``/``Attributes`` vs S11's
``standardList``/``standardAttributes``), so the parsers accept both and either casing.
"""

from __future__ import annotations

import base64
import logging
import random
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from app.settings import Settings
from connectors.dms.client import (
    DmsClient,
    Download,
    one_request,
    read_download,
    required_url,
    whole_members,
    whole_row_key,
)
from connectors.http.allowlist import AllowList, segment
from connectors.http.auth import TokenAuth, TokenGrant
from connectors.http.client import SourceHttp
from connectors.http.errors import ConnectorError
from connectors.http.lenient import (
    as_int,
    as_list,
    as_text,
    is_true,
    parse_datetime,
    pick,
    shape,
)
from connectors.http.ratelimit import Clock
from connectors.http.retry import Sleep
from connectors.paging import Listing, ListingIncompleteError, Page, Position

log = logging.getLogger("ewall.connectors.netdocuments")

OAUTH_PATH = "/v1/OAuth"
MAX_TOP = 500  # v2 search `top` maximum [V-vendor]; the server answers 400 above it

# Read-only by construction: GETs only, plus the token grant. Deliberately absent: N14
# (/v1/Workspace/{cab}/{client}/{matter}/info "get or create"), every POST /v1/Search action
# (changeAcl and friends), and all PUT/DELETE.
ROUTES: tuple[tuple[str, str], ...] = (
    ("POST", OAUTH_PATH),
    ("GET", "/v1/User/info"),
    ("GET", "/v1/User/cabinets"),
    ("GET", "/v2/Search"),
    ("GET", "/v1/Document/{id}/info"),
    ("GET", "/v1/Document/{id}"),
    ("GET", "/v1/Document/{id}/acl"),  # [U] no read-ACL endpoint is documented (N25)
    ("GET", "/v1/attributes/{repo}/{attr}"),
    ("GET", "/v2/cabinet/{cab}/groups"),
    ("GET", "/v1/Group/{group}/members"),
)
ALLOW = AllowList("netdocuments", ROUTES)


class NetDocumentsAuth(TokenAuth):
    """client_credentials with ``Basic base64("client_id|repository_id:client_secret")``
    (S5 and S11 independently). There is no refresh token for this grant: renewal is the
    grant again."""

    def __init__(self, http: SourceHttp, settings: Settings, *, clock: Clock, scope: str) -> None:
        super().__init__(http, clock=clock)
        secret = settings.netdocuments_client_secret
        pair = (
            f"{settings.netdocuments_client_id}|{settings.netdocuments_repository_id}:"
            f"{secret.get_secret_value() if secret is not None else ''}"
        )
        self._basic = base64.b64encode(pair.encode()).decode()
        http.redactor.add(self._basic)
        self._scope = scope

    def _grant(self, refresh_token: str | None) -> TokenGrant:
        return self.token_request(
            OAUTH_PATH,
            {"grant_type": "client_credentials", "scope": self._scope},
            headers={"Authorization": f"Basic {self._basic}"},
        )

    def _header(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}


@dataclass
class Hit:
    """One document as search or /info describes it, whatever the shape."""

    id: str
    name: str | None = None
    extension: str | None = None
    created: datetime | None = None
    created_by: str | None = None
    modified: datetime | None = None
    modified_by: str | None = None
    url: str | None = None
    env_id: str | None = None
    size: int | None = None
    official_version: str | None = None
    latest_version: str | None = None
    deleted: bool = False
    # attribute id (1000 + n) -> (value, description); a missing id means "absent"
    custom: dict[int, tuple[str | None, str | None]] = field(default_factory=dict)
    has_custom: bool = False
    cabinets: list[str] = field(default_factory=list)  # where the document is filed, if said


@dataclass
class SearchPage:
    hits: list[Hit]
    total: int | None
    next_token: str | None
    next_link: str | None


@dataclass
class Cabinet:
    id: str
    name: str | None
    repository_id: str | None
    client_attr: int | None  # wsOrgAttrNum: the organising attribute, usually Client
    matter_attr: int | None  # wsAttrNum: the workspace attribute, usually Matter


def _custom(rows: object) -> tuple[dict[int, tuple[str | None, str | None]], bool]:
    out: dict[int, tuple[str | None, str | None]] = {}
    if not isinstance(rows, list):
        return out, False
    for row in rows:
        ident = as_int(pick(row, "Id", "id", "attrNum", "AttributeId"))
        if ident is None:
            continue
        if ident < 1000:  # some answers number custom attributes 1..n instead of 1001..
            ident += 1000
        raw_value = pick(row, "Value", "value")
        value = as_text(raw_value) if raw_value is not None else None
        out[ident] = (value, as_text(pick(row, "Description", "description")))
    return out, True


def parse_hit(row: object) -> Hit | None:
    if not isinstance(row, dict):
        return None
    std = pick(row, "Attributes", "standardAttributes", "StandardAttributes")
    std = std if isinstance(std, dict) else row
    ident = as_text(pick(row, "DocId", "docId", "documentId")) or as_text(
        pick(std, "id", "docId", "DocId", "documentId")
    )
    if not ident or not ident.strip():
        return None
    custom_rows = pick(row, "CustomAttributes", "customAttributes")
    if custom_rows is None:
        custom_rows = pick(std, "CustomAttributes", "customAttributes")
    custom, has_custom = _custom(custom_rows)
    locations = pick(row, "Locations", "locations")
    url = as_text(pick(locations, "Url", "url")) or as_text(pick(std, "url", "Url"))
    deleted = pick(std, "deleted", "isDeleted", "Deleted")
    # S3's search rows carry Locations.Cabinets [O]; accept a few other spellings too.
    raw_cabinets = pick(locations, "Cabinets", "cabinets") if isinstance(locations, dict) else None
    if raw_cabinets is None:
        raw_cabinets = pick(row, "cabinets", "Cabinets", "cabinet", "cabinetId") or pick(
            std, "cabinets", "Cabinets", "cabinet", "cabinetId"
        )
    if isinstance(raw_cabinets, str):
        raw_cabinets = [raw_cabinets]
    cabinets = [
        c.strip()
        for c in (as_text(x) for x in as_list(raw_cabinets) if not isinstance(x, dict | list))
        if c and c.strip()
    ]
    return Hit(
        id=ident.strip(),
        name=as_text(pick(std, "Name", "name")),
        extension=as_text(pick(std, "Ext", "extension", "ext")),
        created=parse_datetime(pick(std, "Created", "created")),
        created_by=as_text(pick(std, "CreatedBy", "createdBy")),
        modified=parse_datetime(pick(std, "Modified", "modified", "lastMod")),
        modified_by=as_text(pick(std, "ModifiedBy", "modifiedBy")),
        url=url,
        env_id=as_text(pick(std, "envId", "EnvId")) or as_text(pick(row, "envId")),
        size=as_int(pick(std, "size", "Size")),
        official_version=as_text(pick(std, "officialVer", "OfficialVer", "officialVersion")),
        latest_version=as_text(pick(std, "latestVersionNumber", "LatestVersionNumber")),
        deleted=is_true(deleted),
        custom=custom,
        has_custom=has_custom,
        cabinets=cabinets,
    )


def parse_search(body: object) -> SearchPage:
    """One page of a listing. A body of another shape (no list of rows under any of the known
    keys) is an error, not an empty page: read as one, it ended a listing early and the
    crawl was called complete. An answer without rows that states a total of 0 is empty."""
    rows = pick(body, "Results", "standardList", "list", "results", "documents")
    if rows is None and isinstance(body, list) and body:
        rows = body
    if rows is None and as_int(pick(body, "TotalFound", "totalFound", "total", "TotalCount")) == 0:
        rows = []  # no rows, and says so: an empty answer in another spelling
    if not isinstance(rows, list):
        raise ConnectorError(f"netdocuments: a search answer of an unexpected shape: {shape(body)}")
    hits = [h for h in (parse_hit(r) for r in rows) if h is not None]
    total = as_int(pick(body, "TotalFound", "totalFound", "total", "TotalCount"))
    raw_next = as_text(
        pick(body, "skiptoken", "SkipToken", "skipToken", "next", "@odata.nextLink", "nextLink")
    )
    token: str | None = None
    link: str | None = None
    if raw_next and raw_next.strip():
        raw_next = raw_next.strip()
        if raw_next.startswith(("http://", "https://", "/")):
            # A next link: keep its skiptoken when it has one, else follow the link itself.
            query = dict(parse_qsl(urlsplit(raw_next).query))
            token = query.get("skiptoken") or query.get("$skiptoken")
            link = None if token else raw_next
        else:
            token = raw_next
    return SearchPage(hits, total, token, link)


def _rows(body: object, *names: str) -> list[dict[str, Any]]:
    rows = body if isinstance(body, list) else pick(body, *names)
    return [r for r in as_list(rows) if isinstance(r, dict)]


def _required(settings: Settings) -> str:
    return required_url(
        settings,
        "netdocuments",
        (
            "netdocuments_url",
            "netdocuments_client_id",
            "netdocuments_client_secret",
            "netdocuments_repository_id",
        ),
    )


class NetDocumentsClient(DmsClient):
    """One authenticated session against one NetDocuments repository, in its region's host."""

    source = "netdocuments"
    allow = ALLOW

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        rng: random.Random | None = None,
        scope: str = "read",
    ) -> None:
        super().__init__(
            settings,
            _required(settings),
            settings.netdocuments_repository_id,
            (settings.netdocuments_client_secret,),
            (transport, sleep, rng),
        )
        self.auth = NetDocumentsAuth(self.http, settings, clock=clock, scope=scope)
        self.repository_id = settings.netdocuments_repository_id

    def cabinets(self) -> list[Cabinet]:
        out = []
        for row in self._single(
            "netdocuments cabinets", "/v1/User/cabinets", "cabinets", "Cabinets", "list"
        ):
            ident = as_text(pick(row, "id", "Id", "cabinetId"))
            if not ident or not ident.strip():
                continue
            out.append(
                Cabinet(
                    id=ident.strip(),
                    name=as_text(pick(row, "name", "Name")),
                    repository_id=as_text(pick(row, "repositoryId", "RepositoryId")),
                    client_attr=as_int(pick(row, "wsOrgAttrNum", "WsOrgAttrNum")),
                    matter_attr=as_int(pick(row, "wsAttrNum", "WsAttrNum")),
                )
            )
        return out

    def search(
        self,
        cabinet: str,
        *,
        q: str,
        select: str,
        top: int,
        orderby: str | None = None,
        skip: int | None = None,
        skiptoken: str | None = None,
        link: str | None = None,
    ) -> SearchPage:
        if link:
            body = self.http.get_json(link, auth=self.auth)
            return parse_search(body)
        params: dict[str, str | int | None] = {
            "cabinets": cabinet,
            "q": q,
            "select": select,
            "top": min(top, MAX_TOP),
            "orderby": orderby,
        }
        if skiptoken:
            params["skiptoken"] = skiptoken
        elif skip:
            params["skip"] = skip
        return parse_search(self.http.get_json("/v2/Search", params=params, auth=self.auth))

    def info(self, doc_id: str) -> Hit | None:
        body = self.http.get_json(f"/v1/Document/{segment(doc_id)}/info", auth=self.auth)
        return parse_hit(body)

    def acl(self, doc_id: str) -> list[dict[str, Any]]:
        return self._single(
            f"netdocuments document {doc_id} access list",
            f"/v1/Document/{segment(doc_id)}/acl",
            "acl",
            "ACL",
            "accessList",
            "AccessList",
            "list",
        )

    def download(self, doc_id: str) -> Download:
        # The official version (N16); Accept octet-stream, no base64.
        response = self.http.request(
            "GET",
            f"/v1/Document/{segment(doc_id)}",
            headers={"Accept": "application/octet-stream"},
            auth=self.auth,
        )
        return read_download(response)

    def lookup_rows(
        self, repository: str, attribute: int, *, top: int = MAX_TOP
    ) -> list[dict[str, Any]]:
        """Every row of a lookup table (N5), paged by ``$skip``/``$top`` through the paging
        helper: a page shorter than ``$top`` does not end it (servers cap ``$top``), only an
        empty page does. Raises `ListingIncompleteError` when it cannot be read to the end:
        a table missing its later rows would drop their ``|N`` denies (fail open). It is read
        twice: paged by ``$skip``, a row deleted on an earlier page while it is read shifts
        the next one past the reader. When one read holds every row of the other, the fuller
        one is the table (rows were added, or removed after it); otherwise it was not read."""
        path = f"/v1/attributes/{segment(repository)}/{segment(attribute)}"

        def fetch(at: Position) -> Page[dict[str, Any]]:
            body = self.http.get_json(
                path,
                params={
                    "$select": "key,description,parent,access",
                    "$top": top,
                    "$skip": at.offset or None,
                    "$orderby": "key",
                },
                auth=self.auth,
            )
            names = ("rows", "Rows", "list", "lookups")
            if not isinstance(body, list) and not isinstance(pick(body, *names), list):
                # read as an empty page it would end the table early: later |N rows lapse
                raise ListingIncompleteError(f"lookup table {attribute}: a page without rows")
            return Page(_rows(body, *names))

        what = f"netdocuments lookup table {attribute}"
        first, second = (Listing(what, fetch, whole_row_key).all() for _ in range(2))
        one, two = ({whole_row_key(r) for r in rows} for rows in (first, second))
        if one <= two:
            return second
        if two <= one:
            return first
        raise ListingIncompleteError(f"{what} changed while it was read")

    def _single(self, what: str, path: str, *names: str) -> list[dict[str, Any]]:
        """An endpoint with no documented paging: one request, through the paging helper."""
        return one_request(what, lambda: _rows(self.http.get_json(path, auth=self.auth), *names))

    def cabinet_groups(self, cabinet: str) -> list[dict[str, Any]]:
        return self._single(
            f"netdocuments cabinet {cabinet} groups",
            f"/v2/cabinet/{segment(cabinet)}/groups",
            "groups",
            "Groups",
            "list",
            "Results",
        )

    def group_members(self, group: str) -> list[dict[str, Any]]:
        path = f"/v1/Group/{segment(group)}/members"

        def rows() -> list[dict[str, Any]]:
            body = self.http.get_json(path, auth=self.auth)
            return whole_members(
                f"netdocuments: members of group {group}",
                body if isinstance(body, list) else pick(body, "members", "list", "users"),
                total=pick(body, "TotalFound", "totalFound", "total", "count")
                if isinstance(body, dict)
                else None,
                more=pick(body, "next", "skiptoken", "nextLink", "cursor")
                if isinstance(body, dict)
                else None,
                id_keys=("id", "email"),
            )

        return one_request(f"netdocuments group {group} members", rows)
