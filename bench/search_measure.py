"""Measuring bench.search: the service path, plain filtered HNSW and forced exact search on
the same queries, recall against an exact scan, the report tables and the exact-vs-HNSW
calibration."""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
import psycopg
from rich.table import Table
from sqlalchemy import Connection, event, text

from app.audit import chain
from app.auth.service import Principal
from app.db import sqlfiles
from app.db.engine import Database
from app.embeddings import Embedder
from app.resources import Resources
from app.search.schemas import SearchIn
from app.search.service import SearchResult, embed_query, needs_query_vector, run_search
from app.walls.access import access_for, apply
from bench.common import Latency, Stopwatch, console, fmt_ms, fmt_ratio, progress_bar, verdict
from bench.search_firm import Layout
from bench.server import BenchDatabase
from bench.sparse_recall import sparse_reference

CALIBRATION_LEVELS = (0.005, 0.01, 0.02, 0.05, 0.10, 0.20, 0.50, 1.0)
RECALL_GOAL = 0.98
HYBRID_P95_GOAL_MS = 30.0
SPARSE_P95_GOAL_MS = 50.0
AUDIT_P95_GOAL_MS = 2.0
Mode = Literal["hybrid", "dense", "sparse"]

# (b) The way most filtered-vector SQL is written: one statement, the wall predicate in the
# WHERE, ORDER BY the distance operator, default GUCs (ef_search 40, iterative scans off),
# whatever plan the planner picks. Run as the app role under RLS, like the service.
PLAIN_FILTERED_HNSW = """-- bench.plain_filtered_hnsw
SELECT c.chunk_id
FROM chunks c
WHERE c.wall_group_id = ANY(CAST(:wall_groups AS text[]))
  AND c.source_acl_id = ANY(CAST(:source_acl_ids AS text[]))
  AND NOT c.suppressed
ORDER BY c.embedding <=> CAST(:qvec AS vector)
LIMIT :k"""

# Ground truth: the true nearest neighbours among the rows the person may see. Index scans
# off (HNSW only has index scans), so the plan is a bitmap/seq scan plus a sort: exact.
TRUTH = """
SELECT chunk_id FROM chunks
WHERE wall_group_id = ANY(%(groups)s) AND source_acl_id = ANY(%(acls)s) AND NOT suppressed
ORDER BY embedding <=> CAST(%(qvec)s AS vector), chunk_id
LIMIT %(k)s"""


def level_label(level: float) -> str:
    return f"{level * 100:g}%"


# --- measuring -------------------------------------------------------------------------


class AuditClock:
    """Times chain.append_retrieval inside the real search transaction: the service calls it
    through the module attribute, so wrapping the attribute measures the real append."""

    def __init__(self) -> None:
        self.last = 0.0
        original = chain.append_retrieval

        def timed(
            conn: Connection,
            entry: chain.Retrieval,
            results: Sequence[chain.RetrievedChunk],
            *,
            within_s: float | None = None,
        ) -> chain.Appended:
            watch = Stopwatch()
            try:
                return original(conn, entry, results, within_s=within_s)
            finally:
                self.last = watch.elapsed()

        chain.append_retrieval = timed

    def take(self) -> float:
        value, self.last = self.last, 0.0
        return value


# The statements of one search by their SQL block (sql/*.sql) and the part of the time
# table they count toward; anything else is "other SQL". Each statement is told by its
# block's first line of SQL (`statement_marker`), so a block that changes keeps its label;
# tests/search/test_bench_labels.py checks that no two blocks share a marker.
STATEMENT_BLOCKS = (
    ("search.hnsw_settings", "HNSW settings"),
    ("search.analyze_query", "analyze_query"),
    ("search.hybrid", "search statement"),
    ("search.group_sizes", "group sizes"),
    ("walls.allowed_source_acls", "source ACLs"),
    ("walls.set_allowed_sets", "RLS settings"),
    ("audit.append_retrieval", "audit append"),
    ("limits.spend", "limits"),
    ("limits.take_slot", "limits"),
    ("limits.release_slot", "limits"),
    ("reembed.live_model", "live model"),
    ("reembed.lock_chunks_shared", "live model"),
    ("sessions.lock_session", "session"),
    ("sessions.lock_session_shared", "session"),
    ("sessions.session_binding", "session"),
)


def statement_marker(block: str) -> str:
    """The first line of SQL (not a comment) of ``block``, up to its first parameter: text
    the executed statement holds whatever the driver does to parameters."""
    first = next(
        line.strip() for line in sqlfiles.raw(block).splitlines()
        if line.strip() and not line.strip().startswith("--")
    )
    return first.split(":", 1)[0]


def statement_labels() -> tuple[tuple[str, str], ...]:
    return tuple((statement_marker(block), label) for block, label in STATEMENT_BLOCKS)


class StatementClock:
    """Client-side time per statement kind on the service's pool (SQLAlchemy cursor
    events): where one search's time goes, without touching the service."""

    def __init__(self, database: Database) -> None:
        self.current: dict[str, float] = {}
        labels = statement_labels()

        @event.listens_for(database.engine, "before_cursor_execute")
        def _before(
            conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
        ) -> None:
            conn.info["bench_started"] = time.perf_counter()

        @event.listens_for(database.engine, "after_cursor_execute")
        def _after(
            conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
        ) -> None:
            started = conn.info.pop("bench_started", None)
            if started is None:
                return
            label = next(
                (name for marker, name in labels if marker in statement),
                "other SQL",
            )
            self.current[label] = self.current.get(label, 0.0) + time.perf_counter() - started

    def take(self) -> dict[str, float]:
        value, self.current = self.current, {}
        return value


@dataclass
class Cell:
    """One (selectivity, method) row of the table."""

    level: float
    measure: str
    seconds: list[float] = field(default_factory=list)
    recalls: list[float] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    expected: list[int] = field(default_factory=list)
    strategies: Counter[str] = field(default_factory=Counter)
    plan: str = ""
    parts: list[dict[str, float]] = field(default_factory=list)  # per search: seconds by part
    allowed_rows: float = 0.0
    # sparse cells: recall@k against the brute-force reference (bench/sparse_recall.py), every
    # visible chunk scored with the same analysis (in ``recalls``) and with the budget and the
    # common-lexeme cut lifted (``lifted_recalls``); the visible chunks holding a ranking
    # lexeme per query
    lifted_recalls: list[float] = field(default_factory=list)
    pool_sizes: list[int] = field(default_factory=list)

    @property
    def impact_form(self) -> int:
        """Searches whose sparse leg read the postings in impact order."""
        return sum(n for strategy, n in self.strategies.items() if "+impact" in strategy)

    @property
    def sum_form(self) -> int:
        """Searches whose sparse leg summed every visible posting of its lexemes."""
        return sum(n for strategy, n in self.strategies.items() if "+postings" in strategy)

    @property
    def latency(self) -> Latency:
        return Latency.of(self.seconds)

    @property
    def short(self) -> int:
        return sum(1 for got, want in zip(self.rows, self.expected, strict=True) if got < want)

    def as_dict(self) -> dict[str, Any]:
        return {
            "selectivity": self.level,
            "measure": self.measure,
            "allowed_rows_mean": round(self.allowed_rows, 1),
            "latency_ms": self.latency.as_dict(),
            "recall_mean": round(float(np.mean(self.recalls)), 4) if self.recalls else None,
            "recall_min": round(min(self.recalls), 4) if self.recalls else None,
            "rows_min": min(self.rows) if self.rows else None,
            "expected_min": min(self.expected) if self.expected else None,
            "short_results": self.short if self.expected else None,
            "strategies": dict(self.strategies),
            "plan": self.plan,
            "breakdown_p50_ms": self.breakdown(),
            **(
                {
                    "sparse_lifted_recall_mean": round(float(np.mean(self.lifted_recalls)), 4),
                    "sparse_lifted_recall_min": round(min(self.lifted_recalls), 4),
                    "sparse_allowed_matches_mean": round(float(np.mean(self.pool_sizes)), 1),
                    "sparse_allowed_matches_max": max(self.pool_sizes),
                    "sparse_impact_form": self.impact_form,
                    "sparse_sum_form": self.sum_form,
                }
                if self.pool_sizes
                else {}
            ),
        }

    def breakdown(self) -> dict[str, float]:
        names = sorted({name for part in self.parts for name in part})
        return {
            name: round(float(np.median([p.get(name, 0.0) for p in self.parts])) * 1000, 3)
            for name in names
        }


@dataclass
class Bench:
    bdb: BenchDatabase
    resources: Resources  # the design, as configured
    exact: Resources  # the same service with the exact strategy forced
    hnsw: Resources  # the same service with the HNSW strategy forced (calibration)
    audit: AuditClock
    statements: StatementClock
    k: int
    _access: dict[str, tuple[list[str], list[str], int]] = field(default_factory=dict)
    last_parts: dict[str, float] = field(default_factory=dict)
    # --baseline-ref: its label and the swap of the service's SQL blocks (bench/search_compare)
    baseline: str | None = None
    baseline_swap: Callable[[], AbstractContextManager[None]] | None = None
    # --ef-search: the design with another hnsw_ef_search, per value (same queries)
    ef_variants: dict[int, Resources] = field(default_factory=dict)
    # --encode: the model that encodes each hybrid question before it is searched, timed
    # with it (the search itself uses the corpus's clustered query vector)
    encoder: Embedder | None = None

    def encoded_hybrid(self, person: str, query: str, qvec: str) -> tuple[float, float]:
        """(seconds of the whole request, seconds of the encoding): the question encoded as
        the router does it, then the same hybrid search as the "hybrid" cell."""
        if self.encoder is None:
            raise RuntimeError("encoded_hybrid needs --encode")
        watch = Stopwatch()
        if needs_query_vector(self.resources.settings, SearchIn(query=query)):
            embed_query(self.encoder, query)
        encoding = watch.elapsed()
        _, seconds, _ = self.service(self.resources, person, query, "hybrid", qvec)
        return encoding + seconds, encoding

    def access(self, person: str) -> tuple[list[str], list[str], int]:
        """(wall groups, source ACLs, allowed rows) exactly as the service resolves them."""
        if person not in self._access:
            resolver = self.resources.require_resolver()
            with self.bdb.database.transaction() as conn:
                resolution = resolver.resolve(self.bdb.database, person, datetime.now(UTC))
                access = access_for(conn, resolution)
                allowed = conn.execute(
                    text(
                        "SELECT coalesce(sum(n_chunks), 0) FROM wall_group_sizes "
                        "WHERE wall_group_id = ANY(CAST(:g AS text[]))"
                    ),
                    {"g": list(access.wall_groups)},
                ).scalar_one()
            self._access[person] = (
                list(access.wall_groups),
                list(access.source_acl_ids),
                int(allowed),
            )
        return self._access[person]

    def truth(self, su: psycopg.Connection[Any], person: str, qvec: str, k: int) -> list[str]:
        groups, acls, _ = self.access(person)
        with su.transaction():
            su.execute("SET LOCAL enable_indexscan = off")
            rows = su.execute(TRUTH, {"groups": groups, "acls": acls, "qvec": qvec, "k": k})
            return [str(r[0]) for r in rows]

    def service(
        self,
        resources: Resources,
        person: str,
        query: str,
        mode: Mode,
        qvec: str,
        k: int | None = None,
    ) -> tuple[SearchResult, float, float]:
        """One search as the API runs it: its own transaction, committed. Its time split by
        part is left in ``self.last_parts``."""
        principal = Principal(person_id=person, roles=frozenset({"lawyer"}))
        request = SearchIn(query=query, k=k or self.k, mode=mode)
        self.audit.take()
        self.statements.take()
        watch = Stopwatch()
        with resources.database.transaction() as conn:
            result = run_search(conn, resources, principal, request, qvec=qvec, purpose="benchmark")
            before_commit = watch.elapsed()
        total = watch.elapsed()
        parts = self.statements.take()
        parts["commit"] = total - before_commit
        parts["python, driver, resolution"] = max(0.0, total - sum(parts.values()))
        self.last_parts = parts
        return result, total, self.audit.take()

    def plain_hnsw(self, person: str, qvec: str) -> tuple[list[str], float]:
        groups, acls, _ = self.access(person)
        params = {"wall_groups": groups, "source_acl_ids": acls, "qvec": qvec, "k": self.k}
        resolver = self.resources.require_resolver()
        with self.bdb.database.transaction() as conn:
            access = access_for(
                conn, resolver.resolve(self.bdb.database, person, datetime.now(UTC))
            )
            apply(conn, access)  # the RLS settings, so the app role sees its rows
            watch = Stopwatch()
            ids = [str(r[0]) for r in conn.execute(text(PLAIN_FILTERED_HNSW), params)]
            return ids, watch.elapsed()

    def plain_plan(self, person: str, qvec: str) -> str:
        groups, acls, _ = self.access(person)
        params = {"wall_groups": groups, "source_acl_ids": acls, "qvec": qvec, "k": self.k}
        resolver = self.resources.require_resolver()
        with self.bdb.database.transaction() as conn:
            apply(
                conn,
                access_for(conn, resolver.resolve(self.bdb.database, person, datetime.now(UTC))),
            )
            plan = conn.execute(
                text("EXPLAIN (FORMAT JSON) " + PLAIN_FILTERED_HNSW), params
            ).scalar_one()
        return describe_plan(plan if isinstance(plan, list) else json.loads(plan))


def describe_plan(plan: list[dict[str, Any]]) -> str:
    nodes: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        kind = str(node.get("Node Type", "?"))
        if node.get("Index Name"):
            kind += f" {node['Index Name']}"
        nodes.append(kind)
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    if any("hnsw" in n for n in nodes):
        return "HNSW index scan"
    if any(n.startswith("Bitmap Heap Scan") for n in nodes):
        return "bitmap scan + sort (exact)"
    if any(n.startswith(("Index Scan", "Index Only Scan")) for n in nodes):
        return "btree index scan + sort (exact)"
    if any("Seq Scan" in n for n in nodes):
        return "seq scan + sort (exact)"
    return " / ".join(nodes[:3])


def recall(got: Sequence[str], truth: Sequence[str]) -> float:
    if not truth:
        return 1.0
    return len(set(got) & set(truth)) / len(truth)


def measure_level(
    bench: Bench,
    level: float,
    people: list[str],
    qvecs: list[str],
    texts: dict[str, list[str]],
    warmup: int,
    on_step: Callable[[], None],
) -> list[Cell]:
    k = bench.k
    design = Cell(level, "dense: this design")
    plain = Cell(level, "dense: plain filtered HNSW")
    exact = Cell(level, "dense: exact only")
    common = Cell(level, "sparse: common terms")
    rare = Cell(level, "sparse: rare terms")
    hybrid = Cell(level, "hybrid")
    audit = Cell(level, "audit append")
    cells = [design, plain, exact, common, rare, hybrid, audit]
    encoded = Cell(level, ENCODED_HYBRID)
    encoding = Cell(level, ENCODING)
    if bench.encoder is not None:
        cells[6:6] = [encoded, encoding]
    base: dict[str, Cell] = {}
    if bench.baseline is not None:
        for name in ("dense", "sparse: common terms", "hybrid"):
            base[name] = Cell(level, f"{name}: {bench.baseline}")
        cells[1:1] = [base["dense"]]
        cells[5:5] = [base["sparse: common terms"]]
        cells[-1:-1] = [base["hybrid"]]
    efs = {ef: Cell(level, f"dense: ef_search {ef}") for ef in bench.ef_variants}
    cells[1:1] = list(efs.values())
    allowed = [bench.access(p)[2] for p in people]
    for cell in cells:
        cell.allowed_rows = float(np.mean(allowed))
    plain.plan = bench.plain_plan(people[0], qvecs[0])
    with bench.bdb.superuser() as su:
        for i, qvec in enumerate(qvecs):
            person = people[i % len(people)]
            timed = i >= warmup
            truth = bench.truth(su, person, qvec, k)
            if base and i % 2:  # baseline first on every other query: no order advantage
                run_baseline(bench, base, person, qvec, texts, i, timed)
            dense_paths = [(design, bench.resources), (exact, bench.exact)]
            dense_paths += [(efs[ef], bench.ef_variants[ef]) for ef in efs]
            for cell, resources in dense_paths:
                result, seconds, audit_s = bench.service(
                    resources, person, "dichtbij", "dense", qvec
                )
                if timed:
                    ids = [r.chunk_id for r in result.rows]
                    cell.seconds.append(seconds)
                    cell.recalls.append(recall(ids, truth))
                    cell.rows.append(len(ids))
                    cell.expected.append(len(truth))
                    cell.strategies[result.strategy] += 1
                    cell.parts.append(bench.last_parts)
                    if cell is design:
                        audit.seconds.append(audit_s)
            ids, seconds = bench.plain_hnsw(person, qvec)
            if timed:
                plain.seconds.append(seconds)
                plain.recalls.append(recall(ids, truth))
                plain.rows.append(len(ids))
                plain.expected.append(len(truth))
            searches: tuple[tuple[Cell, Mode, str], ...] = (
                (common, "sparse", texts["common"][i]),
                (rare, "sparse", texts["rare"][i]),
                (hybrid, "hybrid", texts["hybrid"][i]),
            )
            for cell, mode, query in searches:
                result, seconds, audit_s = bench.service(bench.resources, person, query, mode, qvec)
                if timed:
                    cell.seconds.append(seconds)
                    cell.rows.append(len(result.rows))
                    cell.strategies[result.strategy] += 1
                    cell.parts.append(bench.last_parts)
                    audit.seconds.append(audit_s)
                    if mode == "sparse":  # untimed: recall against brute force
                        ids = [r.chunk_id for r in result.rows]
                        # the analysis the search ended with (a short one re-ran lifted)
                        ran_full = "+full-sparse" in result.strategy
                        where = (bench.resources, bench.bdb.database, person, query)
                        shipped = sparse_reference(*where, k=bench.k, full=ran_full)
                        lifted = sparse_reference(*where, k=bench.k, full=True)
                        cell.recalls.append(recall(ids, shipped.ids))
                        cell.expected.append(len(shipped.ids))
                        cell.pool_sizes.append(shipped.pool_size)
                        cell.lifted_recalls.append(recall(ids, lifted.ids))
            if bench.encoder is not None:
                seconds, encode_s = bench.encoded_hybrid(person, texts["hybrid"][i], qvec)
                if timed:
                    encoded.seconds.append(seconds)
                    encoding.seconds.append(encode_s)
            if base and not i % 2:
                run_baseline(bench, base, person, qvec, texts, i, timed)
            on_step()
    return cells


def run_baseline(
    bench: Bench,
    cells: dict[str, Cell],
    person: str,
    qvec: str,
    texts: dict[str, list[str]],
    i: int,
    timed: bool,
) -> None:
    """The same searches with the baseline revision's SQL blocks, on the same query (before
    the current ones on odd queries, after them on even ones)."""
    swap = bench.baseline_swap
    if swap is None:
        raise RuntimeError("no baseline revision loaded")
    searches: tuple[tuple[str, Mode, str], ...] = (
        ("dense", "dense", "dichtbij"),
        ("sparse: common terms", "sparse", texts["common"][i]),
        ("hybrid", "hybrid", texts["hybrid"][i]),
    )
    for name, mode, query in searches:
        with swap():
            result, seconds, _ = bench.service(bench.resources, person, query, mode, qvec)
        if timed:
            cell = cells[name]
            cell.seconds.append(seconds)
            cell.rows.append(len(result.rows))
            cell.strategies[result.strategy] += 1
            cell.parts.append(bench.last_parts)


# --- the report ------------------------------------------------------------------------


ENCODED_HYBRID = "hybrid + question encoding"
ENCODING = "question encoding"


def goal_for(cell: Cell) -> tuple[str, bool | None]:
    lat = cell.latency
    if cell.measure == "dense: this design":
        # recall is a mean over queries (one query missing one of ten neighbours is 0.9);
        # completeness is per query: not one may come back short
        ok = bool(cell.recalls) and float(np.mean(cell.recalls)) >= RECALL_GOAL and cell.short == 0
        return f"mean recall>={RECALL_GOAL}, full top-k", ok
    if cell.measure.startswith("dense: ef_search"):
        ok = bool(cell.recalls) and float(np.mean(cell.recalls)) >= RECALL_GOAL and cell.short == 0
        return f"(option) mean recall>={RECALL_GOAL}", ok
    if cell.measure.startswith("dense:") or ": baseline " in cell.measure:
        return "(baseline)", None
    if cell.measure.startswith("sparse") and cell.recalls:
        exact = min(cell.recalls) == 1.0
        return f"p95<={SPARSE_P95_GOAL_MS:g} ms, recall 1.0", (
            lat.p95_ms <= SPARSE_P95_GOAL_MS and exact
        )
    if cell.measure.startswith("sparse"):
        return f"p95<={SPARSE_P95_GOAL_MS:g} ms", lat.p95_ms <= SPARSE_P95_GOAL_MS
    if cell.measure == "hybrid":
        return f"p95<={HYBRID_P95_GOAL_MS:g} ms", lat.p95_ms <= HYBRID_P95_GOAL_MS
    if cell.measure in (ENCODED_HYBRID, ENCODING):
        return "(end to end)", None
    return f"p95<={AUDIT_P95_GOAL_MS:g} ms", lat.p95_ms <= AUDIT_P95_GOAL_MS


def print_table(title: str, cells: list[Cell], k: int) -> None:
    table = Table(title=title, show_lines=False, header_style="bold")
    for name, justify in (
        ("allowed", "right"),
        ("measure", "left"),
        ("strategy / plan", "left"),
        (f"recall@{k} mean/min", "right"),
        ("rows min/exp", "right"),
        ("short", "right"),
        ("p50 ms", "right"),
        ("p95 ms", "right"),
        ("p95 vs exact", "right"),
        ("goal", "left"),
        ("", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    exact_p95 = {c.level: c.latency.p95_ms for c in cells if c.measure == "dense: exact only"}
    hybrid_p95 = {c.level: c.latency.p95_ms for c in cells if c.measure == "hybrid"}
    previous = None
    for cell in cells:
        lat = cell.latency
        if previous is not None and cell.level != previous:
            table.add_section()
        previous = cell.level
        goal, ok = goal_for(cell)
        if cell.measure in ("audit append", ENCODED_HYBRID, ENCODING):
            vs = f"{fmt_ratio(lat.p95_ms, hybrid_p95.get(cell.level, math.nan))} of hybrid"
        else:
            vs = fmt_ratio(lat.p95_ms, exact_p95.get(cell.level, math.nan))
        strategies = ", ".join(f"{s} {n}" for s, n in cell.strategies.most_common())
        table.add_row(
            f"{level_label(cell.level)} ({cell.allowed_rows:,.0f})"
            if cell.measure.startswith("dense: this")
            else "",
            cell.measure,
            cell.plan or strategies,
            f"{np.mean(cell.recalls):.3f}/{min(cell.recalls):.2f}" if cell.recalls else "",
            f"{min(cell.rows)}/{min(cell.expected)}"
            if cell.expected
            else (f"{min(cell.rows)}" if cell.rows else ""),
            str(cell.short) if cell.expected else "",
            fmt_ms(lat.p50_ms),
            fmt_ms(lat.p95_ms),
            vs,
            goal,
            verdict(ok),
        )
    console.print(table)


def print_breakdown(cells: list[Cell]) -> None:
    """Median milliseconds per part of one search, by selectivity (design path only)."""
    shown = [c for c in cells if c.parts and c.measure in ("dense: this design", "hybrid")]
    names = sorted(
        {n for c in shown for p in c.parts for n in p},
        key=lambda n: (n.startswith("python"), n == "commit", n),
    )
    table = Table(
        title="Where one search's time goes (median ms per part; the parts' medians "
        "need not add up to the total's)",
        header_style="bold",
    )
    table.add_column("part")
    for cell in shown:
        kind = "dense" if cell.measure.startswith("dense") else cell.measure
        table.add_column(f"{level_label(cell.level)} {kind}", justify="right")
    for name in names:
        table.add_row(name, *[fmt_ms(c.breakdown().get(name, 0.0)) for c in shown])
    table.add_row("[bold]total p50[/]", *[fmt_ms(c.latency.p50_ms) for c in shown])
    console.print(table)


# --- calibration: exact vs HNSW per selectivity -----------------------------------------


@dataclass
class CalibrationPoint:
    level: float
    allowed_rows: float
    exact: Latency
    hnsw: Latency
    exact_recall10: float
    hnsw_recall10: float
    hnsw_recall10_min: float
    hnsw_recall_deep: float
    hnsw_short: int
    fallbacks: int
    queries: int

    @property
    def hnsw_good(self) -> bool:
        return (
            self.hnsw_recall10 >= RECALL_GOAL
            and self.hnsw_short == 0
            and self.hnsw.p95_ms < self.exact.p95_ms
        )


def calibrate(
    bench: Bench,
    layout: Layout,
    qvecs: list[str],
    warmup: int,
    total_rows: int,
) -> list[CalibrationPoint]:
    deep = min(100, bench.resources.settings.dense_candidates)
    points: list[CalibrationPoint] = []
    levels = [lv for lv in CALIBRATION_LEVELS if lv in layout.people]
    with progress_bar() as bar, bench.bdb.superuser() as su:
        task = bar.add_task("calibrate", total=len(levels) * len(qvecs))
        for level in levels:
            people = layout.people[level]
            ex: list[float] = []
            hn: list[float] = []
            ex_r: list[float] = []
            hn_r: list[float] = []
            hn_deep: list[float] = []
            short = fallbacks = 0
            for i, qvec in enumerate(qvecs):
                person = people[i % len(people)]
                truth = bench.truth(su, person, qvec, deep)
                # timed: a real request (top-k from the dense leg's `deep` candidates)
                e, e_s, _ = bench.service(bench.exact, person, "kalibratie", "dense", qvec)
                h, h_s, _ = bench.service(bench.hnsw, person, "kalibratie", "dense", qvec)
                bar.advance(task)
                if i < warmup:
                    continue
                # untimed: the whole candidate list, for the deep recall that fusion sees
                # (its latency would be mostly the snippets of `deep` results)
                h_deep, _, _ = bench.service(bench.hnsw, person, "kalibratie", "dense", qvec, deep)
                e_ids = [r.chunk_id for r in e.rows]
                h_ids = [r.chunk_id for r in h.rows]
                ex.append(e_s)
                hn.append(h_s)
                ex_r.append(recall(e_ids, truth[: bench.k]))
                hn_r.append(recall(h_ids, truth[: bench.k]))
                hn_deep.append(recall([r.chunk_id for r in h_deep.rows], truth))
                short += len(h_ids) < min(bench.k, len(truth))
                fallbacks += h.strategy == "hnsw->exact"
            allowed = float(np.mean([bench.access(p)[2] for p in people]))
            points.append(
                CalibrationPoint(
                    level,
                    allowed,
                    Latency.of(ex),
                    Latency.of(hn),
                    float(np.mean(ex_r)),
                    float(np.mean(hn_r)),
                    float(min(hn_r)),
                    float(np.mean(hn_deep)),
                    short,
                    fallbacks,
                    len(ex),
                )
            )
    return points


def recommend(points: list[CalibrationPoint], total_rows: int, k_deep: int) -> dict[str, Any]:
    """Exact wherever HNSW (fallback included) is not both faster and good enough: the
    threshold is the largest measured selectivity below the first one from which HNSW wins
    at every larger selectivity (guaranteed recall first, then speed)."""
    ordered = sorted(points, key=lambda p: p.level)
    first_good: CalibrationPoint | None = None
    for i, point in enumerate(ordered):
        if all(p.hnsw_good for p in ordered[i:]):
            first_good = point
            break
    if first_good is None:
        fraction = 1.0
    else:
        below = [p.level for p in ordered if p.level < first_good.level]
        fraction = max(below) if below else 0.0
    # cost model of 2.3: exact ~ c_e * P; the slope over the measured points (us per row)
    allowed = np.array([p.allowed_rows for p in ordered])
    exact_ms = np.array([p.exact.p50_ms for p in ordered])
    c_e_us = float(np.polyfit(allowed, exact_ms, 1)[0] * 1000) if len(ordered) > 1 else math.nan
    clean = [p for p in ordered if p.fallbacks == 0]
    c_h_us = math.nan
    if len(clean) > 1:
        work = np.array([k_deep / p.level for p in clean])
        c_h_us = float(np.polyfit(work, np.array([p.hnsw.p50_ms for p in clean]), 1)[0] * 1000)
    breakeven = (
        math.sqrt(k_deep * total_rows * c_h_us / c_e_us) if c_e_us > 0 and c_h_us > 0 else math.nan
    )
    return {
        "exact_max_fraction": fraction,
        "exact_max_rows": round(fraction * total_rows),
        "hnsw_wins_from": first_good.level if first_good else None,
        "c_e_us_per_row": round(c_e_us, 3),
        "c_h_us_per_tuple": round(c_h_us, 3),
        "breakeven_rows_model": None if math.isnan(breakeven) else round(breakeven),
    }


def print_calibration(
    points: list[CalibrationPoint], rec: dict[str, Any], k: int, deep: int, total_rows: int
) -> None:
    table = Table(
        title=f"Calibration: exact vs HNSW, the service path forced to each (dense, "
        f"top-{k} of {deep} candidates), {total_rows:,} chunks",
        header_style="bold",
    )
    for name in (
        "allowed",
        "rows",
        "exact p50",
        "exact p95",
        "hnsw p50",
        "hnsw p95",
        "hnsw/exact p95",
        f"hnsw recall@{k} mean/min",
        f"recall@{deep}",
        "short",
        "fallbacks",
        "hnsw ok",
    ):
        table.add_column(name, justify="right")
    for p in points:
        table.add_row(
            level_label(p.level),
            f"{p.allowed_rows:,.0f}",
            fmt_ms(p.exact.p50_ms),
            fmt_ms(p.exact.p95_ms),
            fmt_ms(p.hnsw.p50_ms),
            fmt_ms(p.hnsw.p95_ms),
            fmt_ratio(p.hnsw.p95_ms, p.exact.p95_ms),
            f"{p.hnsw_recall10:.3f}/{p.hnsw_recall10_min:.2f}",
            f"{p.hnsw_recall_deep:.3f}",
            str(p.hnsw_short),
            f"{p.fallbacks}/{p.queries}",
            verdict(p.hnsw_good),
        )
    console.print(table)
    wins = rec["hnsw_wins_from"]
    where = f"HNSW wins from {level_label(wins)} up" if wins else "HNSW never wins: keep exact"
    console.print(
        f"[bold]Recommended:[/] EWALL_EXACT_MAX_ROWS={rec['exact_max_rows']} (for "
        f"{total_rows:,} chunks; {where}). "
        f"Cost model: c_e={rec['c_e_us_per_row']} us/allowed row, "
        f"c_h={rec['c_h_us_per_tuple']} us/visited tuple, break-even "
        f"P*=sqrt(K*N*c_h/c_e)~{rec['breakeven_rows_model'] or 'n/a'} rows (scales with sqrt(N))."
    )
