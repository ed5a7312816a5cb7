"""The hybrid statement (sql/search.sql, search.hybrid) is ONE text for both dense forms: the
form is the bound parameter :dense_hnsw, which the planner reads as a constant (the search
statement is never prepared), so each plan is one form's. The text checks need no database;
the plans are checked on the migrated template: the HNSW index for the HNSW form only, the
other form's path absent from the plan, and the visibility rule inlined (tests/foundation/
test_layers.py checks that every read of chunks carries it)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.pool import NullPool

from app.db import sqlfiles
from app.db.engine import sqlalchemy_url
from app.search.repository import BLOCKS, DenseForm
from tests import pg
from tests.conftest import DbHandle
from tests.search.statement_params import hybrid_explain_params

BLOCK = "search.hybrid"
_CTE = re.compile(r"^(?:WITH|\),) (\w+) AS (?:MATERIALIZED )?\(", re.MULTILINE)
RULE = "ewall_chunk_visible("
# what every leg carries besides the rule: the policy version its sets were resolved at, and
# the caller's narrowing filters
LEG_PREDICATES = (
    "AND (SELECT version FROM policy) = :policy_version",
    # the caller's filters, one rule (sql/functions/chunk_narrowed.v1.sql)
    "AND ewall_chunk_narrowed(c.doc_type, c.source, c.matter_id, c.modified_at,",
    "CAST(:doc_types AS text[]), CAST(:sources AS text[]),",
    "CAST(:matter_ids AS text[]), CAST(:session_matter_id AS text),",
    "CAST(:modified_from AS timestamptz),",
    "CAST(:modified_to AS timestamptz))",
)
# the rule's last argument in each leg: may the btree on wall_group_id serve the group test
GROUP_INDEX = {
    "dense": "NOT CAST(:dense_hnsw AS boolean))",
    "sparse_docs": "CAST(:sparse_group_index AS boolean))",
    "named": "(SELECT ewall_retag_pending()), false)",
}
DENSE_DISTANCE = (
    "CASE WHEN CAST(:dense_hnsw AS boolean) THEN c.embedding <=> CAST(:qvec AS vector)\n"
    "                ELSE (c.embedding <=> CAST(:qvec AS vector)) + 0 END AS distance"
)
DENSE_ORDER = (
    "ORDER BY distance, CASE WHEN CAST(:dense_hnsw AS boolean) THEN NULL ELSE c.chunk_id END"
)


def _sections(sql: str) -> dict[str, str]:
    """The statement cut at its CTEs: {<cte>: text, ..., "select": the final SELECT}."""
    found = list(_CTE.finditer(sql))
    assert found, "no CTEs found"
    out: dict[str, str] = {}
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else None
        out[m.group(1)] = sql[m.start() : end]
    last = out[found[-1].group(1)]
    cut = last.index("\n)\nSELECT ") + 3
    out[found[-1].group(1)], out["select"] = last[:cut], last[cut:]
    return out


def test_both_dense_forms_run_the_one_statement_text() -> None:
    assert BLOCKS["hybrid"] == BLOCK
    blocks = sqlfiles.load_all()
    assert not {"search.hybrid_exact", "search.hybrid_hnsw"} & set(blocks)


def test_the_dense_form_is_chosen_by_folding_constants_not_by_copies() -> None:
    sections = _sections(sqlfiles.raw(BLOCK))
    assert {"policy", "dense", "sparse_docs", "sparse", "fused", "fused_doc", "top"} <= set(
        sections
    )
    dense = sections["dense"]
    assert dense.count("FROM chunks c") == 1  # one scan of chunks, for both forms
    assert dense.count(DENSE_DISTANCE) == 1 and dense.count(DENSE_ORDER) == 1
    # :dense_hnsw appears nowhere else: the other legs are the same for both forms
    others = "".join(v for k, v in sections.items() if k != "dense")
    assert ":dense_hnsw" not in others


def test_every_leg_carries_the_rule_and_the_filters() -> None:
    sections = _sections(sqlfiles.raw(BLOCK))
    for leg in ("dense", "sparse_docs", "named"):
        assert sections[leg].count(RULE) == 1, leg
        assert GROUP_INDEX[leg] in sections[leg], leg
        for predicate in LEG_PREDICATES:
            assert predicate in sections[leg], (leg, predicate)


POSTINGS_KEYS = (
    "p.wall_group_id = ANY(CAST(:wall_groups AS text[]))",
    "p.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))",
    "p.matter_id <> ALL(CAST((SELECT ewall_retag_pending()) AS text[]))",
)


def test_the_postings_are_read_for_the_persons_keys_in_the_statement_itself() -> None:
    """Row-level security on search_postings is only the backstop: where the sparse leg sums
    the postings it tests the person's keys and the matters pending re-tag itself, and the
    two functions that read them are given both."""
    parts = _sections(sqlfiles.raw(BLOCK))["sparse_parts"]
    assert parts.count("JOIN search_postings AS p") == 1
    for predicate in POSTINGS_KEYS:
        assert predicate in parts, predicate
    for function in ("ewall_sparse_part_scores(", "ewall_sparse_impact_topk("):
        call = parts[parts.index(function) :]
        call = call[: call.index(") AS s")]
        assert "CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[])" in call, function
        assert "(SELECT ewall_retag_pending())" in call, function


def test_the_postings_sum_reads_only_the_persons_part_of_each_list(db: DbHandle) -> None:
    """Summing the visible postings descends the access-key index once per allowed key
    (migration 20261204_0048), an index-only scan whose index condition holds the person's
    wall groups and source ACLs: it never reads, and then drops, the rest of a common
    lexeme's list, as its scan of the impact index with the keys as a filter did. Planned as
    the application's role (row-level security on) over postings of 500 wall groups, in a
    transaction that is rolled back."""
    engine = create_engine(sqlalchemy_url(db.superuser_url), poolclass=NullPool)
    try:
        with engine.connect() as su:
            su.execute(
                text(
                    "INSERT INTO search_postings (lexeme, document_id, wall_group_id,"
                    " source_acl_id, matter_id, tf, n_tokens, impact)"
                    " SELECT 'w' || (i % 20), i, 'wg-' || (i % 500), 'public', '', 1, 100, 0.5"
                    " FROM generate_series(1, 50000) AS i"
                )
            )
            su.execute(text("ANALYZE search_postings"))
            su.execute(text("SELECT set_config('role', :role, true)"), {"role": pg.APP_ROLE})
            plan = "\n".join(
                str(r[0])
                for r in su.execute(
                    text("EXPLAIN (VERBOSE) " + sqlfiles.raw(BLOCK)),
                    hybrid_explain_params(
                        hnsw=False,
                        use_dense=False,
                        sparse_impact=True,
                        sparse_sum=True,
                        rank_lexemes=["w1", "w2"],
                        rank_weights=[1.0, 1.0],
                        rank_idf_weights=[2.0, 2.0],
                        wall_groups=["wg-1", "wg-2"],
                    ),
                )
            )
            su.rollback()
    finally:
        engine.dispose()
    start = plan.index("CTE sparse_parts")
    parts = plan[start : plan.index("CTE sparse_top", start)]
    # an index-only scan where the visibility map says the pages are all visible (these rows
    # are not yet), a bitmap scan of the same index here: the index condition is the point
    found = re.search(
        r"(?:Index Only Scan using|Bitmap Index Scan on) ix_search_postings_key", parts
    )
    assert found, parts
    cond = parts[found.end() :]
    cond = cond[cond.index("Index Cond:") :].splitlines()[0]
    assert "wall_group_id = ANY" in cond, parts
    assert "source_acl_id = ANY" in cond, parts
    assert "ix_search_postings_impact" not in parts, parts


def test_collapse_is_a_bind_parameter() -> None:
    sql = sqlfiles.raw(BLOCK)
    assert "/*collapse*/" not in sql
    assert sql.count("CAST(:collapse AS boolean)") == 2


def _cte_plan(plan: str, cte: str, following: str) -> str:
    """The plan of one CTE alone: from its header to the next CTE's (``following``)."""
    start = plan.index(f"CTE {cte}\n")
    return plan[start : plan.index(f"CTE {following}\n", start)]


@pytest.mark.parametrize("form", ["exact", "hnsw"])
def test_each_form_plans_its_own_dense_path_with_the_rule_inlined(
    db: DbHandle, form: DenseForm
) -> None:
    """HNSW: an ordered scan of the HNSW index, the group test a filter. Exact: the btree on
    wall_group_id and a top-N sort, no HNSW. The rule leaves no function call in the plan
    (inlined: its tests are the scan's own clauses). Either form computes a row's distance
    once: the ORDER BY is the output column, not a second expression beside it."""
    with db.database.transaction() as conn:
        # the test database's chunks table is empty; once a migration has ANALYZEd it, a
        # sequential scan is the cheapest plan for anything, so the index paths are asked
        # for as a populated table would choose them
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        if form == "hnsw":
            conn.execute(
                sqlfiles.query("search.hnsw_settings"),
                {"ef_search": 100, "max_scan_tuples": 20_000},
            )
        plan = "\n".join(
            str(r[0])
            for r in conn.execute(
                text("EXPLAIN (VERBOSE) " + sqlfiles.raw(BLOCK)),
                hybrid_explain_params(hnsw=form == "hnsw"),
            )
        )
        conn.rollback()
    assert "ewall_chunk_visible" not in plan, plan
    dense = _cte_plan(plan, "dense", "sparse_docs")
    assert dense.count("on public.chunks") == 1, dense
    outputs = [line for line in dense.splitlines() if line.strip().startswith("Output:")]
    assert max(line.count("<=>") for line in outputs) == 1, dense
    if form == "hnsw":
        assert "Index Scan using ix_chunks_embedding_hnsw" in dense, dense
        assert re.search(r"\(c(_\d+)?\.wall_group_id \|\| ''::text\) = ANY", dense), dense
        assert "ix_chunks_wall_group_id" not in dense, dense
    else:
        assert "ix_chunks_embedding_hnsw" not in dense, dense
        assert "ix_chunks_wall_group_id" in dense, dense
        assert "|| ''::text" not in dense, dense


def test_the_form_parameter_is_not_a_search_parameter() -> None:
    """HybridParams holds what the search asks; the form is run_hybrid's own argument."""
    from app.search.repository import HybridParams

    assert "dense_hnsw" not in {f.name for f in dataclasses.fields(HybridParams)}


def _exact_form_plan(db: DbHandle, **override: Any) -> str:
    """EXPLAIN (VERBOSE) of the statement in the exact dense form with these parameters; the
    index paths asked for as a populated table would choose them (the test table is empty)."""
    with db.database.transaction() as conn:
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(
            str(r[0])
            for r in conn.execute(
                text("EXPLAIN (VERBOSE) " + sqlfiles.raw(BLOCK)),
                hybrid_explain_params(hnsw=False, **override),
            )
        )
        conn.rollback()
    return plan


@pytest.mark.parametrize(("gin", "group_index"), [(True, False), (False, True), (False, False)])
def test_the_sparse_match_uses_the_gin_index_only_when_asked(
    db: DbHandle, gin: bool, group_index: bool
) -> None:
    """Filter first: with :sparse_gin the match may be read from the GIN index (here the
    group test is a filter, so it must be); without it the GIN index is never read, and the
    match is a test on each allowed row, read through the btree on wall_group_id when the
    group test may use it (a small allowed set: the GIN scan of common words costs the same
    at any selectivity)."""
    plan = _exact_form_plan(db, sparse_gin=gin, sparse_group_index=group_index)
    sparse = _cte_plan(plan, "sparse_docs", "sparse_parts")
    assert ("ix_chunks_body_tsv" in sparse) is gin, sparse
    if not gin:
        assert "IS TRUE" in sparse, sparse
        assert ("ix_chunks_wall_group_id" in sparse) is group_index, sparse


@pytest.mark.parametrize("sparse_sum", [False, True])
def test_the_best_parts_chunks_are_read_by_document_alone(db: DbHandle, sparse_sum: bool) -> None:
    """From the postings, a best part is one document's chunks in one access key: they are
    read through the document's index entries (about 20 rows), never ANDed with the btree on
    wall_group_id, which reads a whole group's entries for every part (1,000 rows per part at
    1M chunks: about 4.6 of 30 ms warm at 10% allowed)."""
    plan = _exact_form_plan(db, sparse_impact=True, sparse_sum=sparse_sum)
    stage = _cte_plan(plan, "sparse_rows", "sparse")  # the best parts' chunks
    assert "ix_chunks_document_id" in stage, stage
    assert "ix_chunks_wall_group_id" not in stage, stage


def _analysis_plan(conn: Connection) -> str:
    return "\n".join(
        str(r[0])
        for r in conn.execute(
            text("EXPLAIN " + sqlfiles.raw("search.analyze_query")),
            {
                "query": "octrooi inbreuk",
                "alt_operators": [""],
                "alt_words": ["octrooi inbreuk"],
                "wall_groups": ["wg-a", "wg-b"],
                "source_acl_ids": ["public"],
                "websearch": False,
                "common_df": 0.25,
                "match_budget": 20_000,
                "rank_lexeme_limit": 16,
                "synonym_weight": 0.5,
            },
        )
    )


def test_the_query_analysis_reads_lexeme_counts_from_the_key_alone(db: DbHandle) -> None:
    """A lexeme's per-key counts are summed from pk_search_key_lexeme_stats by an index-only
    scan (migration 20261203_0046: the count is in the key's leaf), not from one heap page
    per access key; with the count outside the key (as before it) the same plan reads the
    heap."""
    with db.database.transaction() as conn:
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = _analysis_plan(conn)
    assert "Index Only Scan using pk_search_key_lexeme_stats" in plan, plan
    # the key as it was, in a transaction that is rolled back (the owner may alter it)
    engine = create_engine(sqlalchemy_url(db.superuser_url), poolclass=NullPool)
    try:
        with engine.connect() as su:
            su.execute(text("SET LOCAL enable_seqscan = off"))
            su.execute(
                text(
                    "ALTER TABLE search_key_lexeme_stats DROP CONSTRAINT pk_search_key_lexeme_stats"
                )
            )
            su.execute(
                text(
                    "ALTER TABLE search_key_lexeme_stats ADD CONSTRAINT pk_search_key_lexeme_stats"
                    " PRIMARY KEY (lexeme, wall_group_id, source_acl_id)"
                )
            )
            without = _analysis_plan(su)
            su.rollback()
    finally:
        engine.dispose()
    assert "Index Only Scan using pk_search_key_lexeme_stats" not in without, without
    assert "pk_search_key_lexeme_stats" in without, without
