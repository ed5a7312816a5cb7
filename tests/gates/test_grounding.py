"""The grounding gate: real PostgreSQL (chunks, RLS, audit log) and the real embedding model.

The search API is built elsewhere, so a retrieval is written here the way search writes
it: chunks inserted directly (as the superuser: chunks has RLS for the app role) and an
audit row through app.audit.chain.append_retrieval in a transaction of the app database.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING, Any

import psycopg
import pytest

from app.audit.chain import RetrievedChunk, append_retrieval, verify_chain
from app.embeddings import vector_literal
from app.gates.calibration import calibration_for
from tests.conftest import Tokens
from tests.gates.conftest import GateClient
from tests.helpers import audit_entry

if TYPE_CHECKING:
    from tests.conftest import DbHandle

ALICE = "alice@firm.nl"
BOB = "bob@firm.nl"

RETURNED = {
    "c-aansprakelijk": (
        "De werkgever is aansprakelijk voor de schade die de werknemer in de uitoefening "
        "van zijn werkzaamheden lijdt, tenzij hij aantoont dat hij zijn zorgplicht is nagekomen."
    ),
    "c-termijn": (
        "De termijn voor het instellen van hoger beroep bedraagt drie maanden na de dag van "
        "de uitspraak van het vonnis."
    ),
}
NOT_RETURNED = {
    "c-octrooi": (
        "Een octrooi wordt verleend voor uitvindingen die nieuw zijn, op uitvinderswerkzaamheid "
        "berusten en toegepast kunnen worden op het gebied van de nijverheid."
    ),
}
UNRELATED = "Het weer was zaterdag zonnig en de markt op het plein was druk bezocht."


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def insert_chunks(db: DbHandle, embedder: Any, chunks: dict[str, str]) -> None:
    vectors = embedder.embed_passages(list(chunks.values()))
    with psycopg.connect(db.superuser_url) as conn:
        document_id = conn.execute(
            "INSERT INTO documents (source, external_id, status, doc_type, title, source_acl_id,"
            " matter_id, client_id) VALUES ('folder', %s, 'active', 'memo', 'Memo', 'public',"
            " 'M-1', 'C-1') RETURNING document_id",
            (f"memo-{uuid.uuid4().hex[:8]}",),
        ).fetchone()[0]  # type: ignore[index]
        for ordinal, ((chunk_id, body), vector) in enumerate(
            zip(chunks.items(), vectors, strict=True)
        ):
            conn.execute(
                "INSERT INTO chunks (chunk_id, document_id, source, external_id, client_id,"
                " matter_id, wall_group_id, source_acl_id, doc_type, section_path, ordinal,"
                " body, embedding, content_sha256, token_count)"
                " SELECT %s, document_id, source, external_id, 'C-1', 'M-1', 'open', 'public',"
                " 'memo', '', %s, %s, CAST(%s AS vector), %s, %s FROM documents"
                " WHERE document_id = %s",
                (
                    chunk_id,
                    ordinal,
                    body,
                    vector_literal(vector),
                    sha(body),
                    len(body.split()),
                    document_id,
                ),
            )


def record_retrieval(
    db: DbHandle,
    person_id: str,
    chunk_ids: list[str],
    hashes: dict[str, str] | None = None,
    session_id: str | None = None,
) -> str:
    retrieval_id = uuid.uuid4()
    bodies = {**RETURNED, **NOT_RETURNED}
    row = audit_entry(
        retrieval_id=retrieval_id,
        person_id=person_id,
        query="aansprakelijkheid werkgever",
        model="gpt-x",
        prompt_version="v1",
        result_count=len(chunk_ids),
        session_id=session_id,
    )
    results = [
        RetrievedChunk(
            rank=rank,
            chunk_id=chunk_id,
            matter_id="M-1",
            content_sha256=(hashes or {}).get(chunk_id) or sha(bodies[chunk_id]),
            score=1.0 / rank,
        )
        for rank, chunk_id in enumerate(chunk_ids, start=1)
    ]
    with db.database.transaction() as conn:
        append_retrieval(conn, row, results)
    return str(retrieval_id)


@pytest.fixture
def corpus(db: DbHandle, embedder: Any) -> DbHandle:
    insert_chunks(db, embedder, {**RETURNED, **NOT_RETURNED})
    return db


def superuser(db: DbHandle, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(db.superuser_url) as conn:
        cur = conn.execute(sql, params)
        return cur.fetchall() if cur.description else []


def ground(client: Any, auth: Tokens, person: str, retrieval_id: str, answer: str) -> Any:
    return client.post(
        "/v1/gates/grounding",
        json={"retrieval_id": retrieval_id, "answer": answer},
        headers=auth(person, "lawyer"),
    )


def test_supported_and_unsupported_sentences(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    client = gate_client()
    answer = (
        "De werkgever is aansprakelijk voor schade die de werknemer lijdt bij zijn werk, tenzij "
        "hij zijn zorgplicht is nagekomen. " + UNRELATED
    )
    r = ground(client, auth, ALICE, rid, answer)
    assert r.status_code == 200, r.text
    body = r.json()
    threshold = calibration_for(client.app.state.resources.embedder.model_id).threshold  # type: ignore[attr-defined]
    assert body["threshold"] == threshold
    assert body["ok"] is False
    first, second = body["sentences"]
    assert first["supported"] is True, first
    assert first["best_chunk_id"] == "c-aansprakelijk"
    assert first["similarity"] >= threshold
    assert first["similarity"] == round(first["similarity"], 4)
    assert first["evidence"]["chunk_id"] == "c-aansprakelijk"
    assert second["text"] == UNRELATED
    assert second["supported"] is False
    assert second["similarity"] < threshold
    assert second["best_chunk_id"] in RETURNED
    assert [reason["kind"] for reason in second["reasons"]] == ["no_support"]
    assert body["trimmed_answer"] == first["text"]

    supported_only = ground(client, auth, ALICE, rid, RETURNED["c-termijn"])
    assert supported_only.status_code == 200
    assert supported_only.json()["ok"] is True
    [only] = supported_only.json()["sentences"]
    assert only["best_chunk_id"] == "c-termijn"
    assert only["similarity"] > 0.99


PARTIES = {
    "c-levering": "De floatglaslijn in Dordrecht is in 2019 door Helderglas B.V. aan Glastech "
    "geleverd.",
    "c-sluiting": "Helderglas sluit de floatglaslijn in Dordrecht per 1 maart 2021 wegens "
    "verliezen.",
}


def test_a_party_swapped_at_the_start_of_a_sentence_is_named(
    db: DbHandle, embedder: Any, gate_client: GateClient, auth: Tokens
) -> None:
    """The first word of a sentence is capitalised anyway, so it was never checked as a
    name: "Glastech sluit ..." for "Helderglas sluit ..." passed. A first word that the
    returned chunks use as a proper name (capitalised inside a sentence, never lower case)
    must now be in the supporting passage; a sentence opener ("De ...") is not a name."""
    insert_chunks(db, embedder, PARTIES)
    rid = record_retrieval(db, ALICE, list(PARTIES), {k: sha(v) for k, v in PARTIES.items()})
    swapped = PARTIES["c-sluiting"].replace("Helderglas", "Glastech", 1)
    r = ground(gate_client(), auth, ALICE, rid, f"{swapped} {PARTIES['c-sluiting']}")
    assert r.status_code == 200, r.text
    first, second = r.json()["sentences"]
    assert first["supported"] is False, first
    assert {"kind": "fact_mismatch", "detail": "Glastech"} in first["reasons"], first["reasons"]
    assert second["supported"] is True, second
    opener = ground(gate_client(), auth, ALICE, rid, PARTIES["c-levering"]).json()
    assert opener["ok"] is True, opener


def test_a_check_names_the_session_its_retrieval_was_made_in(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    """Before, any session id was accepted and the gate event filed under it, so a session's
    record could hold checks of retrievals made elsewhere."""
    rid = record_retrieval(corpus, ALICE, list(RETURNED), session_id="thread-1")
    client = gate_client()
    answer = RETURNED["c-termijn"]

    def check(session_id: str | None) -> Any:
        body: dict[str, Any] = {"retrieval_id": rid, "answer": answer}
        if session_id is not None:
            body["session_id"] = session_id
        return client.post("/v1/gates/grounding", json=body, headers=auth(ALICE, "lawyer"))

    assert check("thread-1").status_code == 200
    assert check(None).status_code == 200
    wrong = check("thread-2")
    assert wrong.status_code == 422, wrong.text
    assert wrong.json()["error"]["code"] == "session_mismatch"
    refused = superuser(
        corpus, "SELECT ok, outcome FROM gate_events WHERE request->>'session_id' = 'thread-2'"
    )
    assert refused == [(False, {"refused": {"status": 422, "code": "session_mismatch"}})]
    # a check that names no session is filed under the retrieval's: the session's record
    # holds both checks (before, the second was filed under none)
    filed = superuser(
        corpus, "SELECT ok FROM gate_events WHERE request->>'session_id' = 'thread-1'"
    )
    assert filed == [(True,), (True,)]
    # a retrieval made outside any session may be checked under the session named
    outside = record_retrieval(corpus, ALICE, list(RETURNED))
    body = {"retrieval_id": outside, "answer": answer, "session_id": "thread-3"}
    named = client.post("/v1/gates/grounding", json=body, headers=auth(ALICE, "lawyer"))
    assert named.status_code == 200, named.text


def test_a_chunk_the_retrieval_did_not_return_never_counts(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    client = gate_client()
    # word for word the text of a visible chunk that exists, but was not returned
    r = ground(client, auth, ALICE, rid, NOT_RETURNED["c-octrooi"])
    assert r.status_code == 200, r.text
    [sentence] = r.json()["sentences"]
    assert sentence["supported"] is False
    assert sentence["best_chunk_id"] != "c-octrooi"
    assert r.json()["ok"] is False


def test_chunks_no_longer_visible_support_nothing(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    rid = record_retrieval(corpus, ALICE, ["c-termijn"])
    client = gate_client()
    assert ground(client, auth, ALICE, rid, RETURNED["c-termijn"]).json()["ok"] is True
    # the matter went behind a wall since: the chunk moved out of the open group
    superuser(corpus, "UPDATE chunks SET wall_group_id = 'quarantine' WHERE chunk_id = 'c-termijn'")
    r = ground(client, auth, ALICE, rid, RETURNED["c-termijn"])
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is False
    [sentence] = r.json()["sentences"]
    assert {k: sentence[k] for k in ("text", "supported", "best_chunk_id", "similarity")} == {
        "text": RETURNED["c-termijn"],
        "supported": False,
        "best_chunk_id": None,
        "similarity": None,
    }
    assert sentence["evidence"] is None
    assert r.json()["trimmed_answer"] == ""


def test_deleted_chunks_and_changed_content_support_nothing(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    rid = record_retrieval(
        corpus, ALICE, ["c-aansprakelijk", "c-termijn"], hashes={"c-termijn": "0" * 64}
    )
    superuser(corpus, "DELETE FROM chunks WHERE chunk_id = 'c-aansprakelijk'")
    client = gate_client()
    answer = f"{RETURNED['c-aansprakelijk']} {RETURNED['c-termijn']}"
    body = ground(client, auth, ALICE, rid, answer).json()
    assert body["ok"] is False
    assert [s["supported"] for s in body["sentences"]] == [False, False]
    assert all(s["best_chunk_id"] is None for s in body["sentences"])


def test_only_the_person_who_retrieved_may_check(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    client = gate_client()
    r = ground(client, auth, BOB, rid, RETURNED["c-termijn"])
    assert r.status_code == 403, r.text
    assert r.json()["error"]["code"] == "forbidden"
    assert "only the person who made the retrieval" in r.json()["error"]["message"].lower()
    # the refusal is audited, without the answer
    [(person, ok, request, outcome)] = superuser(
        corpus, "SELECT person_id, ok, request, outcome FROM gate_events"
    )
    assert person == BOB
    assert ok is False
    assert request["retrieval_id"] == rid
    assert request["sentences"] == 1
    assert request["answer_sha256"] == sha(RETURNED["c-termijn"])
    assert outcome == {"refused": {"status": 403, "code": "forbidden"}}


def test_unknown_retrieval_is_404(corpus: DbHandle, gate_client: GateClient, auth: Tokens) -> None:
    client = gate_client()
    r = ground(client, auth, ALICE, str(uuid.uuid4()), "Een zin.")
    assert r.status_code == 404, r.text
    assert r.json()["error"]["code"] == "not_found"


def test_every_check_is_audited_in_the_chain(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    client = gate_client()
    answer = f"{RETURNED['c-termijn']} {UNRELATED}"
    assert ground(client, auth, ALICE, rid, answer).status_code == 200
    [(gate, ok, request, outcome)] = superuser(
        corpus, "SELECT gate, ok, request, outcome FROM gate_events"
    )
    assert gate == "grounding"
    assert ok is False
    assert request == {"retrieval_id": rid, "answer_sha256": sha(answer), "sentences": 2}
    assert [s["supported"] for s in outcome["sentences"]] == [True, False]
    assert outcome["sentences"][0]["best_chunk_id"] == "c-termijn"
    assert "zonnig" not in str(outcome)  # answers are not stored, only hashes
    with corpus.database.connect() as conn:
        assert verify_chain(conn, "gates").ok


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"retrieval_id": "not-a-uuid", "answer": "Een zin."}, "retrieval_id"),
        ({"retrieval_id": str(uuid.uuid4()), "answer": ""}, "answer"),
        ({"retrieval_id": str(uuid.uuid4()), "answer": "   \n "}, "answer"),
        ({"retrieval_id": str(uuid.uuid4())}, "answer"),
        ({"answer": "Een zin."}, "retrieval_id"),
        ({"retrieval_id": str(uuid.uuid4()), "answer": "x" * 200_001}, "answer"),
    ],
)
def test_validation(
    db: DbHandle, gate_client: GateClient, auth: Tokens, payload: dict[str, Any], field: str
) -> None:
    client = gate_client()
    r = client.post("/v1/gates/grounding", json=payload, headers=auth(ALICE, "lawyer"))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == field


def test_too_many_sentences(db: DbHandle, gate_client: GateClient, auth: Tokens) -> None:
    client = gate_client()
    payload = {"retrieval_id": str(uuid.uuid4()), "answer": "Een zin. " * 2001}
    r = client.post("/v1/gates/grounding", json=payload, headers=auth(ALICE, "lawyer"))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "too_many_sentences"
    assert r.json()["error"]["details"]["field"] == "answer"


def test_roles(db: DbHandle, gate_client: GateClient, auth: Tokens) -> None:
    client = gate_client()
    payload = {"retrieval_id": str(uuid.uuid4()), "answer": "Een zin."}
    assert client.post("/v1/gates/grounding", json=payload).status_code == 401
    r = client.post("/v1/gates/grounding", json=payload, headers=auth(ALICE, "admin"))
    assert r.status_code == 403


INVENTED = "Het cassatieberoep slaagt."


@pytest.mark.parametrize(
    "layout",
    [
        "- {copied}\n- {invented}",
        "* {copied} [2]\n* {invented} [2]",
        "1. {copied}\n2. {invented}",
        "<p>{copied}</p><p>{invented}</p>",
        "<ul><li>{copied}</li><li>{invented}</li></ul>",
        "{copied} **{invented}**",
        "{copied} {invented_lower}",
        "{copied}\n{invented_lower}",
        "## Antwoord\n\n{copied}\n\n| conclusie |\n|---|\n| {invented} |",
        # a review's layouts: underscores, glued bullets, nested or glued quotes, a long
        # heading, lettered and roman numbering, a lower-case start after "!"
        "_{copied}_ _{invented_lower}_",
        "•{copied_bare}\n•{invented}",
        ">> {copied}\n>> {invented_lower}",
        ">{copied}\n>{invented_lower}",
        "## {copied_bare}\n{invented}",
        "(a) {copied}\n(b) {invented_lower}",
        "i. {copied}\nii. {invented_lower}",
        "{copied_bare}! {invented_lower}",
        # a re-run's layouts: footnotes after the stop, a heading or lead-in that makes the
        # claim, a glued sentence, an invisible space, a marker, an inline bullet, "etc."
        "{copied}¹ {invented}",
        "{copied}[^1] {invented}",
        "{copied}(1) {invented}",
        "### {invented_bare}\n{copied}",
        "{invented_bare}:\n{copied}",
        "**{invented_bare}:** {copied}",
        "{copied_bare}.{invented}",
        "{copied}\u200b{invented}",
        "{copied} [2]{invented}",
        "{copied} • {invented}",
        "{copied_bare} etc. {invented}",
        # a measurement's layouts: quotes, stops of other scripts, symbols between
        # sentences, invisible marks, other footnotes, headings and lead-ins in more forms
        "„{copied}“ {invented}",
        "{copied_bare}． {invented}",
        "{copied} — {invented}",
        "{copied} → {invented}",
        "{copied} ✅ {invented}",
        "{copied} | {invented}",
        "{copied} (…) {invented}",
        "{copied}\u200e{invented}",
        "{copied}† {invented}",
        "{copied}⁽¹⁾ {invented}",
        "{invented_bare}\n{copied}",
        "{invented_bare}\n-----------------\n{copied}",
        "**{invented_bare}** {copied}",
        "- **{invented_bare}**: {copied}",
        "<details><summary>{invented_bare}</summary>{copied}</details>",
        "{copied} ![{invented_bare}](x.png)",
        "{copied_bare};\n{invented}",
        "{copied_bare} vol. {invented}",
    ],
)
def test_an_invented_sentence_in_markup_is_judged_on_its_own(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens, layout: str
) -> None:
    """A bullet, an HTML block, Markdown emphasis or a lower-case start joined an invented
    sentence to the copied one before it, and containment let the pair pass: the invented
    one shipped in trimmed_answer (a check of 2026-12-06)."""
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    copied = RETURNED["c-termijn"]
    answer = layout.format(
        copied=copied,
        copied_bare=copied.removesuffix("."),
        invented=INVENTED,
        invented_bare=INVENTED.removesuffix("."),
        invented_lower=INVENTED[0].lower() + INVENTED[1:],
    )
    body = ground(gate_client(), auth, ALICE, rid, answer).json()
    assert body["ok"] is False, body
    supported = [s["text"] for s in body["sentences"] if s["supported"]]
    assert len(supported) == 1 and copied.removesuffix(".") in supported[0], body
    assert "cassatieberoep" not in body["trimmed_answer"].lower()


@pytest.mark.parametrize(
    "layout",
    [
        "## Antwoord\n\n**Kern:** {copied}",
        "### Conclusie\n{copied}",
        "### Vergelijk\n{copied}",
        "## Termijn (art. 7:658 BW)\n{copied}",
        "De rechtbank oordeelt:\n\n1. {copied}",
        "- {copied_bare} [2];\n- {copied}",
    ],
)
def test_labels_and_list_punctuation_raise_no_alarm(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens, layout: str
) -> None:
    """A heading or lead-in that states nothing is not judged and not glued to the sentence
    under it, and a list item's marker may stand before its ";" (a measurement of realistic
    answers found each of these judged unsupported)."""
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    copied = RETURNED["c-termijn"]
    answer = layout.format(copied=copied, copied_bare=copied.removesuffix("."))
    body = ground(gate_client(), auth, ALICE, rid, answer).json()
    assert body["ok"] is True, body
