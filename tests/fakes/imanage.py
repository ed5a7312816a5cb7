"""A local iManage Work REST v2 server speaking the shapes of docs/dms-apis.md §1.

Real HTTP on 127.0.0.1 (the shared plumbing is ``tests.fakes.dms``). It records every request (method,
path, query, body, the token presented and that token's age) so tests can prove that no write
endpoint was called and that tokens were renewed before they expired. Knobs for faults:
injected statuses with any headers (429 with each Retry-After variant, 503, ...), token
expiry on a shared fake clock, wrong credentials, Sync API cursors that expire, documents that
go to Trash (404/410) or lose access (403), a server that ignores ``offset``.

Tenant quirks, each one something docs/dms-apis.md allows (section in brackets):

* ``page_cap``: the server serves at most this many rows whatever ``limit`` asked (§1.2 I1
  gives a default limit of 100 and no maximum; servers cap).
* ``total_mode``: ``total_count`` "exact", "absent" (its location is [O], §1.2), "low" or
  "high" (a wrong total).
* ``on_search_page``: called after each I1 page is served, e.g. to add a document mid-crawl
  (documents are listed by number, so a low number shifts every later offset).
* ``strict_ids`` (default on): documents are addressed only as ``LIB!number.version``
  (§1.2 ``{docId}``, §1.3 ``id``); ``LIB!number`` is a container id form and answers 404.
* ``members_page``: .../groups/{id}/members answers its first N rows and a ``total_count``
  (its paging is [U]).
* ``groups_endpoint``: GET .../groups is in no published endpoint list, and
  .../groups/{id}/members is [U]; False makes both answer 404.
* ``nest(outer, inner, typed=...)``: a group held by another group. §1 does not rule nesting
  out and gives member rows (I16, ``groups/members/search``) no documented keys beyond
  ``group_id``; ACL entries carry ``type`` ∈ {user, group} (§1.6). Typed: the row says
  ``"type": "group"`` (``member_id`` on the Sync rows); untyped: the row is a user's row
  holding the inner group's id.
* ``security_endpoint``: I7's path is [U]; False makes it answer 404.
* ``extra_fields``: unknown fields added to every profile; ``drop_fields``: optional profile
  fields left out.
* ``document_number`` filter on I1 ([O] filter name, §1.2).
* ``empty_cursor_pages``: the Sync crawl answers this many pages of ``{"data": [], "cursor"}``
  before each page with rows (§1's shape promises a cursor while more follows, never that a
  page holds rows).
* Containers on the Sync API (connectors.md §1.4, all [O] S4): ``add_folder`` and
  ``add_workspace`` build the tree that ``/sync/folders/crawl`` and ``/sync/workspaces/crawl``
  list (rows ``id``, ``name``, ``parent_id``, ``workspace_id``, ``default_security``);
  ``file`` puts a document in containers (``/sync/documents/parents/search``: rows
  ``document_number``, ``parent_id``); ``deny_container`` adds a row to
  ``/sync/containers/security/denied-trustees/search``, keyed by ``container_key``
  (``"container_id"``, or ``"folder_id"`` as some rows are). Paged by cursor like every Sync
  endpoint. ``absent_sync``: Sync kinds (``"container_denied"``, ``"parents"``,
  ``"folders"``, ``"workspaces"``) that answer 404, a tenant without them. Nothing here
  applies a container's denies to a document's own lists: connectors.md §3.1 says
  Security Policy Manager exclusions are not in the document ACL.

    fake = FakeIManage()
    fake.add_document("ACTIVE", 1042, custom1="10025", custom2="0007", ...)
    with fake.running() as url:
        settings = make_settings(imanage_url=url, **fake.settings())
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.fakes.dms import (
    FakeClock,
    FakeDms,
    Recorded,
    capped,
    error,
    file_response,
    position_offset,
    position_token,
    reported_total,
)

CID = 1234


@dataclass
class Doc:
    library: str
    number: int
    version: int
    profile: dict[str, Any]
    content: bytes
    filename: str | None
    security: dict[str, Any]
    denied: list[dict[str, Any]] = field(default_factory=list)  # Sync API denied trustees
    parents: list[str] = field(default_factory=list)  # containers it is filed in

    @property
    def id(self) -> str:
        return f"{self.library}!{self.number}.{self.version}"


def _parse(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class FakeIManage(FakeDms):
    token_path = "/auth/oauth2/token"

    def __init__(
        self,
        *,
        clock: FakeClock | None = None,
        token_ttl: int = 1800,
        refresh_tokens: bool = True,
        sync_api: bool = False,
        advance_per_request: float = 0.0,
        libraries: tuple[str, ...] = ("ACTIVE",),
    ) -> None:
        super().__init__(clock=clock, token_ttl=token_ttl, advance_per_request=advance_per_request)
        self.refresh_tokens = refresh_tokens
        self.sync_api = sync_api
        self.username = "svc_ingest"
        self.password = "pw-Secr3t-imanage"
        self.client_id = "ewall-crawler"
        self.client_secret = "cs-Secr3t-imanage"
        self.libraries = list(libraries)
        self.docs: dict[str, Doc] = {}
        self.gone: dict[tuple[str, int], int] = {}  # trashed -> status (404 or 410)
        self.revoked: set[tuple[str, int]] = set()
        self.workspaces: dict[tuple[str, str], dict[str, Any]] = {}
        self.folders: dict[tuple[str, str], dict[str, Any]] = {}
        self.container_denied: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.container_key = "container_id"
        self.absent_sync: set[str] = set()
        self.groups: dict[str, dict[str, Any]] = {}
        self.security_missing: set[tuple[str, int]] = set()  # /security 404 for these
        self.ignore_offset = False
        self.page_cap: int | None = None
        self.total_mode = "exact"
        self.on_search_page: Any = None
        self.strict_ids = True
        self.groups_endpoint = True
        self.members_page: int | None = None  # .../members paging is [U]: first N and a total
        self.security_endpoint = True
        self.extra_fields: dict[str, Any] = {}
        self.drop_fields: set[str] = set()
        self.versions_in_search = False
        self.cursor_generation = 0
        self.cursor_expiry_status = 410
        self.empty_cursor_pages = 0
        # a hook after each Sync page (kind, offset), libraries left out
        # of GET /libraries, and libraries whose every per-library request answers a status
        self.on_sync_page: Any = None
        self.unlisted_libraries: set[str] = set()
        self.closed_libraries: dict[str, int] = {}
        self._empties_served: dict[tuple[str, str, int], int] = {}
        self.refresh: dict[str, str] = {}
        self.grants: list[str] = []
        self.app = self._build()

    # --- configuration -----------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        return {
            "imanage_username": self.username,
            "imanage_password": self.password,
            "imanage_client_id": self.client_id,
            "imanage_client_secret": self.client_secret,
        }

    def add_document(
        self,
        library: str,
        number: int,
        *,
        version: int = 1,
        content: bytes | None = None,
        filename: str | None = None,
        security: dict[str, Any] | None = None,
        denied: list[dict[str, Any]] | None = None,
        **profile: Any,
    ) -> str:
        base: dict[str, Any] = {
            "database": library,
            "document_number": number,
            "version": version,
            "name": f"Document {number}",
            "extension": "txt",
            "author": "JSMITH",
            "operator": "JSMITH",
            "default_security": "public",
            "edit_date": "2025-01-08T16:40:12Z",
            "create_date": "2024-11-02T09:14:00Z",
            "wstype": "document",
            "iwl": f"iwl:dms=fake&&lib={library}&&num={number}&&ver={version}",
        }
        base.update(profile)
        doc = Doc(
            library=library,
            number=number,
            version=version,
            profile=base,
            content=content if content is not None else f"Inhoud van document {number}".encode(),
            filename=filename if filename is not None else f"doc{number}.txt",
            security=security
            if security is not None
            else {"default_security": base["default_security"], "acl": []},
            denied=denied or [],
        )
        doc.profile["id"] = doc.id
        self.docs[doc.id] = doc
        return doc.id

    def add_workspace(self, library: str, ws_id: str, **profile: Any) -> None:
        self.workspaces[(library, ws_id)] = {"id": ws_id, "database": library, **profile}

    def add_folder(
        self, library: str, folder_id: str, *, parent_id: str | None,
        workspace_id: str | None = None, **profile: Any,
    ) -> None:
        self.folders[(library, folder_id)] = {
            "id": folder_id, "name": f"Folder {folder_id}", "parent_id": parent_id,
            "workspace_id": workspace_id, "default_security": "inherit", **profile,
        }

    def file(self, doc_id: str, *container_ids: str) -> None:
        """File a document (every version of its number) in containers."""
        doc = self.docs[doc_id]
        for other in self.docs.values():
            if (other.library, other.number) == (doc.library, doc.number):
                other.parents.extend(container_ids)

    def deny_container(
        self, library: str, container_id: str, trustee_id: str, trustee_type: str = "user"
    ) -> None:
        self.container_denied.setdefault((library, container_id), []).append(
            {"trustee_id": trustee_id, "trustee_type": trustee_type})

    def add_group(self, group_id: str, members: list[str], *, enabled: bool = True) -> None:
        self.groups[group_id] = {"id": group_id, "enabled": enabled, "members": members,
                                 "nested": []}  # fmt: skip

    def nest(self, outer: str, inner: str, *, typed: bool = True) -> None:
        """``inner`` becomes a member of ``outer`` (see the module docstring)."""
        self.groups[outer]["nested"].append((inner, typed))

    def trash(self, doc_id: str, status: int = 404) -> None:
        doc = self.docs[doc_id]
        self.gone[(doc.library, doc.number)] = status

    def revoke(self, doc_id: str) -> None:
        doc = self.docs[doc_id]
        self.revoked.add((doc.library, doc.number))

    def expire_cursors(self) -> None:
        self.cursor_generation += 1

    # --- what happened -----------------------------------------------------------------------

    def writes(self) -> list[Recorded]:
        """Every request that is not a read, other than the token grant and Sync crawl/search
        (documented read-only POSTs)."""
        allowed = re.compile(r"^/auth/oauth2/token$|/sync/.*(crawl|search)$")
        return [r for r in self.requests if r.method != "GET" and not allowed.search(r.path)]

    # --- helpers -----------------------------------------------------------------------------

    def _latest(self, library: str, number: int) -> Doc | None:
        versions = [d for d in self.docs.values() if d.library == library and d.number == number]
        return max(versions, key=lambda d: d.version) if versions else None

    def _resolve(self, library: str, doc_id: str) -> Doc | JSONResponse:
        match = re.match(r"^([^!]+)!(\d+)(?:\.(\d+))?$", doc_id)
        if not match or match.group(1) != library:
            return error(404)
        if library in self.closed_libraries:
            return error(self.closed_libraries[library])
        number = int(match.group(2))
        if self.strict_ids and not match.group(3):
            return error(404)  # a container id
        if (library, number) in self.gone:
            return error(self.gone[(library, number)])
        if (library, number) in self.revoked:
            return error(403, "forbidden")
        doc = self.docs.get(doc_id) if match.group(3) else self._latest(library, number)
        if doc is None:
            return error(404)
        return doc

    def _shown(self, profile: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in profile.items() if k not in self.drop_fields}
        out.update(self.extra_fields)
        return out

    def _visible(self, library: str) -> list[Doc]:
        out = [
            d
            for d in self.docs.values()
            if d.library == library
            and (d.library, d.number) not in self.gone
            and (d.library, d.number) not in self.revoked
        ]
        if not self.versions_in_search:
            latest: dict[Any, Any] = {}
            for d in out:
                if d.number not in latest or d.version > latest[d.number].version:
                    latest[d.number] = d
            out = list(latest.values())
        return sorted(out, key=lambda d: (d.number, d.version))

    def _cursor(self, offset: int) -> str:
        return position_token("c", self.cursor_generation, offset)

    def _offset(self, cursor: str | None) -> int | None:
        return position_offset("c", self.cursor_generation, cursor) if cursor else 0

    def _request_token(self, request: Request) -> str | None:
        token = request.headers.get("x-auth-token")
        auth = request.headers.get("authorization", "")
        if not token and auth.lower().startswith("bearer "):
            token = auth[7:]
        return token

    def _request_body(self, raw: bytes, request: Request) -> Any:
        if request.headers.get("content-type", "").startswith("application/json"):
            return json.loads(raw)
        return dict(parse_qsl(raw.decode()))

    # --- the app -----------------------------------------------------------------------------

    def _build(self) -> FastAPI:
        app = self._app()
        fake = self
        lib_prefix = f"/work/api/v2/customers/{CID}/libraries/{{lib}}"

        @app.post("/auth/oauth2/token")
        async def token(request: Request) -> JSONResponse:
            form = dict((await request.form()).items())
            grant = form.get("grant_type")
            ok_client = (
                form.get("client_id") == fake.client_id
                and form.get("client_secret") == fake.client_secret
            )
            if grant == "password":
                if (
                    not ok_client
                    or form.get("username") != fake.username
                    or form.get("password") != fake.password
                ):
                    return JSONResponse(
                        {"error": "invalid_grant", "error_description": "bad credentials"},
                        status_code=401,
                    )
            elif grant == "refresh_token":
                if not ok_client or str(form.get("refresh_token")) not in fake.refresh:
                    return JSONResponse({"error": "invalid_grant"}, status_code=400)
            else:
                return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
            access, seq = fake._mint("tok-{}-imanage")
            fake.grants.append(str(grant))
            out: dict[str, Any] = {
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": fake.token_ttl,
            }
            if fake.refresh_tokens:
                ref = f"ref-{seq}-imanage"
                fake.refresh[ref] = access
                out["refresh_token"] = ref
            return JSONResponse(out)

        @app.get("/api")
        def api() -> dict[str, Any]:
            return {
                "data": {
                    "user": {
                        "id": fake.username.upper(),
                        "customer_id": CID,
                        "email": "svc@firm.example",
                        "user_type": "system",
                    },
                    "work": {"preferred_library": fake.libraries[0]},
                }
            }

        @app.get(f"/work/api/v2/customers/{CID}/libraries")
        def libraries() -> dict[str, Any]:
            return {
                "data": [
                    {"id": lib, "display_name": lib, "type": "worksite", "is_hidden": False}
                    for lib in fake.libraries
                    if lib not in fake.unlisted_libraries
                ]
                + [{"id": "HIDDEN", "is_hidden": True}]
            }

        @app.get(f"/work/api/v2/customers/{CID}/features")
        def features() -> dict[str, Any]:
            return {"data": {"data_sync_import": fake.sync_api}}

        @app.get(lib_prefix + "/documents")
        def search(lib: str, request: Request) -> Any:
            if lib in fake.closed_libraries:
                return error(fake.closed_libraries[lib])
            q = request.query_params
            offset = 0 if fake.ignore_offset else int(q.get("offset", "0"))
            limit = capped(int(q.get("limit", "100")), fake.page_cap)
            since = _parse(q.get("edit_date_from"))
            number = q.get("document_number")
            docs = [
                d
                for d in fake._visible(lib)
                if (since is None or (_parse(d.profile.get("edit_date")) or since) >= since)
                and (number is None or str(d.number) == number)
            ]
            page = [fake._shown(d.profile) for d in docs[offset : offset + limit]]
            out: dict[str, Any] = {"data": {"results": page}}
            if q.get("total") == "true" and fake.total_mode != "absent":
                out["total_count"] = reported_total(len(docs), fake.total_mode)
            if fake.on_search_page is not None:
                fake.on_search_page(fake)
            return out

        @app.get(lib_prefix + "/documents/{doc_id}")
        def profile(lib: str, doc_id: str) -> Any:
            doc = fake._resolve(lib, doc_id)
            return doc if isinstance(doc, JSONResponse) else {"data": fake._shown(doc.profile)}

        @app.get(lib_prefix + "/documents/{doc_id}/download")
        def download(lib: str, doc_id: str) -> Response:
            doc = fake._resolve(lib, doc_id)
            if isinstance(doc, JSONResponse):
                return doc
            return file_response(doc.content, doc.filename)

        @app.get(lib_prefix + "/documents/{doc_id}/security")
        def security(lib: str, doc_id: str) -> Any:
            doc = fake._resolve(lib, doc_id)
            if isinstance(doc, JSONResponse):
                return doc
            if not fake.security_endpoint or (doc.library, doc.number) in fake.security_missing:
                return error(404)
            # Security Policy Manager denials are not in the ACL; the only REST hint is
            # has_restricted_member on a group that holds a denied user (docs/dms-apis.md §1.4).
            restricted = {str(d.get("trustee_id", "")).upper() for d in doc.denied}
            acl = [
                {**e, "has_restricted_member": True}
                if e.get("type") == "group"
                and restricted & set(fake.groups.get(e["id"], {}).get("members", []))
                else e
                for e in doc.security.get("acl", [])
            ]
            return {"data": {**doc.security, "acl": acl}}

        @app.get(lib_prefix + "/workspaces/{ws_id}")
        def workspace(lib: str, ws_id: str) -> Any:
            found = fake.workspaces.get((lib, ws_id))
            if found is None:
                return error(404)
            return {"data": found}

        @app.get(lib_prefix + "/groups")
        def groups(lib: str) -> Any:
            if not fake.groups_endpoint:
                return error(404)
            return {
                "data": [{"id": g["id"], "enabled": g["enabled"]} for g in fake.groups.values()]
            }

        @app.get(lib_prefix + "/groups/{group_id}/members")
        def members(lib: str, group_id: str) -> Any:
            group = fake.groups.get(group_id)
            if group is None or not fake.groups_endpoint:
                return error(404)
            rows = [{"id": m} for m in group["members"]] + [
                {"id": g, "type": "group"} if typed else {"id": g}
                for g, typed in group["nested"]
            ]
            if fake.members_page is not None and len(rows) > fake.members_page:
                return {"data": rows[: fake.members_page], "total_count": len(rows)}
            return {"data": rows}

        def container_rows(lib: str, kind: str) -> list[dict[str, Any]]:
            if kind == "container_denied":
                return [{fake.container_key: cid, **row}
                        for (owner, cid), rows in sorted(fake.container_denied.items())
                        if owner == lib for row in rows]
            if kind == "parents":
                return [{"document_number": d.number, "parent_id": p}
                        for d in fake._visible(lib) for p in d.parents]
            if kind == "folders":
                return [dict(f) for (owner, _), f in sorted(fake.folders.items()) if owner == lib]
            fields = ("id", "name", "parent_id", "workspace_id", "default_security")
            return [{k: w.get(k, w["id"] if k == "workspace_id" else None) for k in fields}
                    for (owner, _), w in sorted(fake.workspaces.items()) if owner == lib]

        def sync_rows(lib: str, kind: str) -> list[dict[str, Any]]:
            if kind in ("container_denied", "parents", "folders", "workspaces"):
                return container_rows(lib, kind)
            docs = fake._visible(lib)
            if kind == "documents":
                rows = []
                for d in docs:
                    row = fake._shown(d.profile)
                    author = row.get("author")
                    if isinstance(author, str):  # crawl rows carry author as an object (S4)
                        row["author"] = {"id": author}
                    rows.append(row)
                return rows
            if kind == "groups":
                return [
                    {"group_id": g["id"], "user_id": m}
                    for g in fake.groups.values()
                    if g["enabled"]
                    for m in g["members"]
                ] + [
                    {"group_id": g["id"], "member_id": inner, "type": "group"}
                    if typed else {"group_id": g["id"], "user_id": inner}
                    for g in fake.groups.values()
                    if g["enabled"]
                    for inner, typed in g["nested"]
                ]  # fmt: skip
            rows = []
            for d in docs:
                for entry in d.security.get("acl", []):
                    denied = entry.get("access_level") == "no_access"
                    if denied == (kind == "denied"):
                        rows.append(
                            {
                                "document_id": d.id,
                                "trustee_id": entry["id"],
                                "trustee_type": entry.get("type", "user"),
                                "access_level": entry.get("access_level"),
                                **(
                                    {"has_restricted_member": True}
                                    if entry.get("has_restricted_member")
                                    else {}
                                ),
                            }
                        )
                if kind == "denied":
                    rows.extend({"document_id": d.id, **x} for x in d.denied)
            return rows

        async def sync_page(lib: str, kind: str, request: Request) -> Any:
            body = await request.json()
            if lib in fake.closed_libraries:
                return error(fake.closed_libraries[lib])
            if kind in fake.absent_sync:
                return error(404)
            limit = capped(int(body.get("limit", 1000)), fake.page_cap)
            offset = fake._offset(body.get("cursor"))
            if offset is None:
                return error(fake.cursor_expiry_status, "cursor expired")
            rows = sync_rows(lib, kind)
            served = fake._empties_served.get((lib, kind, offset), 0)
            if kind == "documents" and served < fake.empty_cursor_pages and offset < len(rows):
                fake._empties_served[(lib, kind, offset)] = served + 1
                return {"data": [], "cursor": fake._cursor(offset)}
            page = rows[offset : offset + limit]
            out: dict[str, Any] = {"data": page}
            if offset + limit < len(rows):
                out["cursor"] = fake._cursor(offset + limit)
            if fake.on_sync_page is not None:
                fake.on_sync_page(fake, kind, offset)
            return out

        def sync_route(kind: str) -> Any:
            async def route(lib: str, request: Request) -> Any:
                return await sync_page(lib, kind, request)

            return route

        for path, kind in (
            ("documents/crawl", "documents"),
            ("documents/security/allowed-trustees/search", "allowed"),
            ("documents/security/denied-trustees/search", "denied"),
            ("groups/members/search", "groups"),
            ("containers/security/denied-trustees/search", "container_denied"),
            ("documents/parents/search", "parents"),
            ("folders/crawl", "folders"),
            ("workspaces/crawl", "workspaces"),
        ):
            app.add_api_route(f"{lib_prefix}/sync/{path}", sync_route(kind), methods=["POST"])

        # Writes that exist on a real tenant. The connector must never reach them; if it did,
        # they "work" here so that only the request log can tell.
        @app.api_route(lib_prefix + "/documents/{doc_id}", methods=["PUT", "PATCH", "DELETE"])
        def write_document(lib: str, doc_id: str) -> dict[str, Any]:
            return {"data": {"id": doc_id}}

        @app.post(lib_prefix + "/documents/{doc_id}/security")
        def write_security(lib: str, doc_id: str) -> dict[str, Any]:
            return {"data": {}}

        return app


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
