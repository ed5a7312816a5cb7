-- An audit chain's head and its rows agree when a transaction commits: every move of the
-- head names a row of its chain (the same seq and hash; seq 0 with the genesis hash while
-- the chain is empty), and no row lies beyond the head. The appends of sql/audit.sql move
-- the head and insert its row in one statement, so they always agree. What this closes is
-- the service role doing one without the other: calling ewall_audit_advance alone (a head
-- naming no row, or a row skipped between two moves: verification fails for good) or
-- inserting a row at the next sequence number (every later append collides with it, so
-- every search fails). Rows at seq 0 or below are refused by a check constraint on each
-- chain table (migration 20261207_0056).
--
-- Deferred constraint triggers call it at commit, once per moved head (audit_heads: the
-- head as that move left it, so each of several moves in one transaction needs its own
-- row) and once per inserted row (the three chain tables, with the chain's name as
-- argument). A deferred trigger runs as the role that queued it, and a head is moved by
-- the chain step as the audit owner, who may not read the chain tables: the check runs as
-- its own owner, the owner of the tables, with the search path pinned. What it cannot see is
-- a row whose content is not what its hash was computed over (the caller hands the step its
-- canonical text): verification finds that one. The checks are deferred: a transaction
-- that made them immediate (SET CONSTRAINTS ALL IMMEDIATE) could append nothing, since the
-- step moves the head before the same statement inserts its row.

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
    IF TG_TABLE_NAME <> 'audit_heads' THEN
        v_chain := TG_ARGV[0];
        SELECT h.seq INTO v_seq FROM public.audit_heads AS h WHERE h.chain = v_chain;
        IF v_seq IS NULL OR NEW.seq > v_seq THEN
            RAISE EXCEPTION 'audit chain %: row % lies beyond the head (seq %)',
                v_chain, NEW.seq, v_seq
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NULL;
    END IF;
    v_chain := NEW.chain;
    v_seq := NEW.seq;
    v_hash := NEW.hash;
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
