"""The API's routers are included into every app of a process alike, so app.api keeps the
first inclusion of each and hands it to the next app: FastAPI builds a route's context
(dependant, validators, handler) once per process instead of once per app, which every test
that builds an app paid (0.15-0.25 s of CPU, issue 27). A second app must answer as the
first does, through the same route objects, building nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute, _EffectiveRouteContext, iter_route_contexts

from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import ADMIN, ok

ROOT = Path(__file__).resolve().parents[2]


def _handlers(app: Any) -> list[tuple[Any, Any]]:
    return [
        (context.original_route, context._route_context.app)
        for context in iter_route_contexts(app.router.routes)
        if isinstance(context.original_route, APIRoute) and context._route_context is not None
    ]


def test_a_second_app_reuses_the_route_contexts_of_the_first(
    db: DbHandle, settings: Any, embedder: Any, auth: Tokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    with make_client(db, settings, embedder) as first:
        listed = ok(first.get("/v1/walls", headers=auth(*ADMIN)))
        first_handlers = _handlers(first.app)
    built: list[str] = []
    build = _EffectiveRouteContext.from_api_route.__func__  # type: ignore[attr-defined]

    def counted(cls: Any, /, **kw: Any) -> Any:
        built.append(kw["original_route"].path)
        return build(cls, **kw)

    monkeypatch.setattr(_EffectiveRouteContext, "from_api_route", classmethod(counted))
    with make_client(db, settings, embedder) as second:
        assert ok(second.get("/v1/walls", headers=auth(*ADMIN))) == listed
        assert second.get("/console/signin").status_code == 200
        assert _handlers(second.app) == first_handlers
    assert built == []
    assert len(first_handlers) > 60  # every route of the API and the console


def test_nothing_sets_dependency_overrides() -> None:
    """The kept inclusions read no app's dependency overrides (app/api.py): an override set
    anywhere would be ignored, so none may be."""
    found = [
        str(path.relative_to(ROOT))
        for folder in ("app", "connectors", "tests")
        for path in (ROOT / folder).rglob("*.py")
        if "dependency_overrides" in path.read_text(encoding="utf-8")
        and path.name not in ("api.py", Path(__file__).name)
    ]
    assert found == []
