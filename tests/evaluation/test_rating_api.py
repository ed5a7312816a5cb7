"""The rating endpoints: walls apply to raters (they can neither see nor rate a forbidden
chunk), ratings are stored as the rater's judgements, bad input is a 4xx envelope."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from app.db.engine import sqlalchemy_url
from app.evaluation import sets
from app.evaluation.repository import QueryIn
from app.evaluation.router import snippet_parts
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, lock_waiters, ok, retag
from tests.replication import wait_for

RATER = "rater@firm.nl"
SCREENED = "screened@firm.nl"


@pytest.fixture
def firm(client: TestClient, auth: Tokens, db: DbHandle) -> Firm:
    f = Firm(client, auth)
    for p in (RATER, SCREENED):
        f.person(p)
    f.client_("C-1", "Aannemer B.V.")
    f.matter("M-1", "C-1")
    f.matter("M-2", "C-1")
    f.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=[SCREENED])
    f.document(
        "open-1",
        "Het kozijn lekt; de aannemer moet de lekkage herstellen.",
        client_id="C-1",
        matter_id="M-1",
        title="Brief aannemer",
    )
    f.document(
        "secret-1",
        "Vertrouwelijk: de lekkage van het kozijn & <script>x</script>.",
        client_id="C-1",
        matter_id="M-2",
        title="Memo <b>geheim</b>",
    )
    retag(client)
    with db.database.transaction() as conn:
        sets.import_queries(
            conn,
            "walls",
            "test",
            "tester",
            [QueryIn("k1", "lekkage kozijn"), QueryIn("k2", "aannemer herstel")],
        )
    return f


def _results(
    client: TestClient, auth: Tokens, person: str, n: int = 1, **params: str
) -> dict[str, Any]:
    return dict(
        ok(
            client.get(
                f"/v1/eval/sets/walls/queries/{n}/results",
                params=params,
                headers=auth(person, "lawyer"),
            )
        )
    )


def _rate(client: TestClient, auth: Tokens, person: str, **body: Any) -> Any:
    payload = {"set": "walls", "query_key": "k1", **body}
    return client.post("/v1/eval/judgements", json=payload, headers=auth(person, "lawyer"))


def _judgements(db: DbHandle) -> set[tuple[str, str, int, str]]:
    with db.database.transaction() as conn:
        rows = conn.execute(
            text("SELECT target_kind, target_id, grade, judged_by FROM relevance_judgements")
        )
        return {(r.target_kind, r.target_id, int(r.grade), r.judged_by) for r in rows}


def test_raters_see_only_what_their_walls_allow(
    firm: Firm, client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    for mode in ("hybrid", "dense", "sparse"):
        seen = _results(client, auth, SCREENED, mode=mode)
        assert {r["external_id"] for r in seen["results"]} == {"open-1"}, mode
    allowed = _results(client, auth, RATER)
    assert {r["external_id"] for r in allowed["results"]} == {"open-1", "secret-1"}
    assert allowed["query"] == {"query_key": "k1", "text": "lekkage kozijn"}
    assert (allowed["n"], allowed["total"]) == (1, 2)
    assert allowed["progress"] == {"rated": 0, "total": 2}
    # the search behind the page is audited as the rater's own, with purpose "rating"
    with db.database.transaction() as conn:
        row = conn.execute(
            text(
                "SELECT person_id, purpose, k, prompt_version FROM audit_retrievals "
                "WHERE retrieval_id = :r"
            ),
            {"r": allowed["retrieval_id"]},
        ).one()
    assert tuple(row) == (RATER, "rating", 10, "rate:walls")


def test_nobody_rates_a_chunk_they_may_not_see(
    firm: Firm, client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    by_doc = {r["external_id"]: r for r in _results(client, auth, RATER)["results"]}
    secret, public = by_doc["secret-1"], by_doc["open-1"]
    # the screened person learned the ids somehow: still 404, and nothing is stored
    for kind, target in (
        ("chunk", secret["chunk_id"]),
        ("document", "api:secret-1"),
        ("chunk", "api:nonexistent:0123456789abcdef"),
    ):
        response = _rate(client, auth, SCREENED, target_kind=kind, target_id=target, grade=3)
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "not_found"
        assert response.json()["error"]["message"] == "No such result is visible to you."
    assert _judgements(db) == set()

    saved = ok(_rate(client, auth, RATER, target_id=secret["chunk_id"], grade=3))
    assert saved["judged_by"] == RATER and saved["progress"] == {"rated": 1, "total": 2}
    ok(_rate(client, auth, SCREENED, target_id=public["chunk_id"], grade=1))
    ok(_rate(client, auth, SCREENED, target_kind="document", target_id="api:open-1", grade=2))
    # rating again replaces the grade (one judgement per person and target)
    ok(_rate(client, auth, RATER, target_id=secret["chunk_id"], grade=2))
    assert _judgements(db) == {
        ("chunk", secret["chunk_id"], 2, RATER),
        ("chunk", public["chunk_id"], 1, SCREENED),
        ("document", "api:open-1", 2, SCREENED),
    }
    # each rater sees their own grades back, nobody else's
    mine = {r["external_id"]: r for r in _results(client, auth, SCREENED)["results"]}
    assert (mine["open-1"]["grade"], mine["open-1"]["document_grade"]) == (1, 2)
    theirs = {r["external_id"]: r for r in _results(client, auth, RATER)["results"]}
    assert (theirs["open-1"]["grade"], theirs["secret-1"]["grade"]) == (None, 2)


def test_a_wall_raised_after_viewing_stops_the_rating(
    firm: Firm, client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    secret = next(
        r for r in _results(client, auth, RATER)["results"] if r["external_id"] == "secret-1"
    )
    firm.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=[RATER])
    retag(client)
    response = _rate(client, auth, RATER, target_id=secret["chunk_id"], grade=3)
    assert response.status_code == 404
    assert _judgements(db) == set()


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"target_id": "api:open-1:0123456789abcdef", "grade": 4}, 422, "validation_error"),
        ({"target_id": "api:open-1:0123456789abcdef", "grade": "2"}, 422, "validation_error"),
        ({"target_id": "api:open-1:0123456789abcdef", "grade": 1.5}, 422, "validation_error"),
        ({"target_id": "api:open-1:0123456789abcdef", "grade": True}, 422, "validation_error"),
        ({"target_id": "api:open-1", "grade": 1}, 422, "invalid_target"),  # a chunk needs a hash
        ({"target_kind": "document", "target_id": "no-colon", "grade": 1}, 422, "invalid_target"),
        ({"target_kind": "page", "target_id": "api:open-1", "grade": 1}, 422, "validation_error"),
        (
            {"target_id": "api:open-1:0123456789abcdef", "grade": 1, "extra": 1},
            422,
            "validation_error",
        ),
        (
            {"query_key": "nope", "target_id": "api:open-1:0123456789abcdef", "grade": 1},
            404,
            "not_found",
        ),
        ({"set": "nope", "target_id": "api:open-1:0123456789abcdef", "grade": 1}, 404, "not_found"),
        (
            {"set": "bad name", "target_id": "api:open-1:0123456789abcdef", "grade": 1},
            422,
            "validation_error",
        ),
        ({"target_id": "api:open-1\u0000:0123456789abcdef", "grade": 1}, 422, "validation_error"),
    ],
)
def test_bad_judgements_are_4xx_envelopes(
    firm: Firm, client: TestClient, auth: Tokens, body: dict[str, Any], status: int, code: str
) -> None:
    response = _rate(client, auth, RATER, **body)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


def test_roles_and_bad_paths(firm: Firm, client: TestClient, auth: Tokens) -> None:
    assert client.get("/v1/eval/sets").status_code == 401
    assert client.get("/v1/eval/sets", headers=auth("c@firm.nl", "compliance")).status_code == 403
    listed = ok(client.get("/v1/eval/sets", headers=auth(RATER, "lawyer")))
    assert [s["name"] for s in listed["items"]] == ["walls"]
    assert listed["items"][0]["progress"] == {"rated": 0, "total": 2}
    detail = ok(client.get("/v1/eval/sets/walls", headers=auth(RATER, "lawyer")))
    assert [q["query_key"] for q in detail["queries"]] == ["k1", "k2"]
    h = auth(RATER, "lawyer")
    for path, status in (
        ("/v1/eval/sets/walls/queries/0/results", 422),
        ("/v1/eval/sets/walls/queries/3/results", 404),
        ("/v1/eval/sets/walls/queries/x/results", 422),
        ("/v1/eval/sets/walls/queries/1/results?mode=fuzzy", 422),
        ("/v1/eval/sets/nope/queries/1/results", 404),
        ("/v1/eval/sets/nope", 404),
    ):
        response = client.get(path, headers=h)
        assert response.status_code == status, path
        assert "error" in response.json()
    # rating needs the lawyer role; an admin may list sets but not rate
    admin = auth("admin@firm.nl", "admin")
    assert client.get("/v1/eval/sets", headers=admin).status_code == 200
    assert client.get("/v1/eval/sets/walls/queries/1/results", headers=admin).status_code == 403


def test_admins_put_sets_and_their_walls_apply_too(
    firm: Firm, client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    admin = auth("admin@firm.nl", "admin")
    body: dict[str, Any] = {
        "description": "via de API",
        "queries": [
            {
                "query_key": "a1",
                "text": "kozijn lekkage",
                "judgements": [
                    {"target_id": "api:secret-1", "grade": 3},
                    {"target_id": "api:open-1", "grade": 1},
                ],
            }
        ],
    }
    # admin@firm.nl is not in the matrix: sees only the open group, not the walled M-2
    response = client.put("/v1/eval/sets/api-set", json=body, headers=admin)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "targets_not_visible"
    assert response.json()["error"]["details"]["targets"] == ["api:secret-1"]
    assert _judgements(db) == set()
    firm.person("admin@firm.nl")  # known now, and not screened from M-2
    put = ok(client.put("/v1/eval/sets/api-set", json=body, headers=admin))
    assert (put["queries"], put["judgements"]) == (1, 2)
    assert ("document", "api:secret-1", 3, "admin@firm.nl") in _judgements(db)
    # PUT is the whole new state: an emptier body removes the other queries
    body["queries"].append({"query_key": "a2", "text": "tweede"})
    ok(client.put("/v1/eval/sets/api-set", json=body, headers=admin))
    body["queries"] = body["queries"][1:]
    ok(client.put("/v1/eval/sets/api-set", json=body, headers=admin))
    detail = ok(client.get("/v1/eval/sets/api-set", headers=admin))
    assert [q["query_key"] for q in detail["queries"]] == ["a2"]
    bad_bodies: list[dict[str, Any]] = [
        {"queries": []},
        {"queries": [{"query_key": "x", "text": ""}]},
        {"queries": [{"query_key": "x", "text": "a"}, {"query_key": "x", "text": "b"}]},
        {"queries": [{"query_key": "x", "text": "nul\u0000"}]},
    ]
    for bad in bad_bodies:
        response = client.put("/v1/eval/sets/api-set", json=bad, headers=admin)
        assert response.status_code == 422, bad
    assert (
        client.put("/v1/eval/sets/api-set", json=body, headers=auth(RATER, "lawyer")).status_code
        == 403
    )


def test_the_page_is_served_safely(client: TestClient) -> None:
    page = client.get("/rate")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
    assert '<script src="/rate/rate.js"' in page.text
    assert "<script>" not in page.text  # no inline script
    assert 'aria-live="polite"' in page.text
    script = client.get("/rate/rate.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    for sink in (".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script.text, sink
    assert page.headers["x-content-type-options"] == "nosniff"


def test_snippets_become_plain_text_parts() -> None:
    snippet = "de &lt;b&gt; tag &amp; <b>kozijn</b> lekt … <b>lekkage</b>&quot;"
    assert snippet_parts(snippet) == [
        {"text": "de <b> tag & ", "hit": False},
        {"text": "kozijn", "hit": True},
        {"text": " lekt … ", "hit": False},
        {"text": "lekkage", "hit": True},
        {"text": '"', "hit": False},
    ]
    assert snippet_parts("") == []


def test_a_rating_while_the_set_drops_its_query_is_404_not_500(
    client: TestClient, auth: Tokens, db: DbHandle, firm: Firm
) -> None:
    """A set replaced (its query deleted) while a rating of that query is written: the rating
    holds its query's row until it commits; one that finds the row being deleted waits,
    then finds none (404, where the judgement's foreign key would otherwise fail)."""
    engine = create_engine(sqlalchemy_url(db.superuser_url))
    answer: list[Any] = []
    try:
        with engine.connect() as conn:  # the set's replacement, not yet committed
            conn.execute(text("DELETE FROM relevance_queries WHERE query_key = 'k1'"))
            rating = threading.Thread(
                target=lambda: answer.append(
                    _rate(client, auth, RATER, target_kind="document", target_id="api:open-1",
                          grade=2)
                )
            )  # fmt: skip
            rating.start()
            wait_for(lambda: len(lock_waiters(db)) == 1, "the rating to wait for the delete")
            conn.commit()
        rating.join()
    finally:
        engine.dispose()
    assert answer[0].status_code == 404, answer[0].text
    assert answer[0].json()["error"]["code"] == "not_found"
    assert _judgements(db) == set()


def test_a_rating_search_spends_the_search_budget(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """The rating page's results are an audited search, bounded as POST /v1/search is: a
    review found it ran with neither the per-minute budget nor the bound in flight."""
    settings = client.app.state.resources.settings  # type: ignore[attr-defined]
    saved = settings.search_per_minute
    settings.__dict__["search_per_minute"] = 1
    try:
        _results(client, auth, RATER)
        refused = client.get(
            "/v1/eval/sets/walls/queries/2/results", headers=auth(RATER, "lawyer")
        )
    finally:
        settings.__dict__["search_per_minute"] = saved
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["details"]["scope"] == "searches"


def test_rating_calls_spend_a_per_person_budget(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """Every lawyer route has a per-person budget (docs/isolation.md): the rating endpoints
    too. A probe of 2026-12-07 made 700 judgement calls of one lawyer in well under a minute,
    none refused, each reading the walls and holding a pooled connection. A judgement, the
    list of sets and a set's queries are charged on the rater's ``rating_calls``; another
    rater is unaffected and an admin's reads of the sets are not charged."""
    limiter = client.app.state.resources.limiter  # type: ignore[attr-defined]
    limiter.clock = lambda: 1000.0  # a stopped clock: the budget does not refill meanwhile
    settings = client.app.state.resources.settings  # type: ignore[attr-defined]
    saved = settings.rating_calls_per_minute
    settings.__dict__["rating_calls_per_minute"] = 3
    rater, other = auth(RATER, "lawyer"), auth("other@firm.nl", "lawyer")
    try:
        assert client.get("/v1/eval/sets", headers=rater).status_code == 200
        assert client.get("/v1/eval/sets/walls", headers=rater).status_code == 200
        target = {"target_kind": "document", "target_id": "imanage:nope", "grade": 1}
        assert _rate(client, auth, RATER, **target).status_code == 404
        refused = [
            _rate(client, auth, RATER, **target),
            client.get("/v1/eval/sets", headers=rater),
            client.get("/v1/eval/sets/walls", headers=rater),
        ]
        other_reads = client.get("/v1/eval/sets", headers=other)
        admin_reads = [client.get("/v1/eval/sets", headers=firm.h) for _ in range(4)]
    finally:
        settings.__dict__["rating_calls_per_minute"] = saved
    for answer in refused:
        assert answer.status_code == 429, answer.text
        error = answer.json()["error"]
        assert error["code"] == "rate_limited", error
        assert error["details"]["scope"] == "rating_calls", error
        assert int(answer.headers["Retry-After"]) == error["details"]["retry_after_s"] >= 1
    assert other_reads.status_code == 200, other_reads.text
    assert [a.status_code for a in admin_reads] == [200] * 4
