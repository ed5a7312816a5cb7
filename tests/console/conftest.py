"""A small firm for the console tests, built through the API, and a console sign-in helper."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm, retag

PARTNER = "carl@firm.nl"  # conflicts
COMPLIANCE = "cora@firm.nl"  # compliance
LAWYER = "lena@firm.nl"  # lawyer on both Acme matters
OTHER = "otto@firm.nl"  # lawyer elsewhere

CSRF_FIELD = re.compile(r'name="csrf" value="([^"]+)"')


def build_firm(client: TestClient, auth: Tokens) -> Firm:
    f = Firm(client, auth)
    for person in (PARTNER, COMPLIANCE, LAWYER, OTHER):
        f.person(person)
    f.client_("C-1", "Acme Holding B.V.")
    f.client_("C-2", "Acme Logistics B.V.", parent="C-1")
    f.client_("C-3", "Beta Pharma B.V.")
    f.matter(
        "M-1",
        "C-1",
        team=[LAWYER],
        title="Acme v. Beta",
        parties=[{"name": "Beta Pharma B.V.", "role": "adverse"}],
    )
    f.matter("M-2", "C-2", team=[LAWYER], title="Acme Logistics lease")
    f.matter("M-3", "C-3", team=[OTHER], title="Beta Pharma licensing")
    f.document(
        "m1-memo",
        "Memo over de lekkage van het magazijn en de schadevergoeding voor Acme.",
        client_id="C-1",
        matter_id="M-1",
        title="Memo lekkage",
    )
    f.document(
        "m2-lease",
        "Huurovereenkomst magazijn Acme Logistics: lekkage en onderhoud dak.",
        client_id="C-2",
        matter_id="M-2",
        title="Huurovereenkomst",
    )
    f.document(
        "m3-licence",
        "Licentie Beta Pharma: royalty's en lekkage van vertrouwelijke data.",
        client_id="C-3",
        matter_id="M-3",
        title="Licentie",
    )
    retag(client)
    return f


@pytest.fixture
def firm(db: DbHandle, settings: Settings, embedder: Any, auth: Tokens) -> Iterator[Firm]:
    with make_client(db, settings, embedder) as client:
        yield build_firm(client, auth)


def csrf_of(html: str) -> str:
    match = CSRF_FIELD.search(html)
    assert match, "no csrf field on the page"
    return match.group(1)


def sign_in(client: TestClient, auth: Tokens, person: str, *roles: str) -> Any:
    """Signs in through the form; returns the POST's response (a 303 on success)."""
    page = client.get("/console/signin")
    assert page.status_code == 200, page.text
    token = auth(person, *roles)["Authorization"].removeprefix("Bearer ")
    return client.post(
        "/console/signin",
        data={"token": token, "csrf": csrf_of(page.text)},
        follow_redirects=False,
    )


def console_client(firm: Firm, base_url: str = "http://testserver") -> TestClient:
    """A second client on the same app (its own cookie jar)."""
    return TestClient(firm.client.app, base_url=base_url, raise_server_exceptions=False)
