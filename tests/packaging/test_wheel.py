"""The wheel is a complete install: built, installed into a clean virtual environment and run
from a folder outside the repository, it migrates, loads the demo from the packaged sample
and answers a search.

The new environment gets the third-party packages of the running one through a ``.pth``
path line (so torch and the model are not installed again); a path line does not process the
editable-install hooks in that folder, so ``app``, ``sql`` and ``migrations`` come only from
the wheel, which the test checks.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.db import migrate
from tests.helpers import assert_envelope, read_answer

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "app", "connectors", "migrations", "sql")
STEP_TIMEOUT_S = 3600  # a bound against hangs, not a timing
pytestmark = pytest.mark.slow


def _run(args: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(  # noqa: S603 - our own interpreter and console script
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, check=False
    )
    assert result.returncode == 0, (
        f"{' '.join(args)} exited {result.returncode}\n{result.stdout[-3000:]}\n"
        f"{result.stderr[-6000:]}"
    )
    return result.stdout


@pytest.fixture(scope="module")
def place() -> Iterator[Path]:
    # not pytest's tmp_path: under root the embedded server runs as its own system user and
    # must reach its data folder, and pytest's base folder is private to the test user
    folder = Path(tempfile.mkdtemp(prefix="ewall-wheel-"))
    os.chmod(folder, 0o755)  # noqa: S103
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def wheel(place: Path) -> Path:
    """Built from a copy of the sources, so stale build/ folders of the checkout can't leak."""
    src = place / "src"
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(
                origin, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        else:
            src.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, src / name)
    dist = place / "dist"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "--wheel-dir",
            str(dist),
            str(src),
        ],
        cwd=place,
    )
    (built,) = dist.glob("ewall-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(place: Path, wheel: Path) -> Path:
    env_dir = place / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], cwd=place)
    python = env_dir / "bin" / "python"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        cwd=place,
    )
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=place,
        ).strip()
    )
    (site / "ewall_test_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    return env_dir


@pytest.fixture(scope="module")
def outside(place: Path) -> Path:
    work = place / "work"
    work.mkdir()
    return work


@pytest.fixture(scope="module")
def env(place: Path) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "HF_HOME")
    out = {k: v for k, v in os.environ.items() if k in keep}
    out.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        XDG_RUNTIME_DIR=tempfile.gettempdir(),
        EWALL_DATA_DIR=str(place / "data"),
        EWALL_CORPUS_DIR=str(place / "no-shared-corpus"),  # the sample shipped in the wheel
        EWALL_LOG_JSON="false",
    )
    return out


def test_the_wheel_carries_sql_migrations_and_their_configuration(wheel: Path) -> None:
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "sql/search.sql",
        "sql/audit.sql",
        "migrations/alembic.ini",
        "migrations/env.py",
        "migrations/schema.sql",
    } <= names
    revisions = {n for n in names if n.startswith("migrations/versions/") and n.endswith(".py")}
    in_repo = {f"migrations/versions/{p.name}" for p in (REPO / "migrations/versions").glob("*.py")}
    assert revisions == in_repo


def test_installed_wheel_migrates_loads_the_demo_and_searches(
    venv: Path, outside: Path, env: dict[str, str]
) -> None:
    python, ewall = str(venv / "bin" / "python"), str(venv / "bin" / "ewall")
    where = _run(
        [
            python,
            "-c",
            "import app, sql, migrations; print(app.__file__, sql.__file__, migrations.__file__)",
        ],
        cwd=outside,
        env=env,
    ).split()
    assert all(Path(p).is_relative_to(venv) for p in where), where

    migrated = _run([ewall, "migrate"], cwd=outside, env=env)
    assert f"schema at {migrate.head_revision()} (head)" in migrated

    summary = json.loads(_run([ewall, "demo", "--json"], cwd=outside, env=env))
    assert summary["case_law"]["origin"] == "package"
    assert summary["chunks"] > 0
    # the default encoder's vectors of the packaged demo ship with it: one input is encoded
    # (the check of the first one taken), none other; stale after a change of the demo data,
    # the chunking or the encoder input: `make demo-vectors`
    assert summary["vectors"]["known"] > 0 and summary["vectors"]["encoded"] == 1, summary

    token = _run(
        [ewall, "token", "--sub", "ldekker@firm.nl", "--role", "lawyer"], cwd=outside, env=env
    ).strip()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(  # noqa: S603
        [ewall, "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=outside,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while True:  # wait for readiness (a bound against a hang, not a timed assertion)
            assert server.poll() is None, (
                f"ewall serve exited: {server.stderr and server.stderr.read()[-4000:]}"
            )
            assert time.monotonic() < deadline, "ewall serve never became ready"
            try:
                if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        found = httpx.post(
            f"{base}/v1/search",
            headers={"Authorization": f"Bearer {token}"},
            json={"query": "inbreuk retard-tablet medivastine Genova", "k": 5},
            timeout=120,
        )
        assert found.status_code == 200, found.text
        results = found.json()["results"]
        assert results
        assert any(r["matter_id"] == "MEDIVERS-001" for r in results), results
        # one process, as `make run` serves: uvicorn's own 400 carries the envelope too
        assert_envelope(read_answer(port, b"GET /v1/search HTTP/1.1\r\n\r\n"))
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
