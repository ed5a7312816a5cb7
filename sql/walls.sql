-- Wall-group helpers. A matter's wall group is a deterministic hash of the sorted set of
-- non-lifted walls covering it; a wall covers a matter directly, or through a protected
-- client that is the matter's client or one of its ancestors (corporate family).
--
-- The client hierarchy is walked to its end, however deep (as the conflict graph walks
-- it): the recursive parts use UNION, whose rows repeat on a cycle, so a cycle that the
-- writes refuse could still never make a walk endless. A depth cap would leave the matters
-- below it outside their walls.

-- name: matter_wall_sets
-- The sorted non-lifted wall ids covering each of :matter_ids.
WITH RECURSIVE target AS (
    SELECT matter_id, client_id FROM matters WHERE matter_id = ANY(:matter_ids)
), ancestry (matter_id, client_id) AS (
    SELECT matter_id, client_id FROM target
    UNION
    SELECT a.matter_id, c.parent_id
    FROM ancestry a JOIN clients c ON c.client_id = a.client_id
    WHERE c.parent_id IS NOT NULL
), covering AS (
    SELECT t.matter_id, p.wall_id
    FROM target t JOIN wall_protected_matters p ON p.matter_id = t.matter_id
    UNION
    SELECT a.matter_id, p.wall_id
    FROM ancestry a JOIN wall_protected_clients p ON p.client_id = a.client_id
)
SELECT t.matter_id,
       coalesce(array_agg(DISTINCT w.wall_id ORDER BY w.wall_id)
                FILTER (WHERE w.wall_id IS NOT NULL), '{}') AS wall_ids
FROM target t
LEFT JOIN covering c ON c.matter_id = t.matter_id
LEFT JOIN walls w ON w.wall_id = c.wall_id AND w.lifted_at IS NULL
GROUP BY t.matter_id

-- name: matters_under_clients
-- Every matter of :client_ids and of all their descendant clients.
WITH RECURSIVE subtree (client_id) AS (
    SELECT client_id FROM clients WHERE client_id = ANY(:client_ids)
    UNION
    SELECT c.client_id
    FROM subtree s JOIN clients c ON c.parent_id = s.client_id
)
SELECT DISTINCT m.matter_id FROM matters m JOIN subtree s ON s.client_id = m.client_id

-- name: current_groups
SELECT matter_id, wall_group_id FROM matter_wall_groups WHERE matter_id = ANY(:matter_ids)

-- name: ensure_group
INSERT INTO wall_groups (wall_group_id, wall_ids) VALUES (:wall_group_id, :wall_ids)
ON CONFLICT (wall_group_id) DO NOTHING

-- name: set_matter_groups
INSERT INTO matter_wall_groups AS mwg (matter_id, wall_group_id, updated_at)
SELECT m, g, now()
FROM unnest(CAST(:matter_ids AS text[]), CAST(:group_ids AS text[])) AS t(m, g)
ON CONFLICT (matter_id) DO UPDATE
SET wall_group_id = excluded.wall_group_id, updated_at = now()
WHERE mwg.wall_group_id IS DISTINCT FROM excluded.wall_group_id

-- name: queue_retag
-- Matters whose group changed: their chunks are invisible until re-tagged (fail closed).
INSERT INTO retag_pending AS p (matter_id, target_wall_group_id, policy_version, queued_at,
                               retagged_chunks)
SELECT m, g, :policy_version, now(), 0
FROM unnest(CAST(:matter_ids AS text[]), CAST(:group_ids AS text[])) AS t(m, g)
ON CONFLICT (matter_id) DO UPDATE
SET target_wall_group_id = excluded.target_wall_group_id,
    policy_version = excluded.policy_version,
    queued_at = now(),
    retagged_chunks = 0

-- name: matter_group_for_ingest
-- The group a document's chunks are written with, read without a lock: a wall change may
-- move the matter while the write goes on, and lock_matter_group_for_ingest checks it again
-- at the end of the write.
SELECT m.matter_id, m.client_id, g.wall_group_id
FROM matters m JOIN matter_wall_groups g ON g.matter_id = m.matter_id
WHERE m.matter_id = :matter_id

-- name: lock_matter_group_for_ingest
-- The matter's group as the last committed change left it (a change in flight is waited
-- for), share-locked until the document's write commits: a later change waits only for the
-- write's last statements, and its re-tag then sees the write's chunks.
SELECT wall_group_id FROM matter_wall_groups WHERE matter_id = :matter_id
FOR SHARE

-- name: lock_matter_retag
-- One re-tag batch of a matter at a time, whichever runner (the worker of each host, a
-- hand-run run_once): held until the batch's transaction ends.
SELECT pg_advisory_xact_lock(:namespace, hashtext(:matter_id))

-- name: retag_target_pending
-- Whether the matter still waits to be moved to :target, read after lock_matter_retag (its
-- own statement, so it sees every batch and mark committed before the lock was granted). A
-- runner's row may be stale: the matter moved to another group since the runner read the
-- queue, and another runner may have moved it there and cleared the mark; a batch for the
-- old target would move every chunk back, with no mark left to hide them.
SELECT EXISTS (SELECT 1 FROM retag_pending
               WHERE matter_id = :matter_id AND target_wall_group_id = :target)

-- name: retag_batch
-- One batch of a pending matter's chunks moved to the target group.
WITH batch AS (
    SELECT chunk_id FROM chunks
    WHERE matter_id = :matter_id AND wall_group_id <> :target
    LIMIT :batch_size
    FOR UPDATE SKIP LOCKED
)
UPDATE chunks c SET wall_group_id = :target
FROM batch WHERE c.chunk_id = batch.chunk_id

-- name: retag_done
-- Clears the pending mark only if nothing was re-targeted since this batch began and no
-- chunk of the matter is left in another group.
DELETE FROM retag_pending p
WHERE p.matter_id = :matter_id AND p.target_wall_group_id = :target
  AND p.policy_version = :policy_version
  AND NOT EXISTS (SELECT 1 FROM chunks c
                  WHERE c.matter_id = :matter_id AND c.wall_group_id <> :target)
RETURNING p.matter_id

-- name: allowed_source_acls
-- Source ACLs a person with these principals may read: deny beats allow; "public"/"view"
-- defaults admit every internal person; unresolvable rules admit nobody, and so does a
-- deny of a group whose members ewall does not hold, or that holds such a group at any depth
-- (:incomplete_groups, from the matrix snapshot): the deny would lapse for the members it
-- cannot name (migration 20261206_0054). The rules that deny no group skip the test; each
-- group a rule denies is one probe of source_groups' key. Measured on 200,000 rules, 10% of
-- them denying a group, 20,000 groups (docs/design.md): 1.1-1.2x the statement without the
-- test; a hashed NOT IN and a once-per-statement list of the unknown groups were slower.
SELECT coalesce(array_agg(a.source_acl_id ORDER BY a.source_acl_id), '{}') AS acl_ids
FROM source_acls a
WHERE a.resolvable
  AND a.default_access <> 'none'
  AND NOT (a.deny && CAST(:principals AS text[]))
  AND (a.default_access IN ('public', 'view') OR a.allow && CAST(:principals AS text[]))
  AND (
      a.deny_groups = '{}'
      OR (
          NOT (a.deny_groups && CAST(:incomplete_groups AS text[]))
          AND NOT EXISTS (
              SELECT 1 FROM unnest(a.deny_groups) AS d(principal)
              WHERE NOT EXISTS (
                  SELECT 1 FROM source_groups g
                  WHERE g.source = split_part(d.principal, ':', 1)
                    AND g.group_id
                        = substr(d.principal, length(split_part(d.principal, ':', 1)) + 8)
              )
          )
      )
  )

-- name: visible_chunks
-- Chunks among :chunk_ids that the person may read now (the visibility rule the search
-- applies, sql/functions/chunk_visible.v1.sql), with their document's title (the search
-- result shows it beside the chunk).
SELECT c.chunk_id, c.body, CAST(c.embedding AS text) AS embedding, c.content_sha256,
       c.matter_id, c.document_id, d.title
FROM chunks c
LEFT JOIN documents d ON d.document_id = c.document_id
WHERE c.chunk_id = ANY(CAST(:chunk_ids AS text[]))
  AND ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                          CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
                          (SELECT ewall_retag_pending()))

-- name: team_insiders
-- Inclusionary walls with include_team: the current team of every matter they protect,
-- directly or through a protected client and its descendants (wall expansion in SQL, for
-- the resolution snapshot that every search after a policy change waits for).
WITH RECURSIVE walls_with_team AS (
    SELECT wall_id FROM walls
    WHERE kind = 'inclusionary' AND include_team AND lifted_at IS NULL
), subtree (wall_id, client_id) AS (
    SELECT p.wall_id, p.client_id
    FROM wall_protected_clients p JOIN walls_with_team w ON w.wall_id = p.wall_id
    UNION
    SELECT s.wall_id, c.client_id
    FROM subtree s JOIN clients c ON c.parent_id = s.client_id
), covered AS (
    SELECT p.wall_id, p.matter_id
    FROM wall_protected_matters p JOIN walls_with_team w ON w.wall_id = p.wall_id
    UNION
    SELECT s.wall_id, m.matter_id FROM subtree s JOIN matters m ON m.client_id = s.client_id
)
SELECT DISTINCT c.wall_id, t.person_id
FROM covered c JOIN matter_team t ON t.matter_id = c.matter_id

-- name: policy_version
SELECT version FROM policy_state WHERE id = 1

-- name: matrix_stamp
-- What a whole-matrix snapshot is cached under. policy_version moves with every change of
-- access; the policy chain's head moves with every change of the matrix at all (a party or a
-- title changes no access but does change adversity), because each is logged as one event.
SELECT (SELECT version FROM policy_state WHERE id = 1) AS policy_version,
       coalesce((SELECT seq FROM audit_heads WHERE chain = 'policy'), 0) AS policy_seq

-- name: policy_version_at
-- The version, with the database's clock when this statement began: the instant an access
-- check of this transaction is decided at (app/db/clock.py), at no round trip of its own.
SELECT version, statement_timestamp() AS at FROM policy_state WHERE id = 1

-- name: matrix_stamp_at
-- matrix_stamp, with the database's clock (the instant a read of the matrix is judged at).
SELECT (SELECT version FROM policy_state WHERE id = 1) AS policy_version,
       coalesce((SELECT seq FROM audit_heads WHERE chain = 'policy'), 0) AS policy_seq,
       statement_timestamp() AS at

-- name: policy_version_for_share
-- The version, locked FOR SHARE until commit: no policy change can commit before this
-- transaction does (the grounding gate's replica fence).
SELECT version FROM policy_state WHERE id = 1 FOR SHARE

-- name: no_window_edge_since
-- Whether no wall (not lifted) starts or ends after :at and by the database's clock now:
-- access judged at :at is then access now. The grounding gate's replica reads are judged at
-- the primary's clock at the request's start (app/gates/replica.py); a wall that began since
-- then, by the clock and with no write, would otherwise not screen them. Written as the
-- replica fence of sql/audit.sql writes it (a count the partial indexes on the edges answer,
-- migration 20261215_0072).
SELECT (SELECT count(*)
        FROM walls w
        WHERE w.lifted_at IS NULL
          AND ((w.effective_from > CAST(:at AS timestamptz)
                AND w.effective_from <= (SELECT clock_timestamp()))
               OR (w.effective_until > CAST(:at AS timestamptz)
                   AND w.effective_until <= (SELECT clock_timestamp())))) = 0

-- name: policy_version_for_update
-- The version, locked FOR UPDATE until commit: a change that reads the matrix before it
-- writes (a matrix import) takes this first, so two such changes never decide from the same
-- state (the second reads what the first committed).
-- at: the database's clock when the change began (the instant its wall review judges).
SELECT version, statement_timestamp() AS at FROM policy_state WHERE id = 1 FOR UPDATE

-- name: bump_policy_version
-- The UPDATE of the single row also serialises concurrent policy changes.
UPDATE policy_state SET version = version + 1, updated_at = now() WHERE id = 1
RETURNING version, clock_timestamp() AS at  -- the database's clock, once the row is taken

-- name: set_allowed_sets
-- The person's allowed sets as transaction-local settings (SET LOCAL semantics, safe under
-- poolers) that the chunks RLS policy reads.
SELECT set_config('ewall.allowed_wall_groups', CAST(CAST(:groups AS text[]) AS text), true),
       set_config('ewall.allowed_source_acls', CAST(CAST(:acls AS text[]) AS text), true)

-- name: writer_mode
-- Writer mode for the rest of this transaction: the role ewall_writer, whose own chunks
-- policy lets it pass (migration 20261202_0036; app/walls/access.py, mark_writer, says when
-- that is allowed). LOCAL: the commit or rollback returns the session to the service role.
SET LOCAL ROLE ewall_writer

-- name: add_retagged_chunks
UPDATE retag_pending SET retagged_chunks = retagged_chunks + :n
WHERE matter_id = :matter_id AND target_wall_group_id = :target

-- name: lock_matters_retag
-- The re-tag locks of several matters (lock_matter_retag's), until the transaction ends,
-- taken in the order of their keys: two runners taking several never wait on each other in
-- a cycle (ordered by the ids, two ids whose hashes cross in order could), and two ids of one
-- key take it once.
SELECT count(pg_advisory_xact_lock(:namespace, k.key))
FROM (SELECT DISTINCT hashtext(t.m) AS key
      FROM unnest(CAST(:matter_ids AS text[])) AS t(m)
      ORDER BY 1) AS k

-- name: clear_idle_retags
-- The pending marks, among the rows a runner read, of the matters with nothing to move (no
-- chunk outside the target group: most often no chunk at all), cleared in one statement
-- after lock_matters_retag, with retag_done's conditions: the row as it was read (a matter
-- queued again since keeps its mark) and no chunk left in another group. A mark a wall
-- change holds (queue_retag, in id order) is skipped, not waited for: the DELETE met the
-- marks in the queue's order and, holding those it had deleted, waited for one the change
-- held while the change waited for one of those (a deadlock). A skipped mark stays (its
-- matter hidden) until its own batch clears it.
WITH free AS MATERIALIZED (
    SELECT matter_id FROM retag_pending
    WHERE matter_id = ANY(CAST(:matter_ids AS text[]))
    FOR UPDATE SKIP LOCKED
)
DELETE FROM retag_pending p
USING unnest(CAST(:matter_ids AS text[]), CAST(:targets AS text[]),
             CAST(:versions AS bigint[])) AS t(m, g, v)
WHERE p.matter_id = t.m AND p.target_wall_group_id = t.g AND p.policy_version = t.v
  AND p.matter_id IN (SELECT matter_id FROM free)
  AND NOT EXISTS (SELECT 1 FROM chunks c
                  WHERE c.matter_id = p.matter_id AND c.wall_group_id <> p.target_wall_group_id)
RETURNING p.matter_id

-- name: next_retags
-- The oldest pending re-tags, for the worker.
SELECT matter_id, target_wall_group_id, policy_version FROM retag_pending
ORDER BY queued_at, matter_id
LIMIT 100

-- name: retag_queue
SELECT matter_id, target_wall_group_id, policy_version, queued_at, retagged_chunks
FROM retag_pending
ORDER BY queued_at, matter_id

-- name: matter_retag_pending
-- Whether :matter_id waits for the re-tag worker (hidden from everyone until it is done).
SELECT EXISTS (SELECT 1 FROM retag_pending WHERE matter_id = :matter_id)

-- name: snapshot_people
-- The snapshot_* blocks read the matrix snapshot (app/walls/resolution.py): plain reads of
-- whole tables, fetched as tuples straight from the driver.
SELECT person_id, name, active FROM people

-- name: snapshot_aliases
SELECT person_id, alias FROM person_aliases

-- name: snapshot_group_members
-- Every group ewall holds members for, one row per member (member NULL for an empty one)
SELECT g.source, g.group_id, m.member
FROM source_groups g
LEFT JOIN source_group_members m ON m.source = g.source AND m.group_id = g.group_id

-- name: snapshot_protected_matters
SELECT wall_id, matter_id FROM wall_protected_matters

-- name: snapshot_protected_clients
SELECT wall_id, client_id FROM wall_protected_clients

-- name: snapshot_wall_people
SELECT wall_id, person_id, role FROM wall_people

-- name: snapshot_walls
SELECT wall_id, kind, title, include_team, effective_from, effective_until, lifted_at
FROM walls

-- name: snapshot_wall_groups
SELECT wall_group_id, wall_ids FROM wall_groups

-- name: snapshot_clients
SELECT client_id, name, parent_id FROM clients

-- name: snapshot_matters
SELECT matter_id, client_id, title, status FROM matters

-- name: snapshot_parties
SELECT matter_id, name, name_norm, role FROM matter_parties ORDER BY matter_id, position

-- name: snapshot_team
SELECT matter_id, person_id FROM matter_team

-- name: snapshot_matter_groups
SELECT matter_id, wall_group_id FROM matter_wall_groups

-- name: known_matters
-- known_*: which of the ids a wall names exist (app/walls/service.py, check_wall).
SELECT matter_id FROM matters WHERE matter_id = ANY(CAST(:ids AS text[]))

-- name: known_clients
SELECT client_id FROM clients WHERE client_id = ANY(CAST(:ids AS text[]))

-- name: known_people
SELECT person_id FROM people WHERE person_id = ANY(CAST(:ids AS text[]))

-- name: insert_wall
INSERT INTO walls (wall_id, kind, title, reason, include_team, effective_from,
                   effective_until, created_by)
VALUES (:wall_id, :kind, :title, :reason, :include_team, :effective_from, :effective_until,
        :created_by)
RETURNING created_at  -- the database's clock (now()): the instant the issue is judged at

-- name: insert_protected_matters
INSERT INTO wall_protected_matters (wall_id, matter_id)
SELECT :wall_id, m FROM unnest(CAST(:matter_ids AS text[])) AS m

-- name: insert_protected_clients
INSERT INTO wall_protected_clients (wall_id, client_id)
SELECT :wall_id, c FROM unnest(CAST(:client_ids AS text[])) AS c

-- name: insert_wall_people
INSERT INTO wall_people (wall_id, person_id, role)
SELECT :wall_id, p, r FROM unnest(CAST(:person_ids AS text[]), CAST(:roles AS text[])) AS t(p, r)

-- name: protected_matters_of
SELECT wall_id, matter_id FROM wall_protected_matters WHERE wall_id = ANY(CAST(:wall_ids AS text[]))

-- name: protected_clients_of
SELECT wall_id, client_id FROM wall_protected_clients WHERE wall_id = ANY(CAST(:wall_ids AS text[]))

-- name: wall_people_of
SELECT wall_id, person_id, role FROM wall_people WHERE wall_id = ANY(CAST(:wall_ids AS text[]))

-- name: lock_wall
-- The wall's lifted_at, its row locked until commit (a concurrent lift waits).
SELECT lifted_at FROM walls WHERE wall_id = :wall_id FOR UPDATE

-- name: lift_wall
-- lifted_at is the database's clock (app/db/clock.py), never the API host's
UPDATE walls SET lifted_at = clock_timestamp(), lifted_by = :lifted_by, lift_reason = :lift_reason
WHERE wall_id = :wall_id
RETURNING lifted_at

-- name: wall
-- active: in force by the database's clock (app/db/clock.py), never an API host's
SELECT wall_id, kind, title, reason, include_team, effective_from, effective_until,
       created_by, created_at, lifted_at, lifted_by, lift_reason,
       (lifted_at IS NULL
        AND (effective_from IS NULL OR effective_from <= statement_timestamp())
        AND (effective_until IS NULL OR statement_timestamp() < effective_until)) AS active
FROM walls WHERE wall_id = :wall_id

-- name: all_walls
SELECT wall_id, kind, title, reason, include_team, effective_from, effective_until,
       created_by, created_at, lifted_at, lifted_by, lift_reason,
       (lifted_at IS NULL
        AND (effective_from IS NULL OR effective_from <= statement_timestamp())
        AND (effective_until IS NULL OR statement_timestamp() < effective_until)) AS active
FROM walls ORDER BY created_at, wall_id
