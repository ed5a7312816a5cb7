"""Search through the API: no leaks, full top-k at every selectivity, narrowing filters,
the plan-cache trap, and the audit row of every search."""

from __future__ import annotations

import json
import random
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok, retag
from tests.search.statement_params import hybrid_explain_params

WORDS = [
    "octrooi",
    "inventiviteit",
    "uitvinding",
    "nieuwheid",
    "conclusie",
    "stand",
    "techniek",
    "huurovereenkomst",
    "ontbinding",
    "tekortkoming",
    "schadevergoeding",
    "aansprakelijkheid",
    "werkgever",
    "arbeidsongeval",
    "dwaling",
    "vernietiging",
    "bestuursorgaan",
    "besluit",
    "beroep",
    "bezwaar",
    "merkinbreuk",
    "verwarring",
]


def _text(rng: random.Random, n: int = 40) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + "."


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    f = Firm(client, auth)
    for p in ("alice@firm.nl", "bob@firm.nl", "carol@firm.nl", "dave@firm.nl"):
        f.person(p, aliases=[f"imanage:user:{p.split('@')[0]}"])
    f.client_("C-1", "Acme B.V.")
    f.client_("C-2", "Beta N.V.")
    for i in range(1, 7):
        f.matter(f"M-{i}", "C-1" if i % 2 else "C-2", team=["alice@firm.nl"] if i == 1 else [])
    rng = random.Random(7)
    for i in range(1, 7):
        for j in range(4):
            f.document(
                f"M{i}-d{j}", _text(rng), client_id="C-1" if i % 2 else "C-2", matter_id=f"M-{i}"
            )
    return f


def _seen(firm: Firm, person: str, query: str, **kw: Any) -> list[dict[str, Any]]:
    return list(firm.search(person, query, **kw)["results"])


def test_walls_and_source_acls_both_apply(firm: Firm, client: TestClient) -> None:
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"])
    firm.wall(
        kind="inclusionary",
        protects={"matters": ["M-2"]},
        allowed=["carol@firm.nl"],
        include_team=False,
    )
    firm.document(
        "private-1",
        "vertrouwelijk octrooi memo over de uitvinding",
        client_id="C-1",
        matter_id="M-3",
        acl={"default": "private", "allow": ["imanage:user:dave"], "deny": []},
    )
    firm.document(
        "denied-1",
        "octrooi memo met weigering",
        client_id="C-1",
        matter_id="M-3",
        acl={"default": "public", "allow": [], "deny": ["imanage:user:carol"]},
    )
    retag(client)
    for mode in ("hybrid", "dense", "sparse"):
        bob = {
            r["matter_id"]
            for r in _seen(firm, "bob@firm.nl", "octrooi uitvinding", k=100, mode=mode)
        }
        carol = _seen(firm, "carol@firm.nl", "octrooi uitvinding memo", k=100, mode=mode)
        dave = _seen(firm, "dave@firm.nl", "vertrouwelijk octrooi memo", k=100, mode=mode)
        assert "M-1" not in bob and "M-2" not in bob, mode
        assert "M-2" in {r["matter_id"] for r in carol}, mode
        assert not any(r["document"]["external_id"] in ("private-1", "denied-1") for r in carol)
        assert any(r["document"]["external_id"] == "private-1" for r in dave), mode
        assert any(r["document"]["external_id"] == "denied-1" for r in dave), mode


def test_quarantined_documents_are_visible_to_no_one(firm: Firm) -> None:
    out = firm.document("q-1", "zeldzaamwoord quarantaine", client_id="C-1")  # no matter
    assert out["quarantined"] is True
    for person in ("alice@firm.nl", "bob@firm.nl", "unknown@firm.nl"):
        assert _seen(firm, person, "zeldzaamwoord", mode="sparse") == []


def test_unknown_and_inactive_people(firm: Firm, client: TestClient) -> None:
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"])
    retag(client)
    stranger = {r["matter_id"] for r in _seen(firm, "stranger@firm.nl", "octrooi", k=100)}
    assert stranger and "M-1" not in stranger
    firm.person("dave@firm.nl", active=False)
    assert _seen(firm, "dave@firm.nl", "octrooi", k=100) == []


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
def test_empty_result_is_audited_and_response_reveals_nothing(
    firm: Firm, client: TestClient, auth: Tokens, mode: str
) -> None:
    firm.wall(
        kind="inclusionary",
        protects={"clients": ["C-1", "C-2"]},
        allowed=["carol@firm.nl"],
        include_team=False,
    )
    retag(client)
    out = firm.search("bob@firm.nl", "octrooi", k=5, mode=mode)
    assert out["results"] == []
    assert set(out) == {"retrieval_id", "policy_version", "took_ms", "strategy", "results"}
    audit = ok(
        client.get(
            f"/v1/audit/retrievals/{out['retrieval_id']}", headers=auth("co@firm.nl", "compliance")
        )
    )
    assert audit["result_count"] == 0 and audit["results"] == []


def test_filters_only_narrow(firm: Firm) -> None:
    base = {r["chunk_id"] for r in _seen(firm, "bob@firm.nl", "octrooi", k=100)}
    for filters in (
        {"matter_ids": ["M-3"]},
        {"doc_types": ["other"]},
        {"sources": ["api"]},
        {"matter_ids": ["M-1", "M-404"]},
        {"modified_from": "2000-01-01T00:00:00Z"},
    ):
        narrowed = _seen(firm, "bob@firm.nl", "octrooi", k=100, filters=filters)
        assert {r["chunk_id"] for r in narrowed} <= base, filters
        if "matter_ids" in filters:
            assert {r["matter_id"] for r in narrowed} <= set(filters["matter_ids"])
    assert _seen(firm, "bob@firm.nl", "octrooi", k=100, filters={"sources": ["netdocuments"]}) == []


def test_what_would_widen_or_smuggle_is_refused(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A fuzz of the search found "matter_ids": [] read as no filter (results from every
    matter, the audit row saying [] beside them), lax types (k true, session_widen "yes"),
    control characters stored in the labels, and a UTF-8 X-Model stored as mojibake."""
    bob = auth("bob@firm.nl", "lawyer")

    def refused(body: dict[str, Any], field: str, headers: dict[str, Any] | None = None) -> None:
        r = client.post(
            "/v1/search", json={"query": "octrooi", **body}, headers={**bob, **(headers or {})}
        )
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"]["details"]["field"] == field, r.json()

    for name in ("matter_ids", "doc_types", "sources"):
        refused({"filters": {name: []}}, f"filters.{name}")
    refused({"k": True}, "k")
    refused({"k": "10"}, "k")
    refused({"session_id": "s", "session_widen": "yes"}, "session_widen")
    # a session id that prints like another one is another session in every report
    for session in ("a\nb", "a\tb", "s-1\u200b", "a\u202eb"):
        refused({"session_id": session}, "session_id")
    refused({"model": "gpt\x1b[2J"}, "model")
    refused({"prompt_version": "v\x07"}, "prompt_version")
    # a label is one line that shows as itself: it reads as another label in the audit log
    for label in ("gpt\nfake", "v1\tv2", "gpt\u202e4o", "m\u200b1"):
        refused({"model": label}, "model")
        refused({"prompt_version": label}, "prompt_version")
    refused({}, "X-Model", {"X-Model": "gpt\u202e4o".encode()})
    refused({"query": "octrooi\x1b[31m"}, "query")
    refused({"query": "octrooi\x9b31m"}, "query")  # C1: the 8-bit form of ESC [
    refused({"filters": {"doc_types": ["me\x9bmo"]}}, "filters.doc_types.0")
    refused({"query": "\u200b\u200f \u2060"}, "query")  # only invisible characters
    refused({}, "X-Model", {"X-Model": "gpt\x1b[2J"})
    # a question may span lines
    assert (
        client.post(
            "/v1/search", json={"query": "octrooi\ninbreuk\tstand"}, headers=bob
        ).status_code
        == 200
    )
    raw = {k.encode(): v.encode() for k, v in bob.items()} | {b"X-Model": "café-7b".encode()}
    r = client.post("/v1/search", json={"query": "octrooi"}, headers=raw)
    assert r.status_code == 200, r.text
    row = ok(
        client.get(
            f"/v1/audit/retrievals/{r.json()['retrieval_id']}",
            headers=auth("co@firm.nl", "compliance"),
        )
    )
    assert row["model"] == "café-7b"


def test_audit_row_per_search_with_everything_named(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    comp = auth("co@firm.nl", "compliance")
    before = len(
        ok(client.get("/v1/audit/retrievals", params={"limit": 500}, headers=comp))["items"]
    )
    outs = [
        firm.search(
            "alice@firm.nl",
            "octrooi inventiviteit",
            k=3,
            model="gpt-x",
            prompt_version="brief-v3",
            filters={"matter_ids": ["M-1"]},
        ),
        firm.search(
            "bob@firm.nl", "huurovereenkomst", k=2, mode="sparse", filters={"matter_ids": ["M-2"]}
        ),
    ]
    items = ok(client.get("/v1/audit/retrievals", params={"limit": 500}, headers=comp))["items"]
    assert len(items) == before + 2
    first = ok(client.get(f"/v1/audit/retrievals/{outs[0]['retrieval_id']}", headers=comp))
    assert first["person_id"] == "alice@firm.nl" and first["model"] == "gpt-x"
    assert first["prompt_version"] == "brief-v3" and first["k"] == 3
    assert first["filters"] == {"matter_ids": ["M-1"]}
    assert first["policy_version"] == outs[0]["policy_version"]
    assert "open" in first["allowed_wall_groups"]
    assert [r["chunk_id"] for r in first["results"]] == [r["chunk_id"] for r in outs[0]["results"]]
    for audited, returned in zip(first["results"], outs[0]["results"], strict=True):
        assert audited["content_sha256"] == returned["content_sha256"]
        assert audited["rank"] == returned["rank"]
    # who saw anything from matter M-1, and when
    m1 = ok(client.get("/v1/audit/retrievals", params={"matter_id": "M-1"}, headers=comp))["items"]
    assert {i["person_id"] for i in m1} == {"alice@firm.nl"}
    # the person who searched may read their own retrieval; others may not
    own = client.get(
        f"/v1/audit/retrievals/{outs[1]['retrieval_id']}", headers=auth("bob@firm.nl", "lawyer")
    )
    assert own.status_code == 200
    other = client.get(
        f"/v1/audit/retrievals/{outs[1]['retrieval_id']}", headers=auth("alice@firm.nl", "lawyer")
    )
    assert other.status_code == 403
    assert (
        client.get("/v1/audit/retrievals", headers=auth("bob@firm.nl", "lawyer")).status_code == 403
    )
    # headers work as labels too
    r = client.post(
        "/v1/search",
        json={"query": "octrooi"},
        headers={**auth("bob@firm.nl", "lawyer"), "X-Model": "m2", "X-Prompt-Version": "p9"},
    )
    audited = ok(client.get(f"/v1/audit/retrievals/{r.json()['retrieval_id']}", headers=comp))
    assert (audited["model"], audited["prompt_version"]) == ("m2", "p9")


def test_cursor_paging_and_export(firm: Firm, client: TestClient, auth: Tokens) -> None:
    for i in range(5):
        firm.search("alice@firm.nl", f"octrooi {i}")
    comp = auth("co@firm.nl", "compliance")
    seen: list[int] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2, "person_id": "alice@firm.nl"}
        if cursor:
            params["cursor"] = cursor
        page = ok(client.get("/v1/audit/retrievals", params=params, headers=comp))
        seen += [i["seq"] for i in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == sorted(seen, reverse=True) and len(seen) == 5
    assert (
        client.get("/v1/audit/retrievals", params={"cursor": "garbage!"}, headers=comp).status_code
        == 422
    )
    lines = client.get("/v1/audit/export", headers=comp).text.strip().splitlines()
    assert len(lines) == 5
    # an export continues the last one from the last seq it wrote, without gaps
    seqs = [json.loads(line)["seq"] for line in lines]
    rest = client.get("/v1/audit/export", params={"after_seq": seqs[2]}, headers=comp)
    assert [json.loads(line)["seq"] for line in rest.text.strip().splitlines()] == seqs[3:]
    for bad in ("-1", "x", str(2**63)):
        refused = client.get("/v1/audit/export", params={"after_seq": bad}, headers=comp)
        assert refused.status_code == 422, (bad, refused.text)
    # a window that ends before it starts is refused, not answered as empty (which would
    # read as "nobody read anything then")
    backwards = {"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}
    for path in ("export", "retrievals", "policy-events", "gate-events"):
        refused = client.get(f"/v1/audit/{path}", params=backwards, headers=comp)
        assert refused.status_code == 422, (path, refused.text)
        assert refused.json()["error"]["details"]["field"] == "until", refused.text


def test_an_export_holds_no_connection_between_pages(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A download that stalls must not keep a connection (a fuzz saw 16 stalled exports take
    the whole pool, and every search fail): each page is read in a transaction of its own,
    and its lines are handed on after it ended."""
    from contextlib import contextmanager

    from app.audit.service import export_lines

    for i in range(5):
        firm.search("alice@firm.nl", f"octrooi {i}")
    database = client.app.state.resources.database  # type: ignore[attr-defined]
    open_now: list[int] = []
    opened = 0

    @contextmanager
    def transaction() -> Any:
        nonlocal opened
        opened += 1
        open_now.append(1)
        try:
            with database.transaction() as conn:
                yield conn
        finally:
            open_now.pop()

    pool = database.engine.pool
    before = pool.checkedout()  # the app's own (its background work), not the export's
    lines = export_lines(transaction, since=None, until=None, page=2)
    seqs = []
    for line in lines:
        assert not open_now, "a line was handed on inside a transaction"
        assert pool.checkedout() == before
        seqs.append(json.loads(line)["seq"])
    assert seqs == sorted(seqs) and len(seqs) == 5 and opened == 3  # 2 + 2 + 1
    comp = auth("co@firm.nl", "compliance")
    whole = client.get("/v1/audit/export", headers=comp).text.strip().splitlines()
    assert [json.loads(line)["seq"] for line in whole] == seqs


def test_a_full_pool_is_503_busy_in_the_envelope(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """Every connection held (by stalled requests) is the service being busy, not a bug."""
    database = client.app.state.resources.database  # type: ignore[attr-defined]
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    pool = database.engine.pool
    saved = pool._timeout
    pool._timeout = 0.1
    held = []
    try:
        while True:  # every connection the pool will give
            try:
                held.append(database.engine.connect())
            except PoolTimeout:
                break
        r = client.get("/v1/walls", headers=auth("cp@firm.nl", "conflicts"))
    finally:
        pool._timeout = saved
        for conn in held:
            conn.close()
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "busy" and r.headers["Retry-After"] == "1"


def test_plan_cache_trap_same_connection_alternating_strategies(
    firm: Firm, client: TestClient
) -> None:
    """Force both strategies through one pooled connection many times: each must keep its
    own plan (the HNSW form uses the index, the exact form never does)."""
    from app.db import sqlfiles
    from app.search.repository import BLOCKS, DenseForm

    resources = client.app.state.resources  # type: ignore[attr-defined]
    saved = resources.settings.exact_max_rows
    resources.settings.__dict__["exact_max_rows"] = 0
    try:
        strategies = [firm.search("bob@firm.nl", "octrooi", k=5)["strategy"] for _ in range(8)]
    finally:
        resources.settings.__dict__["exact_max_rows"] = saved
    assert all(s.startswith("hnsw") for s in strategies)
    exact = [firm.search("bob@firm.nl", "octrooi", k=5)["strategy"] for _ in range(8)]
    assert set(exact) == {"exact"}
    with resources.database.engine.connect() as conn:
        conn.execute(text("SET LOCAL ROLE ewall_writer"))
        for i in range(12):
            strategy: DenseForm = "hnsw" if i % 2 else "exact"
            conn.execute(
                text("SELECT set_config('enable_seqscan', :v, false)"),
                {"v": "off" if strategy == "hnsw" else "on"},
            )
            plan = "\n".join(
                r[0]
                for r in conn.execute(
                    text("EXPLAIN " + sqlfiles.raw(BLOCKS["hybrid"])),
                    hybrid_explain_params(hnsw=strategy == "hnsw", collapse=False),
                )
            )
            assert ("ix_chunks_embedding_hnsw" in plan) == (strategy == "hnsw"), (i, plan)
        conn.rollback()


def test_killed_connection_returns_an_error_and_no_results(
    firm: Firm, client: TestClient, db: DbHandle, auth: Tokens
) -> None:
    """Kill the search's backend in the middle of its transaction: a 503 envelope, no
    results, and no audit row."""
    import threading
    import time

    from app.search import service

    comp = auth("co@firm.nl", "compliance")
    before = len(
        ok(client.get("/v1/audit/retrievals", params={"limit": 500}, headers=comp))["items"]
    )

    # Both bounds only stop a hang: the kill ends the sleep as soon as the killer sees it,
    # however long a busy machine takes to get the search there.
    guard_s = 300

    def killer() -> None:
        deadline = time.monotonic() + guard_s
        with psycopg.connect(db.superuser_url, autocommit=True) as su:
            while time.monotonic() < deadline:
                row = su.execute(
                    "SELECT pid FROM pg_stat_activity WHERE usename = 'ewall_app' "
                    "AND state = 'active' AND query LIKE 'SELECT pg_sleep%%'"
                ).fetchone()
                if row:
                    su.execute("SELECT pg_terminate_backend(%s)", (row[0],))
                    return
                time.sleep(0.02)

    original = service._audit

    def slow_audit(conn: Any, *args: Any, **kwargs: Any) -> None:
        # the retrieval has run; the backend dies before the audit row is written
        conn.execute(text("SELECT pg_sleep(:s)"), {"s": guard_s})
        original(conn, *args, **kwargs)

    thread = threading.Thread(target=killer)
    thread.start()
    service._audit = slow_audit
    try:
        r = client.post(
            "/v1/search", json={"query": "octrooi"}, headers=auth("bob@firm.nl", "lawyer")
        )
    finally:
        service._audit = original
        thread.join()
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "database_unavailable"
    assert "results" not in r.json()
    after = len(
        ok(client.get("/v1/audit/retrievals", params={"limit": 500}, headers=comp))["items"]
    )
    assert after == before
    assert firm.search("bob@firm.nl", "octrooi")["results"]  # the pool recovered


def test_rls_backstop_sees_nothing_even_when_the_predicate_is_forgotten(
    firm: Firm, client: TestClient
) -> None:
    """A query on chunks without any access predicate, inside a search transaction set up
    for bob, still sees only what bob may see."""
    from datetime import UTC, datetime

    from app.walls.access import access_for, apply

    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"])
    retag(client)
    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.transaction() as conn:
        res = resources.require_resolver().resolve(
            resources.database, "bob@firm.nl", datetime.now(UTC)
        )
        apply(conn, access_for(conn, res))
        matters = {r[0] for r in conn.execute(text("SELECT DISTINCT matter_id FROM chunks"))}
    assert matters and "M-1" not in matters


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    screened=st.sets(
        st.sampled_from(["alice@firm.nl", "bob@firm.nl", "carol@firm.nl"]), min_size=1
    ),
    protected=st.sets(st.sampled_from([f"M-{i}" for i in range(1, 7)]), min_size=1, max_size=3),
    allowed=st.sets(st.sampled_from(["alice@firm.nl", "bob@firm.nl", "carol@firm.nl"])),
    person=st.sampled_from(["alice@firm.nl", "bob@firm.nl", "carol@firm.nl", "dave@firm.nl"]),
    mode=st.sampled_from(["hybrid", "dense", "sparse"]),
)
def test_no_leaks_for_random_walls(
    firm: Firm,
    client: TestClient,
    screened: set[str],
    protected: set[str],
    allowed: set[str],
    person: str,
    mode: str,
) -> None:
    """Invariant 1 against the access rule, for random walls, people and modes."""
    excl = firm.wall(
        kind="exclusionary", protects={"matters": sorted(protected)}, screened=sorted(screened)
    )
    incl_matter = sorted(protected)[0]
    incl = firm.wall(
        kind="inclusionary",
        protects={"matters": [incl_matter]},
        allowed=sorted(allowed),
        include_team=False,
    )
    retag(client)
    forbidden = set(protected) if person in screened else set()
    if person not in allowed:
        forbidden.add(incl_matter)
    results = _seen(firm, person, "octrooi uitvinding huurovereenkomst", k=100, mode=mode)
    assert not ({r["matter_id"] for r in results} & forbidden)
    if mode != "sparse":
        visible = 24 - 4 * len(forbidden)
        assert len(results) == min(100, visible)
    firm.lift(excl)
    firm.lift(incl)
    retag(client)


def test_two_different_labels_for_one_search_are_refused_not_one_kept(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A body's "model" and an X-Model header naming another model (a gateway that sets the
    header, a client that writes the body), or the header given twice: the audit row kept one
    of them without a word (the body's; the first header), so it named a model other than
    the one a gateway reported (a probe of 2026-12-07). Two labels that differ are a 422
    naming the header, and nothing is searched or audited; the same label twice is fine."""
    bob = auth("bob@firm.nl", "lawyer")
    comp = auth("co@firm.nl", "compliance")
    before = len(
        ok(client.get("/v1/audit/retrievals", params={"limit": 500}, headers=comp))["items"]
    )

    def search(body: dict[str, Any], headers: Any) -> Any:
        return client.post("/v1/search", json={"query": "octrooi", **body}, headers=headers)

    for body, headers, field in (
        ({"model": "gpt-a"}, {**bob, "X-Model": "gpt-b"}, "X-Model"),
        ({"prompt_version": "v1"}, {**bob, "X-Prompt-Version": "v2"}, "X-Prompt-Version"),
        ({}, [*bob.items(), ("X-Model", "gpt-a"), ("X-Model", "gpt-b")], "X-Model"),
    ):
        r = search(body, headers)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["details"]["field"] == field, r.json()
    after = ok(client.get("/v1/audit/retrievals", params={"limit": 500}, headers=comp))["items"]
    assert len(after) == before
    same = search({"model": "gpt-a"}, {**bob, "X-Model": "gpt-a"})
    assert same.status_code == 200, same.text
    row = ok(client.get(f"/v1/audit/retrievals/{same.json()['retrieval_id']}", headers=comp))
    assert row["model"] == "gpt-a"


def test_a_label_header_over_the_limit_is_refused_whichever_value_it_is(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """The header's declared limit (200 characters) checks the first value given; the label
    is read from every value given, so an empty X-Model before a long one stored the long
    one in the audit row unchecked. Each value is held to the limit."""
    bob = auth("bob@firm.nl", "lawyer")
    for values in (["", "m" * 201], ["m" * 201]):
        headers = [*bob.items(), *(("X-Model", v) for v in values)]
        r = client.post("/v1/search", json={"query": "octrooi"}, headers=headers)
        assert r.status_code == 422, (values, r.text[:300])
    at_limit = [*bob.items(), ("X-Model", ""), ("X-Model", "m" * 200)]
    assert client.post("/v1/search", json={"query": "octrooi"}, headers=at_limit).status_code == 200


def test_an_empty_label_names_no_model_beside_a_real_one(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """A blank X-Model header beside the body's model (a gateway that sets the header
    whether or not it knows the model) is no second label: the search runs and the audit
    row names the body's model; a body's empty label beside a header's likewise."""
    bob = auth("bob@firm.nl", "lawyer")
    comp = auth("co@firm.nl", "compliance")
    for body, headers in (
        ({"model": "gpt-a"}, {**bob, "X-Model": "   "}),
        ({"model": ""}, {**bob, "X-Model": "gpt-a"}),
    ):
        r = client.post("/v1/search", json={"query": "octrooi", **body}, headers=headers)
        assert r.status_code == 200, r.text
        row = ok(client.get(f"/v1/audit/retrievals/{r.json()['retrieval_id']}", headers=comp))
        assert row["model"] == "gpt-a"
