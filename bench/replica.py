"""What the replica fence costs (docs/scale-out.md, invariant 8). Quick: about a minute.

    python -m bench.replica                       # an embedded primary + pg_basebackup replica
    python -m bench.replica --primary-url postgresql://admin:pw@primary/postgres \\
                            --replica-url postgresql://admin:pw@replica/postgres

With URLs (superuser logins of any streaming pair, managed services included) the script
creates its own database ``ewall_bench_replica`` on the primary, migrates it, waits until the
replica has it, and drops it at the end unless ``--keep``. Every figure is measured in this
process, alternating with its baseline:

- search on the primary alone (baseline) vs search on the replica with the fenced audit
  append on the primary, end to end (query already embedded);
- the primary's share of a replica search (its fenced append transaction) vs the whole
  search on the primary: what a replica takes off the primary;
- the audit append alone, plain vs fenced (same rows, each in its own primary transaction;
  the fenced one also applies the access sets for row-level security): the fence's cost;
- a search fenced after a policy change the replica has not replayed (replay paused; needs a
  login that may call pg_wal_replay_pause on the replica): replica attempt + primary rerun.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from app.audit import chain
from app.auth.service import Principal, issue_dev_token
from app.db import migrate
from app.db.engine import Database, DatabaseUrls
from app.search import replica as replica_search
from app.search import service as search_service
from app.search.schemas import SearchIn
from app.search.service import SearchResult, embed_query
from app.settings import Settings
from app.walls.access import Access
from bench.common import (
    Latency,
    console,
    every_question_encoded,
    fmt_ms,
    fmt_ratio,
    quiet_logging,
    write_json,
)

BENCH_DB = "ewall_bench_replica"
APP_ROLE = "ewall_app"
WORDS = [
    *("octrooi", "inbreuk", "uitvinding", "conclusie", "huurovereenkomst", "ontbinding"),
    *("tekortkoming", "schadevergoeding", "aansprakelijkheid", "werkgever", "dwaling"),
    *("arbeidsongeval", "vernietiging", "bestuursorgaan", "besluit", "beroep", "bezwaar"),
    *("merkinbreuk", "verwarring", "nieuwheid"),
]


def _with_db(url: str, database: str) -> str:
    return make_url(url).set(database=database).render_as_string(hide_password=False)


def _replayed(primary_admin: str, replica_admin: str) -> Callable[[], bool]:
    with psycopg.connect(primary_admin, autocommit=True) as conn:
        lsn = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]  # type: ignore[index]

    def check() -> bool:
        try:
            with psycopg.connect(replica_admin, autocommit=True) as conn:
                row = conn.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)
                ).fetchone()
        except psycopg.OperationalError:
            return False
        return bool(row and row[0])

    return check


def wait_replayed(primary_admin: str, replica_admin: str, timeout: float = 120) -> None:
    check = _replayed(primary_admin, replica_admin)
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("the replica did not replay the primary's WAL in time")
        time.sleep(0.02)


@contextmanager
def given_pair(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    """(primary, replica) superuser URLs of the database BENCH_DB."""
    if args.primary_url:
        admin = args.primary_url
        with psycopg.connect(admin, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone():
                pass
            else:
                conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(APP_ROLE)))
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(BENCH_DB))
            )
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(BENCH_DB)))
        primary = _with_db(admin, BENCH_DB)
        migrate.upgrade(primary, app_role=APP_ROLE, embedding_dim=args.dim)
        replica = _with_db(args.replica_url, BENCH_DB)
        wait_replayed(primary, replica)
        try:
            yield primary, replica
        finally:
            if not args.keep:
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(
                        sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                            sql.Identifier(BENCH_DB)
                        )
                    )
        return
    from tests import pg
    from tests.replication import start_pair

    with start_pair(args.dim) as pair:
        pg.create_database(pair.server, BENCH_DB)
        pair.wait_replayed()
        yield pair.primary_url(BENCH_DB), pair.replica_url(BENCH_DB)


def load_firm(client: Any, settings: Settings, docs: int, seed: int) -> None:
    admin = {"Authorization": "Bearer " + issue_dev_token(settings, "admin@firm.nl", ["admin"])}
    conflicts = {
        "Authorization": "Bearer " + issue_dev_token(settings, "admin@firm.nl", ["conflicts"])
    }
    for person in ("lawyer@firm.nl", "screened@firm.nl"):
        client.put(f"/v1/people/{person}", json={"name": person, "aliases": []}, headers=admin)
    client.put("/v1/clients/C-1", json={"name": "C-1"}, headers=admin)
    for m in range(4):
        client.put(
            f"/v1/matters/M-{m}",
            json={"client_id": "C-1", "title": f"M-{m}", "team": ["lawyer@firm.nl"]},
            headers=admin,
        )
    rng = random.Random(seed)
    for i in range(docs):
        text = " ".join(rng.choice(WORDS) for _ in range(120)) + "."
        response = client.post(
            "/v1/documents",
            json={
                "source": "api",
                "external_id": f"doc-{i}",
                "text": text,
                "client_id": "C-1",
                "matter_id": f"M-{i % 4}",
            },
            headers=admin,
        )
        response.raise_for_status()
    client.post(
        "/v1/walls",
        json={
            "kind": "exclusionary",
            "title": "screen",
            "reason": "bench",
            "protects": {"matters": ["M-0"]},
            "screened": ["screened@firm.nl"],
        },
        headers=conflicts,
    ).raise_for_status()
    from app.walls.retag import run_once

    run_once(client.app.state.resources.database, 10_000)


def row_for(
    result: Any, person: str, query: str
) -> tuple[chain.Retrieval, list[chain.RetrievedChunk]]:
    access: Access = result.access
    results = [
        chain.RetrievedChunk(i, h.chunk_id, h.matter_id, h.content_sha256, float(h.score))
        for i, h in enumerate(result.rows, start=1)
    ]
    row = chain.Retrieval(
        retrieval_id=uuid.uuid4(),
        at=chain.now_utc(),
        person_id=person,
        roles=["lawyer"],
        purpose="bench",
        query=query,
        mode="hybrid",
        k=10,
        filters={},
        allowed_wall_groups=list(access.wall_groups),
        source_principals=list(access.principals),
        policy_version=access.policy_version,
        model=None,
        prompt_version=None,
        strategy=result.strategy,
        took_ms=1.0,
        result_count=len(results),
    )
    return row, results


def summary(name: str, values: Sequence[float], base: Latency | None) -> Latency:
    lat = Latency.of(values)
    ratio = fmt_ratio(lat.p50_ms, base.p50_ms) if base is not None else "baseline"
    console.print(
        f"  {name:<58} p50 {fmt_ms(lat.p50_ms):>7} ms  p95 {fmt_ms(lat.p95_ms):>7} ms  {ratio}"
    )
    return lat


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--primary-url", help="superuser URL on the primary (any database)")
    parser.add_argument("--replica-url", help="superuser URL on its streaming replica")
    parser.add_argument("--queries", type=int, default=40, help="timed searches per figure")
    parser.add_argument("--docs", type=int, default=24, help="documents to load")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--json", type=str, default=None)
    args = parser.parse_args(argv)
    if bool(args.primary_url) != bool(args.replica_url):
        parser.error("give both --primary-url and --replica-url, or neither")
    quiet_logging()

    from fastapi.testclient import TestClient

    from app.embeddings import Embedder
    from app.main import create_app

    with given_pair(args) as (primary_url, replica_url):
        settings = Settings(
            database_url=primary_url,
            replica_urls=replica_url,
            replica_max_lag_ms=600_000,
            replica_check_interval_s=0.2,
            auth_mode="dev",
            log_json=False,
            embedding_dim=args.dim,
        )
        database = Database(
            DatabaseUrls(app=primary_url, migrations=primary_url), app_role=APP_ROLE
        )
        embedder = Embedder(settings)
        app = every_question_encoded(
            create_app(settings, database, embedder=embedder, start_worker=False)
        )
        client = TestClient(app)
        with client:
            console.print(f"[cyan]>[/] loading {args.docs} documents")
            load_firm(client, settings, args.docs, args.seed)
            wait_replayed(primary_url, replica_url)
            resources = app.state.resources
            replicas = resources.replicas
            deadline = time.monotonic() + 60
            while replicas.choose() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            rng = random.Random(args.seed)
            queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(args.queries)]
            vectors = {q: embed_query(embedder, q) for q in queries}
            principal = Principal("screened@firm.nl", frozenset({"lawyer"}))

            def search(query: str, *, use_replica: bool) -> tuple[SearchResult, str]:
                resources.replicas = replicas if use_replica else None
                try:
                    result = search_service.search(
                        resources, principal, SearchIn(query=query, k=10), qvec=vectors[query]
                    )
                    return result, result.read_from
                finally:
                    resources.replicas = replicas

            # the primary's share of a replica search: its fenced append transaction
            primary_share: list[float] = []
            original_append = replica_search.fenced_append

            def timed_append(*a: Any, **kw: Any) -> Any:
                started = time.perf_counter()
                try:
                    return original_append(*a, **kw)
                finally:
                    primary_share.append(time.perf_counter() - started)

            replica_search.fenced_append = timed_append
            for q in queries[:5]:  # warm both paths (plans, caches, the snapshot per version)
                search(q, use_replica=False)
                search(q, use_replica=True)
            primary_share.clear()
            on_primary: list[float] = []
            on_replica: list[float] = []
            served: dict[str, int] = {}
            sample = None
            for i, q in enumerate(queries):
                for use_replica in (i % 2 == 0, i % 2 == 1):
                    started = time.perf_counter()
                    result, where = search(q, use_replica=use_replica)
                    (on_replica if use_replica else on_primary).append(
                        time.perf_counter() - started
                    )
                    served[where] = served.get(where, 0) + 1
                    sample = result
            replica_search.fenced_append = original_append

            # the audit append alone: plain vs fenced, same rows, each its own transaction
            plain: list[float] = []
            fenced: list[float] = []
            if sample is None:
                raise SystemExit("no search ran")
            for i in range(args.queries * 2):
                row, results = row_for(sample, principal.person_id, queries[0])
                for use_fence in (i % 2 == 0, i % 2 == 1):
                    started = time.perf_counter()
                    if use_fence:
                        original_append(database, row, results, sample.access)
                    else:
                        with database.transaction() as conn:  # as in a primary search
                            chain.append_retrieval(conn, row, results)
                    (fenced if use_fence else plain).append(time.perf_counter() - started)
                    row = dataclasses.replace(row, retrieval_id=uuid.uuid4())

            # fenced searches: a policy change the replica has not replayed
            retried: list[float] = []
            paused = True
            try:
                with psycopg.connect(replica_url, autocommit=True) as admin:
                    admin.execute("SELECT pg_wal_replay_pause()")
            except psycopg.Error as exc:
                paused = False
                console.print(f"  [yellow]replay cannot be paused here ({exc}); skipped[/]")
            if paused:
                snapshots = resources.replica_snapshots
                for q in queries:
                    with psycopg.connect(primary_url, autocommit=True) as admin:
                        admin.execute("UPDATE policy_state SET version = version + 1 WHERE id = 1")
                    resources.require_resolver().invalidate()
                    snapshots.newest_served = 0  # measure the fence, not the early routing
                    started = time.perf_counter()
                    _, where = search(q, use_replica=True)
                    retried.append(time.perf_counter() - started)
                    if where != "primary":
                        raise SystemExit(f"a fenced search was served by {where}")
                with psycopg.connect(replica_url, autocommit=True) as admin:
                    admin.execute("SELECT pg_wal_replay_resume()")

        console.print(f"\n[bold]Replica fence[/] ({args.queries} queries, served: {served})")
        base = summary("search on the primary alone (baseline)", on_primary, None)
        summary("search on the replica + fenced append on the primary", on_replica, base)
        summary("  of which on the primary (fenced append transaction)", primary_share, base)
        base_append = summary("audit append alone, plain (baseline)", plain, None)
        summary("audit append alone, fenced", fenced, base_append)
        if retried:
            summary("search fenced by an unreplayed policy change (retried)", retried, base)
        write_json(
            None if args.json is None else Path(args.json),
            {
                "primary": Latency.of(on_primary).as_dict(),
                "replica": Latency.of(on_replica).as_dict(),
                "primary_share": Latency.of(primary_share).as_dict(),
                "append_plain": Latency.of(plain).as_dict(),
                "append_fenced": Latency.of(fenced).as_dict(),
                "fenced_retry": Latency.of(retried).as_dict(),
            },
        )
        database.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
