-- Version 3 of ewall_sparse_impact_topk (migration 20261208_0058); the other functions of the
-- impact postings are search_postings.v1.sql's. The change: the n best are cut, ordered and
-- returned on scores rounded to 1e-9 (round(score * 1e9) / 1e9, in float8), ties broken by
-- part (document, wall group, source ACL, matter): the rounding and the order of the
-- hybrid statement's sparse_top (sql/search.sql).
--
-- A float sum's last bits follow the order its terms were added in, which the plan and the
-- tables' physical state decide (rows the person may not see among them). sparse_top rounds
-- for that reason (invariant 12), but version 2 made its own cut first, on unrounded
-- scores: of two parts of one rounded score, the one whose sum came out a bit higher was
-- kept and the other dropped, so which of them the leg returned could still change when
-- only hidden rows did. Now the cut is the rounded, tie-broken ranking's: the function
-- returns the first n parts, in order, of the ranking sparse_top makes of every visible part
-- (tests/search/test_impact_postings.py compares the two on ties). Only a score within a
-- float sum's error of the midpoint between two steps of 1e-9 may still round either way,
-- here as in sparse_top.
--
-- Rounding moves a score by at most 5e-10, so the two tests that end the search leave room
-- for it (h below is that half step; d is the error of a float sum, about 1e-16 of it):
--   - the stop: the n-th best ROUNDED score s must be at least B + 1e-9 (1 + B), as
--     before. An unread part scores at most B + d, rounded at most B + d + h, which is
--     below s: strictly below, so it cannot even tie with the n-th and win on its key;
--   - the candidates: a met part is left out only when its ub is under the n-th best lb L
--     by 2e-9 (1 + |L|) (1e-9 in version 2). Rounded, such a part is at most ub + h, the
--     n-th best candidate at least L - h, and the gap of 2e-9 leaves 1e-9 beyond the two
--     half steps: a part left out is below the n-th, never tied with it.
--
-- From version 2 (migration 20261203_0047), unchanged: a round is scored only when it may
-- end. When the n-th best lower bound of the parts met is below B, every part met is a
-- candidate (each one's upper bound is at least B), so scoring the round reads the whole of
-- every lexeme's list for thousands of documents; below 0.8 B the depth grows without
-- scoring (docs/scale-out.md). The results are the same whatever the factor (a skipped round
-- is followed by a deeper one, and a list read to its end makes B 0, which is always
-- scored). Each round says at DEBUG whether it was scored (tests/search/
-- test_impact_postings.py reads that).
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
-- scored exactly (ewall_sparse_part_scores). When the n-th best rounded score is at least
-- B + 1e-9 (1 + B), nothing unread can reach the n best (the margins above) and they are
-- returned; otherwise the depth grows fourfold. The first round reads 16 n postings per
-- lexeme (at least 1,024): of 1, 4, 8, 16 and 32 n, the fastest on common words at 200,000
-- chunks (docs/scale-out.md). Every statement is planned with the round's values
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
                     -- (a margin for two half steps of rounding and for float sums in
                     -- other orders: the head of this file)
                     WHERE (SELECT b.total FROM b) + m.gain
                           >= (SELECT nth.lb - 2e-9 * (1 + abs(nth.lb)) FROM nth)
                     ORDER BY 1)
        INTO nth_lb, bound, candidates;

        -- a round whose n-th lower bound is far below B is not scored (the head of this file)
        IF bound > 0 AND nth_lb < 0.8 * bound THEN
            RAISE DEBUG 'ewall_sparse_impact_topk: depth % not scored', depth;
            depth := depth * 4;
            CONTINUE;
        END IF;
        RAISE DEBUG 'ewall_sparse_impact_topk: depth % scored', depth;

        -- rounded and ordered as sparse_top in sql/search.sql: a tie is a tie, broken by part
        SELECT array_agg(s.document_id), array_agg(s.wall_group_id),
               array_agg(s.source_acl_id), array_agg(s.matter_id), array_agg(s.score)
        INTO best_documents, best_groups, best_acls, best_matters, best_scores
        FROM (SELECT x.document_id, x.wall_group_id, x.source_acl_id, x.matter_id,
                     round(x.score * 1e9) / 1e9 AS score
              FROM ewall_sparse_part_scores(candidates, lexemes, weights, wall_groups,
                                            source_acl_ids, pending) AS x
              ORDER BY 5 DESC, x.document_id, x.wall_group_id, x.source_acl_id, x.matter_id
              LIMIT n) AS s;

        -- the n-th rounded score over B by the margin (the head of this file): nothing
        -- unread reaches it, not even to tie
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
