"""Brute-force reference for the sparse leg's recall (issue 29, point 3).

The shipped sparse leg (sql/search.sql, ``sparse_pool`` and ``sparse``) ranks at most
``SPARSE_RANK_CAP`` allowed matches: past the cap, whole documents in md5(document_id)
order, and the document frequencies ``ewall_sparse_document_rank`` counts are those of that
pool. The reference here is the SAME formula (the same function, the same k1, b, lexemes and
weights, the same access predicate) over EVERY allowed chunk that matches the question's
match query: no cap. Nothing else is lifted: it takes the analysis the search ran with
(``match_tsq``, ``rank_lexemes``, ``rank_weights`` from analyze_query), so the match budget
and the common-lexeme cut stay as shipped and the recall measured against it is the recall
of the leg as shipped, lost to the cap alone. A caller that wants the fully lifted reference
(no cap, no budget, no common-lexeme cut) passes the ``full=True`` analysis
(``app.search.service.analyze_configured``) instead.

It is one statement of its own (the product's SQL is not touched) and it leaves out the
caller's narrowing filters (doc types, sources, matters, dates, a bound session's matter):
the bench and the tests search without them. Row-level security applies when the caller's
connection is the app role with the person's settings (``app.walls.access.apply``); the
access predicate is written out here as well, as in the product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, text

from app.db.engine import Database
from app.resources import Resources
from app.search.repository import QueryAnalysis
from app.search.service import _WEBSEARCH, SPARSE_DOC_B, SPARSE_DOC_K1, analyze_configured
from app.walls.access import access_for, apply

REFERENCE_SQL = """-- bench.sparse_reference
WITH pending AS (
    SELECT coalesce(array_agg(matter_id), '{}') AS matter_ids FROM retag_pending
), pool AS MATERIALIZED (
    -- every allowed match: the shipped sparse_pool without its LIMIT (the rank cap)
    SELECT c.chunk_id, c.document_id, c.body_tsv
    FROM chunks c
    WHERE c.body_tsv @@ CAST(:match_tsq AS tsquery)
      AND c.wall_group_id = ANY(CAST(:wall_groups AS text[]))
      AND c.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))
      AND coalesce(c.matter_id, '') <> ALL (CAST((SELECT matter_ids FROM pending) AS text[]))
      AND NOT c.suppressed
)
SELECT (SELECT count(*) FROM pool) AS pool_size,
       -- the order the search's sparse_ranked gives its rows
       array_agg(r.chunk_id ORDER BY r.relevance DESC, r.chunk_id) AS top_ids,
       array_agg(r.relevance ORDER BY r.relevance DESC, r.chunk_id) AS top_relevance
FROM ewall_sparse_document_rank(
         ARRAY(SELECT chunk_id FROM pool ORDER BY chunk_id COLLATE "C"),
         ARRAY(SELECT document_id FROM pool ORDER BY chunk_id COLLATE "C"),
         ARRAY(SELECT ts_filter(setweight(body_tsv, 'A', CAST(:rank_lexemes AS text[])), '{a}')
               FROM pool ORDER BY chunk_id COLLATE "C"),
         CAST(:rank_lexemes AS text[]), CAST(:rank_weights AS float8[]),
         CAST(:k1 AS float8), CAST(:b AS float8), CAST(:k AS integer),
         CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[])) AS r
"""


@dataclass(frozen=True)
class Reference:
    """The brute-force top-k: chunk ids best first, their relevance, and how many allowed
    chunks matched (the pool the shipped leg caps at SPARSE_RANK_CAP)."""

    ids: list[str]
    relevance: list[float]
    pool_size: int


def reference_top(
    conn: Connection,
    *,
    wall_groups: Sequence[str],
    source_acl_ids: Sequence[str],
    analysis: QueryAnalysis,
    k: int,
) -> Reference:
    """The top ``k`` chunks of BM25 over documents (ewall_sparse_document_rank) with every
    allowed match of ``analysis.match_tsq`` in the pool."""
    row = (
        conn.execute(
            text(REFERENCE_SQL),
            {
                "match_tsq": analysis.match_tsq,
                "rank_lexemes": list(analysis.rank_lexemes),
                "rank_weights": list(analysis.rank_weights),
                "wall_groups": list(wall_groups),
                "source_acl_ids": list(source_acl_ids),
                "k1": SPARSE_DOC_K1,
                "b": SPARSE_DOC_B,
                "k": k,
            },
        )
        .mappings()
        .one()
    )
    return Reference(
        [str(x) for x in row["top_ids"] or []],
        [float(x) for x in row["top_relevance"] or []],
        int(row["pool_size"]),
    )


def recall_at(got: Sequence[str], reference: Sequence[str]) -> float:
    """|got ∩ reference| / |reference| (1.0 when the reference is empty)."""
    if not reference:
        return 1.0
    return len(set(got) & set(reference)) / len(reference)


def sparse_reference(
    resources: Resources, database: Database, person: str, query: str, *, k: int, full: bool
) -> Reference:
    """The brute-force top-k of the sparse leg's formula over every allowed match of
    ``person``, with the analysis the service runs (``full``: without the match budget and
    the common-lexeme cut), as the app role under the person's row-level security."""
    resolver = resources.require_resolver()
    with database.transaction() as conn:
        access = access_for(conn, resolver.resolve(database, person, datetime.now(UTC)))
        apply(conn, access)
        groups, acls = list(access.wall_groups), list(access.source_acl_ids)
        analysis = analyze_configured(
            conn,
            query,
            bool(_WEBSEARCH.search(query)),
            wall_groups=groups,
            source_acl_ids=acls,
            full=full,
        )
        return reference_top(conn, wall_groups=groups, source_acl_ids=acls, analysis=analysis, k=k)
