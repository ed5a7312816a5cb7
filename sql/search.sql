-- Filtered hybrid retrieval: ONE statement per search.
--
-- A dense leg (pgvector cosine) and a sparse leg (Dutch full text, IDF-weighted OR of the
-- query's lexemes) each carry the visibility rule, ewall_chunk_visible (allowed wall
-- groups, allowed source ACLs, no matter pending re-tagging, not suppressed:
-- sql/functions/chunk_visible.v1.sql), and the caller's narrowing filters
-- (ewall_chunk_narrowed: sql/functions/chunk_narrowed.v1.sql), each with its own candidate
-- limit, fused by weighted reciprocal rank fusion. The forbidden rows are
-- filtered before ranking in both legs: they never leave PostgreSQL. Every other read of
-- chunks here (the hit's text, a collapsed hit's listed sections) carries the rule too.
-- Row-level security on chunks applies the same sets again as a backstop.
--
-- hybrid is ONE text for both forms of the dense leg; :dense_hnsw picks the form. The
-- statement is never prepared, so the planner sees :dense_hnsw as a constant and folds
-- each CASE on it to one arm; the plan is that form's alone (tests/search/test_search_sql.py
-- checks both plans):
--   false (exact): ORDER BY an expression, which HNSW cannot serve -> exact top-N over the
--                  allowed rows (btree on wall_group_id, then top-N heapsort);
--   true (HNSW):   ORDER BY the distance operator -> HNSW index scan with the iterative
--                  relaxed scan the caller configured (set_config ... true) beforehand. The
--                  rule's group test is written so the btree cannot serve it, leaving HNSW
--                  as the planner's only sensible path.
-- The caller picks the form from the allowed row count and re-runs exact when the HNSW
-- form returns fewer than min(candidates, allowed) rows. With :collapse true either form
-- returns one hit per document (its best chunk, the other matching chunks listed with the
-- content hash and matter the audit row records for each).
--
-- Parameters
--   :qvec              query embedding (pgvector text)
--   :match_tsq, :headline_tsq, :rank_lexemes   from analyze_query
--   :names             the ECLIs, LJNs, journal citations and case numbers the question names
--                      (analyze_query): the named leg
--                      puts the documents they name first (their best chunk each)
--   :typed_tsq         what every hit must hold (analyze_query; NULL: nothing): the question's
--                      typed phrases and left-out terms, tested in the dense leg
--   :wall_groups, :source_acl_ids   the person's allowed sets (text[])
--   :policy_version    the version the sets were resolved at; a leg returns nothing when
--                      the statement's own snapshot sees another version (caller retries)
--   :doc_types, :sources, :matter_ids (text[] or NULL), :modified_from, :modified_to
--   :session_matter_id the matter a bound session is narrowed to (NULL: not bound); public
--                      sources (case law, legislation: no matter) stay in. It only narrows.
--   :dense_hnsw        the dense leg's form (true: HNSW, false: exact); run_hybrid's argument
--   :use_dense, :use_sparse, :dense_weight, :sparse_weight, :rrf_k, :k
--   :dense_candidates, :sparse_candidates, :sparse_rank_cap
--   :collapse          true: one hit per document (collapse "document")
--   :sparse_impact, :sparse_sum   the sparse leg's form (app/search/service.py sparse_form)
--   :sparse_group_index  true: the sparse leg's group test may use the btree (small
--                      allowed sets); false: it filters after the GIN scan. Either way the
--                      predicate is there; only the index choice differs
--   :rank_weights, :sparse_doc_k1, :sparse_doc_b   the sparse leg's document ranking
--   :sparse_rank_cap   the most matches the sparse leg ranks; past it, whole documents in
--                      the order of md5(document_id) (from the rows, not the heap order)
--
-- Non-interference (invariant 12): every statistic the sparse leg weighs comes from counts
-- per access key (search_key_stats, search_key_lexeme_stats, search_key_document_stats,
-- migration 20261203_0042; chunks that are not suppressed) summed over :wall_groups and
-- :source_acl_ids, never from the global lexeme_stats / corpus_stats, so rows the person
-- may not see change no ranking, cut or flag; the chunks of a matter pending re-tag (hidden
-- from everyone, still under their old key) are subtracted (ewall_pending_key_counts).
--
-- analyze_query (run first; it reads no chunks) turns the question into the sparse leg's
-- inputs. It matches on the OR of the question's lexemes (AND semantics returns nothing for
-- most natural-language questions) and keeps websearch operators when the user typed
-- them (a "phrase" must stand, a -term must not, OR splits alternatives; the other words
-- of an alternative are ORed; all ANDed with the same budgeted OR, so every form of
-- question is bounded), applies
-- synonyms with ts_rewrite, drops lexemes found in more than :common_df of the chunks the
-- person may see (and in more than 1,000: a small corpus costs nothing) and adds lexemes
-- rarest first only while their summed document frequency (among those chunks) stays under
-- :match_budget, so one question cannot make the leg rank half the corpus. Ranking weighs
-- the :rank_lexeme_limit most informative lexemes (idf x weight) with BM25 over documents
-- (PostgreSQL's rankers have no IDF), N and the mean length also over the person's keys.
--
-- Regular expressions: PostgreSQL keeps the 32 it compiled last per connection
-- (MAX_CACHED_RES, least recently used out) and compiling one of the normalisation's costs up
-- to a few milliseconds. One analysis runs about 30 (ewall_legal_normalize's, the names',
-- the lexeme reader's, the cut's and the headline's): with three of its own (a-z only, one
-- letter, a citation's prefix) the cycle overflowed the cache and every analysis compiled
-- all of them again (about 30 ms instead of 2; issue 27). The first two read as translate()
-- and as the cut's own pattern with a length, and the citation's pattern runs only for a
-- lexeme that starts as one ("art"); tests/search/test_query_regexps.py keeps a search's
-- patterns inside the cache. A citation with typed syntax still ran 33 until the normaliser
-- ran each of its passes only on a text that can hold its match (legal_normalize.v3.sql,
-- 2026-12-17): 6 to 13 for the analysis of a plain, typed, cited or ECLI question.

-- name: analyze_query
-- The question's sparse side, computed before the search so the planner sees the final
-- tsquery as a constant (and can estimate it against the GIN statistics). Every statistic is
-- over the chunks the person may see: the access keys' counts less those of the matters
-- pending re-tag, which are hidden from everyone (ewall_pending_key_counts).
WITH plain AS (
    -- OR of the question's lexemes
    SELECT CAST(coalesce(nullif(array_to_string(ARRAY(
               SELECT quote_literal(l) FROM unnest(ewall_query_lexemes(:query)) AS l
               ORDER BY l), ' | '), ''), '') AS tsquery) AS tsq
), alternatives AS (
    -- with typed syntax: per alternative (split at a typed OR), the phrases that must stand
    -- and the -terms that must not, ANDed with the OR of its other words
    SELECT a.n,
           ewall_nl_websearch(a.operators)
           && CAST(coalesce(nullif(array_to_string(ARRAY(
                  SELECT quote_literal(l) FROM unnest(ewall_query_lexemes(a.words)) AS l
                  ORDER BY l), ' | '), ''), '') AS tsquery) AS tsq
    FROM unnest(CAST(:alt_operators AS text[]), CAST(:alt_words AS text[]))
         WITH ORDINALITY AS a (operators, words, n)
), query_tsq AS (
    SELECT CASE WHEN :websearch
                THEN CAST(coalesce(nullif(array_to_string(ARRAY(
                         SELECT '(' || CAST(x.tsq AS text) || ')' FROM alternatives AS x
                         WHERE numnode(x.tsq) > 0 ORDER BY x.n), ' | '), ''), '') AS tsquery)
                ELSE (SELECT p.tsq FROM plain AS p)
           END AS tsq
), rewritten AS (
    -- synonyms from the editable table, applied at query time (no server files)
    SELECT ts_rewrite(q.tsq, 'SELECT target, substitute FROM search_synonym_rules') AS tsq
    FROM query_tsq AS q
), typed AS (
    -- the lexemes of the question itself (the others came from a synonym)
    SELECT DISTINCT replace(x[2], '''''', '''') AS lexeme
    FROM query_tsq AS q,
         regexp_matches(CAST(q.tsq AS text), '(!?)''((?:[^'']|'''')+)''', 'g') AS x
    WHERE x[1] = ''
), positive AS (
    -- the positive (not negated) lexemes of the rewritten query (quoted lexemes are read
    -- left to right in pairs of quotes, so the closing quote of a negated lexeme never opens
    -- the next one; a lexeme right after ! is negated)
    SELECT DISTINCT replace(x[2], '''''', '''') AS lexeme
    FROM rewritten AS r,
         regexp_matches(CAST(r.tsq AS text), '(!?)''((?:[^'']|'''')+)''', 'g') AS x
    WHERE x[1] = ''
), pending AS MATERIALIZED (
    -- the hidden chunks of matters pending re-tag under the person's keys (lexeme NULL: all)
    SELECT p.lexeme, p.n_chunks
    FROM ewall_pending_key_counts(CAST(:wall_groups AS text[]),
                                  CAST(:source_acl_ids AS text[]),
                                  ARRAY(SELECT lexeme FROM positive)) AS p
), corpus AS (
    -- the chunks the person may see (per access key, suppressed ones never counted)
    SELECT greatest(coalesce(sum(k.n_chunks), 0)
                    - coalesce((SELECT p.n_chunks FROM pending AS p WHERE p.lexeme IS NULL), 0),
                    1) AS n
    FROM search_key_stats AS k
    WHERE k.wall_group_id = ANY(CAST(:wall_groups AS text[]))
      AND k.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))
), query_lexemes AS (
    -- the positive lexemes with BM25-style IDF; w is 1 for the question's own lexemes,
    -- :synonym_weight for those only a synonym added and for a law's code that the
    -- question names with a citation of it ("awb" beside art6x18awb, from "art. 6:18 Awb"):
    -- the citation says which law already, and a decision that writes "Awb" thirty times
    -- outranked the one that cites the article (a check of 2026-12-06)
    SELECT m.lexeme, s.df,
           ln(1 + ((SELECT n FROM corpus) - s.df + 0.5) / (s.df + 0.5)) AS idf,
           CASE WHEN m.lexeme NOT IN (SELECT lexeme FROM typed)
                THEN CAST(:synonym_weight AS float8)
                -- (letters a-z only; translate, not a pattern: the note above the block)
                WHEN m.lexeme <> ''
                     AND translate(m.lexeme, 'abcdefghijklmnopqrstuvwxyz', '') = ''
                     AND EXISTS (
                         SELECT 1 FROM typed AS c
                         WHERE length(c.lexeme) > length(m.lexeme)
                           AND right(c.lexeme, length(m.lexeme)) = m.lexeme
                           -- (the pattern only for a citation token: the note above the block)
                           AND CASE WHEN left(c.lexeme, 3) = 'art'
                                    THEN left(c.lexeme, length(c.lexeme) - length(m.lexeme))
                                         ~ '^art[0-9]+(x[0-9]+[a-z]?)?$' END)
                THEN CAST(:synonym_weight AS float8)
                ELSE 1.0 END AS w
    FROM positive AS m
    -- document frequency among the chunks the person may see
    CROSS JOIN LATERAL (
        SELECT greatest(coalesce(CAST(sum(k.n_chunks) AS bigint), 0)
                        - coalesce((SELECT p.n_chunks FROM pending AS p
                                    WHERE p.lexeme = m.lexeme), 0),
                        0) AS df
        FROM search_key_lexeme_stats AS k
        WHERE k.lexeme = m.lexeme
          AND k.wall_group_id = ANY(CAST(:wall_groups AS text[]))
          AND k.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))
    ) AS s
    -- a single letter ("g" of "WWB-G", "a:b:c:d") matches every list of items a) to g),
    -- and put such a list first (a check of 2026-12-06): it neither matches nor ranks
    -- unless the question holds nothing else
    -- (one letter: ewall_cut_lexemes' pattern and a length, not a pattern of its own)
    WHERE length(m.lexeme) <> 1 OR m.lexeme !~ '^[[:alpha:]]+$'
       OR NOT EXISTS (SELECT 1 FROM positive AS o
                      WHERE length(o.lexeme) <> 1 OR o.lexeme !~ '^[[:alpha:]]+$')
), budgeted AS (
    -- rarest first: drop very common lexemes, stop when the match budget is spent
    SELECT lexeme, idf, df,
           sum(df) OVER (ORDER BY df, lexeme) - df AS df_before,
           row_number() OVER (ORDER BY df, lexeme) AS pos
    FROM query_lexemes
), match_lexemes AS (
    SELECT lexeme FROM budgeted
    WHERE pos = 1
       OR ((df <= :common_df * (SELECT n FROM corpus) OR df <= 1000)
           AND df_before < :match_budget)
), ranked AS (
    -- ranking weighs the most informative lexemes (at most :rank_lexeme_limit)
    SELECT lexeme, w, idf, df,
           row_number() OVER (ORDER BY w * idf DESC, lexeme) AS pos
    FROM query_lexemes
)
SELECT CASE WHEN NOT :websearch
            THEN coalesce(array_to_string(ARRAY(
                     SELECT quote_literal(lexeme) FROM match_lexemes ORDER BY lexeme), ' | '),
                     '')
            -- the user's operators, ANDed with the budgeted OR: "a" OR b, a phrase of common
            -- words or a lone -term would otherwise match as much of the corpus as they
            -- name. A query with no positive lexeme (only -terms) matches nothing, as a plain
            -- question without lexemes does.
            WHEN EXISTS (SELECT 1 FROM match_lexemes)
            THEN CAST((SELECT tsq FROM rewritten)
                      && CAST(array_to_string(ARRAY(
                             SELECT quote_literal(lexeme) FROM match_lexemes ORDER BY lexeme),
                             ' | ') AS tsquery) AS text)
            ELSE ''
       END AS match_tsq,
       -- ts_headline parses the body into whole words (ewall_nl_plain): a cut lexeme marks
       -- the words it begins
       CAST(ewall_nl_headline_query((SELECT tsq FROM rewritten)) AS text) AS headline_tsq,
       ARRAY(SELECT lexeme FROM ranked WHERE pos <= :rank_lexeme_limit
             ORDER BY pos) AS rank_lexemes,
       -- the weight of each ranking lexeme in the document ranking (1, or a synonym's)
       ARRAY(SELECT w FROM ranked WHERE pos <= :rank_lexeme_limit
             ORDER BY pos) AS rank_weights,
       -- and its weight in a document's score: that weight x the lexeme's IDF among the
       -- chunks the person may see
       ARRAY(SELECT w * idf FROM ranked WHERE pos <= :rank_lexeme_limit
             ORDER BY pos) AS rank_idf_weights,
       -- the OR of the ranking lexemes: what the sparse leg matches when it ranks every
       -- document holding one of them
       coalesce(array_to_string(ARRAY(
           SELECT quote_literal(lexeme) FROM ranked WHERE pos <= :rank_lexeme_limit
           ORDER BY lexeme), ' | '), '') AS rank_tsq,
       -- the chunks the person may see that hold a ranking lexeme (at most; a chunk holding
       -- two counts twice): what ranking them all from the chunks would read
       (SELECT coalesce(sum(df), 0) FROM ranked WHERE pos <= :rank_lexeme_limit) AS rank_df,
       (SELECT count(*) FROM query_lexemes) AS lexeme_count,
       (SELECT count(*) FROM match_lexemes
        WHERE lexeme IN (SELECT lexeme FROM query_lexemes)) AS matched_lexeme_count,
       -- the ECLIs, LJNs, journal citations and case numbers the question names: the named leg
       ewall_question_names(:query) AS names,
       -- what every hit must hold, the dense leg's too (the sparse leg's match holds it
       -- already): an alternative's phrases and left-out terms with the synonyms the
       -- sparse leg applies, ORed over the alternatives; NULL (no test) when one of them
       -- types neither
       CASE WHEN :websearch AND '' <> ALL(CAST(:alt_operators AS text[]))
            THEN (SELECT CAST(string_agg('(' || CAST(t.tsq AS text) || ')', ' | ') AS text)
                  FROM (SELECT ts_rewrite(ewall_nl_websearch(o),
                                          'SELECT target, substitute FROM search_synonym_rules')
                               AS tsq
                        FROM unnest(CAST(:alt_operators AS text[])) AS o) AS t
                  HAVING bool_and(numnode(t.tsq) > 0))
       END AS typed_tsq


-- name: hybrid
WITH policy AS (
    SELECT version FROM policy_state WHERE id = 1
), dense AS MATERIALIZED (
    -- :dense_hnsw (a constant when planned) picks the form; each CASE below folds to one arm:
    --   false: ORDER BY an expression, which HNSW cannot serve -> exact top-N over the
    --          allowed rows (btree on wall_group_id, then top-N heapsort);
    --   true:  ORDER BY the bare distance operator -> HNSW index scan; the group test is
    --          hidden from the btree (group_index false), the tie-break key is a constant
    --          (dropped), so the ordered index scan is the planner's only sensible path
    -- The ORDER BY names the output column, so each row's distance is computed once (an
    -- ORDER BY expression that differs from the output's is computed beside it).
    SELECT c.chunk_id, c.document_id,
           CASE WHEN CAST(:dense_hnsw AS boolean) THEN c.embedding <=> CAST(:qvec AS vector)
                ELSE (c.embedding <=> CAST(:qvec AS vector)) + 0 END AS distance
    FROM chunks c
    WHERE :use_dense
      AND (SELECT version FROM policy) = :policy_version
      AND ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                              CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
                              (SELECT ewall_retag_pending()),
                              NOT CAST(:dense_hnsw AS boolean))
      AND ewall_chunk_narrowed(c.doc_type, c.source, c.matter_id, c.modified_at,
                               CAST(:doc_types AS text[]), CAST(:sources AS text[]),
                               CAST(:matter_ids AS text[]), CAST(:session_matter_id AS text),
                               CAST(:modified_from AS timestamptz),
                               CAST(:modified_to AS timestamptz))
      -- the question's typed phrases and left-out terms hold in this leg too: a hit this
      -- leg alone ranks would otherwise bring back what the lawyer left out
      AND (CAST(:typed_tsq AS tsquery) IS NULL OR c.body_tsv @@ CAST(:typed_tsq AS tsquery))
    ORDER BY distance, CASE WHEN CAST(:dense_hnsw AS boolean) THEN NULL ELSE c.chunk_id END
    LIMIT :dense_candidates
), sparse_docs AS MATERIALIZED (
    -- Filter first (:sparse_impact false): the chunks the person may see that match
    -- :match_tsq (GIN); every document among them is ranked below, and these are the chunks
    -- that carry its best parts into the fusion. The caller takes this form when few chunks
    -- match (the match budget bounds it otherwise).
    SELECT c.chunk_id, c.document_id, c.wall_group_id, c.source_acl_id,
           coalesce(c.matter_id, '') AS matter_id
    FROM chunks c
    WHERE :use_sparse AND NOT CAST(:sparse_impact AS boolean)
      AND (SELECT version FROM policy) = :policy_version
      -- :sparse_gin (a constant when planned) lets the GIN index serve the match; when few
      -- rows are allowed it is a test on each allowed row instead (IS TRUE is no index
      -- condition): the GIN scan of common words costs the same at any selectivity
      AND CASE WHEN CAST(:sparse_gin AS boolean)
               THEN c.body_tsv @@ CAST(:match_tsq AS tsquery)
               ELSE (c.body_tsv @@ CAST(:match_tsq AS tsquery)) IS TRUE END
      -- :sparse_group_index (a constant when planned) lets the btree on wall_group_id serve a
      -- small allowed set; for a large one the group test is a filter after the GIN scan
      AND ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                              CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
                              (SELECT ewall_retag_pending()),
                              CAST(:sparse_group_index AS boolean))
      AND ewall_chunk_narrowed(c.doc_type, c.source, c.matter_id, c.modified_at,
                               CAST(:doc_types AS text[]), CAST(:sources AS text[]),
                               CAST(:matter_ids AS text[]), CAST(:session_matter_id AS text),
                               CAST(:modified_from AS timestamptz),
                               CAST(:modified_to AS timestamptz))
), sparse_parts AS MATERIALIZED (
    -- Each document part's exact BM25 score from its impact postings (sql/functions/
    -- search_postings.v1.sql): the weight of a lexeme is its IDF among the chunks the person
    -- may see, so rows behind a wall move no score (invariant 12). Filter first: every part
    -- of the documents found above. From the postings (:sparse_impact true, no narrowing
    -- filter): the :sparse_candidates best parts, exactly, by the threshold algorithm, or
    -- (:sparse_sum true, fewer visible postings) every visible posting of the ranking lexemes
    -- summed per part, the access test inside the index-only scan of each lexeme's list.
    SELECT s.*
    FROM ewall_sparse_part_scores(
             ARRAY(SELECT DISTINCT document_id FROM sparse_docs ORDER BY document_id),
             CAST(:rank_lexemes AS text[]), CAST(:rank_idf_weights AS float8[]),
             CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
             (SELECT ewall_retag_pending())) AS s
    WHERE :use_sparse AND NOT CAST(:sparse_impact AS boolean)
    UNION ALL
    SELECT s.*
    FROM ewall_sparse_impact_topk(
             CAST(:rank_lexemes AS text[]), CAST(:rank_idf_weights AS float8[]),
             CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
             (SELECT ewall_retag_pending()), CAST(:sparse_candidates AS integer)) AS s
    WHERE :use_sparse AND CAST(:sparse_impact AS boolean) AND NOT CAST(:sparse_sum AS boolean)
      AND (SELECT version FROM policy) = :policy_version
    UNION ALL
    SELECT p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id,
           sum(q.weight * p.impact) AS score
    FROM unnest(CAST(:rank_lexemes AS text[]), CAST(:rank_idf_weights AS float8[]))
         AS q (lexeme, weight)
    JOIN search_postings AS p ON p.lexeme = q.lexeme
    WHERE :use_sparse AND CAST(:sparse_impact AS boolean) AND CAST(:sparse_sum AS boolean)
      AND (SELECT version FROM policy) = :policy_version
      AND p.wall_group_id = ANY(CAST(:wall_groups AS text[]))
      AND p.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))
      AND p.matter_id <> ALL(CAST((SELECT ewall_retag_pending()) AS text[]))
    GROUP BY p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id
), sparse_top AS MATERIALIZED (
    -- Scores to 1e-9 (in float8; through numeric it cost 0.6 us a part): a float sum's last
    -- bits follow the order its terms were added in, which the plan and the tables'
    -- physical state decide (rows the person may not see among them), and two parts of
    -- equal score swapped places when only hidden rows changed (invariant 12, a fuzz of
    -- 2026-12-05). Rounded, a tie is a tie, broken by part.
    SELECT p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id,
           round(p.score * 1e9) / 1e9 AS score
    FROM sparse_parts AS p
    ORDER BY 5 DESC, p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id
    LIMIT :sparse_candidates
), sparse_rows AS MATERIALIZED (
    -- The best parts' chunks that match, under the rule and the filters. Filter first: those
    -- found above (read again by key for their lexemes only). From the postings: read here,
    -- every chunk of the part tested (no narrowing filter reaches these forms; they stay as
    -- a guard).
    SELECT t.document_id, t.wall_group_id, t.source_acl_id, t.matter_id, t.score, c.chunk_id,
           c.body_tsv
    FROM sparse_top t
    JOIN sparse_docs d
      ON d.document_id = t.document_id AND d.wall_group_id = t.wall_group_id
     AND d.source_acl_id = t.source_acl_id AND d.matter_id = t.matter_id
    JOIN chunks c ON c.chunk_id = d.chunk_id
    WHERE NOT CAST(:sparse_impact AS boolean)
      AND ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                              CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
                              (SELECT ewall_retag_pending()), false)
    UNION ALL
    SELECT t.document_id, t.wall_group_id, t.source_acl_id, t.matter_id, t.score, c.chunk_id,
           c.body_tsv
    FROM sparse_top t
    JOIN chunks c ON c.document_id = t.document_id
    WHERE CAST(:sparse_impact AS boolean)
      -- a part is one document's chunks in one key: read them by document (about 20 rows);
      -- the group written so that its btree (a whole group's rows) is no access path here
      AND (c.wall_group_id || '') = t.wall_group_id AND c.source_acl_id = t.source_acl_id
      AND coalesce(c.matter_id, '') = t.matter_id
      AND c.body_tsv @@ CAST(:match_tsq AS tsquery)
      AND ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                              CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
                              (SELECT ewall_retag_pending()), false)
      AND ewall_chunk_narrowed(c.doc_type, c.source, c.matter_id, c.modified_at,
                               CAST(:doc_types AS text[]), CAST(:sources AS text[]),
                               CAST(:matter_ids AS text[]), CAST(:session_matter_id AS text),
                               CAST(:modified_from AS timestamptz),
                               CAST(:modified_to AS timestamptz))
), sparse AS MATERIALIZED (
    -- Within a part, its chunks in the order of their own saturated weight of the ranking
    -- lexemes; chunk n of a part gets the part's score / n (its first chunk carries the
    -- document to the fusion).
    SELECT r.chunk_id, r.document_id,
           r.score / row_number() OVER (
               PARTITION BY r.document_id, r.wall_group_id, r.source_acl_id, r.matter_id
               ORDER BY own.weight DESC, r.chunk_id) AS relevance
    FROM sparse_rows r
    CROSS JOIN LATERAL (
        -- to 1e-9, as the parts' scores: ties between a part's chunks go by chunk id
        SELECT round(coalesce(sum(q.w * u.tf / (u.tf + 1.2)), 0) * 1e9) / 1e9 AS weight
        FROM (SELECT x.lexeme, coalesce(array_length(x.positions, 1), 1) AS tf
              FROM unnest(ts_filter(setweight(setweight(r.body_tsv, 'D'), 'A',
                                              CAST(:rank_lexemes AS text[])), '{a}')) AS x
             ) AS u
        JOIN unnest(CAST(:rank_lexemes AS text[]), CAST(:rank_weights AS float8[])) AS q(l, w)
          ON q.l = u.lexeme
    ) AS own
    ORDER BY relevance DESC, r.chunk_id
    LIMIT :sparse_candidates
), dense_ranked AS (
    SELECT chunk_id, document_id, distance,
           row_number() OVER (ORDER BY distance, chunk_id) AS r
    FROM dense
), sparse_ranked AS (
    SELECT s.chunk_id, s.document_id, s.relevance,
           row_number() OVER (ORDER BY s.relevance DESC, s.chunk_id) AS r
    FROM sparse s
), named AS MATERIALIZED (
    -- The documents the question names by their own identifiers (:names, ECLIs, LJNs and
    -- journal citations, case numbers: sql/functions/document_names.v2.sql reads both sides), found
    -- through the GIN index on ewall_document_names, ranked in the order the question
    -- names them; for each, one chunk under the rule and the filters: the one the sparse
    -- leg ranked best, else the dense leg, else its first.
    -- Only chunks the person may see come out: a named document behind a wall changes
    -- nothing (invariant 12).
    SELECT DISTINCT ON (c.document_id) c.chunk_id, c.document_id, n.r
    FROM (SELECT d.document_id,
                 (SELECT min(array_position(CAST(:names AS text[]), x))
                  FROM unnest(ewall_document_names(d.title, d.external_id, d.metadata)) AS x)
                 AS r
          FROM documents d
          -- a constant when planned: no names, no scan
          WHERE cardinality(CAST(:names AS text[])) > 0
            AND ewall_document_names(d.title, d.external_id, d.metadata)
                && CAST(:names AS text[])) AS n
    JOIN chunks c ON c.document_id = n.document_id
    -- the legs' own rows (materialized already; their ranked forms stay inlined in fused)
    LEFT JOIN sparse AS s ON s.chunk_id = c.chunk_id
    LEFT JOIN dense AS d ON d.chunk_id = c.chunk_id
    WHERE ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                              CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
                              (SELECT ewall_retag_pending()), false)
      AND (SELECT version FROM policy) = :policy_version
      AND ewall_chunk_narrowed(c.doc_type, c.source, c.matter_id, c.modified_at,
                               CAST(:doc_types AS text[]), CAST(:sources AS text[]),
                               CAST(:matter_ids AS text[]), CAST(:session_matter_id AS text),
                               CAST(:modified_from AS timestamptz),
                               CAST(:modified_to AS timestamptz))
      -- not the typed phrases: an identifier lives in the title and metadata, so a quoted
      -- ECLI, a phrase no chunk holds, would name nothing (a review of 2026-12-05)
    ORDER BY c.document_id, s.relevance DESC NULLS LAST, d.distance NULLS LAST, c.ordinal,
             c.chunk_id
), fused AS (
    -- Weighted reciprocal rank fusion: a leg's hit at rank r adds weight / (rrf_k + r). With
    -- W the weights of both legs, no chunk scores more than W / (rrf_k + 1); a chunk the
    -- named leg ranks r adds W / (rrf_k + 1) x (1 + 1 / r), more than that: what the
    -- question names comes first, at any rrf_k.
    SELECT chunk_id, document_id,
           sum(part) AS score,
           min(dense_rank) AS dense_rank,
           min(sparse_rank) AS sparse_rank,
           min(named_rank) AS named_rank,
           min(distance) AS distance,
           max(relevance) AS relevance
    FROM (
        SELECT chunk_id, document_id, CAST(:dense_weight AS float8) / (:rrf_k + r) AS part,
               r AS dense_rank, CAST(NULL AS bigint) AS sparse_rank,
               CAST(NULL AS bigint) AS named_rank, distance, CAST(NULL AS float8) AS relevance
        FROM dense_ranked
        UNION ALL
        SELECT chunk_id, document_id, CAST(:sparse_weight AS float8) / (:rrf_k + r), NULL, r,
               NULL, NULL, relevance
        FROM sparse_ranked
        UNION ALL
        SELECT chunk_id, document_id,
               (CAST(:dense_weight AS float8) + CAST(:sparse_weight AS float8))
               / (:rrf_k + 1) * (1 + 1 / CAST(r AS float8)), NULL, NULL, r, NULL, NULL
        FROM named
    ) AS legs
    GROUP BY chunk_id, document_id
), fused_doc AS (
    -- collapsed, one hit per document: its best chunk (the others are listed with it); the
    -- legs carry each chunk's document, so the collapse reads no chunks
    SELECT f.*,
           row_number() OVER (PARTITION BY f.document_id
                              ORDER BY f.score DESC,
                                       least(coalesce(f.sparse_rank, 1000000),
                                             coalesce(f.dense_rank, 1000000)),
                                       f.chunk_id) AS in_document
    FROM fused f
), top AS (
    SELECT * FROM fused_doc
    WHERE NOT CAST(:collapse AS boolean) OR in_document = 1
    ORDER BY score DESC, least(coalesce(sparse_rank, 1000000), coalesce(dense_rank, 1000000)),
             chunk_id
    LIMIT :k
)
SELECT (SELECT version FROM policy) AS policy_version_seen,
       (SELECT count(*) FROM dense) AS dense_count,
       (SELECT count(*) FROM sparse) AS sparse_count,
       hit.*
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (
    SELECT t.chunk_id, t.score, t.dense_rank, t.sparse_rank, t.named_rank, t.distance,
           t.relevance,
           c.body, c.content_sha256,
           -- the matter's client now (a matter moved to another client keeps its chunks'
           -- client as ingested); public sources have no matter
           coalesce((SELECT m.client_id FROM matters m WHERE m.matter_id = c.matter_id),
                    c.client_id) AS client_id,
           c.matter_id, c.section_path, c.page_from,
           c.page_to, c.doc_type, d.source, d.external_id, d.title, d.modified_at,
           ts_headline('ewall_nl_plain',
                       replace(replace(replace(c.body, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
                       CAST(:headline_tsq AS tsquery),
                       'StartSel=<b>, StopSel=</b>, MaxWords=35, MinWords=12, MaxFragments=2, '
                       || 'FragmentDelimiter=" … "') AS snippet,
           CASE WHEN CAST(:collapse AS boolean) THEN
               (SELECT coalesce(jsonb_agg(jsonb_build_object(
                           'chunk_id', o.chunk_id, 'section_path', oc.section_path,
                           'page_from', oc.page_from, 'page_to', oc.page_to,
                           'score', o.score, 'content_sha256', oc.content_sha256,
                           'matter_id', oc.matter_id) ORDER BY o.in_document), CAST('[]' AS jsonb))
                FROM fused_doc o JOIN chunks oc ON oc.chunk_id = o.chunk_id
                WHERE o.document_id = t.document_id AND o.in_document > 1
                  AND ewall_chunk_visible(oc.wall_group_id, oc.source_acl_id, oc.matter_id,
                                          oc.suppressed, CAST(:wall_groups AS text[]),
                                          CAST(:source_acl_ids AS text[]),
                                          (SELECT ewall_retag_pending()), false))
           END AS other_sections
    FROM top t
    JOIN chunks c ON c.chunk_id = t.chunk_id
    JOIN documents d ON d.document_id = c.document_id
    -- the rule on every read of chunks (tests/foundation/test_layers.py), these key reads of
    -- rows a leg admitted in this snapshot too (the same answer, a filter on k rows)
    WHERE ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                              CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
                              (SELECT ewall_retag_pending()), false)
) AS hit ON true
ORDER BY hit.score DESC NULLS LAST,
         least(coalesce(hit.sparse_rank, 1000000), coalesce(hit.dense_rank, 1000000)),
         hit.chunk_id

-- name: group_sizes
-- Allowed rows (the person's access keys, suppressed chunks and matters pending re-tag left
-- out) and the corpus size, for the dense strategy choice.
-- Stats tables, never count(*) over the allowed set.
SELECT coalesce((SELECT sum(n_chunks) FROM search_key_stats
                 WHERE wall_group_id = ANY(CAST(:wall_groups AS text[]))
                   AND source_acl_id = ANY(CAST(:source_acl_ids AS text[]))), 0)
       - coalesce((SELECT p.n_chunks
                   FROM ewall_pending_key_counts(CAST(:wall_groups AS text[]),
                                                 CAST(:source_acl_ids AS text[]), '{}') AS p
                   WHERE p.lexeme IS NULL), 0) AS allowed,
       (SELECT n_chunks FROM corpus_stats WHERE id = 1) AS total

-- name: hnsw_settings
-- Transaction-local (safe under transaction pooling); planning of the next statement sees
-- them.
SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
       set_config('enable_seqscan', 'off', true),
       set_config('hnsw.ef_search', CAST(:ef_search AS text), true),
       set_config('hnsw.max_scan_tuples', CAST(:max_scan_tuples AS text), true),
       set_config('hnsw.scan_mem_multiplier', '4', true)

-- name: list_synonyms
SELECT term, synonym, created_by, created_at FROM search_synonyms ORDER BY term, synonym

-- name: lexeme_counts
-- How many searchable lexemes a synonym's term and its synonym have (0: nothing to match).
SELECT cardinality(ewall_query_lexemes(:term)) AS term_lexemes,
       cardinality(ewall_query_lexemes(:synonym)) AS synonym_lexemes

-- name: insert_synonym
INSERT INTO search_synonyms (term, synonym, created_by) VALUES (:term, :synonym, :created_by)
ON CONFLICT (term, synonym) DO NOTHING

-- name: delete_synonym
DELETE FROM search_synonyms WHERE term = :term AND synonym = :synonym
