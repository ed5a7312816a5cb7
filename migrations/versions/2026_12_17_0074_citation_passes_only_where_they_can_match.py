"""The citation normaliser runs a pass only on a text that can hold what the pass matches.

Revision ID: 20261217_0074
Revises: 20261216_0073
Create Date: 2026-12-17

PostgreSQL keeps the 32 regular expressions a connection compiled last. Version 2 of
ewall_legal_normalize ran all 25 of its own on every text (one per law in its loop), so the
analysis of a question with a citation and typed syntax ran 33 and compiled them all again on
every search. sql/functions/legal_normalize.v3.sql runs each pass only when the text holds a
literal that every match of its pattern holds ("art", ":", "boek", "wet" and the law's own
word, "epc", "ecl").

Nothing stored is made again: the output is version 2's for every input
(tests/search/test_legal_normalize_v3.py runs both over the shared corpus and every citation
form), so chunks.body_tsv, the lexeme statistics, the postings and the synonym rules, all made
through the normaliser, stay as they are. Migrations 20261203_0044 and 20261210_0061 rebuilt
them because their output changed; this one does not.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source

revision: str = "20261217_0074"
down_revision: str | None = "20261216_0073"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "legal_normalize.v3.sql", "b49091a43ed5384eaebc729e98933047cb78624f134cf1aa86e108bb56a4210b"
    )


def downgrade() -> None:
    apply_function_source(
        "legal_normalize.v2.sql", "3e68eeed6e4565e737efb25f716e53d206c34261d5b51b4540520a4953cf5c8c"
    )
