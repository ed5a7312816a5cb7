"""The citation gate against a real HTTP fake of data.rechtspraak.nl (127.0.0.1 only)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING, Any

import psycopg
import pytest

from app.audit.chain import verify_chain
from app.caselaw.parse import parse_rechtspraak
from app.caselaw.xmlbytes import legacy_bytes
from app.gates import citations
from app.gates import repository as gate_repository
from app.gates.citations import MAX_LEGACY_BYTES, CitationChecker, CitationResult
from tests.conftest import Tokens, make_settings
from tests.fakes.rechtspraak import FakeRechtspraak, closed_port_url, manifest, running_fake
from tests.gates.conftest import GateClient

if TYPE_CHECKING:
    from tests.conftest import DbHandle

TIMEOUT = 0.8  # the production default, for the checks that must run into it
# A deadline for checks that expect the fake's answer: a busy machine must not turn a live
# answer into a timeout (the fake answers at once; nothing waits for this long).
GENEROUS = 30.0
SLOW = 3.0
# An answer that never comes while a test runs (the fake stops it at shutdown). A check that
# waited for it would hang until pytest-timeout fails the test: no elapsed-time bound needed.
HANG = 600.0
HANG_GUARD_S = 120


def live_eclis(n: int) -> list[str]:
    """Real records without relations or markers: live as published."""
    rows = [
        r["ecli"]
        for r in manifest()
        if not r["relations"] and not r["isReplacedBy"] and int(r["body_chars"]) > 0
    ]
    unique = list(dict.fromkeys(rows))
    assert len(unique) >= n
    return unique[:n]


def checker(url: str, **overrides: Any) -> CitationChecker:
    settings = make_settings(
        rechtspraak_url=url, citation_timeout_s=overrides.pop("timeout", GENEROUS), **overrides
    )
    return CitationChecker(settings)


def check(fake_url: str, eclis: list[str], **overrides: Any) -> list[CitationResult]:
    return checker(fake_url, **overrides).check_sync(eclis)


# --- the checker on its own ---------------------------------------------------------------


def test_live_record(rechtspraak: FakeRechtspraak) -> None:
    [ecli] = live_eclis(1)
    [result] = check(rechtspraak.url, [ecli])
    assert result.live
    assert result.reason == "live"
    assert result.code == "live"
    assert result.by is None
    assert result.http_status == 200
    assert not result.cached
    assert rechtspraak.hits(ecli) == 1


def test_real_status_records_from_the_corpus(rechtspraak: FakeRechtspraak) -> None:
    results = check(
        rechtspraak.url,
        ["ECLI:NL:RBAMS:2012:BZ5426", "ECLI:NL:RBAMS:2007:YB0083", "ECLI:NL:CRVB:2012:BY5954"],
    )
    by_ecli = {r.ecli: r for r in results}
    assert by_ecli["ECLI:NL:RBAMS:2012:BZ5426"].reason == "vernietigd door ECLI:NL:HR:2013:477"
    assert by_ecli["ECLI:NL:RBAMS:2012:BZ5426"].by == "ECLI:NL:HR:2013:477"
    assert by_ecli["ECLI:NL:RBAMS:2007:YB0083"].reason == "vervangen door ECLI:NL:TGDKG:2007:1"
    assert by_ecli["ECLI:NL:CRVB:2012:BY5954"].code == "vervallen"
    assert not any(r.live for r in results)


@pytest.mark.parametrize(
    ("knob", "code", "reason", "by"),
    [
        (
            {"replaced_by": "ECLI:NL:HR:2020:1"},
            "replaced",
            "vervangen door ECLI:NL:HR:2020:1",
            "ECLI:NL:HR:2020:1",
        ),
        ({"empty_replaced": True}, "unverifiable", "unverifiable: empty isReplacedBy marker", None),
        (
            {"set_aside_by": "ECLI:NL:HR:2020:2"},
            "set_aside",
            "vernietigd door ECLI:NL:HR:2020:2",
            "ECLI:NL:HR:2020:2",
        ),
        (
            {"vervallen_by": "ECLI:NL:HR:2020:3"},
            "vervallen",
            "vervallen verklaard door ECLI:NL:HR:2020:3",
            "ECLI:NL:HR:2020:3",
        ),
        ({"withdrawal": "ingetrokken"}, "withdrawn", "ingetrokken", None),
        ({"withdrawal": ""}, "unverifiable", "unverifiable: empty withdrawal marker", None),
        ({"status": 500}, "unverifiable", "unverifiable: the source answered HTTP 500", None),
        ({"status": 404}, "unverifiable", "unverifiable: the source has no record of it", None),
        ({"status": 429}, "unverifiable", "unverifiable: the source answered HTTP 429", None),
        (
            {"garbage": True},
            "unverifiable",
            "unverifiable: unreadable answer from the source",
            None,
        ),
        (
            {"delay_s": HANG},
            "unverifiable",
            "unverifiable: no answer from the source within 0.8 s",
            None,
        ),
        (
            {"other": "ECLI:NL:HR:1984:AC8252"},
            "unverifiable",
            "unverifiable: the source answered with a record for ECLI:NL:HR:1984:AC8252",
            None,
        ),
    ],
    ids=lambda v: str(v)[:40],
)
@pytest.mark.timeout(HANG_GUARD_S)
def test_variants(
    rechtspraak: FakeRechtspraak, knob: dict[str, Any], code: str, reason: str, by: str | None
) -> None:
    ecli = "ECLI:NL:HR:2019:1278"  # not in the corpus: served from a real record
    rechtspraak.alias(ecli, "ECLI:NL:HR:1995:AA1532")
    rechtspraak.set(ecli, **knob)
    # returns, so it never waited for HANG
    timeout = TIMEOUT if knob.get("delay_s") == HANG else GENEROUS
    [result] = check(rechtspraak.url, [ecli], timeout=timeout)
    assert result.ecli == ecli
    assert result.live is False
    assert result.code == code
    assert result.reason.startswith(reason), result.reason
    assert result.by == by


def test_unknown_ecli_is_unverifiable(rechtspraak: FakeRechtspraak) -> None:
    [result] = check(rechtspraak.url, ["ECLI:NL:HR:2099:1"])
    assert not result.live
    assert result.http_status == 404
    assert result.reason.startswith("unverifiable: the source has no record")


def test_unreachable_source_fails_closed() -> None:
    results = check(closed_port_url(), live_eclis(3))
    assert [r.live for r in results] == [False, False, False]
    for r in results:
        assert r.code == "unverifiable"
        assert r.reason.startswith("unverifiable: the source is unreachable"), r.reason


def in_flight_together(
    fake: FakeRechtspraak, eclis: set[str] | list[str], done: threading.Event
) -> None:
    """Wait until every one of ``eclis`` has reached the fake while the check still runs.

    They hang and the check's deadline is far away, so a check that asked one at a time
    could never have them all in flight: its first request would block it. The guard only
    stops a hang; nothing is measured."""
    deadline = time.monotonic() + HANG_GUARD_S / 2
    while not all(fake.hits(e) >= 1 for e in eclis):
        assert not done.is_set(), "the check ended before asking them all"
        assert time.monotonic() < deadline, "the requests were not in flight together"
        time.sleep(0.01)
    assert not done.is_set()


def release_hanging(fake: FakeRechtspraak, done: threading.Event) -> None:
    """Let the hanging handlers answer now (they poll the fake's closing flag)."""
    fake._state.closing = True
    try:
        assert done.wait(HANG_GUARD_S / 2)
    finally:
        fake._state.closing = False


@pytest.mark.timeout(HANG_GUARD_S)
def test_many_citations_are_checked_in_parallel(rechtspraak: FakeRechtspraak) -> None:
    eclis = live_eclis(12)
    slow = eclis[::3]  # 4 of them hang
    for ecli in slow:
        rechtspraak.slow(ecli, HANG)
    results: list[CitationResult] = []
    done = threading.Event()

    def run() -> None:
        try:
            results.extend(check(rechtspraak.url, eclis, timeout=HANG))
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worker.start()
    try:
        in_flight_together(rechtspraak, slow, done)
    finally:
        release_hanging(rechtspraak, done)
        worker.join()
    assert [r.ecli for r in results] == eclis
    assert all(r.live for r in results), results  # released, so they answered after all


def test_parallelism_is_bounded(rechtspraak: FakeRechtspraak) -> None:
    eclis = live_eclis(4)
    for ecli in eclis:
        rechtspraak.slow(ecli, 0.3)
    started = time.monotonic()
    results = check(rechtspraak.url, eclis, citation_max_parallel=2)
    elapsed = time.monotonic() - started
    assert all(r.live for r in results)
    assert elapsed >= 0.55, "more than two requests ran at once"


@pytest.mark.timeout(HANG_GUARD_S)
def test_hard_timeout_covers_a_trickling_body(rechtspraak: FakeRechtspraak) -> None:
    # headers at once, then a piece every 0.1 s: no single read exceeds httpx's timeout,
    # only the deadline around the whole request stops it
    [ecli] = live_eclis(1)
    rechtspraak.trickle(ecli, HANG)  # a piece every 30 s: only the deadline can end it
    [result] = check(rechtspraak.url, [ecli], timeout=0.5)
    assert result.reason == "unverifiable: no answer from the source within 0.5 s"


@pytest.mark.timeout(HANG_GUARD_S)
def test_hard_timeout_covers_reading_the_answer(
    rechtspraak: FakeRechtspraak, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body that takes long to parse (stray non-UTF-8 bytes: seconds per MB to repair)
    runs into the same deadline as the fetch. Here the parse never ends until released:
    before, the check waited for it."""
    [ecli, other] = live_eclis(2)
    release = threading.Event()
    real_parse = parse_rechtspraak

    def parse(body: bytes) -> Any:
        if ecli.encode() in body:
            release.wait(HANG)
        return real_parse(body)

    monkeypatch.setattr(citations, "parse_rechtspraak", parse)
    try:
        # long enough for the live one on a busy machine (as in the API test below)
        results = check(rechtspraak.url, [ecli, other], timeout=5.0)
    finally:
        release.set()
    assert results[0].reason == "unverifiable: the answer could not be read within 5 s"
    assert results[1].live, results[1].reason  # its parse was not held up behind the other


def test_trickling_body_within_the_deadline_is_fine(rechtspraak: FakeRechtspraak) -> None:
    [ecli] = live_eclis(1)
    rechtspraak.trickle(ecli, 0.2)
    # the deadline of the checks that expect the answer: a trickle of 0.2 s took 0.45 s
    # under load here, so a deadline of 2 s was a bet on the machine's speed; the deadline
    # itself firing on a trickle is test_hard_timeout_covers_a_trickling_body's
    [result] = check(rechtspraak.url, [ecli], timeout=GENEROUS)
    assert result.live, result.reason


def test_oversized_answer_is_unverifiable(rechtspraak: FakeRechtspraak) -> None:
    [ecli] = live_eclis(1)
    settings = make_settings(rechtspraak_url=rechtspraak.url)
    [result] = CitationChecker(settings, max_body_bytes=100).check_sync([ecli])
    assert result.reason == "unverifiable: the answer from the source is too large"


def test_a_redirect_to_another_server_is_unverifiable(rechtspraak: FakeRechtspraak) -> None:
    """A record served from elsewhere is not the judiciary's, whatever it says."""
    live, moved = live_eclis(2)
    with running_fake() as elsewhere:
        rechtspraak.set(live, redirect_to=elsewhere.url)
        [result] = check(rechtspraak.url, [live])
        assert not result.live and elsewhere.hits(live) == 0
        assert result.reason.startswith("unverifiable: the source redirected to another server")
    rechtspraak.set(moved, redirect_to=rechtspraak.url)  # the same server: followed
    [result] = check(rechtspraak.url, [moved])
    assert result.live and rechtspraak.hits(moved) == 2


def test_an_answer_of_stray_bytes_is_refused_before_parsing(
    rechtspraak: FakeRechtspraak,
) -> None:
    """Repairing stray bytes costs a Python call each, in parse threads that every caller
    shares: a fuzz held another lawyer's check past its deadline with 199,000 of them."""
    few, many = live_eclis(2)
    rechtspraak.set(few, stray_bytes=90)  # as many as real records hold: repaired
    rechtspraak.set(many, stray_bytes=MAX_LEGACY_BYTES + 1)
    by_ecli = {r.ecli: r for r in check(rechtspraak.url, [few, many], timeout=GENEROUS)}
    assert by_ecli[few].live
    assert by_ecli[many].reason == "unverifiable: unreadable answer from the source (not UTF-8)"


def test_not_an_ecli_is_unverifiable_without_a_request(rechtspraak: FakeRechtspraak) -> None:
    [result] = check(rechtspraak.url, ["ECLI:NL:HR:19:1"])
    assert result.reason == "unverifiable: not a well-formed ECLI"
    assert rechtspraak.hits("ECLI:NL:HR:19:1") == 0


def test_duplicates_are_checked_once(rechtspraak: FakeRechtspraak) -> None:
    [ecli] = live_eclis(1)
    results = check(rechtspraak.url, [ecli, ecli, ecli])
    assert len(results) == 1
    assert rechtspraak.hits(ecli) == 1


def test_no_cache_by_default(rechtspraak: FakeRechtspraak) -> None:
    [ecli] = live_eclis(1)
    gate = checker(rechtspraak.url)
    gate.check_sync([ecli])
    gate.check_sync([ecli])
    assert rechtspraak.hits(ecli) == 2


def test_cache_keeps_definitive_answers_only(rechtspraak: FakeRechtspraak) -> None:
    live, failing, replaced = live_eclis(3)
    rechtspraak.fail(failing, 500)
    rechtspraak.replaced(replaced, "ECLI:NL:HR:2020:1")
    gate = checker(rechtspraak.url, citation_cache_ttl_s=60)
    first = gate.check_sync([live, failing, replaced])
    second = gate.check_sync([live, failing, replaced])
    assert [r.cached for r in first] == [False, False, False]
    assert [r.cached for r in second] == [True, False, True]
    assert [r.live for r in second] == [True, False, False]
    assert rechtspraak.hits(live) == 1
    assert rechtspraak.hits(replaced) == 1
    assert rechtspraak.hits(failing) == 2  # unverifiable answers are asked again


def test_cache_expires(rechtspraak: FakeRechtspraak) -> None:
    [ecli] = live_eclis(1)
    gate = checker(rechtspraak.url, citation_cache_ttl_s=0.2)
    gate.check_sync([ecli])
    expires = gate._cache[None, ecli][0]  # the checker's own expiry instant (monotonic)
    while time.monotonic() < expires:
        time.sleep(0.01)
    [again] = gate.check_sync([ecli])
    assert not again.cached
    assert rechtspraak.hits(ecli) == 2


def test_sync_wrapper_in_worker_threads_and_async_use(rechtspraak: FakeRechtspraak) -> None:
    eclis = live_eclis(2)
    gate = checker(rechtspraak.url)
    out: list[list[CitationResult]] = []
    threads = [
        threading.Thread(target=lambda: out.append(gate.check_sync(eclis))) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 3
    assert all(all(r.live for r in results) for results in out)

    async def inside_a_loop() -> None:
        with pytest.raises(RuntimeError, match="await check"):
            gate.check_sync(eclis)
        results = await gate.check(eclis)
        assert all(r.live for r in results)

    asyncio.run(inside_a_loop())


# --- through the API ------------------------------------------------------------------------


def gate_events(db: DbHandle) -> list[dict[str, Any]]:
    with psycopg.connect(db.superuser_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT person_id, gate, ok, request, outcome FROM gate_events ORDER BY seq")
        names = [d.name for d in cur.description or []]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


@pytest.mark.timeout(HANG_GUARD_S)
def test_api_reports_each_citation_and_fails_if_any_is_not_live(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens, db: DbHandle
) -> None:
    live, replaced, slow = live_eclis(3)
    rechtspraak.replaced(replaced, "ECLI:NL:HR:2020:1")
    rechtspraak.slow(slow, HANG)  # the response comes, so the gate never waited for it
    # long enough for the live ones on a busy machine; the hanging one runs into it
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=5.0)
    draft = (
        f"Zoals de Hoge Raad oordeelde ({live}), en eerder in ecli{replaced[4:]}; "
        f"zie ook {slow}. Nogmaals {live}."
    )
    r = client.post("/v1/gates/citations", json={"text": draft}, headers=auth("alice@firm.nl"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is False
    assert body["checked_at"]
    assert [c["ecli"] for c in body["citations"]] == [live, replaced, slow]
    got = {c["ecli"]: c for c in body["citations"]}
    assert got[live]["live"] is True
    assert got[live]["reason"] == "live"
    assert {
        "live": False,
        "reason": "vervangen door ECLI:NL:HR:2020:1",
        "by": "ECLI:NL:HR:2020:1",
        "code": "replaced",
    }.items() <= got[replaced].items()
    assert got[slow]["live"] is False
    assert got[slow]["reason"].startswith("unverifiable:")

    [event] = gate_events(db)
    assert event["person_id"] == "alice@firm.nl"
    assert event["gate"] == "citations"
    assert event["ok"] is False
    assert event["request"]["eclis"] == [live, replaced, slow]
    assert len(event["request"]["text_sha256"]) == 64
    assert "Hoge Raad oordeelde" not in str(event)  # the draft itself is not stored
    assert [c["live"] for c in event["outcome"]["citations"]] == [True, False, False]
    with db.database.connect() as conn:
        assert verify_chain(conn, "gates").ok


def test_api_all_live_and_no_citations(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens, db: DbHandle
) -> None:
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS)
    eclis = live_eclis(2)
    h = auth("alice@firm.nl", "lawyer")
    r = client.post("/v1/gates/citations", json={"text": " en ".join(eclis)}, headers=h)
    assert r.status_code == 200
    assert r.json()["ok"] is True
    r = client.post("/v1/gates/citations", json={"text": "Geen uitspraken hier."}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True
    assert r.json()["citations"] == []
    events = gate_events(db)
    assert [e["ok"] for e in events] == [True, True]
    assert events[1]["request"]["eclis"] == []


def test_api_cache_answers_a_person_from_their_own_checks_only(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens
) -> None:
    """A probe of 2026-12-07: with the cache on, one cache for the firm answered
    ``cached: true`` to whoever checked an ECLI a colleague had checked within the TTL, so a
    lawyer screened from a matter learnt which decisions its team was citing."""
    client = gate_client(
        rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS, citation_cache_ttl_s=600
    )
    [ecli] = live_eclis(1)

    def cached(person: str) -> bool:
        r = client.post(
            "/v1/gates/citations", json={"text": ecli}, headers=auth(person, "lawyer")
        )
        assert r.status_code == 200, r.text
        [citation] = r.json()["citations"]
        assert citation["live"] is True, citation
        return bool(citation["cached"])

    assert cached("team@firm.nl") is False
    assert cached("screened@firm.nl") is False  # the team's check is not the screened's
    assert cached("team@firm.nl") is True  # a person's own earlier answer is reused
    assert rechtspraak.hits(ecli) == 2


def test_api_fails_closed_on_what_reads_as_a_citation_but_is_not_well_formed(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens, db: DbHandle
) -> None:
    """A draft citing a live decision in forms a reader takes for its ECLI: each is
    unverifiable (nothing is asked of the source), and the answer is not ok. Before, the gate
    found no citation in them and answered ok with nothing checked."""
    [live] = live_eclis(1)
    rest = live.removeprefix("ECLI:")
    country, court, year, ordinal = rest.split(":")
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS)
    h = auth("alice@firm.nl", "lawyer")
    variants = [
        live.lower(),
        f"ECLI: {rest}",
        f"ECLI {country} {court} {year} {ordinal}",
        f"ECLI:{country}:{court[:1]}\u200b{court[1:]}:{year}:{ordinal}",  # zero-width space
        f"ECLI:{country}:{court}:\n{year}:{ordinal}",
        "\u0415CLI:" + rest,  # a Cyrillic E
        live.replace(":", "\uff1a"),  # full-width colons
        live.replace(":", "%3A"),
        # a hunt of the gate: no pattern read these, and the gate answered ok with nothing
        f"ECLI:{country}:{court}:{year.replace('0', 'O').replace('1', 'l')}:{ordinal}",
        f"ECLI:{country}:{court}:{year[:1]} {year[1:]}:{ordinal}",
        f"{live}:2",  # a sixth part
    ]
    for variant in variants:
        r = client.post("/v1/gates/citations", json={"text": f"Zie {variant}."}, headers=h)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["ok"] is False, (variant, body)
        [cited] = body["citations"]
        assert cited["code"] == "unverifiable", cited
        assert cited["reason"] == "unverifiable: not a well-formed ECLI as written"
    assert rechtspraak.hits(live) == 0
    assert gate_events(db)[-1]["request"]["malformed"] == [f"{live}:2"]
    # well formed as written, wherever it stands: checked, and live
    for text in (f"bron:{live}", f"Zie{live}.", f"In {live}: de rechtbank oordeelde"):
        r = client.post("/v1/gates/citations", json={"text": text}, headers=h)
        assert r.status_code == 200, r.text
        assert r.json()["ok"] is True, (text, r.json())
        assert [c["ecli"] for c in r.json()["citations"]] == [live]


def test_api_checks_no_count_after_an_ecli_as_a_follow_on(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens
) -> None:
    """ "ECLI:...:1278, 2 verdachten" was read as a citation of ECLI:...:2 as well: checked,
    the source had no record of it and the lawyer's answer was blocked."""
    [live] = live_eclis(1)
    stem = live[: live.rfind(":") + 1]
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS)
    h = auth("alice@firm.nl", "lawyer")
    text = f"Zie {live}, 2 verdachten zijn vrijgesproken; {live} en 3 andere arresten."
    r = client.post("/v1/gates/citations", json={"text": text}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True, r.json()
    assert [c["ecli"] for c in r.json()["citations"]] == [live]
    assert rechtspraak.hits(f"{stem}2") == rechtspraak.hits(f"{stem}3") == 0


def test_api_checks_no_count_item_or_case_number_after_an_ecli_as_a_follow_on(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens
) -> None:
    """What Dutch decisions write right after a citation ("..., 2 en 3 verdachten", "..., 2
    punten", "..., 2x", "..., 18/01234", "..., 4\u00b0", "..., 11-17 WW-V") was read as
    follow-ons: checked against the source, or unverifiable as a malformed one, each blocked
    the lawyer's answer."""
    [live] = live_eclis(1)
    stem = live[: live.rfind(":") + 1]
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS)
    h = auth("alice@firm.nl", "lawyer")
    text = (
        f"Zie {live}, 2 en 3 verdachten; {live}, 2 punten; {live}, 2x bevestigd; "
        f"{live}, 18/01234; {live}, 4\u00b0; {live}, 11-17 WW-V; {live}, 2 tot 3 jaar."
    )
    r = client.post("/v1/gates/citations", json={"text": text}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True, r.json()
    assert [c["ecli"] for c in r.json()["citations"]] == [live]
    assert rechtspraak.hits(f"{stem}2") == rechtspraak.hits(f"{stem}2x") == 0


def test_api_still_checks_a_follow_on_before_a_count_or_a_pinpoint(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens
) -> None:
    """A real follow-on before a count or a pinpoint into it stays a citation of its own,
    checked: an invented one blocks the answer (the gate fails closed)."""
    [live] = live_eclis(1)
    stem = live[: live.rfind(":") + 1]
    rechtspraak.alias(f"{stem}999901", live)  # a live decision of the same court and year
    invented = f"{stem}999902"
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS)
    h = auth("alice@firm.nl", "lawyer")
    for text in (
        f"Zie {live} en 999901 punt 3.4; {live}, 999902 en 3 andere arresten.",
        f"Zie {live} en 999901, r.o. 3.4; {live}, 999902, 2 en 3 verdachten.",
        f"Zie {live} en 999901 punten 3.4 en 3.5; {live} en 999902 (2x).",
    ):
        r = client.post("/v1/gates/citations", json={"text": text}, headers=h)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["ok"] is False, (text, body)
        got = {c["ecli"]: c for c in body["citations"]}
        assert list(got) == [live, f"{stem}999901", invented], text
        assert got[f"{stem}999901"]["live"] is True and got[f"{stem}999901"]["follows"] == live
        assert got[invented]["live"] is False and got[invented]["follows"] == live
    assert rechtspraak.hits(invented) == 3


def test_api_checks_each_ordinal_listed_after_an_ecli_as_its_full_ecli(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens, db: DbHandle
) -> None:
    """ "ECLI:NL:CRVB:2015:2551 en 2552" cites two decisions. Before, only the first was
    checked, so an invented follow-on number passed: the answer was ok."""
    [live] = live_eclis(1)
    stem = live[: live.rfind(":") + 1]
    rechtspraak.alias(f"{stem}999901", live)  # a live decision of the same court and year
    invented = f"{stem}999902"
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS)
    h = auth("alice@firm.nl", "lawyer")

    r = client.post("/v1/gates/citations", json={"text": f"Zie {live} en 999901."}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True
    assert [(c["ecli"], c["follows"]) for c in r.json()["citations"]] == [
        (live, None),
        (f"{stem}999901", live),
    ]

    text = f"Zie {live}, 999901 en 999902."
    r = client.post("/v1/gates/citations", json={"text": text}, headers=h)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is False
    got = {c["ecli"]: c for c in body["citations"]}
    assert list(got) == [live, f"{stem}999901", invented]
    assert got[f"{stem}999901"]["live"] is True
    assert got[invented]["live"] is False and got[invented]["follows"] == live
    assert got[invented]["reason"] == "unverifiable: the source has no record of it (HTTP 404)"
    assert rechtspraak.hits(invented) == 1
    assert gate_events(db)[-1]["request"]["follows"] == {
        f"{stem}999901": live,
        invented: live,
    }

    # a range is not guessed at: unverifiable as written, nothing asked for it
    r = client.post("/v1/gates/citations", json={"text": f"{live} t/m 999903"}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is False
    assert [c["ecli"] for c in r.json()["citations"]] == [live, f"{live} t/m 999903"]
    assert rechtspraak.hits(f"{stem}999903") == 0


def test_api_a_live_answer_does_not_revive_what_the_index_knows_dead(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens, db: DbHandle
) -> None:
    """The source drops a record's relation markers: it reads as live. The case-law index
    last saw it set aside, so the gate answers unverifiable (ingestion holds such a record
    for a person to confirm), naming what it knows; an active record stays live."""
    dead, alive = live_eclis(2)
    with psycopg.connect(db.superuser_url, autocommit=True) as su:
        su.execute(
            "INSERT INTO case_law (ecli, state, set_aside_by) VALUES (%s, 'set_aside', %s),"
            " (%s, 'active', NULL)",
            (dead, "ECLI:NL:HR:2020:9", alive),
        )
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS)
    r = client.post(
        "/v1/gates/citations", json={"text": f"{dead} en {alive}"}, headers=auth("alice@firm.nl")
    )
    assert r.status_code == 200, r.text
    got = {c["ecli"]: c for c in r.json()["citations"]}
    assert r.json()["ok"] is False
    assert got[dead]["live"] is False and got[dead]["code"] == "unverifiable"
    assert "set aside" in got[dead]["reason"] and got[dead]["by"] == "ECLI:NL:HR:2020:9"
    assert got[alive]["live"] is True
    assert rechtspraak.hits(dead) == 1  # asked, and answered live


def test_what_the_index_knows_is_found_whatever_the_case_of_the_ordinal(db: DbHandle) -> None:
    """The grammar lets an ordinal be written in lower case, and the source answers for it:
    the index's knowledge must not miss it for that (it would call a dead decision live)."""
    with psycopg.connect(db.superuser_url, autocommit=True) as su:
        su.execute(
            "INSERT INTO case_law (ecli, state, set_aside_by) VALUES "
            "('ECLI:NL:HR:2020:BK1234', 'set_aside', 'ECLI:NL:HR:2021:1')"
        )
    with db.database.transaction() as conn:
        known = gate_repository.known_dead_cases(conn, ["ECLI:NL:HR:2020:bk1234"])
    assert known == {"ECLI:NL:HR:2020:BK1234": ("set_aside", "ECLI:NL:HR:2021:1")}


@pytest.mark.timeout(HANG_GUARD_S)
def test_api_many_citations_in_parallel(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens
) -> None:
    eclis = live_eclis(12)
    slow = set(eclis[1::3])
    for ecli in slow:
        rechtspraak.slow(ecli, HANG)
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=HANG)
    draft = "\n".join(f"Punt {i}: zie {e}." for i, e in enumerate(eclis))
    responses: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            responses.append(
                client.post(
                    "/v1/gates/citations", json={"text": draft}, headers=auth("alice@firm.nl")
                )
            )
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worker.start()
    try:
        in_flight_together(rechtspraak, slow, done)
    finally:
        release_hanging(rechtspraak, done)
        worker.join()
    [r] = responses
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["citations"]) == 12
    assert [c["ecli"] for c in body["citations"]] == eclis
    assert body["ok"] is True


def test_api_unreachable_source_fails_closed(
    gate_client: GateClient, auth: Tokens, db: DbHandle
) -> None:
    client = gate_client(rechtspraak_url=closed_port_url())
    text = "Zie ECLI:NL:HR:2013:477 en ECLI:NL:RBAMS:2012:BZ5426."
    r = client.post("/v1/gates/citations", json={"text": text}, headers=auth("bob@firm.nl"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is False
    assert all(
        c["reason"].startswith("unverifiable: the source is unreachable") for c in body["citations"]
    )
    [event] = gate_events(db)
    assert event["ok"] is False
    assert event["person_id"] == "bob@firm.nl"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"text": "x" * 200_001}, "text"),
        ({}, "text"),
        ({"text": 12}, "text"),
        ({"text": "ECLI:NL:HR:2013:477", "extra": 1}, "extra"),
    ],
)
def test_api_validation(
    gate_client: GateClient, auth: Tokens, db: DbHandle, payload: dict[str, Any], field: str
) -> None:
    # nothing may be fetched for an invalid request: a closed port would show up as a result
    client = gate_client(rechtspraak_url=closed_port_url())
    r = client.post("/v1/gates/citations", json=payload, headers=auth("alice@firm.nl"))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "validation_error"
    assert r.json()["error"]["details"]["field"] == field
    assert gate_events(db) == []


def test_api_not_json(rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens) -> None:
    client = gate_client(rechtspraak_url=rechtspraak.url)
    r = client.post(
        "/v1/gates/citations",
        content=b"{not json",
        headers={**auth("alice@firm.nl"), "Content-Type": "application/json"},
    )
    assert r.status_code == 422
    assert "error" in r.json()


def test_api_roles(rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens) -> None:
    client = gate_client(rechtspraak_url=rechtspraak.url)
    body = {"text": "ECLI:NL:HR:2013:477"}
    assert client.post("/v1/gates/citations", json=body).status_code == 401
    r = client.post("/v1/gates/citations", json=body, headers=auth("c@firm.nl", "compliance"))
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "forbidden"


def test_an_answer_declared_in_another_encoding_is_not_counted_as_stray_bytes() -> None:
    """Only XML declared UTF-8 (or undeclared) has stray bytes to repair: a record declared
    ISO-8859-1 is read as such by the parser, however many accents it holds."""
    accents = b"\xe9" * (MAX_LEGACY_BYTES + 1)
    latin = b'<?xml version="1.0" encoding="ISO-8859-1"?><a>' + accents + b"</a>"
    assert legacy_bytes(latin) == 0
    assert legacy_bytes(b"<a>" + accents + b"</a>") == MAX_LEGACY_BYTES + 1
