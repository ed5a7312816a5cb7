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
--   3. the instant the replica decided access at (its statement_timestamp(), its own host's
--      clock) is one the primary's clock agrees with: not ahead of the primary's clock, not
--      more than the audit's append lag behind it, and no wall's effective window opens or
--      closes in between. Walls that start or end take effect by the clock, with no write,
--      so a replica whose clock runs behind would otherwise admit a screened person after
--      the wall began; with this, access at the replica's instant is access at the
--      primary's, and the row's "at" keeps the audit's finality argument (sql/audit.sql,
--      final_before) on one clock.
-- When the fence fails the chain head is not advanced and the statement returns no row;
-- the caller rolls back (nothing of this search is left on the primary) and runs the
-- search again on the primary.
--
-- The fence's own parameters are :fence_wall_groups and :fence_source_acl_ids, the allowed
-- sets the replica search used (app/audit/chain.py, append_fenced_retrieval).
--
-- The statements below are the replicas' connection plumbing (app/db/replicas.py).

-- name: probe
-- The monitor's look at a replica: does the database hold the schema, standby or not, how
-- far it has replayed, and which database of which cluster it is (compared with identity's
-- answer on the primary: a URL naming another database of the standby is no replica of
-- the primary's).
SELECT to_regclass('chunks') IS NOT NULL AS schema,
       pg_is_in_recovery() AS standby,
       pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0') AS replay,
       pg_wal_lsn_diff(pg_last_wal_receive_lsn(), '0/0') AS receive,
       current_database() AS database,
       (SELECT CAST(system_identifier AS text) FROM pg_control_system()) AS system_id

-- name: identity
-- The primary's database name and cluster (a streaming standby shares both).
SELECT current_database() AS database,
       (SELECT CAST(system_identifier AS text) FROM pg_control_system()) AS system_id

-- name: primary_lsn_bytes
-- The primary's WAL position as a byte count (the monitor's lag samples).
SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')

-- name: primary_lsn
-- The primary's WAL position as text (the grounding gate's zero-staleness check).
SELECT CAST(pg_current_wal_lsn() AS text)

-- name: primary_lsn_at
-- The primary's WAL position and its clock, at a grounding request's start (the gate's reads
-- on a replica are judged at the primary's instant, not the replica host's: app/db/clock.py).
SELECT CAST(pg_current_wal_lsn() AS text) AS lsn, statement_timestamp() AS at

-- name: replayed_past
-- Whether this server is a standby that has replayed at least up to :lsn.
SELECT pg_is_in_recovery()
       AND coalesce(pg_last_wal_replay_lsn() >= CAST(:lsn AS pg_lsn), false)

