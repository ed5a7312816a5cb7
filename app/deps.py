"""FastAPI dependencies as Annotated aliases. Resources come from the lifespan state."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, TypeVar

import anyio
from fastapi import Depends, Request
from sqlalchemy import Connection

from app.auth.service import STAFF_ROLES, Principal, bearer_principal
from app.db.engine import Database
from app.errors import Forbidden, RateLimited
from app.matrix.repository import person_inactive
from app.resources import Resources

T = TypeVar("T")


def get_resources(request: Request) -> Resources:
    resources: Resources = request.app.state.resources
    return resources


ResourcesDep = Annotated[Resources, Depends(get_resources)]


def get_principal(request: Request, resources: ResourcesDep) -> Principal:
    # The request guard (app/guard.py) authenticated the request before its body was read.
    checked = getattr(request.state, "principal", None)
    if isinstance(checked, Principal):
        principal = checked
    else:
        principal = bearer_principal(request.headers.get("authorization", ""), resources.verifier)
        request.state.person_id = principal.person_id
    staff = principal.roles & STAFF_ROLES
    if staff:  # a lawyer's token costs no read: an inactive lawyer already sees nothing
        with resources.database.transaction() as conn:
            inactive = person_inactive(conn, principal.person_id)
        if inactive:
            request.state.lapsed_roles = staff
            return principal.without(STAFF_ROLES)
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def standing_of(principal: Principal, leeway_s: float) -> Callable[[Connection], str | None]:
    """Asked again during long work done for ``principal`` (an export's every page): None
    while the roles checked at the start still hold, else why not. Deactivated in the matrix
    since, the person keeps no staff role (``get_principal``); their token expired since, its
    roles are no longer vouched for (a role withdrawn at the identity provider ends so)."""

    def check(conn: Connection) -> str | None:
        if principal.roles & STAFF_ROLES and person_inactive(conn, principal.person_id):
            return (
                f"{principal.person_id} is inactive in the conflict matrix: the rest of the "
                "export is withheld."
            )
        exp = principal.claims.get("exp")
        if isinstance(exp, int | float) and exp + leeway_s < time.time():
            return "The token expired during the export: continue it with a new token."
        return None

    return check


def require_roles(*roles: str) -> Callable[..., Principal]:
    allowed = ", ".join(roles)

    def _check(principal: PrincipalDep, request: Request) -> Principal:
        if not principal.has_any(*roles):
            lapsed: frozenset[str] = getattr(request.state, "lapsed_roles", frozenset())
            lapsed = lapsed.intersection(roles)
            if lapsed:
                raise Forbidden(
                    f"{principal.person_id} is inactive in the conflict matrix: the role "
                    f"{', '.join(sorted(lapsed))} of the token does not apply."
                )
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


# Tries of a policy change's transaction (walls issued or lifted, matrix writes). They lock
# rows in different orders: a wall's inserts share-lock its matters and people before the
# policy row, a matrix write takes the policy row first, the re-tag worker and document
# writes lock wall groups; PostgreSQL fails one of two such transactions to break a deadlock.
POLICY_ATTEMPTS = 3


class Retried:
    """A route's whole transaction, owned by the route: ``tx(lambda conn: ...)`` runs the
    work and commits before the route returns (like ``ConnDep``); when PostgreSQL rolled it
    back to break a deadlock or on a serialization failure, it runs the work again in a
    fresh transaction that reads everything afresh (``Database.retried``), at most
    ``attempts`` times, then the error reaches the 503 ``conflict_retry`` handler. A
    rolled-back try leaves nothing: no audit row, no policy event, no hash-chain append."""

    def __init__(self, database: Database, attempts: int) -> None:
        self.database = database
        self.attempts = attempts

    def __call__(self, work: Callable[[Connection], T]) -> T:
        return self.database.retried(work, self.attempts)


def _policy_transaction(resources: ResourcesDep) -> Retried:
    return Retried(resources.database, POLICY_ATTEMPTS)


PolicyTx = Annotated[Retried, Depends(_policy_transaction)]

Lawyer = Annotated[Principal, Depends(require_roles("lawyer"))]
Conflicts = Annotated[Principal, Depends(require_roles("conflicts"))]
ConflictsOrAdmin = Annotated[Principal, Depends(require_roles("conflicts", "admin"))]
WallReader = Annotated[Principal, Depends(require_roles("conflicts", "compliance"))]
Compliance = Annotated[Principal, Depends(require_roles("compliance"))]
Admin = Annotated[Principal, Depends(require_roles("admin"))]


class Lane:
    """Turns for one kind of work that holds a request thread for seconds, often with a
    pooled connection. FastAPI runs a route in the thread pool that searches run in too (40
    threads): fifty document pushes took every thread, and a search waited 45 s for the
    first push to end. A call of such a route waits for its turn on the event loop, holding
    neither a thread nor a connection, so a search always finds both; one lane per kind, so
    pushes never wait behind grounding nor grounding behind pushes. A lane is made per app
    on first use, inside the app's event loop."""

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
        if lane.statistics().tasks_waiting >= LANE_QUEUE_MAX:
            # each waiting call holds its body in memory: the queue is bounded too
            raise RateLimited(
                f"{LANE_QUEUE_MAX} {self.name} calls are already waiting for their turn; "
                "try again shortly.",
                retry_after_s=1,
                limit=LANE_QUEUE_MAX,
                scope=f"{self.name}_queue",
            )
        async with lane:
            yield


LANE_QUEUE_MAX = 32  # calls waiting in one lane of one API process; beyond: 429


# The sizes: together at most 20 of the 40 request threads, and at most 12 of the 16 pooled
# connections held for the length of a call (a citation check takes one only after the
# source answered, to record its event). A kind's lane is larger where its calls wait
# rather than compute, or are lawyers' (grounding: two people's calls in flight leave room
# for others).
INGEST_LANE = Lane("ingest", 2)  # a pushed document's extraction and encoding
GROUNDING_LANE = Lane("grounding", 4)  # an answer's sentences against its evidence
AUDIT_LANE = Lane("audit", 2)  # verifying the chains: a connection for the whole read
WALLS_LANE = Lane("walls", 2)  # previews and exposure over the whole matrix
CITATIONS_LANE = Lane("citations", 8)  # waiting on the citation source, no CPU
# Changes of the policy (walls issued or lifted, matrix writes): PostgreSQL runs them one at
# a time (the policy_state row), and each one waiting there holds a pooled connection. More
# turns would let one import or a burst of PUTs fill the pool with waiters, not go faster.
POLICY_LANE = Lane("policy", 2)
IngestTurn = Annotated[None, Depends(INGEST_LANE, scope="function")]
GroundingTurn = Annotated[None, Depends(GROUNDING_LANE, scope="function")]
AuditTurn = Annotated[None, Depends(AUDIT_LANE, scope="function")]
WallsTurn = Annotated[None, Depends(WALLS_LANE, scope="function")]
CitationsTurn = Annotated[None, Depends(CITATIONS_LANE, scope="function")]
PolicyTurn = Annotated[None, Depends(POLICY_LANE, scope="function")]
