"""Invariant 3 for a question of more lexemes than the sparse leg ranks (RANK_LEXEME_LIMIT,
16): a sparse search returns k chunks when the person may see k that hold a word of it.

The ranking lexemes are the most informative ones, and only they were matched: a question of
16 words that no visible chunk holds plus "huurachterstand" found nothing, though 6 visible
chunks hold it, and 17 rare words plus "huurachterstand" found 16 of 23 (a check of
2026-12-12). A search without a dense leg (mode sparse, or hybrid where EWALL_DENSE_WEIGHT is
0, the English model's calibrated weight) that comes back short re-runs with every lexeme
ranked."""

from __future__ import annotations

from typing import Any

import pytest

from app.search.service import RANK_LEXEME_LIMIT
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import one_matter_firm

LAWYER = "alice@firm.nl"
RARE = [
    "zwavelzuur", "retardtablet", "glasvezelnet", "windturbine", "mestoverschot", "ijsbaan",
    "kermisattractie", "zeilschip", "tulpenbol", "pindakaas", "fietsenstalling", "dakgoot",
    "waterschap", "koelcel", "veerpont", "brandtrap", "lantaarnpaal",
]  # fmt: skip
HUUR = {f"huur-{n}": f"De huurder heeft een huurachterstand van {n} maanden." for n in range(6)}
OTHER = {f"rare-{i}": f"Het geschil gaat over een {w} in de gemeente." for i, w in enumerate(RARE)}


@pytest.mark.parametrize(("mode", "dense_weight"), [("sparse", 1.0), ("hybrid", 0.0)])
def test_a_long_question_finds_every_visible_chunk_holding_one_of_its_words(
    db: DbHandle, embedder: Any, auth: Tokens, mode: str, dense_weight: float
) -> None:
    assert len(RARE) > RANK_LEXEME_LIMIT
    settings = make_settings(dense_weight=dense_weight)
    with make_client(db, settings, embedder) as client:
        firm = one_matter_firm(client, auth, LAWYER, {**HUUR, **OTHER})
        # words no visible chunk holds, then one that six hold
        unknown = " ".join(f"qqq{letter}xyz" for letter in "abcdefghijklmnopq")
        found = firm.search(LAWYER, f"{unknown} huurachterstand", mode=mode, k=10)
        assert sorted(r["document"]["external_id"] for r in found["results"]) == sorted(HUUR)
        # more rare words than are ranked, and a common one: all 23 chunks that hold one
        question = " ".join([*RARE, "huurachterstand"])
        found = firm.search(LAWYER, question, mode=mode, k=30)
        ids = sorted(r["document"]["external_id"] for r in found["results"])
        assert ids == sorted([*HUUR, *OTHER]), ids
        # k of them when k are asked for
        assert len(firm.search(LAWYER, question, mode=mode, k=20)["results"]) == 20
