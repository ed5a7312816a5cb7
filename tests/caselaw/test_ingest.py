"""Case-law ingestion through the real pipeline, database and embedding model.

One module-scoped run over a subset of the real corpus (embedding all 160 records is slow on
small machines) serves the report, metadata, idempotence and search tests; the state
machine tests use one or two small records each, with their XML bytes edited in tmp copies.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from app.caselaw.ingest import ingest_rechtspraak_folder
from app.ingest.pipeline import IngestPipeline
from app.settings import Settings
from tests.conftest import DbHandle, Tokens, make_client
from tests.fakes.rechtspraak import manifest, rechtspraak_dir
from tests.helpers import Firm, ok, superuser_rows

CORPUS = rechtspraak_dir()
MANIFEST = {row["ecli"]: row for row in manifest()} if (CORPUS / "manifest.tsv").exists() else {}


pytestmark = pytest.mark.usefixtures("shared_corpus")


VOIDED = "ECLI:NL:RBAMS:2007:YB0083"  # isReplacedBy, metadata only
VOIDED_BY = "ECLI:NL:TGDKG:2007:1"
SET_ASIDE = "ECLI:NL:RBAMS:2012:BZ5426"  # set aside by HR:2013:477
LAPSED = "ECLI:NL:CRVB:2012:BY5954"  # vervallenverklaring by CRVB:2014:1663
META_ONLY_ACTIVE = "ECLI:NL:GHAMS:2007:AZ8310"
PARKING = "ECLI:NL:HR:1997:AA3187"  # small, live: "parkeerbelasting ... Purmerend"
SMALL = "ECLI:NL:HR:1997:AA2094"
SMALL_2 = "ECLI:NL:HR:1995:AA3071"
DUPLICATED = "ECLI:NL:HR:1992:AA1835"

SUBSET = [
    VOIDED,
    SET_ASIDE,
    LAPSED,
    META_ONLY_ACTIVE,
    PARKING,
    SMALL,
    SMALL_2,
    DUPLICATED,
    "ECLI:NL:HR:1997:AE3163",
    "ECLI:NL:HR:1996:AA2031",
    "ECLI:NL:CRVB:2014:3494",
    "ECLI:NL:CRVB:2014:356",
    "ECLI:NL:HR:1994:AA3004",
    "ECLI:NL:HR:1996:AA1992",
]
ADMIN: tuple[str, ...] = ("admin@firm.nl", "admin")
LAWYER = "lawyer@firm.nl"


# --- helpers ------------------------------------------------------------------------------


def corpus_file(ecli: str) -> Path:
    return CORPUS / MANIFEST[ecli]["file"]


def copy_records(folder: Path, eclis: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for ecli in eclis:
        shutil.copy(corpus_file(ecli), folder / corpus_file(ecli).name)
    return folder


def write_record(folder: Path, ecli: str, data: bytes) -> Path:
    """One record in ``folder`` (replacing what was there), under a fixed name."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.xml"):
        old.unlink()
    path = folder / (ecli.replace(":", "_") + ".xml")
    path.write_bytes(data)
    return path


def with_marker(data: bytes, marker: bytes) -> bytes:
    """``marker`` added to the record's rdf:Description (its namespaces are declared there)."""
    assert b"</rdf:Description>" in data
    return data.replace(b"</rdf:Description>", marker + b"</rdf:Description>", 1)


WITHDRAWN_MARKER = b'<psi:ingetrokken rdfs:label="Ingetrokken">ja</psi:ingetrokken>'
EMPTY_REPLACED = b"<dcterms:isReplacedBy/>"


def case_row(handle: DbHandle, ecli: str) -> dict[str, Any] | None:
    with handle.database.transaction() as conn:
        row = conn.execute(text("SELECT * FROM case_law WHERE ecli = :e"), {"e": ecli}).mappings()
        first = row.first()
        return dict(first) if first is not None else None


def document_row(handle: DbHandle, ecli: str) -> dict[str, Any] | None:
    with handle.database.transaction() as conn:
        conn.execute(text("SET LOCAL ROLE ewall_writer"))
        row = (
            conn.execute(
                text(
                    "SELECT d.*, (SELECT count(*) FROM chunks c WHERE c.document_id = d.document_id)"
                    " AS n_chunks, (SELECT count(*) FROM chunks c WHERE c.document_id ="
                    " d.document_id AND c.suppressed) AS n_suppressed, (SELECT array_agg(DISTINCT"
                    " c.wall_group_id) FROM chunks c WHERE c.document_id = d.document_id) AS groups"
                    " FROM documents d WHERE source = 'rechtspraak' AND external_id = :e"
                ),
                {"e": ecli},
            )
            .mappings()
            .first()
        )
        return dict(row) if row is not None else None


def entries(report: dict[str, Any], section: str, ecli: str) -> list[dict[str, Any]]:
    bucket = report["caselaw"][section] if section in report["caselaw"] else report[section]
    return [e for e in bucket if e.get("external_id") == ecli or e.get("ecli") == ecli]


def include_caselaw(app: FastAPI) -> None:
    """Until app/api.py includes the case-law router, tests include it themselves."""
    if not any(getattr(r, "path", "").startswith("/v1/caselaw") for r in app.routes):
        from app.caselaw.router import router

        app.include_router(router)


def found(firm: Firm, query: str) -> set[str]:
    results = firm.search(LAWYER, query, k=20, filters={"sources": ["rechtspraak"]})["results"]
    return {r["document"]["external_id"] for r in results}


@pytest.fixture
def pipeline(db: DbHandle, settings: Settings, embedder: Any) -> IngestPipeline:
    return IngestPipeline(db.database, embedder, settings)


@pytest.fixture
def api(db: DbHandle, settings: Settings, embedder: Any, auth: Tokens) -> Iterator[Firm]:
    with make_client(db, settings, embedder) as client:
        include_caselaw(client.app)  # type: ignore[arg-type]
        firm = Firm(client, auth)
        firm.person(LAWYER)
        yield firm


# --- one run over a subset of the corpus --------------------------------------------------


class SubsetRun:
    def __init__(
        self,
        folder: Path,
        first: dict[str, Any],
        second: dict[str, Any],
        encodes: tuple[int, int, int],
        before: dict[str, Any],
        after: dict[str, Any],
    ) -> None:
        self.folder = folder
        self.first = first
        self.second = second
        self.encodes = encodes  # before the first run, after it, after the re-ingest
        self.updated_before = before
        self.updated_after = after


@pytest.fixture(scope="module")
def subset(
    module_db: DbHandle, settings: Settings, embedder: Any, tmp_path_factory: pytest.TempPathFactory
) -> SubsetRun:
    folder = copy_records(tmp_path_factory.mktemp("rechtspraak"), SUBSET)
    # the same record under a second name, in a sub-folder: a duplicate the report lists
    (folder / "copies").mkdir()
    shutil.copy(corpus_file(DUPLICATED), folder / "copies" / "AA1835-copy.xml")
    pipeline = IngestPipeline(module_db.database, embedder, settings)
    progress: list[tuple[int, int | None]] = []
    e0 = embedder.encode_calls
    first = ingest_rechtspraak_folder(
        pipeline, folder, started_by="test", on_progress=lambda d, t: progress.append((d, t))
    )
    assert progress[-1] == (len(SUBSET) + 1, len(SUBSET) + 1)
    e1 = embedder.encode_calls
    with module_db.database.transaction() as conn:
        before: dict[str, Any] = {
            r.ecli: r.updated_at
            for r in conn.execute(text("SELECT ecli, updated_at FROM case_law"))
        }
    second = ingest_rechtspraak_folder(pipeline, folder, started_by="test")
    with module_db.database.transaction() as conn:
        after: dict[str, Any] = {
            r.ecli: r.updated_at
            for r in conn.execute(text("SELECT ecli, updated_at FROM case_law"))
        }
    return SubsetRun(folder, first, second, (e0, e1, embedder.encode_calls), before, after)


def test_subset_report_counts_states_and_lists_entries(subset: SubsetRun) -> None:
    report = subset.first
    assert report["status"] == "succeeded", report["errors"]
    assert report["connector"] == "rechtspraak"
    counts, caselaw = report["counts"], report["caselaw"]["counts"]
    assert counts["seen"] == len(SUBSET) + 1
    assert counts["errors"] == 0
    # two metadata-only records have no document; the duplicate is ingested once
    assert counts["added"] == len(SUBSET) - 2
    assert caselaw["new"] == len(SUBSET)
    assert caselaw["voided"] == 2 and caselaw["set_aside"] == 1
    assert caselaw["metadata_only"] == 2 and caselaw["duplicates"] == 1
    assert caselaw["held"] == 0 and caselaw["held_pending"] == 0

    changes = {e["external_id"]: e["details"]["to"] for e in report["caselaw"]["state_changes"]}
    assert changes == {VOIDED: "voided", LAPSED: "voided", SET_ASIDE: "set_aside"}
    assert {e["external_id"] for e in report["caselaw"]["metadata_only"]} == {
        VOIDED,
        META_ONLY_ACTIVE,
    }
    dup = entries(report, "duplicates", DUPLICATED)
    assert len(dup) == 1 and dup[0]["details"]["file"] == "copies/AA1835-copy.xml"


def test_metadata_only_voided_record_keeps_its_state(
    subset: SubsetRun, module_db: DbHandle
) -> None:
    row = case_row(module_db, VOIDED)
    assert row is not None
    assert row["state"] == "voided" and row["replaced_by"] == VOIDED_BY
    assert row["court"] == "Rechtbank Amsterdam"
    assert row["decision_date"].date().isoformat() == "2007-01-16"
    assert document_row(module_db, VOIDED) is None  # no text, no chunks: but not dropped

    active = case_row(module_db, META_ONLY_ACTIVE)
    assert active is not None and active["state"] == "active"


def test_case_law_rows_and_document_metadata(subset: SubsetRun, module_db: DbHandle) -> None:
    row = case_row(module_db, SET_ASIDE)
    assert row is not None
    assert row["state"] == "set_aside" and row["set_aside_by"] == "ECLI:NL:HR:2013:477"
    assert row["court"] == "Rechtbank Amsterdam" and row["area_of_law"] == "Bestuursrecht"
    assert row["procedure"] == "Eerste aanleg - meervoudig"
    assert any(r["target"] == "ECLI:NL:HR:2013:477" for r in row["relations"])

    lapsed = case_row(module_db, LAPSED)
    assert lapsed is not None and lapsed["state"] == "voided" and lapsed["replaced_by"] is None

    doc = document_row(module_db, SET_ASIDE)
    assert doc is not None
    assert doc["search_state"] == "withdrawn" and doc["groups"] == ["open"]
    assert doc["client_id"] is None and doc["doc_type"] == "case_law"
    assert doc["n_chunks"] > 0 and doc["n_suppressed"] == doc["n_chunks"]
    meta = doc["metadata"]
    assert meta["court"] == "Rechtbank Amsterdam" and meta["decision_date"] == "2012-06-07"
    assert meta["area_of_law"] == "Bestuursrecht"
    assert meta["procedure"] == "Eerste aanleg - meervoudig"
    assert meta["relations"][0]["target"] == "ECLI:NL:HR:2013:477"

    live = document_row(module_db, PARKING)
    assert live is not None and live["search_state"] == "active" and live["n_suppressed"] == 0
    assert live["modified_at"].date().isoformat() == "1997-01-08"


def test_reingest_is_idempotent(subset: SubsetRun) -> None:
    before, after_first, after_second = subset.encodes
    assert after_first > before
    assert after_second == after_first  # nothing re-embedded
    counts = subset.second["counts"]
    assert counts["added"] == 0 and counts["updated"] == 0 and counts["errors"] == 0
    assert counts["unchanged"] == len(SUBSET) - 2 + 1  # 12 texts, one of them twice
    caselaw = subset.second["caselaw"]["counts"]
    assert caselaw["unchanged"] == len(SUBSET) + 1 and caselaw["state_changes"] == 0
    assert subset.updated_after == subset.updated_before  # case_law rows untouched


def test_set_aside_decision_is_not_searchable_but_a_live_one_is(
    subset: SubsetRun, module_db: DbHandle, settings: Settings, embedder: Any, auth: Tokens
) -> None:
    # the query does match the set-aside decision's stored text: only its state hides it
    with module_db.database.transaction() as conn:
        conn.execute(text("SET LOCAL ROLE ewall_writer"))
        matching = conn.execute(
            text(
                "SELECT count(*) FROM chunks WHERE external_id = :e AND body ILIKE"
                " '%objectafbakening%'"
            ),
            {"e": SET_ASIDE},
        ).scalar_one()
    assert matching > 0
    with make_client(module_db, settings, embedder) as client:
        firm = Firm(client, auth)
        firm.person(LAWYER)
        assert PARKING in found(firm, "parkeerbelasting Purmerend naheffingsaanslag")
        assert SET_ASIDE not in found(firm, "objectafbakening complextheorie wegingsfactor")
        assert LAPSED not in found(firm, "terugvordering uitkering appellante")
        # admins see why
        include_caselaw(client.app)  # type: ignore[arg-type]
        state = ok(client.get(f"/v1/caselaw/{SET_ASIDE}", headers=auth(*ADMIN)))
        assert state["state"] == "set_aside" and state["searchable"] is False
        assert state["document"]["searchable_chunks"] == 0


# --- the state machine through ingestion ----------------------------------------------------


def test_withdrawn_then_active_is_held_until_confirmed(
    pipeline: IngestPipeline, api: Firm, embedder: Any, auth: Tokens, tmp_path: Path
) -> None:
    original = corpus_file(PARKING).read_bytes()
    query = "parkeerbelasting Purmerend naheffingsaanslag"

    write_record(tmp_path, PARKING, with_marker(original, WITHDRAWN_MARKER))
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    assert report["caselaw"]["counts"]["withdrawn"] == 1
    assert entries(report, "state_changes", PARKING)[0]["details"]["to"] == "withdrawn"
    assert PARKING not in found(api, query)
    encodes = embedder.encode_calls

    # the source drops the withdrawal: held, listed, still not searchable
    write_record(tmp_path, PARKING, original)
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    assert embedder.encode_calls == encodes  # same text: no re-embedding
    change = entries(report, "state_changes", PARKING)[0]["details"]
    assert (change["from"], change["to"]) == ("withdrawn", "held")
    held = entries(report, "held", PARKING)
    assert len(held) == 1 and "confirm" in held[0]["reason"]
    assert PARKING not in found(api, query)
    admin = auth(*ADMIN)
    state = ok(api.client.get(f"/v1/caselaw/{PARKING}", headers=admin))
    assert state["state"] == "held" and state["search_state"] == "held"
    listed = ok(api.client.get("/v1/caselaw", params={"state": "held"}, headers=admin))
    assert [c["ecli"] for c in listed["cases"]] == [PARKING]

    # a later run keeps it held and keeps listing it
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    assert entries(report, "held", PARKING)
    assert report["caselaw"]["counts"]["held_pending"] == 1

    # only an admin confirms; then it is searchable again
    assert (
        api.client.post(
            f"/v1/caselaw/{PARKING}/confirm", headers=auth(LAWYER, "lawyer")
        ).status_code
        == 403
    )
    confirmed = ok(api.client.post(f"/v1/caselaw/{PARKING}/confirm", headers=admin))
    assert confirmed["state"] == "active" and confirmed["searchable"] is True
    assert confirmed["document"]["searchable_chunks"] == confirmed["document"]["chunks"] > 0
    assert PARKING in found(api, query)
    again = api.client.post(f"/v1/caselaw/{PARKING}/confirm", headers=admin)
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_held"
    assert api.client.get("/v1/caselaw/ECLI:NL:HR:2099:1", headers=admin).status_code == 404
    assert api.client.get("/v1/caselaw/not-an-ecli", headers=admin).status_code == 422

    # the confirmation is in the hash-chained policy log
    with pipeline.database.transaction() as conn:
        actions = conn.execute(
            text("SELECT actor, object_id FROM policy_events WHERE action = 'caselaw.confirm'")
        ).all()
    assert [tuple(a) for a in actions] == [("admin@firm.nl", PARKING)]

    # after confirmation an unchanged record stays active
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    assert not entries(report, "held", PARKING)
    assert report["caselaw"]["counts"]["active"] == 1


def test_empty_marker_never_overwrites_a_known_state(
    pipeline: IngestPipeline, db: DbHandle, tmp_path: Path
) -> None:
    voided = corpus_file(VOIDED).read_bytes()
    write_record(tmp_path, VOIDED, voided)
    ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")

    marker = f"<dcterms:isReplacedBy>{VOIDED_BY}</dcterms:isReplacedBy>".encode()
    assert marker in voided
    write_record(tmp_path, VOIDED, voided.replace(marker, EMPTY_REPLACED))
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    errors = entries(report, "parse_errors", VOIDED)
    assert len(errors) == 1 and "empty isReplacedBy" in errors[0]["reason"]
    assert "kept" in errors[0]["reason"] and report["counts"]["parse_errors"] == 1
    row = case_row(db, VOIDED)
    assert row is not None and row["state"] == "voided" and row["replaced_by"] == VOIDED_BY

    # a live record that gains an empty marker stays live (its known value: not replaced)
    small = corpus_file(SMALL).read_bytes()
    write_record(tmp_path, SMALL, small)
    ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    write_record(tmp_path, SMALL, with_marker(small, EMPTY_REPLACED))
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    assert entries(report, "parse_errors", SMALL)
    row = case_row(db, SMALL)
    assert row is not None and row["state"] == "active"
    doc = document_row(db, SMALL)
    assert doc is not None and doc["search_state"] == "active"

    # on first sight there is nothing to keep: held, not searchable
    write_record(tmp_path, SMALL_2, with_marker(corpus_file(SMALL_2).read_bytes(), EMPTY_REPLACED))
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    assert entries(report, "parse_errors", SMALL_2) and entries(report, "held", SMALL_2)
    row = case_row(db, SMALL_2)
    assert row is not None and row["state"] == "held"
    doc = document_row(db, SMALL_2)
    assert doc is not None and doc["search_state"] == "held"
    assert doc["n_suppressed"] == doc["n_chunks"] > 0


def test_a_later_metadata_only_void_hides_the_earlier_text(
    pipeline: IngestPipeline, db: DbHandle, tmp_path: Path
) -> None:
    """A decision ingested with text and later published as a voided metadata-only record
    must not stay searchable through its old chunks."""
    small = corpus_file(SMALL).read_bytes()
    write_record(tmp_path, SMALL, small)
    ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    head, _, _ = small.partition(b"</rdf:RDF>")
    voided = with_marker(
        head + b"</rdf:RDF>\n</open-rechtspraak>\n",
        b"<dcterms:isReplacedBy>ECLI:NL:HR:1997:AA9999</dcterms:isReplacedBy>",
    )
    write_record(tmp_path, SMALL, voided)
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    assert entries(report, "metadata_only", SMALL)
    assert entries(report, "state_changes", SMALL)[0]["details"]["to"] == "voided"
    doc = document_row(db, SMALL)
    assert doc is not None and doc["search_state"] == "withdrawn"
    assert doc["n_suppressed"] == doc["n_chunks"] > 0


# --- a summary published later ----------------------------------------------------------------

SUMMARISED = "ECLI:NL:HR:1992:BA5424"  # its inhoudsindicatie is a real summary (552 characters)


def _vectors(db: DbHandle, ecli: str) -> dict[str, tuple[str, str, str]]:
    """chunk id -> (section path, body, stored vector) of a decision's chunks."""
    rows = superuser_rows(
        db,
        "SELECT chunk_id, section_path, body, CAST(embedding AS text) FROM chunks"
        " WHERE source = 'rechtspraak' AND external_id = %s",
        ecli,
    )
    return {str(r[0]): (str(r[1]), str(r[2]), str(r[3])) for r in rows}


def test_a_summary_published_later_re_encodes_the_decisions_other_chunks(
    pipeline: IngestPipeline, db: DbHandle, embedder: Any, tmp_path: Path
) -> None:
    """Rechtspraak often adds the inhoudsindicatie after publication. Every other chunk is
    encoded after the summary (app/embeddings.py passage_input), so the chunks that stay get
    new vectors when it arrives, not only the summary's own chunk."""
    from app.embeddings import is_summary_section, passage_input

    original = corpus_file(SUMMARISED).read_bytes()
    start, end = original.index(b"<inhoudsindicatie"), original.index(b"</inhoudsindicatie>")
    write_record(tmp_path, SUMMARISED, original[:start] + original[end + 19 :])
    ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    before = _vectors(db, SUMMARISED)
    assert before and not any(is_summary_section(p) for p, _, _ in before.values())

    write_record(tmp_path, SUMMARISED, original)
    ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    after = _vectors(db, SUMMARISED)
    [summary] = [b for p, b, _ in after.values() if is_summary_section(p)]
    kept = sorted(set(before) & set(after))
    assert kept and len(after) == len(kept) + 1  # the same chunks, and the summary's
    [(title,)] = superuser_rows(
        db, "SELECT title FROM documents WHERE external_id = %s", SUMMARISED
    )

    def encoder_input(chunk_id: str, context_summary: str | None) -> str:
        path, body, _ = after[chunk_id]
        limit = embedder.max_passage_tokens
        return passage_input(embedder, limit, body, path, title, context_summary)

    # a chunk at the encoder's limit has no room for any context: its input, and vector, stay
    moved = [c for c in kept if encoder_input(c, summary) != encoder_input(c, None)]
    assert moved
    assert [c for c in kept if after[c][2] != before[c][2]] == moved
    [expected] = embedder.embed_passages([encoder_input(moved[0], summary)])
    stored = after[moved[0]][2]
    got = [float(x) for x in stored.strip("[]").split(",")]
    assert sum(a * b for a, b in zip(got, expected, strict=True)) > 0.9999
