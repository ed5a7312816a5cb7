"""Statute citations read as decisions write them: ordinal paragraphs, the law's name written
out, lists of articles before one code.

Revision ID: 20261210_0061
Revises: 20261209_0060
Create Date: 2026-12-10

A check of 2026-12-06 found 26 of the 35 Awb and BW citations in the demo's decisions
without a citation token ("artikel 8:29, eerste lid, van de Awb", "artikel 6:19 van de
Algemene wet bestuursrecht (Awb)", "de artikelen 6:18 en 6:19 ... van de Awb"), so a
question of "art. 6:18 Awb" did not find the decision that turns on it.
sql/functions/legal_normalize.v2.sql reads those forms; one code per law joins "art. 5
Handelsnaamwet" and "art. 5 Hnw". Everything that turns text into lexemes goes through the
normaliser (chunks.body_tsv, the question, the synonym rules), so what it made before is
made again here, as migration 20261203_0044 did:

1. chunks.body_tsv is generated again (ALTER COLUMN ... SET EXPRESSION with the same
   expression rewrites chunks, every partition, under an ACCESS EXCLUSIVE lock, and
   rebuilds its indexes: seconds at demo scale; at a million chunks measure it first, as
   docs/scale-out.md did for 0044; the normaliser costs about 0.3 ms a chunk, four times
   version 1's, some 5 CPU-minutes a million chunks inside that lock). Tables that a
   relayout kept (chunks_before_*) keep the lexemes they had.
2. The lexeme statistics and the impact postings are counted again in the same transaction
   (their triggers see DML only, not a table rewrite), and every stored synonym rule is
   recomputed. The statistics per key and per document count model tokens and stay.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source, run_statement

revision: str = "20261210_0061"
down_revision: str | None = "20261209_0060"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REGENERATE = r"""
ALTER TABLE chunks ALTER COLUMN body_tsv SET EXPRESSION AS (ewall_nl_tsvector(body));
"""

# Both lexeme tables and the postings counted again from the rewritten column, as their
# triggers count (search_key_lexeme_stats without suppressed chunks, lexeme_stats with
# them). The writer setting lets a migration role that is not a superuser read chunks past
# its policies (migration 20261202_0036).
RECOUNT = r"""
SELECT set_config('ewall.writer', 'on', true);
TRUNCATE search_key_lexeme_stats;
INSERT INTO search_key_lexeme_stats (lexeme, wall_group_id, source_acl_id, n_chunks)
SELECT lex, wall_group_id, source_acl_id, count(*)
FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex
WHERE NOT suppressed GROUP BY lex, wall_group_id, source_acl_id ORDER BY 1, 2, 3;
TRUNCATE lexeme_stats;
INSERT INTO lexeme_stats (lexeme, ndoc)
SELECT lex, count(*) FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex
GROUP BY lex ORDER BY lex;
SELECT ewall_postings_rebuild(ARRAY(SELECT DISTINCT document_id FROM chunks ORDER BY 1));
UPDATE search_synonyms SET term = term;
ANALYZE chunks;
ANALYZE search_key_lexeme_stats;
ANALYZE lexeme_stats;
ANALYZE search_postings;
"""


def upgrade() -> None:
    apply_function_source(
        "legal_normalize.v2.sql", "3e68eeed6e4565e737efb25f716e53d206c34261d5b51b4540520a4953cf5c8c"
    )
    run_statement(REGENERATE)
    run_statement(RECOUNT)


def downgrade() -> None:
    apply_function_source(
        "legal_normalize.v1.sql", "09faef77b28c31e635b6f8629f0b7c9290d9edc08a20b442be23d8c5f24418ac"
    )
    run_statement(REGENERATE)
    run_statement(RECOUNT)
