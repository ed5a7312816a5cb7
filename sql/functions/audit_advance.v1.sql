-- One step of an audit hash chain, the one definition of the hash rule:
--   hash = sha256(prev_hash || '|' || seq || '|' || canonical), hex.
-- The three appends of sql/audit.sql (retrievals, policy events, gate events) call it.
-- The search path is pinned (pg_temp last), so no object of another schema can stand in for
-- audit_heads. p_proceed false leaves the head alone and returns no row: the replica fence
-- gates the chain step with it (sql/audit.sql, append_retrieval). Who may call it, its owner
-- and whose rights it runs with are set by the migrations that apply it (0021, 0036).

CREATE OR REPLACE FUNCTION ewall_audit_advance(p_chain text, p_canonical text, p_proceed boolean)
RETURNS TABLE (seq bigint, prev_hash text, hash text)
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, public, pg_temp
AS $fn$
    UPDATE public.audit_heads AS h
    SET seq = h.seq + 1,
        hash = encode(sha256(convert_to(h.hash || '|' || (h.seq + 1)::text || '|' || p_canonical,
                                        'UTF8')), 'hex'),
        prev_hash = h.hash
    WHERE h.chain = p_chain AND p_proceed
    RETURNING h.seq, h.prev_hash, h.hash
$fn$;
