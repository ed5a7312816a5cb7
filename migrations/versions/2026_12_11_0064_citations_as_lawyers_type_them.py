"""A question names a decision by a partial or dashed ECLI, or by a case number after a court.

Revision ID: 20261211_0064
Revises: 20261211_0063
Create Date: 2026-12-11

A check of 2026-12-06 with 176 new lawyers' questions found citations that named nothing:
"NL:HR:1995:AA3120" and "ECLI-NL-HR-1995-AA3120" (ranks 3-9), "HR nr. 31.173" and "CRvB
21-05-2013, 12/2272 WWB-G" (a case number after a court), and "HR 27 september 1995, nr.
30460", read as the journal citation "VP:SEPTEMBER 1995/30460". sql/functions/
document_names.v3.sql reads them; only ewall_question_names changes (the question's side),
so the index on the documents' names stands.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source

revision: str = "20261211_0064"
down_revision: str | None = "20261211_0063"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "document_names.v3.sql", "408446dedef7d6af2f3b33522e73a2bddea12a0ea077f81ce0603c0a0e9c0722"
    )


def downgrade() -> None:
    apply_function_source(
        "document_names.v2.sql", "a1d21a3beeea89aa59fab90cf8a7fde03e21b28c31453ae90050844eaee1c28c"
    )
