-- Legal citations as one canonical token, version 3 (migration 20261217_0074): version 2's
-- output for every input, from fewer regular expressions.
--
-- PostgreSQL keeps the 32 regular expressions a connection compiled last (MAX_CACHED_RES in
-- regexp.c, least recently used out). Version 2 ran all 25 of its own on every text, one per
-- law in its loop, whether or not the text could hold what they match, so the analysis of a
-- question with a citation and typed syntax (33 patterns in all) overflowed the cache and
-- compiled every pattern again on every search. Version 3 runs a pass only when the text
-- holds a literal that every match of the pass's pattern holds: "art" (every form of the
-- keyword and every token), ":" or the list mark, "boek", "wet" and each law's own word,
-- "epc", "ecl". A pass left out would have changed nothing, so the output is version 2's
-- (tests/search/test_legal_normalize_v3.py runs both over the shared corpus and every
-- citation form). The literals are looked for in lower(text): under the flag i a pattern's
-- letter c matches c and upper(c) only (allcases in regc_locale.c), and lower() gives c back
-- for each ASCII letter the literals use; none is an "i", whose cases differ by locale.
--
-- What it reads (version 2, migration 20261210_0061):
--   "artikel 8:29, eerste lid, aanhef en onder a, van de Awb"   ordinal paragraphs, parts
--   "artikel 6:19 van de Algemene wet bestuursrecht (Awb)"      the law's name written out
--   "de artikelen 6:18 en 6:19, eerste lid, van de Awb"          a list before one code:
--   "6:19 in verbinding met artikel 6:24 van de Awb"              every article gets it
--   "6:18 Awb", "6:162BW", "art. 6: 162 BW", "6:162 (oud) BW"   no "artikel", odd spacing
--   "art. 6:162 lid 2 e.v. BW", "artikel 162 van Boek 6 BW",
--   "Boek 6 artikel 248"                                         (Boek N: the Civil Code's)
--   "art. 5 Handelsnaamwet" and "art. 5 Hnw"                     one code per law: the
--     short one (awb, bw, rv, sr, sv, awr, wob, ro, hnw, aw, row, gw, ew; EPC is the EOV),
--     so both forms meet
-- A written-out name stays in the text beside the token (a question may use its words).
-- "ECLI:NL:HR:2019:1278" keeps its parts and gains the token "eclinlhr20191278", as before.
-- Used on both sides (chunks.body_tsv through ewall_nl_tsvector, and every question), so
-- all forms meet on the same lexeme.

CREATE OR REPLACE FUNCTION ewall_legal_normalize(input text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
    -- each law's names, the one code its tokens carry ("art5hnw" for "art. 5 Hnw" and
    -- "Artikel 5 Handelsnaamwet" alike), and a word in lower case that every match of its
    -- names holds (its pass runs only on a text that holds that word)
    laws   constant text[] := ARRAY[
        ['algemene\s+wet\s+bestuursrecht(?:\s*\((?:hierna:?\s*)?awb\))?', 'awb', 'bestuursrecht'],
        ['burgerlijk\s+wetboek(?:\s*\((?:hierna:?\s*)?bw\))?', 'bw', 'burgerl'],
        ['wetboek\s+van\s+burgerlijke\s+rechtsvordering(?:\s*\(rv\))?', 'rv', 'rechtsvordering'],
        ['wetboek\s+van\s+strafrecht(?:\s*\(sr\))?', 'sr', 'strafrecht'],
        ['wetboek\s+van\s+strafvordering(?:\s*\(sv\))?', 'sv', 'strafvordering'],
        ['algemene\s+wet\s+inzake\s+rijksbelastingen(?:\s*\(awr\))?', 'awr', 'belast'],
        ['wet\s+openbaarheid\s+van\s+bestuur(?:\s*\(wob\))?', 'wob', 'openbaarhe'],
        ['wet\s+op\s+de\s+rechterlijke\s+organisatie(?:\s*\(ro\))?', 'ro', 'rechterl'],
        ['rijksoctrooiwet(?:\s+1995)?', 'row', 'octroo'],
        ['auteurswet(?:\s+1912)?', 'aw', 'auteurswet'],
        ['handelsnaamwet', 'hnw', 'handelsnaamwet'],
        ['grondwet', 'gw', 'grondwet'],
        ['(?:elektriciteitswet(?:\s+1998)?|e-wet)', 'ew', 'wet']];
    -- the names written out first: the longest alternative that matches is taken
    codes  constant text := '(' || array_to_string(ARRAY(
            SELECT laws[i][1] FROM generate_subscripts(laws, 1) AS i ORDER BY i), '|')
        || '|eov|epc|evrm|ehrm|bw|rv|sr|sv|awb|awr|wob|ro|gw|aw|hnw|row|wvw|fw|avg)';
    short  constant text := '(awb|bw|rv|sr|sv|awr|wob|ro|hnw|aw|row|gw|ew|eov|evrm|ehrm|wvw|fw|avg)';
    artkw  constant text := '(?:artikel(?:en)?|artt?\.?)\s*';
    ordinal constant text :=
        '(?:eerste|tweede|derde|vierde|vijfde|zesde|zevende|achtste|negende|tiende)';
    qual   constant text := '(?:\s*,?\s*(?:(?:lid|leden)\s+\d+(?:\s*(?:en|,)\s*\d+)*'
        '|' || ordinal || '(?:\s+en\s+' || ordinal || ')?\s+(?:lid|leden)'
        '|aanhef(?:\s+en)?|(?:sub|onder|onderdeel|letter)\s+[a-z0-9]{1,3}\M|e\.\s?v\.))*';
    van    constant text := '\s*,?\s*(?:\(oud\)\s*)?(?:van\s+(?:het|de)\s+)?';
    -- between two articles of one list: a comma, "en", "of", "t/m", "juncto", "in verbinding met"
    conn   constant text := '(?:en|of|t/m|juncto|jo\.|in\s+verbinding\s+met)';
    joined constant text := '(\s*,\s*(?:' || conn || '\s+)?|\s+' || conn || '\s+)';
    -- the articles of a list after "artikel(en)" or "art(t)." ("de artikelen 6:18 en 6:19
    -- ... van de Awb"), marked in their colon: only they take a code from the list's last
    -- article, not a time ("om 10:30, artikel 8:29 Awb") or an ECLI's ordinal before one
    mark   constant text := chr(57344);  -- U+E000, private use
    colon  constant text := '[:' || chr(57344) || ']';
    result text := input;
    before text;
    rounds integer := 0;
    -- result in lower case, for the literals each pass needs: set again after a pass that
    -- changed the text (the passes that only turn ":" into the mark change no letter)
    low    text := lower(input);
BEGIN
    -- the first article after the keyword, then each next one of its list, a pass each
    IF strpos(low, 'art') > 0 AND strpos(result, ':') > 0 THEN
        result := regexp_replace(result,
            '\m(artikel(?:en)?|artt?\.?)(\s*\d{1,2}):(\d{1,4}[a-z]?\M)', '\1\2' || mark || '\3',
            'gi');
    END IF;
    IF strpos(result, mark) > 0 AND strpos(result, ':') > 0 THEN
        LOOP
            before := result;
            result := regexp_replace(result,
                '(\d{1,2}' || mark || '\d{1,4}[a-z]?\M' || qual || '(?:\s*,\s*(?:' || conn
                || '\s+)?|\s+' || conn || '\s+)\d{1,2}):(\d{1,4}[a-z]?\M)',
                '\1' || mark || '\2', 'gi');
            rounds := rounds + 1;
            EXIT WHEN result = before OR rounds >= 20;
        END LOOP;
    END IF;
    rounds := 0;
    -- book:article forms first ("6:162"), so the plain article form cannot eat them
    IF strpos(low, 'art') > 0 AND (strpos(result, ':') > 0 OR strpos(result, mark) > 0) THEN
        before := result;
        result := regexp_replace(result,
            '\m' || artkw || '(\d+)' || colon || '\s?(\d+[a-z]?)' || qual || van || codes || '\M',
            ' art\1x\2\3 \3 ', 'gi');
        result := regexp_replace(result,
            '\m' || codes || '\s*,?\s*' || artkw || '(\d+)' || colon || '\s?(\d+[a-z]?)\M'
            || qual,
            ' art\2x\3\1 \1 ', 'gi');
        IF result <> before THEN
            low := lower(result);
        END IF;
    END IF;
    -- a book:article without "artikel": "6:18 Awb", "en 6:19, eerste lid, van de Awb"
    IF strpos(result, ':') > 0 OR strpos(result, mark) > 0 THEN
        before := result;
        result := regexp_replace(result,
            '(?:^|(?<=[\s(,]))(\d{1,2})' || colon || '(\d{1,4}[a-z]?)' || qual || van || codes
            || '\M',
            ' art\1x\2\3 \3 ', 'gi');
        IF result <> before THEN
            low := lower(result);
        END IF;
    END IF;
    -- "Boek 6 artikel 248" and "artikel 162 van Boek 6 (BW)": the books are the Civil Code's
    IF strpos(low, 'art') > 0 AND strpos(low, 'boek') > 0 THEN
        before := result;
        result := regexp_replace(result,
            '\mboek\s+(\d{1,2}),?\s+' || artkw || '(\d+[a-z]?)\M'
            '(?:\s*,?\s*(?:van\s+het\s+)?(?:bw|burgerlijk\s+wetboek)\M)?'
            '(?!\s*,?\s*(?:van\s+(?:het|de)\s+)?(?:wetboek\s+van|awb|rv|sr|sv|algemene)\M)',
            ' art\1x\2bw bw ', 'gi');
        result := regexp_replace(result,
            '\m' || artkw || '(\d+[a-z]?)\s+(?:van\s+)?boek\s+(\d{1,2})\M'
            '(?:\s*,?\s*(?:van\s+het\s+)?(?:bw|burgerlijk\s+wetboek)\M)?'
            '(?!\s*,?\s*(?:van\s+(?:het|de)\s+)?(?:wetboek\s+van|awb|rv|sr|sv|algemene)\M)',
            ' art\2x\1bw bw ', 'gi');
        IF result <> before THEN
            low := lower(result);
        END IF;
    END IF;
    IF strpos(low, 'art') > 0 THEN
        before := result;
        result := regexp_replace(result,
            '\m' || artkw || '(\d+[a-z]?)\M' || qual || van || codes || '\M',
            ' art\1\2 \2 ', 'gi');
        result := regexp_replace(result,
            '\m' || codes || '\s*,?\s*' || artkw || '(\d+[a-z]?)\M' || qual,
            ' art\2\1 \1 ', 'gi');
        IF result <> before THEN
            low := lower(result);
        END IF;
    END IF;
    -- each token's code the short one: "art6x19Algemene wet bestuursrecht (Awb)" -> art6x19awb;
    -- every law's names hold "wet"
    IF strpos(low, 'art') > 0 AND strpos(low, 'wet') > 0 THEN
        FOR i IN 1 .. array_length(laws, 1) LOOP
            CONTINUE WHEN strpos(low, laws[i][3]) = 0;
            before := result;
            result := regexp_replace(result, '\m(art\d+(?:x\d+[a-z]?)?)' || laws[i][1],
                                     '\1' || laws[i][2], 'gi');
            IF result <> before THEN
                low := lower(result);
            END IF;
        END LOOP;
    END IF;
    -- the European Patent Convention in English and in Dutch
    IF strpos(low, 'art') > 0 AND strpos(low, 'epc') > 0 THEN
        result := regexp_replace(result, '\m(art\d+(?:x\d+[a-z]?)?)epc\M', '\1eov', 'gi');
    END IF;
    -- a list before one code: the article before a token takes the token's code, from the
    -- last of the list to the first ("6:18 en art6x19awb" -> "art6x18awb en art6x19awb")
    IF strpos(result, mark) > 0 THEN
        LOOP
            before := result;
            result := regexp_replace(result,
                '(\d{1,2})' || mark || '(\d{1,4}[a-z]?)\M' || qual || joined
                || '(art\d+x\d+[a-z]?)' || short || '\M',
                ' art\1x\2\5 \3\4\5', 'gi');
            rounds := rounds + 1;
            EXIT WHEN result = before OR rounds >= 20;
        END LOOP;
        result := replace(result, mark, ':');
    END IF;
    -- "ecl": the "i" of "ecli" is left out (see the head of this file)
    IF strpos(lower(result), 'ecl') > 0 THEN
        result := regexp_replace(result,
            '\m(ECLI):([A-Z]{2}):([A-Z0-9]{1,7}):(\d{4}):([A-Z0-9.]{1,25}[A-Z0-9])',
            '\1:\2:\3:\4:\5 \1\2\3\4\5 ', 'gi');
    END IF;
    RETURN result;
END
$fn$;
