"""Rechtspraak open-data records: the real corpus, the malformed files, the status markers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.caselaw.parse import (
    Relation,
    assess,
    extract_rechtspraak,
    liveness,
    parse_rechtspraak,
)
from app.caselaw.xmlbytes import MAX_REPAIRED_BYTES
from app.ingest.types import ExtractionError
from tests.fakes.rechtspraak import manifest, rechtspraak_dir

CORPUS = rechtspraak_dir()
MANIFEST = manifest() if (CORPUS / "manifest.tsv").exists() else []
MALFORMED = sorted((CORPUS / "malformed").glob("*.xml")) if CORPUS.exists() else []


pytestmark = pytest.mark.usefixtures("shared_corpus")


def read(name: str) -> bytes:
    return (CORPUS / "xml" / name).read_bytes()


def minimal(description_extra: str = "", body: str = "", root_attrs: str = "") -> bytes:
    """A small record in the real shape; ``description_extra`` goes into rdf:Description."""
    return f"""<?xml version="1.0" encoding="utf-8"?>
<open-rechtspraak{root_attrs}>
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
      xmlns:dcterms="http://purl.org/dc/terms/" xmlns:psi="http://psi.rechtspraak.nl/"
      xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#"
      xmlns:ecli="https://e-justice.europa.eu/ecli">
    <rdf:Description>
      <dcterms:identifier>ECLI:NL:HR:2019:1278</dcterms:identifier>
      <dcterms:creator rdfs:label="Instantie">Hoge Raad</dcterms:creator>
      <dcterms:date rdfs:label="Uitspraakdatum">2019-09-06</dcterms:date>
      {description_extra}
    </rdf:Description>
  </rdf:RDF>
  {body}
</open-rechtspraak>""".encode()


# --- the 160 clean records ----------------------------------------------------------------


def _relations(relations: list[Relation]) -> str:
    """The manifest's form: target|type|aanleg|gevolg, joined by " ; "."""
    return " ; ".join(f"{r.target}|{r.type}|{r.aanleg}|{r.gevolg or ''}" for r in relations)


def test_every_clean_record_matches_the_manifest() -> None:
    assert len(MANIFEST) == 160
    problems: list[str] = []
    for row in MANIFEST:
        rec = parse_rechtspraak((CORPUS / row["file"]).read_bytes())
        expected = {
            "ecli": row["ecli"],
            "court": row["instantie"],
            "decision_date": row["uitspraakdatum"],
            "publication_date": row["publicatiedatum"],
            "type": row["type"],
            "procedure": row["procedure"],
            "areas": row["rechtsgebied"],
            "zaaknummer": row["zaaknummer"],
            "relations": row["relations"],
            "replaces": row["replaces"],
            "is_replaced_by": row["isReplacedBy"],
            "body_kind": row["body_element"],
            "has_inhoudsindicatie": row["has_inhoudsindicatie"] == "1",
            "has_body": int(row["body_chars"]) > 0,
        }
        got = {
            "ecli": rec.ecli,
            "court": rec.court or "",
            "decision_date": rec.decision_date.isoformat() if rec.decision_date else "",
            "publication_date": rec.publication_date.isoformat() if rec.publication_date else "",
            "type": rec.type or "",
            "procedure": ";".join(rec.procedures),
            "areas": ";".join(rec.areas_of_law),
            "zaaknummer": ";".join(rec.zaaknummers),
            "relations": _relations(list(rec.relations)),
            "replaces": ";".join(rec.replaces),
            "is_replaced_by": rec.is_replaced_by or "",
            "body_kind": rec.body_kind or "",
            "has_inhoudsindicatie": bool(rec.inhoudsindicatie),
            "has_body": bool(rec.body_text.strip()),
        }
        for key, value in expected.items():
            if got[key] != value:
                problems.append(f"{row['file']}: {key}: expected {value!r}, got {got[key]!r}")
        if rec.warnings:
            problems.append(f"{row['file']}: unexpected recovery {rec.warnings}")
    assert not problems, "\n".join(problems[:30])


def test_metadata_only_voided_record_is_recognised() -> None:
    rec = parse_rechtspraak(read("is_replaced_by.xml"))
    assert rec.ecli == "ECLI:NL:RBAMS:2007:YB0083"
    assert rec.is_replaced_by == "ECLI:NL:TGDKG:2007:1"
    assert rec.body_kind is None
    assert rec.sections == []
    assert rec.inhoudsindicatie == ""
    assert liveness(rec) == (False, "vervangen door ECLI:NL:TGDKG:2007:1", "ECLI:NL:TGDKG:2007:1")
    doc = extract_rechtspraak(read("is_replaced_by.xml"))
    assert doc.text == ""
    assert not doc.has_text
    assert any("metadata only" in w for w in doc.warnings)
    assert doc.metadata["liveness"]["code"] == "replaced"


def test_set_aside_by_a_later_instance() -> None:
    rec = parse_rechtspraak(read("ECLI_NL_RBAMS_2012_BZ5426.xml"))
    assert rec.set_aside
    assert rec.set_aside_by == "ECLI:NL:HR:2013:477"
    assert liveness(rec) == (False, "vernietigd door ECLI:NL:HR:2013:477", "ECLI:NL:HR:2013:477")
    rel = rec.relations[0]
    assert rel.type == "sprongcassatie"
    assert rel.aanleg == "latereAanleg"
    assert rel.gevolg == "(Gedeeltelijke) vernietiging en zelf afgedaan"


def test_setting_aside_an_earlier_decision_does_not_kill_this_one() -> None:
    # BO3979 (verzet) set aside the EARLIER BI4396; BO3979 itself is good law
    rec = parse_rechtspraak(read("ECLI_NL_RBAMS_2010_BO3979.xml"))
    assert rec.relations[0].gevolg
    assert "vernietiging" in rec.relations[0].gevolg
    assert rec.relations[0].aanleg == "eerdereAanleg"
    assert not rec.set_aside
    assert rec.set_aside_by is None
    assert liveness(rec) == (True, "live", None)


def test_vervallenverklaring() -> None:
    rec = parse_rechtspraak(read("ECLI_NL_CRVB_2012_BY5954.xml"))
    assert rec.vervallen
    assert rec.vervallen_by == "ECLI:NL:CRVB:2014:1663"
    live, reason, by = liveness(rec)
    assert not live
    assert reason.startswith("vervallen verklaard")
    assert by == "ECLI:NL:CRVB:2014:1663"
    assert assess(rec).code == "vervallen"


def test_plain_cassation_relation_without_outcome_is_live() -> None:
    rec = parse_rechtspraak(read("ECLI.NL.GHAMS.2013.2283.xml"))
    assert [r.type for r in rec.relations] == ["hogerBeroep", "cassatie"]
    assert liveness(rec) == (True, "live", None)


# --- sections and the ingest extractor ---------------------------------------------------------


def test_sections_from_section_elements() -> None:
    doc = extract_rechtspraak(read("ECLI_NL_RBAMS_2012_BZ5426.xml"))
    paths = [s.path for s in doc.sections]
    assert paths[0] == "inhoudsindicatie"
    assert "uitspraak / Procesverloop" in paths
    assert "uitspraak / Geschil en beoordeling" in paths
    assert doc.title == "ECLI:NL:RBAMS:2012:BZ5426 (Rechtbank Amsterdam, 2012-06-07)"
    assert doc.mime_type == "application/xml"
    assert doc.sections[0].text in doc.text
    assert all(s.text for s in doc.sections)
    json.dumps(doc.metadata)  # JSON-able
    assert doc.metadata["ecli"] == "ECLI:NL:RBAMS:2012:BZ5426"
    assert doc.metadata["markers"]["set_aside_by"] == "ECLI:NL:HR:2013:477"


def test_paragraph_fallback_numbers_sections() -> None:
    # an old Hoge Raad judgment without <section>: numbered paragraphs open sections
    doc = extract_rechtspraak(read("ECLI.NL.HR.1995.AA1532.xml"))
    paths = [s.path for s in doc.sections]
    assert paths[:2] == ["inhoudsindicatie", "uitspraak"]
    assert {"uitspraak / 1", "uitspraak / 2", "uitspraak / 3"} <= set(paths)
    three = next(s for s in doc.sections if s.path == "uitspraak / 3")
    assert three.text.startswith("3. Beoordeling van de middelen")
    # sub-numbers (3.1.1.) stay inside section 3
    assert "3.1.1. Belanghebbende" in three.text


def test_conclusie_paragroup_headings() -> None:
    doc = extract_rechtspraak(read("ECLI.NL.PHR.1995.AA1554.xml"))
    assert doc.metadata["body_kind"] == "conclusie"
    assert "conclusie / 1. De feiten en het geding" in [s.path for s in doc.sections]


def test_linebreaks_and_numbers_do_not_glue_words() -> None:
    rec = parse_rechtspraak(read("ECLI.NL.CBB.2013.345.xml"))
    text = rec.body_text
    assert "[naam 2]. Verweerder" in text  # <?linebreak?> between them
    assert "1. Appellante heeft op respectievelijk" in text  # <nr>1.</nr> + para


# --- the 25 malformed files ----------------------------------------------------------------


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.name)
def test_malformed_file_recovers_or_fails_cleanly(path: Path) -> None:
    try:
        rec = parse_rechtspraak(path.read_bytes())
    except ExtractionError as exc:
        failure: str | None = exc.reason
    else:
        failure = None
    if failure is not None:
        assert failure.strip(), "a clean error names its reason"
        return
    stem = path.name.removesuffix(".xml").replace("_", ".").split(".")
    assert rec.ecli == f"ECLI:{stem[1]}:{stem[2]}:{stem[3]}:{stem[4]}"
    assert rec.body_text.strip(), "body not read"
    assert rec.warnings, "a recovery was needed, and must be reported"
    assert "\ufffd" not in rec.body_text
    assert "\udc80" not in rec.body_text


def test_all_malformed_files_are_handled() -> None:
    assert len(MALFORMED) == 25
    recovered = 0
    for path in MALFORMED:
        try:
            parse_rechtspraak(path.read_bytes())
            recovered += 1
        except ExtractionError:
            pass
    # every one of them can be read back today; this guards against a regression
    assert recovered == 25


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ECLI.NL.CBB.1998.AA3430.xml", "financiële"),  # cp1252 ë
        ("ECLI.NL.CBB.1998.AA3411.xml", "vóór 31 december"),  # cp437 ó
        ("ECLI.NL.CBB.1998.AA3411.xml", "één maand"),  # cp437 é
        ("ECLI.NL.CBB.2000.AA9117.xml", "ministeriële regeling"),  # cp437 ë
        ("ECLI.NL.CBB.2000.AA9117.xml", "continuïteit"),  # cp437 ï
        ("ECLI.NL.CBB.2000.AA9277.xml", "zoönosen"),  # cp437 ö between letters
        ("ECLI.NL.CBB.2000.AA7124.xml", "zo’n overeenkomst"),  # cp1252 ’ between letters
        ("ECLI.NL.CBB.2000.AA6439.xml", "“Proces-verbaal”"),  # cp1252 quotes
        ("ECLI.NL.GHSHE.2014.1641.xml", "€ 1.545,82"),  # cp1252 €
        ("ECLI.NL.CBB.2000.AU1244.xml", "ƒ 210,--"),  # cp1252 guilder sign
        ("ECLI.NL.CBB.2000.AA9102.xml", "ƒ 395.634"),  # cp437 guilder sign
    ],
)
def test_legacy_bytes_are_decoded_per_byte(name: str, expected: str) -> None:
    rec = parse_rechtspraak((CORPUS / "malformed" / name).read_bytes())
    assert expected in " ".join(rec.body_text.split())
    assert any("not" in w and "UTF-8" in w for w in rec.warnings)


def test_a_body_of_stray_bytes_is_refused_not_repaired_for_minutes() -> None:
    """Each stray byte costs a Python call to repair: a source answering megabytes of them
    held the citation gate's parser for over a minute. Past MAX_REPAIRED_BYTES the record is
    unreadable (a report entry, or "unverifiable" at the gate); just under, it is repaired."""
    under = minimal(body="<uitspraak><para>" + "x" * 10 + "</para></uitspraak>").replace(
        b"x" * 10, b"caf\xe9 " * MAX_REPAIRED_BYTES
    )
    assert "café" in parse_rechtspraak(under).body_text
    over = under.replace(b"caf\xe9 ", b"caf\xe9\xe9 ", 1000)
    with pytest.raises(ExtractionError, match="bytes that are not"):
        parse_rechtspraak(over)


def test_newline_before_declaration_is_reported() -> None:
    rec = parse_rechtspraak((CORPUS / "malformed" / "ECLI_NL_RBMNE_2016_1780.xml").read_bytes())
    assert rec.ecli == "ECLI:NL:RBMNE:2016:1780"
    assert rec.warnings == ["removed 1 byte(s) of whitespace before the XML declaration"]


# --- input that is not a record -------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   \n",
        b"\x00\xffnot <xml at all",
        b"<html><body>Service unavailable</body></html>",
        b"<?xml version='1.0'?><open-rechtspraak></open-rechtspraak>",
        minimal().replace(b"ECLI:NL:HR:2019:1278", b"ECLI:NL:HR:19:1"),
        minimal().replace(b"ECLI:NL:HR:2019:1278", b""),
        b"Not XML, just a sentence.",
    ],
)
def test_unreadable_input_raises_extraction_error(data: bytes) -> None:
    with pytest.raises(ExtractionError) as info:
        parse_rechtspraak(data)
    assert info.value.reason


def test_truncated_record_is_recovered_but_never_trusted_as_live() -> None:
    data = read("ECLI.NL.HR.1995.AA1532.xml")
    rec = parse_rechtspraak(data[: len(data) // 2])
    assert rec.ecli == "ECLI:NL:HR:1995:AA1532"
    assert rec.recovered_leniently
    live, reason, _ = liveness(rec)
    assert not live
    assert reason.startswith("unverifiable")


def test_external_entities_are_not_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    data = (
        f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file://{secret}">]>'
    ).encode() + minimal(body="<uitspraak><para>&xxe;</para></uitspraak>").split(b"?>", 1)[1]
    try:
        rec = parse_rechtspraak(data)
    except ExtractionError:
        return
    assert "TOP-SECRET" not in rec.body_text


# --- tri-state markers ---------------------------------------------------------------------------


def test_absent_markers() -> None:
    rec = parse_rechtspraak(minimal())
    assert rec.is_replaced_by is None
    assert rec.withdrawal_marker is None
    assert rec.withdrawn is None
    assert rec.marker_errors == {}
    assert liveness(rec) == (True, "live", None)


def test_empty_is_replaced_by_is_not_read_as_not_replaced() -> None:
    for element in ("<dcterms:isReplacedBy/>", "<dcterms:isReplacedBy>  </dcterms:isReplacedBy>"):
        rec = parse_rechtspraak(minimal(element))
        assert rec.is_replaced_by == ""
        assert not rec.replaced
        live, reason, by = liveness(rec)
        assert live is False
        assert by is None
        assert reason == "unverifiable: empty isReplacedBy marker"


def test_replaced_marker_value() -> None:
    rec = parse_rechtspraak(
        minimal("<dcterms:isReplacedBy>ECLI:NL:HR:2019:2000</dcterms:isReplacedBy>")
    )
    assert liveness(rec) == (False, "vervangen door ECLI:NL:HR:2019:2000", "ECLI:NL:HR:2019:2000")


@pytest.mark.parametrize(
    ("extra", "root_attrs", "withdrawn", "reason_start"),
    [
        ('<psi:ingetrokken rdfs:label="Ingetrokken">ja</psi:ingetrokken>', "", True, "ingetrokken"),
        ("<psi:ingetrokken>2020-01-31</psi:ingetrokken>", "", True, "ingetrokken"),
        ("<psi:withdrawn>true</psi:withdrawn>", "", True, "ingetrokken"),
        ('<psi:status rdfs:label="Ingetrokken">ingetrokken</psi:status>', "", True, "ingetrokken"),
        ("", ' status="ingetrokken"', True, "ingetrokken"),
        (
            '<dcterms:identifier psi:ingetrokken="true">x</dcterms:identifier>',
            "",
            True,
            "ingetrokken",
        ),
        ("<psi:ingetrokken>nee</psi:ingetrokken>", "", False, "live"),
        ("<psi:ingetrokken>false</psi:ingetrokken>", "", False, "live"),
        ("<psi:ingetrokken/>", "", None, "unverifiable: empty withdrawal marker"),
        (
            '<psi:ingetrokken rdfs:label="x">   </psi:ingetrokken>',
            "",
            None,
            "unverifiable: empty withdrawal marker",
        ),
        (
            "<psi:ingetrokken>misschien</psi:ingetrokken>",
            "",
            None,
            "unverifiable: unreadable withdrawal marker",
        ),
    ],
)
def test_withdrawal_markers_are_read_tolerantly(
    extra: str, root_attrs: str, withdrawn: bool | None, reason_start: str
) -> None:
    rec = parse_rechtspraak(minimal(extra, root_attrs=root_attrs))
    assert rec.ecli == "ECLI:NL:HR:2019:1278"
    assert rec.withdrawal_marker is not None
    assert rec.withdrawn is withdrawn
    live, reason, _ = liveness(rec)
    assert live is (reason == "live")
    assert reason.startswith(reason_start), reason


@pytest.mark.parametrize(
    "extra",
    [
        # a second marker is read too: "ja" after "nee" (the first one used to win)
        "<psi:ingetrokken>nee</psi:ingetrokken><psi:ingetrokken>ja</psi:ingetrokken>",
        # a status element whose text says it, under a neutral label
        "<psi:status>ingetrokken</psi:status>",
        # a marker in a second description
        "</rdf:Description><rdf:Description><psi:ingetrokken>ja</psi:ingetrokken>",
    ],
)
def test_a_withdrawal_anywhere_in_the_record_is_read(extra: str) -> None:
    rec = parse_rechtspraak(minimal(extra))
    assert rec.withdrawn is True, rec.withdrawal_marker
    assert liveness(rec)[0] is False


def test_a_replacement_in_a_second_description_replaces() -> None:
    rec = parse_rechtspraak(
        minimal(
            "</rdf:Description><rdf:Description>"
            "<dcterms:isReplacedBy>ECLI:NL:HR:2019:2000</dcterms:isReplacedBy>"
        )
    )
    assert liveness(rec) == (False, "vervangen door ECLI:NL:HR:2019:2000", "ECLI:NL:HR:2019:2000")


def test_definite_reason_wins_over_an_unreadable_marker() -> None:
    rec = parse_rechtspraak(
        minimal(
            "<psi:ingetrokken/><dcterms:isReplacedBy>ECLI:NL:HR:2019:2000</dcterms:isReplacedBy>"
        )
    )
    assert rec.marker_errors
    assert liveness(rec)[1] == "vervangen door ECLI:NL:HR:2019:2000"


def test_empty_gevolg_on_a_later_instance_is_unverifiable() -> None:
    rel = (
        '<dcterms:relation ecli:resourceIdentifier="ECLI:NL:HR:2020:1" '
        'psi:type="http://psi.rechtspraak.nl/cassatie" '
        'psi:aanleg="http://psi.rechtspraak.nl/latereAanleg" '
        'psi:gevolg="http://psi.rechtspraak.nl/gevolg#">Cassatie</dcterms:relation>'
    )
    rec = parse_rechtspraak(minimal(rel))
    assert rec.relations[0].gevolg == ""
    live, reason, _ = liveness(rec)
    assert not live
    assert reason.startswith("unverifiable: empty gevolg marker")


def test_relation_target_falls_back_to_the_text() -> None:
    rel = (
        '<dcterms:relation psi:type="http://psi.rechtspraak.nl/vervallenverklaring" '
        'psi:aanleg="http://psi.rechtspraak.nl/latereAanleg">'
        "Vervallenverklaard door: ECLI:NL:CRVB:2014:1663</dcterms:relation>"
    )
    rec = parse_rechtspraak(minimal(rel))
    assert rec.vervallen_by == "ECLI:NL:CRVB:2014:1663"


def test_mutated_records_never_raise_anything_but_extraction_error() -> None:
    # deterministic byte-level damage to real records: truncation, flipped bytes, junk
    import random

    rng = random.Random(20240601)
    sources = [CORPUS / row["file"] for row in MANIFEST[::16]] + MALFORMED[::5]
    for path in sources:
        data = path.read_bytes()
        for _ in range(25):
            damaged = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                pos = rng.randrange(len(damaged))
                damaged[pos] = rng.randrange(256)
            if rng.random() < 0.3:
                damaged = damaged[: rng.randrange(len(damaged))]
            try:
                rec = parse_rechtspraak(bytes(damaged))
            except ExtractionError:
                continue
            assert rec.ecli.startswith("ECLI:")
            assert isinstance(liveness(rec)[0], bool)
