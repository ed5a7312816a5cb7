-- Audit log: append-only tables, each a hash chain with a gapless sequence.
--
-- audit_heads holds one row per chain (last seq and hash). Each append advances the head
-- (the function ewall_audit_advance, migration 20261201_0021: the one definition of the
-- chain step) and inserts the entry in ONE statement. The head's row lock is held until commit, so
-- appends are serialised only for this step and the sequence follows commit order; a rolled
-- back search leaves no gap. Run it as the last statement before commit.
--
-- hash = sha256(prev_hash || '|' || seq || '|' || canonical JSON of the entry), hex.
-- The genesis hash is 64 zeros. Verification also checks the head against the last row, so
-- a deleted tail is detected too.

-- name: append_retrieval
-- One round trip for the whole entry: its access sets (stored once per distinct set), its
-- results and the chain step. With :fenced true (a search that ran on a read replica) the
-- chain step is gated on the replica fence (sql/replica.sql explains it): when the fence
-- fails the head is not advanced and the statement returns no row. With :fenced false the
-- fence parameters are NULL and the fence always holds.
WITH fence AS MATERIALIZED (
    SELECT NOT CAST(:fenced AS boolean)
           OR ((SELECT version FROM policy_state WHERE id = 1) = :policy_version
               AND (SELECT count(*)
                    FROM unnest(CAST(:result_chunk_ids AS text[]),
                                CAST(:result_hashes AS text[])) AS r (chunk_id, content_sha256)
                    JOIN chunks c
                      ON c.chunk_id = r.chunk_id AND c.content_sha256 = r.content_sha256
                    WHERE ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id,
                                              c.suppressed,
                                              CAST(:fence_wall_groups AS text[]),
                                              CAST(:fence_source_acl_ids AS text[]),
                                              (SELECT ewall_retag_pending())))
                   = cardinality(CAST(:result_chunk_ids AS text[]))
               -- the replica ranked with the query model that is live on the primary now
               AND (CAST(:query_model AS text) IS NULL
                    OR coalesce((SELECT model_id FROM embedding_live WHERE id = 1),
                                CAST(:query_model AS text)) = CAST(:query_model AS text))
               -- the instant the replica decided access at (its own host's clock) is one the
               -- primary's clock agrees with: not ahead of it, not more than :within_s behind,
               -- and no wall's window opens or closes between the two, so that access at it is
               -- access at the primary's instant now (the version is the same: the same walls)
               AND CAST(:at AS timestamptz) <= clock_timestamp()
               AND (CAST(:within_s AS float8) IS NULL
                    OR CAST(:at AS timestamptz)
                       >= clock_timestamp() - make_interval(secs => CAST(:within_s AS float8)))
               -- (counted, not NOT EXISTS: costed as a whole scan, the partial indexes on
               -- the edges win, migration 20261215_0072; the clock read once as a value that
               -- can bound an index range)
               AND (SELECT count(*)
                    FROM walls w
                    WHERE w.lifted_at IS NULL
                      AND ((w.effective_from > CAST(:at AS timestamptz)
                            AND w.effective_from <= (SELECT clock_timestamp()))
                           OR (w.effective_until > CAST(:at AS timestamptz)
                               AND w.effective_until <= (SELECT clock_timestamp())))) = 0) AS ok
), access_sets AS (
    INSERT INTO audit_access_sets (set_id, members)
    SELECT DISTINCT ON (s.set_id) s.set_id, s.members
    FROM (VALUES (CAST(:allowed_wall_groups_set AS text), CAST(:wall_group_members AS text[])),
                 (CAST(:source_principals_set AS text), CAST(:principal_members AS text[])))
         AS s (set_id, members)
    WHERE s.members IS NOT NULL  -- NULL: the caller knows the set is stored already
    ON CONFLICT (set_id) DO NOTHING
), head AS MATERIALIZED (
    SELECT seq, prev_hash, hash
    FROM ewall_audit_advance('retrievals', :canonical, (SELECT ok FROM fence))
), results AS (
    -- every chunk the response names: the hits (sub_rank 0) and, for a collapsed search,
    -- the other sections listed under each hit (sub_rank 1, 2, ...)
    INSERT INTO audit_retrieval_results (retrieval_id, rank, sub_rank, chunk_id, matter_id,
                                         content_sha256, score)
    SELECT :retrieval_id, r.rank, r.sub_rank, r.chunk_id, r.matter_id, r.content_sha256,
           r.score
    FROM unnest(CAST(:result_ranks AS integer[]), CAST(:result_sub_ranks AS integer[]),
                CAST(:result_chunk_ids AS text[]), CAST(:result_matter_ids AS text[]),
                CAST(:result_hashes AS text[]), CAST(:result_scores AS float8[]))
         AS r (rank, sub_rank, chunk_id, matter_id, content_sha256, score)
    -- none when the head did not move (the fence failed, or the chain has no head): a
    -- result row needs the retrieval this statement records (a trigger refuses any other,
    -- migration 20261211_0063)
    WHERE EXISTS (SELECT FROM head)
)
INSERT INTO audit_retrievals (
    retrieval_id, seq, at, person_id, roles, purpose, query, mode, k, filters,
    allowed_wall_groups_set, source_principals_set, policy_version, model, prompt_version,
    strategy, took_ms, result_count, session_id, session_matter_id, session_scope, query_model,
    prev_hash, hash)
SELECT :retrieval_id, head.seq, :at, :person_id, :roles, :purpose, :query, :mode, :k,
       CAST(:filters AS jsonb), :allowed_wall_groups_set, :source_principals_set, :policy_version,
       :model, :prompt_version, :strategy, :took_ms, :result_count,
       CAST(:session_id AS text), CAST(:session_matter_id AS text),
       CAST(:session_scope AS text), CAST(:query_model AS text), head.prev_hash, head.hash
FROM head
-- appended_at: the database's clock after the chain step (its wait for the head included),
-- which the caller holds against "at" (app.audit.chain.APPEND_LAG_MAX_S): one clock for both
RETURNING seq, hash, clock_timestamp() AS appended_at

-- name: access_sets
SELECT set_id, members FROM audit_access_sets WHERE set_id = ANY(:set_ids)

-- name: append_policy_event
WITH head AS MATERIALIZED (
    SELECT seq, prev_hash, hash FROM ewall_audit_advance('policy', :canonical, true)
)
INSERT INTO policy_events (
    event_id, seq, at, actor, action, object_type, object_id, reason, details,
    policy_version, prev_hash, hash)
SELECT :event_id, head.seq, :at, :actor, :action, :object_type, :object_id, :reason,
       CAST(:details AS jsonb), :policy_version, head.prev_hash, head.hash
FROM head
RETURNING seq, hash

-- name: append_gate_event
WITH head AS MATERIALIZED (
    SELECT seq, prev_hash, hash FROM ewall_audit_advance('gates', :canonical, true)
)
INSERT INTO gate_events (
    event_id, seq, at, person_id, gate, ok, request, outcome, prev_hash, hash)
SELECT :event_id, head.seq, :at, :person_id, :gate, :ok, CAST(:request AS jsonb),
       CAST(:outcome AS jsonb), head.prev_hash, head.hash
FROM head
RETURNING seq, hash

-- name: heads
SELECT chain, seq, hash FROM audit_heads ORDER BY chain

-- name: try_checkpoint_lock
-- One scheduled checkpoint at a time across the service's processes and hosts
-- (app/audit/schedule.py); a session lock, given back when the checkpoint is written.
SELECT pg_try_advisory_lock(:namespace, 0)

-- name: checkpoint_unlock
SELECT pg_advisory_unlock(:namespace, 0)

-- name: final_before
-- The instant before which the retrievals chain is final (app.audit.service.final_before). A
-- search appends within APPEND_LAG_MAX_S of its "at" or not at all, and every append holds
-- the chain head's row (ewall_audit_advance) from its update to its commit, one at a time.
-- When none does, a row still to come is appended from now on: the clock less the margin.
-- While one does (its commit may take any time: waiting on a synchronous standby, say), that
-- row was appended after the last committed row committed, so its "at" is at most the
-- margin before the last committed row's: the instant stops there (and before the chain's
-- first row nothing is final). ewall_audit_append_pending asks the head row without waiting
-- (sql/functions/audit_append_pending.v1.sql).
SELECT CASE WHEN ewall_audit_append_pending('retrievals')
            THEN coalesce((SELECT r.at FROM audit_retrievals r
                           JOIN audit_heads h ON h.chain = 'retrievals' AND r.seq = h.seq)
                          - make_interval(secs => :margin_s),
                          CAST('0001-01-01 00:00:00+00' AS timestamptz))
            ELSE clock_timestamp() - make_interval(secs => :margin_s) END AS final_before

-- name: head
SELECT seq, hash FROM audit_heads WHERE chain = :chain

-- name: hash_at
-- The stored hash of one chain's row at :seq (no row: the chain no longer reaches it).
SELECT hash FROM audit_retrievals WHERE :chain = 'retrievals' AND seq = :seq
UNION ALL
SELECT hash FROM policy_events WHERE :chain = 'policy' AND seq = :seq
UNION ALL
SELECT hash FROM gate_events WHERE :chain = 'gates' AND seq = :seq

-- name: retrieval_rows_with_results
-- Every retrieval with its results (:after_seq NULL), or those after :after_seq only (the
-- console banner's check from the position a full verification reached:
-- app.audit.chain.verify_chain_after), one row per retrieval in chain order: what
-- verification recomputes the hashes from. The full read has no condition on seq at all (a
-- row a superuser slipped in below 1 is read and breaks the chain). The results are six
-- arrays filled in one pass, so their i-th elements are one result's (all NULL when it has
-- none); in no set order, which app.audit.chain.retrieval_canonical sorts into (an ORDER BY
-- in each array_agg cost a sort per retrieval). One row a retrieval, not one a result: its
-- own columns (filters, query) travel and are parsed once, not once per result
-- (bench.banner).
SELECT r.*, x.x_ranks, x.x_sub_ranks, x.x_chunk_ids, x.x_matter_ids, x.x_content_sha256s,
       x.x_scores
FROM audit_retrievals r
LEFT JOIN LATERAL (
    SELECT array_agg(rank) AS x_ranks,
           array_agg(sub_rank) AS x_sub_ranks,
           array_agg(chunk_id) AS x_chunk_ids,
           array_agg(matter_id) AS x_matter_ids,
           array_agg(content_sha256) AS x_content_sha256s,
           array_agg(score) AS x_scores
    FROM audit_retrieval_results
    WHERE retrieval_id = r.retrieval_id
) x ON true
WHERE CAST(:after_seq AS bigint) IS NULL OR r.seq > CAST(:after_seq AS bigint)
ORDER BY r.seq

-- name: policy_event_rows
SELECT * FROM policy_events ORDER BY seq

-- name: policy_event_rows_after
SELECT * FROM policy_events WHERE seq > :after_seq ORDER BY seq

-- name: gate_event_rows
SELECT * FROM gate_events ORDER BY seq

-- name: gate_event_rows_after
SELECT * FROM gate_events WHERE seq > :after_seq ORDER BY seq

-- name: all_access_sets
SELECT set_id, members FROM audit_access_sets ORDER BY set_id

-- name: all_access_sets_after
-- The sets that the retrievals after :after_seq name (a set they name that is gone is
-- first_retrieval_missing_set_after's to find).
SELECT s.set_id, s.members FROM audit_access_sets AS s
WHERE s.set_id IN (SELECT r.allowed_wall_groups_set FROM audit_retrievals AS r
                   WHERE r.seq > :after_seq
                   UNION
                   SELECT r.source_principals_set FROM audit_retrievals AS r
                   WHERE r.seq > :after_seq)
ORDER BY s.set_id

-- name: first_retrieval_missing_set
-- The first retrieval whose access set (the evidence of what its person was allowed) is gone:
-- the foreign key keeps the application from deleting one, not a superuser.
SELECT min(r.seq) FROM audit_retrievals AS r
WHERE NOT EXISTS (SELECT 1 FROM audit_access_sets AS s WHERE s.set_id = r.allowed_wall_groups_set)
   OR NOT EXISTS (SELECT 1 FROM audit_access_sets AS s WHERE s.set_id = r.source_principals_set)

-- name: first_retrieval_missing_set_after
SELECT min(r.seq) FROM audit_retrievals AS r
WHERE r.seq > :after_seq
  AND (NOT EXISTS (SELECT 1 FROM audit_access_sets AS s
                   WHERE s.set_id = r.allowed_wall_groups_set)
       OR NOT EXISTS (SELECT 1 FROM audit_access_sets AS s
                      WHERE s.set_id = r.source_principals_set))

-- name: first_retrieval_using_set
-- (after :after_seq, or in the whole chain when it is NULL)
SELECT min(seq) FROM audit_retrievals
WHERE (allowed_wall_groups_set = :set_id OR source_principals_set = :set_id)
  AND (CAST(:after_seq AS bigint) IS NULL OR seq > CAST(:after_seq AS bigint))
