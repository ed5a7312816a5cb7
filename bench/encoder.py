"""What a lawyer waits for: query encoding with torch, ONNX and int8 ONNX, and HTTP search
end to end with each (issue 17).

    python -m bench.encoder                       # encoding only, in one process
    python -m bench.encoder --http --data-dir D   # also HTTP search on a loaded demo firm

Encoding: the evaluation sets' Dutch questions, each encoded alone and in micro-batches of
``--batch`` questions, by the three backends in turn (question by question, so a busy moment
of the machine hits all three alike); p50/p95 per backend, the ratio to torch, and the
cosine of each vector to torch's (min and mean). Also the first-start cost: exporting each
ONNX model afresh into a temporary folder.

HTTP (``--http``): the service (uvicorn in a thread) on the database in ``--data-dir`` (run
``EWALL_DATA_DIR=D python -m app.cli demo`` first), one Embedder whose query encoder is
switched between the backends question by question, and ``POST /v1/search`` (k 10) as a demo
lawyer: the latency a lawyer sees, question encoding included. Nothing asserts on time; on
a busy machine the ratios within one run are what to read.

Ranking (``--eval SET``, repeatable, with ``--data-dir`` holding the evaluation corpus):
``ewall eval``'s runner with each backend, hybrid and dense, nDCG@10 and the number of
questions whose top 10 differs from torch's. ``ewall eval`` itself encodes a whole set as
bulk work (torch, in the bulk lane), so here the questions go through the query lane.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.table import Table

from app.auth.service import TokenVerifier
from app.db.runtime import open_database
from app.embeddings import Embedder, Priority, _forward
from app.evaluation import runner
from app.main import create_app
from app.onnx_encoder import OnnxQueryEncoder, QueryBackend, cache_root, ensure_export
from app.resources import Resources
from app.settings import Settings
from app.walls.resolution import AccessResolver
from bench.common import Latency, console, every_question_encoded, quiet_logging, write_json
from bench.isolation import Api, Service, ok

EVAL_DATA = Path(__file__).resolve().parents[1] / "app" / "evaluation" / "data"
BACKENDS: tuple[QueryBackend, ...] = ("torch", "onnx", "onnx-int8")
DEMO_LAWYER = "ldekker@firm.nl"

Encode = Callable[[list[str]], npt.NDArray[np.float32]]


class QueryLaneEmbedder(Embedder):
    """Every query-side encoding through the query lane (the backend under test)."""

    def embed_queries(
        self, texts: Sequence[str], *, priority: Priority = "query", caller: str | None = None
    ) -> npt.NDArray[np.float32]:
        return super().embed_queries(texts, priority="query", caller=caller)


def dutch_questions() -> list[str]:
    texts = []
    for name in ("corpus_nl.jsonl", "corpus_nl_heldout.jsonl"):
        for line in (EVAL_DATA / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "text" in row:
                texts.append(str(row["text"]))
    return texts


def _cosines(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    out: npt.NDArray[np.float32] = (a * b).sum(axis=1) / (
        np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    )
    return out


def encoders(embedder: Embedder, settings: Settings) -> dict[str, OnnxQueryEncoder | None]:
    """None (torch) and an ONNX encoder per ONNX backend, from the settings' cache folder."""
    out: dict[str, OnnxQueryEncoder | None] = {"torch": None}
    threads = max(1, int(embedder._torch.get_num_threads()))
    for backend in BACKENDS[1:]:
        folder = ensure_export(embedder._model, embedder.name, backend, cache_root(settings))
        out[backend] = OnnxQueryEncoder(embedder._model, folder, backend, threads=threads)
    return out


def export_seconds(embedder: Embedder) -> dict[str, float]:
    """The first-start cost: each ONNX export made afresh (weights hash included)."""
    out: dict[str, float] = {}
    for backend in BACKENDS[1:]:
        with tempfile.TemporaryDirectory(prefix="ewall-bench-export-") as tmp:
            started = time.perf_counter()
            ensure_export(embedder._model, embedder.name, backend, Path(tmp))
            out[backend] = time.perf_counter() - started
    return out


def measure_encoding(
    embedder: Embedder,
    coders: dict[str, OnnxQueryEncoder | None],
    questions: list[str],
    batch: int,
    repeats: int,
) -> dict[str, Any]:
    def encode_with(backend: str) -> Encode:
        coder = coders[backend]
        if coder is None:
            return lambda texts: _forward(embedder._model, texts)
        return coder.encode

    fns = {backend: encode_with(backend) for backend in BACKENDS}
    reference = np.vstack([fns["torch"]([q]) for q in questions])
    result: dict[str, Any] = {}
    for label, size in (("single", 1), (f"batch of {batch}", batch)):
        groups = [questions[i : i + size] for i in range(0, len(questions), size)]
        seconds: dict[str, list[float]] = {b: [] for b in BACKENDS}
        vectors: dict[str, list[npt.NDArray[np.float32]]] = {b: [] for b in BACKENDS}
        for _ in range(repeats):
            for group in groups:
                for backend in BACKENDS:  # in turn: a busy moment hits all three
                    started = time.perf_counter()
                    out = fns[backend](group)
                    seconds[backend].append(time.perf_counter() - started)
                    if len(vectors[backend]) < len(groups):
                        vectors[backend].append(out)
        result[label] = {
            backend: {
                "latency": Latency.of(seconds[backend]).as_dict(),
                "cosine_min": float(_cosines(np.vstack(vectors[backend]), reference).min()),
                "cosine_mean": float(_cosines(np.vstack(vectors[backend]), reference).mean()),
            }
            for backend in BACKENDS
        }
    return result


def measure_http(
    embedder: Embedder,
    coders: dict[str, OnnxQueryEncoder | None],
    settings: Settings,
    questions: list[str],
    repeats: int,
) -> dict[str, Any]:
    seconds: dict[str, list[float]] = {b: [] for b in BACKENDS}
    with open_database(settings) as database:
        app = every_question_encoded(
            create_app(settings, database, embedder=embedder, start_worker=False)
        )
        with Service(app) as service:
            api = Api(service.url, settings)
            headers = api.headers(DEMO_LAWYER)
            with api.client() as http:
                for i in range(3):  # warm up: pool, plans, every encoder once
                    for backend in BACKENDS:
                        embedder.query_encoder = coders[backend]
                        body = {"query": questions[i], "k": 10}
                        ok(http.post("/v1/search", json=body, headers=headers))
                for _ in range(repeats):
                    for question in questions:
                        for backend in BACKENDS:
                            embedder.query_encoder = coders[backend]
                            body = {"query": question, "k": 10}
                            started = time.perf_counter()
                            ok(http.post("/v1/search", json=body, headers=headers))
                            seconds[backend].append(time.perf_counter() - started)
    return {backend: Latency.of(seconds[backend]).as_dict() for backend in BACKENDS}


def measure_eval(
    embedder: Embedder,
    coders: dict[str, OnnxQueryEncoder | None],
    settings: Settings,
    set_names: list[str],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with open_database(settings) as database:
        resources = Resources(
            settings=settings,
            database=database,
            verifier=TokenVerifier(settings.model_copy(update={"auth_mode": "dev"})),
            embedder=embedder,
            resolver=AccessResolver(),
        )
        for name in set_names:
            tops: dict[str, dict[str, list[list[str]]]] = {}
            out[name] = {}
            for backend in BACKENDS:
                embedder.query_encoder = coders[backend]
                report = runner.run_eval(resources, name, modes=("hybrid", "dense"))
                tops[backend] = {m: [q.top for q in o.queries] for m, o in report.modes.items()}
                out[name][backend] = {
                    mode: {
                        "ndcg_10": outcome.metrics["ndcg_10"],
                        "recall_10": outcome.metrics["recall_10"],
                        "queries": outcome.metrics["queries"],
                        "top10_differs_from_torch": sum(
                            a != b
                            for a, b in zip(tops["torch"][mode], tops[backend][mode], strict=True)
                        ),
                    }
                    for mode, outcome in report.modes.items()
                }
                console.print(f"  {name} {backend}: {out[name][backend]}")
    return out


def _table(title: str, rows: dict[str, dict[str, Any]], *, cosine: bool) -> Table:
    table = Table(title=title)
    for column in ("backend", "p50 ms", "p95 ms", "p50 vs torch", "p95 vs torch"):
        table.add_column(column, justify="right")
    if cosine:
        table.add_column("cosine min", justify="right")
        table.add_column("cosine mean", justify="right")
    base = rows["torch"].get("latency", rows["torch"])
    for backend, row in rows.items():
        lat = row.get("latency", row)
        cells = [
            backend,
            f"{lat['p50_ms']:.1f}",
            f"{lat['p95_ms']:.1f}",
            f"{lat['p50_ms'] / base['p50_ms']:.2f}x",
            f"{lat['p95_ms'] / base['p95_ms']:.2f}x",
        ]
        if cosine:
            cells += [f"{row['cosine_min']:.5f}", f"{row['cosine_mean']:.5f}"]
        table.add_row(*cells)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.encoder", description=__doc__)
    parser.add_argument("--queries", type=int, default=100, help="Dutch questions (max 100)")
    parser.add_argument("--batch", type=int, default=8, help="micro-batch size")
    parser.add_argument("--repeats", type=int, default=2, help="passes over the questions")
    parser.add_argument("--http", action="store_true", help="also HTTP search end to end")
    parser.add_argument("--http-queries", type=int, default=40)
    parser.add_argument("--data-dir", type=Path, help="EWALL_DATA_DIR with the demo loaded")
    parser.add_argument(
        "--eval",
        action="append",
        default=[],
        metavar="SET",
        help="also rank this evaluation set with each backend (repeatable)",
    )
    parser.add_argument(
        "--skip-encoding", action="store_true", help="no export timing, no encoding figures"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    quiet_logging()
    overrides: dict[str, Any] = {
        "embedding_bulk_process": False,
        "log_json": False,
        "query_encoder_backend": "torch",
    }
    if args.data_dir is not None:
        overrides["data_dir"] = args.data_dir
    settings = Settings(**overrides)
    questions = dutch_questions()[: args.queries]
    embedder = QueryLaneEmbedder(settings)
    try:
        payload: dict[str, Any] = {"threads": int(embedder._torch.get_num_threads())}
        if not args.skip_encoding:
            console.print("[cyan]>[/] exporting afresh (first-start cost)")
            payload["export_s"] = {k: round(v, 2) for k, v in export_seconds(embedder).items()}
            console.print(f"  {payload['export_s']}")
        coders = encoders(embedder, settings)
        if not args.skip_encoding:
            console.print(f"[cyan]>[/] encoding {len(questions)} questions x {args.repeats}")
            payload["encoding"] = measure_encoding(
                embedder, coders, questions, args.batch, args.repeats
            )
            for label, rows in payload["encoding"].items():
                console.print(_table(f"query encoding, {label} (busy machine)", rows, cosine=True))
        if args.eval:
            if args.data_dir is None:
                parser.error("--eval needs --data-dir (a database with the evaluation corpus)")
            console.print(f"[cyan]>[/] ranking {', '.join(args.eval)} with each backend")
            payload["eval"] = measure_eval(embedder, coders, settings, args.eval)
        if args.http:
            if args.data_dir is None:
                parser.error("--http needs --data-dir (a database with the demo firm)")
            console.print(
                f"[cyan]>[/] HTTP search, {args.http_queries} questions x "
                f"{args.repeats}, as {DEMO_LAWYER}"
            )
            payload["http"] = measure_http(
                embedder, coders, settings, questions[: args.http_queries], args.repeats
            )
            console.print(
                _table("POST /v1/search end to end (busy machine)", payload["http"], cosine=False)
            )
        write_json(args.json, payload)
    finally:
        embedder.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
