"""A fencing token per (source, scope): a sync that lost its lock writes no state.

Revision ID: 20261214_0071
Revises: 20261213_0070
Create Date: 2026-12-14

A connector sync holds a session advisory lock per (source, scope) on a connection that is
idle while the sync works. When that connection drops (a server restart, an idle-session
timeout, a proxy, pg_terminate_backend) the lock goes with it, silently, and a second sync of
the same scope could start beside the first: two crawls writing cursors, seen ids and the
full-crawl bookkeeping that decides deletions (invariant 9).

``sync_fences`` holds, per (source, scope), a token that every sync raises when it takes the
lock; every state write of a sync reads the token (FOR SHARE) in its own transaction and
commits only while it is still the one it took (connectors/fence.py). A sync that lost its
lock to another therefore cannot write state. ``holder`` and ``backend_pid`` say who took it
last (the process and the backend of its lock), for an operator.
"""

from collections.abc import Sequence

from app.db.function_sources import migration_app_role, run_statement

revision: str = "20261214_0071"
down_revision: str | None = "20261213_0070"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CREATE_TABLE = """
CREATE TABLE sync_fences (
    source text NOT NULL,
    scope text NOT NULL,
    token bigint NOT NULL,
    holder text NOT NULL,
    backend_pid integer NOT NULL,
    taken_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_sync_fences PRIMARY KEY (source, scope)
)
"""


def upgrade() -> None:
    run_statement(CREATE_TABLE)
    for role in (migration_app_role(), "ewall_writer"):
        run_statement(f"GRANT SELECT, INSERT, UPDATE ON sync_fences TO {role}")


def downgrade() -> None:
    run_statement("DROP TABLE sync_fences")
