-- Whether an append to one audit chain has still to commit: every append holds the chain
-- head's row from its update to its commit (ewall_audit_advance), and a share lock asked
-- without waiting is refused exactly then. A key-share or share lock that anyone else holds
-- is no refusal, so only an append counts. The export's final instant stops at the last
-- committed row while one is pending (sql/audit.sql, final_before). Who may call it, its
-- owner and whose rights it runs with are set by the migration that applies it (0055): the
-- service role may not lock the head row itself.

CREATE OR REPLACE FUNCTION ewall_audit_append_pending(p_chain text)
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, public, pg_temp
AS $fn$
    SELECT NOT EXISTS (
        SELECT 1 FROM public.audit_heads AS h WHERE h.chain = p_chain FOR SHARE SKIP LOCKED
    )
$fn$;
