"""Pseudo-relevance feedback on the sparse leg (EWALL_SPARSE_FEEDBACK_DOCUMENTS, off by
default): the first pass's top documents lend their shared lexemes to a second ranking of
the same walled pool."""

from __future__ import annotations

from typing import Any

from app.settings import Settings
from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm

QUERY = "huurachterstand ontbinding"
DOCUMENTS = {
    # the two best answers: both query words, and the same landlord's vocabulary
    "top1": "De huurachterstand leidde tot ontbinding. De verhuurder vorderde ontruiming van "
    "de woonruimte en betaling van de achterstallige huurpenningen.",
    "top2": "Na de huurachterstand volgde de ontbinding. De verhuurder eiste ontruiming van de "
    "woonruimte; de huurpenningen bleven onbetaald.",
    # one query word each: "landlord" shares the top documents' vocabulary, "company" is
    # shorter, so it ranks above "landlord" on the question's words alone
    "landlord": "De ontbinding werd door de verhuurder gevorderd, die ontruiming van de "
    "woonruimte wilde wegens onbetaalde huurpenningen.",
    "company": "De ontbinding van de vennootschap.",
    # no query word: feedback re-ranks the pool, it never adds to it
    "unmatched": "De verhuurder vorderde ontruiming van de woonruimte wegens huurpenningen.",
}


def test_feedback_lifts_the_document_that_shares_the_top_documents_words(
    db: DbHandle, settings: Settings, embedder: Any, auth: Tokens
) -> None:
    def ranking(documents: int, *, setup: bool = False) -> list[str]:
        custom = settings.model_copy(
            update={"sparse_feedback_documents": documents, "sparse_feedback_weight": 0.5}
        )
        with make_client(db, custom, embedder) as client:
            firm = Firm(client, auth)
            if setup:
                firm.person("alice@firm.nl")
                firm.client_("C", "Client")
                firm.matter("M", "C", team=["alice@firm.nl"])
                for external_id, text in DOCUMENTS.items():
                    firm.document(external_id, text, client_id="C", matter_id="M")
            hits = firm.search("alice@firm.nl", QUERY, mode="sparse", k=10)["results"]
            return [h["document"]["external_id"] for h in hits]

    without = ranking(0, setup=True)
    assert set(without[:2]) == {"top1", "top2"}
    assert without.index("company") < without.index("landlord")

    with_feedback = ranking(2)
    assert set(with_feedback[:2]) == {"top1", "top2"}
    assert with_feedback.index("landlord") < with_feedback.index("company")
    # the same pool, re-ranked: nothing the question's words did not match comes in
    assert sorted(with_feedback) == sorted(without)
    assert "unmatched" not in with_feedback

    # one document asked for: its lexemes need not occur in a second one
    assert ranking(1).index("landlord") < ranking(1).index("company")
