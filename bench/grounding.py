"""What the grounding gate costs per answer (issue 28, point 6): a 30-sentence answer against
the 10 chunks of one retrieval, built from real decisions, on this machine's cores.

    python -m bench.grounding [--sentences 30] [--chunks 10] [--repeat 5] [--corpus DIR]

The gate's own work, without HTTP or PostgreSQL (their share is the search's, measured by
bench.search): ``cold`` builds the chunks' passages (split, encode every chunk sentence,
windows) and judges; ``warm`` finds the passages in the cache (a retrieval checked again, or
another retrieval returning the same chunks) and encodes only the answer. Both run the way
the gate does for the encoder's calibration (at lexical weight 1 nothing is encoded:
app/gates/grounding.py ``encoder_for``), and again with the encoder forced (the cosine
weighed in). Baseline printed beside them: the gate this replaced (encode the sentences, one
cosine per whole chunk).
Nothing asserts on time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from app.embeddings import Embedder
from app.gates.calibrate import load_decisions
from app.gates.calibration import calibration_for
from app.gates.grounding import encoder_for
from app.gates.judge import Calibration, ReturnedChunk, judge_sentences
from app.gates.passages import PassageCache, normalized
from app.gates.sentences import split_sentences
from app.settings import Settings
from bench.common import quiet_logging

GOAL_S = 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=30)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    args = parser.parse_args()
    quiet_logging()
    rng = random.Random(args.seed)
    decisions = load_decisions(args.corpus / "rechtspraak" / "xml", 8, rng)
    chunks = [c for d in decisions for c in d.chunks][: args.chunks]
    pool = [s for c in chunks for s in split_sentences(c)]
    answer = [rng.choice(pool) for _ in range(args.sentences)]
    settings = Settings(embedding_bulk_process=False)
    embedder = Embedder(settings)

    calibration = calibration_for(embedder.model_id)
    forced = Calibration(calibration.threshold, min(calibration.lexical_weight, 0.999), "forced")
    hashes = [(f"bench-{i}", c) for i, c in enumerate(chunks)]
    encode, _ = encoder_for(embedder, forced)
    encode(["opwarmen"])  # model warm-up outside the timings

    def check(cache: PassageCache, used: Calibration = calibration) -> float:
        started = time.perf_counter()
        how, key = encoder_for(embedder, used)
        passages = cache.passages(key, hashes, how)
        returned = [ReturnedChunk(h, i + 1, p) for i, ((h, _), p) in enumerate(
            zip(hashes, passages, strict=True))]
        vectors = normalized(how(answer))
        judge_sentences(answer, vectors, returned, len(returned), used)
        return time.perf_counter() - started

    def baseline() -> float:
        started = time.perf_counter()
        chunk_vectors = normalized(encode(chunks))  # stored in the database in production
        vectors = normalized(encode(answer))
        _ = (vectors @ chunk_vectors.T).max(axis=1)
        return time.perf_counter() - started

    runs: list[tuple[str, list[float]]] = []
    for label, used in (("", calibration), ("encoded, ", forced)):
        cold = [check(PassageCache(), used) for _ in range(args.repeat)]
        cache = PassageCache()
        check(cache, used)
        warm = [check(cache, used) for _ in range(args.repeat)]
        runs += [(f"{label}cold", cold), (f"{label}warm", warm)]
    old = [baseline() for _ in range(args.repeat)]
    passages = sum(len(p.texts) for p in PassageCache().passages("count", hashes, encode))
    print(f"{args.sentences} sentences against {len(chunks)} chunks ({passages} passages), "
          f"{embedder.model_id} (lexical weight {calibration.lexical_weight}), "
          f"median of {args.repeat}")
    for name, values in runs:
        median = statistics.median(values)
        print(f"  {name:24s} {median * 1000:8.1f} ms  goal < {GOAL_S * 1000:.0f} ms: "
              f"{'meets' if median < GOAL_S else 'misses'}")
    print(f"  {'baseline (old gate)':24s} {statistics.median(old) * 1000:8.1f} ms  "
          "(whole-chunk cosine, chunk vectors encoded here)")
    embedder.close()


if __name__ == "__main__":
    main()
