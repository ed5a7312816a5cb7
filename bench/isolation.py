"""Workload isolation: does one caller's work stall another's search? (It must not, beyond a
bounded factor; results in docs/isolation.md.)

The service runs in this process on a real HTTP port (uvicorn in a thread, the job worker
process or threads and the encoder as in `ewall serve`), against the embedded PostgreSQL with a
small firm and public case law. Measured, each against the idle baseline of the same run:

1. search p50/p95 idle (one client, sequential);
2. search p50/p95 while (a) three concurrent 2,000-sentence grounding calls, (b) a 1 MB
   document push (answered 202, ingested by the job worker) and (c) a connector-sized
   folder ingestion run are in progress; goal: p95 at most 2x idle; and idle again after
   each load (the load's documents grow the corpus the questions search);
3. sustained searches per second at 1, 8 and 32 concurrent clients, as a ratio to one
   client, and the audit chain verified intact afterwards.

    python -m bench.isolation [--decisions 20] [--sentences 2000] [--doc-mb 1.0]
                              [--run-docs 40] [--idle 60] [--window-s 45] [--rate-s 8]
                              [--loads a,b,c] [--variants jobs-process,process] [--repeat 1]

``--variants`` measures several configurations in one process, each round against its own
idle baseline (on a shared machine compare ratios of one run, not absolute latencies):
``jobs-process`` (the default, as `ewall serve` runs: jobs in a nice'd worker process),
``process`` (jobs in a thread of the API process), ``thread`` (bulk encoding in the API
process too); ``--repeat`` interleaves rounds of all variants to show the spread.
"""

from __future__ import annotations

import argparse
import json
import math
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvicorn
from rich.markup import escape
from rich.table import Table

from app.auth.service import issue_dev_token
from app.embeddings import Embedder
from app.ingest.pipeline import IngestPipeline
from app.jobs.supervisor import WorkerSupervisor
from app.main import create_app
from app.settings import Settings
from bench.common import (
    DEFAULT_CORPUS,
    Latency,
    Phases,
    Vocabulary,
    build_vocabulary,
    console,
    every_question_encoded,
    fmt_ms,
    fmt_ratio,
    quiet_logging,
    verdict,
    write_json,
)
from bench.ingest import rechtspraak_documents
from bench.server import bench_database, bench_server, server_config

DB_NAME = "ewall_bench_isolation"
LAWYERS = [f"lawyer{i}@firm.nl" for i in range(1, 5)]
ADMIN = "admin@firm.nl"
COMPLIANCE = "compliance@firm.nl"
QUERIES = [
    "onrechtmatige daad schadevergoeding",
    "huurachterstand ontruiming bedrijfsruimte",
    "ontslag op staande voet dringende reden",
    "inventiviteit octrooi stand van de techniek",
    "aansprakelijkheid werkgever zorgplicht",
    "hoger beroep termijn niet-ontvankelijk",
    "wanprestatie ingebrekestelling verzuim",
    "bestuursrecht besluit bezwaar belanghebbende",
]
GOAL = 2.0


# --- the service ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Service:
    """uvicorn in a thread, stopped on exit."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="bench-uvicorn", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Service:
        self.thread.start()
        deadline = time.monotonic() + 300
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the service did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


class Api:
    def __init__(self, url: str, settings: Settings) -> None:
        self.url = url
        self.settings = settings
        self._tokens: dict[tuple[str, str], str] = {}

    def headers(self, person: str, role: str = "lawyer") -> dict[str, str]:
        key = (person, role)
        if key not in self._tokens:
            self._tokens[key] = issue_dev_token(self.settings, person, [role], ttl_s=6 * 3600)
        return {"Authorization": f"Bearer {self._tokens[key]}"}

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=600)


def ok(response: httpx.Response, *status: int) -> Any:
    if response.status_code not in (status or (200,)):
        raise RuntimeError(f"{response.request.url}: {response.status_code} {response.text[:300]}")
    return response.json()


# --- data -----------------------------------------------------------------------------------


def make_firm(api: Api) -> None:
    admin = api.headers(ADMIN, "admin")
    with api.client() as http:
        for person in [*LAWYERS, ADMIN]:
            body = {"name": person.split("@")[0], "active": True, "aliases": []}
            ok(http.put(f"/v1/people/{person}", json=body, headers=admin))
        ok(
            http.put(
                "/v1/clients/C-1", json={"name": "Acme B.V.", "parent_id": None}, headers=admin
            )
        )
        matter = {"client_id": "C-1", "title": "Acme huur", "team": LAWYERS, "parties": []}
        ok(http.put("/v1/matters/M-1", json=matter, headers=admin))


def sentences_of(vocab: Vocabulary, n: int, words: int, seed: int) -> list[str]:
    """Dutch-looking sentences of ``words`` words drawn from the corpus vocabulary."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        text = " ".join(str(vocab.words[int(i)]) for i in vocab.sample_ids(rng, words))
        out.append(text[:1].upper() + text[1:] + ".")
    return out


# --- measuring searches -----------------------------------------------------------------------


@dataclass
class Sample:
    seconds: list[float]
    errors: int

    @property
    def latency(self) -> Latency:
        return Latency.of(self.seconds)


def search_once(http: httpx.Client, api: Api, person: str, query: str) -> float:
    started = time.perf_counter()
    response = http.post("/v1/search", json={"query": query, "k": 10}, headers=api.headers(person))
    elapsed = time.perf_counter() - started
    ok(response)
    return elapsed


def searches_while(
    api: Api, busy: Callable[[], bool], *, minimum: int, window_s: float, label: str
) -> Sample:
    """Sequential searches of one person (not one of the loaders) while ``busy()``."""
    seconds: list[float] = []
    errors = 0
    started = time.monotonic()
    with api.client() as http:
        i = 0
        while (busy() or len(seconds) < minimum) and time.monotonic() - started < window_s:
            try:
                seconds.append(search_once(http, api, LAWYERS[3], QUERIES[i % len(QUERIES)]))
            except Exception:
                errors += 1
            i += 1
            if i % 10 == 0:
                console.print(f"  [dim]{label}: {len(seconds)} searches[/]")
    return Sample(seconds, errors)


def sustained_rate(api: Api, clients: int, seconds: float) -> tuple[float, int, int]:
    """Searches per second of ``clients`` closed-loop clients over ``seconds``."""
    stop = time.monotonic() + seconds
    counts = [0] * clients
    errors = [0] * clients

    def client(n: int) -> None:
        with api.client() as http:
            i = n
            while time.monotonic() < stop:
                person = LAWYERS[n % 3]
                try:
                    search_once(http, api, person, QUERIES[i % len(QUERIES)])
                    counts[n] += 1
                except Exception:
                    errors[n] += 1
                i += 1

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return sum(counts) / elapsed, sum(counts), sum(errors)


# --- the loads ------------------------------------------------------------------------------


class Background:
    """A load running in threads; ``busy`` while any of them runs."""

    def __init__(self, name: str, work: Sequence[Callable[[], Any]]) -> None:
        self.name = name
        self.results: list[Any] = []
        self.errors: list[str] = []
        self.threads = [threading.Thread(target=self._wrap(w)) for w in work]

    def _wrap(self, work: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            try:
                self.results.append(work())
            except Exception as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")

        return run

    def start(self) -> Background:
        for thread in self.threads:
            thread.start()
        return self

    def busy(self) -> bool:
        return any(t.is_alive() for t in self.threads)

    def join(self) -> None:
        for thread in self.threads:
            thread.join()


def grounding_load(api: Api, sentences: str) -> Background:
    retrievals = []
    with api.client() as http:
        for person in LAWYERS[:3]:
            body = ok(
                http.post(
                    "/v1/search", json={"query": QUERIES[0], "k": 10}, headers=api.headers(person)
                )
            )
            retrievals.append((person, body["retrieval_id"]))

    def call(person: str, rid: str) -> Callable[[], Any]:
        def run() -> Any:
            with api.client() as http:
                return ok(
                    http.post(
                        "/v1/gates/grounding",
                        json={"retrieval_id": rid, "answer": sentences},
                        headers=api.headers(person),
                    )
                )

        return run

    return Background("grounding", [call(p, r) for p, r in retrievals])


def wait_for_run(api: Api, run_id: str) -> dict[str, Any]:
    with api.client() as http:
        while True:
            report = ok(http.get(f"/v1/ingest/runs/{run_id}", headers=api.headers(ADMIN, "admin")))
            if report["status"] != "running":
                return dict(report)
            time.sleep(0.5)


def folder_load(api: Api, folder: Path) -> Background:
    def run() -> Any:
        with api.client() as http:
            started = ok(
                http.post(
                    "/v1/ingest/runs",
                    json={"connector": "folder", "path": str(folder)},
                    headers=api.headers(ADMIN, "admin"),
                ),
                202,
            )
        return wait_for_run(api, started["run_id"])

    return Background("connector run", [run])


def export_folder(
    root: Path, paragraphs: list[str], docs: int, per_doc: int = 6, prefix: str = "EXP"
) -> Path:
    """An export folder of ``docs`` memo-sized documents (``per_doc`` paragraphs each)."""
    (root / "docs").mkdir(parents=True)
    rows = []
    for i in range(docs):
        body = "\n\n".join(paragraphs[(i * per_doc + j) % len(paragraphs)] for j in range(per_doc))
        (root / "docs" / f"d{i:04d}.txt").write_text(f"Memo {i}.\n\n{body}", encoding="utf-8")
        rows.append(
            {
                "external_id": f"{prefix}-{i:04d}",
                "path": f"docs/d{i:04d}.txt",
                "client_id": "C-1",
                "matter_id": "M-1",
                "doc_type": "memo",
            }
        )
    (root / "metadata.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return root


# --- variants -------------------------------------------------------------------------------

# Configurations one run can compare (each against its own idle baseline, measured in the
# same process right before its loads). "jobs-process" is the default of `ewall serve`: bulk
# encoding in a nice'd child process, background jobs in a supervised worker process
# (EWALL_JOB_PROCESS); "process" runs the jobs in a thread of the API process (Run 6's
# configuration), "thread" also encodes bulk batches in the API process (Runs 1-4).
VARIANTS: dict[str, dict[str, Any]] = {
    "jobs-process": {"job_process": True},
    "jobs-process-nice19": {"job_process": True, "job_process_nice": 19},
    "jobs-process-nice0": {"job_process": True, "job_process_nice": 0},
    "jobs-process-db-nice": {"job_process": True, "job_process_db_nice": True},
    # documents give way to searches (app/jobs/pacing.py): off, and at a tenth of the time
    "jobs-process-no-pacing": {"job_process": True, "job_search_duty": 1.0},
    "jobs-process-duty10": {"job_process": True, "job_search_duty": 0.1},
    "process": {"job_process": False},
    "thread": {"embedding_bulk_process": False, "job_process": False},
    "process-2threads": {"embedding_bulk_threads": 0, "job_process": False},
    "process-nice0": {"embedding_bulk_nice": 0, "job_process": False},
}


def document_load(api: Api, text: str, external_id: str) -> Background:
    def run() -> Any:
        body = {
            "source": "api",
            "external_id": external_id,
            "client_id": "C-1",
            "matter_id": "M-1",
            "doc_type": "memo",
            "title": "Groot memo",
            "text": text,
        }
        with api.client() as http:
            queued = ok(
                http.post("/v1/documents", json=body, headers=api.headers(ADMIN, "admin")), 200, 202
            )
        if "run_id" not in queued or "chunks" in queued:
            return queued
        return wait_for_run(api, queued["run_id"])

    return Background("document", [run])


def wait_for_job_process(app: Any, variant: str, phases: Phases) -> None:
    """The worker process loads its model first, as a serving one would have long before."""
    jobs = app.state.resources.jobs
    if isinstance(jobs, WorkerSupervisor):
        with phases(f"start the job worker process ({variant})"):
            if not jobs.wait_ready(600):
                raise RuntimeError("the job worker process did not start")


@dataclass
class Round:
    variant: str
    idle: Sample
    loads: dict[str, Sample]
    outcomes: dict[str, Any]
    rates: dict[int, tuple[float, int, int]]


def measure_round(
    args: argparse.Namespace,
    api: Api,
    vocab: Vocabulary,
    folder_root: Path,
    variant: str,
    round_no: int,
    phases: Phases,
    *,
    with_rates: bool,
) -> Round:
    """Idle searches, then each load, on fresh text (nothing is reused between rounds, so
    every document is encoded and written again)."""
    seed = args.seed + 100 * round_no
    paragraphs = sentences_of(vocab, 2000, 90, seed)
    big = "\n\n".join(paragraphs)
    while len(big) < args.doc_mb * 1_000_000:
        big += "\n\n" + big
    big = big[: int(args.doc_mb * 1_000_000)]
    sentences = " ".join(sentences_of(vocab, args.sentences, 8, seed + 1))
    memo_text = sentences_of(vocab, args.run_docs * 6, 90, seed + 2)
    folder = export_folder(
        folder_root / f"export-{round_no}", memo_text, args.run_docs, prefix=f"EXP{round_no}"
    )
    tag = escape(f"[{variant} #{round_no}]")  # printed with rich markup
    with phases(f"{tag} warm up"), api.client() as http:
        for q in QUERIES:
            search_once(http, api, LAWYERS[3], q)
    with phases(f"{tag} idle: {args.idle} searches"):
        idle = searches_while(api, lambda: False, minimum=args.idle, window_s=600, label="idle")
    loads: dict[str, Sample] = {}
    outcomes: dict[str, Any] = {}
    scenarios: dict[str, tuple[str, Callable[[], Background]]] = {
        "a": (
            f"(a) 3 x {args.sentences}-sentence grounding",
            lambda: grounding_load(api, sentences),
        ),
        "b": (
            f"(b) {args.doc_mb:g} MB document push",
            lambda: document_load(api, big, f"BIG-{round_no}"),
        ),
        "c": (f"(c) folder run, {args.run_docs} documents", lambda: folder_load(api, folder)),
    }
    for key in args.loads:
        label, make = scenarios[key]
        with phases(f"{tag} {label}"):
            load_started = time.perf_counter()
            load = make().start()
            time.sleep(0.5)  # let it reach the encoder
            loads[label] = searches_while(
                api, load.busy, minimum=args.min, window_s=args.window_s, label=label
            )
            still = load.busy()
            load.join()
            outcomes[label] = {
                "seconds": round(time.perf_counter() - load_started, 1),
                "errors": load.errors,
                "finished_while_measured": not still,
                "results": [_summary(r) for r in load.results],
            }
        # the load added documents that the questions match: idle again on the grown corpus,
        # so that contention and growth can be told apart
        with phases(f"{tag} idle after {label}"):
            after = searches_while(
                api, lambda: False, minimum=args.idle, window_s=600, label="idle after"
            )
            outcomes[label]["idle_after"] = after.latency.as_dict()
    rates: dict[int, tuple[float, int, int]] = {}
    if with_rates and args.rate_s > 0:
        for clients in (1, 8, 32):
            with phases(f"{tag} sustained searches, {clients} clients"):
                rates[clients] = sustained_rate(api, clients, args.rate_s)
    return Round(variant, idle, loads, outcomes, rates)


# --- main ------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.isolation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--decisions", type=int, default=20, help="public decisions loaded")
    parser.add_argument("--sentences", type=int, default=2000, help="per grounding call")
    parser.add_argument("--doc-mb", type=float, default=1.0, help="size of the pushed document")
    parser.add_argument("--run-docs", type=int, default=40, help="documents in the folder run")
    parser.add_argument("--idle", type=int, default=60, help="idle searches (baseline)")
    parser.add_argument("--min", type=int, default=30, help="searches at least per load")
    parser.add_argument(
        "--window-s",
        type=float,
        default=45.0,
        help="at most this long measured per load (the load then finishes unmeasured)",
    )
    parser.add_argument(
        "--rate-s", type=float, default=8.0, help="seconds per client count (0: skip)"
    )
    parser.add_argument(
        "--loads",
        type=lambda v: [x for x in v.split(",") if x],
        default=["a", "b", "c"],
        help="which loads, of a (grounding), b (document push), c (folder run)",
    )
    parser.add_argument(
        "--variants",
        type=lambda v: [x for x in v.split(",") if x],
        default=["jobs-process"],
        help=f"configurations, measured in turn in this process: {', '.join(VARIANTS)}",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of all variants (interleaved)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--json", dest="json_path", type=Path, default=None)
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS] + [
        x for x in args.loads if x not in ("a", "b", "c")
    ]
    if unknown:
        parser.error(f"unknown variants or loads: {unknown}")
    quiet_logging()
    phases = Phases()
    corpus = args.corpus if args.corpus.is_dir() else None
    base = Settings(
        database_url=None,
        log_json=False,
        retag_worker=False,
        job_workers=1,
        pool_size=16,
        pool_max_overflow=24,
        # the sustained-rate load runs up to 32 closed-loop clients as 3 people: what it
        # measures is throughput, not the per-person bound (8 in flight by default)
        search_max_concurrent_per_person=32,
    )
    results: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    embedders: dict[str, Embedder] = {}
    for variant in args.variants:
        with phases(f"load the embedding model ({variant})"):
            embedder = Embedder(base.model_copy(update=VARIANTS[variant]))
            # start the bulk process now, as a serving process would have long before
            embedder.embed_passages(["warm up"])
            embedders[variant] = embedder
    rounds: list[Round] = []
    reports: list[dict[str, Any]] = []
    with (
        bench_server(data_dir=None, keep=False, config=server_config("256MB")) as server,
        bench_database(server, base, DB_NAME, signature=None, keep=False, pool_size=16) as bdb,
        tempfile.TemporaryDirectory() as tmp,
    ):
        vocab = build_vocabulary(corpus, 20_000, 1.0, args.seed)
        first = embedders[args.variants[0]]
        with phases(f"firm and {args.decisions} public decisions"):
            app = create_app(base, bdb.database, embedder=first, start_worker=False)
            with Service(app) as service:
                make_firm(Api(service.url, base))
            pipeline = IngestPipeline(bdb.database, first, base)
            run = pipeline.start_run("bench", {}, "bench")
            docs = rechtspraak_documents(corpus, args.decisions) if corpus else []
            for doc in docs:
                pipeline.ingest(run, doc, public=True)
            pipeline.finish_run(run)
        round_no = 0
        for repeat in range(args.repeat):
            for variant in args.variants:
                settings = base.model_copy(update=VARIANTS[variant])
                app = every_question_encoded(
                    create_app(
                        settings,
                        bdb.database,
                        embedder=embedders[variant],
                        start_worker=False,
                        job_process=settings.job_process,
                    )
                )
                with Service(app) as service:
                    api = Api(service.url, settings)
                    wait_for_job_process(app, variant, phases)
                    done = measure_round(
                        args,
                        api,
                        vocab,
                        Path(tmp),
                        variant,
                        round_no,
                        phases,
                        with_rates=repeat == 0,
                    )
                rounds.append(done)
                # printed as each round ends: a long run shows its figures as it goes
                reports.append(
                    {
                        "variant": variant,
                        **report(done.idle, done.loads, done.outcomes, done.rates, variant),
                    }
                )
                round_no += 1
        app = create_app(base, bdb.database, embedder=first, start_worker=False)
        with Service(app) as service:
            api = Api(service.url, base)
            with api.client() as http:
                audit = ok(
                    http.get("/v1/audit/verify", headers=api.headers(COMPLIANCE, "compliance"))
                )
    for embedder in embedders.values():
        embedder.close()
    results["rounds"] = reports
    results["summary"] = summary(rounds)
    console.print(f"audit chain after the run: {audit}")
    results["audit"] = audit
    results["phases_s"] = {k: round(v, 2) for k, v in phases.seconds.items()}
    write_json(args.json_path, results)
    return 0


def summary(rounds: list[Round]) -> dict[str, Any]:
    """p95 / idle p95 of every load, per round: the spread between rounds and variants."""
    labels = list(dict.fromkeys(label for r in rounds for label in r.loads))
    table = Table(title="p95 / idle p95 (p50 / idle p50) per round, against its own idle")
    table.add_column("round")
    table.add_column("variant")
    table.add_column("idle p95 ms")
    for label in labels:
        table.add_column(label)
    out: list[dict[str, Any]] = []
    for n, r in enumerate(rounds):
        base = r.idle.latency
        ratios = {
            label: (r.loads[label].latency.p95_ms / base.p95_ms if base.p95_ms else math.nan)
            for label in labels
            if label in r.loads
        }
        medians = {
            label: (r.loads[label].latency.p50_ms / base.p50_ms if base.p50_ms else math.nan)
            for label in labels
            if label in r.loads
        }
        table.add_row(
            str(n),
            r.variant,
            fmt_ms(base.p95_ms),
            *[
                f"{ratios[label]:.2f}x {verdict(ratios[label] <= GOAL)} (p50 {medians[label]:.2f}x)"
                if label in ratios
                else "-"
                for label in labels
            ],
        )
        out.append(
            {
                "variant": r.variant,
                "idle_p95_ms": round(base.p95_ms, 1),
                "p95_ratio": {k: round(v, 2) for k, v in ratios.items()},
                "p50_ratio": {k: round(v, 2) for k, v in medians.items()},
            }
        )
    console.print(table)
    return {"rounds": out}


def _summary(result: Any) -> Any:
    if not isinstance(result, dict):
        return result
    if "sentences" in result:
        return {"sentences": len(result["sentences"]), "ok": result["ok"]}
    if "counts" in result:
        return {"status": result["status"], "counts": result["counts"], "job": result.get("job")}
    return result


def report(
    idle: Sample,
    loads: dict[str, Sample],
    outcomes: dict[str, Any],
    rates: dict[int, tuple[float, int, int]],
    variant: str,
) -> dict[str, Any]:
    base = idle.latency
    table = Table(title=f"search latency under load, {variant} (one client, sequential)")
    for column in (
        "load",
        "n",
        "p50 ms",
        "p95 ms",
        "p95 / idle p95",
        f"goal <= {GOAL:g}x",
        "errors",
        "load finished in window",
        "load took s",
        "p95 / idle after",
    ):
        table.add_column(column)
    table.add_row(
        "idle",
        str(base.n),
        fmt_ms(base.p50_ms),
        fmt_ms(base.p95_ms),
        "1.00x",
        "",
        str(idle.errors),
        "",
        "",
        "",
    )
    out: dict[str, Any] = {"idle": base.as_dict(), "loads": {}}
    for label, sample in loads.items():
        lat = sample.latency
        ratio = lat.p95_ms / base.p95_ms if base.p95_ms else float("nan")
        table.add_row(
            label,
            str(lat.n),
            fmt_ms(lat.p50_ms),
            fmt_ms(lat.p95_ms),
            fmt_ratio(lat.p95_ms, base.p95_ms),
            verdict(ratio <= GOAL),
            str(sample.errors),
            str(outcomes[label]["finished_while_measured"]),
            f"{outcomes[label]['seconds']:.1f}",
            fmt_ratio(lat.p95_ms, outcomes[label]["idle_after"]["p95_ms"]),
        )
        out["loads"][label] = {
            **lat.as_dict(),
            "p95_ratio": round(ratio, 2),
            "errors": sample.errors,
            **outcomes[label],
        }
    console.print(table)
    for label, outcome in outcomes.items():
        console.print(f"  {label}: {outcome['results']} {outcome['errors'] or ''}")
    if not rates:
        return out
    rate_table = Table(title=f"sustained searches per second, {variant}")
    for column in ("clients", "searches", "per second", "ratio to 1 client", "errors"):
        rate_table.add_column(column)
    single = rates[1][0]
    for clients, (rate, count, errors) in rates.items():
        rate_table.add_row(
            str(clients), str(count), f"{rate:.1f}", fmt_ratio(rate, single), str(errors)
        )
    console.print(rate_table)
    out["rates"] = {
        str(c): {
            "per_s": round(r, 2),
            "searches": n,
            "errors": e,
            "ratio": round(r / single, 2) if single else None,
        }
        for c, (r, n, e) in rates.items()
    }
    return out


if __name__ == "__main__":
    raise SystemExit(main())
