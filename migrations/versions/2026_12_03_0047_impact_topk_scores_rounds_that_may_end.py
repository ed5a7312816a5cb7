"""The impact top-k of the sparse leg scores a round only when the round may end.

Revision ID: 20261203_0047
Revises: 20261203_0046
Create Date: 2026-12-03

``ewall_sparse_impact_topk`` reads each question lexeme's postings in impact order, in
rounds of growing depth, and scores the parts it met exactly to test whether the n best are
known. When the n-th best lower bound of a round is far below the bound of everything
unread, every part met is a candidate and the round almost never ends: at 1,000,000 chunks
and 100% allowed that scoring was about half of the leg's time (docs/scale-out.md). Version
2 of the function (sql/functions/search_postings.v2.sql) goes deeper without scoring such a
round. The results are unchanged; only the function is replaced, no data is touched.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source

revision: str = "20261203_0047"
down_revision: str | None = "20261203_0046"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "search_postings.v2.sql", "94bd9aa93ac624b45daeaf1893456e14927fdb253d8ad768a11967f5e05be3df"
    )


def downgrade() -> None:
    # the function as revision 0045 applied it (with the other functions of that file,
    # which version 2 does not change)
    apply_function_source(
        "search_postings.v1.sql", "bd54f8c76a494ca06b92d1b9d9d29c4175b9bcd07c94ccd19b2614f6c56cb9d8"
    )
