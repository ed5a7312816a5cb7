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

No new lock: every transaction that changes ``search_document_stats`` changes ``chunks``,
whose triggers already update the same ``corpus_stats`` row.
"""

import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "20261201_0033"
down_revision: str | None = "20261201_0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UPGRADE = r"""
ALTER TABLE corpus_stats
    ADD COLUMN n_documents bigint NOT NULL DEFAULT 0,
    ADD COLUMN n_document_tokens numeric NOT NULL DEFAULT 0;

CREATE FUNCTION ewall_document_totals_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE corpus_stats AS c
    SET n_documents = c.n_documents + d.n, n_document_tokens = c.n_document_tokens + d.t
    FROM (SELECT count(*) AS n, coalesce(sum(n_tokens), 0) AS t FROM new_rows) AS d
    WHERE c.id = 1 AND d.n > 0;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION ewall_document_totals_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE corpus_stats AS c
    SET n_documents = c.n_documents - d.n, n_document_tokens = c.n_document_tokens - d.t
    FROM (SELECT count(*) AS n, coalesce(sum(n_tokens), 0) AS t FROM old_rows) AS d
    WHERE c.id = 1 AND d.n > 0;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION ewall_document_totals_after_update() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE corpus_stats AS c
    SET n_document_tokens = c.n_document_tokens + d.t
    FROM (SELECT (SELECT coalesce(sum(n_tokens), 0) FROM new_rows)
               - (SELECT coalesce(sum(n_tokens), 0) FROM old_rows) AS t) AS d
    WHERE c.id = 1 AND d.t <> 0;
    RETURN NULL;
END
$fn$;

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

# 0027's corpus figures, and what replaces them (the rest of the function is unchanged)
PER_SEARCH_SCAN = """    WITH corpus AS (
        SELECT greatest(count(*), 1) AS n_docs, greatest(avg(n_tokens), 1) AS avgdl
        FROM search_document_stats
    ), q AS ("""
ONE_ROW = """    WITH corpus AS (
        SELECT greatest(n_documents, 1) AS n_docs,
               greatest(n_document_tokens / nullif(n_documents, 0), 1) AS avgdl
        FROM corpus_stats WHERE id = 1
    ), q AS ("""


def _ranking_function_0027() -> str:
    """The ranking function as revision 0027 created it, read from that revision's file so
    that the body exists once."""
    path = Path(__file__).with_name("2026_12_01_0027_sparse_document_rank.py")
    spec = importlib.util.spec_from_file_location("ewall_revision_0027", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = re.search(
        r"CREATE FUNCTION ewall_sparse_document_rank\(.*?\$fn\$;", module.UPGRADE, re.S
    )
    if found is None or PER_SEARCH_SCAN not in found.group(0):
        raise RuntimeError("revision 0027's ranking function is not where it was")
    return found.group(0).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


def _run(statement: str) -> None:
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    _run(UPGRADE)
    _run(_ranking_function_0027().replace(PER_SEARCH_SCAN, ONE_ROW))


def downgrade() -> None:
    _run(_ranking_function_0027())
    _run(DOWNGRADE)
    _run("ALTER TABLE corpus_stats DROP COLUMN n_documents, DROP COLUMN n_document_tokens")
