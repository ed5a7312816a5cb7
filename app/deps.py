"""FastAPI dependencies as Annotated aliases. Resources come from the lifespan state."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated

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
