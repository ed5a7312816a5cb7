"""Ranking metrics: nDCG@k, recall@k and reciprocal rank over graded judgements.

Conventions (docs/quality.md quotes them):

- A ranking is the list of target ids in rank order, rank 1 first. A target may occur more
  than once (several chunks of one document): only its FIRST occurrence counts, later ones
  carry no gain. That is how a document-level judgement is scored at "the first rank at
  which a chunk of that document appears" without deduplicating the list, so a document's
  rank is still the chunk rank the lawyer saw.
- Grades are 0-3 (0 = judged not relevant). They may be fractional after averaging over
  raters. A target is relevant when its grade is at least ``RELEVANT_MIN`` (1).
- nDCG uses linear gain, ``grade / log2(rank + 1)``, as trec_eval's ndcg_cut does; the ideal
  ranking places every judged grade, best first, at ranks 1, 2, 3, ...
- Recall@k: relevant targets found at rank <= k, divided by all relevant targets.
- Reciprocal rank: 1 / rank of the first relevant target in the whole ranking (the search
  depth), 0 when none was found.
- A query without any relevant judgement has no defined score: every function returns None
  and the means skip it (trec_eval does the same for queries absent from the qrels).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

RELEVANT_MIN = 1.0


def first_ranks(ranking: Sequence[str]) -> dict[str, int]:
    """Target -> 1-based rank of its first occurrence."""
    ranks: dict[str, int] = {}
    for rank, target in enumerate(ranking, start=1):
        ranks.setdefault(target, rank)
    return ranks


def _relevant(grades: Mapping[str, float]) -> set[str]:
    return {t for t, g in grades.items() if g >= RELEVANT_MIN}


def dcg(gains: Iterable[float]) -> float:
    """Discounted cumulative gain of gains listed at ranks 1, 2, 3, ..."""
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def ndcg_at(ranking: Sequence[str], grades: Mapping[str, float], k: int) -> float | None:
    if k < 1:
        raise ValueError("k must be at least 1")
    ideal = dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:k])
    if not _relevant(grades) or ideal <= 0:
        return None
    seen: set[str] = set()
    gains: list[float] = []
    for target in ranking[:k]:
        gains.append(0.0 if target in seen else max(grades.get(target, 0.0), 0.0))
        seen.add(target)
    return dcg(gains) / ideal


def recall_at(ranking: Sequence[str], grades: Mapping[str, float], k: int) -> float | None:
    if k < 1:
        raise ValueError("k must be at least 1")
    relevant = _relevant(grades)
    if not relevant:
        return None
    found = {t for t in ranking[:k] if t in relevant}
    return len(found) / len(relevant)


def first_relevant_rank(ranking: Sequence[str], grades: Mapping[str, float]) -> int | None:
    relevant = _relevant(grades)
    return next((rank for rank, t in enumerate(ranking, start=1) if t in relevant), None)


def reciprocal_rank(ranking: Sequence[str], grades: Mapping[str, float]) -> float | None:
    if not _relevant(grades):
        return None
    rank = first_relevant_rank(ranking, grades)
    return 0.0 if rank is None else 1.0 / rank


@dataclass(frozen=True)
class QueryScores:
    ndcg_10: float | None
    recall_10: float | None
    recall_50: float | None
    mrr: float | None
    first_relevant_rank: int | None
    relevant: int
    retrieved: int
    # ranks at which each relevant target first appeared (None: not in the ranking)
    relevant_ranks: dict[str, int | None] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


METRIC_NAMES = ("ndcg_10", "recall_10", "recall_50", "mrr")


def score_query(ranking: Sequence[str], grades: Mapping[str, float]) -> QueryScores:
    ranks = first_ranks(ranking)
    relevant = sorted(_relevant(grades))
    return QueryScores(
        ndcg_10=ndcg_at(ranking, grades, 10),
        recall_10=recall_at(ranking, grades, 10),
        recall_50=recall_at(ranking, grades, 50),
        mrr=reciprocal_rank(ranking, grades),
        first_relevant_rank=first_relevant_rank(ranking, grades),
        relevant=len(relevant),
        retrieved=len(ranks),
        relevant_ranks={t: ranks.get(t) for t in relevant},
    )


def mean_scores(scores: Iterable[QueryScores]) -> dict[str, float | int | None]:
    """Means over the queries that have a defined score; ``queries`` counts those."""
    values: dict[str, list[float]] = {name: [] for name in METRIC_NAMES}
    for s in scores:
        for name in METRIC_NAMES:
            v = getattr(s, name)
            if v is not None:
                values[name].append(float(v))
    out: dict[str, float | int | None] = {
        name: (sum(v) / len(v) if v else None) for name, v in values.items()
    }
    out["queries"] = len(values["ndcg_10"])
    return out
