-- Read replicas: the fence between a search computed on a streaming replica and its audit
-- row on the primary (docs/scale-out.md).
--
-- A replica may lag behind a wall the primary has already committed. A search that ran on
-- a replica carries the policy_version its statement saw (the resolution and the hybrid
-- statement read it in one repeatable-read snapshot on the replica). Its audit row is
-- appended on the primary by audit.append_retrieval with this CTE in front and the chain
-- step gated on it, so the check and the append are ONE statement in one snapshot:
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
-- Parameters (besides those of audit.append_retrieval: :policy_version,
-- :result_chunk_ids, :result_hashes)
--   :fence_wall_groups, :fence_source_acl_ids   the allowed sets the replica search used

-- name: fence
SELECT (SELECT version FROM policy_state WHERE id = 1) = :policy_version
       AND (SELECT count(*)
            FROM unnest(CAST(:result_chunk_ids AS text[]), CAST(:result_hashes AS text[]))
                 AS r (chunk_id, content_sha256)
            JOIN chunks c ON c.chunk_id = r.chunk_id AND c.content_sha256 = r.content_sha256
            WHERE c.wall_group_id = ANY(CAST(:fence_wall_groups AS text[]))
              AND c.source_acl_id = ANY(CAST(:fence_source_acl_ids AS text[]))
              AND NOT c.suppressed
              AND NOT EXISTS (SELECT 1 FROM retag_pending p WHERE p.matter_id = c.matter_id))
           = cardinality(CAST(:result_chunk_ids AS text[])) AS ok
