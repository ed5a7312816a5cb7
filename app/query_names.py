"""Query parameters that a JSON API route does not declare are refused, never ignored.

FastAPI drops a query parameter it does not know: `GET /v1/audit/retrievals?person=...`
(a typo of ``person_id``) answered every retrieval of the firm, unfiltered, and looked like
an answer. The request guard (app/guard.py) asks this module, before the body is read,
whether each name in the query string is one the matched route (its dependencies included)
declares; one that is not is a 422 ``validation_error`` naming it and the names the route
takes. A declared name given twice (``?matter_id=M-1&matter_id=M-2``) is a 422 too, unless
the parameter takes a list: FastAPI kept the last value without a word, so the access check
answered for M-2 while a proxy, a log or a gateway that keeps the first read it as M-1's.

Only routes under ``/v1/`` are checked: the console's pages and the static files take what
they take (a flash marker after a redirect), and health and metrics probes may get a load
balancer's cache-busting parameter.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Union, get_args, get_origin
from urllib.parse import parse_qsl

from pydantic import BaseModel

from app.errors import ECHO_MAX, envelope

API_PREFIX = "/v1/"
UNKNOWN_TYPE = "extra_forbidden"  # pydantic's type for an input the model does not declare
REPEATED_TYPE = "repeated_parameter"
REPEATED_MESSAGE = "is given more than once; this parameter takes one value"
NAMED_MAX = 20  # unknown names listed in details.errors; the rest are counted


def declared_query_names(template: str, dependant: Any) -> frozenset[str] | None:
    """The query parameter names (aliases) a route takes, its dependencies' included, or None
    where the route is not checked (outside /v1)."""
    if not (template + "/").startswith(API_PREFIX):
        return None
    return frozenset(name for name, _annotation in _query_parameters(dependant))


def repeatable_query_names(dependant: Any) -> frozenset[str]:
    """The query parameters (aliases) of a route, its dependencies' included, that take a
    list and so may be given more than once."""
    return frozenset(
        name for name, annotation in _query_parameters(dependant) if _takes_many(annotation)
    )


def _query_parameters(dependant: Any) -> Iterator[tuple[str, Any]]:
    """Each query parameter (alias) of a route and of its dependencies, with its type; where
    one model holds the query parameters (``Annotated[Filters, Query()]``), its fields."""
    pending = [dependant]
    while pending:
        current = pending.pop()
        for field in current.query_params:
            annotation = field.field_info.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                for name, info in annotation.model_fields.items():
                    yield info.alias or name, info.annotation
            else:
                yield str(field.alias), annotation
        pending.extend(current.dependencies)


def _takes_many(annotation: Any) -> bool:
    """``list[str]``, ``set[int] | None``, ``Annotated[tuple[str, ...], ...]``: a type that
    holds several values (a string does not)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _takes_many(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_takes_many(a) for a in get_args(annotation) if a is not type(None))
    kind = origin if origin is not None else annotation
    return (
        isinstance(kind, type)
        and kind not in (str, bytes)
        and issubclass(kind, Sequence | set | frozenset)
    )


def unknown_names(query: str, declared: frozenset[str]) -> list[str]:
    """The names in ``query`` (a query string decoded as Latin-1, as Starlette reads it) that
    are not in ``declared``, each once, in the order they came."""
    seen: dict[str, None] = {}
    for name, _value in parse_qsl(query, keep_blank_values=True):
        if name not in declared:
            seen.setdefault(name, None)
    return list(seen)


def repeated_names(query: str, repeatable: frozenset[str]) -> list[str]:
    """The names given more than once in ``query`` (decoded as Latin-1, as Starlette reads
    it) that do not take a list, each once, in the order they came."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for name, _value in parse_qsl(query, keep_blank_values=True):
        if name in seen and name not in repeatable:
            repeated.setdefault(name, None)
        seen.add(name)
    return list(repeated)


def repeated_query_body(repeated: list[str]) -> dict[str, Any]:
    """The 422 envelope for names given more than once, in the shape of the others."""
    errors = [
        {"field": _shown(name), "message": REPEATED_MESSAGE, "type": REPEATED_TYPE}
        for name in repeated[:NAMED_MAX]
    ]
    first = errors[0]["field"]
    return envelope(
        "validation_error",
        f"Invalid request: {first}: {REPEATED_MESSAGE}",
        {"field": first, "errors": errors},
    )


def _shown(name: str) -> str:
    if not name:
        return "query"  # "?=x": a value without a name, named as the query string
    return name if len(name) <= ECHO_MAX else name[:ECHO_MAX] + "…"


def unknown_query_body(unknown: list[str], declared: frozenset[str]) -> dict[str, Any]:
    """The 422 envelope, in the shape of every other validation error (app/errors.py)."""
    takes = ", ".join(sorted(declared)) if declared else "none"
    message = f"is not a query parameter of this route (it takes: {takes})"
    errors = [
        {"field": _shown(name), "message": message, "type": UNKNOWN_TYPE}
        for name in unknown[:NAMED_MAX]
    ]
    first = errors[0]["field"]
    more = len(unknown) - 1
    also = f" ({more} other unknown parameter{'s' if more > 1 else ''})" if more else ""
    return envelope(
        "validation_error",
        f"Invalid request: {first}: {message}{also}",
        {"field": first, "errors": errors},
    )
