"""`ewall demo`: the demo firm loads, loads again without changing anything, quarantines the
unfiled scan, and its three example searches show the walls at work through POST /v1/search.

It loads with the default encoder, as `make run` does (not the suite's MiniLM), so it also
checks that the shipped vectors (app/demo/vectors.py) cover the load: once per module, twice
in a row; the second run is the idempotency check.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.demo import documents as demo_docs
from app.demo import firm
from app.demo.loader import (
    WITHDRAWAL_EXAMPLES,
    is_empty,
    load_demo,
    load_demo_if_empty,
    select_case_law,
    statute_articles,
)
from app.embeddings import Embedder
from app.ingest.chunking import normalize_doc_type
from app.settings import DEFAULT_MODEL, Settings
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import ok, superuser_rows
from tests.shared_data import require

DATA = Path(firm.__file__).parent / "data"
CORPUS = Path("../shared/corpus")


@dataclass
class Loaded:
    first: dict[str, Any]
    second: dict[str, Any]
    encode_calls_second: int


@pytest.fixture(scope="module")
def demo_settings() -> Settings:
    return make_settings(embedding_model=DEFAULT_MODEL)


@pytest.fixture(scope="module")
def demo_embedder(demo_settings: Settings) -> Iterator[Embedder]:
    embedder = Embedder(demo_settings)
    yield embedder
    embedder.close()


@pytest.fixture(scope="module")
def loaded(module_db: DbHandle, demo_settings: Settings, demo_embedder: Embedder) -> Loaded:
    assert is_empty(module_db.database)
    first = load_demo(module_db.database, demo_settings, demo_embedder)
    calls = demo_embedder.encode_calls
    second = load_demo(module_db.database, demo_settings, demo_embedder)
    return Loaded(first, second, demo_embedder.encode_calls - calls)


@pytest.fixture(scope="module")
def api(
    module_db: DbHandle, demo_settings: Settings, demo_embedder: Embedder, loaded: Loaded
) -> Iterator[TestClient]:
    with make_client(module_db, demo_settings, demo_embedder) as client:
        yield client


def search(
    api: TestClient, auth: Tokens, person_id: str, query: str, k: int = 10
) -> list[dict[str, Any]]:
    body = ok(
        api.post("/v1/search", json={"query": query, "k": k}, headers=auth(person_id, "lawyer"))
    )
    return list(body["results"])


# --- the data, without a database ---------------------------------------------------------------


def test_documents_are_deterministic_and_typed() -> None:
    docs = demo_docs.firm_documents()
    assert docs == demo_docs.firm_documents()  # byte-identical content on every call
    assert len({d.external_id for d in docs}) == len(docs)
    kind_of = demo_docs.document_kinds()
    assert set(kind_of) == {d.external_id for d in docs}
    for doc in docs:
        assert normalize_doc_type(doc.doc_type) == kind_of[doc.external_id], doc.external_id
        assert (doc.text is None) != (doc.content is None)
        assert doc.modified_at is not None and doc.modified_at.tzinfo is not None
        assert doc.modified_at.date() <= demo_docs.DEMO_TODAY
    kinds = set(kind_of.values())
    assert {
        "memo",
        "brief",
        "claim_chart",
        "deposition",
        "expert_report",
        "email",
        "contract",
    } <= kinds
    # the chunkers' markers are really in the texts
    texts = "\n".join(d.text for d in docs if d.text)
    for marker in (
        "\n1[a] | ",
        "\n1 | [a] | ",
        "\n# Pleitnota",
        "\n4.1 Tekortkoming",
        "\nV: ",
        "\nA: ",
        "\nVraag 1: ",
        "\n3.1 ",
        "art. 56 EOV",
        "artikel 6:162 BW",
    ):
        assert marker in texts, marker


def test_matrix_is_consistent() -> None:
    people = {p.person_id for p in firm.PEOPLE}
    clients = {c.client_id for c in firm.CLIENTS}
    matters = {m.matter_id for m in firm.MATTERS}
    assert firm.DEMO_LAWYER in people and firm.LATERAL_HIRE in people
    assert all(p.alias.startswith("imanage:user:") for p in firm.PEOPLE)
    assert set(demo_docs.DOSSIERS) == matters
    assert set(demo_docs.CONTACTS) == clients
    for m in firm.MATTERS:
        assert m.client_id in clients and set(m.team) <= people
    family = {c.client_id for c in firm.CLIENTS if c.parent_id == "ZEEBURG"}
    assert len(family) >= 2
    later = [m for m in firm.MATTERS if m.opened_after_walls]
    assert later and all(m.client_id in family for m in later)
    for wall in firm.WALLS:
        assert set(wall.protects_matters) <= matters
        assert set(wall.screened) | set(wall.allowed) <= people
    # a client of one matter is an adverse party in another (for the conflicts API)
    client_names = {c.name for c in firm.CLIENTS}
    assert any(
        p.name in client_names and p.role == "adverse" for m in firm.MATTERS for p in m.parties
    )
    for example in firm.EXAMPLE_SEARCHES:
        assert set(example["people"]) <= people and set(example["matters"]) <= matters


def test_shipped_data_is_small_and_complete() -> None:
    size = sum(f.stat().st_size for f in DATA.rglob("*") if f.is_file())
    assert size < 1_500_000
    shipped = select_case_law(make_settings(corpus_dir=Path("/nonexistent/corpus")))
    assert shipped.origin == "package"
    assert 10 <= len(shipped.files) <= 15
    assert all(path.is_file() for path in shipped.files.values())
    assert {ecli for _, ecli, _ in demo_docs.EXHIBITS} <= set(shipped.files)
    articles = {a.label for a in statute_articles()}
    assert {
        "artikel 6:162 BW",
        "artikel 6:74 BW",
        "artikel 54 EOV",
        "artikel 56 EOV",
        "artikel 11 Auteurswet",
    } <= articles


def test_corpus_selection_covers_the_starter_set() -> None:
    require((CORPUS / "rechtspraak" / "manifest.tsv").is_file(), "../shared/corpus")
    selection = select_case_law(make_settings(corpus_dir=CORPUS))
    assert selection.origin == "corpus" and not selection.missing
    assert {ecli for _, ecli, _ in demo_docs.EXHIBITS} <= set(selection.files)
    assert set(WITHDRAWAL_EXAMPLES) <= set(selection.files)
    try:
        from app.evaluation.starter import STARTER_ECLIS
    except ImportError:
        return
    assert selection.starter_set and set(STARTER_ECLIS) <= set(selection.files)


def test_cli_registers_the_demo_command() -> None:
    from app.cli import build_parser

    args = build_parser().parse_args(["demo", "--json"])
    assert args.json is True and callable(args.handler)


# --- the load ------------------------------------------------------------------------------------


def test_firm_shape(loaded: Loaded, module_db: DbHandle) -> None:
    summary = loaded.first
    assert summary["people"] == len(firm.PEOPLE)
    assert summary["clients"] == len(firm.CLIENTS)
    assert summary["matters"] == len(firm.MATTERS)
    assert summary["walls"] == len(firm.WALLS)
    assert summary["walls_issued"] == [w.title for w in firm.WALLS]
    assert summary["changed"] is True
    firm_docs = len(demo_docs.firm_documents()) + len(demo_docs.EXHIBITS)
    assert summary["firm_documents"]["counts"]["seen"] == firm_docs + len(statute_articles())
    assert summary["firm_documents"]["counts"]["errors"] == 0
    assert summary["case_law"]["counts"]["errors"] == 0
    assert summary["documents"] >= firm_docs + summary["case_law"]["files"] - 1
    assert 500 <= summary["chunks"] <= 4_000
    # every vector came from the shipped file but the one encoded to check it (stale after
    # a change of the demo data, the chunking or the encoder input: `make demo-vectors`)
    assert summary["vectors"]["encoded"] == 1 and summary["vectors"]["known"] > 0, summary
    assert summary["retagged_chunks"] == 0  # walls came before documents: nothing to move
    # chunks landed in the groups of their matters: no re-tag left, none visible early
    assert superuser_rows(module_db, "SELECT count(*) FROM retag_pending") == [(0,)]


def test_second_load_changes_nothing(loaded: Loaded) -> None:
    first, second = loaded.first, loaded.second
    assert second["changed"] is False and second["matrix_changed"] is False
    assert second["walls_issued"] == []
    assert second["walls_existing"] == [w.title for w in firm.WALLS]
    for key in ("policy_version", "walls", "documents", "chunks", "people", "matters"):
        assert second[key] == first[key], key
    for run in (second["case_law"], second["firm_documents"]):
        counts = run["counts"]
        assert counts["added"] == counts["updated"] == counts["deleted"] == 0
        assert counts["errors"] == 0
    assert loaded.encode_calls_second == 0  # nothing re-embedded


def test_every_chunker_path_ran(loaded: Loaded, module_db: DbHandle) -> None:
    rows = superuser_rows(
        module_db, "SELECT doc_type, section_path FROM chunks WHERE source = 'imanage'"
    )
    paths: dict[str, set[str]] = {}
    for doc_type, section in rows:
        paths.setdefault(doc_type, set()).add(section)
    assert any(p.startswith("Claim 1 / element [") for p in paths["claim_chart"])
    assert any(p.startswith("Q ") for p in paths["deposition"])
    assert any(p.startswith("¶ ") for p in paths["expert_report"])
    assert any(" / " in p for p in paths["brief"])
    assert paths["case_law"] - {""}  # exhibits chunked by their XML sections
    assert {"memo", "email", "contract"} <= set(paths)
    statutes = superuser_rows(
        module_db, "SELECT count(*) FROM chunks WHERE source = 'wetten' AND doc_type = 'statute'"
    )
    assert statutes[0][0] >= len(statute_articles())


def test_unfiled_scan_is_quarantined_listed_and_invisible(
    loaded: Loaded, module_db: DbHandle, api: TestClient, auth: Tokens
) -> None:
    unfiled = demo_docs.unfiled_document().external_id
    for summary in (loaded.first, loaded.second):
        assert [q["external_id"] for q in summary["firm_documents"]["quarantined"]] == [unfiled]
        assert [q["external_id"] for q in summary["quarantined"]] == [unfiled]
        assert "empty" in str(summary["quarantined"][0]["reason"])
    groups = superuser_rows(
        module_db,
        "SELECT DISTINCT wall_group_id, matter_id FROM chunks WHERE external_id = %s",
        unfiled,
    )
    assert groups == [("quarantine", None)]
    query = "ingebrekestelling facturen Incassobureau Noord"
    for person in (firm.DEMO_LAWYER, firm.CONFLICTS_PARTNER, firm.COMPLIANCE_OFFICER):
        hits = search(api, auth, person, query, k=50)
        assert all(h["document"]["external_id"] != unfiled for h in hits)


@pytest.mark.parametrize("example", firm.EXAMPLE_SEARCHES, ids=lambda e: e["query"])
def test_example_search_differs_as_described(
    example: firm.ExampleSearch, api: TestClient, auth: Tokens
) -> None:
    allowed, blocked = example["people"]
    walled = set(example["matters"])
    seen_by_allowed = search(api, auth, allowed, example["query"])
    seen_by_blocked = search(api, auth, blocked, example["query"])
    assert walled & {h["matter_id"] for h in seen_by_allowed}, "the insider finds the matter"
    # the top hit of the insider is walled material: the example is visibly about the wall
    assert seen_by_allowed[0]["matter_id"] in walled
    assert seen_by_blocked, "the blocked person still gets a full answer from what is allowed"
    assert not walled & {h["matter_id"] for h in seen_by_blocked}
    assert {h["chunk_id"] for h in seen_by_allowed} != {h["chunk_id"] for h in seen_by_blocked}


def test_walls_as_issued(loaded: Loaded, api: TestClient, auth: Tokens) -> None:
    headers = auth(firm.CONFLICTS_PARTNER, "conflicts")

    def allowed(person_id: str, matter_id: str) -> bool:
        body = ok(
            api.get(
                f"/v1/people/{person_id}/access", params={"matter_id": matter_id}, headers=headers
            )
        )
        return bool(body["allowed"])

    # the lateral hire: screened from Medivers/Genova, not from other Medivers matters
    assert not allowed(firm.LATERAL_HIRE, "MEDIVERS-001")
    assert allowed(firm.LATERAL_HIRE, "MEDIVERS-003")
    assert allowed(firm.DEMO_LAWYER, "MEDIVERS-001")
    # Project Tulp: deal team only
    assert allowed("tvisser@firm.nl", "NOORDZEE-001")
    assert allowed("kdejong@firm.nl", "NOORDZEE-001")  # team of NOORDZEE-002, same wall
    assert not allowed(firm.DEMO_LAWYER, "NOORDZEE-001")
    # the client wall covers the subsidiary's matter opened after the wall was issued
    assert allowed("mvanleeuwen@firm.nl", "ZEEBURG-VAST-002")
    assert allowed("ayilmaz@firm.nl", "ZEEBURG-LOG-001")  # team member elsewhere in the family
    assert not allowed("jbakker@firm.nl", "ZEEBURG-VAST-002")
    assert not allowed("jbakker@firm.nl", "ZEEBURG-001")
    # ldekker sees most things: everything except Project Tulp
    blocked = [m.matter_id for m in firm.MATTERS if not allowed(firm.DEMO_LAWYER, m.matter_id)]
    assert blocked == ["NOORDZEE-001", "NOORDZEE-002"]


def test_source_acl_keeps_the_selection_note_within_the_team(api: TestClient, auth: Tokens) -> None:
    note = next(d for d in demo_docs.firm_documents() if d.acl is not None)
    query = "selectie boventallige functies afspiegeling leeftijdscategorie"
    found = {h["document"]["external_id"] for h in search(api, auth, "nsmit@firm.nl", query)}
    assert note.external_id in found
    for outsider in (firm.DEMO_LAWYER, "sjansen@firm.nl"):
        hits = search(api, auth, outsider, query, k=50)
        assert note.external_id not in {h["document"]["external_id"] for h in hits}


def test_conflict_check_finds_the_municipality_on_both_sides(api: TestClient, auth: Tokens) -> None:
    body = ok(
        api.get(
            "/v1/conflicts",
            params={"name": "Gemeente Zuiderveen"},
            headers=auth(firm.CONFLICTS_PARTNER, "conflicts"),
        )
    )
    roles = {(m["matter_id"], m["role"]) for m in body["matches"]}
    assert ("ZUIDERVEEN-001", "client") in roles
    assert ("KLAASSEN-001", "adverse") in roles
    assert ("NOORDZEE-001", "related") in roles


def test_withdrawn_decisions_are_not_searchable(loaded: Loaded, module_db: DbHandle) -> None:
    states = loaded.first["case_law"]["withdrawal_states"]
    assert states, "the demo load reported no withdrawal states"
    assert states["set_aside"] >= 1 and states["voided"] >= 2  # lapsed, and replaced
    rows = superuser_rows(
        module_db,
        "SELECT bool_and(suppressed) FROM chunks WHERE source = 'rechtspraak' AND external_id = %s",
        "ECLI:NL:RBAMS:2012:BZ5426",
    )
    assert rows == [(True,)]


def test_if_empty_does_not_reload(
    loaded: Loaded, module_db: DbHandle, demo_settings: Settings, demo_embedder: Embedder
) -> None:
    assert load_demo_if_empty(module_db.database, demo_settings, demo_embedder) is None


def test_summary_prints(loaded: Loaded, demo_settings: Settings) -> None:
    from rich.console import Console

    from app.demo.cli import print_summary

    out = io.StringIO()
    print_summary(Console(file=out, width=200), loaded.second, demo_settings)
    text = out.getvalue()
    assert "nothing changed" in text
    out = io.StringIO()
    print_summary(Console(file=out, width=200), loaded.first, demo_settings)
    assert f"Vectors: {loaded.first['vectors']['known']} taken" in out.getvalue()
    assert firm.DEMO_LAWYER in text and "curl -s -X POST" in text
    for example in firm.EXAMPLE_SEARCHES:
        assert example["query"] in text
