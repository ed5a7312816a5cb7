-- The identifiers a lawyer may search a document by, version 5 (migration 20261213_0070):
-- version 4 (document_names.v4.sql; ewall_case_number and ewall_court_family stay as it
-- made them, the reasons are in version 3), and a decision named by its court and date.
--
-- Lawyers cite a decision by its court and the day it was given ("HR 27 september 1995",
-- "Hoge Raad 27-09-1995", "CRvB 21 mei 2013"); a check of 2026-12-06 found such a question
-- ranking its decision 17th. A decision now also carries "CD:<court>:<day>" (the court of
-- its ECLI as ewall_court_family files it, the day of its metadata's decision_date), and a
-- court followed by a date in the question (at most three words between: its place, "heeft
-- op") names that court's decisions of that day. A court gives several decisions a day:
-- each is named, and the question's other words order them.

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
    ), courts AS (
        SELECT DISTINCT public.ewall_court_family(split_part(ecli, ':', 3)) AS court FROM eclis
    ), days AS (
        -- the day as the metadata writes it (ISO 8601), read as text: no cast can fail
        SELECT substring(metadata ->> 'decision_date' FROM '^([0-9]{4}-[0-9]{2}-[0-9]{2})')
               AS day
    )
    SELECT ARRAY(SELECT ecli FROM eclis
                 UNION
                 SELECT 'LJN:' || ljn FROM ljns
                 UNION
                 SELECT place FROM places
                 UNION
                 SELECT 'ZN:' || zn FROM cases
                 UNION
                 SELECT 'ZC:' || court || ':' || zn FROM courts, cases
                 UNION
                 SELECT 'CD:' || court || ':' || day FROM courts, days WHERE day IS NOT NULL
                 ORDER BY 1)
$fn$;

-- The identifiers a question names, as ewall_document_names writes them, first appearance
-- first, at most 20: version 2's (ECLIs, LJNs, journal citations, an ECLI separated by
-- spaces, dots or ": ", a case number after "zaaknummer", "zaaknr.", "rolnummer" or "rolnr."
-- or alone in the forms "200.058.091/01" and "C/13/654321"), and now an ECLI separated by
-- dashes, one written from its country or court on ("NL:HR:1995:AA3120", "HR:1995:AA3120":
-- a Dutch court's, colons only), and a case number after a court's name or abbreviation,
-- its place and a date: after "nr.", "no." or "nummer" ("HR 27 september 1995, nr. 30460",
-- "HR nr. 31.173"), or as a court writes one of its own ("CRvB 21-05-2013, 12/2272",
-- "ABRvS 24 april 2019, 201805678/1/A2"), named under that court ("ZC:HR:30460"); and
-- now a court and a date ("HR 27 september 1995": "CD:HR:1995-09-27").
CREATE OR REPLACE FUNCTION ewall_question_names(question text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT ARRAY(
        SELECT n.name
        FROM (SELECT f.name, min(f.first) AS first
              FROM (SELECT coalesce(m.x[1],
                                    'ECLI:' || m.x[7] || ':' || m.x[8] || ':' || m.x[9] || ':'
                                    || m.x[10],
                                    'ECLI:' || coalesce(m.x[11], 'NL') || ':' || m.x[12] || ':'
                                    || m.x[13] || ':' || m.x[14],
                                    'LJN:' || coalesce(m.x[2], m.x[3]),
                                    'VP:' || replace(m.x[4], '.', '') || ' ' || m.x[5] || '/'
                                    || m.x[6]) AS name,
                           m.pos AS first
                    FROM regexp_matches(
                             upper(question),
                             '(ECLI:[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Z0-9.]{0,24}[A-Z0-9])'
                             || '|(?<![A-Z0-9])LJN:? *([A-Z]{2}[0-9]{4})(?![A-Z0-9/-])'
                             || '|(?<![A-Z0-9:.!/-])([A-Z]{2}[0-9]{4})(?![A-Z0-9/-])'
                             || '|(?<![A-Z0-9.-])(?!(?:JANUARI|FEBRUARI|MAART|APRIL|MEI|JUNI|JULI|AUGUSTUS|SEPTEMBER|OKTOBER|NOVEMBER|DECEMBER) ?[0-9])'
                             || '([A-Z][A-Z.-]{0,15}) ?([0-9]{4}) ?(?:[/,]|,? NR\.?) ?'
                             || '([0-9]+(?:\.[0-9]+)*[A-Z]?)(?![0-9A-Z])'
                             || '|(?<![A-Z0-9])ECLI *[:. -] *([A-Z]{2}) *[:. -] *([A-Z0-9]{1,7}) *[:. -] *'
                             || '([0-9]{4}) *[:. -] *([A-Z0-9]{0,24}[A-Z0-9])(?![A-Z0-9])'
                             || '|(?<![A-Z0-9:.-])(?:([A-Z]{2}):)?([A-Z][A-Z0-9]{1,6}):([0-9]{4}):'
                             || '([A-Z0-9]{0,24}[A-Z0-9])(?![A-Z0-9:])',
                             'g') WITH ORDINALITY AS m (x, pos)
                    UNION ALL
                    -- case numbers, after the names above (their own pass: "nr." also ends
                    -- a journal citation, which the pass above reads)
                    SELECT CASE WHEN coalesce(c.x[5], c.x[7]) IS NULL THEN 'ZN:'
                                ELSE 'ZC:' || public.ewall_court_family(coalesce(c.x[4], c.x[6]))
                                     || ':' END
                           || public.ewall_case_number(
                               regexp_replace(coalesce(c.x[1], c.x[2], c.x[3], c.x[5], c.x[7]),
                                              '[_-]', '/', 'g')),
                           1000 + c.pos
                    FROM regexp_matches(
                             upper(question),
                             '(?<![A-Z0-9-])(?:ZAAKNUMMERS?|ZAAKNR\.?|ROLNUMMERS?|ROLNR\.?)[: ]*'
                             || '(?:[A-Z]{1,5} )?([0-9]+(?:[./_-][0-9]+)*)(?![0-9])'
                             || '|(?<![0-9A-Z./-])([0-9]{2,3}(?:\.[0-9]{3}){2,3}[/-][0-9]{1,3})(?![0-9/.-])'
                             || '|(?<![0-9A-Z./-])C/([0-9]{2}/[0-9]{5,7})(?![0-9/.-])'
                             -- after a court, its place and a date: "nr." and a number, or
                             -- a date and a number with a slash
                             || '|(?<![A-Z0-9])(HR|HOGE RAAD|CRVB|CBB|ABRVS|ABRS|RVS|RAAD VAN STATE|HOF|GERECHTSHOF|RB|RECHTBANK|KTR|KANTONRECHTER)\.?(?: [A-Z''-]+){0,3}?(?:[ ,]+[0-9]{1,2}(?: (?:JANUARI|FEBRUARI|MAART|APRIL|MEI|JUNI|JULI|AUGUSTUS|SEPTEMBER|OKTOBER|NOVEMBER|DECEMBER) |-[0-9]{1,2}-)[0-9]{4})?[ ,]*'
                             || '(?:NR\.?|NO\.?|NUMMER) *([0-9]+(?:[./_-][0-9]+)*)(?![0-9])'
                             || '|(?<![A-Z0-9])(HR|HOGE RAAD|CRVB|CBB|ABRVS|ABRS|RVS|RAAD VAN STATE|HOF|GERECHTSHOF|RB|RECHTBANK|KTR|KANTONRECHTER)\.?(?: [A-Z''-]+){0,3}?(?:[ ,]+[0-9]{1,2}(?: (?:JANUARI|FEBRUARI|MAART|APRIL|MEI|JUNI|JULI|AUGUSTUS|SEPTEMBER|OKTOBER|NOVEMBER|DECEMBER) |-[0-9]{1,2}-)[0-9]{4})[ ,]+'
                             || '([0-9]{2,4}/[0-9]{3,7}|[0-9]{6,12}/[0-9]{1,3})(?![0-9])',
                             'g') WITH ORDINALITY AS c (x, pos)
                    WHERE length(regexp_replace(coalesce(c.x[1], c.x[2], c.x[3], c.x[5], c.x[7]),
                                                '[^0-9]', '', 'g'))
                          >= 4
                    UNION ALL
                    -- a court, at most three words (its place, "heeft op") and a date: that
                    -- court's decisions of that day ("HR 27 september 1995", "Rb. Amsterdam
                    -- 21-05-2013"), after the names above
                    SELECT 'CD:' || public.ewall_court_family(d.x[1]) || ':' || d.x[5] || '-'
                           || lpad(coalesce(d.x[4], array_position(
                                  ARRAY['JANUARI', 'FEBRUARI', 'MAART', 'APRIL', 'MEI', 'JUNI',
                                        'JULI', 'AUGUSTUS', 'SEPTEMBER', 'OKTOBER',
                                        'NOVEMBER', 'DECEMBER'], d.x[3])::text), 2, '0')
                           || '-' || lpad(d.x[2], 2, '0'),
                           2000 + d.pos
                    FROM regexp_matches(
                             upper(question),
                             '(?<![A-Z0-9])(HR|HOGE RAAD|CRVB|CBB|ABRVS|ABRS|RVS|RAAD VAN STATE|HOF|GERECHTSHOF|RB|RECHTBANK|KTR|KANTONRECHTER)\.?(?: [A-Z''-]+){0,3}?[ ,]+'
                             || '([0-9]{1,2})(?: (JANUARI|FEBRUARI|MAART|APRIL|MEI|JUNI|JULI|AUGUSTUS|SEPTEMBER|OKTOBER|NOVEMBER|DECEMBER) |-([0-9]{1,2})-)([0-9]{4})(?![0-9])',
                             'g') WITH ORDINALITY AS d (x, pos)
                    WHERE coalesce(d.x[4], '1')::int BETWEEN 1 AND 12
                      AND d.x[2]::int BETWEEN 1 AND 31) AS f
              GROUP BY f.name) AS n
        ORDER BY n.first
        LIMIT 20)
$fn$;
