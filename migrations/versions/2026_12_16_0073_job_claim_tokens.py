"""A fencing token per job claim: a worker whose claim was taken over writes nothing.

Revision ID: 20261216_0073
Revises: 20261215_0072
Create Date: 2026-12-16

A job worker holds a session advisory lock keyed by the job id on an idle lease connection
while the job runs; a ``running`` row whose lock can be taken is claimed again as an orphan.
When the lease drops while its worker is alive (a server restart, an idle-session timeout, a
proxy, pg_terminate_backend), a second worker claims the job and runs it beside the first.

``claim_token`` is raised by every claim and never lowered (a put-back lowers ``attempts``,
so that counter cannot tell two claims apart). A worker keeps the value its claim raised it
to; its outcome write (succeed, retry, put back, fail) and the ingestion handler's writes
go through only while the row still holds that value (app/jobs/queue.py).
"""

from collections.abc import Sequence

from app.db.function_sources import run_statement

revision: str = "20261216_0073"
down_revision: str | None = "20261215_0072"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    run_statement("ALTER TABLE jobs ADD COLUMN claim_token bigint NOT NULL DEFAULT 0")


def downgrade() -> None:
    run_statement("ALTER TABLE jobs DROP COLUMN claim_token")
