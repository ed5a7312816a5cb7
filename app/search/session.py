"""Sessions in search: a bound session narrows its searches to one matter plus public sources.

The binding lives in the retrieval audit (the latest bound search of the person's session),
so it needs no table of its own and cannot drift from what was audited. The narrowing is a
predicate in the search statement (``:session_matter_id``), ANDed with the access predicates:
it can only remove rows, never admit one.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from app.errors import Conflict
from app.search import repository
from app.search.schemas import SearchIn


@dataclass(frozen=True)
class SessionBinding:
    session_id: str | None = None
    matter_id: str | None = None
    scope: str | None = None  # "bound" (narrowed), "widened" (explicitly not), None (unbound)

    @property
    def narrow_to(self) -> str | None:
        """The matter the statement narrows to (NULL when unbound or widened)."""
        return self.matter_id if self.scope == "bound" else None


def resolve_binding(conn: Connection, person_id: str, request: SearchIn) -> SessionBinding:
    if request.session_id is None:
        return SessionBinding()
    bound = repository.session_binding(conn, request.session_id, person_id)
    asked = request.session_matter_id
    if asked is not None and bound is not None and asked != bound:
        # rebinding would let one session mix two matters, which binding exists to prevent
        raise Conflict(
            "session_bound",
            "This session is bound to another matter; start a new session for this one.",
            {"session_id": request.session_id},
        )
    matter_id = asked or bound
    if matter_id is None:
        return SessionBinding(request.session_id)
    return SessionBinding(
        request.session_id, matter_id, "widened" if request.session_widen else "bound"
    )
