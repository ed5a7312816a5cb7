"""Indexes on the window edges of walls not lifted: the replica fences read them by range.

Revision ID: 20261215_0072
Revises: 20261214_0071
Create Date: 2026-12-15

A search served by a read replica is fenced on the primary (sql/audit.sql), and so is the
grounding gate's replica read (sql/walls.sql, no_window_edge_since): each asks whether any wall
not lifted begins or ends between the instant the replica judged access at and the primary's
clock now, a window of seconds. Without an index that question read every wall, lifted and
long expired ones too: about 1.1 ms of each replica append at 10,000 walls, growing with the
firm's history. Two partial btrees on the edges (walls not lifted only) answer it with two
range scans of a few pages (0.03 ms at 10,000 walls).
"""

from collections.abc import Sequence

from app.db.function_sources import run_statement

revision: str = "20261215_0072"
down_revision: str | None = "20261214_0071"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    run_statement(
        "CREATE INDEX ix_walls_open_effective_from ON walls (effective_from)"
        " WHERE lifted_at IS NULL"
    )
    run_statement(
        "CREATE INDEX ix_walls_open_effective_until ON walls (effective_until)"
        " WHERE lifted_at IS NULL"
    )


def downgrade() -> None:
    run_statement("DROP INDEX ix_walls_open_effective_until")
    run_statement("DROP INDEX ix_walls_open_effective_from")
