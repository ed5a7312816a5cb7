"""The session gate and the reads of one's own sessions judge with the whole matrix, read
once per matrix state (issue 31, point 7): calls on an unchanged matrix share one snapshot,
and any change committed before a call, access-relevant or not (a party added moves no
policy_version), is in that call's answer."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.walls import resolution
from app.walls.graph import MatrixSnapshot
from app.walls.resolution import load_snapshot
from tests.conftest import Tokens
from tests.helpers import Firm, ok
from tests.sessions.test_sessions_api import LAWYER, _backdated_retrieval, _gate


def _count_matrix_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every whole-matrix load (the real one: this only counts)."""
    loads: list[bool] = []

    def counted(conn: Any, *, full: bool = True) -> MatrixSnapshot:
        if full:
            loads.append(full)
        return load_snapshot(conn, full=full)

    monkeypatch.setattr(resolution, "load_snapshot", counted)
    return loads


def test_the_matrix_is_read_once_per_change(
    client: TestClient, auth: Tokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.client_("C-A", "Aalbers Bouw B.V.")
    firm.client_("C-B", "Bosman Vastgoed N.V.")
    firm.matter("M-A", "C-A", team=[LAWYER])
    firm.matter("M-B", "C-B", team=[LAWYER])
    # the document the retrievals' chunk id names: one the firm no longer held would taint
    firm.document("doc-med", "Een stuk over de bouw.", client_id="C-A", matter_id="M-A")
    _backdated_retrieval(client, LAWYER, "s-1", "M-A", 1)
    _backdated_retrieval(client, LAWYER, "s-1", "M-B", 1)
    h = auth(LAWYER, "lawyer")
    reads = _count_matrix_reads(monkeypatch)

    assert ok(_gate(client, h, "s-1"))["status"] == "ok"
    assert ok(_gate(client, h, "s-1"))["status"] == "ok"
    listed = ok(client.get("/v1/audit/retrievals", params={"session_id": "s-1"}, headers=h))
    assert len(listed["items"]) == 2
    assert len(reads) == 1  # three calls, one matrix read

    # a party is no access change (policy_version stays) but makes the two matters adverse
    version = firm.matter(
        "M-B", "C-B", team=[LAWYER], parties=[{"name": "Aalbers Bouw", "role": "adverse"}]
    )
    answer = ok(_gate(client, h, "s-1"))
    assert answer["policy_version"] == version
    assert answer["status"] == "tainted"
    assert [r["kind"] for r in answer["reasons"]] == ["adverse"]
    assert len(reads) == 2
    assert ok(_gate(client, h, "s-1"))["status"] == "tainted"
    assert len(reads) == 2

    # a wall screening the lawyer off M-B: the next call sees it (and reads the matrix anew)
    issued = client.post(
        "/v1/walls",
        json={
            "kind": "exclusionary",
            "title": "screen",
            "reason": "test",
            "protects": {"matters": ["M-B"]},
            "screened": [LAWYER],
        },
        headers=firm.h,
    )
    assert issued.status_code == 201, issued.text
    answer = ok(_gate(client, h, "s-1"))
    # the adverse pair now holds a matter the lawyer may not see: left out of their answer
    assert {r["kind"] for r in answer["reasons"]} == {"wall"}
    assert len(reads) == 3
    # the own-session read withholds the matter the wall now hides
    listed = ok(client.get("/v1/audit/retrievals", params={"session_id": "s-1"}, headers=h))
    assert len(reads) == 3
    assert "M-B" not in str(listed)
