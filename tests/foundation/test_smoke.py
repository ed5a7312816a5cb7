from __future__ import annotations

from fastapi.testclient import TestClient


def test_health_and_ready(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"]["dimension_matches"] is True


def test_matrix_and_wall_roundtrip(client: TestClient, auth) -> None:  # type: ignore[no-untyped-def]
    h = auth("cp@firm.nl", "conflicts")
    assert (
        client.put("/v1/people/alice@firm.nl", json={"name": "Alice"}, headers=h).status_code == 200
    )
    assert client.put("/v1/people/bob@firm.nl", json={"name": "Bob"}, headers=h).status_code == 200
    assert (
        client.put("/v1/clients/C-1", json={"name": "Acme Holding B.V."}, headers=h).status_code
        == 200
    )
    assert (
        client.put(
            "/v1/clients/C-2", json={"name": "Acme Sub B.V.", "parent_id": "C-1"}, headers=h
        ).status_code
        == 200
    )
    r = client.put(
        "/v1/matters/M-1",
        json={"client_id": "C-2", "title": "Octrooi", "team": ["alice@firm.nl"]},
        headers=h,
    )
    assert r.status_code == 200, r.text
    r = client.post(
        "/v1/walls",
        json={
            "kind": "exclusionary",
            "title": "Screen Bob",
            "protects": {"clients": ["C-1"]},
            "screened": ["bob@firm.nl"],
        },
        headers=h,
    )
    assert r.status_code == 201, r.text
    acc = client.get("/v1/people/bob@firm.nl/access", params={"matter_id": "M-1"}, headers=h).json()
    assert acc["allowed"] is False
    assert "C-1" in acc["walls"][0]["why"] and "C-2" in acc["walls"][0]["why"]
    assert (
        client.get(
            "/v1/people/alice@firm.nl/access", params={"matter_id": "M-1"}, headers=h
        ).json()["allowed"]
        is True
    )
    conf = client.get("/v1/conflicts", params={"name": "acme"}, headers=h).json()
    assert conf["matches"][0]["matter_id"] == "M-1"
