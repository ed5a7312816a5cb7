-- Per-person limits shared by every API process (app/limits_repository.py). Times are epoch
-- seconds from the database's clock (one clock for every process), or the caller's frozen
-- clock in tests (:now). Each check is one statement that holds its row lock only until
-- its own commit, microseconds later, so a second caller never waits on a first one's call.

-- name: spend
-- Take each asked amount from the person's bucket of that budget. A bucket holds at most
-- :capacities (the per-minute rate) and refills continuously at capacity/60 a second; a
-- missing row is a full bucket. A bucket that cannot pay is left as it was. One row per
-- asked budget: granted, and the tokens left (granted) or there (refused), so the caller
-- can roll back the whole call when any budget refused (a refusal by one takes nothing
-- from the others) and say how long to wait.
WITH asked AS (
    SELECT a.budget, a.amount, a.capacity
    FROM unnest(CAST(:budgets AS text[]), CAST(:amounts AS double precision[]),
                CAST(:capacities AS double precision[])) AS a(budget, amount, capacity)
), clock AS (
    SELECT coalesce(CAST(:now AS double precision), date_part('epoch', clock_timestamp())) AS t
), spent AS (
    INSERT INTO limit_buckets AS b (budget, person_id, tokens, at, full_at)
    SELECT asked.budget, :person_id, asked.capacity - asked.amount, clock.t,
           clock.t + asked.amount * 60 / asked.capacity
    FROM asked, clock
    ON CONFLICT (budget, person_id) DO UPDATE
    SET (tokens, at, full_at) = (
        SELECT r.level - a.amount, EXCLUDED.at,
               EXCLUDED.at + (a.capacity - r.level + a.amount) * 60 / a.capacity
        FROM asked AS a,
             LATERAL (SELECT least(a.capacity,
                                   b.tokens + greatest(0, EXCLUDED.at - b.at) * a.capacity / 60)
                      AS level) AS r
        WHERE a.budget = b.budget)
    WHERE (
        SELECT least(a.capacity, b.tokens + greatest(0, EXCLUDED.at - b.at) * a.capacity / 60)
               >= a.amount
        FROM asked AS a
        WHERE a.budget = b.budget)
    RETURNING b.budget, b.tokens
)
SELECT asked.budget, spent.budget IS NOT NULL AS granted,
       coalesce(spent.tokens,
                least(asked.capacity,
                      held.tokens + greatest(0, clock.t - held.at) * asked.capacity / 60),
                asked.capacity) AS tokens
FROM asked
CROSS JOIN clock
LEFT JOIN spent ON spent.budget = asked.budget
LEFT JOIN limit_buckets AS held
       ON held.budget = asked.budget AND held.person_id = :person_id

-- name: take_slot
-- One more in-flight slot of the person for a route family, unless :limit are held. Each
-- slot is a lease: released when the call ends, or lapsing after :lease_s when the process
-- that held it died. No row back: refused.
WITH clock AS (
    SELECT coalesce(CAST(:now AS double precision), date_part('epoch', clock_timestamp())) AS t
)
INSERT INTO limit_slots AS s (family, person_id, holders, leases, expires_at)
SELECT :family, :person_id, ARRAY[CAST(:holder AS uuid)], ARRAY[clock.t + :lease_s],
       clock.t + :lease_s
FROM clock
ON CONFLICT (family, person_id) DO UPDATE
SET holders = ARRAY(
        SELECT l.holder FROM unnest(s.holders, s.leases) WITH ORDINALITY AS l(holder, until, n)
        WHERE l.until > (SELECT t FROM clock) ORDER BY l.n) || EXCLUDED.holders,
    leases = ARRAY(
        SELECT l.until FROM unnest(s.holders, s.leases) WITH ORDINALITY AS l(holder, until, n)
        WHERE l.until > (SELECT t FROM clock) ORDER BY l.n) || EXCLUDED.leases,
    expires_at = greatest(s.expires_at, EXCLUDED.expires_at)
WHERE (SELECT count(*) FROM unnest(s.leases) AS until WHERE until > (SELECT t FROM clock))
      < :limit
RETURNING cardinality(s.holders) AS in_flight

-- name: release_slot
UPDATE limit_slots AS s
SET holders = ARRAY(
        SELECT l.holder FROM unnest(s.holders, s.leases) WITH ORDINALITY AS l(holder, until, n)
        WHERE l.holder <> CAST(:holder AS uuid) ORDER BY l.n),
    leases = ARRAY(
        SELECT l.until FROM unnest(s.holders, s.leases) WITH ORDINALITY AS l(holder, until, n)
        WHERE l.holder <> CAST(:holder AS uuid) ORDER BY l.n)
WHERE s.family = :family AND s.person_id = :person_id

-- name: slots_in_flight
SELECT count(*) AS in_flight
FROM limit_slots AS s, unnest(s.leases) AS until
WHERE s.family = :family AND s.person_id = :person_id
  AND until > coalesce(CAST(:now AS double precision), date_part('epoch', clock_timestamp()))

-- name: sweep_buckets
-- Buckets that are full again mean the same as no row: a bounded batch goes, rows in use
-- by a check are left for the next sweep.
DELETE FROM limit_buckets
WHERE (budget, person_id) IN (
    SELECT budget, person_id FROM limit_buckets
    WHERE full_at <= coalesce(CAST(:now AS double precision),
                              date_part('epoch', clock_timestamp()))
    LIMIT :batch
    FOR UPDATE SKIP LOCKED)

-- name: sweep_slots
-- Rows whose every lease has ended (released or lapsed).
DELETE FROM limit_slots
WHERE (family, person_id) IN (
    SELECT family, person_id FROM limit_slots
    WHERE expires_at <= coalesce(CAST(:now AS double precision),
                                 date_part('epoch', clock_timestamp()))
    LIMIT :batch
    FOR UPDATE SKIP LOCKED)
