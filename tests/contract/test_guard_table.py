"""The request guard's route table (app/guard.py) reads the routes of routers included as
declared from the routers themselves, kept for the process, instead of building FastAPI's
per-app contexts of every route (about 0.1 s per app: every test that builds one paid it).
It must be the table FastAPI's own contexts give, route for route, in the same order: a
route missing or different there goes unguarded (its query names, its token check)."""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from app import guard


def _key(route: Any) -> tuple[Any, ...]:
    return (
        route.template,
        route.regex.pattern,
        sorted(route.convertors),
        sorted(route.methods),
        route.needs_token,
        route.query_names,
        route.repeatable,
    )


def test_the_table_is_the_one_fastapis_contexts_give(client: TestClient) -> None:
    routes = list(client.app.router.routes)  # type: ignore[attr-defined]
    by_contexts = [
        guard._entry(context)
        for context in iter_route_contexts(routes)
        if isinstance(context.original_route, APIRoute)
    ]
    table = guard._flatten(routes)
    assert [_key(r) for r in table] == [_key(r) for r in by_contexts]
    assert len(table) > 60  # every route of the API, the console's and the probes
    # a second app of the process reads the same entries of the routers' routes
    assert [_key(r) for r in guard._flatten(routes)] == [_key(r) for r in table]
