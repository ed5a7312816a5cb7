"""`ewall serve --workers 2` for real: one embedded PostgreSQL started by the parent, two API
worker processes, and console sessions that live in the database, so they survive uvicorn's
rolling restart of every worker (SIGHUP) and a sign-out ends them whichever worker answers."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from tests.helpers import assert_envelope, read_answer

ROOT = Path(__file__).resolve().parents[2]
STEP_TIMEOUT_S = 300  # a bound against a hang, never a timed assertion
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def _env(data_dir: Path) -> dict[str, str]:
    keep = {"EWALL_QUERY_ENCODER_CACHE_DIR"}  # the session's exported encoder: no new export
    env = {k: v for k, v in os.environ.items() if not k.startswith("EWALL_") or k in keep}
    # no job worker process: it would load a fourth copy of the model, and jobs are not tested
    env.update(
        EWALL_DATA_DIR=str(data_dir),
        EWALL_LOG_JSON="false",
        EWALL_JOB_WORKERS="0",
        PYTHONPATH=str(ROOT),
    )
    return env


def _wait(condition: Callable[[], bool], what: str, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while not condition():
        assert server.poll() is None, f"ewall serve exited while waiting for {what}"
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.5)


def _workers(server: subprocess.Popen[str]) -> set[int]:
    """The living API worker processes (uvicorn spawns them with multiprocessing)."""
    found = set()
    for child in psutil.Process(server.pid).children():
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "spawn_main" in " ".join(child.cmdline()):
                found.add(child.pid)
        except psutil.Error:  # ended while we looked: a retired worker
            continue
    return found


def _ready(base: str) -> bool:
    try:
        return httpx.get(f"{base}/readyz", timeout=10).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str], dict[str, str]]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = _env(tmp_path)
    server = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "app.cli", "serve", "--workers", "2", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(lambda: _ready(base) and len(_workers(server)) == 2, "two ready workers", server)
        yield base, server, env
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=STEP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_two_workers_share_console_sessions_across_a_rolling_restart(
    served: tuple[str, subprocess.Popen[str], dict[str, str]], tmp_path: Path
) -> None:
    base, server, env = served
    token = subprocess.run(
        [sys.executable, "-m", "app.cli", "token", "--sub", "carl@firm.nl", "--role", "conflicts"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with httpx.Client(base_url=base, timeout=60) as browser:
        form = browser.get("/console/signin")
        csrf = CSRF.search(form.text)
        assert csrf, form.text
        signed = browser.post("/console/signin", data={"token": token, "csrf": csrf.group(1)})
        assert signed.status_code == 303, signed.text

        before = _workers(server)
        server.send_signal(signal.SIGHUP)  # uvicorn replaces every worker, one by one
        _wait(
            lambda: len(_workers(server)) == 2 and not (_workers(server) & before),
            "every worker replaced",
            server,
        )
        _wait(lambda: _ready(base), "the new workers", server)

        page = browser.get("/console/walls")
        assert page.status_code == 200, "the session died with the worker that made it"
        csrf = CSRF.search(page.text)
        assert csrf, page.text
        out = browser.post("/console/signout", data={"csrf": csrf.group(1)})
        assert out.status_code == 303
        for _ in range(4):  # whichever worker answers, the session is over
            gone = browser.get("/console/walls")
            assert gone.status_code == 303
            assert gone.headers["location"].startswith("/console/signin")

    # a request that HTTP parsing refuses: uvicorn's own 400, with the error envelope
    port = int(base.rsplit(":", 1)[1])
    assert_envelope(read_answer(port, b"GET /v1/search HTTP/1.1\r\n\r\n"))

    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=STEP_TIMEOUT_S) == 0
    # the parent started the embedded server once and stopped it on the way out
    assert not (tmp_path / "pg" / "postmaster.pid").exists()
