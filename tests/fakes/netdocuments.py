"""A local NetDocuments REST server speaking the shapes of docs/dms-apis.md §2.

Real HTTP on 127.0.0.1. Records every request so tests can prove that neither a write nor the
"get or create" workspace endpoint (N14) was ever called. Knobs: v2 search in shape A
(``Results``/``TotalFound``/``DocId``/``Attributes``) or shape B (``standardList``/
``standardAttributes``); paging by skiptoken (under any of its key names, or as a next link)
or by skip only; a server that repeats the first page; ``top`` above 500 rejected with 400;
``expires_in`` as a string or a number; documents deleted (404/410) or revoked (403);
profile-based security rows on the matter lookup table; injected faults (429, 503, ...).

Tenant quirks, each one something docs/dms-apis.md allows (section in brackets):

* ``top_cap`` / ``lookup_top_cap``: the server serves fewer rows than ``top``/``$top`` asked
  (§2.2: 500 is the documented maximum, not a promise; a third party claims other sizes).
* ``total_mode``: ``TotalFound`` "exact", "absent" (shape B never has it), "low" or "high".
* ``on_search_page``: called after each search page, e.g. to add a document mid-crawl.
* ``move(doc, cabinet)``: a document moved to another cabinet (§2.4: outside the crawl scope
  it looks like a delete); ``info_locations`` makes /info say where a document is filed
  (not documented for N15, so off by default).
* ``extra_fields``: unknown fields on every search row.
* ``acl`` read endpoint (N25) is [U]: ``acl_missing`` makes it 404 per document.
* ``nest(outer, inner)``: a group held by another group. Nothing in §2 rules nesting out, and
  a members row (N22) is ``{id, displayName}``, no kind: a nested group shows only as its
  ``UG-`` id (§2.2). ``add_group(..., listed=False)``: a group that the cabinet's group
  listing (N21) does not name (a repository group, N23) but whose members N22 serves. The
  members of a group the repository does not hold answer 404.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

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

CABINET = "NG-AB12CD34"
REPOSITORY = "CA-XY98ZW76"


@dataclass
class NDoc:
    id: str
    cabinet: str
    name: str
    extension: str
    modified: str
    created: str = "2024-12-01T10:00:00Z"
    created_by: str = "Jane Smith"
    custom: dict[int, str] = field(default_factory=dict)
    content: bytes = b""
    filename: str | None = None
    acl: list[dict[str, Any]] = field(default_factory=list)
    official_version: int = 1


class FakeNetDocuments(FakeDms):
    token_path = "/v1/OAuth"

    def __init__(
        self,
        *,
        clock: FakeClock | None = None,
        token_ttl: int = 3600,
        expires_as_string: bool = True,
        shape: str = "A",
        paging: str = "skiptoken",
        token_key: str = "skiptoken",  # noqa: S107 - a JSON key name, not a secret
        advance_per_request: float = 0.0,
    ) -> None:
        super().__init__(clock=clock, token_ttl=token_ttl, advance_per_request=advance_per_request)
        self.expires_as_string = expires_as_string
        self.shape = shape  # "A" or "B"
        # False: search rows carry no custom attributes (a tenant whose search ignores the
        # select token, which is [O]); /info still has them
        self.search_custom = True
        self.paging = paging  # "skiptoken" | "link" | "skip"
        self.token_key = token_key  # skiptoken | SkipToken | next (for paging="skiptoken")
        self.client_id = "ewall-nd"
        self.client_secret = "nd-Secr3t-value"
        self.repository_id = REPOSITORY
        self.cabinets: list[dict[str, Any]] = [
            {
                "id": CABINET,
                "name": "Litigation",
                "repositoryId": REPOSITORY,
                "repositoryName": "Firm Repository",
                "wsAttrNum": 2,
                "wsOrgAttrNum": 1,
                "isCollaborationSpacesEnabled": "false",
            }
        ]
        self.docs: dict[str, NDoc] = {}
        self.gone: dict[str, int] = {}
        self.revoked: set[str] = set()
        self.acl_missing: set[str] = set()
        self.lookup: dict[int, list[dict[str, Any]]] = {}
        self.groups: dict[str, list[dict[str, Any]]] = {}
        self.members: dict[str, list[dict[str, Any]]] = {}
        self.repeat_pages = False
        # Quirks, each one docs/dms-apis.md allows (see the module docstring).
        self.top_cap: int | None = None
        self.lookup_top_cap: int | None = None
        self.total_mode = "exact"  # exact | absent | low | high
        self.info_locations = False
        self.on_search_page: Any = None
        self.extra_fields: dict[str, Any] = {}
        self.honour_orderby = True
        # Checker extensions (each one the docs allow):
        # lookup_fault[(attr, skip)]: an int -> that HTTP status; anything else -> that body
        # (a page answered in another shape); on_lookup_page(fake, attr, skip) after a page
        self.lookup_fault: dict[tuple[int, int], Any] = {}
        self.on_lookup_page: Any = None
        self.groups_status: int | None = None  # /v2/cabinet/{cab}/groups answers this status
        # search_fault[cabinet]: an int -> that status; "repeat" -> every page is the first
        self.search_fault: dict[str, Any] = {}
        self.download_fault: dict[str, int] = {}  # document id -> status of its download
        self.acl_fault: dict[str, int] = {}  # document id -> status of its access list
        self.on_acl: Any = None  # on_acl(fake, doc_id) after an access list was served
        # Deleted Items (S9: search excludes them; /info carries a deleted flag, [U])
        self.deleted_items: set[str] = set()
        # the search index lags /info (S9: metadata is indexed "quickly", not at once): a
        # snapshot of the document as the index still has it (listed even when deleted)
        self.search_lag: dict[str, NDoc] = {}
        self.token_generation = 0
        self.grants = 0
        self.app = self._build()

    # --- configuration -----------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        return {
            "netdocuments_client_id": self.client_id,
            "netdocuments_client_secret": self.client_secret,
            "netdocuments_repository_id": self.repository_id,
        }

    def add_document(
        self,
        doc_id: str,
        *,
        cabinet: str = CABINET,
        name: str | None = None,
        extension: str = "docx",
        modified: str = "2025-01-08T16:40:12Z",
        client: str | None = None,
        matter: str | None = None,
        custom: dict[int, str] | None = None,
        content: bytes | None = None,
        filename: str | None = None,
        acl: list[dict[str, Any]] | None = None,
        **extra: Any,
    ) -> NDoc:
        attrs = dict(custom or {})
        if client is not None:
            attrs[1001] = client
        if matter is not None:
            attrs[1002] = matter
        doc = NDoc(
            id=doc_id,
            cabinet=cabinet,
            name=name or f"Document {doc_id}",
            extension=extension,
            modified=modified,
            custom=attrs,
            content=content if content is not None else f"Inhoud {doc_id}".encode(),
            filename=filename if filename is not None else f"{doc_id}.{extension}",
            acl=acl if acl is not None else [{"principal": "UG-LIT", "rights": "VES"}],
            **extra,
        )
        self.docs[doc_id] = doc
        return doc

    def add_group(
        self,
        group_id: str,
        name: str,
        members: list[dict[str, Any]],
        cabinet: str = CABINET,
        *,
        listed: bool = True,
    ) -> None:
        if listed:
            self.groups.setdefault(cabinet, []).append(
                {"Id": group_id, "Name": name, "External": False, "Hidden": False}
            )
        self.members[group_id] = members

    def nest(self, outer: str, inner: str, name: str | None = None) -> None:
        """``inner`` becomes a member of ``outer``, as N22 shows any member: id and name."""
        self.members[outer].append({"id": inner, "displayName": name or inner})

    def move(self, doc_id: str, cabinet: str) -> None:
        """Move a document to another cabinet (e.g. a restricted archive)."""
        if not any(c["id"] == cabinet for c in self.cabinets):
            self.cabinets.append({**self.cabinets[0], "id": cabinet, "name": cabinet})
        self.docs[doc_id].cabinet = cabinet

    def expire_skiptokens(self) -> None:
        self.token_generation += 1

    def basic(self, secret: str | None = None) -> str:
        pair = f"{self.client_id}|{self.repository_id}:{secret or self.client_secret}"
        return base64.b64encode(pair.encode()).decode()

    # --- what happened -----------------------------------------------------------------------

    def writes(self) -> list[Recorded]:
        """Non-GET requests other than the token grant, and N14 (a GET that creates)."""
        return [
            r
            for r in self.requests
            if (r.method != "GET" and r.path != "/v1/OAuth") or re.match(r"^/v1/Workspace/", r.path)
        ]

    # --- helpers -----------------------------------------------------------------------------

    def _search_row(self, doc: NDoc) -> dict[str, Any]:
        if self.shape == "A":
            return {
                "DocId": doc.id,
                "Attributes": {
                    "Name": doc.name,
                    "Ext": doc.extension,
                    "Created": doc.created,
                    "CreatedBy": doc.created_by,
                    "Modified": doc.modified,
                },
                "Locations": {
                    "Url": f"https://vault.example/neWeb2/goid.aspx?id={doc.id}",
                    "Cabinets": [doc.cabinet],
                },
                **({"CustomAttributes": [
                    {"Id": k, "Value": v, "Description": f"d{v}"} for k, v in doc.custom.items()
                ]} if self.search_custom else {}),
            }
        return {
            "standardAttributes": self._standard(doc),
            **({"customAttributes": [{"id": k, "value": v} for k, v in doc.custom.items()]}
               if self.search_custom else {}),
        }

    @staticmethod
    def _standard(doc: NDoc) -> dict[str, Any]:
        """The standard attributes shape B (and /info) names in camelCase."""
        return {
            "id": doc.id,
            "envId": f":Q12:{doc.id}.nev",
            "name": doc.name,
            "extension": doc.extension,
            "created": doc.created,
            "createdBy": doc.created_by,
            "modified": doc.modified,
        }

    def _status(self, doc_id: str) -> JSONResponse | NDoc:
        if doc_id in self.gone:
            return error(self.gone[doc_id])
        if doc_id in self.revoked:
            return error(403, "forbidden")
        doc = self.docs.get(doc_id)
        if doc is None:
            return error(404)
        return doc

    def _request_token(self, request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def _request_body(self, raw: bytes, request: Request) -> Any:
        return dict(parse_qsl(raw.decode()))

    # --- the app -----------------------------------------------------------------------------

    def _build(self) -> FastAPI:
        app = self._app()
        fake = self

        @app.post("/v1/OAuth")
        async def oauth(request: Request) -> JSONResponse:
            form = dict((await request.form()).items())
            if request.headers.get("authorization") != f"Basic {fake.basic()}":
                return JSONResponse(
                    {"error": "invalid_grant", "error_description": "client authentication failed"},
                    status_code=401,
                )
            if form.get("grant_type") != "client_credentials":
                return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
            access, _ = fake._mint("nd-tok-{}-value")
            fake.grants += 1
            ttl: Any = str(fake.token_ttl) if fake.expires_as_string else fake.token_ttl
            return JSONResponse({"access_token": access, "token_type": "bearer", "expires_in": ttl})

        @app.get("/v1/User/info")
        def user_info() -> dict[str, Any]:
            return {"id": "SVC", "displayName": "Ingest", "email": "svc@firm.example"}

        @app.get("/v1/User/cabinets")
        def cabinets() -> list[dict[str, Any]]:
            return fake.cabinets

        @app.get("/v2/Search")
        def search(request: Request) -> Any:
            q = request.query_params
            top = int(q.get("top", "100"))
            if top > 500:
                return error(400, "top must be between 1 and 500")
            top = capped(top, fake.top_cap)
            cabinets = set((q.get("cabinets") or "").split(","))
            faults = [fake.search_fault[c] for c in cabinets if c in fake.search_fault]
            if any(isinstance(f, int) for f in faults):
                return error(next(f for f in faults if isinstance(f, int)), "search failed")
            docs = [
                fake.search_lag.get(d.id, d)
                for d in fake.docs.values()
                if (d.id in fake.search_lag and fake.search_lag[d.id].cabinet in cabinets)
                or (d.cabinet in cabinets and d.id not in fake.gone and d.id not in fake.revoked
                    and d.id not in fake.deleted_items)
            ]
            orderby = q.get("orderby") or ""
            if fake.honour_orderby and (
                orderby.startswith("7|desc") or orderby.lower().startswith("lastmod")
            ):
                docs.sort(key=lambda d: (d.modified, d.id), reverse=True)
            else:
                docs.sort(key=lambda d: d.id)
            offset = int(q.get("skip", "0"))
            token = q.get("skiptoken")
            if token:
                position = position_offset("t", fake.token_generation, token)
                if position is None:
                    return error(400, "skiptoken expired")
                offset = position
            if fake.repeat_pages or "repeat" in faults:
                offset = 0
            page = docs[offset : offset + top]
            rows = [{**fake._search_row(d), **fake.extra_fields} for d in page]
            out: dict[str, Any] = (
                {"TotalFound": reported_total(len(docs), fake.total_mode), "Results": rows}
                if fake.shape == "A"
                else {"standardList": rows}
            )
            if fake.total_mode == "absent":
                out.pop("TotalFound", None)
            if fake.on_search_page is not None:
                fake.on_search_page(fake)
            if offset + top < len(docs) and fake.paging != "skip":
                next_token = position_token("t", fake.token_generation, offset + top)
                if fake.paging == "link":
                    params = {k: v for k, v in q.items() if k not in ("skip", "skiptoken")}
                    params["skiptoken"] = next_token
                    out["@odata.nextLink"] = f"{fake.url}/v2/Search?{urlencode(params)}"
                else:
                    out[fake.token_key] = next_token
            return out

        @app.get("/v1/Document/{doc_id}/info")
        def info(doc_id: str) -> Any:
            doc = fake._status(doc_id)
            if isinstance(doc, JSONResponse):
                return doc
            return {
                "standardAttributes": {
                    **fake._standard(doc),
                    **({"deleted": True} if doc_id in fake.deleted_items else {}),
                    "size": len(doc.content),
                    "modifiedBy": "Amir Khan",
                    "officialVer": doc.official_version,
                    "latestVersionNumber": doc.official_version,
                },
                "customAttributes": [
                    {"id": k, "value": v, "description": f"d{v}"} for k, v in doc.custom.items()
                ],
                # Where it is filed: not documented for /info (N15 lists no cabinet); S3's
                # search rows carry Locations.Cabinets, so a tenant may answer it here too.
                **({"Locations": {"Cabinets": [doc.cabinet]}} if fake.info_locations else {}),
            }

        @app.get("/v1/Document/{doc_id}/acl")
        def acl(doc_id: str) -> Any:
            doc = fake._status(doc_id)
            if isinstance(doc, JSONResponse):
                return doc
            if doc_id in fake.acl_missing:
                return error(404)
            if doc_id in fake.acl_fault:
                return error(fake.acl_fault[doc_id], "acl failed")
            body = {"acl": list(doc.acl)}
            if fake.on_acl is not None:
                fake.on_acl(fake, doc_id)
            return body

        @app.get("/v1/Document/{doc_id}")
        def download(doc_id: str) -> Response:
            doc = fake._status(doc_id)
            if isinstance(doc, JSONResponse):
                return doc
            if doc_id in fake.download_fault:
                return error(fake.download_fault[doc_id], "download failed")
            return file_response(doc.content, doc.filename)

        @app.get("/v1/attributes/{repo}/{attr}")
        def lookup(repo: str, attr: int, request: Request) -> Any:
            q = request.query_params
            top = int(q.get("$top", "100"))
            skip = int(q.get("$skip", "0"))
            fault = fake.lookup_fault.get((attr, skip))
            if isinstance(fault, int):
                return error(fault)
            if fault is not None:
                return fault
            rows = fake.lookup.get(attr)
            if rows is None:
                return error(404)
            top = capped(top, fake.lookup_top_cap)
            body = {"rows": rows[skip : skip + top]}
            if fake.on_lookup_page is not None:
                fake.on_lookup_page(fake, attr, skip)
            return body

        @app.get("/v2/cabinet/{cab}/groups")
        def groups(cab: str) -> Any:
            if fake.groups_status is not None:
                return error(fake.groups_status)
            return fake.groups.get(cab, [])

        @app.get("/v1/Group/{group_id}/members")
        def members(group_id: str) -> Any:
            found = fake.members.get(group_id)
            return error(404) if found is None else found

        # Endpoints the crawler must never call. They "work", so only the log tells.
        @app.get("/v1/Workspace/{cab}/{client}/{matter}/info")
        def get_or_create(cab: str, client: str, matter: str) -> dict[str, Any]:
            return {"standardAttributes": {"id": f"ws-{client}-{matter}", "created": True}}

        @app.post("/v1/Search/{cab}")
        def change_acl(cab: str) -> dict[str, Any]:
            return {"ok": True}

        @app.api_route("/v1/Document/{doc_id}", methods=["PUT", "DELETE"])
        def write_document(doc_id: str) -> dict[str, Any]:
            return {"ok": True}

        return app
