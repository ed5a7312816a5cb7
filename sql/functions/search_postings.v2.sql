-- Version 2 of ewall_sparse_impact_topk (migration 20261203_0047); the other functions of the
-- impact postings are search_postings.v1.sql's. The change: a round is scored only when it
-- may end.
--
-- When the n-th best lower bound of the parts met is below B, every part met is a candidate
-- (each one's upper bound is at least B), so scoring the round reads the whole of every
-- lexeme's list for thousands of documents, and the round ends only if the unread impacts of
-- its best parts make up the difference. On the 1,000,000-chunk bench corpus, of the rounds
-- whose n-th lower bound was under 0.8 B one in 20 ended, of those at or over it 9 in 10
-- (docs/scale-out.md): below 0.8 B the depth now grows without scoring. The results are the
-- same whatever the factor (the test that ends the search is unchanged; a skipped round is
-- followed by a deeper one, and a list read to its end makes B 0, which is always scored);
-- the factor only decides which rounds are paid for. Each round says at DEBUG whether it was
-- scored (tests/search/test_impact_postings.py reads that).
--
-- The n best visible parts for these lexemes, exactly, reading each lexeme's postings in
-- impact order (the threshold algorithm). Each round takes the `depth` best visible postings
-- of every lexeme (the access test is inside the index scan, before the LIMIT). With w the
-- weights and f_i the last impact read from lexeme i (0 for a list read to its end):
--   - a part met in no list scores at most B = sum of w_i f_i (each of its impacts is at
--     most its list's last one read);
--   - a part met in some lists scores at least lb, the sum over those lists of w_i x impact,
--     and at most ub = lb + the sum over the other lists of w_i f_i.
-- Only the parts met whose ub reaches the n-th best lb can be among the n best: those are
-- scored exactly (ewall_sparse_part_scores). When the n-th best exact score is at least B,
-- nothing unread can reach the n best (both tests leave a margin of 1e-9 for rounding: the
-- bounds and the scores are sums taken in different orders) and they are returned;
-- otherwise the depth grows fourfold. A round whose n-th best lb is under 0.8 B is not
-- scored at all (the head of this file). The first round reads 16 n postings per lexeme (at
-- least 1,024): of 1, 4, 8, 16 and 32 n, the fastest on common words at 200,000 chunks
-- (docs/scale-out.md). Ties at the bound may order equal scores differently from a full
-- scan; the scores are the same. Every statement is planned with the round's values
-- (plan_cache_mode): a generic plan, which PL/pgSQL switches to after five runs, neither
-- knows the depth nor hashes the allowed groups, and took 5x longer at 200,000 chunks.
CREATE OR REPLACE FUNCTION ewall_sparse_impact_topk(
    lexemes text[], weights float8[], wall_groups text[], source_acl_ids text[],
    pending text[], n integer
) RETURNS TABLE (document_id bigint, wall_group_id text, source_acl_id text, matter_id text,
                 score float8)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET plan_cache_mode = force_custom_plan
AS $fn$
DECLARE
    depth integer := greatest(16 * n, 1024);
    bound float8;
    nth_lb float8;
    candidates bigint[];
    best_documents bigint[];
    best_groups text[];
    best_acls text[];
    best_matters text[];
    best_scores float8[];
BEGIN
    LOOP
        WITH heads AS MATERIALIZED (
            SELECT l.i, h.document_id, h.wall_group_id, h.source_acl_id, h.matter_id, h.impact
            FROM unnest(lexemes) WITH ORDINALITY AS l(lexeme, i)
            CROSS JOIN LATERAL (
                SELECT p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id, p.impact
                FROM search_postings AS p
                WHERE p.lexeme = l.lexeme
                  AND p.wall_group_id = ANY(wall_groups)
                  AND p.source_acl_id = ANY(source_acl_ids)
                  AND p.matter_id <> ALL(pending)
                ORDER BY p.impact DESC
                LIMIT depth
            ) AS h
        ), floors AS MATERIALIZED (
            SELECT l.i,
                   -- float8 from here on: a difference of two reals is rounded to a real
                   CASE WHEN count(h.document_id) < depth THEN CAST(0 AS float8)
                        ELSE CAST(min(h.impact) AS float8) END AS last_impact
            FROM generate_subscripts(lexemes, 1) AS l(i)
            LEFT JOIN heads AS h ON h.i = l.i
            GROUP BY l.i
        ), b AS (
            SELECT coalesce(sum(weights[f.i] * f.last_impact), 0) AS total FROM floors AS f
        ), met AS MATERIALIZED (
            -- lb, and ub - B (what the lists a part was met in add above their floors)
            SELECT h.document_id, sum(weights[h.i] * h.impact) AS lb,
                   sum(weights[h.i] * (CAST(h.impact AS float8) - f.last_impact)) AS gain
            FROM heads AS h JOIN floors AS f ON f.i = h.i
            GROUP BY h.document_id, h.wall_group_id, h.source_acl_id, h.matter_id
        ), nth AS (
            SELECT coalesce((SELECT m.lb FROM met AS m ORDER BY m.lb DESC OFFSET n - 1 LIMIT 1),
                            '-Infinity') AS lb
        )
        SELECT (SELECT nth.lb FROM nth), (SELECT b.total FROM b),
               ARRAY(SELECT DISTINCT m.document_id FROM met AS m
                     -- (a margin for rounding: ub and lb are sums in another order)
                     WHERE (SELECT b.total FROM b) + m.gain
                           >= (SELECT nth.lb - 1e-9 * (1 + abs(nth.lb)) FROM nth)
                     ORDER BY 1)
        INTO nth_lb, bound, candidates;

        -- a round whose n-th lower bound is far below B is not scored (the head of this file)
        IF bound > 0 AND nth_lb < 0.8 * bound THEN
            RAISE DEBUG 'ewall_sparse_impact_topk: depth % not scored', depth;
            depth := depth * 4;
            CONTINUE;
        END IF;
        RAISE DEBUG 'ewall_sparse_impact_topk: depth % scored', depth;

        SELECT array_agg(s.document_id), array_agg(s.wall_group_id),
               array_agg(s.source_acl_id), array_agg(s.matter_id), array_agg(s.score)
        INTO best_documents, best_groups, best_acls, best_matters, best_scores
        FROM (SELECT x.*
              FROM ewall_sparse_part_scores(candidates, lexemes, weights, wall_groups,
                                            source_acl_ids, pending) AS x
              ORDER BY x.score DESC, x.document_id, x.wall_group_id, x.source_acl_id,
                       x.matter_id
              LIMIT n) AS s;

        IF bound <= 0 OR coalesce(cardinality(best_scores), 0) = n
                          AND best_scores[n] >= bound + 1e-9 * (1 + bound) THEN
            RETURN QUERY
                SELECT * FROM unnest(best_documents, best_groups, best_acls, best_matters,
                                     best_scores);
            RETURN;
        END IF;
        depth := depth * 4;
    END LOOP;
END
$fn$;
