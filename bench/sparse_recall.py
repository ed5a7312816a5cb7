"""Brute-force reference for the sparse leg's recall (issue 29, point 3).

The shipped sparse leg (sql/search.sql, ``sparse_docs`` to ``sparse``) scores document parts
from their impact postings (sql/functions/search_postings.v1.sql): every part holding a
ranking lexeme when few chunks do, else the best parts read in impact order with a stop
(the threshold algorithm). The reference here is the SAME formula computed from the chunks
themselves, not from the postings: every chunk the person may see that holds one of the
question's ranking lexemes, grouped into parts (document, wall group, source ACL, matter),
each part's term frequencies and length counted from its chunks, BM25 with k1 3, b 0.9 and
the reference length 2,000, the lexemes weighted by the analysis' ``rank_idf_weights``;
inside a part, chunks by their own saturated weight, chunk n getting the part's score / n.
It takes the analysis the search ran with (``analyze_configured``), so the ranking lexemes
are the shipped ones; ``full=True`` passes the analysis without the match budget and the
common-lexeme cut.

It is one statement of its own (the product's SQL is not touched) and it leaves out the
caller's narrowing filters (doc types, sources, matters, dates, a bound session's matter):
the bench and the tests search without them. Row-level security applies when the caller's
connection is the app role with the person's settings (``app.walls.access.apply``); the
access predicate is written out here as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, text

from app.db.engine import Database
from app.resources import Resources
from app.search.repository import QueryAnalysis
from app.search.service import analyze_configured
from app.walls.access import access_for, apply

REFERENCE_SQL = """-- bench.sparse_reference
WITH pending AS (
    SELECT coalesce(array_agg(matter_id), '{}') AS matter_ids FROM retag_pending
), q AS (
    SELECT * FROM unnest(CAST(:rank_lexemes AS text[]), CAST(:rank_weights AS float8[]),
                         CAST(:rank_idf_weights AS float8[])) AS q(lexeme, w, idf_w)
), hits AS MATERIALIZED (
    -- every visible chunk holding a ranking lexeme (the GIN index finds them all)
    SELECT c.chunk_id, c.document_id, c.wall_group_id, c.source_acl_id,
           coalesce(c.matter_id, '') AS matter_id, c.body_tsv
    FROM chunks c
    WHERE c.body_tsv @@ CAST(:rank_tsq AS tsquery)
      AND c.wall_group_id = ANY(CAST(:wall_groups AS text[]))
      AND c.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))
      AND coalesce(c.matter_id, '') <> ALL (CAST((SELECT matter_ids FROM pending) AS text[]))
      AND NOT c.suppressed
), matching AS MATERIALIZED (
    -- with those lexemes' frequencies
    SELECT h.chunk_id, h.document_id, h.wall_group_id, h.source_acl_id, h.matter_id,
           u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf
    FROM hits h, unnest(h.body_tsv) AS u
    WHERE u.lexeme IN (SELECT lexeme FROM q)
), parts AS (
    -- each part's length: all its visible chunks, those without the words too
    SELECT c.document_id, c.wall_group_id, c.source_acl_id,
           coalesce(c.matter_id, '') AS matter_id, sum(c.token_count) AS dl
    FROM chunks c
    WHERE c.document_id IN (SELECT document_id FROM hits)
      AND c.wall_group_id = ANY(CAST(:wall_groups AS text[]))
      AND c.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))
      AND coalesce(c.matter_id, '') <> ALL (CAST((SELECT matter_ids FROM pending) AS text[]))
      AND NOT c.suppressed
    GROUP BY 1, 2, 3, 4
), part_tf AS (
    SELECT document_id, wall_group_id, source_acl_id, matter_id, lexeme, sum(tf) AS tf
    FROM matching GROUP BY 1, 2, 3, 4, 5
), scores AS (
    SELECT t.document_id, t.wall_group_id, t.source_acl_id, t.matter_id,
           -- to 1e-9, as the statement compares them (ties broken alike)
           round(sum(q.idf_w * CAST(CAST(t.tf * 4.0 / (t.tf + 3.0 * (0.1 + 0.9
                                                                 * greatest(p.dl, 1) / 2000.0))
                                         AS real) AS float8)) * 1e9) / 1e9 AS score
    FROM part_tf t JOIN q ON q.lexeme = t.lexeme
    JOIN parts p USING (document_id, wall_group_id, source_acl_id, matter_id)
    GROUP BY 1, 2, 3, 4
), own AS (
    SELECT chunk_id, document_id, wall_group_id, source_acl_id, matter_id,
           round(sum(q.w * m.tf / (m.tf + 1.2)) * 1e9) / 1e9 AS weight
    FROM matching m JOIN q USING (lexeme)
    GROUP BY 1, 2, 3, 4, 5
), ranked AS (
    SELECT o.chunk_id,
           s.score / row_number() OVER (
               PARTITION BY o.document_id, o.wall_group_id, o.source_acl_id, o.matter_id
               ORDER BY o.weight DESC, o.chunk_id) AS relevance
    FROM own o JOIN scores s USING (document_id, wall_group_id, source_acl_id, matter_id)
), top AS (
    SELECT * FROM ranked ORDER BY relevance DESC, chunk_id LIMIT :k
)
SELECT (SELECT count(DISTINCT chunk_id) FROM matching) AS pool_size,
       -- the order the search's sparse_ranked gives its rows
       (SELECT array_agg(chunk_id ORDER BY relevance DESC, chunk_id) FROM top) AS top_ids,
       (SELECT array_agg(relevance ORDER BY relevance DESC, chunk_id) FROM top) AS top_relevance
"""


@dataclass(frozen=True)
class Reference:
    """The brute-force top-k: chunk ids best first, their relevance, and how many chunks the
    person may see hold a ranking lexeme."""

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
    """The top ``k`` chunks of the sparse leg's BM25 over document parts, computed from every
    visible chunk holding one of ``analysis.rank_lexemes``. Brute force over common words
    takes seconds at a million chunks: no statement timeout for it, and hash joins only (its
    CTEs carry no row estimates; a nested loop over 300,000 matching chunks ran for over 17
    minutes at 1M)."""
    conn.execute(text("SET LOCAL statement_timeout = 0"))
    conn.execute(text("SET LOCAL enable_nestloop = off"))
    row = (
        conn.execute(
            text(REFERENCE_SQL),
            {
                "rank_tsq": analysis.rank_tsq,
                "rank_lexemes": list(analysis.rank_lexemes),
                "rank_weights": list(analysis.rank_weights),
                "rank_idf_weights": list(analysis.rank_idf_weights),
                "wall_groups": list(wall_groups),
                "source_acl_ids": list(source_acl_ids),
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
    """The brute-force top-k of the sparse leg's formula over every chunk ``person`` may
    see, with the analysis the service runs (``full``: without the match budget and the
    common-lexeme cut), as the app role under the person's row-level security."""
    resolver = resources.require_resolver()
    with database.transaction() as conn:
        access = access_for(conn, resolver.resolve(database, person, datetime.now(UTC)))
        apply(conn, access)
        groups, acls = list(access.wall_groups), list(access.source_acl_ids)
        analysis = analyze_configured(
            conn,
            query,
            wall_groups=groups,
            source_acl_ids=acls,
            full=full,
        )
        return reference_top(conn, wall_groups=groups, source_acl_ids=acls, analysis=analysis, k=k)
