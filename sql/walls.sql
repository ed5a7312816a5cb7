-- Wall-group helpers. A matter's wall group is a deterministic hash of the sorted set of
-- non-lifted walls covering it; a wall covers a matter directly, or through a protected
-- client that is the matter's client or one of its ancestors (corporate family).

-- name: matter_wall_sets
-- The sorted non-lifted wall ids covering each of :matter_ids.
WITH RECURSIVE target AS (
    SELECT matter_id, client_id FROM matters WHERE matter_id = ANY(:matter_ids)
), ancestry (matter_id, client_id, depth) AS (
    SELECT matter_id, client_id, 0 FROM target
    UNION ALL
    SELECT a.matter_id, c.parent_id, a.depth + 1
    FROM ancestry a JOIN clients c ON c.client_id = a.client_id
    WHERE c.parent_id IS NOT NULL AND a.depth < 64
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
WITH RECURSIVE subtree (client_id, depth) AS (
    SELECT client_id, 0 FROM clients WHERE client_id = ANY(:client_ids)
    UNION ALL
    SELECT c.client_id, s.depth + 1
    FROM subtree s JOIN clients c ON c.parent_id = s.client_id
    WHERE s.depth < 64
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
-- The group new chunks of a matter get. FOR SHARE makes a concurrent wall change wait for
-- this ingestion (or this ingestion wait for it), so chunks never keep a stale group.
SELECT m.matter_id, m.client_id, g.wall_group_id
FROM matters m JOIN matter_wall_groups g ON g.matter_id = m.matter_id
WHERE m.matter_id = :matter_id
FOR SHARE OF g

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
-- defaults admit every internal person; unresolvable rules admit nobody.
SELECT coalesce(array_agg(source_acl_id ORDER BY source_acl_id), '{}') AS acl_ids
FROM source_acls
WHERE resolvable
  AND default_access <> 'none'
  AND NOT (deny && CAST(:principals AS text[]))
  AND (default_access IN ('public', 'view') OR allow && CAST(:principals AS text[]))

-- name: visible_chunks
-- Chunks among :chunk_ids that the person may read now (same predicates as the search).
SELECT c.chunk_id, c.body, CAST(c.embedding AS text) AS embedding, c.content_sha256,
       c.matter_id, c.document_id
FROM chunks c
WHERE c.chunk_id = ANY(:chunk_ids)
  AND c.wall_group_id = ANY(:wall_groups)
  AND c.source_acl_id = ANY(:source_acl_ids)
  AND NOT EXISTS (SELECT 1 FROM retag_pending p WHERE p.matter_id = c.matter_id)

-- name: team_insiders
-- Inclusionary walls with include_team: the current team of every matter they protect,
-- directly or through a protected client and its descendants (wall expansion in SQL, for
-- the resolution snapshot that every search after a policy change waits for).
WITH RECURSIVE walls_with_team AS (
    SELECT wall_id FROM walls
    WHERE kind = 'inclusionary' AND include_team AND lifted_at IS NULL
), subtree (wall_id, client_id, depth) AS (
    SELECT p.wall_id, p.client_id, 0
    FROM wall_protected_clients p JOIN walls_with_team w ON w.wall_id = p.wall_id
    UNION ALL
    SELECT s.wall_id, c.client_id, s.depth + 1
    FROM subtree s JOIN clients c ON c.parent_id = s.client_id
    WHERE s.depth < 64
), covered AS (
    SELECT p.wall_id, p.matter_id
    FROM wall_protected_matters p JOIN walls_with_team w ON w.wall_id = p.wall_id
    UNION
    SELECT s.wall_id, m.matter_id FROM subtree s JOIN matters m ON m.client_id = s.client_id
)
SELECT DISTINCT c.wall_id, t.person_id
FROM covered c JOIN matter_team t ON t.matter_id = c.matter_id
