"""Search: resolve access now, run ONE hybrid statement, audit it in the same transaction.

Dense strategy per query (thresholds calibrated by ``bench.search --calibrate``, see
bench/README.md): the allowed row count P comes from the
per-group counts. Exact top-N over the allowed rows when P is small (P <= exact_max_rows or
P/N <= exact_max_fraction, or a matter filter narrows it); otherwise HNSW with a relaxed
iterative scan whose ef_search / max_scan_tuples are sized to the candidate depth and the
selectivity; when HNSW returns fewer than min(candidates, P) rows the statement is re-run in
the exact form. Each form is its own named block (sql/search.sql) and connections never
auto-prepare, so a cached plan of one form is never reused for the other.
"""

from __future__ import annotations

import logging
import math
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from app.audit import chain
from app.auth.service import Principal
from app.db.params import text_array
from app.embeddings import Embedder, vector_literal
from app.errors import AppError
from app.logging import redacted_traceback
from app.reembed.service import check_query_model
from app.resources import Resources
from app.search import repository
from app.search.schemas import Filters, SearchIn
from app.search.session import SessionBinding, resolve_binding
from app.settings import Settings
from app.walls.access import Access, access_for, apply

if TYPE_CHECKING:
    from app.walls.graph import MatrixSnapshot

log = logging.getLogger("ewall.search")

_WEBSEARCH = re.compile(r'"|(^|\s)-\S|\sOR\s')
MAX_POLICY_RETRIES = 5
COLLAPSE_DEPTH_FACTOR = 5  # candidates per leg per requested document when collapsing
# The sparse leg ranks documents by BM25 over their candidate chunks (docs/quality.md, second
# round: k1 3, b 0.9 and 16 lexemes were chosen on the development set; ranking chunks instead
# scored 0.630 against 0.745 and was removed).
RANK_LEXEME_LIMIT = 16  # the most informative query lexemes the ranking weighs
SPARSE_DOC_K1 = 3.0  # BM25 term-frequency saturation, once per document
SPARSE_DOC_B = 0.9  # BM25 length normalisation against the corpus's mean document
# What the sparse leg reads per question, bounded (sql/search.sql, analyze_query): lexemes in
# more than a quarter of the chunks are dropped, the others join rarest first while their
# summed document frequency stays under the match budget, and at most SPARSE_RANK_CAP
# allowed matches are ranked (a cap of 1,000 cost 0.07 on own-words questions:
# docs/latency-sql.md). A sparse search that comes back short re-runs without the first two.
SPARSE_COMMON_DF = 0.25
SPARSE_MATCH_BUDGET = 10_000
SPARSE_RANK_CAP = 3_000
# A lexeme only a synonym adds ranks at this weight (the question's own: 1); the best of the
# weights measured with a broad thesaurus (docs/quality.md, third round). It matches at any.
SYNONYM_WEIGHT = 0.3
RRF_K = 60  # the reciprocal rank fusion constant: score = weight / (RRF_K + rank)


class StalePolicy(Exception):
    def __init__(self, seen: int) -> None:
        super().__init__(seen)
        self.seen = seen


@dataclass
class Plan:
    strategy: str
    allowed_rows: int
    total_rows: int
    ef_search: int = 0
    max_scan_tuples: int = 0
    # the sparse leg's group test may use the btree (sql/search.sql, :sparse_group_index)
    sparse_group_index: bool = True


@dataclass
class SearchResult:
    retrieval_id: uuid.UUID
    policy_version: int
    took_ms: float
    strategy: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    access: Access | None = None
    session: SessionBinding = field(default_factory=SessionBinding)


def choose_plan(
    settings: Settings, allowed: int, total: int, dense_candidates: int, filters: Filters | None
) -> Plan:
    total = max(total, 1)
    fraction = allowed / total
    narrow_filter = filters is not None and bool(filters.matter_ids)
    # a large allowed set: the btree would read most of the table for the sparse leg, and
    # planning its = ANY over hundreds of groups costs tens of ms (docs/latency-sql.md)
    group_index = fraction <= settings.sparse_group_index_max_fraction
    if (
        allowed <= settings.exact_max_rows
        or fraction <= settings.exact_max_fraction
        or narrow_filter
    ):
        return Plan("exact", allowed, total, sparse_group_index=group_index)
    ef = min(1000, max(settings.hnsw_ef_search, 2 * dense_candidates))
    tuples = min(
        settings.hnsw_max_scan_tuples_cap,
        max(20_000, math.ceil(4 * dense_candidates / max(fraction, 1e-6))),
    )
    return Plan("hnsw", allowed, total, ef, tuples, sparse_group_index=group_index)


def _weights(settings: Settings, mode: str) -> tuple[bool, bool, float, float]:
    if mode == "dense":
        return True, False, 1.0, 0.0
    if mode == "sparse":
        return False, True, 0.0, 1.0
    return True, True, settings.dense_weight, settings.sparse_weight


@dataclass(frozen=True)
class SearchOverrides:
    """Evaluation and calibration may override fusion settings for one search."""

    dense_weight: float | None = None
    sparse_weight: float | None = None
    dense_candidates: int | None = None
    sparse_candidates: int | None = None


@dataclass(frozen=True)
class ReadRoute:
    """A search whose ``conn`` is a read-only replica transaction (app/search/replica.py):
    resolve with ``snapshot`` (read in that same replica snapshot) and hand the audit row to
    ``append`` (the fenced append on the primary) instead of writing it on ``conn``.
    ``session`` is the session's binding as the primary has it: the binding lives in audit
    rows committed on the primary, which the replica may not have replayed yet."""

    snapshot: MatrixSnapshot
    append: Callable[[dict[str, Any], list[dict[str, Any]], Access], None]
    session: SessionBinding


def run_search(
    conn: Connection,
    resources: Resources,
    principal: Principal,
    request: SearchIn,
    *,
    qvec: str,
    purpose: str = "search",
    overrides: SearchOverrides | None = None,
    started: float | None = None,
    read: ReadRoute | None = None,
) -> SearchResult:
    settings = resources.settings
    database = resources.database
    resolver = resources.require_resolver()
    started = started if started is not None else time.perf_counter()
    at = chain.now_utc()
    o = overrides or SearchOverrides()
    use_dense, use_sparse, w_dense, w_sparse = _weights(settings, request.mode)
    if request.mode == "hybrid":
        w_dense = o.dense_weight if o.dense_weight is not None else w_dense
        w_sparse = o.sparse_weight if o.sparse_weight is not None else w_sparse
    dense_candidates = max(o.dense_candidates or settings.dense_candidates, request.k)
    sparse_candidates = max(o.sparse_candidates or settings.sparse_candidates, request.k)
    if request.collapse == "document":  # k documents need more chunks than k
        dense_candidates = max(dense_candidates, COLLAPSE_DEPTH_FACTOR * request.k)
        sparse_candidates = max(sparse_candidates, COLLAPSE_DEPTH_FACTOR * request.k)
    filters = request.filters or Filters()
    websearch = bool(_WEBSEARCH.search(request.query))
    session = resolve_binding(conn, principal.person_id, request) if read is None else read.session
    # the query vector must be the live model's (a re-embed may have switched): 503 if not
    query_model = resources.embedder.model_id if resources.embedder is not None else None
    if query_model is not None:
        check_query_model(conn, query_model)

    at_least: int | None = None
    for _attempt in range(MAX_POLICY_RETRIES):
        resolution = (
            resolver.resolve(database, principal.person_id, at, at_least)
            if read is None
            else resolver.resolve_with(read.snapshot, principal.person_id, at)
        )
        access = access_for(conn, resolution)
        apply(conn, access)
        wall_groups = text_array(access.wall_groups)
        source_acl_ids = list(access.source_acl_ids)
        sizes = repository.group_sizes(conn, wall_groups, source_acl_ids)
        plan = choose_plan(
            settings,
            sizes.allowed,
            sizes.total,
            dense_candidates,
            request.filters,
        )
        # the sparse leg's statistics are those of the rows this person may see (invariant 12)
        analysis = (
            analyze_configured(
                conn,
                request.query,
                websearch,
                wall_groups=wall_groups,
                source_acl_ids=source_acl_ids,
            )
            if use_sparse
            else EMPTY_ANALYSIS
        )
        params: dict[str, Any] = {
            "qvec": qvec,
            **analysis,
            "wall_groups": wall_groups,
            "source_acl_ids": source_acl_ids,
            "policy_version": access.policy_version,
            "doc_types": [d.strip().lower() for d in filters.doc_types]
            if filters.doc_types
            else None,
            "sources": [s.strip().lower() for s in filters.sources] if filters.sources else None,
            "matter_ids": list(filters.matter_ids) if filters.matter_ids else None,
            "session_matter_id": session.narrow_to,
            "modified_from": filters.modified_from,
            "modified_to": filters.modified_to,
            "use_dense": use_dense,
            "use_sparse": use_sparse,
            "dense_weight": w_dense,
            "sparse_weight": w_sparse,
            "rrf_k": RRF_K,
            "k": request.k,
            "dense_candidates": dense_candidates,
            "sparse_candidates": sparse_candidates,
            "sparse_rank_cap": SPARSE_RANK_CAP,
            "sparse_doc_k1": SPARSE_DOC_K1,
            "sparse_doc_b": SPARSE_DOC_B,
            "collapse": request.collapse == "document",
        }
        try:
            rows, strategy = _execute(conn, plan, params, use_dense)
            if request.mode == "sparse" and _sparse_short(rows, request.k, analysis):
                # The match budget or the common-lexeme guard may have cut matches the
                # person may see: a full top-k wins over speed here.
                params.update(
                    analyze_configured(
                        conn,
                        request.query,
                        websearch,
                        wall_groups=wall_groups,
                        source_acl_ids=source_acl_ids,
                        full=True,
                    )
                )
                rows, strategy = _execute(conn, plan, params, use_dense)
                strategy += "+full-sparse"
        except StalePolicy as stale:
            at_least = stale.seen
            continue
        hits = [r for r in rows if r["chunk_id"] is not None]
        took_ms = round((time.perf_counter() - started) * 1000, 2)
        retrieval_id = uuid.uuid4()
        _audit(
            conn,
            principal,
            request,
            access,
            hits,
            retrieval_id,
            at,
            strategy,
            took_ms,
            purpose,
            session,
            read.append if read is not None else None,
            query_model,
        )
        metrics = resources.metrics
        if metrics is not None:
            metrics.searches.labels(request.mode, strategy).inc()
        return SearchResult(
            retrieval_id, access.policy_version, took_ms, strategy, hits, access, session
        )
    raise AppError(
        "policy_changing",
        "The access policy changed during every attempt of this search; try again.",
        503,
    )


EMPTY_ANALYSIS: dict[str, Any] = {
    "match_tsq": "",
    "headline_tsq": "",
    "rank_lexemes": [],
    "rank_weights": [],
    "lexeme_count": 0,
    "matched_lexeme_count": 0,
}


def analyze_query(
    conn: Connection,
    query: str,
    websearch: bool,
    common_df: float,
    match_budget: int,
    *,
    wall_groups: str | list[str],
    source_acl_ids: list[str],
    synonym_weight: float = 1.0,
    rank_lexeme_limit: int = RANK_LEXEME_LIMIT,
) -> dict[str, Any]:
    """The sparse leg's inputs for ``query``. Every statistic it weighs (document
    frequencies, the corpus size) is summed over the access keys the person may see:
    ``wall_groups`` (a list or its text[] literal) and ``source_acl_ids``."""
    out = repository.analyze_query(
        conn,
        {
            "query": query,
            "wall_groups": wall_groups,
            "source_acl_ids": source_acl_ids,
            "websearch": websearch,
            "common_df": common_df,
            "match_budget": match_budget,
            "rank_lexeme_limit": rank_lexeme_limit,
            "synonym_weight": synonym_weight,
        },
    )
    out["rank_lexemes"] = list(out["rank_lexemes"] or [])
    out["rank_weights"] = [float(x) for x in out["rank_weights"] or []]
    return out


def analyze_configured(
    conn: Connection,
    query: str,
    websearch: bool,
    *,
    wall_groups: str | list[str],
    source_acl_ids: list[str],
    full: bool = False,
) -> dict[str, Any]:
    """``analyze_query`` with the bounds a search runs with; ``full``: without the
    common-lexeme cut and the match budget (a sparse search that came back short)."""
    return analyze_query(
        conn,
        query,
        websearch,
        1.0 if full else SPARSE_COMMON_DF,
        1 << 62 if full else SPARSE_MATCH_BUDGET,
        wall_groups=wall_groups,
        source_acl_ids=source_acl_ids,
        synonym_weight=SYNONYM_WEIGHT,
    )


def _sparse_short(rows: list[dict[str, Any]], k: int, analysis: dict[str, Any]) -> bool:
    hits = sum(1 for r in rows if r["chunk_id"] is not None)
    return hits < k and analysis["matched_lexeme_count"] < analysis["lexeme_count"]


def _execute(
    conn: Connection, plan: Plan, params: dict[str, Any], use_dense: bool
) -> tuple[list[dict[str, Any]], str]:
    strategy = plan.strategy if use_dense else "none"
    hnsw = use_dense and plan.strategy == "hnsw"
    if hnsw:
        repository.set_hnsw_scan(
            conn, ef_search=plan.ef_search, max_scan_tuples=plan.max_scan_tuples
        )
    sql_params = {
        k: v for k, v in params.items() if k not in ("lexeme_count", "matched_lexeme_count")
    }
    sql_params["sparse_group_index"] = plan.sparse_group_index
    rows = repository.run_hybrid(conn, "hnsw" if hnsw else "exact", sql_params)
    first = rows[0]
    if first["policy_version_seen"] != params["policy_version"]:
        raise StalePolicy(int(first["policy_version_seen"]))
    if hnsw:
        expected = min(params["dense_candidates"], plan.allowed_rows)
        if first["dense_count"] < expected:
            log.info(
                "hnsw under-returned; exact fallback",
                extra={"got": first["dense_count"], "expected": expected},
            )
            rows = repository.run_hybrid(conn, "exact", sql_params)
            strategy = "hnsw->exact"
    return rows, strategy


def _audited_results(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every chunk the response names (invariant 4): each hit at its rank (sub_rank 0) and,
    under it, the other sections a collapsed search lists with it (sub_rank 1, 2, ... in
    the listed order). Their ids, headings and pages reach the caller, so "who saw chunk X"
    and the replica fence must cover them; their text does not, so the grounding gate
    counts only sub_rank 0 (sql/gates.sql)."""
    results: list[dict[str, Any]] = []
    for rank, hit in enumerate(hits, start=1):
        named = [hit, *(hit.get("other_sections") or [])]
        results.extend(
            {
                "rank": rank,
                "sub_rank": sub_rank,
                "chunk_id": chunk["chunk_id"],
                "matter_id": chunk["matter_id"],
                "content_sha256": chunk["content_sha256"],
                "score": float(chunk["score"]),
            }
            for sub_rank, chunk in enumerate(named)
        )
    return results


def _audit(
    conn: Connection,
    principal: Principal,
    request: SearchIn,
    access: Access,
    hits: list[dict[str, Any]],
    retrieval_id: uuid.UUID,
    at: datetime,
    strategy: str,
    took_ms: float,
    purpose: str,
    session: SessionBinding,
    append: Callable[[dict[str, Any], list[dict[str, Any]], Access], None] | None = None,
    query_model: str | None = None,
) -> None:
    results = _audited_results(hits)
    filters = request.filters.model_dump(mode="json", exclude_none=True) if request.filters else {}
    row = {
        "retrieval_id": retrieval_id,
        "at": at,
        "person_id": principal.person_id,
        "roles": sorted(principal.roles),
        "purpose": purpose,
        "query": request.query,
        "mode": request.mode,
        "k": request.k,
        "filters": filters,
        "allowed_wall_groups": list(access.wall_groups),
        "source_principals": list(access.principals),
        "policy_version": access.policy_version,
        "model": request.model,
        "prompt_version": request.prompt_version,
        "strategy": strategy,
        "took_ms": took_ms,
        "result_count": len(hits),
        "session_id": session.session_id,
        "session_matter_id": session.matter_id,
        "session_scope": session.scope,
        "query_model": query_model,
    }
    try:
        if append is None:
            chain.append_retrieval(conn, row, results)
        else:
            append(row, results, access)
    except DBAPIError as exc:
        # the error's parameters hold the query and the access sets: types and frames only
        log.error(  # noqa: TRY400 (log.exception would log the message and its parameters)
            "audit append failed; the search returns nothing",
            extra={"error": type(exc.orig).__name__, "traceback": redacted_traceback(exc)},
        )
        raise AppError(
            "audit_unavailable",
            "The search could not be recorded in the audit log, so it returns no results.",
            503,
        ) from exc


def embed_query(embedder: Embedder, query: str) -> str:
    return vector_literal(embedder.embed_query(query))


def to_response(result: SearchResult) -> dict[str, Any]:
    results = []
    for rank, h in enumerate(result.rows, start=1):
        results.append(
            {
                "chunk_id": h["chunk_id"],
                "rank": rank,
                "score": round(float(h["score"]), 6),
                "ranks": {"dense": h["dense_rank"], "sparse": h["sparse_rank"]},
                "document": {
                    "source": h["source"],
                    "external_id": h["external_id"],
                    "title": h["title"],
                    "doc_type": h["doc_type"],
                    "modified_at": h["modified_at"],
                },
                "matter_id": h["matter_id"],
                "client_id": h["client_id"],
                "section_path": h["section_path"],
                "page_from": h["page_from"],
                "page_to": h["page_to"],
                "text": h["body"],
                "snippet": h["snippet"],
                "content_sha256": h["content_sha256"],
                **(
                    {"other_sections": h["other_sections"]}
                    if h.get("other_sections") is not None
                    else {}
                ),
            }
        )
    return {
        "retrieval_id": str(result.retrieval_id),
        "policy_version": result.policy_version,
        "took_ms": result.took_ms,
        "strategy": result.strategy,
        "results": results,
        # only in the answer to a search made in a session
        **(
            {
                "session_id": result.session.session_id,
                "session_matter_id": result.session.matter_id,
                "session_scope": result.session.scope,
            }
            if result.session.session_id is not None
            else {}
        ),
    }
