"""FastAPI dependencies as Annotated aliases. Resources come from the lifespan state."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated

import anyio
from fastapi import Depends, Request
from sqlalchemy import Connection

from app.auth.service import Principal, bearer_principal
from app.errors import Forbidden
from app.resources import Resources


def get_resources(request: Request) -> Resources:
    resources: Resources = request.app.state.resources
    return resources


ResourcesDep = Annotated[Resources, Depends(get_resources)]


def get_principal(request: Request, resources: ResourcesDep) -> Principal:
    # The request guard (app/guard.py) authenticated the request before its body was read.
    checked = getattr(request.state, "principal", None)
    if isinstance(checked, Principal):
        return checked
    principal = bearer_principal(request.headers.get("authorization", ""), resources.verifier)
    request.state.person_id = principal.person_id
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def require_roles(*roles: str) -> Callable[[Principal], Principal]:
    allowed = ", ".join(roles)

    def _check(principal: PrincipalDep) -> Principal:
        if not principal.has_any(*roles):
            raise Forbidden(f"This needs one of the roles: {allowed}.")
        return principal

    return _check


def _transaction(resources: ResourcesDep) -> Iterator[Connection]:
    """The request owns the transaction: commit when the route returns, roll back on error.

    scope="function" commits BEFORE the response is sent, so a client never receives results
    whose audit row failed to commit.
    """
    with resources.database.transaction() as conn:
        yield conn


ConnDep = Annotated[Connection, Depends(_transaction, scope="function")]

Lawyer = Annotated[Principal, Depends(require_roles("lawyer"))]
Conflicts = Annotated[Principal, Depends(require_roles("conflicts"))]
ConflictsOrAdmin = Annotated[Principal, Depends(require_roles("conflicts", "admin"))]
WallReader = Annotated[Principal, Depends(require_roles("conflicts", "compliance"))]
Compliance = Annotated[Principal, Depends(require_roles("compliance"))]
Admin = Annotated[Principal, Depends(require_roles("admin"))]


class Lane:
    """Turns for work that holds a request thread for seconds, often with a pooled
    connection. FastAPI runs a route in the thread pool that searches run in too (40
    threads): fifty document pushes took every thread, and a search waited 45 s for the
    first push to end. A call of such a route waits for its turn on the event loop, holding
    neither a thread nor a connection, so a search always finds both; one lane per app,
    created on first use inside the app's event loop."""

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size

    async def __call__(self, request: Request) -> AsyncIterator[None]:
        lanes: dict[str, anyio.CapacityLimiter] | None = getattr(request.app.state, "lanes", None)
        if lanes is None:
            lanes = request.app.state.lanes = {}
        lane = lanes.get(self.name)
        if lane is None:
            lane = lanes[self.name] = anyio.CapacityLimiter(self.size)
        async with lane:
            yield


# Encoding a pushed document, a wall preview, verifying the audit chain, judging an answer's
# sentences: CPU work, one at a time per core (the GIL's holders slow every other thread).
CPU_LANE = Lane("cpu", max(2, os.cpu_count() or 2))
# Waiting on the citation source: no CPU, but a thread each (the source may be slow).
NETWORK_LANE = Lane("network", 8)
CpuTurn = Annotated[None, Depends(CPU_LANE, scope="function")]
NetworkTurn = Annotated[None, Depends(NETWORK_LANE, scope="function")]
