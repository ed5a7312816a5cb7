-- The identifiers a lawyer may search a document by, version 4 (migration 20261211_0066):
-- version 3 (document_names.v3.sql, where the reasons are), with a case number read after a
-- court tied to that court.
--
-- Version 3 read "HR nr. 30460" and "CRvB 21-05-2013, 12/2272" as the case numbers alone,
-- and a review found another court's decision with the same number named first (a court
-- of appeal's 30460, a district court's AWB 12/2272). A document now also carries its case
-- numbers under its court ("ZC:HR:30460", "ZC:CRVB:12/2272", from the court of its ECLI;
-- courts of appeal and district courts by their kind, "GH" and "RB"), and a case number
-- the question reads after a court names only that court's decisions. "Ghana nr. 1234" is
-- no court ("GH..." went); a Council of State's "201805678/1" after a date is read.

-- A case number as the names write it: the dots of "200.058.091/01" left out.
CREATE OR REPLACE FUNCTION ewall_case_number(digits text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT replace(digits, '.', '')
$fn$;

-- A court as the case numbers are filed under it: an ECLI's court code or a question's name
-- for the court. The Supreme Court, the Council of State's Administrative Jurisdiction
-- Division, the Central Appeals Tribunal and the Trade and Industry Appeals Tribunal by
-- their own codes; courts of appeal ("GHAMS", "Hof", "Gerechtshof") as GH, district courts
-- and their cantonal judges ("RBAMS", "Rb.", "Kantonrechter") as RB.
CREATE OR REPLACE FUNCTION ewall_court_family(court text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT CASE WHEN c IN ('HR', 'HOGE RAAD') THEN 'HR'
                WHEN c IN ('ABRVS', 'ABRS', 'RVS', 'RAAD VAN STATE') THEN 'RVS'
                WHEN c IN ('HOF', 'GERECHTSHOF') OR c ~ '^GH[A-Z]' THEN 'GH'
                WHEN c IN ('RB', 'RECHTBANK', 'KTR', 'KANTONRECHTER') OR c ~ '^RB[A-Z]' THEN 'RB'
                ELSE c END
    FROM (SELECT upper(replace(court, '.', '')) AS c) AS t
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
    ), courts AS (
        SELECT DISTINCT public.ewall_court_family(split_part(ecli, ':', 3)) AS court FROM eclis
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
-- "ABRvS 24 april 2019, 201805678/1/A2"), named under that court ("ZC:HR:30460").
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
                          >= 4) AS f
              GROUP BY f.name) AS n
        ORDER BY n.first
        LIMIT 20)
$fn$;
