"""The audit finds a document's results by the document: one function names it, one index.

Revision ID: 20261205_0053
Revises: 20261205_0052
Create Date: 2026-12-05

A wall's exposure report (GET /v1/walls/{id}/exposure) counted a result under the matter its
retrieval recorded: a document read under one matter and refiled under a protected one was
missing from the report, although its reader had read it. The report now also looks up the
results of the documents the protected matters hold now, by the document a chunk id names
(``ewall_chunk_document``, sql/functions/chunk_document.v1.sql, the cut the session gate
already made in SQL of its own).

The index on the chunk id becomes an index on that document: the statement that asks for one
chunk's results (GET /v1/audit/retrievals?chunk_id=) asks for its document's and then for the
chunk, so one index serves both and the audit append writes no more index entries than
before. Equality, not a byte range of chunk ids: the planner estimates equality from the
index's statistics, and a range bound by another table's column at a fixed guess that made a
sequential scan of the whole audit look cheap.

Built with CREATE INDEX CONCURRENTLY, outside a transaction: searches go on appending audit
rows while it builds. An interrupted build leaves an invalid index of the new name; drop it
and run the migration again.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261205_0053"
down_revision: str | None = "20261205_0052"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "audit_retrieval_results"


def upgrade() -> None:
    apply_function_source(
        "chunk_document.v1.sql", "b905910237981ba9b7bcc904e29e5c890113b5d6c4b23bf6407391e453303ea1"
    )
    with op.get_context().autocommit_block():
        op.execute(
            f"CREATE INDEX CONCURRENTLY ix_audit_retrieval_results_document"
            f" ON {TABLE} (ewall_chunk_document(chunk_id))"
        )
        op.execute("DROP INDEX CONCURRENTLY ix_audit_retrieval_results_chunk_id")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(
            f"CREATE INDEX CONCURRENTLY ix_audit_retrieval_results_chunk_id ON {TABLE} (chunk_id)"
        )
        op.execute("DROP INDEX CONCURRENTLY ix_audit_retrieval_results_document")
    op.execute("DROP FUNCTION ewall_chunk_document(text)")
