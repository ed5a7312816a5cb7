"""Re-embedding: the live model, re-embed runs, the model id per chunk and per retrieval.

Revision ID: 20261201_0030
Revises: 20261201_0027
Create Date: 2026-12-01

``embedding_live`` (one row) names the model whose vectors are in ``chunks.embedding``; the
first service or ingestion that starts claims it, a re-embed's switch changes it in the same
transaction as the columns. ``reembed_runs`` holds each re-embed's state and progress (at
most one active), so a crashed run resumes. ``chunks.embedding_model`` is the model id of a
chunk's vector (NULL: written before model ids were recorded, i.e. by the first live model).
``audit_retrievals.query_model`` is the model that encoded the query; the retrieval hash
covers it only when set, so older rows keep verifying.

The re-embed's own columns (``embedding_next``, ``embedding_next_model``) and its indexes
are made by ``ewall reembed`` itself (app/reembed/): their dimension is the new model's,
known only then. The downgrade drops them if a run left them behind.
"""

from collections.abc import Sequence

from alembic import context, op

revision: str = "20261201_0030"
down_revision: str | None = "20261201_0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UPGRADE = """
CREATE TABLE embedding_live (
    id smallint NOT NULL,
    model_id text,
    model_name text,
    dimension integer,
    since timestamptz,
    CONSTRAINT pk_embedding_live PRIMARY KEY (id),
    CONSTRAINT ck_embedding_live_single_row CHECK (id = 1)
);
INSERT INTO embedding_live (id) VALUES (1);

CREATE TABLE reembed_runs (
    run_id uuid NOT NULL,
    target_model text NOT NULL,
    target_model_id text NOT NULL,
    dimension integer NOT NULL,
    from_model_id text,
    status text NOT NULL,
    total bigint NOT NULL DEFAULT 0,
    done bigint NOT NULL DEFAULT 0,
    started_by text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    CONSTRAINT pk_reembed_runs PRIMARY KEY (run_id),
    CONSTRAINT ck_reembed_runs_status
        CHECK (status IN ('filling', 'indexing', 'switching', 'switched', 'cancelled'))
);
-- at most one run is active
CREATE UNIQUE INDEX ux_reembed_runs_active ON reembed_runs ((true))
    WHERE status IN ('filling', 'indexing', 'switching');

ALTER TABLE chunks ADD COLUMN embedding_model text;
ALTER TABLE audit_retrievals ADD COLUMN query_model text;
"""


def _app_role() -> str:
    role = str(context.config.attributes.get("app_role", "ewall_app"))
    if not role.replace("_", "").isalnum() or not role[0].isalpha():
        raise ValueError(f"unsafe app role name {role!r}")
    return role


def upgrade() -> None:
    op.execute(UPGRADE)
    role = _app_role()
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON embedding_live, reembed_runs TO {role}")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_chunks_embedding_next_hnsw")
    op.execute("DROP INDEX IF EXISTS ix_chunks_embedding_next_missing")
    op.execute(
        "ALTER TABLE chunks DROP COLUMN IF EXISTS embedding_next, "
        "DROP COLUMN IF EXISTS embedding_next_model, DROP COLUMN embedding_model"
    )
    op.execute("ALTER TABLE audit_retrievals DROP COLUMN query_model")
    op.execute("DROP TABLE reembed_runs")
    op.execute("DROP TABLE embedding_live")
