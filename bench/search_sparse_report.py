"""The sparse leg's recall table of ``bench.search`` (issue 29, point 3): per selectivity and
question kind, recall@k against brute-force BM25 over the allowed set
(bench/sparse_recall.py) beside the leg's latency."""

from __future__ import annotations

import numpy as np
from rich.table import Table

from bench.common import console, fmt_ms
from bench.search_measure import Cell, level_label


def print_sparse_recall(cells: list[Cell], k: int) -> None:
    """Per selectivity and question kind: the sparse leg's recall@k against brute-force
    BM25 over the allowed set (bench/sparse_recall.py) beside its latency."""
    shown = [c for c in cells if c.pool_sizes]
    if not shown:
        return
    table = Table(
        title=f"Sparse leg recall@{k} against brute-force BM25 over the allowed set (same "
        "formula, computed from the chunks)",
        header_style="bold",
    )
    for name in (
        "allowed",
        "questions",
        "visible chunks with a ranking lexeme mean/max",
        "postings summed",
        "impact order",
        f"recall@{k} mean/min",
        f"recall@{k} mean/min (budget, cut lifted)",
        "p50 ms",
        "p95 ms",
    ):
        table.add_column(name, justify="left" if name == "questions" else "right")
    for cell in shown:
        table.add_row(
            level_label(cell.level),
            cell.measure.removeprefix("sparse: "),
            f"{np.mean(cell.pool_sizes):,.0f}/{max(cell.pool_sizes):,}",
            f"{cell.sum_form}/{len(cell.pool_sizes)}",
            f"{cell.impact_form}/{len(cell.pool_sizes)}",
            f"{np.mean(cell.recalls):.3f}/{min(cell.recalls):.2f}",
            f"{np.mean(cell.lifted_recalls):.3f}/{min(cell.lifted_recalls):.2f}",
            fmt_ms(cell.latency.p50_ms),
            fmt_ms(cell.latency.p95_ms),
        )
    console.print(table)
