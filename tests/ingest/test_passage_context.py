"""A chunk is encoded with its own document's context in front of it (app/embeddings.py
passage_input): the decision's summary, else the document's title. A stored vector is reused
for a copy of the text only when the encoder would read the very same input, so a vector never
carries another document's title or summary (one that may sit behind a wall)."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest
from fastapi.testclient import TestClient

from app.embeddings import (
    CONTEXT_MAX_TOKENS,
    Embedder,
    is_summary_section,
    passage_input,
    vector_literal,
)
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, superuser_rows

BODY = "De verhuurder vordert ontbinding van de huurovereenkomst wegens een huurachterstand."
SUMMARY = "Huurrecht. Ontbinding wegens betalingsachterstand; de rechter wijst de vordering toe."


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    f = Firm(client, auth)
    f.client_("C-1", "Acme B.V.")
    f.client_("C-2", "Beta N.V.")
    f.matter("M-1", "C-1")
    f.matter("M-2", "C-2")
    return f


def _stored(db: DbHandle, external_id: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    [(vector,)] = superuser_rows(
        db, "SELECT CAST(embedding AS text) FROM chunks WHERE external_id = %s", external_id
    )
    return np.array([float(x) for x in str(vector).strip("[]").split(",")])


def _cos(a: Any, b: Any) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_context_is_the_summary_else_the_title_cut_to_what_fits(embedder: Embedder) -> None:
    limit = embedder.max_passage_tokens
    title = "ECLI:NL:RBAMS:2020:1 (Rechtbank Amsterdam, 2020-01-01)"

    def make(path: str, summary: str | None, body: str = BODY, lim: int = limit) -> str:
        return passage_input(embedder, lim, body, path, title, summary)

    assert make("uitspraak / 3", SUMMARY) == f"{SUMMARY}\n{BODY}"
    assert make("uitspraak / 3", None) == f"{title}\n{BODY}"
    assert make("uitspraak / 3", "") == f"{title}\n{BODY}"
    # the summary chunk itself is the summary: it gets the title
    assert make("Inhoudsindicatie", SUMMARY, SUMMARY) == f"{title}\n{SUMMARY}"
    # no room beside a chunk at the encoder's limit: the chunk alone
    full = embedder.count_tokens(BODY)
    assert make("uitspraak", SUMMARY, lim=full + 4) == BODY
    # some room: whole words of the context, never more than fits
    cut = make("uitspraak", SUMMARY, lim=full + 4 + 8)
    context = cut.split("\n")[0]
    assert SUMMARY.startswith(context) and 0 < embedder.count_tokens(context) <= 8
    long_summary = " ".join([SUMMARY] * 40)
    context = make("uitspraak", long_summary).split("\n")[0]
    assert 0 < embedder.count_tokens(context) <= CONTEXT_MAX_TOKENS


SECTION_PATHS = [
    "inhoudsindicatie",
    "Inhoudsindicatie",
    "INHOUDSINDICATIE/2",
    "  inhoudsindicatie",
    "\tInhoudsindicatie\n",
    "inhoudsindicaties",
    "inhoud",
    "uitspraak",
    "uitspraak/inhoudsindicatie",
    "beslissing",
    "",
    " ",
    "\xa0inhoudsindicatie",  # a non-breaking space: not ASCII white space, in neither
    "\u2003inhoudsindicatie",
    "\x1cinhoudsindicatie",
    "\u0130nhoudsindicatie",  # a dotted capital I: PostgreSQL's lower() would make it "i"
    "\vinhoudsindicatie",
    "vinhoudsindicatie",
]


def test_the_summary_rule_is_the_same_in_sql_and_python(db: DbHandle) -> None:
    """Ingestion's vector reuse and the re-embed worker find a document's summary in SQL
    (ewall_is_summary_section); the encoder input is built in Python (is_summary_section)."""
    for path in SECTION_PATHS:
        [(in_sql,)] = superuser_rows(db, "SELECT ewall_is_summary_section(%s)", path)
        assert in_sql is is_summary_section(path), repr(path)


def test_a_chunk_is_encoded_after_its_documents_title(
    firm: Firm, db: DbHandle, embedder: Embedder
) -> None:
    title = "Dagvaarding huurachterstand Jansen"
    firm.document("ctx-1", BODY, client_id="C-1", matter_id="M-1", title=title)
    stored = _stored(db, "ctx-1")
    [expected, bare] = embedder.embed_passages([f"{title}\n{BODY}", BODY])
    assert _cos(stored, expected) > 0.9999
    assert _cos(stored, bare) < 0.9999  # the context changed the vector


def test_a_copy_reuses_a_vector_only_for_the_same_input(
    firm: Firm, db: DbHandle, embedder: Embedder
) -> None:
    """The same text under the same title (a copy) gets the stored vector; under another
    title, in a matter behind another wall, it is encoded with its own title. The first
    copy's vector is replaced by a marker, so only a reuse can give the second one it."""
    firm.document("ctx-a", BODY, client_id="C-1", matter_id="M-1", title="Huurzaak Jansen")
    marker = embedder.embed_passages(["een ander document over iets anders"])[0]
    with psycopg.connect(db.superuser_url, autocommit=True) as su:
        su.execute(
            "UPDATE chunks SET embedding = CAST(%s AS vector) WHERE external_id = 'ctx-a'",
            (vector_literal(marker),),
        )
    firm.document("ctx-b", BODY, client_id="C-1", matter_id="M-1", title="Huurzaak Jansen")
    firm.document("ctx-c", BODY, client_id="C-2", matter_id="M-2", title="Arbeidszaak Pietersen")
    a, b, c = (_stored(db, e) for e in ("ctx-a", "ctx-b", "ctx-c"))
    assert np.array_equal(a, b) and _cos(b, marker) > 0.9999  # reused, not encoded again
    assert _cos(c, marker) < 0.9999
    [own_c, title_a] = embedder.embed_passages(
        [f"Arbeidszaak Pietersen\n{BODY}", f"Huurzaak Jansen\n{BODY}"]
    )
    assert _cos(c, own_c) > 0.9999 and _cos(c, title_a) < 0.9999


def _chunk(db: DbHandle, external_id: str) -> tuple[str, str, str]:
    [row] = superuser_rows(
        db,
        "SELECT chunk_id, embedding_model, CAST(embedding AS text) FROM chunks"
        " WHERE external_id = %s",
        external_id,
    )
    return str(row[0]), str(row[1]), str(row[2])


def test_a_new_title_re_encodes_the_chunks_that_stay(
    firm: Firm, db: DbHandle, embedder: Embedder
) -> None:
    """The same text under a new title: the chunk stays (same id, not re-inserted) and its
    vector becomes that of the new title; the same title again encodes nothing."""
    firm.document("ctx-r", BODY, client_id="C-1", matter_id="M-1", title="Huurzaak Jansen")
    chunk_id, model, _ = _chunk(db, "ctx-r")
    renamed_doc = firm.document(
        "ctx-r", BODY, client_id="C-1", matter_id="M-1", title="Ontruiming Jansen"
    )
    assert renamed_doc["status"] == "updated", renamed_doc  # its vectors changed
    again_id, again_model, literal = _chunk(db, "ctx-r")
    assert (again_id, again_model) == (chunk_id, model)
    stored = _stored(db, "ctx-r")
    [renamed, old] = embedder.embed_passages(
        [f"Ontruiming Jansen\n{BODY}", f"Huurzaak Jansen\n{BODY}"]
    )
    assert _cos(stored, renamed) > 0.9999 and _cos(stored, old) < 0.9999

    encoded = embedder.encoded_texts
    firm.document(
        "ctx-r", BODY, client_id="C-1", matter_id="M-1", title="Ontruiming Jansen", doc_type="memo"
    )
    assert embedder.encoded_texts == encoded  # a change of anything else encodes nothing
    assert _chunk(db, "ctx-r")[2] == literal
