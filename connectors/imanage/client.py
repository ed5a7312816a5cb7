"""iManage Work REST v2: the HTTP calls, nothing about documents or ACL semantics.

Paths and envelopes follow docs/dms-apis.md §1. Confidence per call is
noted where it matters; anything [O]/[U] is parsed tolerantly (``connectors.http.lenient``).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any

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
from connectors.http.errors import ConnectorError, SourceAuthError, SourceHTTPError
from connectors.http.lenient import as_text, pick, shape
from connectors.http.ratelimit import Clock
from connectors.http.retry import Sleep
from connectors.paging import Listing, Page, Position, PositionExpiredError

log = logging.getLogger("ewall.connectors.imanage")

OAUTH_PATH = "/auth/oauth2/token"  # [V-code] S3, S4, S12
_LIB = "/work/api/v2/customers/{cid}/libraries/{lib}"

# Read-only by construction. The POSTs are the token grant and the Sync API's crawl/search
# endpoints, which take their paging cursor in a JSON body (S4) and change nothing.
ROUTES: tuple[tuple[str, str], ...] = (
    ("POST", OAUTH_PATH),
    ("GET", "/api"),
    ("GET", "/work/api/v2/customers/{cid}/libraries"),
    ("GET", "/work/api/v2/customers/{cid}/features"),
    ("GET", _LIB + "/documents"),
    ("GET", _LIB + "/documents/{doc}"),
    ("GET", _LIB + "/documents/{doc}/download"),
    ("GET", _LIB + "/documents/{doc}/security"),
    ("GET", _LIB + "/workspaces/{ws}"),
    ("GET", _LIB + "/groups"),
    ("GET", _LIB + "/groups/{group}/members"),
    ("POST", _LIB + "/sync/documents/crawl"),
    ("POST", _LIB + "/sync/documents/security/allowed-trustees/search"),
    ("POST", _LIB + "/sync/documents/security/denied-trustees/search"),
    ("POST", _LIB + "/sync/groups/members/search"),
    ("POST", _LIB + "/sync/containers/security/denied-trustees/search"),
    ("POST", _LIB + "/sync/documents/parents/search"),
    ("POST", _LIB + "/sync/folders/crawl"),
    ("POST", _LIB + "/sync/workspaces/crawl"),
)
ALLOW = AllowList("imanage", ROUTES)

SYNC_DOCUMENTS = "documents/crawl"
SYNC_ALLOWED = "documents/security/allowed-trustees/search"
SYNC_DENIED = "documents/security/denied-trustees/search"
SYNC_GROUP_MEMBERS = "groups/members/search"
# Containers (docs/dms-apis.md §1.4, [O] S4): their denied trustees, where documents are
# filed, and the folder/workspace tree (connectors.imanage.containers)
SYNC_CONTAINER_DENIED = "containers/security/denied-trustees/search"
SYNC_PARENTS = "documents/parents/search"
SYNC_FOLDERS = "folders/crawl"
SYNC_WORKSPACES = "workspaces/crawl"


class CursorExpiredError(PositionExpiredError):
    """The Sync API refused a cursor (S4: they expire after about an hour)."""


def _row_id(row: dict[str, Any]) -> str | None:
    return as_text(pick(row, "id", "document_id"))


class IManageAuth(TokenAuth):
    """Password grant for a service account; the token goes in ``X-Auth-Token`` (S3, S4).

    Renewal: refresh_token when the server gave one, otherwise the password grant again; a
    refused refresh_token falls back to the password grant rather than failing the crawl.
    """

    def __init__(
        self, http: SourceHttp, settings: Settings, *, clock: Clock, scope: str | None
    ) -> None:
        super().__init__(http, clock=clock)
        self._settings = settings
        self._scope = scope

    def _client_fields(self) -> dict[str, str]:
        fields = {"client_id": self._settings.imanage_client_id or ""}
        if self._settings.imanage_client_secret is not None:
            fields["client_secret"] = self._settings.imanage_client_secret.get_secret_value()
        return fields

    def _grant(self, refresh_token: str | None) -> TokenGrant:
        if refresh_token:
            try:
                return self.token_request(
                    OAUTH_PATH,
                    {
                        "grant_type": "refresh_token",
                        "refresh_token": refresh_token,
                        **self._client_fields(),
                    },
                )
            except SourceAuthError:
                log.info("imanage refresh_token refused; running the password grant again")
        password = self._settings.imanage_password
        form = {
            "grant_type": "password",
            "username": self._settings.imanage_username or "",
            "password": password.get_secret_value() if password is not None else "",
            **self._client_fields(),
        }
        if self._scope:
            form["scope"] = self._scope
        return self.token_request(OAUTH_PATH, form)

    def _header(self, token: str) -> dict[str, str]:
        return {"X-Auth-Token": token}


def _required(settings: Settings) -> str:
    return required_url(
        settings,
        "imanage",
        ("imanage_url", "imanage_username", "imanage_password", "imanage_client_id"),
    )


def _data_object(body: Any) -> dict[str, Any]:
    """The ``data`` object of a single-item answer (profile, security, workspace)."""
    data = pick(body, "data")
    return data if isinstance(data, dict) else {}


def _results(body: Any) -> list[dict[str, Any]]:
    """Document lists arrive as ``data.results`` (I1, [V-code]) or a flat ``data`` (I3, Sync).
    A body of another shape (no list there, or rows that are no objects) is an error, not an
    empty page: read as one, it ended a listing early and the crawl was called complete. An
    answer without rows that states a total of 0 is empty."""
    data = pick(body, "data")
    rows = pick(data, "results") if isinstance(data, dict) else data
    if rows is None and isinstance(body, list) and body:
        rows = body
    if rows is None and _total(body) == 0:
        return []  # no rows, and says so: an empty answer in another spelling
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ConnectorError(f"imanage: a list answer of an unexpected shape: {shape(body)}")
    return rows


def _total(body: Any) -> int | None:
    # total_count at the top level or inside data: the location is [O] (docs/dms-apis.md §1.2).
    for holder in (body, pick(body, "data")):
        value = pick(holder, "total_count", "totalCount", "total")
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


class IManageClient(DmsClient):
    """One authenticated session against one iManage tenant."""

    source = "imanage"
    allow = ALLOW

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        rng: random.Random | None = None,
        scope: str | None = "user",
    ) -> None:
        super().__init__(
            settings,
            _required(settings),
            settings.imanage_client_id,
            (settings.imanage_password, settings.imanage_client_secret),
            (transport, sleep, rng),
        )
        self.auth = IManageAuth(self.http, settings, clock=clock, scope=scope)
        self._customer_id: str | None = None
        self.user: dict[str, Any] = {}

    # --- discovery --------------------------------------------------------------------------

    @property
    def customer_id(self) -> str:
        if self._customer_id is None:
            self.discover()
        if self._customer_id is None:
            raise ConnectorError("imanage: /api did not return data.user.customer_id")
        return self._customer_id

    def discover(self) -> dict[str, Any]:
        body = self.http.get_json("/api", auth=self.auth)
        user = pick(pick(body, "data"), "user")
        if isinstance(user, dict):
            self.user = user
            cid = pick(user, "customer_id", "customerId")
            if isinstance(cid, int | str) and not isinstance(cid, bool) and str(cid).strip():
                self._customer_id = str(cid).strip()
        return self.user

    def _customer(self) -> str:
        return "/work/api/v2/customers/" + segment(self.customer_id)

    def _library(self, lib: str) -> str:
        return f"{self._customer()}/libraries/{segment(lib)}"

    def libraries(self) -> list[dict[str, Any]]:
        # No documented paging: one request, through the paging helper like every list.
        return one_request(
            "imanage libraries",
            lambda: _results(self.http.get_json(self._customer() + "/libraries", auth=self.auth)),
            _row_id,
        )

    def features(self) -> dict[str, Any]:
        body = self.http.get_json(self._customer() + "/features", auth=self.auth)
        return _data_object(body)

    # --- documents --------------------------------------------------------------------------

    def search_documents(
        self,
        lib: str,
        *,
        offset: int,
        limit: int,
        edit_date_from: str | None = None,
        document_number: int | None = None,
    ) -> Page[dict[str, Any]]:
        params: dict[str, str | int | bool | None] = {
            "offset": offset,
            "limit": limit,
            "total": True,
            "edit_date_from": edit_date_from,
            "document_number": document_number,
        }
        body = self.http.get_json(self._library(lib) + "/documents", params=params, auth=self.auth)
        return Page(_results(body), _total(body))

    def search_listing(
        self,
        lib: str,
        *,
        limit: int,
        edit_date_from: str | None = None,
        start: Position | None = None,
    ) -> Listing[dict[str, Any]]:
        """I1 by offset, through the one paging helper (never ends on a short page)."""
        return Listing(
            f"imanage library {lib} documents",
            lambda at: self.search_documents(
                lib, offset=at.offset, limit=limit, edit_date_from=edit_date_from
            ),
            _row_id,
            start=start or Position(),
        )

    def document(self, lib: str, doc_id: str) -> dict[str, Any]:
        body = self.http.get_json(
            f"{self._library(lib)}/documents/{segment(doc_id)}", auth=self.auth
        )
        return _data_object(body)

    def security(self, lib: str, doc_id: str) -> dict[str, Any]:
        # Path [U]; body fields [V] (docs/dms-apis.md §1.2, I7).
        body = self.http.get_json(
            f"{self._library(lib)}/documents/{segment(doc_id)}/security", auth=self.auth
        )
        return _data_object(body)

    def download(self, lib: str, doc_id: str) -> Download:
        response = self.http.request(
            "GET",
            f"{self._library(lib)}/documents/{segment(doc_id)}/download",
            headers={"Accept": "*/*"},
            auth=self.auth,
        )
        return read_download(response)

    def workspace(self, lib: str, ws_id: str) -> dict[str, Any]:
        body = self.http.get_json(
            f"{self._library(lib)}/workspaces/{segment(ws_id)}", auth=self.auth
        )
        return _data_object(body)

    # --- groups (permission sync; paths [U]) ---------------------------------------------------

    def groups(self, lib: str) -> list[dict[str, Any]]:
        # In no published endpoint list (docs/dms-apis.md §1.2): callers treat a 404 as
        # "feature off".
        return one_request(
            f"imanage library {lib} groups",
            lambda: _results(self.http.get_json(self._library(lib) + "/groups", auth=self.auth)),
            _row_id,
        )

    def group_members(self, lib: str, group_id: str) -> list[dict[str, Any]]:
        # I16 [U]: no documented paging, so exactly one request. An answer that says it holds
        # more than it gave (a total, a next link or cursor) is refused rather than read as
        # the whole group: a member missed is a deny that lapses for them.
        path = f"{self._library(lib)}/groups/{segment(group_id)}/members"

        def rows() -> list[dict[str, Any]]:
            body = self.http.get_json(path, auth=self.auth)
            data = body if isinstance(body, list) else pick(body, "data")
            return whole_members(
                f"imanage: members of group {group_id}",
                pick(data, "results") if isinstance(data, dict) else data,
                total=_total(body),
                more=pick(body, "next", "cursor", "next_cursor", "nextLink"),
                id_keys=("id", "user_id"),
            )

        return one_request(
            f"imanage group {group_id} members",
            rows,
            lambda row: as_text(pick(row, "id", "user_id")),
        )

    # --- Sync/crawl API ([O] S4) ---------------------------------------------------------------

    def sync_page(
        self, lib: str, endpoint: str, cursor: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        body: dict[str, Any] = {"limit": limit}
        if cursor:
            body["cursor"] = cursor
        try:
            payload = self.http.post_json(
                f"{self._library(lib)}/sync/{endpoint}", body, auth=self.auth
            )
        except SourceHTTPError as exc:
            if cursor and exc.status in (400, 410):
                raise CursorExpiredError(
                    f"imanage: sync cursor for {endpoint} rejected (HTTP {exc.status})"
                ) from None
            raise
        next_cursor = pick(payload, "cursor", "next_cursor", "nextCursor")
        if not isinstance(next_cursor, str) or not next_cursor:
            next_cursor = None
        return _results(payload), next_cursor

    def sync_listing(
        self, lib: str, endpoint: str, limit: int, start: Position | None = None
    ) -> Listing[dict[str, Any]]:
        """One Sync endpoint through the paging helper: it ends when the cursor does (or on
        an empty page), never because a page was shorter than ``limit``; an expired cursor
        restarts the endpoint from the top without yielding a row twice."""

        def fetch(at: Position) -> Page[dict[str, Any]]:
            rows, cursor = self.sync_page(lib, endpoint, at.token, limit)
            return Page(rows, None, cursor)

        def key(row: dict[str, Any]) -> str | None:
            ident = _row_id(row)
            if ident is None or endpoint != "documents/crawl":
                # trustee and member rows have no id of their own: the whole row is the key
                return whole_row_key(row)
            return ident

        return Listing(
            f"imanage library {lib} sync {endpoint}",
            fetch,
            key,
            start=start or Position(),
            mode="cursor",
        )

    def sync_all(
        self,
        lib: str,
        endpoint: str,
        limit: int,
        on_restart: Callable[[str], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Every row of one Sync endpoint (see `sync_listing`)."""
        listing = self.sync_listing(lib, endpoint, limit)
        rows = listing.all()
        if on_restart is not None:
            for _ in range(listing.restarts):
                on_restart(endpoint)
        return rows
