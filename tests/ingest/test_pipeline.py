"""The ingest pipeline through the API and the folder connector: content-addressed ids,
idempotency without re-embedding, quarantine, tri-state metadata, atomic replacement,
deletion, delta reports, and clean handling of bad input."""

from __future__ import annotations

import base64
import json
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.ingest.pipeline import IngestPipeline
from app.ingest.preparation import dedupe_chunks
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok

BRIEF = """# Inleiding

Eiseres vordert vernietiging van het octrooi.

# Inventiviteit

Het octrooi mist inventiviteit in het licht van D1 en de algemene vakkennis.

# Nieuwheid

D2 openbaart alle kenmerken van conclusie 1.
"""


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    f = Firm(client, auth)
    f.person("alice@firm.nl")
    f.client_("C-1", "Acme B.V.")
    f.client_("C-2", "Beta N.V.")
    f.matter("M-1", "C-1", team=["alice@firm.nl"])
    f.matter("M-2", "C-2")
    return f


def _chunks(db: DbHandle, external_id: str) -> dict[str, tuple[Any, ...]]:
    with psycopg.connect(db.superuser_url) as su:
        rows = su.execute(
            "SELECT chunk_id, xmin::text, ingested_at, wall_group_id, matter_id FROM chunks "
            "WHERE external_id = %s",
            (external_id,),
        ).fetchall()
    return {r[0]: r[1:] for r in rows}


def _run(client: TestClient, auth: Tokens, run_id: str) -> dict[str, Any]:
    return dict(ok(client.get(f"/v1/ingest/runs/{run_id}", headers=auth("admin@firm.nl", "admin"))))


def test_same_document_twice_changes_nothing_and_embeds_nothing(
    firm: Firm, db: DbHandle, embedder: Any
) -> None:
    first = firm.document("b-1", BRIEF, client_id="C-1", matter_id="M-1", doc_type="Pleitnota")
    assert first["added"] == first["chunks"] == 3 and first["status"] == "added"
    before = _chunks(db, "b-1")
    calls = embedder.encode_calls
    second = firm.document("b-1", BRIEF, client_id="C-1", matter_id="M-1", doc_type="Pleitnota")
    assert second["added"] == 0 and second["removed"] == 0 and second["status"] == "unchanged"
    assert embedder.encode_calls == calls, "re-ingest must not call the encoder"
    assert _chunks(db, "b-1") == before  # same ids, rows untouched (same xmin)
    for chunk_id in before:
        prefix, _, digest = chunk_id.rpartition(":")
        assert prefix == "api:b-1" and len(digest) == 16


def test_changed_document_touches_only_what_changed(
    firm: Firm, db: DbHandle, embedder: Any
) -> None:
    firm.document("b-2", BRIEF, client_id="C-1", matter_id="M-1", doc_type="brief")
    before = _chunks(db, "b-2")
    calls, texts = embedder.encode_calls, embedder.encoded_texts
    changed = BRIEF.replace("D2 openbaart alle kenmerken", "D3 openbaart bijna alle kenmerken")
    out = firm.document("b-2", changed, client_id="C-1", matter_id="M-1", doc_type="brief")
    assert (out["added"], out["removed"], out["status"]) == (1, 1, "updated")
    assert embedder.encode_calls == calls + 1 and embedder.encoded_texts == texts + 1
    after = _chunks(db, "b-2")
    kept = set(before) & set(after)
    assert len(kept) == 2 and all(before[c] == after[c] for c in kept)


def test_identical_text_twice_is_one_chunk(db: DbHandle, embedder: Any, settings: Any) -> None:
    from app.ingest.types import ChunkDraft
    from connectors.base import SourceDocument

    doc = SourceDocument(source="api", external_id="dup")
    drafts = [
        ChunkDraft("Dezelfde alinea.", "A"),
        ChunkDraft("Andere alinea.", "B"),
        ChunkDraft("Dezelfde  alinea. ", "C"),
    ]
    prepared = dedupe_chunks(doc, drafts, embedder)
    assert [c.section_path for c in prepared] == ["A", "B"]
    assert [c.ordinal for c in prepared] == [0, 1]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"matter_id": "M-1"}, "client_id absent"),
        ({"client_id": "C-1"}, "matter_id absent"),
        ({"client_id": "", "matter_id": "M-1"}, "client_id present but empty"),
        ({"client_id": "C-1", "matter_id": None}, "matter_id present but empty"),
        ({"client_id": "C-1", "matter_id": "   "}, "matter_id present but empty"),
        ({"client_id": "C-1", "matter_id": "M-404"}, "unknown to the conflict matrix"),
        ({"client_id": "C-404", "matter_id": "M-1"}, "unknown to the conflict matrix"),
        ({"client_id": "C-2", "matter_id": "M-1"}, "belongs to client 'C-1'"),
    ],
)
def test_new_documents_with_bad_metadata_are_quarantined(
    firm: Firm, client: TestClient, auth: Tokens, fields: dict[str, Any], reason: str
) -> None:
    body = {"source": "api", "external_id": "q", "text": "zeldzaamwoord over octrooien", **fields}
    out = ok(client.post("/v1/documents", json=body, headers=firm.h))
    assert out["quarantined"] is True and reason in out["reason"]
    report = _run(client, auth, out["run_id"])
    assert report["counts"]["quarantined"] == 1
    assert reason in report["quarantined"][0]["reason"]
    for person in ("alice@firm.nl", "stranger@firm.nl"):
        assert firm.search(person, "zeldzaamwoord", mode="sparse")["results"] == []
    doc = ok(client.get("/v1/documents/api/q", headers=firm.h))
    assert doc["status"] == "quarantined" and doc["chunks"] == 1  # stored, visible to no one


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"client_id": "", "matter_id": "M-1"}, "client_id present but empty"),
        ({"client_id": "C-1", "matter_id": None}, "matter_id present but empty"),
        ({"client_id": "C-1"}, "matter_id absent"),
    ],
)
def test_a_stored_document_pushed_without_its_matter_is_quarantined(
    firm: Firm, client: TestClient, auth: Tokens, fields: dict[str, Any], reason: str
) -> None:
    """Invariant 6 for a document the index holds: two fuzzes found one pushed again with an
    empty matter still visible under the old one (an empty field kept the known value). It
    may have been taken out of its matter at the source: quarantined, visible to no one."""
    firm.document("keep", "Memo over het octrooi.", client_id="C-1", matter_id="M-1")
    body = {"source": "api", "external_id": "keep", "text": "Memo over het octrooi.", **fields}
    out = ok(client.post("/v1/documents", json=body, headers=firm.h))
    assert out["quarantined"] is True and reason in out["reason"], out
    assert firm.search("alice@firm.nl", "memo octrooi", mode="sparse")["results"] == []
    doc = ok(client.get("/v1/documents/api/keep", headers=firm.h))
    assert doc["status"] == "quarantined"


def test_a_change_of_matter_is_reported(firm: Firm, client: TestClient, auth: Tokens) -> None:
    body = {"source": "api", "external_id": "keep", "text": "Memo over het octrooi."}
    firm.document("keep", "Memo over het octrooi.", client_id="C-1", matter_id="M-1")
    out = ok(
        client.post(
            "/v1/documents", json={**body, "client_id": "C-2", "matter_id": "M-2"}, headers=firm.h
        )
    )
    changes = _run(client, auth, out["run_id"])["metadata_changes"]
    assert {c["details"]["field"] for c in changes} == {"client", "matter"}
    assert "M-2" in firm.matters_seen("alice@firm.nl", "memo octrooi")


def test_atomic_replacement_under_a_concurrent_reader(firm: Firm, db: DbHandle) -> None:
    old = "\n\n".join(f"# Deel {i}\n\nOude tekst {i} over octrooien." for i in range(6))
    new = "\n\n".join(f"# Deel {i}\n\nNieuwe tekst {i} over octrooien en merken." for i in range(9))
    firm.document("atomic", old, client_id="C-1", matter_id="M-1", doc_type="brief")
    old_n = len(_chunks(db, "atomic"))
    seen: set[int] = set()
    reads = [0]
    errors: list[BaseException] = []
    stop = threading.Event()
    progress = threading.Condition()

    def reader() -> None:
        try:
            with psycopg.connect(db.superuser_url, autocommit=True) as su:
                while not stop.is_set():
                    row = su.execute(
                        "SELECT count(*) FROM chunks WHERE external_id = 'atomic'"
                    ).fetchone()
                    assert row is not None
                    with progress:
                        seen.add(row[0])
                        reads[0] += 1
                        progress.notify_all()
        except BaseException as exc:  # surfaced in the test's thread below
            errors.append(exc)
            with progress:
                progress.notify_all()

    def read_again() -> None:
        """Wait until the reader has looked again (or died): a condition, not a clock."""
        with progress:
            target = reads[0] + 1
            assert progress.wait_for(lambda: reads[0] >= target or bool(errors), timeout=120)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        read_again()
        for _ in range(3):
            firm.document("atomic", new, client_id="C-1", matter_id="M-1", doc_type="brief")
            read_again()
            firm.document("atomic", old, client_id="C-1", matter_id="M-1", doc_type="brief")
            read_again()
    finally:
        stop.set()
        thread.join()
    assert not errors, errors
    assert reads[0] >= 7 and seen, "the reader observed nothing"
    new_n = 9
    assert seen <= {old_n, new_n}, seen


def test_delete_removes_the_chunks(firm: Firm, client: TestClient, db: DbHandle) -> None:
    firm.document("gone", "Te verwijderen octrooimemo.", client_id="C-1", matter_id="M-1")
    assert _chunks(db, "gone")
    r = client.delete("/v1/documents/api/gone", headers=firm.h)
    assert r.status_code == 200 and r.json()["deleted"] is True
    assert _chunks(db, "gone") == {}
    assert firm.search("alice@firm.nl", "octrooimemo", mode="sparse")["results"] == []
    r = client.delete("/v1/documents/api/gone", headers=firm.h)
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_the_openapi_schema_does_not_offer_a_null_acl(client: TestClient) -> None:
    # a client generated from /openapi.json must not learn that null is allowed: it is refused
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    acl = schemas["DocumentIn"]["properties"]["acl"]
    assert acl.get("$ref", "").endswith("/AclIn"), acl
    assert "anyOf" not in acl and acl.get("type") != "null", acl


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "x", "content_base64": "eA==", "mime_type": "text/plain"}, "text"),
        ({}, "text"),
        ({"content_base64": "not base64!!", "mime_type": "text/plain"}, "content_base64"),
        ({"content_base64": "eA=="}, "mime_type"),
        (
            {
                "content_base64": base64.b64encode(b"\x00\x01binary").decode(),
                "mime_type": "application/x-msdownload",
            },
            "content_base64",
        ),
        (
            {
                "content_base64": base64.b64encode(b"%PDF-1.4 broken").decode(),
                "mime_type": "application/pdf",
            },
            "content_base64",
        ),
        ({"text": "x", "modified_at": "2024-01-01"}, "modified_at"),
        ({"text": "x", "acl": {"default": "secret"}}, "acl.default"),
        ({"text": "x", "acl": {"allow": ["jsmith"]}}, "acl.allow.0"),
        ({"text": "x", "source": "Bad Source!"}, "source"),
        ({"text": "x", "acl": None}, "acl"),  # null is no rules unread, not public
    ],
)
def test_bad_documents_get_a_clear_422(
    firm: Firm, client: TestClient, body: dict[str, Any], field: str
) -> None:
    payload = {
        "source": "api",
        "external_id": "bad",
        "client_id": "C-1",
        "matter_id": "M-1",
        **body,
    }
    r = client.post("/v1/documents", json=payload, headers=firm.h)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"].get("field") == field, r.json()


def test_scanned_pdf_is_reported_as_no_text(firm: Firm, client: TestClient, auth: Tokens) -> None:
    import fpdf  # fpdf2, a declared test dependency

    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 100, style="F")  # a page with no text layer
    content = bytes(pdf.output())
    r = client.post(
        "/v1/documents",
        json={
            "source": "api",
            "external_id": "scan",
            "client_id": "C-1",
            "matter_id": "M-1",
            "content_base64": base64.b64encode(content).decode(),
            "mime_type": "application/pdf",
        },
        headers=firm.h,
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "no_text"
    report = _run(client, auth, r.json()["error"]["details"]["run_id"])
    assert report["errors"][0]["reason"].startswith("no text")


def _unreadable(external_id: str, **fields: Any) -> dict[str, Any]:
    """A new version of a document whose content cannot be read (a program, not a text)."""
    content = base64.b64encode(b"MZ\x90\x00" * 64).decode()
    return {"source": "api", "external_id": external_id, "content_base64": content,
            "mime_type": "application/x-msdownload", **fields}


def test_a_version_that_cannot_be_read_still_applies_its_access_rules(
    firm: Firm, client: TestClient
) -> None:
    """Invariant 9, found by a connector check: a new version whose content could not be
    extracted left the stored one searchable by a person the source had just removed."""
    firm.person("alice@firm.nl", aliases=["api:user:alice"])
    firm.person("bob@firm.nl", aliases=["api:user:bob"])
    both = {"default": "private", "allow": ["api:user:alice", "api:user:bob"]}
    firm.document("acl", "Memo over het octrooi.", client_id="C-1", matter_id="M-1", acl=both)
    assert firm.documents_found("alice@firm.nl", "memo octrooi", mode="sparse") == ["acl"]
    body = _unreadable("acl", client_id="C-1", matter_id="M-1",
                       acl={"default": "private", "allow": ["api:user:bob"]})
    r = client.post("/v1/documents", json=body, headers=firm.h)
    assert r.status_code == 422, r.text
    assert firm.documents_found("alice@firm.nl", "memo octrooi", mode="sparse") == []
    assert firm.documents_found("bob@firm.nl", "memo octrooi", mode="sparse") == ["acl"]


@pytest.mark.parametrize(
    "rules",
    [
        {"default": "public"},  # wider: the first form opened the old private memo to all
        {"default": "private", "allow": ["api:user:alice", "api:user:carol"]},  # bob out
    ],
)
def test_rules_of_a_version_that_cannot_be_read_that_do_not_only_narrow_hide_it(
    firm: Firm, client: TestClient, rules: dict[str, Any]
) -> None:
    """Reviews: wider rules wait for the text they came with, and rules that take one person
    out and let another in (the second form kept the stored ones) cannot wait: until a
    version is read, the stored one is visible to nobody."""
    for name in ("alice", "bob", "carol"):
        firm.person(f"{name}@firm.nl", aliases=[f"api:user:{name}"])
    stored = {"default": "private", "allow": ["api:user:alice", "api:user:bob"]}
    firm.document("acl2", "Memo over het octrooi.", client_id="C-1", matter_id="M-1", acl=stored)
    body = _unreadable("acl2", client_id="C-1", matter_id="M-1", acl=rules)
    assert client.post("/v1/documents", json=body, headers=firm.h).status_code == 422
    for name in ("alice", "bob", "carol"):
        assert firm.documents_found(f"{name}@firm.nl", "memo octrooi", mode="sparse") == []


@pytest.mark.parametrize("matter", ["M-2", ""])
def test_a_version_that_cannot_be_read_filed_elsewhere_is_hidden(
    firm: Firm, client: TestClient, matter: str
) -> None:
    """The same for a move: filed under another matter (perhaps behind a wall) or under none,
    the stored version must not stay searchable under its old matter; it is kept, visible
    to nobody, until a version of it is read."""
    firm.person("bob@firm.nl")
    firm.document("moved", "Memo over het octrooi.", client_id="C-1", matter_id="M-1")
    r = client.post("/v1/documents", json=_unreadable("moved", client_id="C-1",
                                                       matter_id=matter), headers=firm.h)
    assert r.status_code == 422, r.text
    for person in ("alice@firm.nl", "bob@firm.nl"):
        assert firm.documents_found(person, "memo octrooi", mode="sparse") == []
    firm.document("moved", "Memo over het octrooi.", client_id="C-2", matter_id="M-2")
    assert firm.documents_found("bob@firm.nl", "memo octrooi", mode="sparse") == ["moved"]


def test_pdf_pages_survive_to_search(firm: Firm, client: TestClient) -> None:
    import fpdf  # fpdf2, a declared test dependency

    pdf = fpdf.FPDF()
    for page in range(1, 4):
        pdf.add_page()
        pdf.set_font("helvetica", size=12)
        pdf.multi_cell(
            0,
            8,
            f"Pagina {page}. "
            + (
                "Het deskundigenbericht over de brug. " * 40
                if page == 3
                else "Inleidende tekst. " * 30
            ),
        )
    r = client.post(
        "/v1/documents",
        json={
            "source": "api",
            "external_id": "pdf",
            "client_id": "C-1",
            "matter_id": "M-1",
            "content_base64": base64.b64encode(bytes(pdf.output())).decode(),
            "mime_type": "application/pdf",
            "title": "Rapport",
        },
        headers=firm.h,
    )
    assert r.status_code == 200, r.text
    hit = firm.search("alice@firm.nl", "deskundigenbericht brug", mode="sparse")["results"][0]
    assert hit["page_from"] == 3 and hit["page_to"] == 3


def _folder(tmp_path: Path, sidecar: str, rows: list[dict[str, Any]] | str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text(
        "Memo over de huurovereenkomst en ontbinding.", encoding="utf-8"
    )
    (tmp_path / "docs" / "b.html").write_text(
        "<html><body><h1>Advies</h1><p>Het merk is verwarrend gelijk.</p></body></html>",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "c.txt").write_bytes("Café-memo über déjà vu".encode("cp1252"))
    if isinstance(rows, str):
        (tmp_path / sidecar).write_text(rows, encoding="utf-8")
    else:
        (tmp_path / sidecar).write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return tmp_path


def test_folder_export_with_jsonl_sidecar(
    firm: Firm,
    client: TestClient,
    auth: Tokens,
    tmp_path: Path,
    db: DbHandle,
    embedder: Any,
    settings: Any,
) -> None:
    from app.ingest.runs import ingest_folder

    folder = _folder(
        tmp_path,
        "metadata.jsonl",
        [
            {
                "external_id": "F-1",
                "path": "docs/a.txt",
                "client_id": "C-2",
                "matter_id": "M-2",
                "doc_type": "memo",
                "title": "Huur",
                "modified_at": "2024-03-01T10:00:00Z",
            },
            {
                "external_id": "F-2",
                "path": "docs/b.html",
                "client_id": "C-1",
                "matter_id": "M-1",
                "acl": {"default": "private", "allow": ["imanage:user:alice"]},
            },
            {"external_id": "F-3", "path": "docs/c.txt", "client_id": "C-1", "matter_id": "M-1"},
            {
                "external_id": "F-4",
                "path": "docs/missing.pdf",
                "client_id": "C-1",
                "matter_id": "M-1",
            },
            {
                "external_id": "F-5",
                "path": "docs/a.txt",
                "client_id": "C-1",
                "matter_id": "M-1",
                "modified_at": "yesterday",
            },
            {"external_id": "F-6", "path": "docs/a.txt", "matter_id": "M-1"},
            # a NUL in a path or an id is one entry's error, never the run's
            {"external_id": "F-7", "path": "docs/a\u0000.txt", "matter_id": "M-1"},
            {"external_id": "F-\u0000nul", "path": "docs/a.txt", "matter_id": "M-1"},
            {"external_id": "F" * 501, "path": "docs/a.txt", "matter_id": "M-1"},  # the API's limit
        ],
    )
    (folder / "metadata.jsonl").write_text(
        (folder / "metadata.jsonl").read_text() + "\n{broken json\n", encoding="utf-8"
    )
    pipeline = IngestPipeline(db.database, embedder, settings)
    progress: list[tuple[int, int | None]] = []
    report = ingest_folder(
        pipeline,
        folder,
        started_by="admin@firm.nl",
        on_progress=lambda d, t: progress.append((d, t)),
    )
    counts = report["counts"]
    assert counts["added"] == 3 and counts["quarantined"] == 1 and counts["errors"] == 6
    reasons = " | ".join(e["reason"] for e in report["errors"])
    assert "missing on disk" in reasons and "modified_at" in reasons and "not JSON" in reasons
    assert reasons.count("holds a control character") == 2
    assert "external_id is longer than 500 characters" in reasons
    assert progress[-1] == (10, 10)
    assert report["status"] == "partial"
    # the same run through the API report
    assert _run(client, auth, report["run_id"])["counts"] == counts
    cp1252 = ok(client.get("/v1/documents/folder/F-3", headers=firm.h))
    assert cp1252["status"] == "active"
    texts = [r["text"] for r in firm.search("alice@firm.nl", "memo", k=20)["results"]]
    assert any("Café-memo über déjà vu" in t for t in texts)
    # a second run over the unchanged folder changes nothing
    report2 = ingest_folder(pipeline, folder, started_by="admin@firm.nl")
    assert report2["counts"]["unchanged"] == 3 and report2["counts"]["added"] == 0


def test_folder_export_with_csv_sidecar_tri_state(
    firm: Firm, tmp_path: Path, db: DbHandle, embedder: Any, settings: Any
) -> None:
    from app.ingest.runs import ingest_folder

    csv = (
        "external_id,path,client_id,matter_id,doc_type,title\n"
        "K-1,docs/a.txt,C-2,M-2,memo,Huur\n"
        "K-2,docs/b.html,,M-1,advies,Merk\n"
    )
    folder = _folder(tmp_path, "metadata.csv", csv)
    pipeline = IngestPipeline(db.database, embedder, settings)
    report = ingest_folder(pipeline, folder, started_by="admin@firm.nl")
    assert report["counts"]["added"] == 1 and report["counts"]["quarantined"] == 1
    assert "client_id present but empty" in report["quarantined"][0]["reason"]


def test_ingest_run_through_the_api(
    firm: Firm, client: TestClient, auth: Tokens, tmp_path: Path
) -> None:
    folder = _folder(
        tmp_path,
        "metadata.jsonl",
        [
            {"external_id": "R-1", "path": "docs/a.txt", "client_id": "C-2", "matter_id": "M-2"},
        ],
    )
    admin = auth("admin@firm.nl", "admin")
    r = client.post(
        "/v1/ingest/runs", json={"connector": "folder", "path": str(folder)}, headers=admin
    )
    assert r.status_code == 202, r.text
    run_id = r.json()["run_id"]
    # a guard against a hang, not a timing: the run may start the bulk encoder process and
    # load its model first, then encodes at nice 19 behind every other xdist worker (a test whose
    # first bulk batch started it took 100 s, four workers on two busy cores)
    deadline = time.monotonic() + 600
    while True:
        report = _run(client, auth, run_id)
        if report["status"] != "running":
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert report["status"] == "succeeded" and report["counts"]["added"] == 1
    # a fuzz of 2026-12-06: a name longer than the file system takes and "~nosuchuser" were
    # a 500 (OSError, RuntimeError) instead of "no folder"
    for path in (
        "/no/such/folder",
        "/" + "a" * 300,
        "~nosuchuser-ewall/x",
        "/no/such/" + "\u0301" * 300,
    ):
        r = client.post(
            "/v1/ingest/runs", json={"connector": "folder", "path": path}, headers=admin
        )
        assert r.status_code == 422, (path, r.text)
        assert r.json()["error"]["code"] == "path_not_found", r.text
        assert r.json()["error"]["details"]["field"] == "path"
    r = client.post("/v1/ingest/runs", json={"connector": "ftp"}, headers=admin)
    assert r.status_code == 422
    # a DMS connector whose URL is not set is refused up front, not queued to fail later
    for connector in ("imanage", "netdocuments"):
        r = client.post("/v1/ingest/runs", json={"connector": connector}, headers=admin)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == "connector_not_configured"
        assert r.json()["error"]["details"]["field"] == "connector"
    assert client.get("/v1/ingest/runs/not-a-run", headers=admin).status_code == 404


def test_one_bad_row_of_a_sidecar_is_one_entry_and_a_repeated_id_is_refused(
    firm: Firm, tmp_path: Path, db: DbHandle, embedder: Any, settings: Any
) -> None:
    """A date that no datetime holds once in UTC and a lone surrogate in a title were raised
    where the document's fingerprint is taken, outside the per-document guard: the whole
    run ended and the rows after them were never read. An empty acl in a JSON line was read
    as public; a second row of one external_id overwrote the first in silence."""
    from app.ingest.runs import ingest_folder

    base = {"path": "docs/a.txt", "client_id": "C-1", "matter_id": "M-1"}
    rows = [
        {**base, "external_id": "R-1", "modified_at": "0001-01-01T00:00:00+14:00"},
        {**base, "external_id": "R-2", "title": "a\ud800b"},
        {**base, "external_id": "R-3", "acl": None},
        {**base, "external_id": "R-4"},
        {**base, "external_id": "R-4", "path": "docs/c.txt"},
        {**base, "external_id": "R-5", "path": "docs/b.html"},
    ]
    folder = _folder(tmp_path, "metadata.jsonl", "\n".join(json.dumps(r) for r in rows))
    pipeline = IngestPipeline(db.database, embedder, settings)
    report = ingest_folder(pipeline, folder, started_by="admin@firm.nl")
    assert report["status"] == "partial", report
    assert report["counts"]["added"] == 2 and report["counts"]["errors"] == 4, report["counts"]
    by_id = {e["external_id"]: e["reason"] for e in report["errors"]}
    assert set(by_id) == {"R-1", "R-2", "R-3", "R-4"}, by_id
    assert "listed again (first on line 4)" in by_id["R-4"]
    assert "acl is empty" in by_id["R-3"]
    assert ok(firm.client.get("/v1/documents/folder/R-4", headers=firm.h))["status"] == "active"
    memo = firm.search("alice@firm.nl", "huurovereenkomst ontbinding", mode="sparse")
    assert {r["document"]["external_id"] for r in memo["results"]} == {"R-4"}
