"""The impact top-k of the sparse leg cuts and orders on scores rounded to 1e-9.

Revision ID: 20261208_0058
Revises: 20261208_0057
Create Date: 2026-12-08

The hybrid statement's sparse_top rounds the sparse parts' scores to 1e-9 and breaks ties by
part, because a float sum's last bits follow the order its terms were added in, which the
plan and the tables' physical state decide, rows a person may not see among them (invariant
12). ``ewall_sparse_impact_topk`` made its own cut of the n best before that, on unrounded
scores: of two parts of one rounded score, the one whose sum came out a bit higher survived
its LIMIT, so which part the leg returned could still change when only hidden rows did.
Version 3 of the function (sql/functions/search_postings.v3.sql) cuts, orders and returns
rounded scores, ties broken by part as in sparse_top, with margins in its stopping tests
that cover the rounding. Only the function is replaced, no data is touched.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source

revision: str = "20261208_0058"
down_revision: str | None = "20261208_0057"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "search_postings.v3.sql", "4d38c4c485b018c9d92f71c5fbc62a12576619e6528a39c4c52b995ec7f3719b"
    )


def downgrade() -> None:
    # the function as revision 0047 applied it
    apply_function_source(
        "search_postings.v2.sql", "94bd9aa93ac624b45daeaf1893456e14927fdb253d8ad768a11967f5e05be3df"
    )
