"""Wall exposure benchmark: who retrieved what a wall protects, over a large retrieval audit.

    python -m bench.exposure                     # 100,000 retrievals x 10 results, 5,000 matters
    python -m bench.exposure --rows 20000 --queries 20

The matrix comes from the bulk import (as in ``bench.walls``); the audit rows are written
with COPY (dummy hashes: the chain is not what is measured), retrieval times spread over a
year, people and sessions at random, matter popularity falling as rank^-0.7. Three walls
are issued with ``issue_wall``: around 3 typical matters, around the 3 most retrieved ones,
and around ``--wide`` typical matters. Then ``app.walls.exposure.exposure`` (its two
statements plus the grouping in Python, what ``GET /v1/walls/{id}/exposure`` runs after its
snapshot) is timed with the default lookback, and again after dropping ``(person_id, at)``
on retrievals (added for it). The readers unknown to the matrix are found by a skip scan
over an index led by ``person_id``, so the schema's indexes on it are not dropped here (the
rows without them, before that scan, are in docs/sessions.md).
"""

from __future__ import annotations

import argparse
import io
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from rich.table import Table
from sqlalchemy import text

from app.audit.chain import access_set_id, now_utc
from app.settings import Settings
from app.walls import exposure
from app.walls.graph import MatrixSnapshot
from app.walls.resolution import read_snapshot
from app.walls.schemas import Protects, WallIn
from app.walls.service import issue_wall
from bench.common import (
    Latency,
    Phases,
    add_common_arguments,
    console,
    fmt_ms,
    fmt_ratio,
    quiet_logging,
    write_json,
)
from bench.server import (
    BenchDatabase,
    auto_shared_buffers,
    bench_database,
    bench_server,
    server_config,
)
from bench.walls import build_matrix, person_id

DB_NAME = "ewall_bench_exposure"
PERSON_AT = "ix_audit_retrievals_person_id_at"
GOAL_MS = 50.0  # an interactive preview: the console shows it while the partner types


def load_audit(bdb: BenchDatabase, args: argparse.Namespace, rng: np.random.Generator) -> int:
    """``args.rows`` retrievals with ``args.results`` results each, written with COPY."""
    now = datetime.now(UTC)
    # matter popularity falls off as rank^-0.7 (the most retrieved matter gets about 2% of
    # all results at 5,000 matters); ranks are shuffled over the matter ids
    weights = 1.0 / np.arange(1, args.matters + 1) ** 0.7
    order = rng.permutation(args.matters)
    matters = order[
        rng.choice(args.matters, size=args.rows * args.results, p=weights / weights.sum())
    ]
    people = rng.integers(0, args.people, args.rows)
    sessions = rng.integers(0, args.rows // 5 + 1, args.rows)
    ages = rng.uniform(0, 365 * 86400, args.rows)
    set_id = access_set_id([])  # the empty set, under its content address (migration 0063)
    retrievals = io.StringIO()
    results = io.StringIO()
    for i in range(args.rows):
        rid = uuid.UUID(int=i + 1)
        at = (now - timedelta(seconds=float(ages[i]))).isoformat()
        session = f"s{int(sessions[i])}" if i % 4 else "\\N"
        retrievals.write(
            f"{rid}\t{i + 1}\t{at}\t{person_id(int(people[i]))}\t{{lawyer}}\tsearch\tq\thybrid\t"
            f"10\t{{}}\t{set_id}\t{set_id}\t1\t\\N\t\\N\texact\t1.0\t{args.results}\t"
            f"{session}\t\\N\t\\N\t{'0' * 64}\t{'0' * 64}\n"
        )
        for rank in range(args.results):
            matter = int(matters[i * args.results + rank])
            results.write(
                f"{rid}\t{rank + 1}\tapi:D{matter}-{rank % 3}:{i:016x}\tM{matter:06d}\t"
                f"{'0' * 64}\t0.5\n"
            )
    with bdb.superuser() as su:
        su.execute(
            "INSERT INTO audit_access_sets (set_id, members) VALUES (%s, '{}') "
            "ON CONFLICT DO NOTHING",
            (set_id,),
        )
        with su.cursor().copy(
            "COPY audit_retrievals (retrieval_id, seq, at, person_id, roles, purpose, query, "
            "mode, k, filters, allowed_wall_groups_set, source_principals_set, policy_version, "
            "model, prompt_version, strategy, took_ms, result_count, session_id, "
            "session_matter_id, session_scope, prev_hash, hash) FROM STDIN"
        ) as copy:
            copy.write(retrievals.getvalue())
        with su.cursor().copy(
            "COPY audit_retrieval_results (retrieval_id, rank, chunk_id, matter_id, "
            "content_sha256, score) FROM STDIN"
        ) as copy:
            copy.write(results.getvalue())
        su.execute("UPDATE audit_heads SET seq = %s WHERE chain = 'retrievals'", (args.rows,))
        su.execute("ANALYZE audit_retrievals")
        su.execute("ANALYZE audit_retrieval_results")
    return int(args.rows * args.results)


def issue(bdb: BenchDatabase, matters: list[str], screened: list[str]) -> str:
    with bdb.database.transaction() as conn:
        wall_id, _ = issue_wall(
            conn,
            WallIn(
                kind="exclusionary",
                title="Exposure benchmark wall",
                reason="benchmark",
                protects=Protects(matters=matters),
                screened=screened,
            ),
            "bench",
        )
    return wall_id


def time_exposure(
    bdb: BenchDatabase, snap: MatrixSnapshot, wall_id: str, lookback_days: int, queries: int
) -> tuple[Latency, int]:
    covered = snap.covered_matters[wall_id]
    caller = person_id(0)
    seconds: list[float] = []
    items = 0
    for _ in range(queries):
        now = now_utc()
        started = time.perf_counter()
        with bdb.database.transaction() as conn:
            report = exposure.exposure(
                conn,
                wall_id,
                covered,
                now=now,
                lookback_days=lookback_days,
                snapshot=lambda: snap,
                may_see=exposure.caller_may_see(snap, caller, now),
            )
        seconds.append(time.perf_counter() - started)
        items = len(report["items"])
    return Latency.of(seconds), items


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.exposure",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(parser, rows=100_000, queries=30, rows_help="audited retrievals")
    parser.add_argument("--results", type=int, default=10, help="results per retrieval")
    parser.add_argument("--people", type=int, default=2000)
    parser.add_argument("--matters", type=int, default=5000)
    parser.add_argument("--wide", type=int, default=100, help="matters under the wide wall")
    parser.add_argument("--lookback-days", type=int, default=180)
    args = parser.parse_args(argv)
    args.clients, args.source_groups = 0, 20
    quiet_logging()
    phases = Phases()
    settings = Settings(database_url=None, log_json=False, retag_worker=False)
    rng = np.random.default_rng([args.seed, 16])
    out: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}, "cells": {}}
    with (
        bench_server(
            data_dir=args.data_dir,
            keep=args.keep,
            config=server_config(
                auto_shared_buffers(args.rows * args.results, 400)
                if args.shared_buffers == "auto"
                else args.shared_buffers
            ),
        ) as server,
        bench_database(server, settings, DB_NAME, signature=None, keep=args.keep) as bdb,
    ):
        with phases("matrix import"):
            build_matrix(bdb, args, rng)
        with phases("audit load (COPY)"):
            out["result_rows"] = load_audit(bdb, args, rng)
        # a wall around typical matters, one around the three most retrieved ones (the worst
        # case: many retrievals to group), and a wide one
        with bdb.database.transaction() as conn:
            popular = [
                r[0]
                for r in conn.execute(
                    text(
                        "SELECT matter_id FROM audit_retrieval_results GROUP BY matter_id "
                        "ORDER BY count(*) DESC, matter_id LIMIT 3"
                    )
                )
            ]
        picked = [f"M{int(m):06d}" for m in rng.choice(args.matters, args.wide + 3, replace=False)]
        screened = [person_id(int(i)) for i in rng.integers(1, args.people, 40)]
        with phases("issue walls (exposure in the policy event)"):
            walls = {
                "3 typical matters": issue(bdb, picked[:3], screened),
                "3 hottest matters": issue(bdb, popular, screened),
                f"{args.wide} typical matters": issue(bdb, picked[3:], screened),
            }
        with phases("snapshot"):
            started = time.perf_counter()
            snap = read_snapshot(bdb.database)
            out["snapshot_ms"] = (time.perf_counter() - started) * 1000
        table = Table(
            title=f"exposure over {args.rows:,} retrievals ({out['result_rows']:,} results)"
        )
        for column in ("wall", "indexes", "p50", "p95", "vs this design", "items"):
            table.add_column(column)
        baselines: dict[str, float] = {}
        variants = [
            ("(person_id, at) + person_id + matter_id (this design)", []),
            ("person_id + matter_id", [f"DROP INDEX {PERSON_AT}"]),
        ]
        for label, drops in variants:
            with bdb.superuser(autocommit=True) as su:
                for statement in drops:
                    su.execute(statement)
                su.execute("ANALYZE audit_retrieval_results")
            for name, wall_id in walls.items():
                latency, items = time_exposure(bdb, snap, wall_id, args.lookback_days, args.queries)
                key = f"{name} | {label}"
                out["cells"][key] = {**latency.as_dict(), "items": items}
                baselines.setdefault(name, latency.p95_ms)
                table.add_row(
                    name,
                    label,
                    fmt_ms(latency.p50_ms),
                    fmt_ms(latency.p95_ms),
                    fmt_ratio(latency.p95_ms, baselines[name]),
                    str(items),
                )
        console.print(table)
        console.print(
            f"snapshot read (once per request, not in the figures above): "
            f"{out['snapshot_ms']:.0f} ms; goal for the exposure itself: p95 <= {GOAL_MS:.0f} ms"
        )
        write_json(args.json_path, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
