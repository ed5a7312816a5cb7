"""An export re-checks its reader's standing before each page it reads. The roles were
checked once, when the export began: a compliance officer deactivated in the matrix while a
long export ran (or whose token expired, the way a role withdrawn at the identity provider
ends) received every remaining page. The export now ends with one line in the error
envelope, ``export_stopped``, saying why and from where to continue; the console's download
ends alike (its last CSV row says so). A queued ingest job of an admin deactivated since
fails when its turn comes instead of running on their authority."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.audit import repository, service
from app.auth.service import Principal
from app.console import audit_pages
from app.deps import standing_of
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.console.conftest import console_client, sign_in
from tests.helpers import ADMIN, Firm, one_matter_firm
from tests.ingest.test_runs_refused_up_front import run_queued_jobs

LAWYER = "alice@firm.nl"
OFFICER = "co@firm.nl"
TEXT = "octrooi inbreuk retard-tablet"
SEARCHES = 5


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    firm = one_matter_firm(client, auth, LAWYER, {"d1": TEXT})
    firm.person(OFFICER)
    for i in range(SEARCHES):
        firm.search(LAWYER, f"{TEXT} {i}")
    return firm


def _deactivate(db: DbHandle, person_id: str) -> None:
    with db.database.transaction() as conn:
        conn.execute(
            text("UPDATE people SET active = false WHERE person_id = :p"), {"p": person_id}
        )


def _deactivated_after_first_page(
    monkeypatch: pytest.MonkeyPatch,
    db: DbHandle,
    name: str,
    owner: Any,
) -> None:
    """``owner.name`` (a page read) deactivates the officer, committed, once it returned."""
    read = getattr(owner, name)
    calls = 0

    def page_then_deactivate(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        found = read(*args, **kwargs)
        calls += 1
        if calls == 1:
            _deactivate(db, OFFICER)
        return found

    monkeypatch.setattr(owner, name, page_then_deactivate)


def test_the_api_export_stops_when_its_reader_is_deactivated(
    firm: Firm, client: TestClient, auth: Tokens, db: DbHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "EXPORT_PAGE", 2)
    _deactivated_after_first_page(monkeypatch, db, "export_page", repository)
    r = client.get("/v1/audit/export", headers=auth(OFFICER, "compliance"))
    assert r.status_code == 200, r.text  # the first page was theirs to read
    lines = [json.loads(line) for line in r.text.splitlines()]
    assert [line.get("seq") for line in lines[:2]] == sorted(x["seq"] for x in lines[:2])
    assert len(lines) == 3, lines  # 2 retrievals, then the stop; not the other 3
    error = lines[2]["error"]
    assert error["code"] == "export_stopped", error
    assert "inactive" in error["message"], error
    assert error["details"] == {"after_seq": lines[1]["seq"]}, error


def test_an_export_stops_when_its_token_expired(firm: Firm, client: TestClient) -> None:
    database = client.app.state.resources.database  # type: ignore[attr-defined]
    fresh = Principal(OFFICER, frozenset({"compliance"}), {"exp": time.time() + 3600})
    expired = Principal(OFFICER, frozenset({"compliance"}), {"exp": time.time() - 3600})
    whole = list(
        service.export_lines(
            database.transaction, since=None, until=None, page=2,
            standing=standing_of(fresh, 30),
        )
    )  # fmt: skip
    assert len(whole) == SEARCHES and all("seq" in json.loads(x) for x in whole)
    lines = list(
        service.export_lines(
            database.transaction, since=None, until=None, after_seq=3, page=2,
            standing=standing_of(expired, 30),
        )
    )  # fmt: skip
    assert len(lines) == 1, lines
    error = json.loads(lines[0])["error"]
    assert error["code"] == "export_stopped" and "expired" in error["message"], error
    assert error["details"] == {"after_seq": 3}, error


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_the_console_export_stops_when_its_reader_is_deactivated(
    firm: Firm, auth: Tokens, db: DbHandle, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    signed_in = console_client(firm)
    assert sign_in(signed_in, auth, OFFICER, "compliance").status_code == 303
    monkeypatch.setattr(audit_pages, "EXPORT_PAGE", 2)
    _deactivated_after_first_page(monkeypatch, db, "list_retrievals", service)
    r = signed_in.get(f"/console/audit/export.{fmt}")
    assert r.status_code == 200, r.text
    lines = r.text.splitlines()
    if fmt == "jsonl":
        assert len(lines) == 3, lines
        error = json.loads(lines[2])["error"]
        assert error["code"] == "export_stopped" and "inactive" in error["message"], error
    else:
        assert len(lines) == 1 + 2 + 1, lines  # header, 2 rows, the stop
        assert lines[3].startswith("export stopped: co@firm.nl no longer holds"), lines[3]


def test_a_queued_job_of_an_admin_deactivated_since_does_not_run(
    db: DbHandle, embedder: object, auth: Tokens, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    (tmp_path / "metadata.jsonl").write_text(
        '{"external_id": "R-1", "path": "a.txt", "client_id": "C-1", "matter_id": "M-1"}\n',
        encoding="utf-8",
    )
    queuer = "ops@firm.nl"
    with make_client(db, make_settings(job_workers=0), embedder) as client:
        firm = Firm(client, auth)
        firm.person(queuer)
        firm.client_("C-1")
        firm.matter("M-1", "C-1", team=[queuer])
        r = client.post(
            "/v1/ingest/runs",
            json={"connector": "folder", "path": str(tmp_path)},
            headers=auth(queuer, "admin"),
        )
        assert r.status_code == 202, r.text
        _deactivate(db, queuer)  # before the job's turn
        report = run_queued_jobs(client, r.json()["run_id"], auth(*ADMIN))
    assert report["status"] == "failed", report
    assert "ops@firm.nl, who queued this job, is inactive" in report["error"], report
    assert report["job"]["attempts"] == 1, report["job"]


def test_the_console_export_refused_before_its_first_page_is_a_403(
    firm: Firm, auth: Tokens, db: DbHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deactivated between the role check (``require``) and the first page's standing
    check, the refusal escaped before the download began: a 500 with no page."""
    signed_in = console_client(firm)
    assert sign_in(signed_in, auth, OFFICER, "compliance").status_code == 303
    real = audit_pages._standing

    def deactivated_first(request: Any) -> Any:
        check = real(request)

        def first() -> str | None:
            _deactivate(db, OFFICER)  # committed after require() read the session
            return check()

        return first

    monkeypatch.setattr(audit_pages, "_standing", deactivated_first)
    r = signed_in.get("/console/audit/export.jsonl")
    assert r.status_code == 403, r.text
    assert "no longer holds the compliance role" in r.text


def test_the_api_export_refused_before_its_first_page_is_a_403(
    firm: Firm, client: TestClient, auth: Tokens, db: DbHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deactivated between the role check and the first page, the export answered 200 with
    one line, the refusal; the answer has not started then, so it is a 403 envelope."""
    real = standing_of

    def deactivated_first(principal: Principal, leeway_s: float) -> Any:
        check = real(principal, leeway_s)

        def first(conn: Any) -> str | None:
            _deactivate(db, OFFICER)  # committed after get_principal read the matrix
            return check(conn)

        return first

    monkeypatch.setattr("app.audit.router.standing_of", deactivated_first)
    r = client.get("/v1/audit/export", headers=auth(OFFICER, "compliance"))
    assert r.status_code == 403, r.text
    error = r.json()["error"]
    assert error["code"] == "forbidden" and "inactive" in error["message"], error
