"""Signed checkpoints catch what the chain alone cannot (issue 31, point 8): a superuser who
edits an audited row and recomputes every later hash and the head leaves a chain that
verifies, but no longer passes through the hash a checkpoint signed outside the database."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.audit.chain import GENESIS, chain_hash, iter_retrieval_rows, verify_all
from app.audit.checkpoints import generate_key
from app.cli import main
from app.settings import get_settings
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm, cli_environment
from tests.search.test_audit_chain import _tamper, audited  # noqa: F401 (fixture)


@pytest.fixture
def cli(
    audited: Firm,  # noqa: F811
    db: DbHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Path]:
    """`ewall` pointed at the test database, its signing key in a folder of its own."""
    cli_environment(monkeypatch, db)
    monkeypatch.setenv("EWALL_AUDIT_CHECKPOINT_KEY", str(tmp_path / "keys" / "audit.key"))
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def _rewrite_history(db: DbHandle, seq: int) -> None:
    """What the guards cannot stop: edit row ``seq`` and recompute the chain and the head."""
    _tamper(db, f"UPDATE audit_retrievals SET query = 'nothing to see' WHERE seq = {seq}")
    with db.database.connect() as conn:
        rows = list(iter_retrieval_rows(conn))
    statements, prev = [], GENESIS
    for row_seq, _, _, canonical in rows:
        new = chain_hash(prev, row_seq, canonical)
        statements.append(
            f"UPDATE audit_retrievals SET prev_hash = '{prev}', hash = '{new}' "
            f"WHERE seq = {row_seq}"
        )
        prev = new
    statements.append(
        f"UPDATE audit_heads SET seq = {len(rows)}, hash = '{prev}' WHERE chain = 'retrievals'"
    )
    _tamper(db, *statements)


def test_checkpoints_catch_a_recomputed_rewrite(
    cli: Path,
    audited: Firm,  # noqa: F811
    db: DbHandle,
    capsys: pytest.CaptureFixture[str],
) -> None:
    checkpoints = cli / "checkpoints"
    # first use generates the key (0600) and exports the public key beside it
    code, written = _run(capsys, "audit", "checkpoint", "--dir", str(checkpoints))
    assert code == 0, written
    key = cli / "keys" / "audit.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert written["public_key"] == str(key) + ".pub" and Path(written["public_key"]).is_file()
    assert written["chains"]["retrievals"]["seq"] == 6
    first = Path(written["file"]).name

    # normal growth: more searches, a second checkpoint, everything extends both
    audited.search("alice@firm.nl", "octrooi nietig", k=3)
    code, second = _run(capsys, "audit", "checkpoint", "--dir", str(checkpoints))
    assert code == 0 and second["chains"]["retrievals"]["seq"] == 7
    audited.search("alice@firm.nl", "inventiviteit", k=3)
    code, report = _run(capsys, "audit", "verify", "--checkpoints", str(checkpoints))
    assert code == 0, report
    assert [c["ok"] for c in report["checkpoints"]] == [True, True]

    # a superuser rewrites row 3 and recomputes the chain: plain verify passes ...
    _rewrite_history(db, 3)
    with db.database.transaction() as conn:
        assert verify_all(conn)["ok"] is True  # the known limit of a chain on its own
    code, report = _run(capsys, "audit", "verify")
    assert code == 0 and report["ok"] is True
    # ... the checkpoints do not: both signed a hash that row 6 (and 7) no longer has
    code, report = _run(capsys, "audit", "verify", "--checkpoints", str(checkpoints))
    assert code == 1 and report["ok"] is False
    assert first in report["checkpoint_problem"]
    assert [c["ok"] for c in report["checkpoints"]] == [False, False]
    assert "retrievals: row 6" in report["checkpoints"][0]["problems"][0]
    # and no new checkpoint vouches for the rewrite: a fuzz found one signed, so that the
    # rewrite verified once the older files were rotated out
    capsys.readouterr()
    code = main(["audit", "checkpoint", "--dir", str(checkpoints)])
    refused = capsys.readouterr()
    assert code == 2 and refused.out == ""
    assert f"no longer passes through the checkpoint {first}" in refused.err
    assert len(list(checkpoints.glob("checkpoint-*.json"))) == 2
    code, report = _run(capsys, "audit", "verify", "--checkpoints", str(checkpoints))
    assert code == 1 and [c["ok"] for c in report["checkpoints"]] == [False, False]


def test_a_forged_checkpoint_fails(
    cli: Path,
    audited: Firm,  # noqa: F811
    db: DbHandle,
    capsys: pytest.CaptureFixture[str],
) -> None:
    checkpoints = cli / "checkpoints"
    code, written = _run(capsys, "audit", "checkpoint", "--dir", str(checkpoints))
    assert code == 0
    # the attacker rewrites history and then the checkpoint to match, without the key
    _rewrite_history(db, 2)
    with db.database.connect() as conn:
        rows = {seq: stored for seq, _, stored, _ in iter_retrieval_rows(conn)}
    path = Path(written["file"])
    document = json.loads(path.read_text())
    document["chains"]["retrievals"]["hash"] = rows[6]
    path.write_text(json.dumps(document))
    code, report = _run(capsys, "audit", "verify", "--checkpoints", str(checkpoints))
    assert code == 1
    assert "signature does not verify" in report["checkpoints"][0]["problems"][0]
    assert path.name in report["checkpoint_problem"]

    # a checkpoint signed with another key fails as well
    other = cli / "other"
    code, _ = _run(capsys, "audit", "keygen", "--key", str(other / "k.key"))
    assert code == 0
    code, _ = _run(
        capsys, "audit", "checkpoint", "--dir", str(other / "cp"), "--key", str(other / "k.key")
    )
    assert code == 0
    code, report = _run(capsys, "audit", "verify", "--checkpoints", str(other / "cp"))
    assert code == 1 and "signature does not verify" in report["checkpoint_problem"]
    # with its own public key it verifies (the rewrite happened before it was made)
    code, report = _run(
        capsys,
        "audit",
        "verify",
        "--checkpoints",
        str(other / "cp"),
        "--public-key",
        str(other / "k.key.pub"),
    )
    assert code == 0, report


def test_keys_are_never_replaced_and_an_empty_folder_is_no_proof(
    cli: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, made = _run(capsys, "audit", "keygen")
    assert code == 0
    before = Path(made["key"]).read_bytes()
    assert _run(capsys, "audit", "keygen")[0] == 2
    assert Path(made["key"]).read_bytes() == before
    code, report = _run(capsys, "audit", "verify", "--checkpoints", str(cli / "nothing-here"))
    assert code == 1 and "no checkpoint files" in report["checkpoint_problem"]


def test_plain_verify_reads_the_configured_checkpoints(
    cli: Path,
    audited: Firm,  # noqa: F811
    db: DbHandle,
    embedder: Any,
    auth: Tokens,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`ewall audit verify` and GET /v1/audit/verify answered ok for a rewritten and
    recomputed chain although the folder the service signs its checkpoints into proved the
    rewrite: only `--checkpoints DIR` looked there."""
    configured = cli / "configured"
    monkeypatch.setenv("EWALL_AUDIT_CHECKPOINT_DIR", str(configured))
    get_settings.cache_clear()
    code, written = _run(capsys, "audit", "checkpoint")
    assert code == 0 and Path(written["file"]).parent == configured
    code, report = _run(capsys, "audit", "verify")
    assert code == 0 and report["ok"] is True and report["checkpoints"][0]["ok"] is True
    settings = make_settings(
        audit_checkpoint_dir=configured, audit_checkpoint_key=cli / "keys" / "audit.key"
    )
    with make_client(db, settings, embedder) as client:
        co = auth("co@firm.nl", "compliance")
        assert client.get("/v1/audit/verify", headers=co).json()["ok"] is True

        _rewrite_history(db, 3)
        code, report = _run(capsys, "audit", "verify")
        assert code == 1 and report["ok"] is False
        assert "retrievals: row 6" in report["checkpoints"][0]["problems"][0]
        answer = client.get("/v1/audit/verify", headers=co)
        assert answer.status_code == 200 and answer.json()["ok"] is False
        assert written["file"].rsplit("/", 1)[-1] in answer.json()["checkpoint_problem"]

        # checkpoints whose public key is gone are no proof either way: not ok
        (cli / "keys" / "audit.key.pub").unlink()
        code, report = _run(capsys, "audit", "verify")
        assert code == 1 and "cannot be checked" in report["checkpoint_problem"]


def test_the_command_gives_a_key_its_public_key_back_and_signs_with_no_other(
    cli: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A key whose .pub went missing signed checkpoints nothing could check (verify then
    read not ok on an intact log); one beside another key's .pub, checkpoints that would
    never verify. The command now does as the service's schedule does."""
    folder = cli / "checkpoints"
    code, written = _run(capsys, "audit", "checkpoint", "--dir", str(folder))
    assert code == 0, written
    public = Path(written["public_key"])
    first = public.read_bytes()
    public.unlink()
    code, written = _run(capsys, "audit", "checkpoint", "--dir", str(folder))
    assert code == 0 and public.read_bytes() == first
    other = cli / "other" / "audit.key"
    generate_key(other)
    public.write_bytes((other.parent / "audit.key.pub").read_bytes())
    capsys.readouterr()
    code = main(["audit", "checkpoint", "--dir", str(folder)])
    assert code == 2 and "is not the public key of" in capsys.readouterr().err
    assert len(list(folder.glob("checkpoint-*.json"))) == 2
