"""One definition of the audit chain step: the function ewall_audit_advance.

Revision ID: 20261201_0021
Revises: 20261201_0019
Create Date: 2026-12-01

The three appends of sql/audit.sql (retrievals, policy events, gate events) each advanced
their chain head with a copy of the same UPDATE. They now call this function, so the hash
rule is written once: hash = sha256(prev_hash || '|' || seq || '|' || canonical), hex, the
same expression as before, so rows written before and after this revision form one chain.

It runs with the caller's rights (SECURITY INVOKER): the service role may already advance
audit_heads (SELECT, UPDATE) and nothing more, and the function gives it nothing more; the
log tables stay append-only (their triggers and grants are unchanged). The search path is
pinned (pg_temp last), so no object of another schema can stand in for audit_heads.
``p_proceed`` false leaves the head alone and returns no row: the replica fence gates the
chain step with it (sql/audit.sql, append_retrieval).
"""

from collections.abc import Sequence

from alembic import context, op

from app.db.function_sources import apply_function_source

revision: str = "20261201_0021"
down_revision: str | None = "20261201_0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


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
    # ewall_audit_advance, then no EXECUTE for PUBLIC (a function's default)
    apply_function_source(
        "audit_advance.v1.sql", "96f8f98ff1ddeb0550da92fb70abc74f0e14d96838cc6b3df04643d1a491b5ca"
    )
    _run("REVOKE ALL ON FUNCTION ewall_audit_advance(text, text, boolean) FROM PUBLIC")
    _run(f"GRANT EXECUTE ON FUNCTION ewall_audit_advance(text, text, boolean) TO {_app_role()}")


def downgrade() -> None:
    _run("DROP FUNCTION ewall_audit_advance(text, text, boolean)")
