"""Ingestion benchmark: chunks per second, database vs embedding time, re-ingest speed-up.

    python -m bench.ingest                    # 100 Rechtspraak decisions, real embedder
    python -m bench.ingest --rows 20 --queries 1

N documents (Rechtspraak open-data XML from ../shared/corpus as public case law, or
generated Dutch text when the corpus is absent or has fewer records) go through the real
``IngestPipeline`` with the real ``Embedder`` into a fresh database. Then the same documents
again, unchanged, ``--queries`` times: nothing new should reach the encoder, and the
re-ingest is compared with the first pass in the same process. The pipeline's own
``timings`` counter splits the first pass into embedding and database time.
"""

from __future__ import annotations

import argparse
import csv
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table

from app.embeddings import Embedder
from app.ingest.pipeline import IngestPipeline
from app.settings import Settings
from bench.common import (
    Latency,
    Phases,
    Stopwatch,
    TextGenerator,
    add_common_arguments,
    build_vocabulary,
    console,
    fmt_ratio,
    progress_bar,
    quiet_logging,
    verdict,
    write_json,
)
from bench.server import (
    BenchDatabase,
    bench_database,
    bench_server,
    print_facts,
    server_config,
    server_facts,
)
from connectors.base import SourceDocument

DB_SHARE_GOAL = 0.15
REINGEST_SPEEDUP_GOAL = 50.0
DB_NAME = "ewall_bench_ingest"


def rechtspraak_documents(corpus: Path, limit: int) -> list[SourceDocument]:
    """Clean Rechtspraak records, the ECLI from the manifest (else from the file name)."""
    folder = corpus / "rechtspraak"
    eclis: dict[str, str] = {}
    manifest = folder / "manifest.tsv"
    if manifest.is_file():
        with manifest.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                eclis[row["file"]] = row["ecli"]
    docs: list[SourceDocument] = []
    for path in sorted((folder / "xml").glob("*.xml"))[:limit]:
        ecli = eclis.get(f"xml/{path.name}") or path.stem.replace(".", ":")
        docs.append(
            SourceDocument(
                source="rechtspraak",
                external_id=ecli,
                content=path.read_bytes(),
                mime_type="application/xml",
                doc_type="case_law",
            )
        )
    return docs


def generated_documents(n: int, corpus: Path | None, seed: int) -> list[SourceDocument]:
    """Decision-sized Dutch text (about 3,000 words in paragraphs) when records run out."""
    vocab = build_vocabulary(corpus, 50_000, 1.0, seed)
    gen = TextGenerator(vocab, 120, np.random.default_rng([seed, 20]))
    docs = []
    for i in range(n):
        paragraphs = gen.bodies(25)
        docs.append(
            SourceDocument(
                source="bench",
                external_id=f"GEN-{i:05d}",
                title=f"Gegenereerde uitspraak {i}",
                text="\n\n".join(paragraphs),
                doc_type="case_law",
            )
        )
    return docs


@dataclass
class Pass:
    seconds: float
    outcomes: Counter[str]
    chunks: int
    added: int
    embed_s: float
    db_s: float
    encoded: int
    per_doc: Latency

    def as_dict(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "outcomes": dict(self.outcomes),
            "chunks": self.chunks,
            "added": self.added,
            "embed_s": round(self.embed_s, 3),
            "db_s": round(self.db_s, 3),
            "encoded_texts": self.encoded,
            "per_doc_ms": self.per_doc.as_dict(),
        }


def ingest_pass(
    pipeline: IngestPipeline, embedder: Embedder, docs: list[SourceDocument], label: str
) -> Pass:
    # deltas, not a reset: the counter belongs to the pipeline
    timings_before = dict(pipeline.timings)
    encoded_before = embedder.encoded_texts
    run = pipeline.start_run("bench", {"pass": label}, "bench")
    outcomes: Counter[str] = Counter()
    chunks = added = 0
    per_doc: list[float] = []
    watch = Stopwatch()
    with progress_bar() as bar:
        task = bar.add_task(label, total=len(docs))
        for doc in docs:
            # a fresh object each pass: the pipeline normalises fields in place
            copy = SourceDocument(**vars(doc))
            step = Stopwatch()
            outcome = pipeline.ingest(run, copy, public=True)
            per_doc.append(step.elapsed())
            outcomes[outcome.status] += 1
            chunks += outcome.chunks
            added += outcome.added
            bar.advance(task)
    pipeline.finish_run(run)
    seconds = watch.elapsed()

    def spent(key: str) -> float:
        return float(pipeline.timings.get(key, 0.0)) - float(timings_before.get(key, 0.0))

    return Pass(
        seconds,
        outcomes,
        chunks,
        added,
        spent("embed_s"),
        spent("db_s"),
        embedder.encoded_texts - encoded_before,
        Latency.of(per_doc),
    )


def print_report(
    first: Pass, again: list[Pass], docs: int, origin: str, load_s: float
) -> dict[str, Any]:
    best = min(again, key=lambda p: p.seconds)
    median_s = float(np.median([p.seconds for p in again]))
    speedup = first.seconds / median_s if median_s > 0 else float("inf")
    db_share = first.db_s / (first.db_s + first.embed_s) if first.db_s + first.embed_s else 0.0
    other = max(0.0, first.seconds - first.embed_s - first.db_s)
    table = Table(title=f"Ingestion of {docs} documents ({origin})", header_style="bold")
    for name, justify in (
        ("measure", "left"),
        ("value", "right"),
        ("detail", "left"),
        ("goal", "left"),
        ("", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_row(
        "first pass",
        f"{first.seconds:.1f} s",
        f"{first.chunks:,} chunks, {first.added:,} added, outcomes {dict(first.outcomes)}",
        "",
        "",
    )
    table.add_row(
        "  chunks per second",
        f"{first.chunks / max(first.seconds, 1e-9):,.1f}",
        f"{first.encoded:,} texts encoded",
        "",
        "",
    )
    table.add_row(
        "  embedding (timings.embed_s)",
        f"{first.embed_s:.1f} s",
        f"{first.embed_s / max(first.seconds, 1e-9):.0%} of the pass",
        "",
        "",
    )
    table.add_row(
        "  database (timings.db_s)",
        f"{first.db_s:.1f} s",
        f"{first.db_s / max(first.seconds, 1e-9):.0%} of the pass",
        "",
        "",
    )
    table.add_row(
        "  extraction, chunking, other",
        f"{other:.1f} s",
        f"{other / max(first.seconds, 1e-9):.0%} of the pass",
        "",
        "",
    )
    table.add_row(
        "  database share of db + embedding",
        f"{db_share:.1%}",
        f"db {fmt_ratio(first.db_s, first.embed_s)} of embedding",
        f"<= {DB_SHARE_GOAL:.0%}",
        verdict(db_share <= DB_SHARE_GOAL),
    )
    table.add_section()
    table.add_row(
        f"re-ingest, unchanged ({len(again)} passes)",
        f"{median_s:.2f} s",
        f"median; best {best.seconds:.2f} s, outcomes {dict(best.outcomes)}, "
        f"{sum(p.encoded for p in again)} texts encoded",
        "",
        "",
    )
    best_other = max(0.0, best.seconds - best.embed_s - best.db_s)
    table.add_row(
        "  of which database / extraction+chunking",
        f"{best.db_s:.2f} s",
        f"{best.db_s / max(best.seconds, 1e-9):.0%} database, {best_other:.2f} s "
        f"({best_other / max(best.seconds, 1e-9):.0%}) extraction, chunking, other",
        "",
        "",
    )
    table.add_row(
        "  speed-up vs the first pass",
        f"{speedup:,.1f}x",
        f"per document p50 {first.per_doc.p50_ms:.0f} ms -> {best.per_doc.p50_ms:.1f} ms",
        f">= {REINGEST_SPEEDUP_GOAL:g}x",
        verdict(speedup >= REINGEST_SPEEDUP_GOAL),
    )
    console.print(table)
    console.print(f"model load {load_s:.1f} s (not counted)")
    return {
        "chunks_per_s": first.chunks / max(first.seconds, 1e-9),
        "db_share": db_share,
        "reingest_speedup": speedup,
        "reingest_median_s": median_s,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.ingest",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(parser, rows=100, queries=3, rows_help="documents to ingest")
    args = parser.parse_args(argv)
    args.queries = max(1, args.queries)
    quiet_logging()
    phases = Phases()
    started = time.perf_counter()
    settings = Settings(database_url=None, log_json=False, retag_worker=False)
    corpus = args.corpus if args.corpus.is_dir() else None
    docs = rechtspraak_documents(corpus, args.rows) if corpus is not None else []
    origin = f"{len(docs)} Rechtspraak records" if docs else "generated text"
    if len(docs) < args.rows:
        extra = generated_documents(args.rows - len(docs), corpus, args.seed)
        origin += f" + {len(extra)} generated" if docs else ""
        docs += extra
    results: dict[str, Any] = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "documents": origin,
    }
    shared_buffers = "256MB" if args.shared_buffers == "auto" else args.shared_buffers
    with phases("load the embedding model"):
        embedder = Embedder(settings)
    with (
        bench_server(
            data_dir=args.data_dir, keep=args.keep, config=server_config(shared_buffers)
        ) as server,
        bench_database(
            server,
            settings,
            DB_NAME,
            signature=None,
            keep=args.keep or bool(args.data_dir),
        ) as bdb,
    ):
        results["server"] = facts(bdb)
        print_facts("server", results["server"])
        pipeline = IngestPipeline(bdb.database, embedder, settings)
        with phases("first pass"):
            first = ingest_pass(pipeline, embedder, docs, "first ingest")
        again = []
        for i in range(args.queries):
            with phases(f"re-ingest {i + 1}"):
                again.append(ingest_pass(pipeline, embedder, docs, f"re-ingest {i + 1}"))
    results["summary"] = print_report(
        first, again, len(docs), origin, phases.seconds["load the embedding model"]
    )
    results["first"] = first.as_dict()
    results["reingest"] = [p.as_dict() for p in again]
    results["phases_s"] = {k: round(v, 2) for k, v in phases.seconds.items()}
    results["total_s"] = round(time.perf_counter() - started, 1)
    write_json(args.json_path, results)
    return 0


def facts(bdb: BenchDatabase) -> dict[str, str]:
    with bdb.superuser() as su:
        return server_facts(su)


if __name__ == "__main__":
    raise SystemExit(main())
