"""The fixed statements of every search: prepared once per connection, and the allowed groups
bound as one array literal, against the code before.

Besides its one search statement, every search runs the same small statements: the RLS
settings, the allowed source ACLs, the group sizes for the strategy choice, the query
analysis (the sparse leg's inputs) and, last, the audit append with its chain step. Their
shapes never change, so ``EWALL_DB_PREPARE`` (on by default) prepares them once per
connection (app/db/engine.py), and the allowed wall groups travel as one text[] literal
built once per set (app/db/sqlfiles.py) instead of a list psycopg dumps element by element.
Three pools on the same database run the service's own functions for those statements with
the same inputs, each going first in turn, in the same process: the design, the literal
without preparing, and the code before (neither, the baseline). Then the audit chain all
three wrote is verified.

    python -m bench.statements [--queries 1000] [--groups 1000] [--lexemes 50000]

The query analysis reads the lexeme statistics of a Zipf-distributed vocabulary of the shared
corpus (``--lexemes`` rows, written directly: no chunks are needed for it).
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from app.audit import chain
from app.db import sqlfiles
from app.db.engine import Database
from app.db.sqlfiles import text_array
from app.search import repository as search_repository
from app.search import service as search_service
from app.settings import Settings
from app.walls import repository as walls_repository
from bench.common import (
    Latency,
    Phases,
    Stopwatch,
    add_common_arguments,
    build_vocabulary,
    console,
    fmt_ms,
    fmt_ratio,
    progress_bar,
    quiet_logging,
    verdict,
    write_json,
)
from bench.server import bench_database, bench_server, server_config, server_facts

DB_NAME = "ewall_bench_statements"
QUESTIONS = (
    "huurachterstand ontbinding huurovereenkomst woonruimte",
    "ontslag op staande voet dringende reden werkgever",
    "aansprakelijkheid bestuurder faillissement onbehoorlijk bestuur",
    "octrooiinbreuk voorlopige voorziening spoedeisend belang",
    "de kosten van het geding in hoger beroep",
)
PARTS = ("RLS settings", "source ACLs", "group sizes", "query analysis", "audit append", "commit")


@dataclass
class Variant:
    name: str
    database: Database
    lists: bool = False  # bind the allowed groups as a Python list (the code before)
    seconds: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PARTS})
    totals: list[float] = field(default_factory=list)


def one_search(variant: Variant, settings: Settings, groups: list[str], question: str) -> None:
    """The fixed statements of one hybrid search, in the service's order, each timed."""
    taken: dict[str, float] = {}

    def timed(part: str, run: Callable[[], Any]) -> Any:
        watch = Stopwatch()
        out = run()
        taken[part] = watch.elapsed()
        return out

    principals = ["everyone", "person:bench"]
    total = Stopwatch()
    with variant.database.transaction() as conn:
        acls = timed("source ACLs", lambda: walls_repository.allowed_source_acls(conn, principals))
        if variant.lists:
            timed(
                "RLS settings",
                lambda: conn.execute(
                    sqlfiles.query("walls.set_allowed_sets"), {"groups": groups, "acls": list(acls)}
                ),
            )
        else:
            timed(
                "RLS settings", lambda: walls_repository.set_allowed_sets(conn, groups, list(acls))
            )
        bound = groups if variant.lists else text_array(tuple(groups))
        timed("group sizes", lambda: search_repository.group_sizes(conn, bound, list(acls)))
        timed(
            "query analysis",
            lambda: search_service.analyze_configured(
                conn, question, wall_groups=bound, source_acl_ids=list(acls)
            ),
        )
        row = chain.Retrieval(
            retrieval_id=uuid.uuid4(),
            at=datetime.now(UTC),
            person_id="person:bench",
            roles=["lawyer"],
            purpose="benchmark",
            query=question,
            mode="hybrid",
            k=10,
            filters={},
            allowed_wall_groups=groups,
            source_principals=principals,
            policy_version=1,
            model=None,
            prompt_version=None,
            strategy="hnsw",
            took_ms=12.5,
            result_count=10,
            query_model=settings.embedding_model,
        )
        results = [
            chain.RetrievedChunk(
                rank=r,
                chunk_id=f"chunk-{uuid.uuid4().hex[:12]}",
                matter_id=f"matter-{r}",
                content_sha256="ab" * 32,
                score=1.0 / (60 + r),
            )
            for r in range(1, 11)
        ]
        timed("audit append", lambda: chain.append_retrieval(conn, row, results))
        before_commit = total.elapsed()
    taken["commit"] = total.elapsed() - before_commit
    variant.totals.append(total.elapsed())
    for part, seconds in taken.items():
        variant.seconds[part].append(seconds)


def fill_lexemes(
    superuser: Any, vocabulary: Sequence[str], seed: int, groups: Sequence[str]
) -> None:
    """Lexeme statistics as a 1M-chunk corpus would have them (Zipf document frequencies):
    the global table, and the per-access-key tables the query analysis reads (migration
    20261203_0042), each lexeme's chunks spread evenly over up to 20 of ``groups`` under the
    "public" source ACL."""
    rng = np.random.default_rng(seed)
    rows = 1_000_000
    spread = max(1, min(20, len(groups)))
    with superuser.cursor() as cur:
        cur.execute("DELETE FROM lexeme_stats")
        cur.execute("DELETE FROM search_key_lexeme_stats")
        cur.execute("DELETE FROM search_key_stats")
        dfs = [
            max(1, int(rows * 0.3 / rank * rng.uniform(0.8, 1.2)))
            for rank in range(1, len(vocabulary) + 1)
        ]
        with cur.copy("COPY lexeme_stats (lexeme, ndoc) FROM STDIN") as copy:
            for word, df in zip(vocabulary, dfs, strict=True):
                copy.write_row((word, df))
        with cur.copy(
            "COPY search_key_lexeme_stats (lexeme, wall_group_id, source_acl_id, n_chunks) "
            "FROM STDIN"
        ) as copy:
            for rank, (word, df) in enumerate(zip(vocabulary, dfs, strict=True)):
                for j in range(spread):
                    copy.write_row(
                        (word, groups[(rank + j) % len(groups)], "public", max(1, df // spread))
                    )
        with cur.copy(
            "COPY search_key_stats (wall_group_id, source_acl_id, n_chunks) FROM STDIN"
        ) as copy:
            for group in groups:
                copy.write_row((group, "public", rows // max(1, len(groups))))
        cur.execute("UPDATE corpus_stats SET n_chunks = %s WHERE id = 1", (rows,))
        cur.execute("ANALYZE lexeme_stats, search_key_lexeme_stats, search_key_stats")
    superuser.commit()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.statements",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(parser, rows=1, queries=1000, rows_help="unused")
    parser.add_argument("--groups", type=int, default=1000, help="allowed wall groups")
    parser.add_argument("--lexemes", type=int, default=50_000, help="lexeme statistics rows")
    parser.add_argument("--warmup", type=int, default=50, help="untimed searches per variant")
    args = parser.parse_args(argv)
    quiet_logging()
    phases = Phases()
    settings = Settings(database_url=None, log_json=False, retag_worker=False)
    groups = [f"wg-{i:05d}" for i in range(args.groups)]
    with (
        bench_server(
            data_dir=args.data_dir, keep=args.keep, config=server_config("256MB")
        ) as server,
        bench_database(server, settings, DB_NAME, signature=None, keep=args.keep) as bdb,
    ):
        with bdb.superuser() as su:
            facts = server_facts(su)
            with phases("lexeme statistics"):
                vocabulary = build_vocabulary(
                    args.corpus if args.corpus.is_dir() else None, args.lexemes, 1.0, args.seed
                )
                fill_lexemes(su, [str(w) for w in vocabulary.words], args.seed, groups)
        urls = bdb.database.urls
        variants = [
            Variant("prepared + literal (design)", bdb.database),
            Variant(
                "literal only",
                Database(urls, app_role=settings.app_role, pool_size=2, prepare_marked=False),
            ),
            Variant(
                "before (baseline)",
                Database(urls, app_role=settings.app_role, pool_size=2, prepare_marked=False),
                lists=True,
            ),
        ]
        if not bdb.database.prepare_marked:
            raise SystemExit("the bench pool must prepare the marked statements (the design)")
        try:
            with phases("searches"), progress_bar() as bar:
                task = bar.add_task("searches", total=args.warmup + args.queries)
                for i in range(args.warmup + args.queries):
                    question = QUESTIONS[i % len(QUESTIONS)]
                    order = variants[i % 3 :] + variants[: i % 3]  # each goes first in turn
                    for variant in order:
                        one_search(variant, settings, groups, question)
                        if i < args.warmup:  # the warm-up is not kept
                            for values in [*variant.seconds.values(), variant.totals]:
                                values.pop()
                    bar.advance(task)
            with phases("audit verification"), bdb.database.connect() as conn:
                report = chain.verify_chain(conn, "retrievals")
        finally:
            for variant in variants[1:]:
                variant.database.dispose()
    print_results(variants, args.queries)
    console.print(f"audit chain after the run: {'intact' if report.ok else 'BROKEN'}")
    write_json(
        args.json_path,
        {
            "args": {k: str(v) for k, v in vars(args).items()},
            "server": facts,
            "variants": {
                v.name: {
                    "parts_ms": {p: Latency.of(s).as_dict() for p, s in v.seconds.items()},
                    "total_ms": Latency.of(v.totals).as_dict(),
                }
                for v in variants
            },
            "audit_ok": report.ok,
            "phases_s": {k: round(v, 2) for k, v in phases.seconds.items()},
        },
    )
    return 0 if report.ok else 1


def print_results(variants: list[Variant], queries: int) -> None:
    design, middle, baseline = variants
    console.print(
        f"\nThe fixed statements of one search, {queries} searches per variant, p50 / p95 ms; "
        "the ratio is the design against the baseline (the code before), same run"
    )
    console.print(
        f"{'part':<16} {'prepared + literal':>20} {'literal only':>20} "
        f"{'before (baseline)':>20} {'p50':>7} {'p95':>7}"
    )
    for part in (*PARTS, "total"):
        d, m, b = (
            Latency.of(v.totals if part == "total" else v.seconds[part])
            for v in (design, middle, baseline)
        )
        console.print(
            f"{part:<16} {fmt_ms(d.p50_ms) + ' / ' + fmt_ms(d.p95_ms):>20} "
            f"{fmt_ms(m.p50_ms) + ' / ' + fmt_ms(m.p95_ms):>20} "
            f"{fmt_ms(b.p50_ms) + ' / ' + fmt_ms(b.p95_ms):>20} "
            f"{fmt_ratio(d.p50_ms, b.p50_ms):>7} {fmt_ratio(d.p95_ms, b.p95_ms):>7}"
        )
    goal = Latency.of(design.seconds["audit append"]).p95_ms
    console.print(
        f"audit append p95 {fmt_ms(goal)} ms against the goal of 2 ms: {verdict(goal <= 2.0)}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
