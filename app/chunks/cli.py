"""`ewall chunks layout | relayout`: the chunks table's layout (docs/scale-out.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.chunks import service
from app.db.runtime import open_database
from app.settings import Settings


def register(subparsers: Any) -> None:
    chunks = subparsers.add_parser(
        "chunks", help="the chunks table's layout: partitions and embedding storage"
    ).add_subparsers(dest="chunks_command", required=True)
    p = chunks.add_parser("layout", help="print the layout and the kept earlier layouts")
    p.set_defaults(handler=cmd_layout)
    p = chunks.add_parser(
        "relayout",
        help="rebuild chunks as N hash partitions by document and/or as halfvec",
        description=(
            "Copies chunks into the new layout in one transaction (searches wait meanwhile), "
            "rebuilds every index per partition, moves keys, triggers, row-level security and "
            "grants, and keeps the old table as chunks_before_<timestamp>."
        ),
    )
    p.add_argument("--partitions", type=int, required=True, help="1 (one table) .. 256")
    p.add_argument("--storage", choices=service.STORAGES, default=None, help="default: as is")
    p.add_argument(
        "--lock-timeout-ms", type=int, default=5000, help="give up when chunks stays busy"
    )
    p.set_defaults(handler=cmd_relayout)


def cmd_layout(args: argparse.Namespace, settings: Settings) -> int:
    with open_database(settings) as database:
        layout, archives = service.current(database.urls.migrations)
    print(
        f"chunks: {layout.partitions} partition(s), {layout.storage}, "
        f"~{layout.estimated_rows:,} rows"
    )
    for archive in archives:
        print(f"kept: {archive.name} ({archive.bytes / 2**20:,.1f} MiB)")
    advised = service.advice(layout)
    if advised is not None:
        print(f"advice: {advised}")
    return 0


def cmd_relayout(args: argparse.Namespace, settings: Settings) -> int:
    with open_database(settings) as database:
        storage = args.storage or service.current(database.urls.migrations)[0].storage
        try:
            done = service.relayout(
                database.urls.migrations,
                args.partitions,
                storage,
                lock_timeout_ms=args.lock_timeout_ms,
            )
        except service.LayoutError as exc:
            print(f"ewall: {exc}", file=sys.stderr)
            return 2
    if done.archive is None:
        print(f"chunks is already {done.after.partitions} partition(s), {done.after.storage}")
        return 0
    print(
        f"chunks: {done.before.partitions} partition(s), {done.before.storage} -> "
        f"{done.after.partitions} partition(s), {done.after.storage}; the old table is kept as "
        f"{done.archive} (drop it once the new layout is verified)"
    )
    return 0
