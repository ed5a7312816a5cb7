"""The HNSW graph of the dense leg is built with ef_construction 128 instead of 64.

Revision ID: 20261204_0049
Revises: 20261204_0048
Create Date: 2026-12-04

At 1,000,000 chunks the graph built with ef_construction 64 (m 16) missed neighbours a
larger ef_search could not find either: recall@10 of the dense leg 0.83-0.91 at 10% and
100% allowed, single questions down to 0 (docs/scale-out.md). Built with 128, on the same
table and the same questions in one run: 0.97-1.000, at the same speed within about 10%,
for twice the build time. The index keeps its name and its m; only how many candidates each
insertion weighs changes.

The index is rebuilt with REINDEX CONCURRENTLY, outside a transaction: searches and
ingestion go on while it builds (6-8 minutes at 1,000,000 chunks on two cores). On a
partitioned chunks table (``ewall chunks layout``) each partition's index is set and rebuilt
in turn; PostgreSQL keeps options on the partitioned parent itself unchangeable, so the
parent's definition still reads 64. An interrupted rebuild leaves an invalid ``_ccnew``
index behind, which PostgreSQL names in its error; drop it and run the migration again.
"""

from collections.abc import Sequence

from alembic import op
from psycopg import sql
from sqlalchemy import text

revision: str = "20261204_0049"
down_revision: str | None = "20261204_0048"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_chunks_embedding_hnsw"
# its partitions' indexes on a partitioned table (none on one table: then the index itself)
_LEAVES = text(
    "SELECT c.relname FROM pg_partition_tree(CAST(:index AS regclass)) AS t"
    " JOIN pg_class AS c ON c.oid = t.relid WHERE t.isleaf ORDER BY c.relname"
)


def _rebuild(ef_construction: int) -> None:
    bind = op.get_bind()
    leaves = [r[0] for r in bind.execute(_LEAVES, {"index": INDEX})] or [INDEX]
    raw = bind.connection.driver_connection
    with op.get_context().autocommit_block():
        for leaf in leaves:
            for statement in (
                sql.SQL("ALTER INDEX {} SET (ef_construction = {})").format(
                    sql.Identifier(leaf), sql.Literal(ef_construction)
                ),
                sql.SQL("REINDEX INDEX CONCURRENTLY {}").format(sql.Identifier(leaf)),
            ):
                op.execute(statement.as_string(raw))


def upgrade() -> None:
    _rebuild(128)


def downgrade() -> None:
    _rebuild(64)
