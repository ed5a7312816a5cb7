"""bench.search's table of chunk layouts side by side (--partitions, --storage, --layout;
docs/scale-out.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rich.table import Table

from bench.common import console, fmt_ms, fmt_ratio
from bench.search_measure import Cell, level_label


def print_layouts(
    layouts: Sequence[tuple[str, Mapping[str, Any]]], by_layout: Mapping[str, list[Cell]]
) -> None:
    """Per layout and selectivity: the design's dense recall@k (mean/min, short results)
    and p50/p95, hybrid p50/p95, each p95 as a ratio of the baseline (the first layout,
    measured in the same run); then build time and size per layout."""
    baseline = layouts[0][0]
    base = {
        (c.level, c.measure): c.latency.p95_ms
        for c in by_layout[baseline]
        if c.measure in ("dense: this design", "hybrid")
    }
    table = Table(title=f"Layouts against the baseline ({baseline}), same run", header_style="bold")
    for name in (
        "layout",
        "allowed",
        "recall mean/min",
        "short",
        "dense p50/p95 ms",
        "vs base",
        "hybrid p50/p95 ms",
        "vs base",
    ):
        table.add_column(name, justify="left" if name == "layout" else "right")
    for name, _report in layouts:
        cells = {(c.level, c.measure): c for c in by_layout[name]}
        for level in sorted({c.level for c in by_layout[name]}):
            dense = cells[(level, "dense: this design")]
            hybrid = cells[(level, "hybrid")]
            table.add_row(
                name,
                level_label(level),
                f"{np.mean(dense.recalls):.3f}/{min(dense.recalls):.2f}" if dense.recalls else "",
                str(dense.short),
                f"{fmt_ms(dense.latency.p50_ms)}/{fmt_ms(dense.latency.p95_ms)}",
                fmt_ratio(dense.latency.p95_ms, base[(level, "dense: this design")]),
                f"{fmt_ms(hybrid.latency.p50_ms)}/{fmt_ms(hybrid.latency.p95_ms)}",
                fmt_ratio(hybrid.latency.p95_ms, base[(level, "hybrid")]),
            )
        table.add_section()
    console.print(table)
    sizes = Table(title="Build time and size per layout (pg_relation_size, all partitions)")
    for name in ("layout", "relayout s", "HNSW build s", "heap MiB", "HNSW MiB", "GIN MiB"):
        sizes.add_column(name, justify="left" if name == "layout" else "right")
    for name, report in layouts:
        bytes_ = report["bytes"]
        sizes.add_row(
            name,
            f"{report['relayout_s']:.1f}",
            f"{report['hnsw_build_s']:.1f}",
            f"{bytes_.get('heap', 0) / 2**20:,.1f}",
            f"{bytes_.get('ix_chunks_embedding_hnsw', 0) / 2**20:,.1f}",
            f"{bytes_.get('ix_chunks_body_tsv', 0) / 2**20:,.1f}",
        )
    console.print(sizes)
