"""Sparse text wider than the embedded chunk: chunks.sparse_tsv.

Revision ID: 20261201_0019
Revises: 20261129_0001
Create Date: 2026-12-01

The dense leg must embed what the encoder can read (256 word pieces, ~85 Dutch words); the
sparse leg need not score that small unit. ``sparse_tsv`` is the chunk's own text at weight
A plus its neighbours in the same document (previous and next chunk by ordinal) at weight
B; the search ranks with a lower weight for B, so a chunk whose neighbours carry the
question's words ranks above one that shares a single word by chance (measured in
docs/quality.md). A BEFORE INSERT trigger fills the chunk's own text, so any writer leaves a
searchable row; ``ewall_refresh_sparse_text(document_id)`` adds the neighbours and runs in
the ingestion transaction after a document's chunks changed. Plain SQL: works on managed
PostgreSQL (no dictionary files).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261201_0019"
down_revision: str | None = "20261129_0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UPGRADE = r"""
ALTER TABLE chunks ADD COLUMN sparse_tsv tsvector;

CREATE FUNCTION ewall_chunk_own_sparse_text() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF NEW.sparse_tsv IS NULL THEN
        NEW.sparse_tsv := setweight(
            to_tsvector('ewall_nl'::regconfig, ewall_legal_normalize(NEW.body)), 'A');
    END IF;
    RETURN NEW;
END
$fn$;
CREATE TRIGGER chunks_own_sparse_text BEFORE INSERT ON chunks
    FOR EACH ROW EXECUTE FUNCTION ewall_chunk_own_sparse_text();

-- The chunk's own lexemes at weight A, its neighbours' at weight B.
CREATE FUNCTION ewall_refresh_sparse_text(doc bigint) RETURNS integer
LANGUAGE sql AS $fn$
    WITH ordered AS (
        SELECT chunk_id, setweight(body_tsv, 'A')
               || setweight(coalesce(lag(body_tsv) OVER w, ''::tsvector)
                            || coalesce(lead(body_tsv) OVER w, ''::tsvector), 'B') AS tsv
        FROM chunks WHERE document_id = doc
        WINDOW w AS (ORDER BY ordinal, chunk_id)
    ), changed AS (
        UPDATE chunks AS c SET sparse_tsv = o.tsv
        FROM ordered AS o
        WHERE c.chunk_id = o.chunk_id AND c.sparse_tsv IS DISTINCT FROM o.tsv
        RETURNING 1
    )
    SELECT count(*)::integer FROM changed
$fn$;

-- the backfill writes chunks: mark the transaction as a writer for the RLS policies (a
-- schema owner that is not a superuser is subject to them under FORCE ROW LEVEL SECURITY)
SELECT set_config('ewall.writer', 'on', true);
UPDATE chunks AS c SET sparse_tsv = o.tsv
FROM (SELECT chunk_id, setweight(body_tsv, 'A')
             || setweight(coalesce(lag(body_tsv) OVER w, ''::tsvector)
                          || coalesce(lead(body_tsv) OVER w, ''::tsvector), 'B') AS tsv
      FROM chunks WINDOW w AS (PARTITION BY document_id ORDER BY ordinal, chunk_id)) AS o
WHERE c.chunk_id = o.chunk_id;

ALTER TABLE chunks ALTER COLUMN sparse_tsv SET NOT NULL;
CREATE INDEX ix_chunks_sparse_tsv ON chunks USING gin (sparse_tsv);
"""

# Legal abbreviations and synonyms a Dutch lawyer types interchangeably: a starter list in the
# editable table (PUT/DELETE /v1/search/synonyms). A term that is one word is replaced in
# the question by itself OR the synonym; both directions are listed where both are typed.
# (octrooi/patent is left to the firm: the tests of the synonym API use that pair.)
STARTER_SYNONYMS: tuple[tuple[str, str], ...] = (
    ("bw", "burgerlijk wetboek"),
    ("rv", "wetboek van burgerlijke rechtsvordering"),
    ("awb", "algemene wet bestuursrecht"),
    ("ww", "werkloosheidswet"),
    ("wob", "wet openbaarheid van bestuur"),
    ("sr", "wetboek van strafrecht"),
    ("sv", "wetboek van strafvordering"),
    ("row", "rijksoctrooiwet"),
    ("eov", "europees octrooiverdrag"),
    ("evrm", "europees verdrag voor de rechten van de mens"),
    ("avg", "algemene verordening gegevensbescherming"),
    ("ob", "omzetbelasting"),
    ("btw", "omzetbelasting"),
    ("omzetbelasting", "btw"),
    ("ib", "inkomstenbelasting"),
    ("vpb", "vennootschapsbelasting"),
    ("woz", "waardering onroerende zaken"),
    ("dga", "directeur-grootaandeelhouder"),
    ("ontslag", "opzegging"),
    ("opzegging", "ontslag"),
    ("fiscus", "belastingdienst"),
    ("fiscus", "inspecteur"),
    ("erfbelasting", "successierecht"),
    ("schenkbelasting", "schenkingsrecht"),
)

DOWNGRADE = r"""
DELETE FROM search_synonyms WHERE created_by = 'ewall-starter';
DROP INDEX ix_chunks_sparse_tsv;
DROP TRIGGER chunks_own_sparse_text ON chunks;
DROP FUNCTION ewall_chunk_own_sparse_text();
DROP FUNCTION ewall_refresh_sparse_text(bigint);
ALTER TABLE chunks DROP COLUMN sparse_tsv;
"""


def _run(statement: str) -> None:
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    _run(UPGRADE)
    values = ", ".join(
        "('" + term.replace("'", "''") + "', '" + synonym.replace("'", "''") + "', 'ewall-starter')"
        for term, synonym in STARTER_SYNONYMS
    )
    _run(
        "INSERT INTO search_synonyms (term, synonym, created_by) VALUES "
        + values
        + " ON CONFLICT (term, synonym) DO NOTHING"
    )


def downgrade() -> None:
    _run(DOWNGRADE)
