"""A path id is read as its write stores it: trimmed, then NFC (app/types.py id_key).

``PUT /v1/people/abc%20`` stored person ``abc`` (ids are trimmed) and answered ``abc``, while
``GET /v1/people/abc%20`` looked up ``abc `` (404) and ``/v1/people/abc%20/access`` explained
``abc `` as someone outside the matrix, who sees every unwalled matter, although ``abc`` is
screened (a black-box round of 2026-12-07). The document routes read their path's source
as a push stores it the same way.
"""

from __future__ import annotations

from typing import Annotated

from fastapi.testclient import TestClient
from pydantic import StringConstraints, TypeAdapter

from app.types import WHITE_SPACE, id_key
from tests.conftest import Tokens
from tests.helpers import Firm, ok


def test_every_matrix_read_trims_the_path_id_as_the_write_did(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    written = ok(
        client.put(
            "/v1/people/abc%20",
            json={"name": "Abc", "active": True, "aliases": []},
            headers=firm.h,
        )
    )
    assert written["person_id"] == "abc"
    firm.person("other@firm.nl")
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=["abc"])
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["abc"])
    for spelled in ("abc%20", "%20abc", "abc%C2%A0", "%E3%80%80abc%09"):
        assert ok(client.get(f"/v1/people/{spelled}", headers=firm.h))["person_id"] == "abc"
        access = ok(
            client.get(f"/v1/people/{spelled}/access", params={"matter_id": "M-1 "}, headers=firm.h)
        )
        assert access["allowed"] is False, (spelled, access)
        assert access["walls"], access  # the wall that screens abc, not "outside the matrix"
    assert ok(client.get("/v1/clients/C-1%20", headers=firm.h))["client_id"] == "C-1"
    found = ok(client.get("/v1/matters/%20M-1", headers=firm.h))
    assert found["matter_id"] == "M-1"
    assert found["team"] == ["abc"]
    # the audit's filters read ids alike
    compliance = auth("c@firm.nl", "compliance")
    events = ok(
        client.get("/v1/audit/policy-events", params={"object_id": " M-1 "}, headers=compliance)
    )["items"]
    assert events, "the matter's policy events, filtered by its id with spaces"


def test_a_document_path_reads_its_source_as_the_push_stored_it(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.client_("C-1")
    firm.matter("M-1", "C-1")
    firm.document(
        "D-1",
        "De huurder vordert ontbinding.",
        source=" imanage ",
        client_id="C-1",
        matter_id="M-1",
    )
    assert ok(client.get("/v1/documents/imanage%20/D-1", headers=firm.h))
    assert ok(client.delete("/v1/documents/%20imanage/D-1", headers=firm.h))["deleted"] is True
    # folded case is still refused: nothing stores "IManage", nothing is removed on a guess
    assert client.delete("/v1/documents/IManage/D-1", headers=firm.h).status_code == 422


def test_the_lookup_trims_exactly_what_a_write_trims() -> None:
    """U+001C-U+001F are white space to str.strip(), not to pydantic's trim: a write refuses
    them as control characters, so a read must not trim them into someone's id."""
    trimmed = TypeAdapter(Annotated[str, StringConstraints(strip_whitespace=True)])
    for code in range(0x3100):
        ch = chr(code)
        assert (trimmed.validate_python("a" + ch) == "a") == (ch in WHITE_SPACE), hex(code)
    assert id_key("abc\x1f") == "abc\x1f"
    assert id_key(" jose\u0301\u3000") == "jos\u00e9"
