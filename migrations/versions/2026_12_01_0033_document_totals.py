"""The sparse ranking reads the corpus's document count and mean length from one row.

Revision ID: 20261201_0033
Revises: 20261201_0032
Create Date: 2026-12-01

``ewall_sparse_document_rank`` (revision 0027) computed BM25's corpus figures, the number of
documents and their mean length, with ``count(*)`` and ``avg(n_tokens)`` over
``search_document_stats`` on EVERY sparse search: one row per document, so a firm of a
million documents paid a scan of a million rows per question. The totals now live in the
single row of ``corpus_stats`` (which already holds the chunk count for the same reason),
kept by statement-level triggers on ``search_document_stats``: every change to a document's
figures, whoever makes it, moves the totals in the same transaction. The ranking reads that
row; the figures are the same numbers, so rankings do not change (tests/search/
test_sparse_document_rank.py compares the totals with the table after every kind of write).
The ranking's text is ``sql/functions/sparse_document_rank.v2.sql``; the downgrade applies
``sparse_document_rank.v1.sql``, the text revision 0027 applies.

No new lock: every transaction that changes ``search_document_stats`` changes ``chunks``,
whose triggers already update the same ``corpus_stats`` row.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261201_0033"
down_revision: str | None = "20261201_0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ADD_COLUMNS = r"""
ALTER TABLE corpus_stats
    ADD COLUMN n_documents bigint NOT NULL DEFAULT 0,
    ADD COLUMN n_document_tokens numeric NOT NULL DEFAULT 0;
"""

UPGRADE = r"""
CREATE TRIGGER search_document_stats_totals_insert AFTER INSERT ON search_document_stats
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_document_totals_after_insert();
CREATE TRIGGER search_document_stats_totals_delete AFTER DELETE ON search_document_stats
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_document_totals_after_delete();
CREATE TRIGGER search_document_stats_totals_update AFTER UPDATE ON search_document_stats
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_document_totals_after_update();

UPDATE corpus_stats
SET n_documents = (SELECT count(*) FROM search_document_stats),
    n_document_tokens = (SELECT coalesce(sum(n_tokens), 0) FROM search_document_stats)
WHERE id = 1;
"""

DOWNGRADE = r"""
DROP TRIGGER search_document_stats_totals_insert ON search_document_stats;
DROP TRIGGER search_document_stats_totals_delete ON search_document_stats;
DROP TRIGGER search_document_stats_totals_update ON search_document_stats;
DROP FUNCTION ewall_document_totals_after_insert();
DROP FUNCTION ewall_document_totals_after_delete();
DROP FUNCTION ewall_document_totals_after_update();
"""


def _run(statement: str) -> None:
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    _run(ADD_COLUMNS)
    # ewall_document_totals_after_insert/_delete/_update, what the triggers below call
    apply_function_source(
        "document_totals.v1.sql", "f3f7a71b93d71f6ab76efb9a4361f42d6833dba07d0687a6a96c8bcf8cb4d85f"
    )
    _run(UPGRADE)
    # the ranking reads the totals' row instead of counting search_document_stats
    apply_function_source(
        "sparse_document_rank.v2.sql",
        "1994dbbea5467829f1ff03c4b170d7d1f1138a1bb55e55c340eb3a861430f9d9",
    )


def downgrade() -> None:
    # the ranking as revision 0027 applied it, before the totals it reads go
    apply_function_source(
        "sparse_document_rank.v1.sql",
        "07bfdda002ce329aa65d51bf9394f912967f4a088387698fbebbe04550d56b27",
    )
    _run(DOWNGRADE)
    _run("ALTER TABLE corpus_stats DROP COLUMN n_documents, DROP COLUMN n_document_tokens")
