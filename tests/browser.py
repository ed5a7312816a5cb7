"""What the browser tests share: the system's Chromium and driver (nothing is downloaded),
the app served on a real port in a thread, and a headless Chromium session."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.shared_data import require

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT_S = 60


def require_chromium() -> None:
    """A skip on a developer's machine without Chromium, a failure in CI (which installs it)."""
    require(CHROMIUM.exists(), "/usr/bin/chromium (apt-get install -y chromium chromium-driver)")


def _bound_socket() -> socket.socket:
    """A socket bound to a free local port, handed to uvicorn as it is: a port looked up,
    closed and bound again later could be taken meanwhile by another xdist worker."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def served(app: Any, name: str) -> Iterator[str]:
    """The app behind uvicorn on a free local port, in a daemon thread; yields its URL."""
    import uvicorn

    sock = _bound_socket()
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@contextmanager
def chromium(
    profile: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    window: str,
    downloads: Path | None = None,
) -> Iterator[Any]:
    """A headless Chromium with its own profile folder (removed afterwards). Browser console
    messages are logged, so a style or script blocked by a page's CSP becomes visible;
    ``downloads`` lets downloads land in that folder without a prompt."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not CHROMEDRIVER.exists():
        pytest.fail(f"{CHROMEDRIVER} is missing: apt-get install -y chromium-driver")
    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must never fetch a driver
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--disable-default-apps",
        "--disable-extensions",
        f"--window-size={window}",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    if downloads is not None:
        options.add_experimental_option(
            "prefs",
            {"download.default_directory": str(downloads), "download.prompt_for_download": False},
        )
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    if downloads is not None:
        driver.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
