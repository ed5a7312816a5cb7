"""The console's chain banner over a large retrieval log: what one page load verifies and costs.

    python -m bench.banner                       # 50,000 retrievals x 10 results
    python -m bench.banner --rows 100000 --queries 5

Retrievals are written through ``app.audit.chain.append_retrieval`` (the real chain step, a
thousand to a transaction), ten results each, a few people and access sets. Then:

- ``verify_all`` in one repeatable-read snapshot (what GET /v1/audit/verify, ``ewall audit
  verify`` and a full check of the banner run): its rate in rows per second, and what that
  rate means at 1M and 10M retrievals;
- ``chain_banner`` (every load of /console/audit, a retrieval's page, a matter's page),
  ``--queries`` times, ``--appends`` new retrievals appended before each load (searches of
  the firm meanwhile): the rows it checked and its time per load, from the position of a
  full verification run first (app.console.chain_watch).
"""

from __future__ import annotations

import argparse
import time
import uuid
from typing import Any

from app.audit import chain
from app.console import chain_watch
from app.console.audit_pages import chain_banner
from app.db.engine import Database, begin_snapshot
from app.settings import Settings
from bench.common import Latency, add_common_arguments, console, quiet_logging, write_json
from bench.server import auto_shared_buffers, bench_database, bench_server, server_config

DB_NAME = "ewall_bench_banner"
PEOPLE = [f"p{n}@firm.nl" for n in range(20)]


def _retrieval(n: int) -> tuple[chain.Retrieval, list[chain.RetrievedChunk]]:
    person = PEOPLE[n % len(PEOPLE)]
    row = chain.Retrieval(
        retrieval_id=uuid.uuid4(),
        at=chain.now_utc(),
        person_id=person,
        roles=["lawyer"],
        purpose="bench",
        query=f"lekkage magazijn schadevergoeding {n}",
        mode="hybrid",
        k=10,
        filters={},
        allowed_wall_groups=[f"g{(n % len(PEOPLE)) * 7 + i}" for i in range(40)],
        source_principals=[person],
        policy_version=1,
        model=None,
        prompt_version=None,
        strategy="exact",
        took_ms=12.5,
        result_count=10,
    )
    results = [
        chain.RetrievedChunk(
            rank=r,
            chunk_id=f"doc{(n * 10 + r) % 5000}#{r}",
            matter_id=f"M-{(n + r) % 300}",
            content_sha256=f"{(n * 10 + r):064x}",
            score=1.0 / (r + 1),
        )
        for r in range(1, 11)
    ]
    return row, results


def append(database: Database, start: int, count: int, batch: int = 1000) -> None:
    done = 0
    while done < count:
        with database.transaction() as conn:
            for n in range(start + done, start + min(count, done + batch)):
                chain.append_retrieval(conn, *_retrieval(n))
        done = min(count, done + batch)


def full_verify(database: Database) -> tuple[float, dict[str, Any]]:
    with database.engine.connect() as conn:
        begin_snapshot(conn)
        started = time.perf_counter()
        report = chain.verify_all(conn)
        return time.perf_counter() - started, report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.banner",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(parser, rows=50_000, queries=5, rows_help="audited retrievals")
    parser.add_argument("--appends", type=int, default=10, help="retrievals before each load")
    args = parser.parse_args(argv)
    quiet_logging()
    settings = Settings(database_url=None, log_json=False, retag_worker=False)
    out: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}

    with (
        bench_server(
            data_dir=args.data_dir,
            keep=args.keep,
            config=server_config(
                auto_shared_buffers(args.rows * 10, 400)
                if args.shared_buffers == "auto"
                else args.shared_buffers
            ),
        ) as server,
        bench_database(server, settings, DB_NAME, signature=None, keep=args.keep) as bdb,
    ):
        database = bdb.database
        started = time.perf_counter()
        append(database, 0, args.rows)
        console.print(f"appended {args.rows:,} retrievals in {time.perf_counter() - started:.1f} s")
        seconds, report = full_verify(database)
        if not report["ok"]:
            raise SystemExit(f"the chain does not verify: {report}")
        rate = report["checked"] / seconds
        out["full"] = {"rows": report["checked"], "seconds": seconds, "rows_per_s": rate}
        console.print(
            f"verify_all: {report['checked']:,} rows in {seconds:.2f} s = {rate:,.0f} rows/s; "
            f"at 1M rows {1e6 / rate:,.0f} s, at 10M rows {1e7 / rate:,.0f} s"
        )
        # the process's full verification, whose position the page loads verify from (before
        # app.console.chain_watch every load was a verify_all: the figure above)
        chain_watch.watch_for(database).verify_in_full(database)
        times: list[float] = []
        checked: list[int] = []
        next_n = args.rows
        for _ in range(args.queries):
            append(database, next_n, args.appends)
            next_n += args.appends
            started = time.perf_counter()
            banner = chain_banner(database)
            times.append(time.perf_counter() - started)
            if not banner["ok"]:
                raise SystemExit(f"the banner is not ok: {banner}")
            checked.append(int(banner["checked"]))
        latency = Latency.of(times)
        out["banner"] = {"checked": checked, "latency": latency.as_dict()}
        console.print(
            f"chain_banner: rows checked per load {checked}; "
            f"p50 {latency.p50_ms:.1f} ms, max {latency.max_ms:.1f} ms"
        )
    write_json(args.json_path, out)


if __name__ == "__main__":
    main()
