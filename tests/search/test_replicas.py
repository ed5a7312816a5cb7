"""Searches on a real streaming replica (invariant 8): the fence under replication lag, a
replica killed mid-search, a replica far behind, and the audit chain after a mixed run.

The primary and the replica are real PostgreSQL servers (tests/replication.py): the replica
is a ``pg_basebackup -R`` copy streaming from the primary, and replication lag is made real
by pausing WAL replay on the replica (``pg_wal_replay_pause()``).
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, text

from app.audit.chain import verify_chain
from app.db.engine import Database, DatabaseUrls
from app.gates import router as gates_router
from app.gates.replica import request_start
from app.limits import PersonLimiter
from app.settings import Settings
from tests import pg
from tests.conftest import Tokens, make_settings
from tests.helpers import Firm, ok, retag
from tests.replication import Pair, start_pair, wait_for

SCREENED = "bdevries@firm.nl"
LAWYER = "ldekker@firm.nl"
QUERY = "octrooi inbreuk retard-tablet medivastine"
WALLED = "MED-1"


@pytest.fixture(scope="module")
def pair(settings: Settings) -> Iterator[Pair]:
    with start_pair(settings.embedding_dim) as p:
        yield p


@pytest.fixture
def dbname(pair: Pair) -> Iterator[str]:
    pair.resume()  # a failed test may have left replay paused
    name = pg.create_database(pair.server)
    pair.wait_replayed()  # CREATE DATABASE reached the replica
    try:
        yield name
    finally:
        pg.drop_database(pair.server, name)


AppFactory = Callable[..., Any]


def primary_database(pair: Pair, dbname: str, **pool: Any) -> Database:
    """The service's primary; ``pool``: the pool's size, overflow or timeout instead."""
    return Database(
        DatabaseUrls(
            app=pair.primary_url(dbname, pg.APP_ROLE),
            migrations=pair.primary_url(dbname),
            superuser=pair.primary_url(dbname),
        ),
        app_role=pg.APP_ROLE,
        **({"pool_size": 4, "max_overflow": 8} | pool),
    )


@pytest.fixture
def replica_app(pair: Pair, dbname: str, embedder: Any) -> Iterator[AppFactory]:
    """Start the service on the primary with the replica configured (a superuser login: the
    service must switch to the application role there)."""
    opened: list[tuple[TestClient, Database]] = []

    def start(**overrides: Any) -> TestClient:
        from app.main import create_app

        settings = make_settings(
            replica_urls=pair.replica_url(dbname),
            replica_check_interval_s=0.05,
            replica_max_lag_ms=overrides.pop("max_lag_ms", 600_000),
            **overrides,
        )
        database = primary_database(pair, dbname)
        client = TestClient(
            create_app(settings, database, embedder=embedder, start_worker=False),
            raise_server_exceptions=False,
        )
        client.__enter__()
        opened.append((client, database))
        return client

    try:
        yield start
    finally:
        for client, database in opened:
            client.__exit__(None, None, None)
            database.dispose()


# --- helpers ---------------------------------------------------------------------------------


def replica_state(client: TestClient) -> str:
    body = ok(client.get("/readyz"))
    (replica,) = body["checks"]["replicas"]
    return str(replica["state"])


def wait_state(client: TestClient, state: str) -> None:
    wait_for(lambda: replica_state(client) == state, f"replica state {state}")


def search(client: TestClient, auth: Tokens, person: str, query: str = QUERY) -> tuple[Any, str]:
    response = client.post(
        "/v1/search", json={"query": query, "k": 10}, headers=auth(person, "lawyer")
    )
    assert response.status_code == 200, response.text
    return response.json(), response.headers["X-Ewall-Read-From"]


def matters(body: Any) -> set[str]:
    return {r["matter_id"] for r in body["results"]}


def counter(client: TestClient, outcome: str, replica: str | None = None) -> float:
    """ewall_replica_searches_total for an outcome (any replica but the primary, or one)."""
    text_ = client.get("/metrics").text
    total = 0.0
    for m in re.finditer(
        r'^ewall_replica_searches_total\{outcome="([^"]+)",replica="([^"]+)"\} (\S+)$',
        text_,
        re.MULTILINE,
    ):
        name = m.group(2)
        if m.group(1) == outcome and ((replica is None and name != "primary") or (replica == name)):
            total += float(m.group(3))
    return total


@contextmanager
def primary(pair: Pair, dbname: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pair.primary_url(dbname), autocommit=True) as conn:
        yield conn


def audit_rows(pair: Pair, dbname: str) -> list[tuple[Any, ...]]:
    with primary(pair, dbname) as conn:
        return conn.execute(
            "SELECT retrieval_id::text, person_id, policy_version FROM audit_retrievals "
            "ORDER BY seq"
        ).fetchall()


def walled_results(pair: Pair, dbname: str, retrieval_id: str) -> int:
    with primary(pair, dbname) as conn:
        row = conn.execute(
            "SELECT count(*) FROM audit_retrieval_results "
            "WHERE retrieval_id = %s AND matter_id = %s",
            (retrieval_id, WALLED),
        ).fetchone()
    assert row is not None
    return int(row[0])


def policy_version(pair: Pair, dbname: str) -> int:
    with primary(pair, dbname) as conn:
        row = conn.execute("SELECT version FROM policy_state WHERE id = 1").fetchone()
    assert row is not None
    return int(row[0])


def chain_ok(pair: Pair, dbname: str) -> None:
    db = Database(
        DatabaseUrls(app=pair.primary_url(dbname), migrations=pair.primary_url(dbname)),
        app_role=pg.APP_ROLE,
    )
    try:
        with db.connect() as conn:
            for name in ("retrievals", "policy"):
                report = verify_chain(conn, name)
                assert report.ok, report.as_dict()
    finally:
        db.dispose()


def build_firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    for person in (SCREENED, LAWYER, "tvisser@firm.nl"):
        firm.person(person)
    firm.client_("MEDIVERS", "Medivers B.V.")
    firm.client_("HELDER", "Helderglas N.V.")
    firm.matter(WALLED, "MEDIVERS", team=[LAWYER])
    firm.matter("HELDER-1", "HELDER", team=[LAWYER])
    for i in range(3):
        firm.document(
            f"med-{i}",
            f"Pleitnota {i}: octrooi inbreuk door het retard-tablet medivastine van Genova; "
            "de conclusies van het octrooi worden letterlijk nagevolgd.",
            client_id="MEDIVERS",
            matter_id=WALLED,
        )
        firm.document(
            f"helder-{i}",
            f"Memo {i}: octrooi op glascoating, inbreuk door import van tabletverpakking.",
            client_id="HELDER",
            matter_id="HELDER-1",
        )
    return firm


def screen(firm: Firm) -> None:
    firm.wall(
        kind="exclusionary",
        protects={"matters": [WALLED]},
        screened=[SCREENED],
        title="lateral hire screen",
    )


# --- tests -----------------------------------------------------------------------------------


def test_fence_under_paused_replay(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    client = replica_app()
    firm = build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")

    # the replica serves, as the application role although its URL logs in as a superuser
    body, served = search(client, auth, SCREENED)
    assert served == "replica"
    assert WALLED in matters(body)
    replica = client.app.state.resources.replicas.replicas[0]
    with replica.database.connect() as conn:
        assert conn.execute(text("SELECT current_user")).scalar_one() == pg.APP_ROLE
        assert conn.execute(text("SELECT pg_is_in_recovery()")).scalar_one() is True

    # the replica stops replaying; the primary commits a wall; search at once
    pair.pause()
    screen(firm)
    enforced = policy_version(pair, dbname)
    before = audit_rows(pair, dbname)
    fenced_before = counter(client, "fenced")
    with replica.database.connect() as conn:  # the replica really is behind the wall
        assert conn.execute(text("SELECT version FROM policy_state")).scalar_one() < enforced

    body, served = search(client, auth, SCREENED)

    assert WALLED not in matters(body)
    assert body["results"], "the screened person still sees the other matter"
    assert body["policy_version"] == enforced
    assert counter(client, "fenced") == fenced_before + 1  # it ran on the replica, was fenced
    assert served == "primary"
    after = audit_rows(pair, dbname)
    assert len(after) == len(before) + 1  # the retried search left exactly one audit row
    retrieval_id, person, version = after[-1]
    assert (retrieval_id, person, version) == (body["retrieval_id"], SCREENED, enforced)
    assert walled_results(pair, dbname, retrieval_id) == 0

    # replay resumes: the replica serves again, under the wall
    retag(client)  # the walled matter's chunks get their new group (the team sees them again)
    pair.resume()
    pair.wait_replayed()
    body, served = search(client, auth, SCREENED)
    assert served == "replica"
    assert WALLED not in matters(body) and body["policy_version"] == enforced
    body, served = search(client, auth, LAWYER)
    assert served == "replica" and WALLED in matters(body)
    chain_ok(pair, dbname)


def test_fence_catches_a_narrowed_document_permission(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    """A source permission change does not bump policy_version; the fence's per-result check
    on the primary still keeps the replica's stale view of it from being released."""
    client = replica_app()
    firm = build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    body, served = search(client, auth, LAWYER)
    assert served == "replica" and "med-0" in {
        r["document"]["external_id"] for r in body["results"]
    }

    pair.pause()
    version = policy_version(pair, dbname)
    firm.document(  # now private to nobody in the firm
        "med-0",
        "Pleitnota 0: octrooi inbreuk door het retard-tablet medivastine van Genova; "
        "de conclusies van het octrooi worden letterlijk nagevolgd.",
        client_id="MEDIVERS",
        matter_id=WALLED,
        acl={"default": "private", "allow": [], "deny": []},
    )
    assert policy_version(pair, dbname) == version
    fenced_before = counter(client, "fenced")
    before = len(audit_rows(pair, dbname))

    body, served = search(client, auth, LAWYER)

    assert "med-0" not in {r["document"]["external_id"] for r in body["results"]}
    assert counter(client, "fenced") == fenced_before + 1
    assert served == "primary"
    assert len(audit_rows(pair, dbname)) == before + 1
    pair.resume()
    pair.wait_replayed()


def test_replica_killed_mid_search(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    client = replica_app()
    build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    replica = client.app.state.resources.replicas.replicas[0]
    killed: list[bool] = []

    def kill_before_the_hybrid_statement(
        _conn: Any, _cursor: Any, statement: str, *_args: Any
    ) -> None:
        if "policy_version_seen" in statement and not killed:
            killed.append(True)
            pair.kill_replica()  # the search already resolved and planned on this replica

    event.listen(replica.database.engine, "before_cursor_execute", kill_before_the_hybrid_statement)
    before = len(audit_rows(pair, dbname))
    try:
        body, served = search(client, auth, LAWYER)
    finally:
        event.remove(
            replica.database.engine, "before_cursor_execute", kill_before_the_hybrid_statement
        )
    try:
        assert killed, "the search never reached the replica"
        assert served == "primary"
        assert WALLED in matters(body)
        assert counter(client, "failed") == 1
        assert len(audit_rows(pair, dbname)) == before + 1
        # the service stays ready with only its replica down, and says so
        ready = client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["checks"]["replicas"][0]["state"] == "down"
        body, served = search(client, auth, SCREENED)
        assert served == "primary"
    finally:
        pair.start_replica()
    pair.wait_replayed()
    wait_state(client, "ok")  # back to the replica once it is up again
    body, served = search(client, auth, LAWYER)
    assert served == "replica"
    chain_ok(pair, dbname)


def _replica_processes(pair: Pair) -> list[int]:
    """The replica's postmaster and every process it started (its backends, startup, WAL
    receiver)."""
    postmaster = int((pair.replica_dir / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[1]) == postmaster:
            pids.append(int(stat.parent.name))
    return pids


def test_a_frozen_replica_is_routed_away_from(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    """A replica whose processes stop (a paused host looks the same to its clients) never
    answers the monitor's probe, and the driver waits where no timeout fires: the state
    stayed "ok" for minutes and searches kept going there (fuzz). Now the probe is waited for
    PROBE_WAIT_S: the replica is down, searches go to the primary, and it comes back."""
    client = replica_app()
    build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    frozen = _replica_processes(pair)
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        wait_state(client, "down")
        (state,) = ok(client.get("/readyz"))["checks"]["replicas"]
        assert "did not answer" in state["error"], state
        _, served = search(client, auth, LAWYER)
        assert served == "primary"
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
    wait_state(client, "ok")
    _, served = search(client, auth, LAWYER)
    assert served == "replica"


def test_a_replica_url_naming_a_database_without_the_schema_is_down(
    pair: Pair, dbname: str, embedder: Any, auth: Tokens
) -> None:
    """A standby of the right server, but the URL names another of its databases: every
    search sent there failed on a missing table and reran on the primary while /readyz said
    "ok" (fuzz). The probe now asks for the schema."""
    from app.main import create_app

    settings = make_settings(
        replica_urls=pair.replica_url("postgres"), replica_check_interval_s=0.05
    )
    database = primary_database(pair, dbname)
    app = create_app(settings, database, embedder=embedder, start_worker=False)
    try:
        with TestClient(app, raise_server_exceptions=False) as client:
            wait_state(client, "down")
            (state,) = ok(client.get("/readyz"))["checks"]["replicas"]
            assert "no ewall schema" in state["error"], state
    finally:
        database.dispose()


def served_by_the_replica(client: TestClient, auth: Tokens, person: str) -> None:
    """Search until the replica serves one. With a lag bound of 1 s, the state reads
    "lagging" for a probe round whenever the replica replays a record the server wrote by
    itself (autovacuum, a standby snapshot) more than a second late, as a busy machine may,
    and a search then rightly goes to the primary. A routing that never comes back still
    fails, at the wait's bound."""
    wait_for(
        lambda: search(client, auth, person)[1] == "replica", "a search served by the replica"
    )


def test_replica_far_behind_is_routed_away_and_back(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    client = replica_app(max_lag_ms=1000)
    firm = build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    served_by_the_replica(client, auth, LAWYER)

    pair.pause()
    try:
        firm.person("newhire@firm.nl")  # WAL the replica does not replay
        wait_state(client, "lagging")
        metrics = client.get("/metrics").text
        lag = re.search(r'^ewall_replica_lag_seconds\{replica="[^"]+"\} (\S+)$', metrics, re.M)
        assert lag is not None and float(lag.group(1)) > 1.0
        assert client.get("/readyz").status_code == 200
        fenced = counter(client, "fenced")
        body, served = search(client, auth, SCREENED)
        assert served == "primary"
        assert counter(client, "fenced") == fenced  # routed away, not fenced
        assert WALLED in matters(body)
    finally:
        pair.resume()
    pair.wait_replayed()
    wait_state(client, "ok")
    served_by_the_replica(client, auth, SCREENED)


def test_audit_chain_intact_after_a_mixed_run(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    client = replica_app()
    firm = build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    served: list[str] = []
    ids: list[str] = []

    def run(person: str) -> Any:
        body, where = search(client, auth, person)
        served.append(where)
        ids.append(body["retrieval_id"])
        return body

    for person in (SCREENED, LAWYER, SCREENED):
        run(person)
    pair.pause()
    screen(firm)  # fenced searches, then the replica is known to be behind
    for person in (SCREENED, LAWYER, SCREENED, LAWYER):
        assert (person == SCREENED) <= (WALLED not in matters(run(person)))
    pair.resume()
    pair.wait_replayed()
    for person in (SCREENED, LAWYER):
        assert (person == SCREENED) <= (WALLED not in matters(run(person)))

    rows = audit_rows(pair, dbname)
    assert sorted(r[0] for r in rows) == sorted(ids)  # one row per answered search
    assert {"replica", "primary"} <= set(served)
    chain_ok(pair, dbname)


# --- the grounding gate's reads on the replica ------------------------------------------------

WALLED_SENTENCE = (
    "Pleitnota 0: octrooi inbreuk door het retard-tablet medivastine van Genova; "
    "de conclusies van het octrooi worden letterlijk nagevolgd."
)


def ground(client: TestClient, auth: Tokens, person: str, rid: str) -> tuple[Any, str]:
    response = client.post(
        "/v1/gates/grounding",
        json={"retrieval_id": rid, "answer": WALLED_SENTENCE},
        headers=auth(person, "lawyer"),
    )
    assert response.status_code == 200, response.text
    return response.json(), response.headers["X-Ewall-Read-From"]


class Grounded:
    """A grounding call made while the replica's replay stood still (`ground_still`)."""

    def __init__(self) -> None:
        self.result: Any = None
        self.served = ""
        self.attempts = 0
        self.events: list[str] = []  # of the last request: its position taken, its charge
        self.taken: list[str] = []  # each request's start position
        self.quiet = ""  # the replica's replay position while paused, the last time
        self.chose: list[bool] = []  # per request, whether the router chose the replica


def ground_still(
    pair: Pair, client: TestClient, auth: Tokens, rid: str, monkeypatch: pytest.MonkeyPatch
) -> Grounded:
    """Ground ``rid`` with the replica paused once it has replayed everything: it serves the
    reads exactly when the request starts at a position the paused replica holds. The server
    writes WAL by itself (a standby snapshot 15 s after writes, autovacuum): a request that
    starts past it rightly reads on the primary and is made again (at most 5 times), as is
    one the router sent there because the health monitor saw the paused replica lag (CI,
    2026-12-07). Waiting on replay would depend on how fast a busy machine replays."""
    done = Grounded()
    charge = PersonLimiter.spend
    replicas = client.app.state.resources.replicas  # type: ignore[attr-defined]
    candidates = replicas.candidates

    def spied_candidates() -> Any:
        chosen = candidates()
        done.chose.append(bool(chosen))
        return chosen

    def spied_start(conn: Any, resources: Any) -> Any:
        done.events.append("position")
        start = request_start(conn, resources)
        done.taken.append(start.lsn if start is not None else "None")
        return start

    def spied_charge(limiter: PersonLimiter, *args: Any) -> None:
        done.events.append("charge")
        charge(limiter, *args)

    monkeypatch.setattr(gates_router, "request_start", spied_start)
    monkeypatch.setattr(PersonLimiter, "spend", spied_charge)
    monkeypatch.setattr(replicas, "candidates", spied_candidates)
    while True:
        done.attempts += 1
        done.events.clear()
        wait_state(client, "ok")
        pair.wait_replayed()
        pair.pause()
        done.quiet = pair.replay_lsn()  # what it holds (the server may write after the wait)
        try:
            done.result, done.served = ground(client, auth, SCREENED, rid)
        finally:
            pair.resume()
        if (
            done.served == "replica"
            or done.attempts == 5
            or (done.chose[-1] and not pair.lsn_after(done.taken[-1], done.quiet))
        ):
            break
    pair.wait_replayed()
    return done


def grounding_counter(client: TestClient, outcome: str) -> float:
    """ewall_replica_grounding_total for an outcome, over the replicas (not the primary)."""
    total = 0.0
    for m in re.finditer(
        r'^ewall_replica_grounding_total\{outcome="([^"]+)",replica="([^"]+)"\} (\S+)$',
        client.get("/metrics").text,
        re.MULTILINE,
    ):
        if m.group(1) == outcome and m.group(2) != "primary":
            total += float(m.group(3))
    return total


def why(done: Grounded, client: TestClient) -> Any:
    """What an assertion on `ground_still` shows: its tries, the replicas' outcomes."""
    counts = {o: grounding_counter(client, o) for o in ("served", "behind", "failed", "fenced")}
    return done.attempts, done.taken, done.quiet, done.chose, counts


def last_gate_event(pair: Pair, dbname: str) -> dict[str, Any]:
    with primary(pair, dbname) as conn:
        row = conn.execute(
            "SELECT gate, outcome FROM gate_events ORDER BY seq DESC LIMIT 1"
        ).fetchone()
    assert row is not None and row[0] == "grounding"
    return dict(row[1])


def test_grounding_reads_on_the_replica(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = replica_app()
    build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    body, served = search(client, auth, SCREENED)
    assert served == "replica" and WALLED in matters(body)
    replica = client.app.state.resources.replicas.replicas[0]
    seen: list[tuple[str, str]] = []

    def transaction_mode(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "audit_retrieval_results" in statement and not seen:
            seen.append(("", ""))  # before the reads below, so they do not recurse here
            isolation = conn.exec_driver_sql("SHOW transaction_isolation").scalar_one()
            read_only = conn.exec_driver_sql("SHOW transaction_read_only").scalar_one()
            seen[0] = (isolation, read_only)

    event.listen(replica.database.engine, "before_cursor_execute", transaction_mode)
    try:  # the search's audit row is on the replica before each try (CI, 2026-12-06)
        done = ground_still(pair, client, auth, body["retrieval_id"], monkeypatch)
    finally:
        event.remove(replica.database.engine, "before_cursor_execute", transaction_mode)
    result = done.result

    assert done.served == "replica", why(done, client)
    assert seen == [("repeatable read", "on")]  # one read-only snapshot for all the reads
    assert grounding_counter(client, "served") == 1
    assert grounding_counter(client, "behind") == done.attempts - 1 - done.chose.count(False)
    assert result["ok"] is True and result["sentences"][0]["supported"] is True
    gate_event = last_gate_event(pair, dbname)  # written on the primary
    assert gate_event["read_from"] == "replica"
    assert gate_event["policy_version"] == policy_version(pair, dbname)


def test_grounding_needs_no_write_of_its_own_replayed(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A replica that holds everything committed before the request serves the reads, even
    while it replays nothing more: the request's own budget charge, committed on the primary
    before the reads, is nothing they need. The position was taken after that commit, so a
    replica that had not replayed it yet looked behind and the primary read instead; on a
    busy machine test_grounding_reads_on_the_replica failed so (fresh clone, 2026-12-06)."""
    client = replica_app()
    build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    body, _ = search(client, auth, SCREENED)

    done = ground_still(pair, client, auth, body["retrieval_id"], monkeypatch)

    # the position precedes the request's own charge, whose commit the reads never need
    # (taken after it, the reads went to the primary whenever its commit record was written
    # before the position was read: the old code, in 1 of 2 runs)
    assert done.events[:2] == ["position", "charge"], done.events
    assert done.served == "replica", why(done, client)
    assert grounding_counter(client, "served") == 1
    assert grounding_counter(client, "behind") == done.attempts - 1 - done.chose.count(False)
    assert done.result["ok"] is True


def test_grounding_right_after_a_search_with_replay_paused(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    """The search's audit row is committed on the primary but not replayed: the replica
    must not answer (it would not find the retrieval); the primary does."""
    client = replica_app()
    build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    pair.pause()
    try:
        body, served = search(client, auth, SCREENED)
        assert served == "replica"  # same policy: not fenced, audit row only on the primary

        result, served = ground(client, auth, SCREENED, body["retrieval_id"])

        assert served == "primary"
        assert grounding_counter(client, "behind") == 1
        assert result["ok"] is True and result["retrieval_id"] == body["retrieval_id"]
        assert last_gate_event(pair, dbname)["read_from"] == "primary"
    finally:
        pair.resume()
    pair.wait_replayed()


def test_grounding_under_a_wall_the_replica_has_not_replayed(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    client = replica_app()
    firm = build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    body, _ = search(client, auth, SCREENED)
    assert WALLED in matters(body)
    pair.wait_replayed()
    pair.pause()
    try:
        screen(firm)
        enforced = policy_version(pair, dbname)

        result, served = ground(client, auth, SCREENED, body["retrieval_id"])

        assert served == "primary"
        assert result["ok"] is False and result["sentences"][0]["supported"] is False
        event = last_gate_event(pair, dbname)
        assert event["policy_version"] == enforced and event["read_from"] == "primary"
    finally:
        pair.resume()
    pair.wait_replayed()


def test_grounding_fenced_by_a_wall_during_the_replica_reads(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    """The replica is caught up when the request starts; the wall commits on the primary
    while the replica's read transaction is open: the gate redoes its reads on the primary."""
    client = replica_app()
    firm = build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    body, _ = search(client, auth, SCREENED)
    assert WALLED in matters(body)
    pair.wait_replayed()
    replica = client.app.state.resources.replicas.replicas[0]
    walled: list[bool] = []

    def wall_during_the_reads(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "audit_retrieval_results" in statement and not walled:
            walled.append(True)
            pair.pause()  # the replica's snapshot predates the wall either way
            screen(firm)

    event.listen(replica.database.engine, "before_cursor_execute", wall_during_the_reads)
    try:
        result, served = ground(client, auth, SCREENED, body["retrieval_id"])
    finally:
        event.remove(replica.database.engine, "before_cursor_execute", wall_during_the_reads)
        pair.resume()
    assert walled, "the grounding reads never reached the replica"
    assert served == "primary"
    assert grounding_counter(client, "fenced") == 1
    assert result["ok"] is False and result["sentences"][0]["supported"] is False
    assert last_gate_event(pair, dbname)["policy_version"] == policy_version(pair, dbname)
    pair.wait_replayed()
    chain_ok(pair, dbname)


def test_session_binding_is_read_on_the_primary(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens
) -> None:
    """A session bound by a search whose audit row the replica has not replayed: the next
    searches of that session, served by the replica, still narrow to the bound matter and
    still refuse another one."""
    client = replica_app()
    build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    pair.pause()
    try:

        def session_search(**extra: Any) -> Any:
            return client.post(
                "/v1/search",
                json={"query": QUERY, "k": 10, "session_id": "case-7", **extra},
                headers=auth(LAWYER, "lawyer"),
            )

        bound = session_search(session_matter_id="HELDER-1")
        assert bound.status_code == 200, bound.text
        assert bound.headers["X-Ewall-Read-From"] == "replica"
        assert matters(bound.json()) == {"HELDER-1"}

        follow = session_search()
        assert follow.status_code == 200, follow.text
        assert follow.headers["X-Ewall-Read-From"] == "replica"
        assert matters(follow.json()) == {"HELDER-1"}, "the binding was read on the replica"

        rebind = session_search(session_matter_id=WALLED)
        assert rebind.status_code == 409, rebind.text
        assert rebind.json()["error"]["code"] == "session_bound"
    finally:
        pair.resume()
    pair.wait_replayed()
