"""Run an ASGI app with uvicorn in a background thread on 127.0.0.1 and a free port.

Connector tests talk real HTTP to local fakes (never beyond 127.0.0.1), so the retry, auth and
paging code runs exactly as it would against a tenant.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


class _QuietServer(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test runner owns the signals
        return None


@contextmanager
def serve(app: Any, *, startup_timeout_s: float = 10.0) -> Iterator[str]:
    """Yield the base URL (``http://127.0.0.1:<port>``) while the app is being served."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = _QuietServer(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("fake server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
