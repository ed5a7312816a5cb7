"""Two NOLOGIN roles: the audit owner runs the chain step, the writer passes the chunks RLS.

Revision ID: 20261202_0036
Revises: 20261201_0035
Create Date: 2026-12-02

The chain step ``ewall_audit_advance`` ran with the caller's rights, so the service role held
UPDATE on ``audit_heads``: leaked service credentials could set a head's hash or sequence
number at will, which breaks verification for good (the next row chains from the forged
hash) or makes every search fail (the next sequence number already taken). The function now
runs as its owner, ``ewall_audit_owner`` (NOLOGIN, no member), which alone may update the
heads; the service role keeps SELECT on the heads and EXECUTE on the function. Its search
path stays pinned with ``pg_temp`` last and it names ``public.audit_heads``, so nothing the
caller creates can stand in for a table or an operator it uses.

Writer mode was the setting ``ewall.writer = on``, which any service session could set to
turn the chunks RLS backstop off. It is now the role ``ewall_writer`` (NOLOGIN), granted to
the service role with INHERIT FALSE, so the policies written ``TO ewall_writer`` apply only
after an explicit ``SET LOCAL ROLE ewall_writer`` (app/walls/access.py, mark_writer); the
reading policy no longer looks at any setting. The writer holds the same table, sequence and
function privileges as the service role (a writing transaction also writes its documents,
runs and audit rows), copied here from the catalog: a later migration that grants the
service role something grants it to ``ewall_writer`` too (tests/foundation/test_db_roles.py
checks that the two agree).

The reading policy also hides suppressed chunks (withdrawn case law), as the search
statement does: a query that forgets the predicate, or the grounding gate's
``visible_chunks``, no longer sees them.

Both roles are created when absent and made NOLOGIN when present, since the service role is
created outside the migrations (docs and app/db/embedded.py). A schema owner that is not a
superuser is subject to the chunks policies too (FORCE ROW LEVEL SECURITY); for it alone the
old setting still opens the table (``chunks_owner_maintenance``), because it could lift row
security on its own table anyway and ``ewall chunks relayout`` copies rows under it.
"""

from collections.abc import Sequence

from alembic import context, op

revision: str = "20261202_0036"
down_revision: str | None = "20261201_0035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AUDIT_OWNER = "ewall_audit_owner"
WRITER = "ewall_writer"

ROLES = r"""
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ewall_audit_owner') THEN
        CREATE ROLE ewall_audit_owner NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
    ELSE
        ALTER ROLE ewall_audit_owner NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ewall_writer') THEN
        CREATE ROLE ewall_writer NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
    ELSE
        ALTER ROLE ewall_writer NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
    END IF;
END
$roles$;
"""

# A superuser may give a function to any role; any other owner must be able to become the
# new owner, and the new owner must be allowed to create in the schema (for that moment).
AUDIT_OWNER_UP = r"""
DO $owner$
DECLARE
    su boolean := (SELECT rolsuper FROM pg_roles WHERE rolname = current_user);
BEGIN
    IF NOT su THEN
        GRANT ewall_audit_owner TO CURRENT_USER WITH INHERIT FALSE, SET TRUE;
        GRANT CREATE ON SCHEMA public TO ewall_audit_owner;
    END IF;
    ALTER FUNCTION public.ewall_audit_advance(text, text, boolean) SECURITY DEFINER;
    ALTER FUNCTION public.ewall_audit_advance(text, text, boolean) OWNER TO ewall_audit_owner;
    IF NOT su THEN
        REVOKE CREATE ON SCHEMA public FROM ewall_audit_owner;
    END IF;
END
$owner$;
GRANT USAGE ON SCHEMA public TO ewall_audit_owner;
GRANT SELECT, UPDATE ON public.audit_heads TO ewall_audit_owner;
"""

AUDIT_OWNER_DOWN = r"""
ALTER FUNCTION public.ewall_audit_advance(text, text, boolean) OWNER TO CURRENT_USER;
ALTER FUNCTION public.ewall_audit_advance(text, text, boolean) SECURITY INVOKER;
REVOKE ALL ON public.audit_heads FROM ewall_audit_owner;
REVOKE USAGE ON SCHEMA public FROM ewall_audit_owner;
"""

# Every privilege the service role holds in this schema, held by the writer too.
COPY_PRIVILEGES = r"""
DO $copy$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT c.oid::regclass AS rel, c.relkind, a.privilege_type
        FROM pg_class c, aclexplode(c.relacl) AS a
        WHERE c.relnamespace = 'public'::regnamespace
          AND a.grantee = (SELECT oid FROM pg_roles WHERE rolname = '{app}')
        ORDER BY 1, 3
    LOOP
        EXECUTE format('GRANT %s ON %s %s TO ewall_writer', r.privilege_type,
                       CASE WHEN r.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, r.rel);
    END LOOP;
    FOR r IN
        SELECT p.oid::regprocedure AS fn
        FROM pg_proc p, aclexplode(p.proacl) AS a
        WHERE p.pronamespace = 'public'::regnamespace AND a.privilege_type = 'EXECUTE'
          AND a.grantee = (SELECT oid FROM pg_roles WHERE rolname = '{app}')
        ORDER BY 1
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ewall_writer', r.fn);
    END LOOP;
END
$copy$;
GRANT USAGE ON SCHEMA public TO ewall_writer;
"""

REVOKE_WRITER = r"""
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ewall_writer;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ewall_writer;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM ewall_writer;
REVOKE USAGE ON SCHEMA public FROM ewall_writer;
"""

ALLOWED = """
        wall_group_id IN (SELECT unnest(
            nullif((SELECT current_setting('ewall.allowed_wall_groups', true)), '')::text[]))
        AND source_acl_id IN (SELECT unnest(
            nullif((SELECT current_setting('ewall.allowed_source_acls', true)), '')::text[]))
        AND coalesce(matter_id, '') <> ALL (CAST(
            (SELECT coalesce(array_agg(p.matter_id), '{}') FROM retag_pending AS p) AS text[]))"""

WRITER_SETTING = "(SELECT current_setting('ewall.writer', true)) = 'on'"

POLICIES_UP = f"""
DROP POLICY chunks_read ON chunks;
DROP POLICY chunks_insert ON chunks;
DROP POLICY chunks_update ON chunks;
DROP POLICY chunks_delete ON chunks;
CREATE POLICY chunks_read ON chunks FOR SELECT USING ({ALLOWED}
        AND NOT suppressed
);
CREATE POLICY chunks_writer ON chunks FOR ALL TO ewall_writer USING (true) WITH CHECK (true);
"""

OWNER_POLICY = f"""
DO $maint$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND current_user <> '{{app}}' THEN
        CREATE POLICY chunks_owner_maintenance ON chunks FOR ALL TO CURRENT_USER
            USING ({WRITER_SETTING}) WITH CHECK ({WRITER_SETTING});
    END IF;
END
$maint$;
"""

POLICIES_DOWN = f"""
DROP POLICY IF EXISTS chunks_owner_maintenance ON chunks;
DROP POLICY chunks_writer ON chunks;
DROP POLICY chunks_read ON chunks;
CREATE POLICY chunks_read ON chunks FOR SELECT USING (
    {WRITER_SETTING}
    OR ({ALLOWED}
    )
);
CREATE POLICY chunks_insert ON chunks FOR INSERT WITH CHECK ({WRITER_SETTING});
CREATE POLICY chunks_update ON chunks FOR UPDATE
    USING ({WRITER_SETTING}) WITH CHECK ({WRITER_SETTING});
CREATE POLICY chunks_delete ON chunks FOR DELETE USING ({WRITER_SETTING});
"""


def _app_role() -> str:
    role = str(context.config.attributes.get("app_role", "ewall_app"))
    if not role.replace("_", "").isalnum() or not role[0].isalpha():
        raise ValueError(f"unsafe app role name {role!r}")
    return role


def _run(statement: str) -> None:
    # Straight to psycopg, as in the initial revision (the DDL holds ":" and "%").
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    app = _app_role()
    _run(ROLES)
    _run(AUDIT_OWNER_UP)
    _run(f"REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_heads FROM {app}")
    _run(COPY_PRIVILEGES.replace("{app}", app))
    # INHERIT FALSE: the writer's policy applies only once a session has entered the role
    _run(f"GRANT {WRITER} TO {app} WITH INHERIT FALSE, SET TRUE")
    _run(POLICIES_UP)
    _run(OWNER_POLICY.replace("{app}", app))


def downgrade() -> None:
    app = _app_role()
    _run(POLICIES_DOWN)
    _run(REVOKE_WRITER)
    _run(f"GRANT SELECT, UPDATE ON audit_heads TO {app}")
    _run(AUDIT_OWNER_DOWN)
