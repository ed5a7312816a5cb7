"""The search domain's SQL (sql/search.sql, sql/sessions.sql): the only module of
app/search that runs statements."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Connection

from app.db import sqlfiles

DenseForm = Literal["exact", "hnsw"]

# The two forms of the hybrid statement, one named block each (sql/search.sql).
HYBRID_BLOCKS: dict[DenseForm, str] = {
    "exact": "search.hybrid_exact",
    "hnsw": "search.hybrid_hnsw",
}
# The other per-search blocks, by name (bench.search swaps in an older revision's text to
# measure it beside the current one).
BLOCKS: dict[str, str] = {
    "analyze_query": "search.analyze_query",
    "group_sizes": "search.group_sizes",
}


@dataclass(frozen=True)
class GroupSizes:
    allowed: int
    total: int


@dataclass(frozen=True)
class Synonym:
    term: str
    synonym: str
    created_by: str | None
    created_at: datetime


def group_sizes(
    conn: Connection, wall_groups: str | list[str], source_acl_ids: list[str]
) -> GroupSizes:
    """Allowed rows (the person's access keys; an upper bound while a matter is pending
    re-tag) and the corpus size, from the statistics tables. ``wall_groups``: a list or its
    text[] literal (app/db/params.py)."""
    row = conn.execute(
        sqlfiles.prepared(BLOCKS["group_sizes"]),
        {"wall_groups": wall_groups, "source_acl_ids": source_acl_ids},
    ).one()
    return GroupSizes(int(row.allowed or 0), int(row.total or 0))


def analyze_query(conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
    """The sparse leg's inputs for one question (search.analyze_query)."""
    row = conn.execute(sqlfiles.prepared(BLOCKS["analyze_query"]), params).mappings().one()
    return dict(row)


def set_hnsw_scan(conn: Connection, *, ef_search: int, max_scan_tuples: int) -> None:
    """Transaction-local HNSW iterative-scan settings for the next statement."""
    conn.execute(
        sqlfiles.query("search.hnsw_settings"),
        {"ef_search": ef_search, "max_scan_tuples": max_scan_tuples},
    )


def run_hybrid(conn: Connection, form: DenseForm, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Run the hybrid statement in its exact or HNSW form; one dict per row."""
    rows = conn.execute(sqlfiles.query(HYBRID_BLOCKS[form]), params).mappings()
    return [dict(r) for r in rows]


def session_binding(conn: Connection, session_id: str, person_id: str) -> str | None:
    """The matter the person's session is bound to, if any."""
    bound = conn.execute(
        sqlfiles.query("sessions.session_binding"),
        {"session_id": session_id, "person_id": person_id},
    ).scalar_one_or_none()
    return None if bound is None else str(bound)


def list_synonyms(conn: Connection) -> list[Synonym]:
    rows = conn.execute(sqlfiles.query("search.list_synonyms"))
    return [Synonym(r.term, r.synonym, r.created_by, r.created_at) for r in rows]


def lexeme_counts(conn: Connection, term: str, synonym: str) -> tuple[int, int]:
    """How many searchable lexemes the term and the synonym have."""
    row = conn.execute(
        sqlfiles.query("search.lexeme_counts"), {"term": term, "synonym": synonym}
    ).one()
    return int(row.term_lexemes or 0), int(row.synonym_lexemes or 0)


def insert_synonym(conn: Connection, term: str, synonym: str, created_by: str) -> None:
    conn.execute(
        sqlfiles.query("search.insert_synonym"),
        {"term": term, "synonym": synonym, "created_by": created_by},
    )


def delete_synonym(conn: Connection, term: str, synonym: str) -> int:
    """Rows deleted (0 or 1)."""
    return int(
        conn.execute(
            sqlfiles.query("search.delete_synonym"), {"term": term, "synonym": synonym}
        ).rowcount
    )
