"""Ids stored decomposed before ids were read in NFC, re-keyed by `ewall ids normalize`.

An upgraded firm's matrix may hold "josé" as "jose" + U+0301, stored so by a version that
kept ids as sent (tests/walls/test_id_forms.py says why they are read in NFC now). The API
cannot name such an id any more: a wall naming the matter is refused as unknown, and a
screened person's token (its subject read in NFC) is not the person the wall screens.
`ewall ids check` finds them; `ewall ids normalize` moves them to NFC in every table that
stores them, or reports a collision (both spellings stored) and leaves it as stored.

The old rows are made as an old version stored them: the firm is built through the API,
then every stored copy of the id (every text column outside the audit chains) is rewritten
decomposed, with the foreign keys' and the triggers' checks off, as one database.
"""

from __future__ import annotations

import json
import logging
import unicodedata
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg import sql

from app.audit.chain import append_gate_event, append_retrieval
from app.cli import build_parser
from app.matrix import rekey
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm, audit_entry, ok, retag, retrieved, superuser_rows

PERSON = unicodedata.normalize("NFC", "josé@firm.nl")
CLIENT = unicodedata.normalize("NFC", "C-SÃO")
MATTER = unicodedata.normalize("NFC", "M-ÉÉN")
TEXT = "De huurder vordert ontbinding van de huurovereenkomst."
QUERY = "huurovereenkomst ontbinding"
# the audit chains are never rewritten (an old version wrote them decomposed; nothing reads
# them as the matrix)
AUDIT = {"audit_retrievals", "audit_retrieval_results", "audit_access_sets", "audit_heads",
         "gate_events", "policy_events"}
_TEXT_COLUMNS = """
SELECT c.relname, a.attname FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
  AND a.atttypid = CAST('text' AS regtype)
ORDER BY 1, 2
"""


def nfd(value: str) -> str:
    return unicodedata.normalize("NFD", value)


def _columns(conn: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    return [(str(t), str(c)) for t, c in conn.execute(_TEXT_COLUMNS) if t not in AUDIT]


def store_decomposed(db: DbHandle, *ids: str) -> None:
    """Every stored copy of ``ids`` (NFC) rewritten decomposed, as a version that kept ids
    as sent stored them; the policy version moves so the service reads the matrix again."""
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("SET session_replication_role = replica")  # no FK or trigger checks
        for table, column in _columns(conn):
            for value in ids:
                conn.execute(
                    sql.SQL("UPDATE {} SET {} = %s WHERE {} = %s").format(
                        sql.Identifier(table), sql.Identifier(column), sql.Identifier(column)
                    ),
                    (nfd(value), value),
                )
        conn.execute("UPDATE policy_state SET version = version + 1")


def stored_at(db: DbHandle, value: str) -> set[str]:
    """Where ``value`` is stored, past row-level security: "table.column" (the raw ids a
    source gave are kept as given)."""
    found: set[str] = set()
    with psycopg.connect(db.superuser_url) as conn:
        for table, column in _columns(conn):
            if column.endswith("_raw"):
                continue
            hit = conn.execute(
                sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE {} = %s)").format(
                    sql.Identifier(table), sql.Identifier(column)
                ),
                (value,),
            ).fetchone()
            if hit and hit[0]:
                found.add(f"{table}.{column}")
    return found


def ids_cli(db: DbHandle, command: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    settings = make_settings(database_url=db.app_url, migrations_database_url=db.superuser_url)
    args = build_parser().parse_args(["ids", command])
    capsys.readouterr()
    code: int = args.handler(args, settings)
    return code, json.loads(capsys.readouterr().out)


def _policy_version(db: DbHandle) -> int:
    return int(superuser_rows(db, "SELECT version FROM policy_state")[0][0])


@pytest.fixture
def old_firm(client: TestClient, auth: Tokens, db: DbHandle) -> Firm:
    """Alice on the matter's team, josé screened from it by a wall, bob a stranger to it;
    one document filed under the matter, one under an open matter M-2; the person, client
    and matter stored decomposed."""
    firm = Firm(client, auth)
    for person in (PERSON, "alice@firm.nl", "bob@firm.nl"):
        firm.person(person)
    firm.client_(CLIENT, name="São Paulo Vastgoed")
    firm.matter(MATTER, CLIENT, team=["alice@firm.nl", PERSON], title="Huur")
    firm.document("d-1", TEXT, client_id=CLIENT, matter_id=MATTER)
    firm.client_("C-2")
    firm.matter("M-2", "C-2")
    firm.document("d-2", TEXT, client_id="C-2", matter_id="M-2")
    firm.wall(kind="exclusionary", protects={"matters": [MATTER]}, screened=[PERSON])
    retag(client)
    store_decomposed(db, PERSON, CLIENT, MATTER)
    return firm


def test_check_finds_them_and_normalize_rekeys_them_under_their_walls(
    old_firm: Firm, client: TestClient, db: DbHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    firm = old_firm
    # what the upgrade left: josé's token names nobody the matrix holds, nor does his id,
    # and the matter cannot be walled by its name
    assert client.get(f"/v1/people/{PERSON}", headers=firm.h).status_code == 404
    assert firm.matters_seen("alice@firm.nl", QUERY) == {nfd(MATTER), "M-2"}
    refused = client.post(
        "/v1/walls",
        json={"kind": "exclusionary", "title": "w", "reason": "r",
              "protects": {"matters": [MATTER]}, "screened": ["bob@firm.nl"]},
        headers=firm.h,
    )
    assert refused.status_code == 422, refused.text
    assert stored_at(db, nfd(MATTER)) >= {"matters.matter_id", "documents.matter_id",
                                           "chunks.matter_id", "wall_protected_matters.matter_id"}

    code, report = ids_cli(db, "check", capsys)
    assert code == 1
    found = {(s["kind"], s["stored"]): s for s in report["remaining"]}
    assert set(found) == {("person", nfd(PERSON)), ("client", nfd(CLIENT)),
                          ("matter", nfd(MATTER))}
    assert found[("matter", nfd(MATTER))]["nfc"] == MATTER
    places = found[("matter", nfd(MATTER))]["places"]
    assert places["documents.matter_id"] == 1 and places["chunks.matter_id"] >= 1
    assert found[("client", nfd(CLIENT))]["places"]["chunks.client_id"] >= 1
    assert found[("person", nfd(PERSON))]["places"]["wall_people.person_id"] == 1
    assert report["collisions"] == []

    before = _policy_version(db)
    code, report = ids_cli(db, "normalize", capsys)
    assert code == 0, report
    assert len(report["rekeyed"]) == 3 and report["remaining"] == []
    assert report["policy_version"] == before + 1
    for value in (PERSON, CLIENT, MATTER):
        assert stored_at(db, nfd(value)) == set(), value  # no copy left decomposed
    assert "search_postings.matter_id" in stored_at(db, MATTER)  # rebuilt under the new id
    event = superuser_rows(
        db, "SELECT details FROM policy_events WHERE action = 'ids.normalized'"
    )
    assert {(c["type"], c["from"], c["id"]) for c in event[0][0]["changes"]} == {
        ("person", nfd(PERSON), PERSON), ("client", nfd(CLIENT), CLIENT),
        ("matter", nfd(MATTER), MATTER)}

    retag(client)
    # the API names them again, and the walls stored under the old ids hold under the new
    assert ok(client.get(f"/v1/matters/{MATTER}", headers=firm.h))["client_id"] == CLIENT
    assert ok(client.get(f"/v1/people/{PERSON}", headers=firm.h))["person_id"] == PERSON
    assert firm.access(PERSON, MATTER)["allowed"] is False  # still screened
    assert firm.matters_seen(PERSON, QUERY) == {"M-2"}
    assert firm.matters_seen("alice@firm.nl", QUERY) == {MATTER, "M-2"}
    # a wall issued on the NFC matter covers the document filed under the old spelling
    assert firm.matters_seen("bob@firm.nl", QUERY) == {MATTER, "M-2"}
    firm.wall(kind="exclusionary", protects={"matters": [MATTER]}, screened=["bob@firm.nl"])
    retag(client)
    assert firm.matters_seen("bob@firm.nl", QUERY) == {"M-2"}
    assert firm.matters_seen("alice@firm.nl", QUERY) == {MATTER, "M-2"}

    # a second run finds nothing and changes nothing
    version = _policy_version(db)
    assert ids_cli(db, "check", capsys) == (0, {"found": 0, "rekeyed": [], "remaining": [],
                                                "collisions": [], "policy_version": None})
    code, report = ids_cli(db, "normalize", capsys)
    assert (code, report["rekeyed"], report["policy_version"]) == (0, [], None)
    assert _policy_version(db) == version


def test_a_collision_is_reported_and_left_as_stored(
    old_firm: Firm, client: TestClient, db: DbHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    """After the upgrade a PUT naming the person and the matter made NFC twins beside the
    decomposed rows: which is the person, which holds the documents, is for the firm to say.
    Both are reported and neither moves; the client, which has no twin, is re-keyed."""
    firm = old_firm
    firm.person(PERSON)
    firm.matter(MATTER, "C-2", team=["alice@firm.nl"], title="Huur (twin)")
    assert len(superuser_rows(db, "SELECT 1 FROM people WHERE person_id IN (%s, %s)",
                              PERSON, nfd(PERSON))) == 2
    decomposed_person = stored_at(db, nfd(PERSON))
    decomposed_matter = stored_at(db, nfd(MATTER))

    code, report = ids_cli(db, "check", capsys)
    assert code == 1
    collisions = {(c["kind"], c["nfc"]): c for c in report["collisions"]}
    assert set(collisions) == {("person", PERSON), ("matter", MATTER)}
    spellings = {s["stored"]: s["places"] for s in collisions[("matter", MATTER)]["spellings"]}
    assert set(spellings) == {MATTER, nfd(MATTER)}
    assert spellings[nfd(MATTER)]["documents.matter_id"] == 1

    for _ in range(2):  # the same answer on a second run
        code, report = ids_cli(db, "normalize", capsys)
        assert code == 1
        assert {(c["kind"], c["nfc"]) for c in report["collisions"]} == set(collisions)
        assert {(s["kind"], s["stored"]) for s in report["remaining"]} == {
            ("person", nfd(PERSON)), ("matter", nfd(MATTER))}
        assert stored_at(db, nfd(PERSON)) == decomposed_person
        assert stored_at(db, nfd(MATTER)) == decomposed_matter
    # the one without a twin moved, its decomposed matter's reference with it
    assert stored_at(db, nfd(CLIENT)) == set()
    rows = superuser_rows(db, "SELECT matter_id, client_id FROM matters WHERE matter_id <> 'M-2'")
    assert sorted(rows) == sorted([(MATTER, "C-2"), (nfd(MATTER), CLIENT)])


def test_start_and_readyz_name_the_check_while_such_ids_are_stored(
    old_firm: Firm,
    client: TestClient,
    db: DbHandle,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Informational: the service serves on (re-keying is the firm's step)."""
    with caplog.at_level(logging.WARNING, logger="ewall.ids"):
        assert rekey.warn_at_start(rekey.IdsLook(db.database)) is True
    assert "ewall ids check" in caplog.text
    checks = client.get("/readyz").json()["checks"]
    assert checks["ids_nfc"] == {"ok": False, "check": "ewall ids check"}
    assert ids_cli(db, "normalize", capsys)[0] == 0
    checks = client.get("/readyz").json()["checks"]
    assert checks["ids_nfc"] == {"ok": True, "check": "ewall ids check"}
    assert rekey.warn_at_start(rekey.IdsLook(db.database)) is False


def test_a_look_that_fails_is_one_line_with_its_type_and_sqlstate(
    db: DbHandle, settings: Any, embedder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The start and every /readyz probe logged the look's failure with a full traceback
    (about 60 lines a probe): now one line naming the error's type and SQLSTATE, once while
    the same error recurs, and a look that works again is read as before."""
    with psycopg.connect(db.superuser_url, autocommit=True) as conn:
        conn.execute(sql.SQL("REVOKE SELECT ON people FROM {}").format(
            sql.Identifier(db.database.app_role)))
    with caplog.at_level(logging.WARNING, logger="ewall.ids"), make_client(
        db, settings, embedder
    ) as client:  # the start looks
        for _ in range(3):
            assert "ids_nfc" not in client.get("/readyz").json()["checks"]
        failures = [r for r in caplog.records if r.name == "ewall.ids"]
        with psycopg.connect(db.superuser_url, autocommit=True) as conn:
            conn.execute(sql.SQL("GRANT SELECT ON people TO {}").format(
                sql.Identifier(db.database.app_role)))
        assert client.get("/readyz").json()["checks"]["ids_nfc"]["ok"] is True
    assert [(r.getMessage(), r.exc_info) for r in failures] == [
        ("could not look for ids stored in another form than NFC: InsufficientPrivilege "
         "(SQLSTATE 42501)", None)
    ]
    assert "Traceback" not in caplog.text


def test_readyz_looks_for_them_again_only_when_the_policy_moved(
    old_firm: Firm,
    client: TestClient,
    db: DbHandle,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The look scans every person, client and matter, and /readyz answers anyone: probes in
    a loop must not repeat it (while one runs, another probe answers 503)."""
    looks: list[bool] = []
    look = rekey.any_stored

    def counted(conn: Any) -> bool:
        looks.append(look(conn))
        return looks[-1]

    monkeypatch.setattr(rekey, "any_stored", counted)
    for _ in range(3):
        assert client.get("/readyz").json()["checks"]["ids_nfc"]["ok"] is False
    assert looks == [True]
    assert ids_cli(db, "normalize", capsys)[0] == 0  # bumps the policy version
    assert client.get("/readyz").json()["checks"]["ids_nfc"]["ok"] is True
    assert looks == [True, False]


def test_audit_filters_find_rows_recorded_under_the_old_spelling(
    old_firm: Firm,
    client: TestClient,
    auth: Tokens,
    db: DbHandle,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Audit rows are never rewritten: those an old version recorded under the decomposed
    ids are found by the person and matter filters, which read the NFC id, and a reader's
    hidden matters hide them too."""
    retrieved(client, nfd(PERSON), nfd(MATTER), "s-jose")  # before the wall screened him
    retrieved(client, "alice@firm.nl", nfd(MATTER), "s-alice")
    with db.database.transaction() as conn:
        append_gate_event(conn, person_id=nfd(PERSON), gate="session", ok=True,
                          request={}, outcome={})
    assert ids_cli(db, "normalize", capsys)[0] == 0
    compliance = auth("c@firm.nl", "compliance")

    def sessions(headers: dict[str, str], **params: str) -> list[str | None]:
        rows = ok(client.get("/v1/audit/retrievals", params=params, headers=headers))["items"]
        return sorted(r["session_id"] for r in rows if r["session_id"])

    assert sessions(compliance, person_id=PERSON) == ["s-jose"]
    assert sessions(compliance, matter_id=MATTER) == ["s-alice", "s-jose"]
    events = ok(client.get("/v1/audit/gate-events", params={"person_id": PERSON},
                           headers=compliance))["items"]
    assert [e["person_id"] for e in events] == [nfd(PERSON)]  # as recorded
    # alice may see the matter: her row names it; josé is screened from it now: a filter on
    # it matches nothing of his, and his own row withholds it
    alice = auth("alice@firm.nl", "lawyer")
    assert sessions(alice, session_id="s-alice", matter_id=MATTER) == ["s-alice"]
    own = ok(client.get("/v1/audit/retrievals", params={"session_id": "s-alice"},
                        headers=alice))["items"]
    assert [r["results"][0]["matter_id"] for r in own] == [nfd(MATTER)]  # not withheld
    jose = auth(PERSON, "lawyer")
    assert sessions(jose, session_id="s-jose", matter_id=MATTER) == []
    own = ok(client.get("/v1/audit/retrievals", params={"session_id": "s-jose"},
                        headers=jose))["items"]
    assert [r["results"][0].get("withheld") for r in own] == [True]


def test_the_policy_event_filter_reads_the_object_id_in_nfc(
    client: TestClient, auth: Tokens
) -> None:
    """The person and matter filters read their id in NFC; the policy events' object_id did
    not: typed decomposed, it matched only events recorded under that spelling (before ids
    were read in NFC), never the ones since."""
    firm = Firm(client, auth)
    firm.client_(CLIENT)
    firm.matter(MATTER, CLIENT)
    compliance = auth("c@firm.nl", "compliance")
    for spelled in (MATTER, nfd(MATTER)):
        events = ok(client.get("/v1/audit/policy-events", params={"object_id": spelled},
                               headers=compliance))["items"]
        assert [e["object_id"] for e in events] == [MATTER], spelled


def test_a_session_bound_under_the_old_spelling_stays_bound(
    client: TestClient, auth: Tokens, db: DbHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    """An old version recorded a session bound to the matter decomposed, under its person's
    id decomposed: after the re-key the session is still bound to that matter (narrowed to
    it), and binding it to another is refused as before."""
    person = unicodedata.normalize("NFC", "alicé@firm.nl")
    firm = Firm(client, auth)
    firm.person(person)
    firm.client_("C-1")
    for matter, external_id in ((MATTER, "d-1"), ("M-2", "d-2")):
        firm.matter(matter, "C-1", team=[person], title=external_id)
        firm.document(external_id, TEXT, client_id="C-1", matter_id=matter)
    retag(client)
    store_decomposed(db, person, MATTER)
    entry = audit_entry(person_id=nfd(person), session_id="s-old",
                        session_matter_id=nfd(MATTER), session_scope="bound")
    with db.database.transaction() as conn:
        append_retrieval(conn, entry, [])
    assert ids_cli(db, "normalize", capsys)[0] == 0
    assert firm.matters_seen(person, QUERY) == {MATTER, "M-2"}
    assert firm.matters_seen(person, QUERY, session_id="s-old") == {MATTER}
    assert firm.matters_seen(person, QUERY, session_id="s-old", session_matter_id=MATTER) == {
        MATTER}
    other = client.post("/v1/search", json={"query": QUERY, "session_id": "s-old",
                                            "session_matter_id": "M-2"},
                        headers=auth(person, "lawyer"))
    assert other.status_code == 409, other.text
