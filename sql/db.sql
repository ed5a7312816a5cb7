-- Infrastructure statements of app/db (schema state, not domain data).

-- name: embedding_dimension
-- The n of chunks.embedding vector(n); no row before the migrations ran.
SELECT atttypmod AS dimension
FROM pg_attribute
WHERE attrelid = to_regclass('public.chunks') AND attname = 'embedding'

-- name: ping
SELECT 1

-- name: current_login
-- The role a new pool connection logged in as (the engine switches to the app role if not).
SELECT current_user
