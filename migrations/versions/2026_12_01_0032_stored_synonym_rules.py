"""Synonym rules stored with each synonym instead of recomputed by every search.

Revision ID: 20261201_0032
Revises: 20261201_0031
Create Date: 2026-12-01

``search_synonym_rules`` turned every row of ``search_synonyms`` into a ts_rewrite rule
(target, substitute) when it was read, and ``analyze_query`` reads it once per search: six
calls of ``ewall_query_lexemes`` (the plpgsql citation normaliser and the Dutch stemmer) per
synonym, every search. With the 24 starter synonyms that was most of the 8 ms that
``analyze_query`` took at 200k chunks (docs/latency-sql.md). Each row now stores its rule,
computed by a BEFORE INSERT OR UPDATE trigger with the same expressions as the view had,
and the view reads the stored columns: same name, same columns, same rows, so ts_rewrite
and every reader see exactly what they saw before. Editing the table still changes
searches at once (the rule is computed in the editing statement). The trigger recomputes
on every UPDATE, so a stored rule cannot be set by hand to something else.

A rule depends on the text search configuration ``ewall_nl`` and ``ewall_legal_normalize``
as they were when the row was written: a later migration that changes either must recompute
the rules (``UPDATE search_synonyms SET term = term``), as this one does for existing rows.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261201_0032"
down_revision: str | None = "20261201_0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ADD_COLUMNS = r"""
ALTER TABLE search_synonyms ADD COLUMN target tsquery, ADD COLUMN substitute tsquery;
"""

UPGRADE = r"""
CREATE TRIGGER search_synonyms_rule BEFORE INSERT OR UPDATE ON search_synonyms
FOR EACH ROW EXECUTE FUNCTION ewall_synonym_rule();

UPDATE search_synonyms SET term = term;

CREATE OR REPLACE VIEW search_synonym_rules AS
SELECT s.target, s.substitute
FROM search_synonyms AS s
WHERE s.target IS NOT NULL AND s.substitute IS NOT NULL;
"""

DOWNGRADE = r"""
CREATE OR REPLACE VIEW search_synonym_rules AS
SELECT CASE WHEN cardinality(ewall_query_lexemes(s.term)) = 1
            THEN CAST(quote_literal((ewall_query_lexemes(s.term))[1]) AS tsquery)
            ELSE phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.term)) END AS target,
       CASE WHEN cardinality(ewall_query_lexemes(s.term)) = 1
            THEN CAST(quote_literal((ewall_query_lexemes(s.term))[1]) AS tsquery)
            ELSE phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.term)) END
       || phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.synonym)) AS substitute
FROM search_synonyms AS s
WHERE cardinality(ewall_query_lexemes(s.term)) > 0
  AND cardinality(ewall_query_lexemes(s.synonym)) > 0;

DROP TRIGGER search_synonyms_rule ON search_synonyms;
DROP FUNCTION ewall_synonym_rule();
ALTER TABLE search_synonyms DROP COLUMN target, DROP COLUMN substitute;
"""


def _run(statement: str) -> None:
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    _run(ADD_COLUMNS)
    # ewall_synonym_rule: a row's rule, computed when the row is written
    apply_function_source(
        "synonym_rule.v1.sql", "38e92196b0cf535789cfadb1a49fa96262403d43ba49d4fbe8b7d3fc16b68df5"
    )
    _run(UPGRADE)


def downgrade() -> None:
    _run(DOWNGRADE)
