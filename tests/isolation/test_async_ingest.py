"""Large documents are ingested as background jobs: 202 with a run id, then searchable;
the queued jobs of one person are bounded (429 with Retry-After)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import ADMIN, Firm, ok

# The background run may be the first bulk work of this test process: the bulk encoder
# process starts and loads its model, then encodes at nice 19 behind every other xdist
# worker (a test whose first bulk batch started it took 100 s, four workers on two busy cores).
GUARD_S = 600


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait on a condition (the deadline only turns a hang into a failure)."""
    deadline = time.monotonic() + GUARD_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def assert_rate_limited(response: Any, scope: str) -> None:
    assert response.status_code == 429, response.text
    error = response.json()["error"]
    assert error["code"] == "rate_limited" and error["details"]["scope"] == scope
    assert int(response.headers["Retry-After"]) == error["details"]["retry_after_s"] >= 1


# --- large documents as background jobs ------------------------------------------------------

LONG_TEXT = "\n\n".join(
    f"Paragraaf {i}. De verhuurder vordert ontruiming van bedrijfsruimte aan de Kade wegens "
    f"een huurachterstand van {i} maanden; de huurder beroept zich op de kwijtscheldingsbrief "
    "van de zeehavenbeheerder." + (" Het pakhuis staat aan de Zeeuwse gracht." if i == 7 else "")
    for i in range(40)
)


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    return firm


def _document(external_id: str, text: str) -> dict[str, Any]:
    return {
        "source": "api",
        "external_id": external_id,
        "client_id": "C-1",
        "matter_id": "M-1",
        "doc_type": "memo",
        "title": "Memo ontruiming",
        "text": text,
    }


def test_large_document_answers_202_and_becomes_searchable(
    db: DbHandle, embedder: Any, auth: Tokens
) -> None:
    settings = make_settings(document_async_chars=len(LONG_TEXT) - 1)
    with make_client(db, settings, embedder) as client:
        firm = _firm(client, auth)
        admin = auth(*ADMIN)
        # an ordinary document stays synchronous
        small = ok(
            client.post("/v1/documents", json=_document("SMALL-1", "Korte notitie."), headers=admin)
        )
        assert small["status"] == "added"
        r = client.post("/v1/documents", json=_document("LARGE-1", LONG_TEXT), headers=admin)
        assert r.status_code == 202, r.text
        body = r.json()
        assert body["status"] == "queued" and body["external_id"] == "LARGE-1"
        run_url = f"/v1/ingest/runs/{body['run_id']}"
        assert r.headers["Location"] == run_url

        def finished() -> bool:
            return bool(ok(client.get(run_url, headers=admin))["status"] != "running")

        wait_for(finished, "the background run")
        report = ok(client.get(run_url, headers=admin))
        assert report["status"] == "succeeded", report
        assert report["counts"]["added"] == 1
        assert report["job"]["status"] == "succeeded" and report["job"]["attempts"] == 1
        assert report["progress"]["document"]["chunks"] >= 1
        hits = firm.search("alice@firm.nl", "pakhuis Zeeuwse gracht")["results"]
        assert hits and hits[0]["document"]["external_id"] == "LARGE-1"


def test_queued_jobs_per_person_are_bounded(db: DbHandle, embedder: Any, auth: Tokens) -> None:
    settings = make_settings(document_async_chars=100, job_workers=0, job_max_pending_per_person=1)
    with make_client(db, settings, embedder) as client:
        _firm(client, auth)
        admin = auth(*ADMIN)
        r = client.post("/v1/documents", json=_document("LARGE-1", LONG_TEXT), headers=admin)
        assert r.status_code == 202, r.text
        r = client.post("/v1/documents", json=_document("LARGE-2", LONG_TEXT), headers=admin)
        assert_rate_limited(r, "jobs_pending")
        # another admin has a queue of their own
        other = auth("admin2@firm.nl", "admin")
        r = client.post("/v1/documents", json=_document("LARGE-3", LONG_TEXT), headers=other)
        assert r.status_code == 202, r.text


def _docx_base64(paragraphs: list[str]) -> str:
    import base64
    import io

    import docx

    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return base64.b64encode(out.getvalue()).decode()


def test_a_small_file_holding_much_text_is_queued_by_its_text(
    db: DbHandle, embedder: Any, auth: Tokens
) -> None:
    """The size of a Word file's zip says little about its text: a 60 KB file held half a
    million characters, and its push held the request for minutes of encoding."""
    paragraphs = LONG_TEXT.split("\n\n") * 10
    large = _docx_base64(paragraphs)
    text_chars = len("\n\n".join(paragraphs))
    threshold = len(large) * 3 // 4 + 1  # above the file's bytes, below its text
    assert threshold < text_chars
    settings = make_settings(document_async_chars=threshold, job_workers=0)
    with make_client(db, settings, embedder) as client:
        _firm(client, auth)
        admin = auth(*ADMIN)
        mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        small = dict(_document("DOCX-1", ""), content_base64=_docx_base64(["Korte notitie."]))
        small.pop("text")
        small["mime_type"] = mime
        assert ok(client.post("/v1/documents", json=small, headers=admin))["status"] == "added"
        big = dict(small, external_id="DOCX-2", content_base64=large)
        r = client.post("/v1/documents", json=big, headers=admin)
        assert r.status_code == 202, r.text
        assert r.json()["status"] == "queued"
    # stored once (synchronously, under a higher threshold), the same file pushed again is
    # unchanged: answered at once, not extracted and queued on every re-push (a review)
    with make_client(db, make_settings(document_async_chars=10 * text_chars), embedder) as c:
        admin = auth(*ADMIN)
        stored = dict(big, external_id="DOCX-3")
        assert ok(c.post("/v1/documents", json=stored, headers=admin))["status"] == "added"
    with make_client(db, settings, embedder) as client:
        again = client.post("/v1/documents", json=stored, headers=auth(*ADMIN))
        assert again.status_code == 200, again.text
        assert again.json()["status"] == "unchanged"
