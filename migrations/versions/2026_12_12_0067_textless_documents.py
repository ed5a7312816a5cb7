"""Documents without extractable text, remembered at the version and stamp that had none.

Revision ID: 20261212_0067
Revises: 20261211_0066
Create Date: 2026-12-12

A document whose content yields no text (a scan without OCR, an empty file) is not stored:
nothing of it is searchable. A full crawl with EWALL_FULL_CRAWL_READS=changed reads in full
only what the index does not hold as listed, so it downloaded every such document again on
every crawl: in a firm's DMS, scanned correspondence is a large share. ``textless_documents``
keeps, per source document, the version, modification stamp and source metadata of the
content that had no text and what it was prepared with (chunker, encoder, limits); a full
crawl that reads only what changed leaves such a document unread while the listing names
the same version and stamps (connectors/full_read.py). Nothing is searchable from this table
and no search reads it: the service and the writer roles read and write it as they do the
crawl bookkeeping (sync_seen).
"""

from collections.abc import Sequence

from app.db.function_sources import migration_app_role, run_statement

revision: str = "20261212_0067"
down_revision: str | None = "20261211_0066"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CREATE_TABLE = """
CREATE TABLE textless_documents (
    source text NOT NULL,
    external_id text NOT NULL,
    version text,
    modified_at timestamptz,
    metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
    prepared_with text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_textless_documents PRIMARY KEY (source, external_id)
)
"""


def upgrade() -> None:
    run_statement(CREATE_TABLE)
    for role in (migration_app_role(), "ewall_writer"):
        run_statement(f"GRANT SELECT, INSERT, UPDATE, DELETE ON textless_documents TO {role}")


def downgrade() -> None:
    run_statement("DROP TABLE textless_documents")
