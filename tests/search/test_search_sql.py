"""The two named forms of the hybrid statement (sql/search.sql) may differ in the dense CTE
only: the sparse leg, the fusion, the collapse and every wall predicate are the same text in
both, so the forms cannot drift apart. No database needed: this reads the SQL files."""

from __future__ import annotations

import re

from app.db import sqlfiles
from app.search.repository import HYBRID_BLOCKS

_CTE = re.compile(r"^(?:WITH|\),) (\w+) AS (?:MATERIALIZED )?\(", re.MULTILINE)
EXACT_ORDER = "ORDER BY (c.embedding <=> CAST(:qvec AS vector)) + 0, c.chunk_id"
HNSW_ORDER = "ORDER BY c.embedding <=> CAST(:qvec AS vector)"
# the predicates every leg carries: the person's allowed sets, no matter pending re-tag,
# nothing suppressed, the policy version the sets were resolved at, the caller's filters
WALL_PREDICATES = (
    "AND c.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))",
    "AND coalesce(c.matter_id, '') <> ALL (CAST((SELECT matter_ids FROM pending) AS text[]))",
    "AND NOT c.suppressed",
    "AND (SELECT version FROM policy) = :policy_version",
    "AND (CAST(:session_matter_id AS text) IS NULL",
    "AND (CAST(:matter_ids AS text[]) IS NULL OR c.matter_id = ANY(CAST(:matter_ids AS text[])))",
)
SPARSE_GROUP_PREDICATE = (
    "AND (CASE WHEN CAST(:sparse_group_index AS boolean) THEN c.wall_group_id\n"
    "                ELSE c.wall_group_id || '' END) = ANY(CAST(:wall_groups AS text[]))"
)


def _sections(sql: str) -> dict[str, str]:
    """The statement cut at its CTEs: {"head": comments, <cte>: text, ..., "select": ...}."""
    found = list(_CTE.finditer(sql))
    assert found, "no CTEs found"
    out = {"head": sql[: found[0].start()]}
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else None
        out[m.group(1)] = sql[m.start() : end]
    last = out[found[-1].group(1)]
    cut = last.index("\n)\nSELECT ") + 3
    out[found[-1].group(1)], out["select"] = last[:cut], last[cut:]
    return out


def _forms() -> tuple[dict[str, str], dict[str, str]]:
    return (
        _sections(sqlfiles.raw(HYBRID_BLOCKS["exact"])),
        _sections(sqlfiles.raw(HYBRID_BLOCKS["hnsw"])),
    )


def test_the_forms_share_everything_but_the_dense_cte() -> None:
    exact, hnsw = _forms()
    assert list(exact) == list(hnsw)
    assert {"policy", "pending", "dense", "sparse_pool", "sparse", "fused", "top"} <= set(exact)
    differing = {name for name in exact if name != "head" and exact[name] != hnsw[name]}
    assert differing == {"dense"}, differing


def test_the_dense_ctes_differ_only_in_order_and_the_hidden_group_predicate() -> None:
    """HNSW orders by the bare operator (index-usable) and hides its group predicate from the
    btree; nothing else about the dense leg may differ."""
    exact, hnsw = _forms()
    assert exact["dense"].count(EXACT_ORDER) == 1
    assert exact["dense"].count("AND c.wall_group_id = ANY(") == 1
    rewritten = (
        exact["dense"]
        .replace(EXACT_ORDER, HNSW_ORDER)
        .replace("AND c.wall_group_id = ANY(", "AND (c.wall_group_id || '') = ANY(")
    )
    assert hnsw["dense"] == rewritten
    # the sparse leg keeps its group predicate in both forms, index-usable when the caller
    # says so (a constant at planning time), a filter otherwise
    for form in (exact, hnsw):
        assert SPARSE_GROUP_PREDICATE in form["sparse_pool"]


def test_every_leg_of_both_forms_carries_the_wall_predicates() -> None:
    for form in _forms():
        for leg in ("dense", "sparse_pool"):
            for predicate in WALL_PREDICATES:
                assert predicate in form[leg], (leg, predicate)
            assert "c.wall_group_id" in form[leg] and ":wall_groups" in form[leg]


def test_collapse_is_a_bind_parameter_in_both_forms() -> None:
    for name in HYBRID_BLOCKS.values():
        sql = sqlfiles.raw(name)
        assert "/*collapse*/" not in sql
        assert sql.count("CAST(:collapse AS boolean)") == 2
