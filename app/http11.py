"""How the service speaks HTTP/1.1: uvicorn's h11 protocol, with the error envelope on the
400 that uvicorn writes itself.

A request that h11 cannot parse (two Content-Length headers, a negative or 23-digit one, an
incomplete head past h11's 16 KiB limit, a broken request line) never reaches the app:
uvicorn answers it on its own with a plain-text 400. API clients, agents mostly, read one
error shape, so that answer carries the envelope of app/errors.py too. ``ewall serve``
passes these options to uvicorn, with one worker or several.
"""

from __future__ import annotations

import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.errors import envelope

MALFORMED_BODY = json.dumps(
    envelope("malformed_request", "The HTTP request could not be parsed.")
).encode("utf-8")


class EnvelopeH11Protocol(H11Protocol):
    """uvicorn's h11 protocol; its own 400 for an unparseable request is the envelope."""

    def send_400_response(self, msg: str) -> None:
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(MALFORMED_BODY)).encode("ascii")),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=MALFORMED_BODY),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


def uvicorn_options() -> dict[str, Any]:
    """What ``ewall serve`` hands uvicorn besides the app, the address and the workers."""
    # no websocket support: the API has no websocket route, and uvicorn answers an upgrade
    # itself (an empty 400 or 403) when a websocket library happens to be installed
    return {"http": EnvelopeH11Protocol, "ws": "none", "log_config": None, "access_log": False}
