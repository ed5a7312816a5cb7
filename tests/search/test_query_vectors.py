"""A question asked again by the same person is not encoded again (app/resources.py
QueryVectors); another person's identical question is, so that nobody's response time says
what others in the firm searched for. Real PostgreSQL, the real encoder."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.resources import QueryVectors
from tests.conftest import Tokens
from tests.helpers import Firm

QUESTION = "octrooi inbreuk uitvinding"


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    for person in ("alice@firm.nl", "bob@firm.nl"):
        firm.person(person)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl", "bob@firm.nl"])
    for i in range(4):
        firm.document(f"d{i}", f"{QUESTION} nummer {i}", client_id="C-1", matter_id="M-1")
    return firm


def _ids(found: dict[str, Any]) -> list[tuple[str, float]]:
    return [(r["chunk_id"], r["score"]) for r in found["results"]]


def test_a_person_asking_again_waits_for_no_encoder(
    client: TestClient, auth: Tokens, embedder: Any
) -> None:
    firm = _firm(client, auth)
    calls = embedder.encode_calls
    first = firm.search("alice@firm.nl", QUESTION, k=3)
    assert embedder.encode_calls == calls + 1
    # the same question again, with another k and a filter: the vector is the one above
    again = firm.search("alice@firm.nl", QUESTION, k=2, filters={"doc_types": ["memo"]})
    same = firm.search("alice@firm.nl", QUESTION, k=3)
    assert embedder.encode_calls == calls + 1
    assert _ids(same) == _ids(first) and first["results"]
    assert again["retrieval_id"] != first["retrieval_id"]  # each search is audited
    # another person's identical question, and another question, are encoded
    firm.search("bob@firm.nl", QUESTION, k=3)
    assert embedder.encode_calls == calls + 2
    firm.search("alice@firm.nl", QUESTION + " nummer 2", k=3)
    assert embedder.encode_calls == calls + 3
    # a search without a dense leg encodes nothing and stores nothing
    firm.search("alice@firm.nl", "iets anders", k=3, mode="sparse")
    assert embedder.encode_calls == calls + 3


def test_the_cache_keeps_the_latest_questions_only() -> None:
    cache = QueryVectors(max_entries=2)
    cache.put("a", "m", "q1", "[1]")
    cache.put("a", "m", "q2", "[2]")
    assert cache.get("a", "m", "q1") == "[1]"  # q1 is now the most recent
    cache.put("a", "m", "q3", "[3]")
    assert cache.get("a", "m", "q2") is None
    assert (cache.get("a", "m", "q1"), cache.get("a", "m", "q3")) == ("[1]", "[3]")
    assert cache.get("b", "m", "q1") is None and cache.get("a", "other", "q1") is None
