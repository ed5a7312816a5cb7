"""End-to-end evaluation over the real search path: exact numbers on a tiny hand-made set,
walls of the evaluated person, audit rows, saved runs, comparisons, calibration, the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.cli import build_parser
from app.evaluation import repository, runner, sets
from app.evaluation.repository import Judgement, QueryIn
from app.resources import Resources
from tests.conftest import DbHandle, Tokens, make_settings
from tests.helpers import Firm, retag

PERSON = "rater@firm.nl"
OUTSIDER = "outsider@firm.nl"
FILLER = [
    "De werkgever is aansprakelijk voor het arbeidsongeval in de fabriekshal.",
    "Het octrooi op de uitvinding mist inventiviteit ten opzichte van de stand der techniek.",
    "De merkhouder stelt verwarringsgevaar bij het publiek aan de orde.",
    "Het bestuursorgaan heeft het bezwaar tegen het besluit ongegrond verklaard.",
    "De verhuurder vordert de huurachterstand met wettelijke rente.",
    "De koper beroept zich op dwaling bij de koop van de woning.",
]


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    f = Firm(client, auth)
    for p in (PERSON, OUTSIDER):
        f.person(p)
    f.client_("C-1", "Bouwbedrijf B.V.")
    f.matter("M-1", "C-1")
    f.matter("M-2", "C-1")
    f.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=[OUTSIDER])
    # one chunk each; every query word below occurs in exactly one document
    f.document(
        "eval-a",
        "De zwaluwstaartverbinding van het houten kozijn is ondeugdelijk.",
        client_id="C-1",
        matter_id="M-2",
    )
    f.document(
        "eval-b",
        "Het kozijn lekt bij zware regen langs de aansluiting.",
        client_id="C-1",
        matter_id="M-1",
    )
    f.document(
        "eval-c",
        "De gemeente herziet de erfpachtcanon na tien jaar.",
        client_id="C-1",
        matter_id="M-1",
    )
    f.document(
        "eval-d",
        "De pachter vordert ontbinding van de pachtovereenkomst.",
        client_id="C-1",
        matter_id="M-1",
    )
    for i, body in enumerate(FILLER):
        f.document(f"filler-{i}", body, client_id="C-1", matter_id="M-1")
    retag(client)
    return f


def _chunk_of(db: DbHandle, external_id: str) -> str:
    with db.database.transaction() as conn:
        conn.execute(text("SET LOCAL ROLE ewall_writer"))
        return str(
            conn.execute(
                text("SELECT chunk_id FROM chunks WHERE external_id = :e"), {"e": external_id}
            ).scalar_one()
        )


def _make_set(db: DbHandle, name: str = "tiny") -> None:
    d_chunk = _chunk_of(db, "eval-d")
    queries = [
        QueryIn(
            "q1",
            "zwaluwstaartverbinding",
            None,
            [
                Judgement("q1", "document", "api:eval-a", 3, "ann"),
                Judgement("q1", "document", "api:eval-b", 2, "ann"),
            ],
        ),
        QueryIn(
            "q2",
            "pachtovereenkomst ontbinding",
            None,
            [
                Judgement("q2", "document", "api:eval-c", 2, "ann"),
            ],
        ),
        QueryIn("q3", "pachter", None, [Judgement("q3", "chunk", d_chunk, 3, "ann")]),
        QueryIn("q4", "erfpachtcanon", None, [Judgement("q4", "document", "api:eval-c", 0, "ann")]),
    ]
    with db.database.transaction() as conn:
        sets.import_queries(conn, name, "hand-made", "tester", queries)


def _resources(client: TestClient) -> Resources:
    resources: Resources = client.app.state.resources  # type: ignore[attr-defined]
    return resources


# The sparse ranking of each query, worked out from the documents above:
#   q1 -> [eval-a]   relevant a (3), b (2): DCG 3/1, ideal 3/1 + 2/log2(3)
#   q2 -> [eval-d]   relevant c (2) not found: 0
#   q3 -> [d chunk]  the judged chunk at rank 1: 1
#   q4 -> only a grade-0 judgement: no score, left out of the means
Q1_NDCG = 3 / (3 + 2 / math.log2(3))


def test_eval_numbers_are_exactly_the_formulas(
    firm: Firm, client: TestClient, db: DbHandle
) -> None:
    _make_set(db)
    report = runner.run_eval(_resources(client), "tiny", modes=["sparse"], person=PERSON)
    per = {q.key: q for q in report.modes["sparse"].queries}
    assert per["q1"].level == "document" and per["q3"].level == "chunk"
    assert per["q1"].top == ["api:eval-a"]
    assert per["q1"].scores.ndcg_10 == pytest.approx(Q1_NDCG)
    assert (per["q1"].scores.recall_10, per["q1"].scores.recall_50, per["q1"].scores.mrr) == (
        0.5,
        0.5,
        1.0,
    )
    assert (per["q2"].scores.ndcg_10, per["q2"].scores.recall_10, per["q2"].scores.mrr) == (
        0.0,
        0.0,
        0.0,
    )
    assert per["q3"].scores.ndcg_10 == pytest.approx(1.0)
    assert (per["q3"].scores.recall_50, per["q3"].scores.mrr) == (1.0, 1.0)
    assert per["q4"].scores.ndcg_10 is None
    means = report.modes["sparse"].metrics
    assert means["queries"] == 3
    assert means["ndcg_10"] == pytest.approx((Q1_NDCG + 0 + 1) / 3)
    assert means["recall_10"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert means["recall_50"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert means["mrr"] == pytest.approx((1 + 0 + 1) / 3)

    # every evaluation search is an ordinary audited retrieval, labelled as such
    with db.database.transaction() as conn:
        rows = conn.execute(
            text(
                "SELECT person_id, purpose, mode, model, prompt_version FROM audit_retrievals "
                "WHERE retrieval_id = ANY(CAST(:ids AS uuid[]))"
            ),
            {"ids": [q.retrieval_id for q in per.values()]},
        ).all()
    assert len(rows) == 4
    assert {tuple(r) for r in rows} == {(PERSON, "evaluation", "sparse", "ewall-eval", "set:tiny")}


def test_walls_of_the_evaluated_person_apply(firm: Firm, client: TestClient, db: DbHandle) -> None:
    _make_set(db)
    resources = _resources(client)
    report = runner.run_eval(resources, "tiny", modes=["sparse", "hybrid"], person=OUTSIDER)
    for mode in ("sparse", "hybrid"):
        per = {q.key: q for q in report.modes[mode].queries}
        # eval-a is behind the wall: never in a ranking, left out of the ideal, counted
        assert all("api:eval-a" not in q.top for q in per.values())
        assert per["q1"].unavailable == 1
        assert per["q1"].scores.relevant == 1  # only eval-b remains
    # keep_unavailable scores the walled document as a miss instead
    kept = runner.run_eval(
        resources, "tiny", modes=["sparse"], person=OUTSIDER, keep_unavailable=True
    )
    q1 = next(q for q in kept.modes["sparse"].queries if q.key == "q1")
    assert q1.unavailable == 0 and q1.scores.relevant == 2 and q1.scores.recall_50 == 0.0
    # the default person is unknown to the matrix and sees only the open group: matters
    # without a wall, not the walled M-2
    default = runner.run_eval(resources, "tiny", modes=["sparse"])
    assert default.persons == [runner.DEFAULT_PERSON]
    per = {q.key: q for q in default.modes["sparse"].queries}
    assert per["q1"].unavailable == 1 and per["q1"].top == []
    assert per["q3"].scores.mrr == 1.0


def test_saved_runs_compare_and_calibration_changes_nothing(
    firm: Firm, client: TestClient, db: DbHandle, tmp_path: Path
) -> None:
    _make_set(db)
    resources = _resources(client)
    sparse = runner.run_eval(resources, "tiny", modes=["sparse", "dense"], person=PERSON, save=True)
    assert sparse.run_id is not None
    saved = runner.load_run(resources.database, sparse.run_id)
    assert saved["metrics"]["sparse"]["ndcg_10"] == pytest.approx((Q1_NDCG + 1) / 3)
    # a JSON file from `ewall eval --json` compares against the saved run
    other = sparse.as_dict()
    q2 = next(q for q in other["per_query"]["sparse"] if q["key"] == "q2")
    q2["scores"]["ndcg_10"] = 0.5
    path = tmp_path / "b.json"
    path.write_text(json.dumps(other), encoding="utf-8")
    comp = runner.compare_runs(saved, runner.load_run(None, str(path)))
    by_mode = {c.mode: c.as_dict() for c in comp}
    assert set(by_mode) == {"dense", "sparse"}
    assert (by_mode["sparse"]["wins"], by_mode["sparse"]["losses"], by_mode["sparse"]["ties"]) == (
        1,
        0,
        2,
    )
    assert by_mode["sparse"]["queries"][0]["key"] == "q2"
    with pytest.raises(ValueError, match="not in both runs"):
        runner.compare_runs(saved, saved, modes=["hybrid"])
    with pytest.raises(ValueError, match="neither a file nor a run id"):
        runner.load_run(resources.database, "nonsense")

    before = resources.settings.model_dump()
    cal = runner.calibrate(resources, "tiny", person=PERSON, dense_weights=(0.0, 1.0), depths=(50,))
    assert resources.settings.model_dump() == before
    data = cal.as_dict()
    assert len(data["grid"]) == 2 and set(data["single_legs"]) == {"dense", "sparse"}
    assert data["current"]["current"] is True
    assert {p["rrf_k"] for p in data["grid"]} == {resources.settings.rrf_k}
    best = data["best"]["metrics"]["ndcg_10"]
    assert all(best >= p["metrics"]["ndcg_10"] for p in data["grid"])
    assert data["suggested_environment"][0].startswith("EWALL_DENSE_WEIGHT=")
    assert f"EWALL_RRF_K={data['best']['rrf_k']}" in data["suggested_environment"]
    # the fusion constant is a third axis of the grid
    grid = runner.calibrate(
        resources, "tiny", person=PERSON, dense_weights=(1.0,), depths=(50,), rrf_constants=(1, 60)
    ).as_dict()["grid"]
    assert [(p["dense_weight"], p["rrf_k"]) for p in grid] == [(1.0, 1), (1.0, 60)]
    assert resources.settings.model_dump() == before
    with pytest.raises(ValueError, match="fusion constants"):
        runner.calibrate(resources, "tiny", rrf_constants=(0,))
    # equal metrics never move away from the current setting
    if all(p["metrics"] == data["current"]["metrics"] for p in data["grid"]):
        assert data["best_is_current"]
    tie = runner.CalibrationReport(
        "t",
        [],
        runner.GridPoint(0.0, 1.0, 100, 100, 60, {"ndcg_10": 0.5}, current=True),
        {},
        [
            runner.GridPoint(0.0, 1.0, 50, 50, 60, {"ndcg_10": 0.5}),
            runner.GridPoint(0.3, 1.0, 200, 200, 10, {"ndcg_10": 0.5}),
        ],
        0.0,
    )
    assert tie.best.current
    tie.grid.append(runner.GridPoint(0.1, 1.0, 200, 200, 60, {"ndcg_10": 0.6}))
    tie.grid.append(runner.GridPoint(0.2, 1.0, 50, 50, 60, {"ndcg_10": 0.6}))
    assert (tie.best.dense_weight, tie.best.depth) == (0.2, 50)


def test_the_fusion_constant_sets_each_hits_score(firm: Firm, client: TestClient) -> None:
    """A hit's score is the sum over the legs of weight / (constant + rank): the setting
    EWALL_RRF_K, or an evaluation's override of it."""
    from app.auth.service import Principal
    from app.search.schemas import SearchIn
    from app.search.service import SearchOverrides, embed_query, run_search

    resources = _resources(client)
    assert resources.embedder is not None
    request = SearchIn(query="pachter", k=3, mode="sparse")
    qvec = embed_query(resources.embedder, request.query)
    settings = resources.settings
    saved = settings.rrf_k
    try:
        for setting, override in ((saved, None), (saved, 7), (3, None)):
            settings.__dict__["rrf_k"] = setting
            with resources.database.transaction() as conn:
                result = run_search(
                    conn,
                    resources,
                    Principal(person_id=PERSON, roles=frozenset({"lawyer"})),
                    request,
                    qvec=qvec,
                    purpose="evaluation",
                    overrides=SearchOverrides(rrf_k=override),
                )
            # one document holds "pachter": the sparse leg's first rank, weight 1
            k = override or setting
            assert [h.score for h in result.rows] == [pytest.approx(1 / (k + 1))], (k, result)
    finally:
        settings.__dict__["rrf_k"] = saved


def _cli(argv: list[str], db: DbHandle) -> int:
    # each command loads its own encoder; its bulk lane in this process, not in a child that
    # loads the model again (about 5 s a command) to embed two queries: what this test checks
    # is the command's input and output (run_eval through the bulk child: the tests above)
    settings = make_settings(
        database_url=db.app_url,
        migrations_database_url=db.superuser_url,
        embedding_bulk_process=False,
    )
    args = build_parser().parse_args(argv)
    result: int = args.handler(args, settings)
    return result


def test_cli_imports_exports_and_evaluates(
    firm: Firm, db: DbHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "queries.tsv"
    qrels = tmp_path / "qrels.txt"
    queries.write_text(
        "q1\tzwaluwstaartverbinding\nq2\tpachtovereenkomst ontbinding\n", encoding="utf-8"
    )
    qrels.write_text("q1 0 api:eval-a 3\nq1 0 api:eval-b 2\nq2 0 api:eval-c 2\n", encoding="utf-8")
    # a temporary set: imported, evaluated, removed again
    assert (
        _cli(
            [
                "eval",
                "--queries",
                str(queries),
                "--qrels",
                str(qrels),
                "--as",
                PERSON,
                "--mode",
                "sparse",
                "--json",
            ],
            db,
        )
        == 0
    )
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert out["metrics"]["sparse"]["ndcg_10"] == pytest.approx(Q1_NDCG / 2)
    with db.database.transaction() as conn:
        assert [s.name for s in repository.list_sets(conn)] == []

    assert (
        _cli(
            ["eval", "import", "--set", "named", "--queries", str(queries), "--qrels", str(qrels)],
            db,
        )
        == 0
    )
    exported = tmp_path / "named.jsonl"
    assert _cli(["eval", "export", "--set", "named", "--jsonl", str(exported)], db) == 0
    header, back = sets.parse_jsonl(exported.read_text(encoding="utf-8"), "x")
    assert header["name"] == "named" and [q.key for q in back] == ["q1", "q2"]
    capsys.readouterr()
    assert _cli(["eval", "--set", "named", "--as", PERSON, "--mode", "sparse"], db) == 0
    table = capsys.readouterr().out
    assert "nDCG@10" in table and "q1" in table

    # bad input is a clear message and exit status 2, never a traceback
    qrels.write_text("q1 0 api:eval-a 7\n", encoding="utf-8")
    assert _cli(["eval", "--queries", str(queries), "--qrels", str(qrels)], db) == 2
    # the file, the line and what is wrong with it
    assert f"{qrels}: line 1: grade must be an integer 0-3" in capsys.readouterr().err
    assert _cli(["eval", "--set", "missing"], db) == 2
    assert "does not exist" in capsys.readouterr().err
    # judged ids that name no document: a run that measures nothing is no success
    qrels.write_text("q1 0 api:no-such-document 3\n", encoding="utf-8")
    argv = ["eval", "--queries", str(queries), "--qrels", str(qrels), "--as", PERSON]
    assert _cli([*argv, "--mode", "sparse"], db) == 1
    assert "no query was measured" in capsys.readouterr().err
