"""Search, top to bottom: ``search`` is the whole of POST /v1/search after the rate limit and
the encoder (both charged before any connection is taken, in app/search/router.py).

1. Choose the read connection: a healthy replica that has replayed every policy version this
   process served and has a free connection at once (app/search/replica.py picks it; a full
   pool sends the search on to the next), else the primary.
2. In ONE transaction on it: the session binding, the live-model check, the person's access
   (resolved at the current policy version, applied as row-level security), the dense
   strategy, the query analysis and the hybrid statement (app/search/repository.py ->
   sql/search.sql). A statement that saw another policy version retries (StalePolicy).
3. The audit row: on the primary, in that same transaction; after a replica read, on the
   primary behind the fence (invariant 8, docs/scale-out.md): the primary commits it only if
   its policy version and visibility still match what the replica read, otherwise the
   search runs again on the primary. No audit row, no results.
4. Commit, then the typed result (``to_response`` writes the API body).

Dense strategy per query (thresholds calibrated by ``bench.search --calibrate``, see
bench/README.md): the allowed row count P comes from the
per-group counts. Exact top-N over the allowed rows when P is small (P <= exact_max_rows, or
a matter filter narrows it: never the share of the corpus P is, which hidden rows would move,
invariant 12); otherwise HNSW with a relaxed
iterative scan whose ef_search / max_scan_tuples are sized to the candidate depth and the
selectivity; when HNSW returns fewer than min(candidates, P) rows the statement is re-run in
the exact form. Both forms are one statement text (sql/search.sql, search.hybrid) with the
form bound as a parameter; connections never auto-prepare it, so the planner folds that
parameter and each plan is one form's (a cached plan of one is never reused for the other).
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from app.audit import chain
from app.auth.service import Principal
from app.db.sqlfiles import text_array
from app.embeddings import Embedder, vector_literal
from app.errors import AppError, Conflict
from app.logging import redacted_traceback
from app.reembed.service import check_query_model
from app.resources import Resources
from app.search import replica as replicas
from app.search import repository
from app.search.repository import NO_ANALYSIS, HnswScan, HybridParams, HybridRows, QueryAnalysis
from app.search.schemas import Filters, SearchIn
from app.settings import Settings
from app.walls.access import Access, access_for, apply
from app.walls.repository import policy_version_for_share

if TYPE_CHECKING:
    from app.walls.graph import MatrixSnapshot

log = logging.getLogger("ewall.search")
MAX_POLICY_RETRIES = 5
COLLAPSE_DEPTH_FACTOR = 5  # candidates per leg per requested document when collapsing
# a search without filters reads these (built once: validating a Filters runs its validators)
NO_FILTERS = Filters()
# The sparse leg ranks documents by BM25 from their impact postings (sql/functions/
# search_postings.v1.sql; k1 3, b 0.9 and 16 lexemes were chosen on the development set,
# docs/quality.md), every score exact:
#  - at most SPARSE_FILTER_FIRST_MAX chunks the person may see hold a ranking lexeme, and
#    the match is rare among the allowed rows or few rows are allowed (or the request
#    narrows): every document holding one is scored (filter first: through the GIN index, or
#    by a test of each allowed row when few are allowed, SPARSE_ROW_TEST_*);
#  - otherwise, with no narrowing filter and no search operators, from the postings alone:
#    every visible posting of the ranking lexemes summed per document part (an index-only
#    scan of the person's keys in each lexeme's list); or, for a question of at most
#    SPARSE_IMPACT_MAX_LEXEMES ranking lexemes held by more than SPARSE_SUM_MAX_DF such
#    chunks, the best parts in impact order, stopping when nothing unread can reach them
#    (the threshold algorithm);
#  - more, with a narrowing filter or operators: every document matching the budgeted match
#    (analyze_query: lexemes in more than a quarter of the chunks are dropped, the others join
#    rarest first while their summed document frequency stays under the match budget). A
#    sparse search that comes back short re-runs without the cut and the budget.
RANK_LEXEME_LIMIT = 16  # the most informative query lexemes the ranking weighs
SPARSE_RANKING = "search_postings.v1: BM25 k1 3, b 0.9, reference length 2,000"
SPARSE_FILTER_FIRST_MAX = 3_000
# Summing every visible posting beat the threshold algorithm at 1,000,000 chunks wherever at
# most about 30,000 visible chunks held a ranking lexeme, and for questions of four or more
# ranking lexemes up to 440,000 (the threshold algorithm reads deeper the more lists it
# merges); for three it was even, for one or two slower (docs/scale-out.md)
SPARSE_SUM_MAX_DF = 30_000
SPARSE_IMPACT_MAX_LEXEMES = 3
# Filter first, the match: at most SPARSE_ROW_TEST_MAX_ROWS rows allowed, of which at least
# one in SPARSE_ROW_TEST_MIN_SHARE holds a ranking lexeme (rank_df, over the rows the person
# may see): the match is tested on each allowed row, read through the btree, instead of
# read from the GIN index, whose scan of common words costs the same at any selectivity
# (at 1,000,000 chunks 20-37 ms for 1,000 allowed rows; docs/scale-out.md)
SPARSE_ROW_TEST_MAX_ROWS = 2_000
SPARSE_ROW_TEST_MIN_SHARE = 20
SPARSE_COMMON_DF = 0.25
SPARSE_MATCH_BUDGET = 10_000
# A lexeme only a synonym adds ranks at this weight (the question's own: 1); the best of the
# weights measured with a broad thesaurus (docs/quality.md, third round). It matches at any.
SYNONYM_WEIGHT = 0.3


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


@dataclass(frozen=True)
class SessionBinding:
    """A bound session narrows its searches to one matter plus public sources. The binding
    lives in the retrieval audit (the latest bound search of the person's session), so it
    needs no table of its own and cannot drift from what was audited; the narrowing is a
    predicate of the statement (``session_matter_id``) that can only remove rows."""

    session_id: str | None = None
    matter_id: str | None = None
    scope: str | None = None  # "bound" (narrowed), "widened" (explicitly not), None (unbound)
    bound_before: str | None = None  # the binding the audit held when this was resolved

    @property
    def narrow_to(self) -> str | None:
        """The matter the statement narrows to (NULL when unbound or widened)."""
        return self.matter_id if self.scope == "bound" else None


@dataclass
class SearchResult:
    retrieval_id: uuid.UUID
    policy_version: int
    took_ms: float
    strategy: str
    rows: list[repository.Hit]
    access: Access
    session: SessionBinding
    at: datetime  # the instant access was resolved for
    query_model: str | None  # the live query encoder's model, checked even when no vector ran
    read_from: str = replicas.PRIMARY  # who ran the statement: "primary" or a replica's name
    # the answer names the session's bound matter only while its person may see it (the audit
    # row records the binding whatever happens to it)
    binding_shown: bool = True


@dataclass(frozen=True)
class SearchOverrides:
    """Evaluation and calibration may override fusion settings for one search."""

    dense_weight: float | None = None
    sparse_weight: float | None = None
    dense_candidates: int | None = None
    sparse_candidates: int | None = None
    rrf_k: int | None = None


def search(
    resources: Resources,
    principal: Principal,
    request: SearchIn,
    *,
    qvec: str | None,
    started: float | None = None,
    purpose: chain.Purpose = "search",
) -> SearchResult:
    """One search, start to finish; the audit row is committed before this returns."""
    started = started if started is not None else time.perf_counter()
    session = SessionBinding()
    if resources.replicas and request.session_id is not None:
        # the binding lives in audit rows committed on the primary, which the replica may
        # not have replayed yet (it would see the session unbound): read it there (once,
        # before any replica is tried: an error of the primary's here is no replica's)
        with resources.database.transaction() as primary:
            session = resolve_binding(primary, principal.person_id, request)
    # a healthy replica within the lag limit with a free connection, or None: the primary
    # (without replicas configured the replica module is not on a search's path: README)
    found = (
        replicas.on_replica(
            resources,
            lambda replica: _search_on_replica(
                replica, resources, principal, request, qvec, session, started, purpose
            ),
        )
        if resources.replicas
        else None
    )
    if found is not None:
        replicas.count(resources, found.read_from, "served")
        replicas.served(resources, found.policy_version)
        return found
    with resources.database.transaction() as conn:
        result = run_search(
            conn, resources, principal, request, qvec=qvec, purpose=purpose, started=started
        )
    if resources.replicas is not None:
        replicas.count(resources, replicas.PRIMARY, "served")
        replicas.served(resources, result.policy_version)
    return result


def run_search(
    conn: Connection,
    resources: Resources,
    principal: Principal,
    request: SearchIn,
    *,
    qvec: str | None,
    purpose: chain.Purpose = "search",
    overrides: SearchOverrides | None = None,
    started: float | None = None,
) -> SearchResult:
    """The search in the caller's primary transaction ``conn``, its audit row appended there
    (evaluation and the benchmarks call this with a transaction of their own)."""
    started = started if started is not None else time.perf_counter()
    session = resolve_binding(conn, principal.person_id, request)
    found = _find(conn, resources, principal, request, qvec, session, started, overrides=overrides)
    entry, results = _audit_row(principal, request, found, purpose)
    _audit(conn, entry, results)
    _count_search(resources, request, found)
    return found


def _audit(conn: Connection, entry: chain.Retrieval, results: list[chain.RetrievedChunk]) -> None:
    """The audit row, in the search's own transaction on the primary."""
    # recorded within APPEND_LAG_MAX_S of its ``at`` or not at all (503, no results), so that
    # an export of a window that ended FINAL_AFTER_S ago is final
    with _audit_unavailable_on_error():
        chain.append_retrieval(conn, entry, results, within_s=chain.APPEND_LAG_MAX_S)


def _search_on_replica(
    replica: replicas.Replica,
    resources: Resources,
    principal: Principal,
    request: SearchIn,
    qvec: str | None,
    session: SessionBinding,
    started: float,
    purpose: chain.Purpose,
) -> SearchResult:
    """The reads in one repeatable-read, read-only replica transaction, then the audit row
    on the primary behind the fence (raises Busy, Fenced, ReplicaBehind or the replica's
    error)."""
    with replicas.read_transaction(replica, resources) as (conn, snapshot):
        found = _find(conn, resources, principal, request, qvec, session, started, snapshot)
    # the replica's transaction has ended: from here on a replica failure changes nothing
    entry, results = _audit_row(principal, request, found, purpose)
    with _audit_unavailable_on_error():
        replicas.fenced_append(
            resources.database,
            entry,
            results,
            found.access,
            session_id=session.session_id,
            bound_before=session.bound_before,
        )
    _count_search(resources, request, found)
    found.read_from = replica.name
    return found


def _find(
    conn: Connection,
    resources: Resources,
    principal: Principal,
    request: SearchIn,
    qvec: str | None,
    session: SessionBinding,
    started: float,
    snapshot: MatrixSnapshot | None = None,
    *,
    overrides: SearchOverrides | None = None,
) -> SearchResult:
    """Resolve access and run the statement on ``conn``; not audited yet. ``snapshot``: the
    matrix as a replica transaction sees it (None: resolve on the primary)."""
    settings = resources.settings
    resolver = resources.require_resolver()
    o = overrides or SearchOverrides()
    w_dense, w_sparse = _weights(settings, request.mode)
    if request.mode == "hybrid":
        w_dense = o.dense_weight if o.dense_weight is not None else w_dense
        w_sparse = o.sparse_weight if o.sparse_weight is not None else w_sparse
    use_dense, use_sparse = w_dense > 0, w_sparse > 0
    if not (use_dense or use_sparse):  # Settings refuse it; an evaluation's overrides may not
        raise AppError("no_leg", "Both fusion weights are 0: no leg of the search would run.", 422)
    if use_dense and qvec is None:
        raise RuntimeError("the dense leg runs but the question was not encoded")
    dense_candidates = max(o.dense_candidates or settings.dense_candidates, request.k)
    sparse_candidates = max(o.sparse_candidates or settings.sparse_candidates, request.k)
    if request.collapse == "document":  # k documents need more chunks than k
        dense_candidates = max(dense_candidates, COLLAPSE_DEPTH_FACTOR * request.k)
        sparse_candidates = max(sparse_candidates, COLLAPSE_DEPTH_FACTOR * request.k)
    filters = request.filters or NO_FILTERS
    # the query vector must be the live model's (a re-embed may have switched): 503 if not
    query_model = resources.embedder.model_id if resources.embedder is not None else None
    # and the instant access is decided at: the database's clock (app/db/clock.py)
    at = check_query_model(conn, query_model)

    at_least: int | None = None
    for attempt in range(MAX_POLICY_RETRIES):
        if snapshot is None and attempt == MAX_POLICY_RETRIES - 1:
            # policy changes kept committing between resolution and statement: the last
            # attempt holds the version (FOR SHARE) until this transaction ends, so none can
            # commit before this search does (a change waits for one search, not longer)
            at_least = policy_version_for_share(conn)
        resolution = (
            resolver.resolve(resources.database, principal.person_id, at, at_least)
            if snapshot is None
            else resolver.resolve_with(snapshot, principal.person_id, at)
        )
        access = access_for(conn, resolution)
        apply(conn, access)
        wall_groups = text_array(access.wall_groups)
        source_acl_ids = list(access.source_acl_ids)
        sizes = repository.group_sizes(conn, wall_groups, source_acl_ids)
        plan = choose_plan(settings, sizes.allowed, sizes.total, dense_candidates, request.filters)
        # the sparse leg's statistics are those of the rows this person may see (invariant 12)
        analysis = (
            analyze_configured(
                conn,
                request.query,
                wall_groups=wall_groups,
                source_acl_ids=source_acl_ids,
            )
            if use_sparse
            else NO_ANALYSIS
        )
        params = HybridParams(
            qvec=qvec,
            match_tsq=analysis.match_tsq,
            headline_tsq=analysis.headline_tsq,
            rank_lexemes=analysis.rank_lexemes,
            rank_weights=analysis.rank_weights,
            rank_idf_weights=analysis.rank_idf_weights,
            names=list(analysis.names),
            typed_tsq=analysis.typed_tsq,
            wall_groups=wall_groups,
            source_acl_ids=source_acl_ids,
            policy_version=access.policy_version,
            doc_types=[d.strip().lower() for d in filters.doc_types] if filters.doc_types else None,
            sources=[s.strip().lower() for s in filters.sources] if filters.sources else None,
            matter_ids=list(filters.matter_ids) if filters.matter_ids else None,
            modified_from=filters.modified_from,
            modified_to=filters.modified_to,
            session_matter_id=session.narrow_to,
            use_dense=use_dense,
            use_sparse=use_sparse,
            dense_weight=w_dense,
            sparse_weight=w_sparse,
            rrf_k=o.rrf_k or settings.rrf_k,
            k=request.k,
            dense_candidates=dense_candidates,
            sparse_candidates=sparse_candidates,
            sparse_impact=False,
            sparse_sum=False,
            sparse_group_index=plan.sparse_group_index,
            sparse_gin=True,
            collapse=request.collapse == "document",
        )
        websearch = analysis.typed_syntax  # read from the question with its analysis
        params = sparse_form(params, analysis, websearch=websearch, allowed_rows=plan.allowed_rows)
        try:
            found, strategy = _execute(conn, plan, params)
            rerun = ""
            if not use_dense and _sparse_short(found, request.k, analysis, params):
                # The match budget, the common-lexeme guard or the ranking limit may have cut
                # matches the person may see: a full top-k wins over speed here.
                full = analyze_configured(
                    conn,
                    request.query,
                    wall_groups=wall_groups,
                    source_acl_ids=source_acl_ids,
                    full=True,
                )
                params = sparse_form(
                    params, full, websearch=websearch, allowed_rows=plan.allowed_rows
                )
                found, strategy = _execute(conn, plan, params)
                rerun = "+full-sparse"
            while _collapsed_short(found, request.k, params):
                # one document's chunks filled a leg's depth and left others out: deeper
                params = replace(
                    params,
                    dense_candidates=4 * params.dense_candidates,
                    sparse_candidates=4 * params.sparse_candidates,
                )
                plan = choose_plan(
                    settings, sizes.allowed, sizes.total, params.dense_candidates, request.filters
                )
                found, strategy = _execute(conn, plan, params)
            strategy += rerun
        except StalePolicy as stale:
            at_least = stale.seen
            continue
        took_ms = round((time.perf_counter() - started) * 1000, 2)
        shown = session.matter_id is None or (
            repository.bound_matter_group(conn, session.matter_id) in access.wall_groups
        )
        return SearchResult(
            uuid.uuid4(),
            access.policy_version,
            took_ms,
            strategy,
            found.hits,
            access,
            session,
            at,
            query_model,
            binding_shown=shown,
        )
    # not reached while the last attempt holds the version (a replica's snapshot cannot move
    # either); kept so that a change of that rule fails loudly instead of looping
    raise AppError(
        "policy_changing",
        "The access policy changed during every attempt of this search; try again.",
        503,
    )


def resolve_binding(conn: Connection, person_id: str, request: SearchIn) -> SessionBinding:
    if request.session_id is None:
        return SessionBinding()
    bound = repository.session_binding(conn, request.session_id, person_id)
    asked = request.session_matter_id
    if bound is None:
        # the first binding is the only change a session's binding ever makes: until this
        # transaction ends (after its audit row), no other search of the session binds it
        repository.lock_session(conn, request.session_id, person_id, exclusive=asked is not None)
        bound = repository.session_binding(conn, request.session_id, person_id)
    if asked is not None and bound is not None and asked != bound:
        # rebinding would let one session mix two matters, which binding exists to prevent
        raise Conflict(
            "session_bound",
            "This session is bound to another matter; start a new session for this one.",
            {"session_id": request.session_id},
        )
    matter_id = asked or bound
    if matter_id is None:
        return SessionBinding(request.session_id)
    return SessionBinding(
        request.session_id,
        matter_id,
        "widened" if request.session_widen else "bound",
        bound_before=bound,
    )


def analyze_query(
    conn: Connection,
    query: str,
    common_df: float,
    match_budget: int,
    *,
    wall_groups: str | list[str],
    source_acl_ids: list[str],
    synonym_weight: float = 1.0,
    rank_lexeme_limit: int = RANK_LEXEME_LIMIT,
) -> QueryAnalysis:
    """The sparse leg's inputs for ``query``. Every statistic it weighs (document
    frequencies, the corpus size) is summed over the access keys the person may see:
    ``wall_groups`` (a list or its text[] literal) and ``source_acl_ids``."""
    return repository.analyze_query(
        conn,
        query=query,
        wall_groups=wall_groups,
        source_acl_ids=source_acl_ids,
        common_df=common_df,
        match_budget=match_budget,
        rank_lexeme_limit=rank_lexeme_limit,
        synonym_weight=synonym_weight,
    )


def analyze_configured(
    conn: Connection,
    query: str,
    *,
    wall_groups: str | list[str],
    source_acl_ids: list[str],
    full: bool = False,
) -> QueryAnalysis:
    """``analyze_query`` with the bounds a search runs with; ``full``: without the cut of
    common lexemes, the match budget and the ranking limit (a sparse search came back short)."""
    return analyze_query(
        conn,
        query,
        1.0 if full else SPARSE_COMMON_DF,
        1 << 62 if full else SPARSE_MATCH_BUDGET,
        wall_groups=wall_groups,
        source_acl_ids=source_acl_ids,
        synonym_weight=SYNONYM_WEIGHT,
        rank_lexeme_limit=1 << 30 if full else RANK_LEXEME_LIMIT,
    )


def sparse_form(
    params: HybridParams, analysis: QueryAnalysis, *, websearch: bool, allowed_rows: int
) -> HybridParams:
    """``params`` with the sparse leg's inputs from ``analysis`` and its form for this question
    (the comment on SPARSE_FILTER_FIRST_MAX): which documents it scores, decided from the rows
    the person may see and the request alone."""
    # a rare match among the allowed rows, and few allowed rows (SPARSE_ROW_TEST_*): filter
    # first reads the match from the GIN index unless it tests each of few allowed rows
    rare = analysis.rank_df * SPARSE_ROW_TEST_MIN_SHARE < allowed_rows
    few_rows = allowed_rows <= SPARSE_ROW_TEST_MAX_ROWS
    params = replace(
        params,
        match_tsq=analysis.match_tsq,
        headline_tsq=analysis.headline_tsq,
        rank_lexemes=analysis.rank_lexemes,
        rank_weights=analysis.rank_weights,
        rank_idf_weights=analysis.rank_idf_weights,
        sparse_impact=False,
        sparse_sum=False,
        sparse_gin=rare or not few_rows,
    )
    if websearch or not params.use_sparse:
        return params
    few = analysis.rank_df <= SPARSE_FILTER_FIRST_MAX
    narrowed = (
        params.doc_types,
        params.sources,
        params.matter_ids,
        params.modified_from,
        params.modified_to,
        params.session_matter_id,
    )
    if any(x is not None for x in narrowed):
        return replace(params, match_tsq=analysis.rank_tsq) if few else params
    if few and (rare or few_rows):
        return replace(params, match_tsq=analysis.rank_tsq)
    return replace(
        params,
        match_tsq=analysis.rank_tsq,
        sparse_impact=True,
        sparse_sum=analysis.rank_df <= SPARSE_SUM_MAX_DF
        or len(analysis.rank_lexemes) > SPARSE_IMPACT_MAX_LEXEMES,
    )


def _sparse_short(found: HybridRows, k: int, analysis: QueryAnalysis, params: HybridParams) -> bool:
    """Short, and the budgeted match (not every ranking lexeme) decided what was scored, or
    lexemes past RANK_LEXEME_LIMIT were neither ranked nor matched."""
    cut = analysis.matched_lexeme_count < analysis.lexeme_count
    budgeted = cut and params.match_tsq != analysis.rank_tsq
    unranked = len(analysis.rank_lexemes) < analysis.lexeme_count
    return len(found.hits) < k and (budgeted or unranked)


def _collapsed_short(found: HybridRows, k: int, p: HybridParams) -> bool:
    """Collapsed, fewer than k documents, and a leg stopped at its depth: the chunks past it
    may hold the documents it lacks (invariant 3)."""
    dense_full = p.use_dense and found.dense_count >= p.dense_candidates
    sparse_full = p.use_sparse and found.sparse_count >= p.sparse_candidates
    return p.collapse and len(found.hits) < k and (dense_full or sparse_full)


def _execute(conn: Connection, plan: Plan, params: HybridParams) -> tuple[HybridRows, str]:
    strategy = plan.strategy if params.use_dense else "none"
    if params.sparse_impact:
        strategy += "+postings" if params.sparse_sum else "+impact"
    hnsw = params.use_dense and plan.strategy == "hnsw"
    if not hnsw:
        found = repository.run_hybrid(conn, "exact", params)
    else:
        scan = HnswScan(plan.ef_search, plan.max_scan_tuples)
        found = repository.run_hybrid(conn, "hnsw", params, scan)
    if found.policy_version_seen != params.policy_version:
        raise StalePolicy(found.policy_version_seen)
    if hnsw:
        expected = min(params.dense_candidates, plan.allowed_rows)
        if found.dense_count < expected:
            log.info(
                "hnsw under-returned; exact fallback",
                extra={"got": found.dense_count, "expected": expected},
            )
            found = repository.run_hybrid(conn, "exact", params)
            strategy = strategy.replace("hnsw", "hnsw->exact", 1)
    return found, strategy


def _audited_results(hits: list[repository.Hit]) -> list[chain.RetrievedChunk]:
    """Every chunk the response names (invariant 4): each hit at its rank (sub_rank 0) and,
    under it, the other sections a collapsed search lists with it (sub_rank 1, 2, ... in
    the listed order). Their ids, headings and pages reach the caller, so "who saw chunk X"
    and the replica fence must cover them; their text does not, so the grounding gate
    counts only sub_rank 0 (sql/gates.sql)."""
    results: list[chain.RetrievedChunk] = []
    for rank, hit in enumerate(hits, start=1):
        results.append(
            chain.RetrievedChunk(
                rank, hit.chunk_id, hit.matter_id, hit.content_sha256, float(hit.score)
            )
        )
        results.extend(
            chain.RetrievedChunk(
                rank,
                section["chunk_id"],
                section["matter_id"],
                section["content_sha256"],
                float(section["score"]),
                sub_rank,
            )
            for sub_rank, section in enumerate(hit.other_sections or [], start=1)
        )
    return results


def _audit_row(
    principal: Principal, request: SearchIn, found: SearchResult, purpose: chain.Purpose
) -> tuple[chain.Retrieval, list[chain.RetrievedChunk]]:
    """The retrieval audit row and its results (the chain's input, app/audit/chain.py)."""
    access = found.access
    session = found.session
    filters = request.filters.model_dump(mode="json", exclude_none=True) if request.filters else {}
    entry = chain.Retrieval(
        retrieval_id=found.retrieval_id,
        at=found.at,
        person_id=principal.person_id,
        roles=sorted(principal.roles),
        purpose=purpose,
        query=request.query,
        mode=request.mode,
        k=request.k,
        filters=filters,
        allowed_wall_groups=list(access.wall_groups),
        source_principals=list(access.principals),
        policy_version=access.policy_version,
        model=request.model,
        prompt_version=request.prompt_version,
        strategy=found.strategy,
        took_ms=found.took_ms,
        result_count=len(found.rows),
        session_id=session.session_id,
        session_matter_id=session.matter_id,
        session_scope=session.scope,
        query_model=found.query_model,
    )
    return entry, _audited_results(found.rows)


def _count_search(resources: Resources, request: SearchIn, result: SearchResult) -> None:
    metrics = resources.metrics
    if metrics is not None:
        metrics.searches.labels(request.mode, result.strategy).inc()


@contextmanager
def _audit_unavailable_on_error() -> Iterator[None]:
    """A database error while appending the audit row: 503, and the search returns nothing."""
    try:
        yield
    except DBAPIError as exc:
        chain.forget_stored_sets()
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


def choose_plan(
    settings: Settings, allowed: int, total: int, dense_candidates: int, filters: Filters | None
) -> Plan:
    total = max(total, 1)
    fraction = allowed / total
    narrow_filter = filters is not None and bool(filters.matter_ids)
    # a large allowed set: the btree would read most of the table for the sparse leg, and
    # planning its = ANY over hundreds of groups costs tens of ms (docs/latency-sql.md)
    group_index = fraction <= settings.sparse_group_index_max_fraction
    # The form is chosen from what the person may see alone: it is named in the answer
    # (`strategy`) and decides exact or approximate ranking, so rows behind a wall must not
    # move it (invariant 12). The share of the corpus only sizes HNSW's scan and picks the
    # sparse leg's index, neither of which is in the answer or changes an exact result.
    if allowed <= settings.exact_max_rows or narrow_filter:
        return Plan("exact", allowed, total, sparse_group_index=group_index)
    ef = min(1000, max(settings.hnsw_ef_search, 2 * dense_candidates))
    tuples = min(
        settings.hnsw_max_scan_tuples_cap,
        max(20_000, math.ceil(4 * dense_candidates / max(fraction, 1e-6))),
    )
    return Plan("hnsw", allowed, total, ef, tuples, sparse_group_index=group_index)


def _weights(settings: Settings, mode: str) -> tuple[float, float]:
    """The legs' RRF weights; a leg whose weight is 0 does not run (it could add nothing but
    zero-score filler after the other leg's hits)."""
    if mode == "dense":
        return 1.0, 0.0
    if mode == "sparse":
        return 0.0, 1.0
    return settings.dense_weight, settings.sparse_weight


def needs_query_vector(settings: Settings, request: SearchIn) -> bool:
    """Whether the search runs its dense leg, so the question must be encoded first."""
    return _weights(settings, request.mode)[0] > 0


def embed_query(embedder: Embedder, query: str, person_id: str | None = None) -> str:
    return vector_literal(embedder.embed_query(query, caller=person_id))


def query_vector(resources: Resources, person_id: str, request: SearchIn) -> str | None:
    """The question's vector, encoded before any transaction opens (no connection waits on
    the model), or this person's vector of the same question asked lately; None when no
    dense leg runs."""
    if not needs_query_vector(resources.settings, request):
        return None
    embedder = resources.require_embedder()
    cache = resources.query_vectors
    question = repository.meant(request.query)
    found = cache.get(person_id, embedder.model_id, question)
    if found is None:
        found = embed_query(embedder, question, person_id)
        cache.put(person_id, embedder.model_id, question, found)
    return found


def to_response(result: SearchResult) -> dict[str, Any]:
    results = []
    for rank, h in enumerate(result.rows, start=1):
        results.append(
            {
                "chunk_id": h.chunk_id,
                "rank": rank,
                "score": round(float(h.score), 6),
                "ranks": {"dense": h.dense_rank, "sparse": h.sparse_rank, "named": h.named_rank},
                "document": {
                    "source": h.source,
                    "external_id": h.external_id,
                    "title": h.title,
                    "doc_type": h.doc_type,
                    "modified_at": h.modified_at,
                },
                "matter_id": h.matter_id,
                "client_id": h.client_id,
                "section_path": h.section_path,
                "page_from": h.page_from,
                "page_to": h.page_to,
                "text": h.body,
                "snippet": h.snippet,
                "content_sha256": h.content_sha256,
                **({"other_sections": h.other_sections} if h.other_sections is not None else {}),
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
                "session_matter_id": result.session.matter_id if result.binding_shown else None,
                "session_scope": result.session.scope,
            }
            if result.session.session_id is not None
            else {}
        ),
    }
