"""`ewall demo`: load the demo firm (idempotent) and show what to try.

Progress goes to stderr, the summary to stdout (``--json`` for the raw summary). Exit
status 0 when the load finished, 1 when it failed (one line on stderr, no traceback unless
debug logging is on).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from app.auth.keys import prints_dev_token
from app.settings import Settings

if TYPE_CHECKING:
    from rich.console import Console

    from app.demo.loader import Progress

log = logging.getLogger("ewall.demo.cli")

EXIT_OK, EXIT_FAILED = 0, 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "demo",
        help="load the demo firm (people, clients, matters, walls, documents); idempotent",
        description=(
            "Load a realistic Dutch law firm with ethical walls, public case law and "
            "statutes, and generated firm documents. Running it again changes nothing."
        ),
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=cmd_demo)


@contextmanager
def progress_bars() -> Iterator[Progress]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as RichProgress

    bars = RichProgress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    tasks: dict[str, Any] = {}

    def on_progress(phase: str, done: int, total: int | None) -> None:
        if phase not in tasks:
            tasks[phase] = bars.add_task(phase, total=total)
        bars.update(tasks[phase], completed=done, total=total)

    with bars:
        yield on_progress


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    from rich.console import Console

    from app.db.runtime import open_database
    from app.demo.loader import load_demo
    from app.embeddings import Embedder
    from app.main import StartupError, check_dimensions

    try:
        with open_database(settings) as database:
            embedder = Embedder(settings)
            check_dimensions(settings, database, embedder.dimension)
            with progress_bars() as on_progress:
                summary = load_demo(database, settings, embedder, progress=on_progress)
    except StartupError as exc:
        sys.stderr.write(f"ewall: {exc}\n")
        return EXIT_FAILED
    except Exception as exc:
        log.debug("demo load failed", exc_info=True)
        message = f"demo load failed: {type(exc).__name__}: {exc}".splitlines()[0]
        sys.stderr.write(f"ewall: {message}\n")
        return EXIT_FAILED
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
        return EXIT_OK
    print_summary(Console(), summary, settings)
    return EXIT_OK


def print_summary(console: Console, summary: dict[str, Any], settings: Settings) -> None:
    from rich.table import Table
    from rich.text import Text

    from app.demo import firm
    from app.demo.repository import SUMMARY_COUNTS

    console.print(
        Text(
            f"{summary['firm']}: demo "
            f"{'loaded' if summary['changed'] else 'already loaded, nothing changed'}"
            f" in {summary['elapsed_s']} s (policy version {summary['policy_version']})",
            style="bold",
        )
    )

    shape = Table(title="In the database", show_header=True)
    shape.add_column("what")
    shape.add_column("n", justify="right")
    for key in SUMMARY_COUNTS:
        if key == "policy_version":
            continue
        shape.add_row(key.replace("_", " "), str(summary[key]))
    console.print(shape)

    runs = Table(title="This load", show_header=True)
    runs.add_column("run")
    for name in ("added", "updated", "unchanged", "quarantined", "errors"):
        runs.add_column(name, justify="right")
    case_law = summary["case_law"]
    for label, counts in (
        (
            f"case law ({case_law['files']} decisions, {case_law['selected_by']}, "
            f"from {case_law['origin']})",
            case_law["counts"],
        ),
        ("statutes and firm documents", summary["firm_documents"]["counts"]),
    ):
        runs.add_row(
            Text(label),
            *(
                str(counts.get(n, 0))
                for n in ("added", "updated", "unchanged", "quarantined", "errors")
            ),
        )
    console.print(runs)
    vectors = summary["vectors"]
    if vectors["known"] or vectors["encoded"]:
        console.print(
            Text(
                f"Vectors: {vectors['known']} taken from those shipped for the encoder, "
                f"{vectors['encoded']} encoded"
            )
        )

    walls = Table(title="Walls", show_header=True)
    walls.add_column("wall")
    walls.add_column("kind")
    walls.add_column("this load")
    for wall in firm.WALLS:
        walls.add_row(
            Text(wall.title),
            wall.kind,
            "issued" if wall.title in summary["walls_issued"] else "existed",
        )
    console.print(walls)

    if summary["quarantined"]:
        quarantine = Table(title="Quarantined (visible to no one)", show_header=True)
        quarantine.add_column("document")
        quarantine.add_column("reason")
        for entry in summary["quarantined"]:
            quarantine.add_row(Text(str(entry["external_id"])), Text(str(entry["reason"])))
        console.print(quarantine)
    if case_law["missing"]:
        console.print(
            Text(
                f"Decisions not found in the corpus: {', '.join(case_law['missing'])}",
                style="yellow",
            )
        )
    if summary["starter_set"]:
        console.print(Text(f"Evaluation set loaded: {summary['starter_set']}"))

    console.print(
        Text(
            "\nExample searches: the same query, different people, different "
            "results because of the walls",
            style="bold",
        )
    )
    for number, example in enumerate(summary["example_searches"], start=1):
        allowed, blocked = example["people"]
        console.print(Text(f"\n{number}. {example['title']}", style="bold"))
        console.print(Text(f"   query: {example['query']!r}"))
        console.print(
            Text(f"   {allowed} finds {', '.join(example['matters'])}; {blocked} does not")
        )
        console.print(Text(f"   {example['explanation']}", style="dim"))

    # the same rule as `ewall serve`: a token only for the loopback server on this machine
    if prints_dev_token(settings, settings.host):
        from app.auth.service import issue_dev_token

        first = summary["example_searches"][0]
        token = issue_dev_token(settings, firm.DEMO_LAWYER, ["lawyer"])
        body = json.dumps({"query": first["query"], "k": 5}, ensure_ascii=False)
        console.print(
            Text(
                f"\nTry it as {firm.DEMO_LAWYER} (development token, 8 h), with "
                "`ewall serve` running:",
                style="bold",
            )
        )
        # Text(): the command must print verbatim, not as rich markup
        console.print(
            Text(
                f"curl -s -X POST http://{settings.host}:{settings.port}/v1/search "
                f"-H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' "
                f"-d '{body}'"
            ),
            soft_wrap=True,
        )
        console.print(
            Text(f"Then the same as {first['people'][1]}: ewall token --sub {first['people'][1]}")
        )
