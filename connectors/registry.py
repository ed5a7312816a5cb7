"""Every source by name: the one place that knows which class reads which system.

Routers, CLIs and background jobs ask `create` for a `Source`; none of them chooses a
connector class itself. Classes are imported when first asked for, so that one broken or
absent connector does not stop the others from loading (``tests/connectors/test_registry.py``
imports all). A source is configured either from settings (the DMS connectors: their URL
setting must be set) or by a folder path given per run (export folders, Rechtspraak XML).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.settings import Settings
from connectors.base import BaseSource, Source
from connectors.crawl import ConnectorSource
from connectors.http.errors import ConnectorError


@dataclass(frozen=True)
class Entry:
    target: str  # "module:Class"
    configured_by: Literal["settings", "path"]
    setting: str | None = None  # the setting that must be set before the source can run


REGISTRY: dict[str, Entry] = {
    "imanage": Entry("connectors.imanage.connector:IManageConnector", "settings", "imanage_url"),
    "netdocuments": Entry(
        "connectors.netdocuments.connector:NetDocumentsConnector", "settings", "netdocuments_url"
    ),
    "folder": Entry("connectors.folder.source:FolderSource", "path"),
    "rechtspraak": Entry("app.caselaw.ingest:RechtspraakSource", "path"),
}


class SourceNotConfiguredError(ValueError):
    """The source cannot be built: unknown, a setting missing, or no path given."""


def entry(name: str) -> Entry:
    try:
        return REGISTRY[name]
    except KeyError:
        raise SourceNotConfiguredError(
            f"unknown connector {name!r}; known: {', '.join(sorted(REGISTRY))}"
        ) from None


def needs_path(name: str) -> bool:
    return entry(name).configured_by == "path"


def check_configured(name: str, settings: Settings) -> None:
    """Raise `SourceNotConfiguredError` when ``name`` cannot run with these settings: its
    URL setting unset, or a setting its class refuses when built (a field map, a matter id
    format, a URL that is not http(s)); building one makes no request. Such a run was
    queued and failed in the background, three times, on what the route could have said."""
    spec = entry(name)
    if spec.setting and not getattr(settings, spec.setting):
        raise SourceNotConfiguredError(
            f"{name} is not configured: set EWALL_{spec.setting.upper()}"
        )
    if spec.configured_by == "settings":
        try:
            create(name, settings).close()
        except ConnectorError as exc:
            raise SourceNotConfiguredError(f"{name} is not configured: {exc}") from None


def check_path(name: str, path: Path | str) -> None:
    """Raise FileNotFoundError (`connectors.base.SourcePathError` with its code when the
    folder is there) when the source ``name`` cannot run on the folder ``path`` at all, for
    a class that says so (``check_path``); the route and the CLI refuse such a run before
    it is queued or the model loads."""
    check = getattr(load(name), "check_path", None)
    if callable(check):
        check(path)


def load(name: str) -> type:
    module_name, _, class_name = entry(name).target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if not isinstance(cls, type):
        raise TypeError(f"{entry(name).target} is not a class")
    return cls


def create(name: str, settings: Settings, *, path: Path | str | None = None, **kw: Any) -> Source:
    """Build the source ``name``. Settings-configured classes take the settings first, a
    path-configured one the ``path``; each takes of ``kw`` what its signature names (e.g. the
    export folder's ``source`` name, Rechtspraak's ``pipeline``, a connector's page size), so
    a caller can offer the same arguments to every source. A class that is not a
    `Source` itself (the crawl-protocol DMS connectors) is presented as one
    (`connectors.crawl.ConnectorSource`). The caller closes the source."""
    spec = entry(name)
    cls = load(name)
    parameters = inspect.signature(cls).parameters
    accepted = {k: v for k, v in kw.items() if k in parameters}
    if spec.configured_by == "path":
        if path is None:
            raise SourceNotConfiguredError(f"{name} needs a path")
        built = cls(path, **accepted)
    else:
        built = cls(settings, **accepted) if "settings" in parameters else cls(**accepted)
    if isinstance(built, BaseSource):
        return built
    return ConnectorSource(built, name=name, kind=name)
