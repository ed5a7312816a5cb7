"""Console sessions, pending OIDC sign-ins and per-person limits in PostgreSQL.

Revision ID: 20261202_0040
Revises: 20261202_0036
Create Date: 2026-12-02

These lived in one API process's memory, so with several processes behind one address a
session made by one process was unknown to the next, a sign-in begun on one could not end
on another, and each process counted its own share of a person's limits (invariant 13: the
console and the limits hold across several API processes). Every process now reads and
writes the same rows.

- ``console_sessions``: one row per signed-in console browser, keyed by the SHA-256 of the
  cookie's random id, so that reading the table (a backup, a replica) yields no cookie that
  signs anyone in. Logged: sessions survive a restart of the service or the server.
- ``console_oidc_pending``: an OIDC sign-in between the redirect to the issuer and the
  callback (state, nonce, PKCE verifier), keyed by the SHA-256 of the state, taken once.
- ``limit_buckets`` and ``limit_slots``: the per-person budgets (token buckets) and
  in-flight slots. UNLOGGED: every check writes a row, and these rows are worth nothing
  after a crash (a person then starts with a full budget and free slots, which is what a
  person who has not called for a minute has anyway); they write no WAL and are not
  replicated, and the limiter runs on the primary only. Times are epoch seconds
  (``double precision``) from the database's clock, one clock for every process.

Every row carries when it stops meaning anything, and the stores delete such rows a
bounded batch at a time (app/console/sessions.py, app/limits.py).
"""

from collections.abc import Sequence

from alembic import context, op

revision: str = "20261202_0040"
down_revision: str | None = "20261202_0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("console_sessions", "console_oidc_pending", "limit_buckets", "limit_slots")

UPGRADE = """
CREATE TABLE console_sessions (
    sid_sha256 text NOT NULL,
    person_id text NOT NULL,
    roles text[] NOT NULL,
    csrf text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    CONSTRAINT pk_console_sessions PRIMARY KEY (sid_sha256)
);
CREATE INDEX ix_console_sessions_expires_at ON console_sessions (expires_at);

CREATE TABLE console_oidc_pending (
    state_sha256 text NOT NULL,
    nonce text NOT NULL,
    verifier text NOT NULL,
    redirect_uri text NOT NULL,
    next_url text NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT pk_console_oidc_pending PRIMARY KEY (state_sha256)
);
CREATE INDEX ix_console_oidc_pending_expires_at ON console_oidc_pending (expires_at);

CREATE UNLOGGED TABLE limit_buckets (
    budget text NOT NULL,
    person_id text NOT NULL,
    tokens double precision NOT NULL,
    at double precision NOT NULL,
    full_at double precision NOT NULL,
    CONSTRAINT pk_limit_buckets PRIMARY KEY (budget, person_id)
);
CREATE INDEX ix_limit_buckets_full_at ON limit_buckets (full_at);

CREATE UNLOGGED TABLE limit_slots (
    family text NOT NULL,
    person_id text NOT NULL,
    holders uuid[] NOT NULL,
    leases double precision[] NOT NULL,
    expires_at double precision NOT NULL,
    CONSTRAINT pk_limit_slots PRIMARY KEY (family, person_id),
    CONSTRAINT ck_limit_slots_paired CHECK (cardinality(holders) = cardinality(leases))
);
CREATE INDEX ix_limit_slots_expires_at ON limit_slots (expires_at);
"""


def _app_role() -> str:
    role = str(context.config.attributes.get("app_role", "ewall_app"))
    if not role.replace("_", "").isalnum() or not role[0].isalpha():
        raise ValueError(f"unsafe app role name {role!r}")
    return role


def _run(statement: str) -> None:
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    role = _app_role()
    _run(UPGRADE)
    for table in TABLES:
        # the writer holds what the service role holds (migration 20261202_0036)
        for grantee in (role, "ewall_writer"):
            _run(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {grantee}")


def downgrade() -> None:
    for table in reversed(TABLES):
        _run(f"DROP TABLE {table}")
