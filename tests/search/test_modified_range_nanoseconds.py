"""The search's modified range given finer than a microsecond, against ``modified_at`` stored
in microseconds: ``modified_from`` (``>=``) is rounded up, ``modified_to`` (``<=``) cut, so
a bound admits exactly the rows on its side of the instant written (app/search/schemas.py
``Filters``). Both were cut: ``modified_from=…00.0000001Z`` took a document modified at
``…00Z``, 100 ns before the range began.

A document's own ``modified_at`` is a time, not a bound: it is stored as the microsecond it
falls in (cut), as every connector and the export folder read it (``datetime.fromisoformat``
cuts), so a document pushed and the same document crawled compare equal. Against that, a
bound rounded as above never admits a document modified before ``modified_from`` and never
drops one modified up to ``modified_to``."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import one_matter_firm

LAWYER = "nina@firm.nl"
TEXT = "huurovereenkomst ontbinding wegens tekortkoming van de verhuurder"


@pytest.fixture
def search(client: TestClient, auth: Tokens) -> Any:
    firm = one_matter_firm(client, auth, LAWYER, {})
    firm.document("D-1", TEXT, client_id="C-1", matter_id="M-1",
                  modified_at="2026-01-01T00:00:00Z")  # fmt: skip
    firm.document("D-2", TEXT + " tweede", client_id="C-1", matter_id="M-1",
                  modified_at="2026-03-01T10:00:00.0000009+01:00")  # fmt: skip

    def run(**filters: str) -> Any:
        return client.post(
            "/v1/search",
            json={"query": TEXT, "mode": "sparse", "filters": filters},
            headers=auth(LAWYER, "lawyer"),
        )

    return run


def _found(answer: Any) -> set[str]:
    assert answer.status_code == 200, answer.text
    return {r["document"]["external_id"] for r in answer.json()["results"]}


def test_a_lower_bound_finer_than_a_microsecond_admits_nothing_before_it(search: Any) -> None:
    assert _found(search(modified_from="2026-01-01T00:00:00.0000001Z")) == {"D-2"}
    assert _found(search(modified_from="2026-01-01T01:00:00.000000001+01:00")) == {"D-2"}
    assert _found(search(modified_from="2025-12-31T23:59:59.9999999Z")) == {"D-1", "D-2"}
    assert _found(search(modified_from="2026-01-01T00:00:00.0000000Z")) == {"D-1", "D-2"}


def test_an_upper_bound_finer_than_a_microsecond_drops_nothing_inside_it(search: Any) -> None:
    assert _found(search(modified_to="2026-01-01T00:00:00.0000001Z")) == {"D-1"}
    assert _found(search(modified_to="2025-12-31T23:59:59.9999999Z")) == set()
    # the pushed document's own time, written as it was pushed: inside the range
    assert _found(search(modified_to="2026-03-01T10:00:00.0000009+01:00")) == {"D-1", "D-2"}


def test_a_range_inside_one_microsecond_is_empty_and_one_inverted_there_is_422(
    search: Any,
) -> None:
    # no stored time lies in it, and it does not end before it begins
    inside = search(modified_from="2026-01-01T00:00:00.0000001Z",
                    modified_to="2026-01-01T00:00:00.0000005Z")  # fmt: skip
    assert _found(inside) == set()
    inverted = search(modified_from="2026-01-01T00:00:00.0000005Z",
                      modified_to="2026-01-01T00:00:00.0000001Z")  # fmt: skip
    assert inverted.status_code == 422, inverted.text
    assert inverted.json()["error"]["details"]["field"] == "filters.modified_to"
    # a range of one instant, written finer than a microsecond, is not inverted
    one = search(modified_from="2026-01-01T00:00:00.0000005Z",
                 modified_to="2026-01-01T01:00:00.0000005+01:00")  # fmt: skip
    assert _found(one) == set()


def test_a_documents_own_time_is_the_microsecond_it_falls_in(search: Any) -> None:
    hits = search(modified_from="2026-03-01T00:00:00Z").json()["results"]
    assert [h["document"]["modified_at"] for h in hits] == ["2026-03-01T09:00:00Z"]
