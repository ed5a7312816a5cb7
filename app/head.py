"""HEAD is GET without the body (RFC 9110, 9.3.2).

FastAPI's routes answer only the methods they declare, so a HEAD on any GET route was a 405.
This pure ASGI middleware hands a HEAD to the app as a GET and drops the body's bytes on the
way out; the headers (Content-Length and Content-Type included) are the GET's. So a HEAD
passes the same checks as its GET and has the same effects: the same token and role, the
same per-person budgets charged, the same audit rows and gate events written (a HEAD on a
rating page's results runs and audits that search; a HEAD on someone else's retrieval is a
refused read in the gates chain). Nothing a GET refuses is let through by a HEAD.

It runs inside the request guard and the request log, which see (and log) the HEAD itself.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        # a copy: the server's own scope keeps saying HEAD (uvicorn then writes no body either)
        inner = {**scope, "method": "GET"}

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.start" and "route" in inner:
                scope["route"] = inner["route"]  # for the request log and metrics outside
            elif message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app(inner, receive, headers_only)
