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
    # Accepted sockets inherit this: without it a response written in several pieces
    # meets delayed ACKs and every request costs ~40 ms.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
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


class AppSlot:
    """An ASGI app that forwards to whatever app is plugged in.

    Starting uvicorn costs ~0.2 s; with a slot, one server per test session serves a fresh
    fake (fresh state) per test.
    """

    def __init__(self) -> None:
        self.app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        app = self.app
        if app is None:
            if scope["type"] == "http":
                await send({"type": "http.response.start", "status": 503, "headers": []})
                await send({"type": "http.response.body", "body": b"no fake plugged in"})
            return
        await app(scope, receive, send)
