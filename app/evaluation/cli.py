"""``ewall eval``: run, compare and calibrate evaluations; import, export and list sets.

    ewall eval --set NAME [--as PERSON] [--mode hybrid|dense|sparse|all] [--json] [--save]
               [--dense-weight W] [--sparse-weight W] [--depth N]   (this run only)
    ewall eval --queries FILE --qrels FILE [--set NAME] [...]   (imports, then runs)
    ewall eval compare RUN_A RUN_B [--metric ndcg_10] [--mode MODE] [--json]
    ewall eval calibrate --set NAME [--as PERSON] [--json]
    (run and calibrate also take --documents-half even|odd: only questions about that half)
    ewall eval import --set NAME (--jsonl FILE | --queries FILE --qrels FILE) [--replace]
    ewall eval export --set NAME (--jsonl FILE | --queries FILE --qrels FILE)
    ewall eval sets
    ewall eval starter          (loads the shipped starter set)
    ewall eval corpus           (loads the shipped sets corpus-nl and corpus-nl-heldout)
    ewall eval grounding [--decisions N] [--retrievals N] [--seed N] [--weights W,...]
                         [--write] [--json]
                                (measures the grounding gate on a set built from the corpus)

``--queries/--qrels`` with ``--set NAME`` import into that set, replacing its queries;
without ``--set`` into a temporary set that is removed after the run (kept when ``--save``
stores the run). Queries are evaluated as ``--as PERSON``, else as each query's own person,
else as ``eval@ewall.invalid`` (unknown to the matrix: sees only the open group). Exit
status: 0 ok, 2 bad input.
"""

from __future__ import annotations

import argparse
import getpass
import json
import math
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from app.settings import Settings

JSON_INDENT = 2
_T = TypeVar("_T")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "eval",
        help="evaluate retrieval on a relevance set (nDCG@10, recall@10/50, MRR)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--set", dest="set_name", help="relevance set name")
    p.add_argument("--queries", type=Path, help="TREC queries file (qid<TAB>text)")
    p.add_argument("--qrels", type=Path, help="TREC qrels file (qid 0 docid grade)")
    _run_options(p)
    p.add_argument("--mode", choices=["hybrid", "dense", "sparse", "all"], default="all")
    p.add_argument("--save", action="store_true", help="store the run in eval_runs")
    p.add_argument(
        "--keep-unavailable",
        action="store_true",
        help="score judged targets the person cannot see as misses",
    )
    p.add_argument(
        "--dense-weight",
        type=_weight,
        default=None,
        help="try a fusion weight for this run only (hybrid)",
    )
    p.add_argument("--sparse-weight", type=_weight, default=None)
    p.add_argument(
        "--depth", type=_depth, default=None, help="candidates per leg for this run only"
    )
    p.add_argument(
        "--rrf-k", type=_depth, default=None, help="fusion constant for this run only (1-1000)"
    )
    p.set_defaults(handler=cmd_eval)
    sub = p.add_subparsers(dest="eval_command")

    c = sub.add_parser("compare", help="per-query wins and losses of run B against run A")
    c.add_argument("run_a", help="saved run id or JSON file from `ewall eval --json`")
    c.add_argument("run_b")
    c.add_argument(
        "--metric", choices=["ndcg_10", "recall_10", "recall_50", "mrr"], default="ndcg_10"
    )
    c.add_argument("--mode", choices=["hybrid", "dense", "sparse"], action="append")
    c.add_argument("--json", action="store_true")
    c.set_defaults(handler=cmd_compare)

    k = sub.add_parser(
        "calibrate", help="grid-search fusion weights, depths and constants; changes nothing"
    )
    k.add_argument("--set", dest="set_name", required=True)
    _run_options(k)
    k.add_argument(
        "--dense-weights",
        type=_floats,
        default=None,
        help="comma list, default 0,0.1,0.2,0.3,0.5,0.7,1.0",
    )
    k.add_argument("--depths", type=_ints, default=None, help="comma list, default 50,100,200")
    k.add_argument(
        "--rrf-constants",
        type=_ints,
        default=None,
        help="comma list of fusion constants (EWALL_RRF_K), default: the current one only",
    )
    k.set_defaults(handler=cmd_calibrate)

    i = sub.add_parser("import", help="import a set from JSON lines or TREC files")
    i.add_argument("--set", dest="set_name", required=True)
    i.add_argument("--jsonl", type=Path)
    i.add_argument("--queries", type=Path)
    i.add_argument("--qrels", type=Path)
    i.add_argument("--description", default="")
    i.add_argument("--by", default=None, help="rater for judgements that name none")
    i.add_argument("--replace", action="store_true", help="drop the set's other queries")
    i.set_defaults(handler=cmd_import)

    e = sub.add_parser("export", help="write a set as JSON lines or TREC files")
    e.add_argument("--set", dest="set_name", required=True)
    e.add_argument("--jsonl", type=Path)
    e.add_argument("--queries", type=Path)
    e.add_argument("--qrels", type=Path)
    e.set_defaults(handler=cmd_export)

    s = sub.add_parser("sets", help="list relevance sets")
    s.add_argument("--json", action="store_true")
    s.set_defaults(handler=cmd_sets)

    t = sub.add_parser("starter", help="load the shipped starter set (idempotent)")
    t.add_argument("--by", default=None)
    t.set_defaults(handler=cmd_starter)

    o = sub.add_parser(
        "corpus", help="load the shipped corpus sets corpus-nl and corpus-nl-heldout (idempotent)"
    )
    o.add_argument("--by", default=None)
    o.set_defaults(handler=cmd_corpus)

    g = sub.add_parser(
        "grounding",
        help="measure the grounding gate per kind of sentence on a "
        "labelled set built from ../shared/corpus; --write "
        "stores the chosen threshold for the encoder",
    )
    g.add_argument("--decisions", type=_depth, default=40)
    g.add_argument("--retrievals", type=_depth, default=60)
    g.add_argument("--seed", type=int, default=28)
    g.add_argument(
        "--weights",
        type=_weights,
        default=None,
        help="lexical weights to measure, e.g. 0.5,0.6,0.7,0.8,0.9,1 (default 1: containment "
        "alone; a lower weight makes the gate run the encoder on every check)",
    )
    g.add_argument(
        "--write",
        action="store_true",
        help="store threshold and weight under the encoder's model id",
    )
    g.add_argument("--json", action="store_true")
    g.set_defaults(handler=cmd_grounding)


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--as", dest="person", help="evaluate as this person (their walls)")
    p.add_argument(
        "--documents-half",
        choices=["even", "odd"],
        default=None,
        help="only questions whose relevant documents all lie in this half of "
        "the corpus (the halves of ewall model adapt --half)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")


def _weight(value: str) -> float:
    try:
        out = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number") from None
    if not (math.isfinite(out) and out >= 0):  # a weight of inf or nan ranks nothing
        raise argparse.ArgumentTypeError("expected a finite non-negative number")
    return out


def _depth(value: str) -> int:
    try:
        out = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError("expected an integer") from None
    if not 1 <= out <= 1000:
        raise argparse.ArgumentTypeError("expected an integer 1-1000")
    return out


def _floats(value: str) -> list[float]:
    try:
        out = [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected numbers separated by commas") from None
    if not out or any(not (math.isfinite(v) and v >= 0) for v in out):
        raise argparse.ArgumentTypeError("expected finite non-negative numbers")
    return out


def _weights(value: str) -> list[float]:
    out = _floats(value)
    if any(v > 1 for v in out):
        raise argparse.ArgumentTypeError("expected weights from 0 to 1")
    return sorted(set(out))  # a repeated weight would widen its own plateau (choose)


def _ints(value: str) -> list[int]:
    try:
        out = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected integers separated by commas") from None
    if not out or any(not 1 <= v <= 1000 for v in out):
        raise argparse.ArgumentTypeError("expected integers 1-1000")
    return out


def _fail(message: str) -> int:
    print(f"ewall eval: {message}", file=sys.stderr)
    return 2


def _operator() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no passwd entry in some containers
        return "cli"


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=JSON_INDENT, ensure_ascii=False, default=str) + "\n")


# --- database and search resources -----------------------------------------------------------


@contextmanager
def _database(settings: Settings) -> Iterator[Any]:
    from app.db.runtime import open_database

    with open_database(settings) as database:
        yield database


@contextmanager
def _resources(settings: Settings) -> Iterator[Any]:
    """What the search path needs, without the HTTP app: pool, encoder, access resolver."""
    from app.auth.service import TokenVerifier
    from app.embeddings import Embedder
    from app.resources import Resources
    from app.walls.resolution import AccessResolver

    with _database(settings) as database:
        # the verifier is never used here; a dev one avoids demanding OIDC settings
        verifier = TokenVerifier(settings.model_copy(update={"auth_mode": "dev"}))
        yield Resources(
            settings=settings,
            database=database,
            verifier=verifier,
            embedder=Embedder(settings),
            resolver=AccessResolver(),
        )


# --- files -----------------------------------------------------------------------------------


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None


def _parse_files(args: argparse.Namespace, judged_by: str) -> tuple[dict[str, str], list[Any]]:
    from app.evaluation import sets

    def parsed(path: Path, parse: Callable[[str], _T]) -> _T:
        try:
            return parse(_read(path))
        except ValueError as exc:  # the file's name before its line and message
            message = str(exc)
            named = message if message.startswith(str(path)) else f"{path}: {message}"
            raise ValueError(named) from None

    jsonl: Path | None = getattr(args, "jsonl", None)
    if jsonl is not None:
        if args.queries or args.qrels:
            raise ValueError("give either --jsonl or --queries with --qrels, not both")
        header, found = parsed(jsonl, lambda text: sets.parse_jsonl(text, judged_by))
        source = jsonl
    elif not (args.queries and args.qrels):
        raise ValueError("give --jsonl FILE, or --queries FILE and --qrels FILE")
    else:
        queries = parsed(args.queries, sets.parse_queries_tsv)
        judgements = parsed(args.qrels, lambda text: sets.parse_qrels(text, judged_by))
        header, found, source = {}, sets.merge_trec(queries, judgements), args.queries
    if not found:
        # an empty file is a mistake, never a set: with --replace it would empty the set
        raise ValueError(f"{source}: no queries")
    return header, found


# --- eval ------------------------------------------------------------------------------------


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from app.errors import AppError
    from app.evaluation import repository, runner, sets

    if args.queries or args.qrels:
        if not (args.queries and args.qrels):
            return _fail("--queries and --qrels go together")
    elif not args.set_name:
        return _fail("give --set NAME, or --queries FILE --qrels FILE")
    modes = list(runner.MODES) if args.mode == "all" else [args.mode]
    overrides = None
    if (args.dense_weight, args.sparse_weight, args.depth, args.rrf_k) != (None,) * 4:
        from app.search.service import SearchOverrides

        overrides = SearchOverrides(
            dense_weight=args.dense_weight,
            sparse_weight=args.sparse_weight,
            dense_candidates=args.depth,
            sparse_candidates=args.depth,
            rrf_k=args.rrf_k,
        )
    temporary = None
    try:
        parsed = _parse_files(args, _operator()) if args.queries else None
        with _resources(settings) as resources:
            name = args.set_name
            if parsed is not None:
                if name is None:
                    name = temporary = f"tmp-{uuid.uuid4().hex[:12]}"
                with resources.database.transaction() as conn:
                    sets.import_queries(
                        conn, name, "imported by ewall eval", _operator(), parsed[1], replace=True
                    )
            try:
                report = runner.run_eval(
                    resources,
                    name,
                    modes=modes,
                    person=args.person,
                    overrides=overrides,
                    keep_unavailable=args.keep_unavailable,
                    save=args.save,
                    documents_half=args.documents_half,
                )
            finally:
                if temporary is not None and not args.save:
                    with resources.database.transaction() as conn:
                        info = repository.get_set(conn, temporary)
                        if info is not None:
                            repository.delete_set(conn, info.set_id)
    except (ValueError, AppError) as exc:
        return _fail(getattr(exc, "message", None) or str(exc))
    data = report.as_dict()
    if args.json:
        _print_json(data)
    else:
        _render_report(data)
    if not any(m.get("queries") for m in data["metrics"].values()):
        # a check built on ewall eval must not pass while measuring nothing
        print(
            "ewall: no query was measured: none has a judged document that can be found "
            "(unknown ids, or documents this person may not see)",
            file=sys.stderr,
        )
        return 1
    return 0


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _render_report(data: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    config = data["config"]
    console.print(
        f"[bold]Relevance set[/bold] {data['set']}  ·  evaluated as "
        f"{', '.join(data['persons'])}  ·  depth {config['search_depth']}  ·  "
        f"{data['took_s']} s" + (f"  ·  run {data['run_id']}" if data["run_id"] else "")
    )
    if config.get("overrides"):
        console.print(f"overrides for this run: {config['overrides']}")
    summary = Table(title="Means over queries with relevant judgements")
    for col in ("mode", "nDCG@10", "recall@10", "recall@50", "MRR", "queries"):
        summary.add_column(col, justify="right" if col != "mode" else "left")
    for mode, m in data["metrics"].items():
        summary.add_row(
            mode,
            _fmt(m["ndcg_10"]),
            _fmt(m["recall_10"]),
            _fmt(m["recall_50"]),
            _fmt(m["mrr"]),
            _fmt(m["queries"]),
        )
    console.print(summary)
    by_type = data.get("metrics_by_type") or {}
    types = sorted({t for per_mode in by_type.values() for t in per_mode})
    if len(types) > 1:
        table = Table(title="nDCG@10 per question type (queries)")
        table.add_column("mode")
        for t in types:
            table.add_column(t, justify="right")
        for mode, per_type in by_type.items():
            table.add_row(
                mode,
                *[
                    f"{_fmt(per_type[t]['ndcg_10'])} ({per_type[t]['queries']})"
                    if t in per_type
                    else "–"
                    for t in types
                ],
            )
        console.print(table)
    modes = list(data["per_query"])
    detail = Table(title="Per query: nDCG@10 (first relevant rank)")
    detail.add_column("query")
    detail.add_column("text", overflow="fold", max_width=60)
    for mode in modes:
        detail.add_column(mode, justify="right")
    detail.add_column("unavailable", justify="right")
    rows: dict[str, list[str]] = {}
    for mode in modes:
        for q in data["per_query"][mode]:
            s = q["scores"]
            cell = f"{_fmt(s['ndcg_10'])} ({_fmt(s['first_relevant_rank'])})"
            rows.setdefault(q["key"], [q["key"], q["text"][:120]]).append(cell)
    unavailable = {q["key"]: q["unavailable"] for q in data["per_query"][modes[0]]}
    for key, cells in rows.items():
        detail.add_row(*cells, str(unavailable.get(key, 0)))
    console.print(detail)
    hidden = sum(unavailable.values())
    if hidden:
        console.print(
            f"[yellow]{hidden} judged target(s) are not visible to the evaluated "
            "person (walled or not ingested); they were left out.[/yellow]"
        )


# --- compare ---------------------------------------------------------------------------------


def cmd_compare(args: argparse.Namespace, settings: Settings) -> int:
    from app.evaluation import runner

    try:
        needs_db = any(not Path(r).is_file() for r in (args.run_a, args.run_b))
        if needs_db:
            with _database(settings) as database:
                a = runner.load_run(database, args.run_a)
                b = runner.load_run(database, args.run_b)
        else:
            a = runner.load_run(None, args.run_a)
            b = runner.load_run(None, args.run_b)
        comparisons = runner.compare_runs(a, b, metric=args.metric, modes=args.mode)
    except ValueError as exc:
        return _fail(str(exc))
    out = [c.as_dict() for c in comparisons]
    if args.json:
        _print_json({"a": args.run_a, "b": args.run_b, "comparisons": out})
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for comp in out:
        table = Table(
            title=f"{comp['mode']}: {comp['metric']}  B vs A  ·  wins {comp['wins']}"
            f"  losses {comp['losses']}  ties {comp['ties']}  ·  mean "
            f"{_fmt(comp['mean_a'])} → {_fmt(comp['mean_b'])}"
        )
        for col in ("query", "text", "A", "B", "Δ", ""):
            table.add_column(
                col,
                justify="right" if col in ("A", "B", "Δ") else "left",
                overflow="fold",
                max_width=60 if col == "text" else None,
            )
        for q in comp["queries"]:
            mark = {"win": "[green]win[/green]", "loss": "[red]loss[/red]"}.get(
                q["outcome"], q["outcome"]
            )
            delta = "–" if q["delta"] is None else f"{q['delta']:+.3f}"
            table.add_row(q["key"], q["text"][:120], _fmt(q["a"]), _fmt(q["b"]), delta, mark)
        console.print(table)
        for side in ("a", "b"):
            if comp[f"only_in_{side}"]:
                console.print(f"only in {side.upper()}: {', '.join(comp[f'only_in_{side}'])}")
    return 0


# --- calibrate -------------------------------------------------------------------------------


def cmd_calibrate(args: argparse.Namespace, settings: Settings) -> int:
    from app.errors import AppError
    from app.evaluation import runner

    try:
        with _resources(settings) as resources:
            report = runner.calibrate(
                resources,
                args.set_name,
                person=args.person,
                dense_weights=args.dense_weights or runner.DENSE_WEIGHTS,
                depths=args.depths or runner.DEPTHS,
                documents_half=args.documents_half,
                rrf_constants=args.rrf_constants or (),
            )
    except (ValueError, AppError) as exc:
        return _fail(getattr(exc, "message", None) or str(exc))
    data = report.as_dict()
    if args.json:
        _print_json(data)
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(
        title=f"Calibration on {data['set']} (hybrid, sparse weight 1.0) · {data['took_s']} s"
    )
    for col in ("dense weight", "depth", "RRF k", "nDCG@10", "recall@10", "recall@50", "MRR", ""):
        table.add_column(col, justify="right")
    best = data["best"]
    for p in [data["current"], *data["grid"]]:
        m = p["metrics"]
        tag = "current" if p["current"] else ""
        if (p["dense_weight"], p["dense_candidates"], p["rrf_k"], p["current"]) == (
            best["dense_weight"],
            best["dense_candidates"],
            best["rrf_k"],
            best["current"],
        ):
            tag = (tag + " best").strip()
        depth = (
            str(p["dense_candidates"])
            if p["dense_candidates"] == p["sparse_candidates"]
            else f"{p['dense_candidates']}/{p['sparse_candidates']}"
        )
        table.add_row(
            f"{p['dense_weight']:g}",
            depth,
            str(p["rrf_k"]),
            _fmt(m["ndcg_10"]),
            _fmt(m["recall_10"]),
            _fmt(m["recall_50"]),
            _fmt(m["mrr"]),
            tag,
        )
    console.print(table)
    legs = Table(title="Single legs (current depths)")
    for col in ("mode", "nDCG@10", "recall@10", "recall@50", "MRR"):
        legs.add_column(col, justify="right")
    for mode, m in data["single_legs"].items():
        legs.add_row(
            mode, _fmt(m["ndcg_10"]), _fmt(m["recall_10"]), _fmt(m["recall_50"]), _fmt(m["mrr"])
        )
    console.print(legs)
    if data["best_is_current"]:
        console.print("The current settings are the best measured; nothing to change.")
    else:
        console.print("Best measured setting (NOT applied; set these yourself):")
        for line in data["suggested_environment"]:
            console.print(f"  {line}")
    if not data["current_beats_single_legs"]:
        console.print(
            "[yellow]The current hybrid setting scores below the better single "
            "leg on nDCG@10.[/yellow]"
        )
    return 0


# --- import, export, sets, starter -----------------------------------------------------------


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    from app.evaluation import sets

    try:
        header, queries = _parse_files(args, args.by or _operator())
        description = args.description or header.get("description", "")
        with _database(settings) as database, database.transaction() as conn:
            sets.import_queries(
                conn, args.set_name, description, _operator(), queries, replace=args.replace
            )
    except ValueError as exc:
        return _fail(str(exc))
    n = sum(len(q.judgements) for q in queries)
    print(f"set {args.set_name}: {len(queries)} queries, {n} judgements imported")
    return 0


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from app.evaluation import repository, sets

    if not (args.jsonl or (args.queries and args.qrels)):
        return _fail("give --jsonl FILE, or --queries FILE and --qrels FILE")
    with _database(settings) as database, database.transaction() as conn:
        info = repository.get_set(conn, args.set_name)
        if info is None:
            return _fail(f"no relevance set {args.set_name!r}")
        queries = sets.export_queries(conn, info.set_id)
    if args.jsonl:
        args.jsonl.write_text(
            sets.format_jsonl(queries, name=info.name, description=info.description),
            encoding="utf-8",
        )
    if args.queries and args.qrels:
        args.queries.write_text(sets.format_queries_tsv(queries), encoding="utf-8")
        args.qrels.write_text(sets.format_qrels(queries), encoding="utf-8")
    print(f"set {info.name}: {len(queries)} queries exported")
    return 0


def cmd_sets(args: argparse.Namespace, settings: Settings) -> int:
    from app.evaluation import repository

    with _database(settings) as database, database.transaction() as conn:
        items = repository.list_sets(conn)
    if args.json:
        _print_json(
            [
                {
                    "name": s.name,
                    "description": s.description,
                    "queries": s.queries,
                    "created_by": s.created_by,
                    "created_at": s.created_at,
                }
                for s in items
            ]
        )
        return 0
    for s in items:
        print(f"{s.name}\t{s.queries} queries\t{s.description}")
    return 0


def cmd_starter(args: argparse.Namespace, settings: Settings) -> int:
    from app.evaluation.starter import STARTER_ECLIS, load_starter_set

    with _database(settings) as database:
        name = load_starter_set(database, created_by=args.by or _operator())
    print(
        f"set {name} loaded; it needs these {len(STARTER_ECLIS)} decisions ingested "
        "(ewall demo does that)"
    )
    return 0


def cmd_corpus(args: argparse.Namespace, settings: Settings) -> int:
    from app.evaluation.corpus import load_corpus_sets

    with _database(settings) as database:
        loaded = load_corpus_sets(database, created_by=args.by or _operator())
    for name, n in loaded.items():
        print(f"set {name}: {n} queries loaded")
    print(
        "they need the demo (statutes, starter decisions) and every decision of "
        "../shared/corpus/rechtspraak/xml ingested (ewall ingest rechtspraak ...)"
    )
    return 0


# --- grounding -------------------------------------------------------------------------------


GROUNDING_PROGRESS_TEXTS = 256


def cmd_grounding(args: argparse.Namespace, settings: Settings) -> int:
    import numpy as np

    from app.embeddings import Embedder
    from app.gates.calibrate import WEIGHTS, Matrix, measure
    from app.gates.calibration import store_calibration

    embedder = Embedder(settings)
    started = time.monotonic()

    def encode(texts: list[str]) -> Matrix:
        # in slices, to show progress: with a slow encoder the set takes minutes
        parts = []
        for start in range(0, len(texts), GROUNDING_PROGRESS_TEXTS):
            parts.append(
                embedder.embed_passages(
                    texts[start : start + GROUNDING_PROGRESS_TEXTS], priority="bulk"
                )
            )
            done = min(len(texts), start + GROUNDING_PROGRESS_TEXTS)
            print(
                f"grounding: encoded {done:,}/{len(texts):,} texts with {embedder.model_id} "
                f"({time.monotonic() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
        return np.concatenate(parts) if parts else embedder.embed_passages([])

    try:
        report = measure(
            encode,
            embedder.model_id,
            settings.corpus_dir,
            decisions=args.decisions,
            retrievals=args.retrievals,
            seed=args.seed,
            weights=tuple(args.weights) if args.weights else WEIGHTS,
        )
    except ValueError as exc:
        return _fail(str(exc))
    finally:
        embedder.close()
    if args.write:
        path = store_calibration(
            report["model_id"],
            {
                "threshold": report["threshold"],
                "lexical_weight": report["lexical_weight"],
                "measured": {
                    "sentences": report["sentences"],
                    "seed": report["seed"],
                    "after": report["after"]["kinds"],
                    "before": report["before"]["kinds"],
                    "heldout": report["heldout"].get("chosen", {}).get("kinds"),
                },
            },
        )
        report["written"] = str(path)
    if args.json:
        _print_json(report)
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(
        title=f"Grounding gate on {report['sentences']} sentences from "
        f"{report['decisions']} decisions · {report['model_id']} · "
        f"threshold {report['threshold']} · lexical weight "
        f"{report['lexical_weight']} · {report['took_s']} s"
    )
    for col in ("kind", "n", "before: flagged", "after: flagged", "precision", "recall"):
        table.add_column(col, justify="left" if col == "kind" else "right")
    before, after = report["before"]["kinds"], report["after"]["kinds"]
    for kind, entry in after.items():
        table.add_row(
            kind,
            str(entry["n"]),
            _fmt(before[kind]["flagged"]),
            _fmt(entry["flagged"]),
            _fmt(entry.get("precision")),
            _fmt(entry.get("recall")),
        )
    console.print(table)
    console.print(
        "flagged: share judged unsupported (for marker kinds: the marker reported); "
        "faithful kinds (copied, reworded, marker_correct, written paraphrases, summaries "
        "and copies) should stay near 0."
    )
    held = report["heldout"]
    if held.get("chosen"):
        table = Table(title=f"Held-out written answers ({held['sentences']} sentences)")
        for col in ("kind", "n", "in use: flagged", "chosen: flagged"):
            table.add_column(col, justify="left" if col == "kind" else "right")
        for kind, entry in held["chosen"]["kinds"].items():
            table.add_row(
                kind,
                str(entry["n"]),
                _fmt(held["in_use"]["kinds"][kind]["flagged"]),
                _fmt(entry["flagged"]),
            )
        console.print(table)
    if args.write:
        console.print(f"written to {report['written']}")
    return 0
