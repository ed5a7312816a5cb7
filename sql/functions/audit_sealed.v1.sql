-- A committed audit entry is sealed: nothing the service role can write changes what it
-- records. The chain tables refuse UPDATE and DELETE, but an entry's results and its access
-- sets are rows of their own, and the service role must insert both when it appends
-- (sql/audit.sql, append_retrieval). A check of 2026-12-06 found that leaked service
-- credentials could
-- - add a result row to a retrieval committed long ago: "who saw matter M" then named a
--   person who never saw it, and verification failed for good (the row's hash no longer
--   covers its results), with nothing the service role could do to repair it;
-- - insert an access set whose members are not the ones its id is the hash of, ahead of
--   the search that would name it: the append's ON CONFLICT DO NOTHING kept the planted
--   members, and the retrieval's row recorded them; or a set with a NULL member, on which
--   verification stopped with an error instead of reporting the tampering.

-- The content address of a set of wall groups or principals, exactly as the Python side
-- computes it (app/audit/chain.py, access_set_id): sha256 of the canonical JSON of its
-- distinct members in code point order. array_to_json writes a text array as json.dumps
-- does with separators (",", ":") and ensure_ascii off: the same escapes for quotes,
-- backslashes and control characters, every other character as it is; a byte-wise ("C")
-- order of UTF-8 is code point order. tests/search/test_audit_sealed.py holds the two
-- sides to each other.
CREATE OR REPLACE FUNCTION ewall_access_set_id(p_members text[])
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT encode(sha256(convert_to(coalesce(
               (SELECT CAST(array_to_json(array_agg(DISTINCT m COLLATE "C"
                                                    ORDER BY m COLLATE "C")) AS text)
                FROM unnest(p_members) AS m),
               '[]'), 'UTF8')), 'hex')
$fn$;

-- The 64-bit id of a row's xmin, read near the 64-bit id p_top of this transaction: the
-- 32-bit xmin in p_top's epoch, moved one epoch back or on when that puts it more than 2^31
-- from p_top (PostgreSQL keeps every live id within 2^31 of the next one). A
-- subtransaction's id (a savepoint) lies just above p_top, in this epoch or the next.
CREATE OR REPLACE FUNCTION ewall_xid8_near(p_xid xid, p_top bigint) RETURNS xid8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT CAST(CAST(CASE WHEN n.x > p_top + 2147483648 THEN n.x - 4294967296
                          WHEN n.x < p_top - 2147483648 THEN n.x + 4294967296
                          ELSE n.x END AS text) AS xid8)
    FROM (SELECT (p_top & -4294967296) | CAST(CAST(p_xid AS text) AS bigint) AS x) AS n
$fn$;

-- Statement trigger after INSERT on audit_retrieval_results (transition table new_results):
-- every result row belongs to a retrieval that this transaction has itself inserted. The
-- append inserts the retrieval and its results in one statement, so at the end of that
-- statement both are there. A retrieval inserted by this transaction is a row this
-- transaction sees whose inserting transaction is still in progress (another transaction's
-- uncommitted rows are invisible); its xmin may be a subtransaction's (a savepoint). A
-- retrieval that another transaction committed, before or after this one began, reads
-- "committed": its results are sealed. (Not closed: a retrieval frozen 2^32 ids ago whose
-- raw xmin equals an id of this transaction; the service role would have to spend about
-- four billion transaction ids first.)
CREATE OR REPLACE FUNCTION ewall_audit_results_sealed() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $fn$
DECLARE
    v_top bigint := CAST(CAST(pg_current_xact_id() AS text) AS bigint);
    v_retrieval uuid;
BEGIN
    SELECT n.retrieval_id INTO v_retrieval
    FROM new_results AS n
    WHERE NOT EXISTS (
        SELECT FROM public.audit_retrievals AS r
        WHERE r.retrieval_id = n.retrieval_id
          AND pg_xact_status(public.ewall_xid8_near(r.xmin, v_top)) = 'in progress')
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'audit retrieval %: its results are sealed (only the append that '
                        'records the retrieval writes them)', v_retrieval
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NULL;
END
$fn$;
