"""Impact postings: the sparse leg ranks every visible document exactly, at any corpus size.

Revision ID: 20261203_0045
Revises: 20261203_0044
Create Date: 2026-12-03

The sparse leg ranked a pool of at most 3,000 allowed matching chunks; past that cap, an
arbitrary sample (whole documents in md5 order), with document frequencies counted inside the
sample: its top k was not BM25's top k (issue 29). Ranking the whole pool from the chunks'
text costs time linear in the matches (tsvector arrays, then the ranking function).

``search_postings`` holds, per lexeme and document part (a document's chunks under one wall
group, source ACL and matter), the part's term frequency, length and BM25 impact
(sql/functions/search_postings.v1.sql). Statement triggers on chunks rebuild the postings of
every document a statement touched, in the writing transaction (ingestion, replacement,
deletion, re-tagging, suppression). The search scores documents from the postings alone:
exactly over the documents its GIN match found when few rows match (filter first), or with
the threshold algorithm over the lexemes' postings in impact order, the access test inside
the index scan, stopping when nothing unread can reach the top k.

Row-level security on ``search_postings`` is the one on chunks (allowed groups and ACLs in
the transaction's settings, matters pending re-tag hidden): a posting says a word occurs in a
document. The old ranking (``ewall_sparse_document_rank``) has no caller left and is dropped;
the downgrade puts it back.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source, migration_app_role, run_statement

revision: str = "20261203_0045"
down_revision: str | None = "20261203_0044"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CREATE_TABLE = r"""
CREATE TABLE search_postings (
    lexeme text NOT NULL,
    document_id bigint NOT NULL,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    matter_id text NOT NULL,
    tf integer NOT NULL,
    n_tokens integer NOT NULL,
    impact real NOT NULL
);
ALTER TABLE search_postings ENABLE ROW LEVEL SECURITY;
CREATE POLICY search_postings_read ON search_postings FOR SELECT USING (
    wall_group_id IN (SELECT unnest(
        nullif((SELECT current_setting('ewall.allowed_wall_groups', true)), '')::text[]))
    AND source_acl_id IN (SELECT unnest(
        nullif((SELECT current_setting('ewall.allowed_source_acls', true)), '')::text[]))
    AND matter_id <> ALL (CAST(
        (SELECT coalesce(array_agg(p.matter_id), '{}') FROM retag_pending AS p) AS text[])));
CREATE POLICY search_postings_writer ON search_postings FOR ALL TO ewall_writer
    USING (true) WITH CHECK (true);
"""

TRIGGERS = r"""
CREATE TRIGGER chunks_postings_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_postings_after_write();
CREATE TRIGGER chunks_postings_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_postings_after_write();
CREATE TRIGGER chunks_postings_update AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_postings_after_write();
"""

# The backfill reads chunks: a migration role that is not a superuser passes the chunks
# policies only with the maintenance setting (migration 20261202_0036). It runs after the
# triggers exist (their lock on chunks holds writers off until the commit) and before the
# indexes, which are built once over the filled table.
BACKFILL = r"""
SELECT set_config('ewall.writer', 'on', true);
SELECT ewall_postings_rebuild(ARRAY(SELECT DISTINCT document_id FROM chunks ORDER BY 1));
"""

INDEXES = r"""
ALTER TABLE search_postings ADD CONSTRAINT pk_search_postings
    PRIMARY KEY (lexeme, document_id, wall_group_id, source_acl_id, matter_id);
CREATE INDEX ix_search_postings_impact ON search_postings (lexeme, impact DESC)
    INCLUDE (document_id, wall_group_id, source_acl_id, matter_id);
CREATE INDEX ix_search_postings_document_id ON search_postings (document_id);
ANALYZE search_postings;
"""

DROP_OLD_RANKING = r"""
DROP FUNCTION ewall_sparse_document_rank(
    text[], bigint[], tsvector[], text[], float8[], float8, float8, integer, text[], text[]);
"""

DOWNGRADE = r"""
DROP TRIGGER chunks_postings_insert ON chunks;
DROP TRIGGER chunks_postings_delete ON chunks;
DROP TRIGGER chunks_postings_update ON chunks;
DROP FUNCTION ewall_sparse_impact_topk(text[], float8[], text[], text[], text[], integer);
DROP FUNCTION ewall_sparse_part_scores(bigint[], text[], float8[], text[], text[], text[]);
DROP FUNCTION ewall_postings_after_write();
DROP FUNCTION ewall_postings_rebuild(bigint[]);
DROP TABLE search_postings;
DROP FUNCTION ewall_posting_impact(bigint, numeric);
"""


def upgrade() -> None:
    run_statement(CREATE_TABLE)
    apply_function_source(
        "search_postings.v1.sql", "bd54f8c76a494ca06b92d1b9d9d29c4175b9bcd07c94ccd19b2614f6c56cb9d8"
    )
    run_statement(TRIGGERS)
    run_statement(BACKFILL)
    run_statement(INDEXES)
    run_statement(DROP_OLD_RANKING)
    # searches read the postings; the chunk triggers write them as the writing role
    run_statement(f"GRANT SELECT ON search_postings TO {migration_app_role()}")
    run_statement("GRANT SELECT, INSERT, UPDATE, DELETE ON search_postings TO ewall_writer")


def downgrade() -> None:
    run_statement(DOWNGRADE)
    apply_function_source(
        "sparse_document_rank.v3.sql",
        "58de266a77bf9b068e0e7aad43e765e3f94b762fe4fd3ff64f8d0530eddc258a",
    )
