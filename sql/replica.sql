-- Read replicas: the fence between a search computed on a streaming replica and its audit
-- row on the primary (docs/scale-out.md).
--
-- A replica may lag behind a wall the primary has already committed. A search that ran on
-- a replica carries the policy_version its statement saw (the resolution and the hybrid
-- statement read it in one repeatable-read snapshot on the replica). Its audit row is
-- appended on the primary by audit.append_retrieval with :fenced true: its fence CTE gates
-- the chain step, so the check and the append are ONE statement in one snapshot:
--   1. the primary's policy_version is still the version the replica saw, and
--   2. every returned chunk is, on the primary, still there with the same content, not
--      suppressed, not pending re-tagging, and inside the allowed wall groups and source
--      ACLs (document-level changes such as a narrowed source permission or a moved
--      document do not bump policy_version; this catches them too). Row-level security
--      reads the same sets, set for this transaction by the caller.
-- When the fence fails the chain head is not advanced and the statement returns no row;
-- the caller rolls back (nothing of this search is left on the primary) and runs the
-- search again on the primary.
--
-- The fence's own parameters are :fence_wall_groups and :fence_source_acl_ids, the allowed
-- sets the replica search used (app/audit/chain.py, append_fenced_retrieval).
--
-- The statements below are the replicas' connection plumbing (app/db/replicas.py).

-- name: probe
-- The monitor's look at a replica: does the database hold the schema, standby or not, and
-- how far it has replayed.
SELECT to_regclass('chunks') IS NOT NULL AS schema,
       pg_is_in_recovery() AS standby,
       pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0') AS replay,
       pg_wal_lsn_diff(pg_last_wal_receive_lsn(), '0/0') AS receive

-- name: primary_lsn_bytes
-- The primary's WAL position as a byte count (the monitor's lag samples).
SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')

-- name: primary_lsn
-- The primary's WAL position as text (the grounding gate's zero-staleness check).
SELECT CAST(pg_current_wal_lsn() AS text)

-- name: replayed_past
-- Whether this server is a standby that has replayed at least up to :lsn.
SELECT pg_is_in_recovery()
       AND coalesce(pg_last_wal_replay_lsn() >= CAST(:lsn AS pg_lsn), false)

