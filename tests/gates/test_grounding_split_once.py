"""The grounding route checks an answer's size and its person's character budget before it
splits the answer, and splits it once (the sentences are passed on, also to a redo on the
primary). The splitter is wrapped with a counter; PostgreSQL and the encoder are real."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from app.gates import grounding, router
from app.gates.sentences import answer_sentences
from tests.conftest import DbHandle, Tokens
from tests.gates.conftest import GateClient
from tests.gates.test_grounding import (
    ALICE,
    NOT_RETURNED,
    RETURNED,
    ground,
    insert_chunks,
    record_retrieval,
)

ANSWER = "De werkgever is aansprakelijk voor de schade. De termijn is drie maanden."


@pytest.fixture
def splits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per split, wherever the gate imported the splitter."""
    calls: list[int] = []

    def counted(text: str) -> list[str]:
        calls.append(len(text))
        return answer_sentences(text)

    counted_split: Callable[[str], list[str]] = counted
    monkeypatch.setattr(router, "answer_sentences", counted_split)
    monkeypatch.setattr(grounding, "answer_sentences", counted_split, raising=False)
    return calls


@pytest.fixture
def corpus(db: DbHandle, embedder: Any) -> DbHandle:
    insert_chunks(db, embedder, {**RETURNED, **NOT_RETURNED})
    return db


def test_an_answer_is_split_once(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens, splits: list[int]
) -> None:
    client = gate_client()
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    r = ground(client, auth, ALICE, rid, ANSWER)
    assert r.status_code == 200, r.text
    assert len(r.json()["sentences"]) == 2
    assert splits == [len(ANSWER)]


def test_a_too_long_answer_is_refused_before_it_is_split(
    db: DbHandle, gate_client: GateClient, auth: Tokens, splits: list[int]
) -> None:
    client = gate_client(grounding_max_chars=1000)
    rid = record_retrieval(db, ALICE, [])
    r = ground(client, auth, ALICE, rid, "." * 5000 + "x")
    assert r.status_code == 422 and r.json()["error"]["code"] == "answer_too_long", r.text
    assert splits == []


def test_an_answer_over_the_character_budget_is_refused_before_it_is_split(
    db: DbHandle, gate_client: GateClient, auth: Tokens, splits: list[int]
) -> None:
    client = gate_client(grounding_chars_per_minute=len(ANSWER) + 10)
    rid = record_retrieval(db, ALICE, [])
    assert ground(client, auth, ALICE, rid, ANSWER).status_code == 200
    assert splits == [len(ANSWER)]
    r = ground(client, auth, ALICE, rid, ANSWER)
    assert r.status_code == 429 and r.json()["error"]["details"]["scope"] == (
        "grounding_characters"
    ), r.text
    assert splits == [len(ANSWER)]  # the refused call split nothing
