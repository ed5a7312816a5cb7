-- Legal citations as one canonical token, version 1: the normaliser as migration 0001 created
-- it (legal_text.v1.sql, where it stands beside the snowball question lexemes). This file
-- holds it alone, so that the downgrade of migration 20261210_0061 puts back only it.
--   "art. 56 EOV", "artikel 56 EOV", "EOV art. 56"      -> "art56eov eov"
--   "artikel 6:162 lid 1 BW", "6:162 BW", "BW art. 6:162" -> "art6x162bw bw"
--   "ECLI:NL:HR:2019:1278" keeps its parts and gains the token "eclinlhr20191278".

CREATE OR REPLACE FUNCTION ewall_legal_normalize(input text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
    codes  constant text := '(eov|epc|evrm|ehrm|bw|rv|sr|sv|awb|gw|aw|hnw|row|wvw|fw|avg|rijksoctrooiwet|auteurswet|handelsnaamwet|grondwet)';
    artkw  constant text := '(?:artikel(?:en)?|artt?\.?)\s*';
    qual   constant text :=
        '(?:\s*,?\s*(?:lid|leden)\s+\d+(?:\s*(?:en|,)\s*\d+)*)?'
        '(?:\s*,?\s*(?:sub|onder)\s+[a-z0-9]{1,3}\M)?';
    van    constant text := '\s*,?\s*(?:van\s+(?:het|de)\s+)?';
    result text := input;
BEGIN
    -- book:article forms first ("6:162"), so the plain article form cannot eat them
    result := regexp_replace(result,
        '\m' || artkw || '(\d+):(\d+[a-z]?)' || qual || van || codes || '\M',
        ' art\1x\2\3 \3 ', 'gi');
    result := regexp_replace(result,
        '\m' || codes || '\s*,?\s*' || artkw || '(\d+):(\d+[a-z]?)\M' || qual,
        ' art\2x\3\1 \1 ', 'gi');
    result := regexp_replace(result,
        '(?:^|(?<=[\s(]))(\d+):(\d+[a-z]?)\s+(bw)\M',
        ' art\1x\2\3 \3 ', 'gi');
    result := regexp_replace(result,
        '\m' || artkw || '(\d+[a-z]?)\M' || qual || van || codes || '\M',
        ' art\1\2 \2 ', 'gi');
    result := regexp_replace(result,
        '\m' || codes || '\s*,?\s*' || artkw || '(\d+[a-z]?)\M' || qual,
        ' art\2\1 \1 ', 'gi');
    result := regexp_replace(result,
        '\m(ECLI):([A-Z]{2}):([A-Z0-9]{1,7}):(\d{4}):([A-Z0-9.]{1,25}[A-Z0-9])',
        '\1:\2:\3:\4:\5 \1\2\3\4\5 ', 'gi');
    RETURN result;
END
$fn$;
