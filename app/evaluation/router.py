"""The rating page (/rate) and its JSON endpoints under /v1/eval.

Include with ``app.include_router(app.evaluation.router.router)``.

Raters are lawyers: they see a query of a relevance set, the top ten results of the REAL
search run as themselves (their walls, audited with purpose "rating"), and grade results
0-3. A judgement is accepted only for a target the rater may read at the moment of rating;
anything else is a 404 that does not say whether the target exists. Admins create or
replace sets (PUT), and each judgement they put in a set is checked against their own walls
the same way.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import time
from functools import cache
from importlib import resources as package_files
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import HTMLResponse, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StringConstraints
from sqlalchemy import Connection

from app import __version__
from app.audit.chain import now_utc
from app.auth.service import Principal
from app.deps import Admin, Lawyer, ResourcesDep, require_roles
from app.errors import AppError, NotFound, Unprocessable
from app.evaluation import repository as evalrepo
from app.evaluation import sets as evalsets
from app.resources import Resources
from app.search.schemas import SearchIn
from app.search.service import query_vector, run_search
from app.walls.access import Access

router = APIRouter(tags=["evaluation"])

RESULTS_PER_QUERY = 10
_RaterOrAdmin = Annotated[Principal, Depends(require_roles("lawyer", "admin"))]


def _spend_rating_call(principal: Principal, resources: Resources) -> None:
    """Every lawyer route has a per-person budget (docs/isolation.md): a rater's calls read
    the walls and hold a pooled connection, and a script of one rater must not take them
    from everyone's searches (the results page spends the search budget instead)."""
    resources.limiter.spend(
        "rating_calls", principal.person_id, 1, resources.settings.rating_calls_per_minute
    )


def _rater_or_admin(principal: _RaterOrAdmin, resources: ResourcesDep) -> Principal:
    """A lawyer's reads of the sets are charged; an admin's are not (admin routes have no
    per-person budget)."""
    if not principal.has_any("admin"):
        _spend_rating_call(principal, resources)
    return principal


def _rater(principal: Lawyer, resources: ResourcesDep) -> Principal:
    _spend_rating_call(principal, resources)
    return principal


RaterOrAdmin = Annotated[Principal, Depends(_rater_or_admin)]
Rater = Annotated[Principal, Depends(_rater)]
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
SetName = Annotated[str, Path(min_length=1, max_length=100, pattern=NAME_PATTERN)]
KeyText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100, pattern=NAME_PATTERN),
]


def _printable(value: str) -> str:
    # PostgreSQL refuses NUL in text; other control characters have no business here either
    if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", value):
        raise ValueError("must not contain control characters")
    return value


QueryText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=2000),
    AfterValidator(_printable),
]
TargetText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=3, max_length=2000),
    AfterValidator(_printable),
]
PersonText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=400),
    AfterValidator(_printable),
]
Description = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=2000), AfterValidator(_printable)
]
Grade = Annotated[StrictInt, Field(ge=0, le=evalsets.MAX_GRADE)]


# --- request bodies --------------------------------------------------------------------------


class JudgementIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    set: KeyText
    query_key: KeyText
    target_kind: Literal["document", "chunk"] = "chunk"
    target_id: TargetText
    grade: Grade


class SetJudgementIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target_kind: Literal["document", "chunk"] = "document"
    target_id: TargetText
    grade: Grade


class SetQueryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query_key: KeyText
    text: QueryText
    as_person: PersonText | None = None
    judgements: list[SetJudgementIn] = Field(default_factory=list, max_length=1000)


class SetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: Description = ""
    queries: list[SetQueryIn] = Field(min_length=1, max_length=5000)


# --- helpers ---------------------------------------------------------------------------------


def _access(conn: Connection, resources: Resources, person_id: str) -> Access:
    return evalsets.access_now(conn, resources.require_resolver(), resources.database, person_id)


def _require_set(conn: Connection, name: str) -> evalrepo.SetInfo:
    info = evalrepo.get_set(conn, name)
    if info is None:
        raise NotFound("Relevance set", name)
    return info


def _progress(conn: Connection, set_id: int, person_id: str, total: int) -> dict[str, int]:
    return {"rated": evalrepo.count_rated_queries(conn, set_id, person_id), "total": total}


def _not_visible(target_id: str) -> AppError:
    # the same answer for "hidden by a wall" and "does not exist": nothing to learn here
    return AppError("not_found", "No such result is visible to you.", 404, {"target_id": target_id})


def _checked_target(kind: str, target_id: str, field: str) -> tuple[evalrepo.TargetKind, str]:
    try:
        return evalsets.check_target(kind, target_id)
    except evalsets.FormatError as exc:
        raise Unprocessable("invalid_target", exc.message, field=field) from None


_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'"}
_SNIPPET_TOKEN = re.compile(r"(</?b>)")


def snippet_parts(snippet: str) -> list[dict[str, Any]]:
    """The search's snippet (HTML-escaped text with <b> around hits) as plain-text parts, so
    the page never needs innerHTML: [{"text": "...", "hit": true|false}, ...]."""
    parts: list[dict[str, Any]] = []
    hit = False
    for piece in _SNIPPET_TOKEN.split(snippet or ""):
        if piece in ("<b>", "</b>"):
            hit = piece == "<b>"
        elif piece:
            plain = re.sub(r"&(amp|lt|gt|quot|#39);", lambda m: _ENTITIES[m.group(0)], piece)
            parts.append({"text": plain, "hit": hit})
    return parts


# --- the page --------------------------------------------------------------------------------


def _static(name: str) -> str:
    return package_files.files("app").joinpath("static", name).read_text(encoding="utf-8")


NONE = "'none'"


@cache
def _page() -> tuple[str, str]:
    """(html, CSP). The one inline <style> is allowed by its hash; no inline script."""
    page = _static("rate.html").replace("{{version}}", html.escape(__version__))
    styles = re.findall(r"<style>(.*?)</style>", page, flags=re.DOTALL)
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode() + "'"
        for s in styles
    )
    csp = (
        "default-src 'none'; script-src 'self'; connect-src 'self'; "
        # data: only for the empty favicon that spares the browser a 404
        f"style-src {hashes or NONE}; img-src 'self' data:; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    )
    return page, csp


_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@router.get("/rate", response_class=HTMLResponse, include_in_schema=False)
def rating_page() -> HTMLResponse:
    page, csp = _page()
    return HTMLResponse(page, headers={**_PAGE_HEADERS, "Content-Security-Policy": csp})


@router.get("/rate/rate.js", include_in_schema=False)
def rating_script() -> Response:
    return Response(
        _static("rate.js"), media_type="text/javascript; charset=utf-8", headers=_PAGE_HEADERS
    )


# --- sets ------------------------------------------------------------------------------------


@router.get("/v1/eval/sets")
def list_sets(principal: RaterOrAdmin, resources: ResourcesDep) -> dict[str, Any]:
    with resources.database.transaction() as conn:
        items = [
            {
                "name": info.name,
                "description": info.description,
                "queries": info.queries,
                "created_by": info.created_by,
                "created_at": info.created_at,
                "progress": _progress(conn, info.set_id, principal.person_id, info.queries),
            }
            for info in evalrepo.list_sets(conn)
        ]
    return {"items": items}


@router.get("/v1/eval/sets/{name}")
def get_set(name: SetName, principal: RaterOrAdmin, resources: ResourcesDep) -> dict[str, Any]:
    with resources.database.transaction() as conn:
        info = _require_set(conn, name)
        mine = evalrepo.load_judgements(conn, info.set_id, judged_by=principal.person_id)
        queries = [
            {"n": n, "query_key": q.key, "text": q.text, "rated": len(mine.get(q.key, []))}
            for n, q in enumerate(evalrepo.load_queries(conn, info.set_id), start=1)
        ]
        return {
            "name": info.name,
            "description": info.description,
            "queries": queries,
            "progress": _progress(conn, info.set_id, principal.person_id, info.queries),
        }


@router.put("/v1/eval/sets/{name}")
def put_set(
    name: SetName, body: SetIn, principal: Admin, resources: ResourcesDep
) -> dict[str, Any]:
    """The whole new state of the set's queries (queries absent from the body go, with their
    judgements); the body's judgements are recorded as the admin's own."""
    keys = [q.query_key for q in body.queries]
    if len(set(keys)) != len(keys):
        raise Unprocessable(
            "duplicate_query_key", "Each query_key may occur once.", field="queries"
        )
    queries = []
    for i, q in enumerate(body.queries):
        judgements = []
        for k, j in enumerate(q.judgements):
            kind, target = _checked_target(
                j.target_kind, j.target_id, f"queries.{i}.judgements.{k}.target_id"
            )
            judgements.append(
                evalrepo.Judgement(q.query_key, kind, target, j.grade, principal.person_id)
            )
        queries.append(
            evalrepo.QueryIn(q.query_key, " ".join(q.text.split()), q.as_person, judgements)
        )
    with resources.database.transaction() as conn:
        wanted = {(j.target_kind, j.target_id) for q in queries for j in q.judgements}
        if wanted:
            seen = evalsets.visible_targets(
                conn, _access(conn, resources, principal.person_id), wanted
            )
            hidden = sorted(t for _, t in wanted - seen)
            if hidden:
                raise Unprocessable(
                    "targets_not_visible",
                    f"{len(hidden)} judged target(s) are not visible to you (or do not exist).",
                    field="queries",
                    targets=hidden[:20],
                )
        set_id = evalsets.import_queries(
            conn, name, body.description, principal.person_id, queries, replace=True
        )
    return {
        "name": name,
        "set_id": set_id,
        "queries": len(queries),
        "judgements": sum(len(q.judgements) for q in queries),
    }


# --- rating ----------------------------------------------------------------------------------


@router.get("/v1/eval/sets/{name}/queries/{n}/results")
def query_results(
    name: SetName,
    n: Annotated[int, Path(ge=1, le=100_000)],
    principal: Lawyer,
    resources: ResourcesDep,
    mode: Annotated[Literal["hybrid", "dense", "sparse"], Query()] = "hybrid",
) -> dict[str, Any]:
    started = time.perf_counter()
    with resources.database.transaction() as conn:
        info = _require_set(conn, name)
        queries = evalrepo.load_queries(conn, info.set_id)
    if n > len(queries):
        raise NotFound("Query number", str(n))
    query = queries[n - 1]
    request = SearchIn.model_validate(
        {
            "query": query.text,
            "k": RESULTS_PER_QUERY,
            "mode": mode,
            "prompt_version": f"rate:{info.name}"[:200],
        }
    )
    # an audited search like POST /v1/search: the same bound in flight and the same budget
    person, settings = principal.person_id, resources.settings
    with resources.limiter.search(
        person, settings.search_max_concurrent_per_person, settings.search_per_minute
    ):
        # before the transaction: none waits on the model
        qvec = query_vector(resources, person, request)
        with resources.database.transaction() as conn:
            result = run_search(
                conn, resources, principal, request, qvec=qvec, purpose="rating", started=started
            )
            mine = evalrepo.load_judgements(conn, info.set_id, judged_by=person)
            progress = _progress(conn, info.set_id, person, len(queries))
    grades = {(j.target_kind, j.target_id): j.grade for j in mine.get(query.key, [])}
    results = []
    for rank, row in enumerate(result.rows, start=1):
        doc = evalsets.document_target(row.source, row.external_id)
        results.append(
            {
                "rank": rank,
                "chunk_id": row.chunk_id,
                "document_target": doc,
                "title": row.title,
                "source": row.source,
                "external_id": row.external_id,
                "doc_type": row.doc_type,
                "matter_id": row.matter_id,
                "client_id": row.client_id,
                "section_path": row.section_path,
                "page_from": row.page_from,
                "page_to": row.page_to,
                "snippet": row.snippet,
                "snippet_parts": snippet_parts(str(row.snippet or "")),
                "grade": grades.get(("chunk", row.chunk_id)),
                "document_grade": grades.get(("document", doc)),
            }
        )
    return {
        "set": info.name,
        "n": n,
        "total": len(queries),
        "query": {"query_key": query.key, "text": query.text},
        "mode": mode,
        "retrieval_id": str(result.retrieval_id),
        "results": results,
        "progress": progress,
    }


@router.post("/v1/eval/judgements")
def rate(body: JudgementIn, principal: Rater, resources: ResourcesDep) -> dict[str, Any]:
    kind, target = _checked_target(body.target_kind, body.target_id, "target_id")
    with resources.database.transaction() as conn:
        info = _require_set(conn, body.set)
        query_id = evalrepo.query_id(conn, info.set_id, body.query_key)
        if query_id is None:
            raise NotFound("Query", body.query_key)
        # the walls of the rater, now: a result seen a minute ago may be walled off since
        access = _access(conn, resources, principal.person_id)
        if (kind, target) not in evalsets.visible_targets(conn, access, [(kind, target)]):
            raise _not_visible(target)
        judged_at = now_utc()
        evalsets.upsert_judgements(
            conn,
            {body.query_key: query_id},
            [
                evalrepo.Judgement(
                    body.query_key, kind, target, body.grade, principal.person_id, judged_at
                )
            ],
        )
        progress = _progress(conn, info.set_id, principal.person_id, info.queries)
    return {
        "set": info.name,
        "query_key": body.query_key,
        "target_kind": kind,
        "target_id": target,
        "grade": body.grade,
        "judged_by": principal.person_id,
        "judged_at": judged_at,
        "progress": progress,
    }
