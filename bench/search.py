"""Search and audit benchmark: a full, correct top-k at every selectivity, and what it costs.

    python -m bench.search                    # 1M chunks, the full table
    python -m bench.search --rows 20000 --queries 20
    python -m bench.search --calibrate        # exact vs HNSW across 0.5..100 %
    python -m bench.search --partitions 4 16 --storage halfvec   # layouts vs 1p vector

A firm is built through the service's own code: 1,000 matters, each behind its own wall
(so each is its own wall group, uncorrelated with the vectors), and benchmark people screened
by those walls so that each sees 0.1 %, 1 %, 10 % or 100 % of the groups. Every measured
search goes through ``run_search`` (resolution, strategy choice, the one statement, the
exact fallback, the audit append, commit), as the least-privilege role under RLS. Beside it,
in the same process and on the same queries: (b) plain filtered HNSW as the planner picks it
and (c) the same service path with the exact strategy forced. Recall is measured against an
exact scan over the allowed rows run by the superuser.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from app.auth.service import TokenVerifier
from app.db import migrate
from app.embeddings import Embedder, vector_literal
from app.resources import Resources
from app.settings import Settings
from app.walls.resolution import AccessResolver
from bench.common import (
    ClusteredVectors,
    Phases,
    add_common_arguments,
    build_vocabulary,
    console,
    progress_bar,
    quiet_logging,
    write_json,
)
from bench.loading import LayoutReport, apply_layout, layout_relations, prewarm
from bench.search_compare import (
    baseline_blocks,
    load_baseline,
    print_seed_recall,
    print_versus,
    recall_over_seeds,
    seed_recall_dicts,
)
from bench.search_firm import Layout as FirmLayout
from bench.search_firm import build_firm, load_corpus, plan_layout, sparse_queries, term_bands
from bench.search_layout_report import print_layouts
from bench.search_measure import (
    CALIBRATION_LEVELS,
    AuditClock,
    Bench,
    Cell,
    StatementClock,
    calibrate,
    measure_level,
    print_breakdown,
    print_calibration,
    print_table,
    recommend,
)
from bench.search_sparse_report import print_sparse_recall
from bench.server import (
    auto_shared_buffers,
    bench_database,
    bench_server,
    mark_loaded,
    print_facts,
    server_config,
    server_facts,
)

LEVELS = (0.001, 0.01, 0.10, 1.0)
DB_NAME = "ewall_bench_search"


# --- main ------------------------------------------------------------------------------


def bench_settings(model: str | None = None) -> Settings:
    """The service's settings; ``model``: another EWALL_EMBEDDING_MODEL (its dimension and
    calibrated dense weight follow it, as in the service)."""
    if model is None:
        return Settings(database_url=None, log_json=False, retag_worker=False)
    return Settings(database_url=None, log_json=False, retag_worker=False, embedding_model=model)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.search",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(parser, rows=1_000_000, queries=100, rows_help="chunks in the corpus")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="measure exact vs HNSW at 0.5..100 %% and recommend the threshold",
    )
    parser.add_argument("--groups", type=int, default=1000, help="wall groups (= matters)")
    parser.add_argument("--people-per-level", type=int, default=3)
    parser.add_argument("--k", type=int, default=10, help="top-k asked for (default 10)")
    parser.add_argument(
        "--query-seed",
        type=int,
        default=None,
        help="seed of the timed questions and vectors (default --seed); another value asks "
        "other questions of the same loaded corpus",
    )
    parser.add_argument("--warmup", type=int, default=3, help="untimed queries per cell")
    parser.add_argument(
        "--model",
        default=None,
        help="EWALL_EMBEDDING_MODEL of the service (default: the default; the corpus takes its "
        "dimension, the fusion its calibrated weight)",
    )
    parser.add_argument(
        "--encode",
        action="store_true",
        help="also time each hybrid question end to end: encoded with --model's encoder, "
        "then searched",
    )
    parser.add_argument("--clusters", type=int, default=0, help="0: rows/500 within 20..5000")
    parser.add_argument("--spread", type=float, default=1.0, help="cluster noise / radius")
    parser.add_argument("--words", type=int, default=160, help="mean words per chunk")
    parser.add_argument("--vocab", type=int, default=200_000, help="vocabulary size")
    parser.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of terms")
    parser.add_argument("--chunks-per-document", type=int, default=20)
    parser.add_argument(
        "--baseline-ref",
        default=None,
        metavar="REV",
        help="also run sql/search.sql's per-search blocks as of git REV beside the current ones",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="dense recall of the design over this many query seeds (--queries each)",
    )
    parser.add_argument(
        "--ef-search",
        type=int,
        nargs="+",
        default=[],
        metavar="EF",
        help="also run the design's dense path with these hnsw_ef_search values (recall, time)",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        nargs="+",
        default=[],
        help="also measure chunks as N hash partitions by document (vector storage)",
    )
    parser.add_argument(
        "--storage",
        nargs="+",
        choices=("vector", "halfvec"),
        default=[],
        help="also measure this embedding storage (one table)",
    )
    parser.add_argument(
        "--layout",
        nargs="+",
        default=[],
        metavar="N:STORAGE",
        help="also measure these layouts, e.g. 16:halfvec",
    )
    args = parser.parse_args(argv)
    layouts = requested_layouts(args.partitions, args.storage, args.layout)
    quiet_logging()
    phases = Phases()
    run_started = time.perf_counter()

    settings = bench_settings(args.model)
    clusters = args.clusters or min(5000, max(20, args.rows // 500))
    layout = plan_layout(
        args.groups, sorted(set(LEVELS) | set(CALIBRATION_LEVELS)), args.people_per_level, args.seed
    )
    signature = {
        "bench": "search",
        "generator": 3,
        "rows": args.rows,
        "groups": args.groups,
        "clusters": clusters,
        "spread": args.spread,
        "words": args.words,
        "vocab": args.vocab,
        "zipf": args.zipf,
        "seed": args.seed,
        "people_per_level": args.people_per_level,
        "chunks_per_document": args.chunks_per_document,
        "dim": settings.embedding_dim,
        "schema": migrate.head_revision(),
    }
    shared_buffers = (
        auto_shared_buffers(args.rows) if args.shared_buffers == "auto" else args.shared_buffers
    )
    with phases("vocabulary"):
        vocab = build_vocabulary(
            args.corpus if args.corpus.is_dir() else None, args.vocab, args.zipf, args.seed
        )
        console.print(
            f"  {vocab.size:,} terms ({vocab.real_words:,} real words from "
            f"{vocab.origin}, the rest compounds)"
        )
    vectors = ClusteredVectors(settings.embedding_dim, clusters, args.spread, args.seed)

    results: dict[str, Any] = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "signature": signature,
    }
    with (
        bench_server(
            data_dir=args.data_dir, keep=args.keep, config=server_config(shared_buffers)
        ) as server,
        bench_database(
            server,
            settings,
            DB_NAME,
            signature=signature,
            keep=args.keep or bool(args.data_dir),
            pool_size=2,
        ) as bdb,
    ):
        with bdb.superuser() as su:
            facts = server_facts(su)
        print_facts("server", facts)
        results["server"] = facts
        if bdb.reused:
            console.print(f"[green]reusing the loaded database {bdb.name}[/]")
        else:
            with phases("firm (matrix import + walls)"):
                matter_group = build_firm(bdb, layout)
            with phases("load corpus"):
                results["load"] = load_corpus(bdb, args, layout, matter_group, vocab, vectors)
            mark_loaded(bdb, signature)
        with phases("prewarm"):
            prewarm(
                bdb,
                [
                    "chunks",
                    "ix_chunks_embedding_hnsw",
                    "ix_chunks_wall_group_id",
                    "ix_chunks_body_tsv",
                    "search_postings",
                    "ix_search_postings_impact",
                    "ix_search_postings_key",
                    "pk_search_postings",
                ],
            )
        with phases("query terms"):
            bands = term_bands(bdb, vocab, args.rows, args.seed)
            console.print(
                f"  terms by document frequency: {len(bands.common)} common (1-10%), "
                f"{len(bands.mid)} mid, {len(bands.rare)} rare"
            )
        resolver = AccessResolver()
        verifier = TokenVerifier(settings)
        forced_exact = settings.model_copy(update={"exact_max_rows": 1 << 62})
        forced_hnsw = settings.model_copy(update={"exact_max_rows": 0})
        bench = Bench(
            bdb,
            Resources(settings, bdb.database, verifier, resolver=resolver),
            Resources(forced_exact, bdb.database, verifier, resolver=resolver),
            Resources(forced_hnsw, bdb.database, verifier, resolver=resolver),
            AuditClock(),
            StatementClock(bdb.database),
            args.k,
        )
        bench.ef_variants = {
            ef: Resources(
                settings.model_copy(update={"hnsw_ef_search": ef}),
                bdb.database,
                verifier,
                resolver=resolver,
            )
            for ef in args.ef_search
            if ef != settings.hnsw_ef_search
        }
        if args.encode:
            with phases("encoder"):
                bench.encoder = Embedder(settings)
                bench.encoder.embed_query("opwarmen")  # loaded and warm before any timing
            console.print(f"  encoder {bench.encoder.model_id}, {settings.embedding_dim} dims")
        if args.baseline_ref:
            bench.baseline = load_baseline(args.baseline_ref, bdb.superuser_url)
            bench.baseline_swap = baseline_blocks
        n = args.warmup + args.queries
        query_seed = args.seed if args.query_seed is None else args.query_seed
        qrng = np.random.default_rng([query_seed, 7])
        qvecs = [vector_literal(v) for v in vectors.sample(qrng, n)]
        settings_line = (
            f"exact_max_rows={settings.exact_max_rows}, ef_search={settings.hnsw_ef_search}, "
            f"dense_candidates={settings.dense_candidates}"
        )
        if args.calibrate:
            with phases("calibration"):
                points = calibrate(bench, layout, qvecs, args.warmup, args.rows)
            deep = min(100, settings.dense_candidates)
            rec = recommend(points, args.rows, deep)
            print_calibration(points, rec, args.k, deep, args.rows)
            results["calibration"] = [
                {
                    **{k: v for k, v in vars(p).items() if k not in ("exact", "hnsw")},
                    "exact_ms": p.exact.as_dict(),
                    "hnsw_ms": p.hnsw.as_dict(),
                    "hnsw_good": p.hnsw_good,
                }
                for p in points
            ]
            results["recommendation"] = rec
        else:
            texts = sparse_queries(bands, n, query_seed)
            by_layout: dict[str, list[Cell]] = {}
            reports: list[LayoutReport] = []
            for partitions, storage in layouts:
                title = f"{args.rows:,} chunks, {args.groups} wall groups, k={args.k}"
                if len(layouts) > 1:
                    with phases(f"layout {partitions}p {storage}"):
                        report = apply_layout(bdb, partitions, storage)
                    with bdb.superuser() as su:
                        relations = layout_relations(su)
                    with phases("prewarm"):
                        prewarm(bdb, relations)
                    reports.append(report)
                    title = f"Layout {report.name}: " + title
                cells = measure_layout(bench, layout, qvecs, texts, args.warmup, n)
                print_table(
                    f"{title}, {args.queries} queries per cell ({settings_line})",
                    cells,
                    args.k,
                )
                print_sparse_recall(cells, args.k)
                print_breakdown(cells)
                if bench.baseline is not None:
                    print_versus(cells, bench.baseline)
                if args.seeds > 1 and not by_layout:
                    # on the baseline layout, before any relayout
                    with phases("recall over seeds"), progress_bar() as bar:
                        task = bar.add_task("seeds", total=len(LEVELS) * args.seeds * args.queries)
                        seed_rows = recall_over_seeds(
                            bench,
                            layout.people,
                            LEVELS,
                            vectors,
                            args.seed,
                            args.seeds,
                            args.queries,
                            partial(bar.advance, task),
                        )
                    print_seed_recall(seed_rows, args.k)
                    results["recall_over_seeds"] = seed_recall_dicts(seed_rows)
                by_layout[f"{partitions}p {storage}"] = cells
            if len(layouts) > 1:
                print_layouts([(r.name, r.as_dict()) for r in reports], by_layout)
                results["layouts"] = [
                    {**r.as_dict(), "cells": [c.as_dict() for c in by_layout[r.name]]}
                    for r in reports
                ]
            results["cells"] = [c.as_dict() for c in by_layout[next(iter(by_layout))]]
            results["query_examples"] = {k: v[:3] for k, v in texts.items()}
    results["phases_s"] = {k: round(v, 2) for k, v in phases.seconds.items()}
    results["total_s"] = round(time.perf_counter() - run_started, 1)
    console.print(
        "phases: "
        + ", ".join(f"{k} {v:.0f} s" for k, v in phases.seconds.items())
        + f"; total {results['total_s']:.0f} s"
    )
    write_json(args.json_path, results)
    return 0


def requested_layouts(
    partitions: Sequence[int], storages: Sequence[str], explicit: Sequence[str]
) -> list[tuple[int, str]]:
    """The baseline (1 partition, vector) first, then each layout asked for, once."""
    wanted = [(1, "vector")]
    wanted += [(n, "vector") for n in partitions]
    wanted += [(1, s) for s in storages]
    for item in explicit:
        count, _, storage = item.partition(":")
        if not count.isdigit() or storage not in ("vector", "halfvec"):
            raise SystemExit(f"--layout wants N:vector or N:halfvec, got {item!r}")
        wanted.append((int(count), storage))
    for n, _ in wanted:
        if not 1 <= n <= 256:
            raise SystemExit(f"partitions must be 1..256, got {n}")
    return list(dict.fromkeys(wanted))


def measure_layout(
    bench: Bench,
    layout: FirmLayout,
    qvecs: list[str],
    texts: dict[str, list[str]],
    warmup: int,
    n: int,
) -> list[Cell]:
    cells: list[Cell] = []
    with progress_bar() as bar:
        task = bar.add_task("queries", total=len(LEVELS) * n)
        for level in LEVELS:
            cells.extend(
                measure_level(
                    bench,
                    level,
                    layout.people[level],
                    qvecs,
                    texts,
                    warmup,
                    lambda: bar.advance(task),
                )
            )
    return cells


if __name__ == "__main__":
    raise SystemExit(main())
