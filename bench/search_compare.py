"""bench.search beside an older revision and over several query seeds.

``--baseline-ref REV``: the per-search SQL blocks of sql/search.sql as they were at REV (read
with ``git show``) run through the same service code, on the same queries, interleaved with
the current blocks, so a change of statement shape is measured against what it replaces in
the same run. When REV predates migration 20261201_0032, the baseline's analyze_query
computes the synonym rules at read time, as the view did then. When REV predates migration
20261203_0045 (the impact postings), the baseline's sparse leg ranks its capped pool with
``ewall_sparse_document_rank`` (version 3, put back into the bench database from
sql/functions), its own parameters, and the budgeted match of every question (the service's
choice of sparse form is off while it runs); its analyze_query is today's (the same
statement, three outputs fewer).

``--seeds N``: recall@k of the design's dense path, mean and min, per selectivity and per
query seed (the recall goal holds per query class, not on one lucky seed).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import psycopg
from rich.table import Table
from sqlalchemy import Connection

from app.db import sqlfiles
from app.db.function_sources import FUNCTIONS_FOLDER
from app.db.sqlfiles import sql_dir
from app.embeddings import vector_literal
from app.search import repository, service
from bench.common import ClusteredVectors, Latency, console, fmt_ms, fmt_ratio
from bench.search_measure import RECALL_GOAL, Bench, Cell, level_label, recall

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "search_baseline."
STORED_RULES_MIGRATION = "migrations/versions/2026_12_01_0032_stored_synonym_rules.py"
RULES_QUERY = "'SELECT target, substitute FROM search_synonym_rules'"
# the rules as search_synonym_rules computed them at read time before 20261201_0032
COMPUTED_RULES = """SELECT CASE WHEN cardinality(ewall_query_lexemes(s.term)) = 1
            THEN CAST(quote_literal((ewall_query_lexemes(s.term))[1]) AS tsquery)
            ELSE phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.term)) END,
       CASE WHEN cardinality(ewall_query_lexemes(s.term)) = 1
            THEN CAST(quote_literal((ewall_query_lexemes(s.term))[1]) AS tsquery)
            ELSE phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.term)) END
       || phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.synonym))
FROM search_synonyms AS s
WHERE cardinality(ewall_query_lexemes(s.term)) > 0
  AND cardinality(ewall_query_lexemes(s.synonym)) > 0"""
SWAPPED = ("analyze_query", "group_sizes")
# the hybrid statement per dense form: one block since 20261203_0043, two before
HYBRID_SINGLE = "hybrid"
HYBRID_PAIR: dict[repository.DenseForm, str] = {"exact": "hybrid_exact", "hnsw": "hybrid_hnsw"}


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - fixed program, arguments from the command line
        ["git", "-C", str(ROOT), *args],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    )


_baseline_forms: dict[repository.DenseForm, str] = {}  # set by load_baseline
# before 20261203_0045: the capped pool's parameters, at the values that revision shipped
POOL_PARAMS = {"sparse_rank_cap": 3_000, "sparse_doc_k1": 3.0, "sparse_doc_b": 0.9}
POOL_RANKING = "sparse_document_rank.v3.sql"
_pool_baseline: list[bool] = [False]


def load_baseline(ref: str, superuser_url: str) -> str:
    """Register REV's blocks as ``search_baseline.*``; returns a label for the tables."""
    shown = _git("show", f"{ref}:sql/search.sql")
    if shown.returncode != 0:
        raise SystemExit(f"--baseline-ref {ref}: {shown.stderr.strip()}")
    blocks = sqlfiles.parse_blocks(shown.stdout)
    # before 20261201_0032: synonym rules computed at read time
    older = _git("cat-file", "-e", f"{ref}:{STORED_RULES_MIGRATION}").returncode != 0
    registry = sqlfiles.load_all()
    hybrid = {
        form: HYBRID_SINGLE if HYBRID_SINGLE in blocks else name
        for form, name in HYBRID_PAIR.items()
    }
    pool = ":sparse_rank_cap" in blocks[hybrid["exact"]]
    _pool_baseline[0] = pool
    swapped = [n for n in SWAPPED if not (pool and n == "analyze_query")]
    if pool:
        ranking = sql_dir().joinpath(FUNCTIONS_FOLDER, POOL_RANKING).read_text()
        with psycopg.connect(superuser_url, autocommit=True) as su:
            su.execute(ranking)  # reviewed source, no parameters
    for name in (*swapped, *sorted(set(hybrid.values()))):
        body = blocks[name]
        if older:
            body = body.replace(RULES_QUERY, "'" + COMPUTED_RULES.replace("'", "''") + "'")
        registry[PREFIX + name] = body
    _baseline_forms.clear()
    _baseline_forms.update({form: PREFIX + name for form, name in hybrid.items()})
    rev = _git("rev-parse", "--short", ref).stdout.strip() or ref
    return f"baseline {rev}"


@contextmanager
def baseline_blocks() -> Iterator[None]:
    """The service runs the registered baseline blocks inside this block."""
    saved = dict(repository.BLOCKS)
    current = repository.run_hybrid

    chosen_form = service.sparse_form

    def run_baseline(
        conn: Connection,
        form: repository.DenseForm,
        params: repository.HybridParams,
        scan: repository.HnswScan | None = None,
    ) -> repository.HybridRows:
        # a revision before 20261203_0043 had one block per dense form
        repository.BLOCKS["hybrid"] = _baseline_forms[form]
        if not _pool_baseline[0]:
            return current(conn, form, params, scan)
        # before 20261203_0045: the pool's own parameters beside today's
        sql_params = {**asdict(params), **POOL_PARAMS, "dense_hnsw": form == "hnsw"}
        statement = sqlfiles.query(repository.BLOCKS["hybrid"])
        # inside a savepoint rolled back after it, as run_hybrid does: the HNSW settings end
        # with the statement
        savepoint = conn.begin_nested()
        try:
            if scan is not None:
                conn.execute(
                    sqlfiles.query("search.hnsw_settings"),
                    {"ef_search": scan.ef_search, "max_scan_tuples": scan.max_scan_tuples},
                )
            rows = list(conn.execute(statement, sql_params).mappings())
        finally:
            if savepoint.is_active:
                savepoint.rollback()
        first = rows[0]
        return repository.HybridRows(
            int(first["policy_version_seen"]),
            int(first["dense_count"]),
            int(first["sparse_count"]),
            [
                repository.Hit(**{f.name: r[f.name] for f in fields(repository.Hit)})
                for r in rows
                if r["chunk_id"] is not None
            ],
        )

    swapped = {"group_sizes": PREFIX + "group_sizes"}
    if not _pool_baseline[0]:
        swapped["analyze_query"] = PREFIX + "analyze_query"
    repository.BLOCKS.update(swapped)
    repository.run_hybrid = run_baseline
    if _pool_baseline[0]:
        service.sparse_form = _budgeted_match
    try:
        yield
    finally:
        repository.run_hybrid = current
        service.sparse_form = chosen_form
        repository.BLOCKS.update(saved)


def _budgeted_match(
    params: repository.HybridParams,
    analysis: repository.QueryAnalysis,
    *,
    websearch: bool,
    allowed_rows: int,
) -> repository.HybridParams:
    """The sparse form a revision before 20261203_0045 had: the budgeted match, always (the
    form the service keeps for a question with operators)."""
    return _chosen_form[0](params, analysis, websearch=True, allowed_rows=allowed_rows)


_chosen_form = [service.sparse_form]


# --- recall over several query seeds -----------------------------------------------------


@dataclass
class SeedRecall:
    level: float
    seed: int
    recalls: list[float] = field(default_factory=list)
    short: int = 0
    seconds: list[float] = field(default_factory=list)
    strategies: set[str] = field(default_factory=set)


def recall_over_seeds(
    bench: Bench,
    people: dict[float, list[str]],
    levels: tuple[float, ...],
    vectors: ClusteredVectors,
    seed: int,
    seeds: int,
    queries: int,
    on_step: Callable[[], None],
) -> list[SeedRecall]:
    out: list[SeedRecall] = []
    with bench.bdb.superuser() as su:
        for level in levels:
            for s in range(seeds):
                rng = np.random.default_rng([seed, 11, s])
                row = SeedRecall(level, s)
                for i, v in enumerate(vectors.sample(rng, queries)):
                    qvec = vector_literal(v)
                    person = people[level][i % len(people[level])]
                    truth = bench.truth(su, person, qvec, bench.k)
                    result, seconds, _ = bench.service(
                        bench.resources, person, "dichtbij", "dense", qvec
                    )
                    ids = [r.chunk_id for r in result.rows]
                    row.recalls.append(recall(ids, truth))
                    row.short += len(ids) < len(truth)
                    row.seconds.append(seconds)
                    row.strategies.add(result.strategy)
                    on_step()
                out.append(row)
    return out


def print_seed_recall(rows: list[SeedRecall], k: int) -> None:
    table = Table(
        title=f"Dense recall@{k} of this design over query seeds (mean / min per seed; "
        f"goal mean >= {RECALL_GOAL} and never short)",
        header_style="bold",
    )
    levels = sorted({r.level for r in rows})
    seeds = sorted({r.seed for r in rows})
    table.add_column("allowed")
    table.add_column("strategy")
    for s in seeds:
        table.add_column(f"seed {s}", justify="right")
    for name in ("all: mean", "worst seed mean", "min", "short", "p50 ms", "p95 ms"):
        table.add_column(name, justify="right")
    for level in levels:
        mine = [r for r in rows if r.level == level]
        every = [x for r in mine for x in r.recalls]
        latency = Latency.of([x for r in mine for x in r.seconds])
        table.add_row(
            level_label(level),
            ", ".join(sorted(set().union(*(r.strategies for r in mine)))),
            *[f"{np.mean(r.recalls):.3f}/{min(r.recalls):.2f}" for r in mine],
            f"{np.mean(every):.3f}",
            f"{min(float(np.mean(r.recalls)) for r in mine):.3f}",
            f"{min(every):.2f}",
            str(sum(r.short for r in mine)),
            fmt_ms(latency.p50_ms),
            fmt_ms(latency.p95_ms),
        )
    console.print(table)


def seed_recall_dicts(rows: list[SeedRecall]) -> list[dict[str, object]]:
    return [
        {
            "selectivity": r.level,
            "seed": r.seed,
            "recall_mean": round(float(np.mean(r.recalls)), 4),
            "recall_min": round(min(r.recalls), 4),
            "short": r.short,
            "latency_ms": Latency.of(r.seconds).as_dict(),
            "strategies": sorted(r.strategies),
        }
        for r in rows
    ]


CURRENT = {"dense": "dense: this design", "sparse: common terms": "sparse: common terms"}


def print_versus(cells: list[Cell], label: str) -> None:
    """Each changed path beside the baseline revision, same queries, same run."""
    table = Table(
        title=f"This revision vs {label} (same queries, interleaved; p50 / p95 ms)",
        header_style="bold",
    )
    for name in ("allowed", "search", "now p50", "now p95", "before p50", "before p95", "p95"):
        table.add_column(name, justify="right" if name != "search" else "left")
    by_name = {(c.level, c.measure): c for c in cells}
    for level in sorted({c.level for c in cells}):
        for name in ("dense", "sparse: common terms", "hybrid"):
            now = by_name.get((level, CURRENT.get(name, name)))
            before = by_name.get((level, f"{name}: {label}"))
            if now is None or before is None:
                continue
            a, b = now.latency, before.latency
            table.add_row(
                level_label(level),
                name,
                fmt_ms(a.p50_ms),
                fmt_ms(a.p95_ms),
                fmt_ms(b.p50_ms),
                fmt_ms(b.p95_ms),
                fmt_ratio(a.p95_ms, b.p95_ms),
            )
    console.print(table)
