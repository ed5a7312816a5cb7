-- The conflict matrix: people and their aliases, source groups, clients, matters with their
-- parties and teams (app/matrix/repository.py). Writes here never decide access on their
-- own: app/matrix/service.py bumps the policy version and recomputes wall groups.

-- name: people_by_id
SELECT person_id, name, active FROM people WHERE person_id = ANY(CAST(:ids AS text[]))

-- name: person_inactive
-- Whether the matrix knows the person and marks them inactive (no row: NULL, not inactive).
SELECT NOT active FROM people WHERE person_id = :person_id

-- name: aliases_of_people
SELECT alias, person_id FROM person_aliases WHERE person_id = ANY(CAST(:ids AS text[]))

-- name: alias_owners
SELECT alias, person_id FROM person_aliases WHERE alias = ANY(CAST(:aliases AS text[]))

-- name: clients_by_id
SELECT client_id, name, parent_id FROM clients WHERE client_id = ANY(CAST(:ids AS text[]))

-- name: client_parents
SELECT client_id, parent_id FROM clients

-- name: matters_by_id
SELECT matter_id, client_id, title, status FROM matters
WHERE matter_id = ANY(CAST(:ids AS text[]))

-- name: parties_of_matters
SELECT matter_id, name, role FROM matter_parties
WHERE matter_id = ANY(CAST(:ids AS text[]))
ORDER BY matter_id, position

-- name: team_of_matters
SELECT matter_id, person_id FROM matter_team WHERE matter_id = ANY(CAST(:ids AS text[]))

-- name: groups_with_members
-- The wanted groups that exist, one row per member (member NULL for a group without any).
SELECT g.source, g.group_id, m.member
FROM unnest(CAST(:sources AS text[]), CAST(:group_ids AS text[])) AS t(source, group_id)
JOIN source_groups g ON g.source = t.source AND g.group_id = t.group_id
LEFT JOIN source_group_members m ON m.source = g.source AND m.group_id = g.group_id

-- name: upsert_people
INSERT INTO people (person_id, name, active)
SELECT * FROM unnest(CAST(:ids AS text[]), CAST(:names AS text[]), CAST(:active AS boolean[]))
ON CONFLICT (person_id) DO UPDATE
SET name = EXCLUDED.name, active = EXCLUDED.active, updated_at = EXCLUDED.updated_at

-- name: delete_aliases_of_people
DELETE FROM person_aliases WHERE person_id = ANY(CAST(:ids AS text[]))

-- name: insert_aliases
INSERT INTO person_aliases (alias, person_id)
SELECT * FROM unnest(CAST(:aliases AS text[]), CAST(:person_ids AS text[]))

-- name: ensure_source_group
-- Written through the API or an import: a group a later sync does not forget (a sync marks
-- what it wrote: mark_groups_synced)
INSERT INTO source_groups (source, group_id) VALUES (:source, :group_id)
ON CONFLICT (source, group_id) DO UPDATE SET synced = false

-- name: mark_groups_synced
UPDATE source_groups SET synced = true
WHERE source = :source AND group_id = ANY(CAST(:group_ids AS text[])) AND NOT synced

-- name: groups_of_source
-- The groups a connector's sync wrote for the source (not those set through the API)
SELECT group_id FROM source_groups WHERE source = :source AND synced

-- name: delete_source_group
-- A group whose membership could not be read: removed with its members (ON DELETE CASCADE)
DELETE FROM source_groups WHERE source = :source AND group_id = :group_id

-- name: delete_source_group_members
DELETE FROM source_group_members WHERE source = :source AND group_id = :group_id

-- name: insert_source_group_members
INSERT INTO source_group_members (source, group_id, member)
SELECT :source, :group_id, member FROM unnest(CAST(:members AS text[])) AS t(member)

-- name: upsert_client
INSERT INTO clients (client_id, name, name_norm, parent_id)
VALUES (:client_id, :name, :name_norm, :parent_id)
ON CONFLICT (client_id) DO UPDATE
SET name = EXCLUDED.name, name_norm = EXCLUDED.name_norm, parent_id = EXCLUDED.parent_id,
    updated_at = EXCLUDED.updated_at

-- name: upsert_matters
INSERT INTO matters (matter_id, client_id, title, status)
SELECT * FROM unnest(CAST(:ids AS text[]), CAST(:client_ids AS text[]),
                     CAST(:titles AS text[]), CAST(:statuses AS text[]))
ON CONFLICT (matter_id) DO UPDATE
SET client_id = EXCLUDED.client_id, title = EXCLUDED.title, status = EXCLUDED.status,
    updated_at = EXCLUDED.updated_at

-- name: delete_parties_of_matters
DELETE FROM matter_parties WHERE matter_id = ANY(CAST(:ids AS text[]))

-- name: insert_parties
INSERT INTO matter_parties (matter_id, position, name, name_norm, role)
SELECT * FROM unnest(CAST(:matter_ids AS text[]), CAST(:positions AS integer[]),
                     CAST(:names AS text[]), CAST(:names_norm AS text[]),
                     CAST(:roles AS text[]))

-- name: delete_team_of_matters
DELETE FROM matter_team WHERE matter_id = ANY(CAST(:ids AS text[]))

-- name: insert_team
INSERT INTO matter_team (matter_id, person_id)
SELECT * FROM unnest(CAST(:matter_ids AS text[]), CAST(:person_ids AS text[]))

-- name: wall_group_of_matter
SELECT wall_group_id FROM matter_wall_groups WHERE matter_id = :matter_id

-- name: matters_granting_principals
-- The matters among :matter_ids that hold a document whose source rules allow one of
-- :principals by name: a person who gains those principals may read these documents,
-- within the walls.
SELECT DISTINCT d.matter_id
FROM documents d
JOIN source_acls a ON a.source_acl_id = d.source_acl_id
WHERE d.matter_id = ANY(CAST(:matter_ids AS text[]))
  AND a.allow && CAST(:principals AS text[])
ORDER BY d.matter_id
