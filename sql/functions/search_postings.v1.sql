-- The sparse leg's impact postings (migration 20261203_0045): per lexeme, one row for each
-- document part that holds it, with the part's BM25 term weight (its impact) stored, so the
-- search scores documents exactly without reading their text, and can stop reading a
-- lexeme's postings once nothing unread can reach the top k (ewall_sparse_impact_topk).
--
-- A document part is a document's chunks that share one access key and matter: (wall
-- group, source ACL, matter). Every chunk of a part is visible to the same people, so a
-- posting is visible exactly when its part's chunks are (the one rule of
-- chunk_visible.v1.sql, on the part's key; suppressed chunks are never counted). A document
-- is normally one part; one split across keys (a re-tag under way, mixed ACLs) is ranked as
-- one unit per part, and a person sees the parts of it that the rule admits.
--
-- impact = tf (k1 + 1) / (tf + k1 (1 - b + b dl / L)), k1 3, b 0.9 (the sparse ranking's
-- values, docs/quality.md), dl the part's word pieces and L a fixed reference length of
-- 2,000 word pieces (about the mean document of the Dutch evaluation corpus). L is a
-- constant, not a corpus mean: a mean would be counted over rows a person may not see
-- (invariant 12), and a constant keeps each posting's impact a property of its own part,
-- which is what lets a list be read in impact order. The IDF is the person's own, applied at
-- search time.

CREATE OR REPLACE FUNCTION ewall_posting_impact(tf bigint, n_tokens numeric) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT CAST(tf * 4.0 / (tf + 3.0 * (0.1 + 0.9 * greatest(n_tokens, 1) / 2000.0)) AS real)
$fn$;

-- Rebuild the postings of these documents from their chunks (all parts), in the caller's
-- transaction. Rows go in key order, as in the other statistics triggers. It reads chunks
-- for no person: it runs in the writer's statement, whose role sees every chunk.
CREATE OR REPLACE FUNCTION ewall_postings_rebuild(documents bigint[]) RETURNS void
LANGUAGE sql AS $fn$
    DELETE FROM search_postings WHERE document_id = ANY(documents);
    INSERT INTO search_postings
        (lexeme, document_id, wall_group_id, source_acl_id, matter_id, tf, n_tokens, impact)
    WITH parts AS (
        SELECT c.document_id, c.wall_group_id, c.source_acl_id,
               coalesce(c.matter_id, '') AS matter_id, sum(c.token_count) AS n_tokens
        FROM chunks AS c
        WHERE c.document_id = ANY(documents) AND NOT c.suppressed
        GROUP BY 1, 2, 3, 4
    ), terms AS (
        SELECT c.document_id, c.wall_group_id, c.source_acl_id,
               coalesce(c.matter_id, '') AS matter_id, t.lexeme,
               sum(coalesce(array_length(t.positions, 1), 1)) AS tf
        FROM chunks AS c, unnest(c.body_tsv) AS t
        WHERE c.document_id = ANY(documents) AND NOT c.suppressed
        GROUP BY 1, 2, 3, 4, 5
    )
    SELECT t.lexeme, t.document_id, t.wall_group_id, t.source_acl_id, t.matter_id, t.tf,
           p.n_tokens, ewall_posting_impact(t.tf, p.n_tokens)
    FROM terms AS t
    JOIN parts AS p USING (document_id, wall_group_id, source_acl_id, matter_id)
    ORDER BY t.lexeme, t.document_id, t.wall_group_id, t.source_acl_id, t.matter_id;
$fn$;

-- The statement triggers on chunks (insert, delete, update): the documents the statement
-- touched are rebuilt. An update that changes none of the columns postings are made of (a
-- re-embed, a date) touches none, and a statement that touched none writes nothing (the
-- service role, which may not write postings, runs such statements).
CREATE OR REPLACE FUNCTION ewall_postings_after_write() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    touched bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        touched := ARRAY(SELECT DISTINCT document_id FROM new_rows ORDER BY 1);
    ELSIF TG_OP = 'DELETE' THEN
        touched := ARRAY(SELECT DISTINCT document_id FROM old_rows ORDER BY 1);
    ELSE
        touched := ARRAY(
            SELECT DISTINCT x.document_id
            FROM old_rows AS o
            JOIN new_rows AS n ON n.chunk_id = o.chunk_id
            CROSS JOIN LATERAL (VALUES (o.document_id), (n.document_id)) AS x(document_id)
            WHERE (o.document_id, o.wall_group_id, o.source_acl_id, o.matter_id, o.suppressed,
                   o.token_count, o.body)
                  IS DISTINCT FROM
                  (n.document_id, n.wall_group_id, n.source_acl_id, n.matter_id, n.suppressed,
                   n.token_count, n.body)
            ORDER BY 1);
    END IF;
    IF cardinality(touched) > 0 THEN
        PERFORM ewall_postings_rebuild(touched);
    END IF;
    RETURN NULL;
END
$fn$;

-- The exact score of each visible part of these documents: sum over the lexemes of
-- weight x impact, the weights being the person's (idf x the lexeme's weight). Only the
-- parts the person may see (allowed key, matter not pending) are read.
CREATE OR REPLACE FUNCTION ewall_sparse_part_scores(
    documents bigint[], lexemes text[], weights float8[],
    wall_groups text[], source_acl_ids text[], pending text[]
) RETURNS TABLE (document_id bigint, wall_group_id text, source_acl_id text, matter_id text,
                 score float8)
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    SELECT p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id,
           sum(q.weight * p.impact) AS score
    FROM unnest(lexemes, weights) AS q(lexeme, weight)
    JOIN search_postings AS p ON p.lexeme = q.lexeme
    WHERE p.document_id = ANY(documents)
      AND p.wall_group_id = ANY(wall_groups) AND p.source_acl_id = ANY(source_acl_ids)
      AND p.matter_id <> ALL(pending)
    GROUP BY 1, 2, 3, 4
$fn$;

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
-- bounds and the scores are sums taken in different orders) and they are returned; otherwise the depth grows
-- fourfold. The first round reads 16 n postings per lexeme (at least 1,024): of 1, 4, 8,
-- 16 and 32 n, the fastest on common words at 200,000 chunks (docs/scale-out.md). Ties at the bound may order equal scores differently from a full scan; the
-- scores are the same. Every statement is planned with the round's values
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
        SELECT (SELECT b.total FROM b),
               ARRAY(SELECT DISTINCT m.document_id FROM met AS m
                     -- (a margin for rounding: ub and lb are sums in another order)
                     WHERE (SELECT b.total FROM b) + m.gain
                           >= (SELECT nth.lb - 1e-9 * (1 + abs(nth.lb)) FROM nth)
                     ORDER BY 1)
        INTO bound, candidates;

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
