-- The identifiers a lawyer may search a document by, version 2 (migration 20261210_0062):
-- version 1 (document_names.v1.sql, where the reasons are) with case numbers, and a
-- question's ECLI however it is separated.
--
-- A check of 2026-12-06 asked for decisions by case number ("zaaknummer 200.058.091/01",
-- "HR ... nr. 30460") and by ECLIs written with spaces or dots ("ecli nl crvb 2013 1886",
-- "ECLI.NL.HR.1996.AA1985"): none was named. The names, upper case, now also hold:
--   - "ZN:" and each case number of the metadata's "zaaknummers" (case law), one name
--     per run of four or more digits with its separators: dots left out, "-", "_" and "/"
--     between digits written "/" ("200.058.091-01" -> "ZN:200058091/01", "AWB 98/473" ->
--     "ZN:98/473", "30.460" -> "ZN:30460").

-- A case number as the names write it: the dots of "200.058.091/01" left out.
CREATE OR REPLACE FUNCTION ewall_case_number(digits text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT replace(digits, '.', '')
$fn$;

CREATE OR REPLACE FUNCTION ewall_document_names(title text, external_id text, metadata jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    WITH eclis AS (
        SELECT DISTINCT m[1] AS ecli
        FROM unnest(ARRAY[upper(metadata ->> 'ecli'), upper(title), upper(external_id)])
             AS t (text),
             regexp_matches(t.text, '(ECLI:[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Z0-9.]{0,24}[A-Z0-9])',
                            'g') AS m
    ), ljns AS (
        SELECT substr(ecli, length(ecli) - 5) AS ljn
        FROM eclis
        WHERE ecli ~ ':[A-Z]{2}[0-9]{4}$'
        UNION
        SELECT upper(r.value)
        FROM jsonb_array_elements_text(
                 CASE jsonb_typeof(metadata -> 'replaces')
                      WHEN 'array' THEN metadata -> 'replaces' ELSE '[]' END) AS r (value)
        WHERE r.value ~* '^[A-Z]{2}[0-9]{4}$'
        UNION
        SELECT upper(m[1])
        FROM regexp_matches(title, 'LJN:? *([A-Za-z]{2}[0-9]{4})(?![A-Za-z0-9])', 'gi') AS m
    ), cases AS (
        -- each case number of the metadata's "zaaknummers": every run of 4 or more digits
        -- with its separators, as ewall_case_number writes it
        SELECT public.ewall_case_number(m[1]) AS zn
        FROM jsonb_array_elements_text(
                 CASE jsonb_typeof(metadata -> 'zaaknummers')
                      WHEN 'array' THEN metadata -> 'zaaknummers' ELSE '[]' END) AS z (value),
             regexp_matches(regexp_replace(regexp_replace(z.value,
                                '([0-9])\s*[_/-]\s*([0-9])', '\1/\2', 'g'),
                                '([0-9])\s*[_/-]\s*([0-9])', '\1/\2', 'g'),
                            '(?<![0-9])([0-9]+(?:[./][0-9]+)*)(?![0-9])', 'g') AS m
        WHERE length(regexp_replace(m[1], '[^0-9]', '', 'g')) >= 4
    ), places AS (
        SELECT 'VP:' || replace(m[1], '.', '') || ' ' || m[2] || '/' || m[3] AS place
        FROM jsonb_array_elements_text(
                 CASE jsonb_typeof(metadata -> 'vindplaatsen')
                      WHEN 'array' THEN metadata -> 'vindplaatsen' ELSE '[]' END) AS v (value),
             regexp_matches(upper(v.value),
                            '(?<![A-Z0-9.-])([A-Z][A-Z.-]{0,15}) ?([0-9]{4}) ?(?:[/,]|,? NR\.?) ?'
                            || '([0-9]+(?:\.[0-9]+)*[A-Z]?)(?![0-9A-Z])', 'g') AS m
    )
    SELECT ARRAY(SELECT ecli FROM eclis
                 UNION
                 SELECT 'LJN:' || ljn FROM ljns
                 UNION
                 SELECT place FROM places
                 UNION
                 SELECT 'ZN:' || zn FROM cases
                 ORDER BY 1)
$fn$;

-- The identifiers a question names, as ewall_document_names writes them, first appearance
-- first, at most 20: version 1's ECLIs, LJNs and journal citations, an ECLI whose parts are
-- separated by spaces, dots or ": " ("ecli nl crvb 2013 1886", "ECLI: NL: HR: 2019: 1278"),
-- and a case number after "zaaknummer", "zaaknr.", "rolnummer" or "rolnr." ("zaaknummer
-- 200.058.091/01", "zaaknr. AWB 98/473") or standing alone in the two forms no amount,
-- date or other number takes: "200.058.091/01" (a court of appeal's) and "C/13/654321" (a
-- district court's). Not "nr.": it numbers journals, Staatscourant issues and KvK entries.
CREATE OR REPLACE FUNCTION ewall_question_names(question text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT ARRAY(
        SELECT n.name
        FROM (SELECT f.name, min(f.first) AS first
              FROM (SELECT coalesce(m.x[1],
                                    'ECLI:' || m.x[7] || ':' || m.x[8] || ':' || m.x[9] || ':'
                                    || m.x[10],
                                    'LJN:' || coalesce(m.x[2], m.x[3]),
                                    'VP:' || replace(m.x[4], '.', '') || ' ' || m.x[5] || '/'
                                    || m.x[6]) AS name,
                           m.pos AS first
                    FROM regexp_matches(
                             upper(question),
                             '(ECLI:[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Z0-9.]{0,24}[A-Z0-9])'
                             || '|(?<![A-Z0-9])LJN:? *([A-Z]{2}[0-9]{4})(?![A-Z0-9/-])'
                             || '|(?<![A-Z0-9:.!/-])([A-Z]{2}[0-9]{4})(?![A-Z0-9/-])'
                             || '|(?<![A-Z0-9.-])([A-Z][A-Z.-]{0,15}) ?([0-9]{4}) ?(?:[/,]|,? NR\.?) ?'
                             || '([0-9]+(?:\.[0-9]+)*[A-Z]?)(?![0-9A-Z])'
                             || '|(?<![A-Z0-9])ECLI *[:. ] *([A-Z]{2}) *[:. ] *([A-Z0-9]{1,7}) *[:. ] *'
                             || '([0-9]{4}) *[:. ] *([A-Z0-9]{0,24}[A-Z0-9])(?![A-Z0-9])',
                             'g') WITH ORDINALITY AS m (x, pos)
                    UNION ALL
                    -- case numbers, after the names above (their own pass: "nr." also ends
                    -- a journal citation, which the pass above reads)
                    SELECT 'ZN:' || public.ewall_case_number(
                               regexp_replace(coalesce(c.x[1], c.x[2], c.x[3]), '[_-]', '/', 'g')),
                           1000 + c.pos
                    FROM regexp_matches(
                             upper(question),
                             '(?<![A-Z0-9-])(?:ZAAKNUMMERS?|ZAAKNR\.?|ROLNUMMERS?|ROLNR\.?)[: ]*'
                             || '(?:[A-Z]{1,5} )?([0-9]+(?:[./_-][0-9]+)*)(?![0-9])'
                             || '|(?<![0-9A-Z./-])([0-9]{2,3}(?:\.[0-9]{3}){2,3}[/-][0-9]{1,3})(?![0-9/.-])'
                             || '|(?<![0-9A-Z./-])C/([0-9]{2}/[0-9]{5,7})(?![0-9/.-])',
                             'g') WITH ORDINALITY AS c (x, pos)
                    WHERE length(regexp_replace(coalesce(c.x[1], c.x[2], c.x[3]), '[^0-9]', '', 'g'))
                          >= 4) AS f
              GROUP BY f.name) AS n
        ORDER BY n.first
        LIMIT 20)
$fn$;
