"""The grounding gate on answers built from real decisions (issue 28), end to end: decisions of
../shared/corpus pushed through the API, a real search (its audit row), an answer made of
the returned chunks' own sentences, altered ones and sentences of a decision that was not
ingested; the real encoder and PostgreSQL."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.caselaw.parse import parse_rechtspraak
from app.gates import grounding
from app.gates.judge import Calibration
from app.gates.sentences import split_sentences
from tests.conftest import Tokens
from tests.fakes.rechtspraak import manifest, rechtspraak_dir
from tests.helpers import Firm, ok
from tests.shared_data import require

ALICE = "alice@firm.nl"
INGESTED = ("ECLI:NL:HR:1997:AA3187", "ECLI:NL:HR:1997:AA2094")  # parking tax; a tax case
ELSEWHERE = "ECLI:NL:HR:1995:AA3071"  # never ingested: its sentences are unrelated
QUERY = "parkeerbelasting Purmerend verordening"


def decision_text(ecli: str) -> str:
    row = next(r for r in manifest() if r["ecli"] == ecli)
    record = parse_rechtspraak((rechtspraak_dir() / row["file"]).read_bytes())
    return "\n\n".join(s.text for s in record.sections)


def usable(sentence: str) -> bool:
    return 8 <= len(sentence.split()) <= 60 and "[" not in sentence


@pytest.fixture
def retrieval(client: TestClient, auth: Tokens) -> dict[str, Any]:
    require((rechtspraak_dir() / "manifest.tsv").exists(), "../shared/corpus (Rechtspraak)")
    firm = Firm(client, auth)
    firm.person(ALICE)
    firm.client_("C-1", "Gemeente")
    firm.matter("M-1", "C-1", team=[ALICE])
    for ecli in INGESTED:
        firm.document(ecli, decision_text(ecli), client_id="C-1", matter_id="M-1")
    out = firm.search(ALICE, QUERY, k=4)
    assert len(out["results"]) >= 2, out
    return out


def ground(client: TestClient, auth: Tokens, rid: str, answer: str) -> dict[str, Any]:
    return dict(
        ok(
            client.post(
                "/v1/gates/grounding",
                json={"retrieval_id": rid, "answer": answer},
                headers=auth(ALICE, "lawyer"),
            )
        )
    )


def sentences_of(result: dict[str, Any]) -> list[str]:
    return [s for s in split_sentences(result["text"]) if usable(s)]


def test_copied_changed_negated_unrelated_and_trimmed(
    client: TestClient, auth: Tokens, retrieval: dict[str, Any]
) -> None:
    results = retrieval["results"]
    pool = [(r, s) for r in results for s in sentences_of(r)]
    first_result, copied = pool[0]
    numbered = next(s for _, s in pool if re.search(r"\d", s))
    number = re.search(r"\d+", numbered)
    assert number is not None
    changed_value = str(int(number.group(0)) + 1)
    changed = numbered[: number.start()] + changed_value + numbered[number.end() :]
    plain = next(
        s for _, s in pool if re.search(r" (is|wordt|heeft) ", s) and not re.search(
            r"\b(niet|geen|nooit)\b", s)
    )
    negated = re.sub(r" (is|wordt|heeft) ", r" \1 niet ", plain, count=1)
    unrelated = next(s for s in split_sentences(decision_text(ELSEWHERE)) if usable(s))

    answer = "\n\n".join([copied, changed, negated, unrelated])
    body = ground(client, auth, retrieval["retrieval_id"], answer)
    assert body["ok"] is False
    first, second, third, fourth = body["sentences"]

    # copied word for word: supported, with the passage that holds it
    assert first["supported"] is True, first
    assert first["reasons"] == []
    assert first["evidence"]["chunk_id"] == first_result["chunk_id"]
    assert copied in first["evidence"]["passage"]
    assert first["evidence"]["rank"] == first_result["rank"]

    # one number changed: unsupported whatever its similarity, the number named
    assert second["supported"] is False, second
    assert {"kind": "fact_mismatch", "detail": changed_value} in second["reasons"] or any(
        r["kind"] == "fact_mismatch" and changed_value in r["detail"] for r in second["reasons"]
    ), second["reasons"]

    # a negation added: unsupported, reason negation
    assert third["supported"] is False, third
    assert any(r["kind"] == "negation" for r in third["reasons"]), third["reasons"]

    # a sentence of a decision this retrieval did not return
    assert fourth["supported"] is False, fourth
    assert fourth["reasons"][0]["kind"] == "no_support"

    assert body["trimmed_answer"] == copied
    assert body["threshold"] == pytest.approx(body["threshold"])  # named, calibrated


def test_markers_are_checked_against_the_ranks_they_cite(
    client: TestClient, auth: Tokens, retrieval: dict[str, Any]
) -> None:
    results = retrieval["results"]
    holder = results[0]
    sentence = next(
        s for s in sentences_of(holder) if all(s not in r["text"] for r in results[1:])
    )
    wrong_rank = results[1]["rank"]
    past = len(results) + 2
    answer = (
        f"{sentence} [{holder['rank']}]\n\n{sentence} [{wrong_rank}]\n\n{sentence} [{past}]"
    )
    body = ground(client, auth, retrieval["retrieval_id"], answer)
    right, wrong, out_of_range = body["sentences"]

    assert right["cited"] == [holder["rank"]]
    assert right["cited_supported"] is True and right["supported"] is True, right

    assert wrong["cited"] == [wrong_rank]
    assert wrong["cited_supported"] is False
    assert wrong["supported"] is False
    [misattributed] = [r for r in wrong["reasons"] if r["kind"] == "misattributed"]
    assert f"rank {holder['rank']}" in misattributed["detail"]
    assert holder["chunk_id"] in misattributed["detail"]

    assert out_of_range["cited_supported"] is False
    assert any(r["kind"] == "marker_out_of_range" for r in out_of_range["reasons"])

    # the trimmed answer keeps the sentence whose marker holds, with its marker
    assert body["trimmed_answer"] == f"{sentence} [{holder['rank']}]"
    # a sentence without markers has none to report
    plain = ground(client, auth, retrieval["retrieval_id"], sentence)["sentences"][0]
    assert plain["cited"] is None and plain["cited_supported"] is None


def test_at_lexical_weight_one_nothing_is_encoded_and_nothing_changes(
    client: TestClient, auth: Tokens, retrieval: dict[str, Any], embedder: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At containment alone (lexical weight 1, the calibration of an encoder without its
    own entry) the cosine is multiplied by 0, so the gate encodes nothing, and its verdicts,
    scores and evidence are those of the encoded path (issue 28, cost)."""
    results = retrieval["results"]
    pool = [s for r in results for s in sentences_of(r)]
    unrelated = next(s for s in split_sentences(decision_text(ELSEWHERE)) if usable(s))
    answer = "\n\n".join([*pool[:3], unrelated])
    calls: list[int] = []
    real = embedder.embed_passages

    def counted(texts: list[str], **kw: Any) -> Any:
        calls.append(len(texts))
        return real(texts, **kw)

    monkeypatch.setattr(embedder, "embed_passages", counted)
    monkeypatch.setattr(
        grounding, "calibration_for",
        lambda model_id, override=None: Calibration(0.8, 1.0, "test"),
    )
    lexical = ground(client, auth, retrieval["retrieval_id"], answer)
    assert calls == []

    # the same answer with the cosine weighed in by a hair: the encoder runs, and every
    # verdict and piece of evidence is the same
    monkeypatch.setattr(
        grounding, "calibration_for",
        lambda model_id, override=None: Calibration(lexical["threshold"], 0.999999, "test"),
    )
    encoded = ground(client, auth, retrieval["retrieval_id"], answer)
    assert calls, "the encoded path ran the encoder"
    for a, b in zip(lexical["sentences"], encoded["sentences"], strict=True):
        assert (a["supported"], a["reasons"], a["evidence"]) == (
            b["supported"], b["reasons"], b["evidence"]
        )
        if a["similarity"] is not None:
            assert a["similarity"] == pytest.approx(b["similarity"], abs=1e-4)


RENT = (
    "De kantonrechter veroordeelt gedaagde tot betaling van een huurachterstand van € 36.250. "
    "Daarnaast is een contractuele boete van € 7.250 verschuldigd. De huur is per 1 maart "
    "2024 opgezegd; de woning moet op 15 april 2024 zijn ontruimd."
)


def test_a_value_swapped_for_another_the_passage_states_is_unsupported(
    client: TestClient, auth: Tokens
) -> None:
    """Every value of the swapped sentences is in the returned chunk, said of something
    else: the gate names it; the same values said of what the chunk says them of stand."""
    firm = Firm(client, auth)
    firm.person(ALICE)
    firm.client_("C-1", "Verhuurder B.V.")
    firm.matter("M-1", "C-1", team=[ALICE])
    firm.document("vonnis", RENT, client_id="C-1", matter_id="M-1")
    found = firm.search(ALICE, "huurachterstand boete ontruiming", k=3)
    assert found["results"], found
    swapped = [
        "De kantonrechter veroordeelt gedaagde tot betaling van een huurachterstand van € 7.250.",
        "De huur is per 15 april 2024 opgezegd.",
    ]
    faithful = [
        "De kantonrechter veroordeelt gedaagde tot betaling van € 36.250.",
        "De woning moet op 15 april 2024 zijn ontruimd.",
    ]
    body = ground(client, auth, found["retrieval_id"], " ".join(swapped + faithful))
    verdicts = body["sentences"]
    assert [v["supported"] for v in verdicts] == [False, False, True, True], verdicts
    assert {"kind": "fact_mismatch", "detail": "€ 7.250"} in verdicts[0]["reasons"]
    assert {"kind": "fact_mismatch", "detail": "15 april 2024"} in verdicts[1]["reasons"]
    assert body["trimmed_answer"] == " ".join(faithful)


def test_markers_before_the_full_stop_are_markers(
    client: TestClient, auth: Tokens, retrieval: dict[str, Any]
) -> None:
    """"... [2]." is how language models usually cite; its digits are no number of the
    sentence (a fuzz found the right rank flagged fact_mismatch "2" and the wrong one
    supported). A reversed range and a rank too long for int() are out of range, not 500."""
    results = retrieval["results"]
    holder = results[0]
    sentence = next(
        s for s in sentences_of(holder) if all(s not in r["text"] for r in results[1:])
    ).rstrip(".")
    right, wrong = holder["rank"], results[1]["rank"]
    answer = "\n\n".join(
        [
            f"{sentence} [{right}].",
            f"{sentence} [{wrong}].",
            f"{sentence}. [9-7]",
            f"{sentence}. [{'9' * 4301}]",
        ]
    )
    body = ground(client, auth, retrieval["retrieval_id"], answer)
    cited, misattributed, reversed_range, overlong = body["sentences"]
    assert cited["supported"] and cited["cited"] == [right] and cited["cited_supported"], cited
    assert not misattributed["supported"] and misattributed["cited"] == [wrong]
    assert [r["kind"] for r in misattributed["reasons"]] == ["misattributed"], misattributed
    for out in (reversed_range, overlong):
        assert not out["supported"]
        assert "marker_out_of_range" in [r["kind"] for r in out["reasons"]], out
    assert body["trimmed_answer"] == f"{sentence} [{right}]."


def test_the_decisions_own_ecli_in_its_title_grounds_a_citation(
    client: TestClient, auth: Tokens
) -> None:
    """An answer names the decision it relies on; the ECLI stands in the document's title
    (shown in the search result), not in the chunk's text."""
    require((rechtspraak_dir() / "manifest.tsv").exists(), "../shared/corpus (Rechtspraak)")
    firm = Firm(client, auth)
    firm.person(ALICE)
    firm.client_("C-1", "Gemeente")
    firm.matter("M-1", "C-1", team=[ALICE])
    ecli = INGESTED[0]
    title = f"{ecli} (Hoge Raad)"
    firm.document(ecli, decision_text(ecli), client_id="C-1", matter_id="M-1", title=title)
    out = firm.search(ALICE, QUERY, k=2)
    holder = out["results"][0]
    assert holder["document"]["title"] == title
    sentence = next(s for s in sentences_of(holder) if ecli not in s).rstrip(".")
    other = ecli[:-1] + ("8" if ecli[-1] != "8" else "9")
    answer = f"{sentence} ({ecli}).\n\n{sentence} ({other})."
    own, wrong = ground(client, auth, out["retrieval_id"], answer)["sentences"]
    assert own["supported"], own
    assert not wrong["supported"]
    assert wrong["reasons"] == [{"kind": "fact_mismatch", "detail": other}], wrong
