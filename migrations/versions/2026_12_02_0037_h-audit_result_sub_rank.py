"""Audit every chunk a collapsed search names: a sub-rank under each hit's rank.

Revision ID: 20261202_0037
Revises: 20261202_0036
Create Date: 2026-12-02

``"collapse": "document"`` answers one hit per document and lists the document's other
matching chunks with it (``other_sections``: chunk id, heading, pages, score; not their text).
The audit row recorded the hits only, so "who saw chunk X" missed every chunk named that way.
A result row is now (rank, sub_rank): sub_rank 0 is the hit itself, whose text the response
carried; 1, 2, ... are the other sections listed under hit ``rank``, in the response's order,
with their own content hash and score. Existing rows are hits (0), and the chain's canonical
form names ``sub_rank`` only when it is above 0, so every stored hash still verifies.

The downgrade refuses while any row has a sub-rank above 0: dropping those rows would break
the chain that covers them, and without the column they cannot keep their primary key.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261202_0037"
down_revision: str | None = "20261202_0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE audit_retrieval_results
            ADD COLUMN sub_rank integer NOT NULL DEFAULT 0,
            ADD CONSTRAINT ck_audit_retrieval_results_sub_rank CHECK (sub_rank >= 0),
            DROP CONSTRAINT pk_audit_retrieval_results,
            ADD CONSTRAINT pk_audit_retrieval_results
                PRIMARY KEY (retrieval_id, rank, sub_rank)
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM audit_retrieval_results WHERE sub_rank > 0) THEN
                RAISE EXCEPTION 'audit_retrieval_results holds sections named under a hit '
                    '(sub_rank > 0); the chain covers them, so they cannot be dropped';
            END IF;
        END
        $$
        """
    )
    op.execute(
        """
        ALTER TABLE audit_retrieval_results
            DROP CONSTRAINT pk_audit_retrieval_results,
            ADD CONSTRAINT pk_audit_retrieval_results PRIMARY KEY (retrieval_id, rank),
            DROP CONSTRAINT ck_audit_retrieval_results_sub_rank,
            DROP COLUMN sub_rank
        """
    )
