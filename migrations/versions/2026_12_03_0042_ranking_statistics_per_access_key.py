"""Ranking statistics per access key, so a search weighs only what its person may see.

Revision ID: 20261203_0042
Revises: 20261203_0041
Create Date: 2026-12-03

Invariant 12 (non-interference): what a person's search returns is a function of the rows
that person may see and of the query alone. The sparse leg's statistics were global:
``analyze_query`` read ``lexeme_stats.ndoc`` and ``corpus_stats.n_chunks`` (every chunk,
walled and suppressed ones included) for its IDF, its common-word cut, its match budget and
the lexemes it ranks; ``ewall_sparse_document_rank`` read ``corpus_stats``' document count
and mean length for BM25. Documents added behind a wall, full of a lawyer's words, changed
that lawyer's ranking.

The statistics are now kept per access key, the pair (wall_group_id, source_acl_id) that
decides who may see a chunk, over the chunks that are not suppressed (visible to nobody):

- ``search_key_stats``: chunks, documents and document word pieces per key;
- ``search_key_lexeme_stats``: per lexeme and key, the chunks holding the lexeme;
- ``search_key_document_stats``: per document and key, its chunks and word pieces there
  (a document's length as a person sees it; its rows' count per key is the key's document
  count, kept by statement triggers on this table).

Statement-level triggers on ``chunks`` keep the three in the writing transaction for every
insert, delete and update, including re-tagging (a new wall group), a new source ACL and the
``suppressed`` flag. An update that changes none of the counted columns (a re-embed, new
positions, a date) costs a comparison, no counting. The search sums the rows of the
person's allowed wall groups and source ACLs (``sql/search.sql``); the new ranking function
takes those sets too. Chunks of a matter pending re-tag are still counted under their
current key (docs/design.md, known limits).

The global tables stay (the dense strategy's corpus size, the layout advice's row count,
bench); the search no longer reads ``lexeme_stats`` or the document figures of
``corpus_stats``. The ranking of revision 0033 (eight arguments, global figures) is dropped:
nothing calls it; the downgrade puts it back.
"""

from collections.abc import Sequence

from alembic import context, op

from app.db.function_sources import apply_function_source

revision: str = "20261203_0042"
down_revision: str | None = "20261203_0041"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("search_key_stats", "search_key_lexeme_stats", "search_key_document_stats")

CREATE_TABLES = r"""
CREATE TABLE search_key_stats (
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks bigint NOT NULL DEFAULT 0,
    n_documents bigint NOT NULL DEFAULT 0,
    n_document_tokens numeric NOT NULL DEFAULT 0,
    CONSTRAINT pk_search_key_stats PRIMARY KEY (wall_group_id, source_acl_id)
);

CREATE TABLE search_key_lexeme_stats (
    lexeme text NOT NULL,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks bigint NOT NULL,
    CONSTRAINT pk_search_key_lexeme_stats PRIMARY KEY (lexeme, wall_group_id, source_acl_id)
);

CREATE TABLE search_key_document_stats (
    document_id bigint NOT NULL,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks integer NOT NULL,
    n_tokens bigint NOT NULL,
    CONSTRAINT pk_search_key_document_stats
        PRIMARY KEY (document_id, wall_group_id, source_acl_id)
);
"""

# The trigger functions (ewall_key_stats_after_insert/_delete/_update,
# ewall_key_documents_after_insert/_delete) are sql/functions/key_stats.v1.sql; the ranking
# that reads the per-key figures is sql/functions/sparse_document_rank.v3.sql.
TRIGGERS = r"""
CREATE TRIGGER chunks_key_stats_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_stats_after_insert();
CREATE TRIGGER chunks_key_stats_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_stats_after_delete();
CREATE TRIGGER chunks_key_stats_update AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_stats_after_update();
CREATE TRIGGER search_key_documents_insert AFTER INSERT ON search_key_document_stats
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_documents_after_insert();
CREATE TRIGGER search_key_documents_delete AFTER DELETE ON search_key_document_stats
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_documents_after_delete();
"""

# version 2 of the ranking (eight arguments, global corpus figures) has no caller left
DROP_GLOBAL_RANKING = r"""
DROP FUNCTION ewall_sparse_document_rank(
    text[], bigint[], tsvector[], text[], float8[], float8, float8, integer);
"""

# The backfill reads chunks: a migration role that is not a superuser passes the chunks
# policies only with the maintenance setting (migration 20261202_0036). The document rows
# go in first, so their trigger counts each key's documents.
BACKFILL = r"""
SELECT set_config('ewall.writer', 'on', true);
INSERT INTO search_key_stats (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
SELECT wall_group_id, source_acl_id, count(*), sum(token_count) FROM chunks
WHERE NOT suppressed GROUP BY wall_group_id, source_acl_id ORDER BY 1, 2;
INSERT INTO search_key_document_stats
    (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
SELECT document_id, wall_group_id, source_acl_id, count(*), sum(token_count) FROM chunks
WHERE NOT suppressed GROUP BY document_id, wall_group_id, source_acl_id ORDER BY 1, 2, 3;
INSERT INTO search_key_lexeme_stats (lexeme, wall_group_id, source_acl_id, n_chunks)
SELECT lex, wall_group_id, source_acl_id, count(*)
FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex
WHERE NOT suppressed GROUP BY lex, wall_group_id, source_acl_id ORDER BY 1, 2, 3;
"""

DOWNGRADE = r"""
DROP FUNCTION ewall_sparse_document_rank(
    text[], bigint[], tsvector[], text[], float8[], float8, float8, integer, text[], text[]);
DROP TRIGGER chunks_key_stats_insert ON chunks;
DROP TRIGGER chunks_key_stats_delete ON chunks;
DROP TRIGGER chunks_key_stats_update ON chunks;
DROP FUNCTION ewall_key_stats_after_insert();
DROP FUNCTION ewall_key_stats_after_delete();
DROP FUNCTION ewall_key_stats_after_update();
DROP TABLE search_key_document_stats;
DROP FUNCTION ewall_key_documents_after_insert();
DROP FUNCTION ewall_key_documents_after_delete();
DROP TABLE search_key_lexeme_stats;
DROP TABLE search_key_stats;
"""


def _app_role() -> str:
    role = str(context.config.attributes.get("app_role", "ewall_app"))
    if not role.replace("_", "").isalnum() or not role[0].isalpha():
        raise ValueError(f"unsafe app role name {role!r}")
    return role


def _run(statement: str) -> None:
    # Straight to psycopg without parameters, as the other revisions (the DDL holds ":").
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    role = _app_role()
    _run(CREATE_TABLES)
    apply_function_source(
        "key_stats.v1.sql", "181d726bc2c1f952d49c59520ae64b0061a7d1570d79470de710e6c71650b74e"
    )
    _run(TRIGGERS)
    _run(DROP_GLOBAL_RANKING)
    apply_function_source(
        "sparse_document_rank.v3.sql",
        "58de266a77bf9b068e0e7aad43e765e3f94b762fe4fd3ff64f8d0530eddc258a",
    )
    _run(BACKFILL)
    for table in TABLES:
        # searches read them; the chunk triggers run as the writing role (the service role,
        # or ewall_writer in writer mode, which holds what the service role holds)
        for grantee in (role, "ewall_writer"):
            _run(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {grantee}")


def downgrade() -> None:
    _run(DOWNGRADE)
    # the ranking as revision 0033 applied it
    apply_function_source(
        "sparse_document_rank.v2.sql",
        "1994dbbea5467829f1ff03c4b170d7d1f1138a1bb55e55c340eb3a861430f9d9",
    )
