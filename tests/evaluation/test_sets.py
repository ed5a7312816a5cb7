"""Relevance sets: TREC and JSON-lines formats, import/export round trips through the
database, bad input, and the starter set's file and loader."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.evaluation import repository, sets
from app.evaluation.repository import Judgement, QueryIn
from app.evaluation.sets import FormatError
from app.evaluation.starter import (
    ANSWER_ECLIS,
    STARTER_ECLIS,
    STARTER_JUDGE,
    STARTER_SET_NAME,
    load_starter_set,
    starter_queries,
)
from tests.conftest import DbHandle

CHUNK = "imanage:ACTIVE!12.1:0123456789abcdef"
AT = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)


def _queries() -> list[QueryIn]:
    return [
        QueryIn(
            "q1",
            "Wanneer is een beroep op dwaling gegrond?",
            None,
            [
                Judgement("q1", "document", "rechtspraak:ECLI:NL:HR:1996:AA2015", 3, "ann", AT),
                Judgement("q1", "document", "rechtspraak:ECLI:NL:HR:1996:AA2015", 2, "bob", AT),
                Judgement("q1", "chunk", CHUNK, 1, "ann", AT),
            ],
        ),
        # whitespace inside an external id must survive the whitespace-separated qrels
        QueryIn(
            "q2",
            "Huur en onderhuur",
            "alice@firm.nl",
            [
                Judgement("q2", "document", "folder:dossiers/brief 12%.pdf", 0, "ann", AT),
            ],
        ),
        QueryIn("q3", "Een vraag zonder oordelen", None, []),
    ]


def _canon(queries: list[QueryIn]) -> list[tuple[object, ...]]:
    return sorted(
        (
            q.key,
            q.text,
            q.as_person,
            tuple(
                sorted(
                    (
                        j.target_kind,
                        j.target_id,
                        j.grade,
                        j.judged_by,
                        j.judged_at.isoformat() if j.judged_at else "",
                    )
                    for j in q.judgements
                )
            ),
        )
        for q in queries
    )


def test_trec_round_trip_keeps_one_consensus_grade_per_target() -> None:
    queries = _queries()
    tsv = sets.format_queries_tsv(queries)
    qrels = sets.format_qrels(queries)
    assert tsv.splitlines()[0] == "q1\tWanneer is een beroep op dwaling gegrond?"
    lines = qrels.splitlines()
    # mean of 3 and 2 is 2.5, rounded half up to 3; chunks carry the chunk: prefix
    assert "q1 0 rechtspraak:ECLI:NL:HR:1996:AA2015 3" in lines
    assert f"q1 0 chunk:{CHUNK} 1" in lines
    assert "q2 0 folder:dossiers/brief%2012%25.pdf 0" in lines
    back = sets.merge_trec(sets.parse_queries_tsv(tsv), sets.parse_qrels(qrels, "importer"))
    assert [(q.key, q.text) for q in back] == [(q.key, q.text) for q in queries]
    got = {(j.query_key, j.target_kind, j.target_id, j.grade) for q in back for j in q.judgements}
    assert got == {
        ("q1", "document", "rechtspraak:ECLI:NL:HR:1996:AA2015", 3),
        ("q1", "chunk", CHUNK, 1),
        ("q2", "document", "folder:dossiers/brief 12%.pdf", 0),
    }
    assert {j.judged_by for q in back for j in q.judgements} == {"importer"}


def test_jsonl_round_trip_keeps_every_judgement() -> None:
    queries = _queries()
    text = sets.format_jsonl(queries, name="s1", description="beschrijving")
    header, back = sets.parse_jsonl(text, "importer")
    assert header == {"name": "s1", "description": "beschrijving"}
    assert back == queries


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("q1 0 rechtspraak:X 4\n", "grade must be an integer 0-3"),
        ("q1 0 rechtspraak:X two\n", "grade must be an integer 0-3"),
        ("q1 0 rechtspraak:X\n", "expected 'qid 0 docid grade'"),
        ("q1 0 no-colon 1\n", "must look like <source>:<external_id>"),
        ("q1 0 chunk:api:doc:nothex 1\n", "must look like <source>:<external_id>:<16 hex>"),
        ("q/1 0 rechtspraak:X 1\n", "query key"),
    ],
)
def test_bad_qrels_name_the_line(data: str, message: str) -> None:
    with pytest.raises(FormatError, match=message) as info:
        sets.parse_qrels("# comment\n\n" + data, "x")
    assert info.value.line == 3


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"text": "x"}', "'query_key' must be a non-empty string"),
        (
            '{"query_key": "q", "text": "x", "judgements": [{"target_id": "a:b", "grade": true}]}',
            "grade must be an integer",
        ),
        (
            '{"query_key": "q", "text": "x", "judgements": [{"target_kind": "page", '
            '"target_id": "a:b", "grade": 1}]}',
            "target_kind must be",
        ),
        (
            '{"query_key": "q", "text": "x", "judgements": [{"target_id": "a:b", "grade": 1, '
            '"judged_at": "2026-01-01T10:00:00"}]}',
            "time zone",
        ),
        ('{"query_key": "q", "text": "nul\\u0000byte"}', "control characters"),
    ],
)
def test_bad_jsonl_is_refused(line: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        sets.parse_jsonl(line, "x")


def test_queries_file_and_qrels_must_agree() -> None:
    with pytest.raises(FormatError, match="expected 'qid<TAB>text'"):
        sets.parse_queries_tsv("q1 without a tab\n")
    queries = sets.parse_queries_tsv("q1\teen vraag\n")
    with pytest.raises(FormatError, match="missing from the queries file"):
        sets.merge_trec(queries, sets.parse_qrels("q9 0 api:x 1\n", "x"))


def test_database_round_trip_and_replace(db: DbHandle) -> None:
    queries = _queries()
    with db.database.transaction() as conn:
        set_id = sets.import_queries(conn, "roundtrip", "een set", "tester", queries)
    with db.database.transaction() as conn:
        info = repository.get_set(conn, "roundtrip")
        assert info is not None and info.set_id == set_id and info.queries == 3
        exported = sets.export_queries(conn, set_id)
    assert _canon(exported) == _canon(queries)

    # importing the export again changes nothing; a changed grade replaces the old one
    regraded = [
        QueryIn(
            "q1",
            "Wanneer is een beroep op dwaling gegrond?",
            None,
            [Judgement("q1", "chunk", CHUNK, 2, "ann", AT)],
        )
    ]
    with db.database.transaction() as conn:
        sets.import_queries(conn, "roundtrip", "", "tester", exported)
        sets.import_queries(conn, "roundtrip", "", "tester", regraded, replace=True)
        after = sets.export_queries(conn, set_id)
        info = repository.get_set(conn, "roundtrip")
    assert info is not None and info.description == "een set"  # "" keeps the description
    assert [q.key for q in after] == ["q1"]
    assert {(j.target_id, j.judged_by, j.grade) for j in after[0].judgements} == {
        ("rechtspraak:ECLI:NL:HR:1996:AA2015", "ann", 3),
        ("rechtspraak:ECLI:NL:HR:1996:AA2015", "bob", 2),
        (CHUNK, "ann", 2),
    }


def test_a_query_whose_text_changed_loses_the_judgements_of_its_old_text(db: DbHandle) -> None:
    """A fuzz of the evaluation API: a set re-imported with another text for q1 kept q1's
    grades, which then counted for the new question."""
    with db.database.transaction() as conn:
        set_id = sets.import_queries(conn, "retext", "", "tester", _queries())
        before = {q.key: q for q in sets.export_queries(conn, set_id)}
    assert before["q1"].judgements
    asked_again = [
        QueryIn("q1", "Iets heel anders?", None, [Judgement("q1", "chunk", CHUNK, 1, "ann", AT)]),
        before["q2"],
    ]
    with db.database.transaction() as conn:
        sets.import_queries(conn, "retext", "", "tester", asked_again)
        after = {q.key: q for q in sets.export_queries(conn, set_id)}
    assert [(j.target_id, j.grade) for j in after["q1"].judgements] == [(CHUNK, 1)]
    assert _canon([after["q2"]]) == _canon([before["q2"]])  # same text: kept


def test_set_and_key_names_are_checked(db: DbHandle) -> None:
    with db.database.transaction() as conn, pytest.raises(FormatError, match="set name"):
        sets.import_queries(conn, "no spaces please", "", "t", [])
    with db.database.transaction() as conn, pytest.raises(FormatError, match="occurs twice"):
        sets.import_queries(conn, "dups", "", "t", [QueryIn("a", "x"), QueryIn("a", "y")])


# --- the starter set -----------------------------------------------------------------------


def test_starter_file_is_consistent() -> None:
    queries = starter_queries()
    keys = [q.key for q in queries]
    assert len(queries) >= 40 and len(set(keys)) == len(keys)
    paraphrases = [k for k in keys if k.startswith("para-")]
    assert len(paraphrases) * 2 >= len(queries)
    assert all(k.startswith(("para-", "own-")) for k in keys)
    targets = {j.target_id for q in queries for j in q.judgements}
    answers = {j.target_id for q in queries for j in q.judgements if j.grade == 3}
    # every judged decision is in the list the demo ingests; every query has its answer
    assert targets <= {f"rechtspraak:{e}" for e in STARTER_ECLIS}
    assert answers == {f"rechtspraak:{e}" for e in ANSWER_ECLIS}
    assert all(sum(j.grade == 3 for j in q.judgements) == 1 for q in queries)
    assert len(STARTER_ECLIS) == len(set(STARTER_ECLIS)) <= 65
    assert all(
        j.target_kind == "document" and j.judged_by == STARTER_JUDGE
        for q in queries
        for j in q.judgements
    )


def test_starter_loader_is_idempotent_and_keeps_ratings(db: DbHandle) -> None:
    assert load_starter_set(db.database, created_by="demo") == STARTER_SET_NAME
    with db.database.transaction() as conn:
        info = repository.get_set(conn, STARTER_SET_NAME)
        assert info is not None
        first = _canon(sets.export_queries(conn, info.set_id))
        # a lawyer's rating made later must survive a reload
        qid = conn.exec_driver_sql(
            "SELECT query_id FROM relevance_queries WHERE set_id = %s AND query_key = 'own-01'",
            (info.set_id,),
        ).scalar_one()
        ids = {"own-01": int(qid)}
        sets.upsert_judgements(
            conn, ids, [Judgement("own-01", "document", "api:x", 1, "lawyer@firm.nl")]
        )
    assert load_starter_set(db.database, created_by="demo") == STARTER_SET_NAME
    with db.database.transaction() as conn:
        again = sets.export_queries(conn, info.set_id)
    starter_only = [
        QueryIn(
            q.key, q.text, q.as_person, [j for j in q.judgements if j.judged_by == STARTER_JUDGE]
        )
        for q in again
    ]
    assert _canon(starter_only) == first
    assert any(j.judged_by == "lawyer@firm.nl" for q in again for j in q.judgements)
    shipped = json.loads(sets.format_jsonl(again).splitlines()[0])
    assert shipped["query_key"] == "para-01"
