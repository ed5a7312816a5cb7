-- An audit chain's head and its rows agree when a transaction commits: the head names the
-- chain's last row (the same seq and hash; seq 0 with the genesis hash while the chain is
-- empty), and no row lies beyond the head. The appends of sql/audit.sql move the head and
-- insert its row in one statement, so they always agree. What this closes is the service
-- role doing one without the other: calling ewall_audit_advance alone (a head naming no
-- row, so verification fails for good) or inserting a row at the next sequence number
-- (every later append collides with it, so every search fails). Both were detected before;
-- now the transaction that tries either does not commit.
--
-- Deferred constraint triggers call it at commit, once per moved head (audit_heads) and
-- once per inserted row (the three chain tables, with the chain's name as argument). A
-- deferred trigger runs as the role that queued it, and a head is moved by the chain step
-- as the audit owner, who may not read the chain tables: the check runs as its own owner,
-- the owner of the tables, with the search path pinned.

CREATE OR REPLACE FUNCTION ewall_audit_head_agrees() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $fn$
DECLARE
    v_chain text;
    v_seq bigint;
    v_hash text;
    v_named boolean;
BEGIN
    IF TG_TABLE_NAME = 'audit_heads' THEN
        v_chain := NEW.chain;
    ELSE
        v_chain := TG_ARGV[0];
    END IF;
    SELECT h.seq, h.hash INTO v_seq, v_hash FROM public.audit_heads AS h WHERE h.chain = v_chain;
    IF v_seq IS NULL THEN
        RAISE EXCEPTION 'audit chain % has no head', v_chain
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_TABLE_NAME <> 'audit_heads' THEN
        IF NEW.seq > v_seq THEN
            RAISE EXCEPTION 'audit chain %: row % lies beyond the head (seq %)',
                v_chain, NEW.seq, v_seq
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NULL;
    END IF;
    IF v_seq = 0 THEN
        v_named := v_hash = repeat('0', 64);
    ELSIF v_chain = 'retrievals' THEN
        v_named := EXISTS (SELECT FROM public.audit_retrievals AS r
                           WHERE r.seq = v_seq AND r.hash = v_hash);
    ELSIF v_chain = 'policy' THEN
        v_named := EXISTS (SELECT FROM public.policy_events AS p
                           WHERE p.seq = v_seq AND p.hash = v_hash);
    ELSIF v_chain = 'gates' THEN
        v_named := EXISTS (SELECT FROM public.gate_events AS g
                           WHERE g.seq = v_seq AND g.hash = v_hash);
    ELSE
        v_named := false;
    END IF;
    IF NOT v_named THEN
        RAISE EXCEPTION 'audit chain %: the head (seq %) names no row of the chain',
            v_chain, v_seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END
$fn$;
