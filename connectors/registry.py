"""Source name -> connector class, imported lazily so that one broken or absent connector
does not stop the others from loading (``tests/connectors/test_registry.py`` imports all)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from app.settings import Settings

REGISTRY: dict[str, str] = {
    "imanage": "connectors.imanage.connector:IManageConnector",
    "netdocuments": "connectors.netdocuments.connector:NetDocumentsConnector",
    "folder": "connectors.folder.connector:FolderConnector",
}


def load(source: str) -> type:
    try:
        target = REGISTRY[source]
    except KeyError:
        raise KeyError(f"unknown connector {source!r}; known: {', '.join(sorted(REGISTRY))}"
                       ) from None
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if not isinstance(cls, type):
        raise TypeError(f"{target} is not a class")
    return cls


def create(source: str, settings: Settings, **kw: Any) -> Any:
    """Instantiate a connector. Connectors configured from settings take them as their first
    argument; the others (the export folder takes a path) get only ``kw``."""
    cls = load(source)
    parameters = list(inspect.signature(cls).parameters)
    if parameters and parameters[0] == "settings":
        return cls(settings, **kw)
    return cls(**kw)
