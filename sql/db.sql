-- Infrastructure statements of app/db (schema state, not domain data).

-- name: embedding_dimension
-- The n of chunks.embedding vector(n); no row before the migrations ran.
SELECT atttypmod AS dimension
FROM pg_attribute
WHERE attrelid = to_regclass('public.chunks') AND attname = 'embedding'

-- name: ping
SELECT 1

-- name: read_only
-- The transaction reads only (the first statement of a read snapshot: engine.begin_snapshot).
SET TRANSACTION READ ONLY

-- name: current_login
-- The role a new pool connection logged in as (the engine switches to the app role if not).
SELECT current_user

-- name: generic_plan_on
-- The next statement runs its generic plan (engine: sqlfiles.generic); the mode before is
-- kept for generic_plan_off. Both transaction-local.
SELECT set_config('ewall.plan_cache_mode_before', current_setting('plan_cache_mode'), true),
       set_config('plan_cache_mode', 'force_generic_plan', true)

-- name: generic_plan_off
-- (the mode as it is when nothing was kept: in autocommit the setting ended with its statement)
SELECT set_config('plan_cache_mode',
                  coalesce(nullif(current_setting('ewall.plan_cache_mode_before', true), ''),
                           current_setting('plan_cache_mode')),
                  true)

-- name: backend_identity
-- This connection's server process: its pid, when it started, and whether the connection
-- came over a Unix socket or loopback (inet_server_addr() is NULL on a socket).
SELECT pg_backend_pid() AS pid,
       extract(epoch FROM (SELECT backend_start FROM pg_stat_activity
                           WHERE pid = pg_backend_pid())) AS backend_start,
       coalesce(host(inet_server_addr()) IN ('127.0.0.1', '::1'), true) AS local_address

-- name: now
-- The database's clock, when this statement began (app/db/clock.py): the one clock every
-- host shares. Only where no statement the caller already sends can carry it.
SELECT statement_timestamp()
