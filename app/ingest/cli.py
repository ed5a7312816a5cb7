"""`ewall ingest ...`: export folders, Rechtspraak XML, iManage and NetDocuments syncs.

Each command opens the database (migrating it to head), loads the embedding model, runs its
source (built by name by ``connectors.registry``) through ``app.ingest.runs`` with a progress
bar on stderr, and prints the delta report (a counts table and the listed entries) on stdout.
The database, the model and the pipeline are imported when a command runs (about four
seconds of imports), so that ``ewall --help`` and the other commands stay fast.

Exit status: 0 when the run finished (also with per-document errors: they are in the
report), 1 when the run failed, 2 for bad arguments (a missing folder, an unconfigured
source); those give one clear line on stderr, never a traceback. Stopped by Ctrl-C (130) or
SIGTERM (143), the run is closed as failed ("interrupted"); killed outright (SIGKILL), it
reads as failed once its database session has ended (the run's lock, IngestPipeline.hold_runs).
Run it again: unchanged documents are skipped, a full crawl resumes from its checkpoint.
"""

from __future__ import annotations

import argparse
import getpass
import logging
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.settings import Settings
from app.types import SOURCE_NAME
from connectors import registry

if TYPE_CHECKING:
    from rich.console import Console

    from app.ingest.pipeline import IngestPipeline

log = logging.getLogger("ewall.ingest.cli")

Progress = Callable[[int, int | None], None]
Work = Callable[["IngestPipeline", Progress], dict[str, Any]]

MAX_LISTED = 25  # entries shown per section; the full list is in GET /v1/ingest/runs/{id}
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input the user can fix (a path, a setting): one line, exit 2."""


def _error(message: str, code: int) -> int:
    # stderr directly (not rich): the line must survive redirection and stay one line
    sys.stderr.write(f"ewall: {message}\n")
    return code


def _started_by() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (OSError, KeyError):  # no user name in some containers
        return "cli"


def _folder(value: Path) -> Path:
    path = value.expanduser()
    if not path.exists():
        raise UsageError(f"no such folder: {value}")
    if not path.is_dir():
        raise UsageError(f"not a folder: {value}")
    return path.resolve()


# --- progress and report ------------------------------------------------------------------


@contextmanager
def _progress_bar(label: str) -> Iterator[Progress]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as RichProgress

    bar = RichProgress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    task = bar.add_task(label, total=None)

    def on_progress(done: int, total: int | None) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield on_progress


def _entry_label(entry: dict[str, Any]) -> str:
    details = entry.get("details") or {}
    ident = entry.get("external_id") or entry.get("ecli") or details.get("file") or "-"
    return str(ident)


def _entry_reason(entry: dict[str, Any]) -> str:
    reason = str(entry.get("reason") or "")
    details = entry.get("details")
    if not isinstance(details, dict):
        return reason
    if details.get("discrepancies"):
        reason += ": " + "; ".join(str(d) for d in details["discrepancies"])
    elif not reason and "chunks" in details:  # added / updated documents
        reason = (
            f"{details['chunks']} chunks (+{details.get('added', 0)} -{details.get('removed', 0)})"
        )
    return reason


def _sections(report: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    caselaw = report.get("caselaw") or {}
    return [
        ("Errors", report.get("errors") or []),
        ("Parse errors", report.get("parse_errors") or []),
        ("Held: not searchable until confirmed", caselaw.get("held") or []),
        ("Case-law state changes", caselaw.get("state_changes") or []),
        ("Cross-check discrepancies (not resolved)", caselaw.get("crosscheck") or []),
        ("Cross-check not possible", caselaw.get("crosscheck_errors") or []),
        ("Metadata-only records", caselaw.get("metadata_only") or []),
        ("Duplicate records", caselaw.get("duplicates") or []),
        ("Quarantined", report.get("quarantined") or []),
        ("Metadata changes", report.get("metadata_changes") or []),
        ("Deleted", report.get("deleted") or []),
        ("Held deletions (apply with ewall ingest confirm-sweep RUN)", report.get("held") or []),
        ("Updated", report.get("updated") or []),
        ("Added", report.get("added") or []),
        ("Warnings", report.get("warnings") or []),
    ]


def print_report(console: Console, report: dict[str, Any]) -> None:
    """The delta report: a counts table, then each non-empty list of entries."""
    from rich.table import Table
    from rich.text import Text

    status = str(report.get("status", "unknown"))
    style = {"succeeded": "green", "partial": "yellow", "failed": "red"}.get(status, "")
    header = Text(f"Run {report.get('run_id', '?')} ({report.get('connector', '?')}): ")
    header.append(status, style=style)
    if report.get("error"):
        header.append(f" ({report['error']})")
    console.print(header)

    counts = Table(title="Counts", show_header=True)
    counts.add_column("what")
    counts.add_column("n", justify="right")
    for name, value in (report.get("counts") or {}).items():
        counts.add_row(name, str(value))
    caselaw_counts = (report.get("caselaw") or {}).get("counts") or {}
    for name, value in caselaw_counts.items():
        if value or name == "held_pending":  # zero rows would drown the useful ones
            counts.add_row(f"case law: {name}", str(value))
    console.print(counts)

    containers = (report.get("sync") or {}).get("containers") or {}
    if containers:
        columns = (
            "server_total",
            "seen",
            "ingested",
            "unchanged",
            "unread",
            "narrowed",
            "textless",
            "quarantined",
            "failed",
            "deleted",
            "held",
        )
        per = Table(title="Per library / cabinet", show_header=True)
        per.add_column("container")
        for column in (*columns, "complete"):
            per.add_column(column.replace("_", " "), justify="right")
        for name, row in containers.items():
            per.add_row(
                Text(str(name)),
                *(str(row.get(c, "")) for c in columns),
                str(row.get("complete", "")),
            )
        console.print(per)

    for title, entries in _sections(report):
        if not entries:
            continue
        table = Table(title=f"{title} ({len(entries)})", show_header=True, expand=False)
        table.add_column("document")
        table.add_column("reason")
        for entry in entries[:MAX_LISTED]:
            # Text(): reasons come from documents and must not be read as rich markup
            table.add_row(Text(_entry_label(entry)), Text(_entry_reason(entry)))
        if len(entries) > MAX_LISTED:
            table.add_row(Text("…"), Text(f"and {len(entries) - MAX_LISTED} more"))
        console.print(table)


# --- running one command --------------------------------------------------------------------


def _execute(settings: Settings, label: str, work: Work) -> int:
    from rich.console import Console

    from app.db.runtime import open_database
    from app.embeddings import Embedder
    from app.ingest.pipeline import IngestPipeline

    try:
        with open_database(settings) as database:
            pipeline = IngestPipeline(database, Embedder(settings), settings)
            pipeline.hold_runs = True  # a run this process leaves behind reads as failed
            with _progress_bar(label) as on_progress:
                report = work(pipeline, on_progress)
    except (FileNotFoundError, NotADirectoryError) as exc:
        return _error(str(exc), EXIT_USAGE)
    except Exception as exc:
        # The reason in one line; the traceback only for those who asked for debug logs.
        log.debug("ingest command failed", exc_info=True)
        return _error(f"{label} failed: {type(exc).__name__}: {exc}".splitlines()[0], EXIT_FAILED)
    print_report(Console(), report)
    return EXIT_FAILED if report.get("status") == "failed" else EXIT_OK


def _run(
    settings: Settings,
    name: str,
    label: str,
    *,
    mode: str = "delta",
    path: Path | None = None,
    source_name: str | None = None,
    reread: bool = False,
) -> int:
    """Run the source ``name`` from the registry once, with a progress bar."""
    from app.ingest.runs import run_named_source

    return _execute(
        settings,
        label,
        lambda pipeline, on_progress: run_named_source(
            pipeline,
            settings,
            name,
            mode=mode,
            path=path,
            source_name=source_name,
            started_by=_started_by(),
            on_progress=on_progress,
            reread=reread,
        ),
    )


def cmd_ingest_folder(args: argparse.Namespace, settings: Settings) -> int:
    try:
        path = _folder(args.path)
    except UsageError as exc:
        return _error(str(exc), EXIT_USAGE)
    source = args.source.strip().lower()
    if not SOURCE_NAME.match(source):
        return _error(
            "--source must be 1-40 of a-z, 0-9, '_', '.', '-' (starting with a letter or digit)",
            EXIT_USAGE,
        )
    try:
        # checks the sidecar now: a usage error should not wait for the database and model
        registry.check_path("folder", path)
    except FileNotFoundError as exc:
        return _error(str(exc), EXIT_USAGE)
    return _run(settings, "folder", f"ingest folder {path.name}", path=path, source_name=source)


def cmd_ingest_rechtspraak(args: argparse.Namespace, settings: Settings) -> int:
    try:
        path = _folder(args.path)
    except UsageError as exc:
        return _error(str(exc), EXIT_USAGE)
    try:  # a folder without records would load nothing and end "succeeded"
        registry.check_path("rechtspraak", path)
    except FileNotFoundError as exc:
        return _error(str(exc), EXIT_USAGE)
    return _run(settings, "rechtspraak", "ingest rechtspraak", path=path)


def _cmd_connector(name: str) -> Callable[[argparse.Namespace, Settings], int]:
    def handler(args: argparse.Namespace, settings: Settings) -> int:
        try:
            registry.check_configured(name, settings)
        except registry.SourceNotConfiguredError as exc:
            return _error(str(exc), EXIT_USAGE)
        if args.reread and args.mode == "delta":
            return _error("--reread is a full crawl: leave out --mode delta", EXIT_USAGE)
        mode = "full" if args.reread else args.mode or "delta"  # a reread is a full crawl
        label = f"ingest {name} ({mode}{', reread' if args.reread else ''})"
        return _run(settings, name, label, mode=mode, reread=args.reread)

    handler.__name__ = f"cmd_ingest_{name}"
    return handler


def cmd_ingest_confirm_sweep(args: argparse.Namespace, settings: Settings) -> int:
    from app.ingest.runs import confirm_sweep
    from connectors.sync import SweepNotHeldError

    try:
        run_id = uuid.UUID(str(args.run))
    except ValueError:
        return _error(f"not a run id: {args.run}", EXIT_USAGE)
    outcome: dict[str, str] = {}

    def work(pipeline: IngestPipeline, on_progress: Progress) -> dict[str, Any]:
        try:
            return confirm_sweep(pipeline, settings, run_id, started_by=_started_by())
        except (LookupError, SweepNotHeldError) as exc:
            outcome["usage"] = str(exc).strip("'\"")
            return {"status": "failed", "error": outcome["usage"]}

    code = _execute(settings, f"confirm sweep of run {run_id}", work)
    if "usage" in outcome:
        return _error(outcome["usage"], EXIT_USAGE)
    return code


cmd_ingest_imanage = _cmd_connector("imanage")
cmd_ingest_netdocuments = _cmd_connector("netdocuments")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `ingest` and its sub-commands to the `ewall` parser (see app/cli.py)."""
    ingest = subparsers.add_parser(
        "ingest", help="ingest documents (export folder, Rechtspraak XML, iManage, NetDocuments)"
    )
    sub = ingest.add_subparsers(dest="ingest_command", required=True)

    p = sub.add_parser("folder", help="an export folder with a metadata sidecar")
    p.add_argument("path", type=Path, help="the export folder")
    p.add_argument("--source", default="folder", help="source name stored with the documents")
    p.set_defaults(handler=cmd_ingest_folder)

    p = sub.add_parser("rechtspraak", help="a folder of Rechtspraak open-data XML (public)")
    p.add_argument("path", type=Path, help="folder of *.xml records (searched recursively)")
    p.set_defaults(handler=cmd_ingest_rechtspraak)

    for name, handler in (
        ("imanage", cmd_ingest_imanage),
        ("netdocuments", cmd_ingest_netdocuments),
    ):
        p = sub.add_parser(name, help=f"sync from {name} (settings EWALL_{name.upper()}_*)")
        p.add_argument(
            "--mode",
            choices=["full", "delta"],
            default=None,
            help="full crawl or changes since the last run (default: delta)",
        )
        p.add_argument(
            "--reread",
            action="store_true",
            help="a full crawl of its own that reads every document's content again, "
            "whatever EWALL_FULL_CRAWL_READS says (with `changed` a full crawl reads only what "
            "the index does not hold at the listed version, modification date, place and rules)",
        )
        p.set_defaults(handler=handler)

    p = sub.add_parser(
        "confirm-sweep",
        help="apply the deletions a sync held (more than EWALL_SWEEP_MAX_FRACTION of a "
        "library or cabinet at once); each is point-checked again",
    )
    p.add_argument("run", help="the run id whose report lists the held sweep")
    p.set_defaults(handler=cmd_ingest_confirm_sweep)
