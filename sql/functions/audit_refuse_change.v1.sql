-- The audit tables are append-only: no UPDATE, DELETE or TRUNCATE, for any role. Triggers
-- on each log table (and DELETE/TRUNCATE on audit_heads) call this function; they are
-- ENABLE ALWAYS, so they fire even under session_replication_role = replica.

CREATE OR REPLACE FUNCTION ewall_audit_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    RAISE EXCEPTION 'audit table % is append-only (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$fn$;
