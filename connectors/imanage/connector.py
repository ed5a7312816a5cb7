"""iManage Work connector: documents with client/matter, source permissions and deletions.

Identity: one index entry per document, ``external_id = "LIB!number"``. iManage gives every
version its own id (``LIB!number.version``); keeping only the latest version per document
number (docs/connectors.md §1.7 item 4) is simplest when the version is not part of the
identity: a new version replaces the old one in place, and a sweep never sees the superseded
version as "deleted". The versioned id is kept in ``metadata["imanage_id"]``.

Crawl: the Sync API (cursor pages, S4) when the tenant has ``data_sync_import``, else the
document search (I1) paged by offset. Delta: I1 with ``edit_date_from`` = watermark minus
``connector_overlap_s``. Cursors are JSON strings owned by this module.
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from app.settings import Settings
from connectors.base import (
    CrawlCursor,
    CrawlItem,
    DefaultAccess,
    DocumentFailure,
    Presence,
    SourceAcl,
    SourceDocument,
    SourceGroup,
    normalise_code,
)
from connectors.http import (
    Clock,
    ConnectorError,
    CredentialsError,
    Sleep,
    SourceHTTPError,
    as_text,
    guess_mime,
    has_key,
    iso_utc,
    parse_datetime,
    pick,
)
from connectors.imanage.client import (
    SYNC_ALLOWED,
    SYNC_DENIED,
    SYNC_DOCUMENTS,
    SYNC_GROUP_MEMBERS,
    CursorExpiredError,
    IManageClient,
)

log = logging.getLogger("ewall.connectors.imanage")

SOURCE = "imanage"

# (library, versioned document id, group id) -> the group's members that Security Policy
# Manager restricts on this document, as principals; None when that cannot be known.
RestrictedMemberResolver = Callable[[str, str, str], frozenset[str] | None]

_GRANTS = frozenset({"read", "read_write", "full_access", "change_security"})
_LEVEL_BY_NUMBER = {0: "no_access", 1: "read", 2: "read_write", 3: "full_access"}
_DEFAULTS: dict[str, DefaultAccess] = {"public": "public", "view": "view", "private": "private"}
_DOCUMENT_TYPES = frozenset({"document", "email"})
_FIELD = re.compile(r"^[a-z][a-z0-9_]*$")
_DOC_ID = re.compile(r"^(?P<lib>[^!]+)!(?P<num>\d+)(?:\.(?P<ver>\d+))?$")


def principal(kind: str, ident: str) -> str:
    return f"{SOURCE}:{kind}:{ident.strip().lower()}"


# --- settings ------------------------------------------------------------------------------


def parse_field_map(text: str) -> dict[str, tuple[str, str]]:
    """``"ACTIVE=custom1:custom2;ARCH=custom29:custom30"`` -> {library: (client, matter)}.

    A malformed map is a configuration error, raised at start: silently falling back to the
    defaults would file a whole library's documents under the wrong client.
    """
    out: dict[str, tuple[str, str]] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        lib, sep, fields = part.partition("=")
        client_field, sep2, matter_field = fields.partition(":")
        client_field, matter_field = client_field.strip().lower(), matter_field.strip().lower()
        if not sep or not sep2 or not lib.strip() or not _FIELD.match(client_field) \
                or not _FIELD.match(matter_field):
            raise ConnectorError(
                f"imanage: EWALL_IMANAGE_FIELD_MAP entry {part!r} is not LIB=field:field"
            )
        out[lib.strip().upper()] = (client_field, matter_field)
    return out


# --- permissions ---------------------------------------------------------------------------


def _trustee(entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
    ident = as_text(pick(entry, "trustee_id", "user_id", "group_id", "id"))
    kind = (as_text(pick(entry, "type", "trustee_type", "member_type")) or "").strip().lower()
    if kind not in ("user", "group"):
        kind = "group" if has_key(entry, "group_id") else "user" if has_key(entry, "user_id") \
            else ""
    if not ident or not ident.strip():
        return (kind or None), None
    return (kind or None), ident.strip()


def _level(entry: Mapping[str, Any]) -> str | None:
    raw = pick(entry, "access_level", "access", "role", "rights")
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return _LEVEL_BY_NUMBER.get(raw)
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text.isdigit():
            return _LEVEL_BY_NUMBER.get(int(text))
        return text or None
    return None


def _truthy(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def resolve_default(default_security: object, inherited: object = None) -> tuple[DefaultAccess,
                                                                                  str | None]:
    raw = (as_text(default_security) or "").strip().lower()
    if raw == "inherit":
        raw = (as_text(inherited) or "").strip().lower()
    if raw in _DEFAULTS:
        return _DEFAULTS[raw], None
    # Unknown or unresolved inheritance: "private" still honours every explicit grant and
    # admits nobody else, the narrowest reading that is not "nobody at all".
    return "private", f"default_security {default_security!r} unresolved; treated as private"


def build_acl(
    *,
    library: str,
    document_id: str,
    default_security: object,
    inherited_default: object = None,
    entries: Iterable[Mapping[str, Any]] = (),
    denied: Iterable[Mapping[str, Any]] = (),
    implicit_users: Iterable[str] = (),
    resolver: RestrictedMemberResolver | None = None,
) -> SourceAcl:
    """Normalise iManage security (docs/connectors.md §1.6, §3.1) into a SourceAcl.

    * ``no_access`` entries and Sync API denied trustees are denies; deny wins at query time.
    * ``read`` and stronger grant read. An access level we do not know makes the document
      unresolvable: reading an unknown level as a grant could leak, reading it as nothing
      could drop a deny.
    * A group grant with ``has_restricted_member`` (Security Policy Manager restricts some
      members, who are not named): the restricted members come from ``resolver``; when they
      cannot be resolved the whole document is unresolvable (visible to nobody). Dropping only
      the group's grant would NOT fail closed: SPM denies a restricted user regardless of any
      other route (another group, an individual grant, public/view default security), and we
      cannot tell which users to deny.
    * Author and operator always reach their private documents (§1.5).
    """
    default, default_note = resolve_default(default_security, inherited_default)
    allow: set[str] = set()
    deny: set[str] = set()
    notes: list[str] = [default_note] if default_note else []
    resolvable = True
    for entry in entries:
        kind, ident = _trustee(entry)
        level = _level(entry)
        if kind is None or ident is None:
            if level in _GRANTS:
                notes.append("grant without a usable trustee skipped")
                continue
            resolvable = False
            notes.append("deny or unknown entry without a usable trustee")
            continue
        name = principal(kind, ident)
        if level == "no_access":
            deny.add(name)
        elif level in _GRANTS:
            if kind == "group" and _truthy(pick(entry, "has_restricted_member")):
                restricted = resolver(library, document_id, ident) if resolver else None
                if restricted is None:
                    resolvable = False
                    notes.append(f"group {ident.lower()} has members restricted by Security "
                                 "Policy Manager that cannot be resolved")
                    continue
                deny.update(p.lower() for p in restricted)
            allow.add(name)
        else:
            resolvable = False
            notes.append(f"unknown access level {level!r} for {name}")
    for entry in denied:
        kind, ident = _trustee(entry)
        if kind is None or ident is None:
            resolvable = False
            notes.append("denied trustee without a usable id")
            continue
        deny.add(principal(kind, ident))
    for user in implicit_users:
        if user and user.strip():
            allow.add(principal("user", user))
    return SourceAcl(
        default=default,
        allow=frozenset(allow),
        deny=frozenset(deny),
        resolvable=resolvable,
        note="; ".join(notes) or None,
    )


def _acl_entries(security: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = pick(security, "acl", "access_list", "permissions")
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


# --- the connector -------------------------------------------------------------------------


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _doc_key(value: object, library: str | None = None) -> tuple[str, int] | None:
    """(LIBRARY, number) from ``LIB!num[.ver]``, or from a bare number plus its library."""
    text = as_text(value)
    if text is None:
        return None
    match = _DOC_ID.match(text.strip())
    if match:
        return match.group("lib").upper(), int(match.group("num"))
    if library and text.strip().isdigit():
        return library.upper(), int(text.strip())
    return None


def _version(row: Mapping[str, Any]) -> int:
    raw = pick(row, "version")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw.strip())
    match = _DOC_ID.match(as_text(pick(row, "id")) or "")
    return int(match.group("ver")) if match and match.group("ver") else 0


def _person(value: object) -> tuple[str | None, str | None]:
    """(id, display name): ``author`` is a string in search rows, an object in crawl rows."""
    if isinstance(value, Mapping):
        ident = as_text(pick(value, "id", "user_id"))
        name = as_text(pick(value, "full_name", "name", "display_name"))
        return (ident.strip() or None) if ident else None, name
    text = as_text(value)
    return ((text.strip() or None) if text else None), None


@dataclass
class _Fields:
    client: str | None
    matter: str | None
    client_raw: str | None
    matter_raw: str | None
    origin: dict[str, str]


class IManageConnector:
    """FullLoad, PollSince, ListIds, PermissionSync, ResumableCrawl, PointCheck, OwnsIds."""

    source = SOURCE

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        rng: random.Random | None = None,
        now: Callable[[], datetime] = _utcnow,
        page_size: int = 100,
        sync_page_size: int = 1000,
        use_sync_api: bool | None = None,
        restricted_member_resolver: RestrictedMemberResolver | None = None,
        oauth_scope: str | None = "user",
    ) -> None:
        self.settings = settings
        self.client = IManageClient(settings, transport=transport, sleep=sleep, clock=clock,
                                    rng=rng, scope=oauth_scope)
        self.page_size = max(1, page_size)
        self.sync_page_size = max(1, sync_page_size)
        self.use_sync_api = use_sync_api
        self.resolver = restricted_member_resolver
        self._now = now
        self.overlap = timedelta(seconds=settings.connector_overlap_s)
        self.field_map = parse_field_map(settings.imanage_field_map)
        self.default_fields = (settings.imanage_client_field.strip().lower(),
                               settings.imanage_matter_field.strip().lower())
        self.configured_libraries = [
            lib.strip() for lib in settings.imanage_libraries.split(",") if lib.strip()
        ]
        self.scope = "libraries=" + (",".join(sorted(x.upper() for x in
                                                      self.configured_libraries)) or "*")
        self.total_hint: int | None = None
        self.sync_restarts: list[str] = []
        self._workers = settings.connector_concurrency
        self._pool: ThreadPoolExecutor | None = None
        self._sync_available: bool | None = None
        self._libraries_cache: list[str] | None = None
        self._workspaces: dict[tuple[str, str], dict[str, Any] | None] = {}
        self._workspaces_lock = threading.Lock()
        self._workspace_locks: dict[tuple[str, str], threading.Lock] = {}
        self._versions: dict[tuple[str, int], int] = {}
        self._totals: dict[str, int] = {}

    # --- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.client.close()

    def __enter__(self) -> IManageConnector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _map(self, fn: Callable[[dict[str, Any]], CrawlItem],
             rows: list[dict[str, Any]]) -> Iterator[CrawlItem]:
        """Fetch a page's documents in parallel (bounded by the tenant's semaphore anyway),
        yielding in page order so checkpoints stay meaningful."""
        if self._workers <= 1 or len(rows) <= 1:
            yield from (fn(r) for r in rows)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._workers,
                                            thread_name_prefix="imanage")
        # In windows: pool.map submits everything at once, and a 1000-row page of
        # downloaded content waiting for its turn would all sit in memory.
        window = self._workers * 2
        for start in range(0, len(rows), window):
            yield from self._pool.map(fn, rows[start:start + window])

    # --- scope --------------------------------------------------------------------------------

    def libraries(self) -> list[str]:
        if self.configured_libraries:
            return list(self.configured_libraries)
        if self._libraries_cache is None:
            ids = []
            for row in self.client.libraries():
                ident = as_text(pick(row, "id", "library_id", "database"))
                # Hidden libraries are excluded from "all"; name them explicitly to crawl them.
                if ident and ident.strip() and not _truthy(pick(row, "is_hidden")):
                    ids.append(ident.strip())
            self._libraries_cache = ids
        return list(self._libraries_cache)

    def owns(self, external_id: str) -> bool:
        key = _doc_key(external_id)
        if key is None:
            return False
        if not self.configured_libraries:
            return True
        return key[0] in {lib.upper() for lib in self.configured_libraries}

    def sync_api_available(self) -> bool:
        if self.use_sync_api is not None:
            return self.use_sync_api
        if self._sync_available is None:
            try:
                features = self.client.features()
            except SourceHTTPError as exc:
                if exc.status not in (400, 403, 404):
                    raise
                features = {}
            self._sync_available = _truthy(pick(features, "data_sync_import"))
        return self._sync_available

    def _fields_for(self, library: str) -> tuple[str, str]:
        return self.field_map.get(library.upper(), self.default_fields)

    # --- capability protocols -------------------------------------------------------------------

    def load_all(self) -> Iterator[SourceDocument]:
        """Documents only; failures and checkpoints are in ``crawl_full`` (what run_sync
        uses), so a plain consumer of this cannot sweep or resume."""
        for item in self.crawl_full(None):
            if isinstance(item, SourceDocument):
                yield item

    def poll(self, cursor: str | None) -> Iterator[SourceDocument | str]:
        for item in self.crawl_delta(cursor):
            if isinstance(item, SourceDocument | str):
                yield item

    def list_ids(self) -> Iterator[str]:
        emitted: set[str] = set()
        for lib in self.libraries():
            for page in self._search_pages(lib, edit_date_from=None, start=0):
                if isinstance(page, DocumentFailure):
                    raise ConnectorError(page.reason)  # a partial list would fake deletions
                for row in page[0]:
                    key = _doc_key(pick(row, "id"), lib) or _doc_key(
                        pick(row, "document_number"), lib)
                    if key and self._is_document(row):
                        ident = f"{key[0]}!{key[1]}"
                        if ident not in emitted:
                            emitted.add(ident)
                            yield ident

    def check(self, external_id: str) -> Presence:
        key = _doc_key(external_id)
        if key is None:
            raise ConnectorError(f"imanage: {external_id!r} is not LIB!number")
        return self._presence(key[0], external_id)

    def groups(self) -> Iterator[SourceGroup]:
        members: dict[str, set[str]] = {}
        for lib in self.libraries():
            if self.sync_api_available():
                rows = self.client.sync_all(lib, SYNC_GROUP_MEMBERS, self.sync_page_size,
                                            on_restart=self.sync_restarts.append)
                for row in rows:
                    gid = as_text(pick(row, "group_id", "groupId"))
                    uid = as_text(pick(row, "user_id", "member_id", "userId", "id"))
                    if gid and gid.strip():
                        bucket = members.setdefault(gid.strip().lower(), set())
                        if uid and uid.strip():
                            bucket.add(principal("user", uid))
                continue
            for group in self.client.groups(lib):
                gid = as_text(pick(group, "id", "group_id"))
                if not gid or not gid.strip():
                    continue
                bucket = members.setdefault(gid.strip().lower(), set())
                if pick(group, "enabled") is False:
                    continue  # a disabled group grants nothing: sync it empty
                for member in self.client.group_members(lib, gid.strip()):
                    uid = as_text(pick(member, "id", "user_id"))
                    if uid and uid.strip():
                        bucket.add(principal("user", uid))
        for gid, users in sorted(members.items()):
            yield SourceGroup(source=SOURCE, group_id=gid, members=frozenset(users))

    # --- full crawl ------------------------------------------------------------------------------

    def crawl_full(self, resume: str | None) -> Iterator[CrawlItem]:
        cursor = CrawlCursor.load(resume) if resume else CrawlCursor(
            full={"started": iso_utc(self._now()), "done": [], "lib": None, "offset": 0,
                  "sync": None})
        full = cursor.full
        if full is None:
            return  # that crawl already finished; only its bookkeeping was left
        self._versions = {}
        libraries = self.libraries()
        use_sync = self.sync_api_available()
        for lib in libraries:
            if lib in full["done"]:
                continue
            if full.get("lib") != lib:
                full.update(lib=lib, offset=0, sync=None)
            if use_sync:
                yield from self._full_library_sync(lib, cursor)
            else:
                yield from self._full_library_search(lib, cursor)
            full["done"].append(lib)
            full.update(lib=None, offset=0, sync=None)
            yield cursor.dump()
        # Changes made while the crawl ran are caught by the next delta because the watermark
        # is the crawl's start (minus the overlap at query time), not the newest edit seen.
        cursor.since = {lib: str(full["started"]) for lib in libraries}
        cursor.full = None
        yield cursor.dump()

    def _search_pages(self, lib: str, *, edit_date_from: str | None, start: int
                      ) -> Iterator[tuple[list[dict[str, Any]], int] | DocumentFailure]:
        """I1 pages from ``start`` as (new rows, offset after the page). A page that brings
        no id not already seen ends the walk with a failure: a server that ignores
        ``offset`` would otherwise loop forever, and the crawl is then not complete."""
        offset = start
        seen: set[str] = set()
        while True:
            page = self.client.search_documents(lib, offset=offset, limit=self.page_size,
                                                edit_date_from=edit_date_from)
            if page.total is not None:
                self._totals[lib] = page.total
                self.total_hint = sum(self._totals.values())
            fresh = [r for r in page.rows if (as_text(pick(r, "id")) or "") not in seen]
            if page.rows and not fresh:
                yield DocumentFailure(SOURCE, None, f"library {lib}: paging stalled at offset "
                                      f"{offset} (the page repeats earlier ids)")
                return
            seen.update(as_text(pick(r, "id")) or "" for r in fresh)
            offset += len(page.rows)
            yield fresh, offset
            if len(page.rows) < self.page_size or (page.total is not None
                                                   and offset >= page.total):
                return

    def _full_library_search(self, lib: str, cursor: CrawlCursor) -> Iterator[CrawlItem]:
        full = cursor.full if cursor.full is not None else {}
        for page in self._search_pages(lib, edit_date_from=None,
                                       start=int(full.get("offset") or 0)):
            if isinstance(page, DocumentFailure):
                yield page
                return
            rows, offset = page
            yield from self._documents(lib, rows, trustees=None)
            full["offset"] = offset
            yield cursor.dump()

    def _full_library_sync(self, lib: str, cursor: CrawlCursor) -> Iterator[CrawlItem]:
        full = cursor.full if cursor.full is not None else {}
        allowed = self._trustees(lib, SYNC_ALLOWED)
        denied = self._trustees(lib, SYNC_DENIED)
        position: str | None = full.get("sync")
        restarts = 0
        while True:
            try:
                rows, next_position = self.client.sync_page(lib, SYNC_DOCUMENTS, position,
                                                            self.sync_page_size)
            except CursorExpiredError:
                if position is None or restarts >= 3:
                    raise
                # Restart this endpoint from the top. Documents already ingested come again
                # and are "unchanged"; nothing is skipped, so nothing is lost.
                restarts += 1
                self.sync_restarts.append(SYNC_DOCUMENTS)
                log.warning("imanage sync cursor expired; restarting the library crawl",
                            extra={"library": lib})
                position = None
                full["sync"] = None
                self._versions = {k: v for k, v in self._versions.items() if k[0] != lib.upper()}
                continue
            yield from self._documents(lib, rows, trustees=(allowed, denied))
            if not next_position or len(rows) < self.sync_page_size:
                return
            position = next_position
            full["sync"] = position
            yield cursor.dump()

    def _trustees(self, lib: str, endpoint: str) -> dict[tuple[str, int], list[dict[str, Any]]]:
        grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for row in self.client.sync_all(lib, endpoint, self.sync_page_size,
                                        on_restart=self.sync_restarts.append):
            key = _doc_key(pick(row, "document_id", "documentId", "doc_id"), lib)
            if key is not None:
                grouped.setdefault(key, []).append(row)
        return grouped

    # --- delta -----------------------------------------------------------------------------------

    def crawl_delta(self, cursor: str | None) -> Iterator[CrawlItem]:
        state = CrawlCursor.load(cursor)
        self._versions = {}
        for lib in self.libraries():
            since = parse_datetime(state.since.get(lib))
            edit_from = iso_utc(since - self.overlap) if since else None
            newest = since
            failed = False
            for page in self._search_pages(lib, edit_date_from=edit_from, start=0):
                if isinstance(page, DocumentFailure):
                    failed = True
                    yield page
                    break
                rows = page[0]
                for row in rows:
                    edited = parse_datetime(pick(row, "edit_date"))
                    if edited and (newest is None or edited > newest):
                        newest = edited
                for item in self._documents(lib, rows, trustees=None):
                    if isinstance(item, DocumentFailure) and not (item.gone or item.revoked):
                        failed = True
                    yield item
            # A document that failed to fetch keeps the old watermark, so the next delta
            # tries it again instead of stepping over it.
            if newest is not None and not failed:
                state.since[lib] = iso_utc(newest)
            yield state.dump()

    # --- documents -------------------------------------------------------------------------------

    @staticmethod
    def _is_document(row: Mapping[str, Any]) -> bool:
        kind = as_text(pick(row, "wstype", "type_of_object"))
        return kind is None or kind.strip().lower() in _DOCUMENT_TYPES

    def _latest_only(self, lib: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        best: dict[tuple[str, int], dict[str, Any]] = {}
        for row in rows:
            if not self._is_document(row):
                continue
            if pick(row, "is_latest") is False or pick(row, "latest") is False:
                continue
            key = _doc_key(pick(row, "id", "document_id"), lib) or _doc_key(
                pick(row, "document_number"), lib)
            if key is None:
                continue
            if key not in best or _version(row) > _version(best[key]):
                best[key] = row
        out = []
        for key, row in best.items():
            version = _version(row)
            previous = self._versions.get(key)
            if previous is not None and version <= previous:
                continue  # this crawl already delivered this version or a newer one
            self._versions[key] = version
            out.append(row)
        return out

    def _documents(
        self,
        lib: str,
        rows: list[dict[str, Any]],
        *,
        trustees: tuple[dict[tuple[str, int], list[dict[str, Any]]],
                        dict[tuple[str, int], list[dict[str, Any]]]] | None,
    ) -> Iterator[CrawlItem]:
        keep = self._latest_only(lib, rows)
        yield from self._map(lambda row: self._document(lib, row, trustees), keep)

    def _presence(self, lib: str, doc_id: str) -> Presence:
        try:
            self.client.document(lib, doc_id)
        except CredentialsError:
            raise  # our credentials, not this document
        except SourceHTTPError as exc:
            if exc.status in (404, 410):
                return "deleted"
            if exc.status in (401, 403):
                return "forbidden"
            raise
        return "present"

    def _verdict(self, lib: str, doc_id: str, external_id: str, what: str,
                 exc: SourceHTTPError) -> DocumentFailure | None:
        """What a refused sub-resource (security, download) says about the document.

        A 404 or 403 on a sub-resource is not proof about the document itself, so the profile
        decides: gone -> a 404 failure (delete), no access -> 403 (remove, fail closed).
        None means the document is there and only the sub-resource failed.
        """
        if exc.status not in (401, 403, 404, 410):
            return DocumentFailure(SOURCE, external_id, f"{what}: {exc}", exc.status)
        try:
            presence = self._presence(lib, doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as probe:
            return DocumentFailure(SOURCE, external_id, f"{what}: {exc}; profile: {probe}")
        if presence == "deleted":
            return DocumentFailure(SOURCE, external_id, f"{what}: document is gone", 404)
        if presence == "forbidden":
            return DocumentFailure(SOURCE, external_id, f"{what}: access revoked", 403)
        return None

    def _acl(
        self,
        lib: str,
        row: Mapping[str, Any],
        *,
        key: tuple[str, int],
        doc_id: str,
        external_id: str,
        trustees: tuple[dict[tuple[str, int], list[dict[str, Any]]],
                        dict[tuple[str, int], list[dict[str, Any]]]] | None,
    ) -> SourceAcl | DocumentFailure:
        implicit = [u for u in (_person(pick(row, "author"))[0],
                                _person(pick(row, "operator"))[0]) if u]
        if trustees is not None:
            allowed, denied = trustees
            return build_acl(
                library=lib, document_id=doc_id,
                default_security=pick(row, "default_security"),
                inherited_default=pick(row, "inherited_default_security"),
                entries=allowed.get(key, []), denied=denied.get(key, []),
                implicit_users=implicit, resolver=self.resolver,
            )
        try:
            security = self.client.security(lib, doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            failure = self._verdict(lib, doc_id, external_id, "security", exc)
            if failure is not None:
                return failure
            # The document is there but its permissions cannot be read: visible to nobody.
            return SourceAcl(default="private", resolvable=False,
                             note=f"security could not be read (HTTP {exc.status})")
        return build_acl(
            library=lib, document_id=doc_id,
            default_security=pick(security, "default_security") or pick(row, "default_security"),
            inherited_default=pick(security, "inherited_default_security"),
            entries=_acl_entries(security), implicit_users=implicit, resolver=self.resolver,
        )

    def _document(
        self,
        lib: str,
        row: dict[str, Any],
        trustees: tuple[dict[tuple[str, int], list[dict[str, Any]]],
                        dict[tuple[str, int], list[dict[str, Any]]]] | None,
    ) -> CrawlItem:
        key = _doc_key(pick(row, "id", "document_id"), lib) or _doc_key(
            pick(row, "document_number"), lib)
        if key is None:  # _latest_only filtered these; kept for type narrowing
            return DocumentFailure(SOURCE, None, "row without a document number")
        external_id = f"{key[0]}!{key[1]}"
        doc_id = as_text(pick(row, "id", "document_id")) or external_id
        acl = self._acl(lib, row, key=key, doc_id=doc_id, external_id=external_id,
                        trustees=trustees)
        if isinstance(acl, DocumentFailure):
            return acl
        try:
            download = self.client.download(lib, doc_id)
        except CredentialsError:
            raise
        except SourceHTTPError as exc:
            failure = self._verdict(lib, doc_id, external_id, "download", exc)
            if failure is not None:
                return failure
            if exc.status in (401, 403):
                # Readable profile, refused content (e.g. an encrypted HIPAA document): it
                # cannot be indexed, and keeping an old copy would outlive the refusal.
                return DocumentFailure(SOURCE, external_id,
                                       "download refused though the profile is readable", 403)
            return DocumentFailure(SOURCE, external_id,
                                   f"download returned HTTP {exc.status} for an existing document")
        author_id, author_name = _person(pick(row, "author"))
        fields = self._client_matter(lib, row)
        extension = as_text(pick(row, "extension"))
        checksum = as_text(pick(row, "checksum"))
        client_field, matter_field = self._fields_for(lib)
        metadata: dict[str, Any] = {
            "imanage_id": doc_id,
            "library": key[0],
            "document_number": key[1],
            "workspace_id": as_text(pick(row, "workspace_id")),
            "workspace_name": as_text(pick(row, "workspace_name")),
            "class": as_text(pick(row, "class")),
            "subclass": as_text(pick(row, "subclass")),
            "extension": extension,
            "size": pick(row, "size"),
            "author_id": author_id,
            "operator": _person(pick(row, "operator"))[0],
            "last_user": _person(pick(row, "last_user"))[0],
            "edit_profile_date": as_text(pick(row, "edit_profile_date")),
            "default_security": as_text(pick(row, "default_security")),
            "is_external": pick(row, "is_external"),
            "is_hipaa": pick(row, "is_hipaa"),
            "filename": download.filename,
            "client_description": as_text(pick(row, client_field + "_description")),
            "matter_description": as_text(pick(row, matter_field + "_description")),
            "acl_note": acl.note,
            **fields.origin,
        }
        return SourceDocument(
            source=SOURCE,
            external_id=external_id,
            title=as_text(pick(row, "name")),
            doc_type=as_text(pick(row, "class_description")) or as_text(pick(row, "class"))
            or as_text(pick(row, "type")),
            client_id=fields.client,
            matter_id=fields.matter,
            client_raw=fields.client_raw,
            matter_raw=fields.matter_raw,
            author=as_text(pick(row, "author_description")) or author_name or author_id,
            created_at=parse_datetime(pick(row, "create_date")),
            modified_at=parse_datetime(pick(row, "edit_date")),
            version=str(_version(row)),
            checksum=checksum or "sha256:" + hashlib.sha256(download.content).hexdigest(),
            source_url=as_text(pick(row, "document_url")) or as_text(pick(row, "iwl")),
            acl=acl,
            content=download.content,
            mime_type=guess_mime(download.filename, extension, download.content_type),
            metadata={k: v for k, v in metadata.items() if v is not None},
        )

    # --- client / matter --------------------------------------------------------------------

    def _workspace(self, lib: str, ws_id: str) -> dict[str, Any] | None:
        cache_key = (lib.upper(), ws_id)
        with self._workspaces_lock:
            if cache_key in self._workspaces:
                return self._workspaces[cache_key]
            # One fetch per workspace even when a page's documents are built in parallel.
            key_lock = self._workspace_locks.setdefault(cache_key, threading.Lock())
        with key_lock:
            with self._workspaces_lock:
                if cache_key in self._workspaces:
                    return self._workspaces[cache_key]
            try:
                profile: dict[str, Any] | None = self.client.workspace(lib, ws_id)
            except CredentialsError:
                raise
            except SourceHTTPError as exc:
                if exc.status not in (401, 403, 404, 410):
                    raise
                profile = None
            with self._workspaces_lock:
                self._workspaces[cache_key] = profile
            return profile

    def _client_matter(self, lib: str, row: Mapping[str, Any]) -> _Fields:
        """Document fields first, then the owning workspace for what is empty (§3.3).

        Raw values are kept as the source gave them; nothing is inferred. A workspace value
        fills a gap only when it agrees with what the document does carry, because matter
        numbers repeat across clients and a mixed pair would file the document under a matter
        of another client.
        """
        client_field, matter_field = self._fields_for(lib)

        def raw(holder: Mapping[str, Any], name: str) -> str | None:
            value = holder.get(name) if name in holder else None
            return as_text(value)

        client_raw, matter_raw = raw(row, client_field), raw(row, matter_field)
        client, matter = normalise_code(client_raw), normalise_code(matter_raw)
        origin = {"client_from": "document", "matter_from": "document"}
        ws_id = as_text(pick(row, "workspace_id"))
        if (not client or not matter) and ws_id and ws_id.strip():
            workspace = self._workspace(lib, ws_id.strip())
            if workspace is not None:
                ws_client_raw, ws_matter_raw = raw(workspace, client_field), raw(workspace,
                                                                                 matter_field)
                ws_client, ws_matter = normalise_code(ws_client_raw), normalise_code(ws_matter_raw)
                take_client = not client and bool(ws_client) and (not matter or ws_matter == matter)
                take_matter = not matter and bool(ws_matter) and (not client or ws_client == client)
                if take_client:
                    client, client_raw = ws_client, ws_client_raw
                    origin["client_from"] = "workspace"
                if take_matter:
                    matter, matter_raw = ws_matter, ws_matter_raw
                    origin["matter_from"] = "workspace"
        if client is None:
            origin.pop("client_from")
        if matter is None:
            origin.pop("matter_from")
        return _Fields(client, matter, client_raw, matter_raw, origin)
