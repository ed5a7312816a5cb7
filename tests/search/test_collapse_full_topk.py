"""Invariant 3 for a collapsed search: ``"collapse": "document"`` returns k documents when
the person may see k matching documents, however many of the best chunks one document holds.

Each leg reads a fixed depth of chunks (COLLAPSE_DEPTH_FACTOR x k when collapsing); the
collapse keeps one hit per document among them. A document whose chunks fill that depth
left the other documents out: 1 document for k = 3 with 5 visible (a check of 2026-12-12)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import one_matter_firm

LAWYER = "alice@firm.nl"
QUESTION = "huurachterstand ontbinding huurovereenkomst ontruiming"
# one long document about the question: many chunks, each nearer to it than anything else
LONG = " ".join(
    f"De huurder heeft een huurachterstand van {n} maanden; de verhuurder vordert ontbinding "
    f"van de huurovereenkomst en ontruiming van woning {n}."
    for n in range(120)
)
# four short ones that match the question more weakly
SHORT = {
    f"short-{n}": f"Een geschil over de ontruiming van bedrijfsruimte {n}; het octrooi op de "
    "coating van glas staat niet ter discussie."
    for n in range(4)
}


@pytest.mark.parametrize("mode", ["dense", "sparse", "hybrid"])
def test_a_collapsed_search_returns_k_documents(
    db: DbHandle, embedder: Any, auth: Tokens, mode: str
) -> None:
    # shallow legs (the depth is COLLAPSE_DEPTH_FACTOR x k = 15 chunks), as a corpus of long
    # documents makes the default depth
    settings = make_settings(dense_candidates=1, sparse_candidates=1)
    with make_client(db, settings, embedder) as client:
        firm = one_matter_firm(client, auth, LAWYER, {"long": LONG, **SHORT})
        plain = firm.search(LAWYER, QUESTION, mode=mode, k=15)["results"]
        assert {r["document"]["external_id"] for r in plain} == {"long"}  # not vacuous
        collapsed = firm.search(LAWYER, QUESTION, mode=mode, k=3, collapse="document")
        documents = [r["document"]["external_id"] for r in collapsed["results"]]
        assert len(documents) == 3 == len(set(documents)), documents
        assert documents[0] == "long"
        # every document it may see, when k asks for more
        everything = firm.search(LAWYER, QUESTION, mode=mode, k=10, collapse="document")
        assert {r["document"]["external_id"] for r in everything["results"]} == {"long", *SHORT}
